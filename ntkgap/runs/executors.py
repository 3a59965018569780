"""Where cells are computed: in this process, in a local process pool, or on
a Dask cluster; :func:`run` runs a config's missing cells on one of them.

Every executor stores each cell's result here, in the coordinating process,
as it returns (:func:`ntkgap.runs.store.save`); a search's evaluation cells
are stored where its loop runs (a local worker, or here for Dask), each batch
as it is computed. Searches that share evaluations run one after another in
one task (:func:`tasks`). After the cells, the runner
chooses the learning rate of fixed-n ``net`` groups on validation
(:mod:`ntkgap.runs.lr_choice`).
"""

from __future__ import annotations

import json
import logging
import math
import multiprocessing as mp
import os
import time
import uuid
from concurrent.futures import ProcessPoolExecutor, as_completed

from ntkgap._infra import config, cores, progress
from ntkgap._infra.files import atomic_write, dumps, ensure_folder, jsonable, remove_stale_temp
from ntkgap.errors import UsageError
from ntkgap.runs import after_kernel_search, lr_choice, sample_complexity
from ntkgap.runs.config import expand, load_config
from ntkgap.runs.methods import run_cell, run_cells, search_steps
from ntkgap.runs.registry import METHODS, cost, fill
from ntkgap.runs.store import cell_key, cell_path, load_result, save

EXECUTORS = ("local", "dask")

#: Dask priority of a search step over an ordinary cell: a search is a chain
#: of steps, so its next step runs before cells that could run at any time
SEARCH_STEP_PRIORITY = 1

#: seconds to wait for a Dask scheduler before giving up
DASK_CONNECT_TIMEOUT = 5


def _check_executor(executor: str, scheduler: str | None) -> None:
    if executor not in EXECUTORS:
        raise UsageError(f"--executor {executor} is not allowed (allowed: local, dask)")
    if executor == "dask" and not scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS")


def _check_root(root: str) -> None:
    parent = os.path.dirname(os.path.abspath(root))
    if not os.path.isdir(root) and not os.path.isdir(parent):
        raise UsageError(f"results folder {root}: its parent {parent} does not exist")
    if os.path.exists(root) and not os.path.isdir(root):
        raise UsageError(f"results folder {root} is not a folder")


def run(
    path: str,
    profile: str = "quick",
    *,
    jobs: int = 2,
    executor: str = "local",
    scheduler: str | None = None,
) -> dict:
    """Computes the cells of ``path``'s ``profile`` not stored yet, then
    chooses and stores the learning rate of each fixed-n ``net`` group.

    Nothing is written until the config, the results folder and the
    executor are all known good: a bad scheduler leaves no trace.

    Args:
        path: the TOML config file.
        profile: one of ``config.PROFILES``.
        jobs: worker processes of the local executor.
        executor: ``local`` or ``dask``.
        scheduler: the dask scheduler address (with ``executor="dask"``).

    Returns:
        dict with ``experiment``, ``profile``, ``cells``, ``computed``,
        ``reused``, ``failed`` (list of {cell, key, reason}) and ``seconds``.
    """
    _check_executor(executor, scheduler)
    cfg = load_config(path, profile)
    name = cfg["name"]
    cells = expand(cfg, profile, where=path)
    root = config.results_dir()
    _check_root(root)
    todo = [c for c in cells if load_result(cell_path(name, c)) is None]
    client = _dask_client(scheduler) if executor == "dask" and todo else None
    try:
        folder = ensure_folder(os.path.join(ensure_folder(root), name))
        remove_stale_temp(folder)  # left by a run killed mid-write
        atomic_write(os.path.join(folder, f".config-{profile}.json"), dumps(cfg, indent=1))
        start = time.perf_counter()
        with progress.bar(total=len(todo), desc=f"{name} [{profile}]") as bar:
            if not todo:
                pass
            elif client is not None:
                _run_on_dask(client, name, todo, bar)
            else:
                _run_local(name, todo, jobs, bar)
    finally:
        if client is not None:
            client.close()
    lr_choice.decide(name, cells)
    failed = []
    for c in cells:
        rec = load_result(cell_path(name, c))
        if rec and "failed" in rec:
            failed.append({"cell": c, "key": cell_key(c), "reason": rec["failed"]})
    return {
        "experiment": name,
        "profile": profile,
        "cells": len(cells),
        "computed": len(todo),
        "reused": len(cells) - len(todo),
        "failed": failed,
        "seconds": time.perf_counter() - start,
    }


