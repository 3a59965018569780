"""Kernel searches (``ntk_search``) as work like any other: one task per
seed, whose nested factor stays in the process that runs it.

A seed's search depends on its own evaluations alone
(:func:`ntkgap.runs.sample_complexity.nested_seed`), so every executor runs
a kernel search as one task per seed, submitted beside the other cells, and
the coordinating process writes the search's record
(:func:`~ntkgap.runs.sample_complexity.nested_result`) when its last seed
returns. The record adds ``ran_on`` (each seed's ``host`` and ``pid``) and
``seed_seconds``; ``cell_seconds`` is the seeds' compute time summed.

A seed stores its evaluations as it goes, in a progress record
``.nested-<search key>-<seed>.json`` beside the cells (a dot file: no
reader of results lists it), rewritten after each evaluation. They are not
``ntk`` cells: a nested evaluation is solved from a factor the search grew
(its jitter, its rounding), so it is not the ``ntk`` cell's number and is
never reused as one. A rerun passes the stored progress to the seed's task,
which resumes from its last stored n.

Where the progress is written: a local task (this process or a local
worker process) writes the record itself (:class:`LocalSink`). A Dask task
sends it to the client as a worker event (:class:`DaskSink`, Dask's
``log_event``; the client subscribes to the run's topic and stores it), so
workers need no shared results folder; a seed's final record also comes
back as its task's result. Events, rather than per-evaluation futures or a
queue, because the factor must stay in the one task that grows it: a
future per evaluation would move the seed's curve between workers.
"""

from __future__ import annotations

import os
import socket
import time

from ntkgap._infra import config
from ntkgap._infra.files import atomic_write, dumps
from ntkgap._infra.version import code_version
from ntkgap.runs import sample_complexity
from ntkgap.runs.registry import fill
from ntkgap.runs.store import cell_key, is_stale, load_result

METHOD = "ntk_search"
PREFIX = ".nested-"


def progress_path(name: str, cell: dict, seed: int, root: str | None = None) -> str:
    """The progress record of one seed of a kernel search.

    Args:
        name: the experiment's name.
        cell: the ``ntk_search`` cell.
        seed: one of its seeds.
        root: the results folder (default ``config.results_dir()``).

    Returns:
        str path ``root/name/.nested-<cell key>-<seed>.json``.
    """
    folder = os.path.join(root or config.results_dir(), name)
    return os.path.join(folder, f"{PREFIX}{cell_key(cell)}-{int(seed)}.json")


def load_progress(name: str, cell: dict, seed: int, root: str | None = None) -> dict | None:
    """A seed's stored progress (``nested_seed``'s record), or None when
    absent, unreadable or computed by other code (``store.is_stale``).

    Args:
        name, cell, seed, root: as :func:`progress_path`.

    Returns:
        the seed's record, or None.
    """
    rec = load_result(progress_path(name, cell, seed, root))
    if rec is None or is_stale(rec) or not isinstance(rec.get("result"), dict):
        return None
    return rec["result"]


def save_progress(name: str, cell: dict, seed: int, progress: dict, root: str | None = None):
    """Stores a seed's progress record (written whole, renamed into place).

    Args:
        name, cell, seed, root: as :func:`progress_path`.
        progress: the seed's record (``nested_seed``'s).

    Returns:
        None.
    """

    record = {"cell": fill(cell), "seed": int(seed), "result": progress,
              "code_version": code_version()}  # fmt: skip
    atomic_write(progress_path(name, cell, seed, root), dumps(record))


class LocalSink:
    """Writes a seed's progress into the results folder of this machine."""

    def __init__(self, name: str, cell: dict, seed: int, root: str | None = None):
        self.name, self.cell, self.seed = name, cell, seed
        self.root = root or config.results_dir()

    def __call__(self, progress: dict) -> None:
        save_progress(self.name, self.cell, self.seed, progress, self.root)


class DaskSink:
    """Sends a seed's progress to the Dask client as a worker event on
    ``topic`` (``(search key, seed, record)``); the client stores it."""

    def __init__(self, topic: str, key: str, seed: int):
        self.topic, self.key, self.seed = topic, key, seed

    def __call__(self, progress: dict) -> None:
        from distributed import get_worker  # optional package, present on a worker

        get_worker().log_event(self.topic, {"key": self.key, "seed": self.seed,
                                            "progress": progress})  # fmt: skip


def seed_task(cell: dict, seed: int, stored: dict | None, sink) -> dict:
    """Runs one seed of a kernel search where the executor put it.

    Args:
        cell: the ``ntk_search`` cell.
        seed: the seed.
        stored: its stored progress (resumed from), or None.
        sink: called with the progress after each evaluation, with this
            process's ``host`` and ``pid`` (None: not called).

    Returns:
        the seed's record (``nested_seed``'s) with ``host``, ``pid`` and
        ``seconds`` (this task's compute time).
    """
    start = time.perf_counter()
    where = {"host": socket.gethostname(), "pid": os.getpid()}
    publish = None if sink is None else (lambda rec: sink({**rec, **where}))
    rec = sample_complexity.nested_seed(fill(cell), seed, stored, publish=publish)
    rec.update(where, seconds=time.perf_counter() - start)
    return rec


def result(cell: dict, seeds: list[dict]) -> dict:
    """A kernel search's stored result from its seeds' records.

    Args:
        cell: the ``ntk_search`` cell.
        seeds: one record per seed (``seed_task``'s, or stored progress).

    Returns:
        ``nested_result``'s dict plus ``ran_on`` (each seed's ``seed``,
        ``host``, ``pid``), ``seed_seconds`` and ``cell_seconds`` (their sum).
    """
    cell = fill(cell)
    order = {s: i for i, s in enumerate(cell["seeds"])}
    seeds = sorted(seeds, key=lambda r: order[r["seed"]])
    out = sample_complexity.nested_result(cell, seeds)
    out["ran_on"] = [{"seed": r["seed"], "host": r.get("host"), "pid": r.get("pid")}
                     for r in seeds]  # fmt: skip
    out["seed_seconds"] = [r.get("seconds", 0.0) for r in seeds]
    out["cell_seconds"] = float(sum(out["seed_seconds"]))
    return out
