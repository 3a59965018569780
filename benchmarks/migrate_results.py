"""Rewrites a results folder stored before cells were keyed filled, to the filled keys.

Before that a cell's key hashed the cell as the config wrote it, so a cell
that wrote a default (``ridge = 0.0``) and one that omitted it were two
cells; now every cell is stored filled with its method's defaults and keyed
by its filled form (:func:`ntkgap.runs.store.cell_key`). This moves each
stored cell to its new key with its cell filled, result untouched, and
stores the learning-rate choices of fixed-n ``net`` groups that the runner
now makes at run time (:func:`ntkgap.runs.lr_choice.decide`, from the stored
validation errors). Nothing is recomputed. Two old files that are one cell
now (a default written and omitted) become one file: a result is kept
before a cell marked failed, else the first in file order. Running it again
changes nothing.

Usage: ``python benchmarks/migrate_results.py [RESULTS_DIR]`` (default:
``NTKGAP_RESULTS``, else ``./results``); prints one JSON line of counts.
"""

from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from ntkgap._infra import config  # noqa: E402
from ntkgap._infra.files import atomic_write, dumps  # noqa: E402
from ntkgap.runs import lr_choice  # noqa: E402
from ntkgap.runs.config import PROFILES, expand  # noqa: E402
from ntkgap.runs.registry import fill  # noqa: E402
from ntkgap.runs.store import cell_key, load_result  # noqa: E402


def _better(new: dict, old: dict | None) -> bool:
    """Whether record ``new`` replaces ``old`` at one key: a result over a failure."""
    return old is None or ("failed" in old and "failed" not in new)


def migrate_folder(folder: str) -> dict:
    """Moves one experiment's cell files to their new keys, cells filled.

    Args:
        folder: ``RESULTS/<experiment>``.

    Returns:
        dict of counts: ``moved`` (renamed and filled), ``unchanged``,
        ``merged`` (old files that were one cell), ``skipped`` (unreadable).
    """
    counts = dict(moved=0, unchanged=0, merged=0, skipped=0)
    names = sorted(f for f in os.listdir(folder) if f.endswith(".json") and not f.startswith("."))
    for fn in names:
        path = os.path.join(folder, fn)
        rec = load_result(path)
        if not isinstance(rec, dict) or not isinstance(rec.get("cell"), dict):
            counts["skipped"] += 1
            continue
        cell = fill(rec["cell"])
        new = os.path.join(folder, cell_key(cell) + ".json")
        if new == path and cell == rec["cell"]:
            counts["unchanged"] += 1
            continue
        rec = dict(rec, cell=cell)
        there = load_result(new) if new != path else None
        if new != path and there is not None:
            counts["merged"] += 1
        else:
            counts["moved"] += 1
        if _better(rec, there):
            atomic_write(new, dumps(rec))
        if new != path:
            os.remove(path)
    return counts


def migrate(root: str) -> dict:
    """Migrates every experiment folder under ``root``, then stores the
    learning-rate choices of each profile's config as last run there.

    Args:
        root: a results folder.

    Returns:
        dict: the summed counts of :func:`migrate_folder`, ``experiments``
        and ``lr_choices`` (how many group choices were stored).
    """
    total = dict(moved=0, unchanged=0, merged=0, skipped=0, experiments=0, lr_choices=0)
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        if not os.path.isdir(folder):
            continue
        for k, v in migrate_folder(folder).items():
            total[k] += v
        total["experiments"] += 1
        for profile in PROFILES:
            cfg = load_result(os.path.join(folder, f".config-{profile}.json"))
            if cfg:
                cells = expand(cfg, profile, validate=False)
                total["lr_choices"] += lr_choice.decide(name, cells, root)
    return total


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else config.results_dir()
    if not os.path.isdir(target):
        sys.exit(f"migrate_results: {target} is not a folder")
    print(json.dumps(migrate(target)))