#: the searches whose evaluations train networks, with what their evaluations
#: share (an ``after_kernel_search`` has its ``net_search``'s base, so the two
#: methods group together); kernel searches evaluate one cell at a time
TRAINING_SEARCH_BASE = {
    "net_search": sample_complexity.evaluation_base,
    "after_kernel_search": after_kernel_search.evaluation_base,
}


def _in_task_order(cell: dict) -> tuple:
    """A cell's place within its task: the larger numeric eps first (it needs
    the fewer samples), a named eps (the RHM's "pstar") after every number,
    then the cell's key."""
    eps = cell.get("eps")
    return (-eps if isinstance(eps, (int, float)) else math.inf, cell_key(cell))


def tasks(todo: list[dict]) -> list[list[dict]]:
    """``todo`` as tasks, each a list of cells computed one after another in
    one worker: a training search (TRAINING_SEARCH_BASE) with every other of
    the same evaluation base (e.g. one search at two eps, or an after-kernel
    search's three kernels), in ``_in_task_order``; every other cell alone.

    Such searches share evaluation cells. Side by side, which of them trained
    a shared evaluation, beside which others in one program (and so padded
    to which shape), would depend on timing, and rounding amplified by
    training would follow it. In one task, in a fixed order, each evaluation
    is trained in the batch the same run always gives it, and the first
    search's evaluations are those it trains alone.

    Args:
        todo: cell dicts.

    Returns:
        list of tasks (lists of cells), in the order of their first cell in ``todo``.
    """
    groups: dict[str, list[dict]] = {}
    for c in todo:
        base = TRAINING_SEARCH_BASE.get(c["method"])
        key = json.dumps(base(fill(c)), sort_keys=True) if base else cell_key(c)
        groups.setdefault(key, []).append(c)
    return [sorted(g, key=_in_task_order) for g in groups.values()]


def _run_task(task: list[dict], name: str) -> list[dict]:
    """A task's cells computed in order (``tasks``), their results in that order."""
    return [run_cell(c, name) for c in task]


def _run_local(name: str, todo: list[dict], jobs: int, bar) -> None:
    """Computes ``todo`` here (``jobs`` <= 1) or in ``jobs`` spawned worker
    processes, task by task (``tasks``), the slowest tasks first so the pool
    ends together; each process trains its seeds on cores / jobs threads."""
    work = tasks(todo)
    if jobs <= 1:
        for task in work:
            for c in task:
                save(name, c, run_cell(c, name))
                bar.update()
        return
    work = sorted(work, key=lambda t: -sum(cost(c) for c in t))
    per = max(1, cores.available() // jobs)
    with ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=mp.get_context("spawn"),
        initializer=_share_cores,
        initargs=(per,),
    ) as pool:
        # a search's evaluations are stored by the worker as they return; a task
        # interrupted before it returns recomputes only its searches' summaries
        futs = {pool.submit(_run_task, t, name): t for t in work}
        for fut in as_completed(futs):
            for c, r in zip(futs[fut], fut.result()):
                save(name, c, r)
                bar.update()


def _share_cores(per):
    os.environ.setdefault(cores.ENV, str(per))


class _DaskSearch:
    """A search cell driven in the coordinating process: its step generator,
    the step in flight (batches, results so far) and its start time."""

    def __init__(self, cell, gen, then=()):
        self.cell, self.gen, self.then = cell, gen, list(then)
        self.start = time.perf_counter()
        self.step = 0
        self.batches, self.results, self.left = [], [], 0

    def advance(self, results):
        """Sends a finished step's results (None to start) and takes the
        next step's batches; returns the search's result when it is done."""
        try:
            batches = next(self.gen) if results is None else self.gen.send(results)
            while not batches:  # defensive: a step with nothing to compute
                batches = self.gen.send([])
        except StopIteration as stop:
            out = jsonable(stop.value)
            out["cell_seconds"] = time.perf_counter() - self.start
            return out
        self.step += 1
        self.batches, self.results, self.left = batches, [None] * len(batches), len(batches)
        return None


