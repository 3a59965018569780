"""The learning rate of fixed-n ``net`` grids, chosen on validation at run time.

A ``net`` grid that lists several ``lr`` has a cell per rate. Once a run
has stored them, the runner picks one rate per group (the cells alike but
for ``lr``) by ``sample_complexity.choose_lr``, the rule ``net_search``
uses: lowest median over seeds of each seed's best validation MSE, never
test error. The choice is stored beside the cells
(:func:`ntkgap.runs.store.lr_choice_path`) and read back by
:func:`ntkgap.runs.store.lr_choices`, so no reader decides it again.
"""

from __future__ import annotations

import os

from ntkgap._infra.files import atomic_write, dumps
from ntkgap.runs.sample_complexity import best_val, choose_lr
from ntkgap.runs.store import cell_key, cell_path, load_result, lr_choice_path, lr_group


def groups(cells: list[dict]) -> list[list[dict]]:
    """The fixed-n ``net`` groups among ``cells`` that list several rates.

    Args:
        cells: filled cells (a config's, any methods).

    Returns:
        list of groups, each the list of its cells (in the given order).
    """
    by_group: dict = {}
    for c in cells:
        if c["method"] == "net":
            by_group.setdefault(lr_choice_path("", lr_group(c)), []).append(c)
    return [g for g in by_group.values() if len({c["lr"] for c in g}) > 1]


def choose(name: str, group: list[dict], root: str | None = None) -> dict | None:
    """Chooses a group's rate from its stored, not failed, cells.

    Args:
        name: the experiment's name.
        group: the group's cells (as :func:`groups` gives them).
        root: the results folder (default ``config.results_dir()``).

    Returns:
        dict with ``group`` (the cell less ``lr``), ``lr`` (the rate chosen),
        ``median_best_val_mse`` ({repr(lr): value}) and ``cells`` (the keys
        of the cells it was chosen from, sorted), or None when fewer than
        two rates are stored (nothing to choose).
    """
    stored = []
    for c in group:
        rec = load_result(cell_path(name, c, root))
        if rec and "failed" not in rec:
            stored.append((cell_key(c), c, rec["result"]))
    by_lr: dict = {}
    for _, c, r in sorted(stored, key=lambda s: s[0]):  # the store's order
        by_lr.setdefault(c["lr"], []).append(r)
    if len(by_lr) < 2:
        return None
    vals = {
        lr: [best_val(r, i) for r in rs for i in range(len(r["seeds"]))] for lr, rs in by_lr.items()
    }
    best, table = choose_lr(vals)
    return {
        "group": lr_group(group[0]),
        "lr": best,
        "median_best_val_mse": {repr(a): v for a, v in table.items()},
        "cells": sorted(k for k, _, _ in stored),
    }


def decide(name: str, cells: list[dict], root: str | None = None) -> int:
    """Chooses and stores the rate of every group among a run's cells.

    A group whose stored cells hold fewer than two rates has its stale
    choice (if any) removed: with one rate there is nothing to choose.

    Args:
        name: the experiment's name.
        cells: the run's filled cells.
        root: the results folder (default ``config.results_dir()``).

    Returns:
        int, how many choices were stored.
    """
    made = 0
    for group in groups(cells):
        path = lr_choice_path(name, lr_group(group[0]), root)
        choice = choose(name, group, root)
        if choice is None:
            if os.path.exists(path):
                os.remove(path)
            continue
        atomic_write(path, dumps(choice, indent=1))
        made += 1
    return made