class _DaskRun:
    """The futures of one Dask run: which cell or search step each computes."""

    def __init__(self, client, name, bar):
        from distributed import as_completed as dask_completed  # optional package

        self.client, self.name, self.bar = client, name, bar
        self.pending = dask_completed()
        self.owner = {}  # future -> the cell it computes, or (search, batch index)

    def submit_cell(self, cell):
        fut = self.client.submit(run_cell, cell, pure=False)
        self.owner[fut] = cell
        self.pending.add(fut)

    def submit_step(self, srch):
        tag = f"{srch.cell['method']}-{cell_key(srch.cell)[:8]}-step{srch.step}"
        for i, batch in enumerate(srch.batches):
            fut = self.client.submit(
                run_cells,
                batch,
                key=f"{tag}.{i}-{uuid.uuid4().hex[:8]}",
                priority=SEARCH_STEP_PRIORITY,
            )
            self.owner[fut] = (srch, i)
            self.pending.add(fut)

    def finish(self, cell, result):
        save(self.name, cell, result)
        self.bar.update()

    def advance(self, srch, results):
        """Starts or continues a search: its next step, or its result stored."""
        if (out := srch.advance(results)) is not None:
            self.finish(srch.cell, out)
            if srch.then:  # the next search of its task (``tasks``) starts now
                self.start_search(srch.then[0], srch.then[1:])
        else:
            self.submit_step(srch)

    def start_search(self, cell, then=()):
        """Starts a search cell, the searches ``then`` chained behind it."""
        self.advance(_DaskSearch(cell, search_steps(cell, self.name), then), None)

    def collect(self, fut):
        """Stores a returned future's results; a completed step moves its search on."""
        what = self.owner.pop(fut)
        result = fut.result()  # a task's error ends the run; stored cells stay
        if isinstance(what, dict):
            self.finish(what, result)
            return
        srch, i = what
        for sub, r in zip(srch.batches[i], result):
            save(self.name, sub, r)
        srch.results[i] = result
        srch.left -= 1
        if srch.left == 0:
            self.advance(srch, srch.results)


def _run_on_dask(client, name: str, todo: list[dict], bar) -> None:
    """Computes ``todo`` on a Dask cluster and stores each result here.

    An ordinary cell is one future. A search cell's loop runs in this
    process (``sample_complexity.steps``): each step's batches of evaluation
    cells are futures, stored here as each returns, and a search's next step
    is submitted when its step is complete, so every search keeps a step in
    flight while ordinary cells fill the cluster. Workers write nothing: a
    cluster needs no shared folder, and a rerun after a lost worker or
    coordinator continues from the cells stored here.
    """
    dr = _DaskRun(client, name, bar)
    _start_tasks(dr, tasks(todo))
    for fut in dr.pending:
        dr.collect(fut)


def _start_tasks(dr, work: list[list[dict]]) -> None:
    """Starts each task on a Dask run: a cell as a future, a task of searches
    by its first search, the rest chained behind it (``_DaskSearch.then``)."""
    for first, *rest in work:
        if METHODS[first["method"]].needs_experiment:
            dr.start_search(first, rest)
        else:
            dr.submit_cell(first)


def _dask_client(scheduler: str):
    """A connected Dask client, or the one-line UsageError."""
    try:
        from distributed import Client  # optional package, needed only here
    except ImportError:
        raise UsageError("--executor dask needs the 'distributed' package") from None
    # distributed logs every failed attempt; the one-line error says it all
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    try:
        return Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
    except Exception as exc:  # OSError, TimeoutError, ValueError for a bad address
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(
            f"--scheduler {scheduler}: no Dask scheduler reachable within "
            f"{DASK_CONNECT_TIMEOUT} s ({reason[:120]})"
        ) from None
