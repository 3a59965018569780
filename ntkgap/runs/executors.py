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
import os
import threading
import time
import uuid

from threadpoolctl import threadpool_limits

from ntkgap._infra import config, cores, progress
from ntkgap._infra.files import atomic_write, dumps, ensure_folder, jsonable, remove_stale_temp
from ntkgap._infra.version import code_version
from ntkgap.errors import UsageError
from ntkgap.runs import (
    after_kernel_search,
    kernel_search,
    local_pool,
    lr_choice,
    sample_complexity,
)
from ntkgap.runs.config import cell_bytes, expand, load_config
from ntkgap.runs.local_pool import Unit
from ntkgap.runs.methods import run_cell, run_cells, search_steps
from ntkgap.runs.registry import METHODS, cost, fill
from ntkgap.runs.store import cell_key, cell_path, is_stale, load_result, save

EXECUTORS = ("local", "dask")

#: how the stored reason of a cell whose task raised begins (``errored``)
ERROR_PREFIX = "error: "

#: Dask priority of a search step over an ordinary cell: a search is a chain
#: of steps, so its next step runs before cells that could run at any time
SEARCH_STEP_PRIORITY = 1

#: BLAS threads of every cell's computation, wherever it runs (here, a local
#: worker, a Dask worker): one, so that a cell's numbers do not depend on
#: ``--jobs`` or the machine's cores (BLAS sums in another order on another
#: thread count), and ``--jobs N`` processes of OpenBLAS, each sized to every
#: core, do not oversubscribe the machine (E3b's quick kernel searches ran
#: ~1.5x longer so). A large Gram's Cholesky takes ``NTKGAP_CHOLESKY_THREADS``.
CELL_BLAS_THREADS = 1

#: seconds to wait for a Dask scheduler before giving up
DASK_CONNECT_TIMEOUT = 5


def check_executor(executor: str = "local", scheduler: str | None = None,
                   scheduler_file=None) -> None:  # fmt: skip
    """Raises the one-line UsageError unless the executor options can run.

    Args:
        executor: ``local`` or ``dask``.
        scheduler: the dask scheduler address.
        scheduler_file: or the scheduler's file.

    Returns:
        None.
    """
    _check_executor(executor, scheduler, scheduler_file)


def _check_executor(executor: str, scheduler: str | None, scheduler_file=None) -> None:
    if executor not in EXECUTORS:
        raise UsageError(f"--executor {executor} is not allowed (allowed: local, dask)")
    if executor == "dask" and not scheduler and not scheduler_file:
        raise UsageError("--executor dask needs --scheduler ADDRESS or --scheduler-file PATH")
    if scheduler and scheduler_file:
        raise UsageError("--scheduler and --scheduler-file: give one of them")
    if scheduler_file and not os.path.isfile(scheduler_file):
        raise UsageError(f"--scheduler-file {scheduler_file}: no such file")


def errored(record: dict) -> bool:
    """Whether a stored record is a cell whose task raised (a rerun recomputes it).

    Args:
        record: a stored record.

    Returns:
        bool.
    """
    return str(record.get("failed", "")).startswith(ERROR_PREFIX)


def _reason(exc: BaseException) -> str:
    """An exception as the one-line reason a failed cell stores."""
    text = str(exc).strip().splitlines()
    return f"{ERROR_PREFIX}{type(exc).__name__}: {text[0] if text else ''}"[:300]


def _save_error(name: str, cell: dict, exc: BaseException) -> None:
    """Stores ``cell`` as failed: its task raised ``exc`` (not a UsageError)."""
    save(name, cell, {"task_error": _reason(exc)})


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
    reuse_stale: bool = False,
    scheduler_file: str | None = None,
) -> dict:
    """Computes the cells of ``path``'s ``profile`` not stored yet, then
    chooses and stores the learning rate of each fixed-n ``net`` group.

    A stored cell of other code (``store.is_stale``: another code version,
    or none) is recomputed, unless ``reuse_stale`` keeps it.

    Nothing is written until the config, the results folder and the
    executor are all known good: a bad scheduler leaves no trace.

    Args:
        path: the TOML config file.
        profile: one of ``config.PROFILES``.
        jobs: worker processes of the local executor.
        executor: ``local`` or ``dask``.
        scheduler: the dask scheduler address (with ``executor="dask"``).
        scheduler_file: or the scheduler's file (``dask scheduler --scheduler-file``).
        reuse_stale: keep stored cells of other code instead of recomputing them.

    Returns:
        dict with ``experiment``, ``profile``, ``cells``, ``computed``,
        ``reused``, ``failed`` (list of {cell, key, reason}: diverged
        trainings and cells whose task raised), ``errors`` (those that
        raised: a rerun recomputes them), ``seconds``,
        ``stale`` (stored cells of other code found: recomputed, or reused
        with ``reuse_stale``) and ``reuse_stale``.
    """
    _check_executor(executor, scheduler, scheduler_file)
    config.cholesky_threads()  # a bad value fails here, not at a large kernel search's factor
    cfg = load_config(path, profile)
    name = cfg["name"]
    cells = expand(cfg, profile, where=path)
    root = config.results_dir()
    _check_root(root)
    stored = [load_result(cell_path(name, c)) for c in cells]
    stale = sum(rec is not None and is_stale(rec) for rec in stored)
    todo = [c for c, rec in zip(cells, stored)
            if rec is None or errored(rec) or (is_stale(rec) and not reuse_stale)]  # fmt: skip
    client = _dask_client(scheduler, scheduler_file) if executor == "dask" and todo else None
    if client is not None:
        try:
            check_worker_versions(client)
        except UsageError:
            client.close()
            raise
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
    failed, errors = [], []
    for c in cells:
        rec = load_result(cell_path(name, c))
        if rec and "failed" in rec:
            failed.append({"cell": c, "key": cell_key(c), "reason": rec["failed"]})
            if errored(rec):
                errors.append(failed[-1])
    return {
        "experiment": name,
        "profile": profile,
        "cells": len(cells),
        "computed": len(todo),
        "reused": len(cells) - len(todo),
        "failed": failed,
        "errors": errors,
        "seconds": time.perf_counter() - start,
        "stale": stale,
        "reuse_stale": reuse_stale,
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


def _run_one(cell: dict, name: str) -> dict:
    """A cell's result, or ``{"task_error": reason}`` when computing it raised
    (stored failed; a UsageError still ends the run: the config is wrong)."""
    try:
        return run_cell(cell, name)
    except UsageError:
        raise
    except Exception as exc:
        return {"task_error": _reason(exc)}


def _run_task(task: list[dict], name: str) -> list[dict]:
    """A task's cells computed in order (``tasks``), their results in that order."""
    return [_run_one(c, name) for c in task]


def _is_kernel_search(task: list[dict]) -> bool:
    return task[0]["method"] == kernel_search.METHOD


class _KernelSearches:
    """The kernel searches of a run, each one task per seed
    (:mod:`ntkgap.runs.kernel_search`): the seeds left, the records
    returned, and the search's record stored when its last seed returns."""

    def __init__(self, name: str, bar):
        self.name, self.bar = name, bar
        self.seeds: dict = {}  # search key -> {seed: record}
        self.left: dict = {}  # search key -> seeds not returned yet
        self.failed: set = set()
        self.lock = threading.Lock()  # Dask: progress events arrive on another thread

    def start(self, cell: dict) -> list[tuple[int, dict | None]]:
        """Registers a search; its (seed, stored progress) still to run (a
        seed stored done is read, not run)."""
        key, todo = cell_key(cell), []
        self.seeds[key] = {}
        for s in fill(cell)["seeds"]:
            stored = kernel_search.load_progress(self.name, cell, s)
            if stored and stored.get("done"):
                self.seeds[key][s] = stored
            else:
                todo.append((s, stored))
        self.left[key] = {s for s, _ in todo}
        if not todo:
            self._finish(cell)
        return todo

    def progress(self, cell: dict, seed: int, rec: dict) -> None:
        """Stores a seed's progress sent while it runs (never over its final record)."""
        with self.lock:
            if seed in self.left.get(cell_key(cell), ()):
                kernel_search.save_progress(self.name, cell, seed, rec)

    def returned(self, cell: dict, seed: int, rec: dict) -> None:
        """A seed's task returned its record (a dict with ``task_error`` when it raised)."""
        key = cell_key(cell)
        with self.lock:
            self.left[key].discard(seed)
            if "task_error" in rec:
                if key not in self.failed:
                    self.failed.add(key)
                    save(self.name, cell, rec)
                    self.bar.update()
                return
            kernel_search.save_progress(self.name, cell, seed, rec)
            self.seeds[key][seed] = rec
        if not self.left[key]:
            self._finish(cell)

    def _finish(self, cell: dict) -> None:
        key = cell_key(cell)
        if key not in self.failed:
            save(self.name, cell, kernel_search.result(cell, list(self.seeds[key].values())))
            self.bar.update()


def _seed_call(cell: dict, seed: int, stored, sink) -> dict:
    """``kernel_search.seed_task``, or ``{"task_error": reason}`` when it raised."""
    try:
        return kernel_search.seed_task(cell, seed, stored, sink)
    except UsageError:
        raise
    except Exception as exc:
        return {"task_error": _reason(exc)}


def _peak_bytes(cells: list[dict]) -> float:
    """The largest memory estimate of a unit's cells (``config.cell_bytes``)."""
    return max((cell_bytes(fill(c)) for c in cells), default=0.0)


def _local_units(name: str, work: list[list[dict]], ks: _KernelSearches) -> list[Unit]:
    """The local pool's units: a task, or one seed of a kernel search
    (``what`` is then (search cell, seed)), each with its memory estimate."""
    root = config.results_dir()
    units = []
    for task in work:
        if not _is_kernel_search(task):
            units.append(Unit(_run_task, (task, name), task, _peak_bytes(task),
                              sum(cost(c) for c in task)))  # fmt: skip
            continue
        cell = task[0]
        per = cost(cell) / len(fill(cell)["seeds"])
        for seed, stored in ks.start(cell):
            sink = kernel_search.LocalSink(name, cell, seed, root)
            units.append(Unit(_seed_call, (cell, seed, stored, sink), (cell, seed),
                              _peak_bytes([cell]), per))  # fmt: skip
    return units


def _run_local(name: str, todo: list[dict], jobs: int, bar) -> None:
    """Computes ``todo`` here (``jobs`` <= 1) or in ``jobs`` spawned worker
    processes, task by task (``tasks``; a kernel search seed by seed), the
    largest first within the memory limit (:mod:`ntkgap.runs.local_pool`);
    each process trains its seeds on cores / jobs threads."""
    ks = _KernelSearches(name, bar)
    if jobs <= 1:
        with threadpool_limits(CELL_BLAS_THREADS, user_api="blas"):
            _run_here(name, todo, ks, bar)
        return

    # a search's evaluations are stored by the worker as they return; a task
    # interrupted before it returns recomputes only its searches' summaries
    def done(what, out, exc):
        if exc is not None:  # the unit raised, or its process died running alone
            out = {"task_error": _reason(exc)}
            out = out if isinstance(what, tuple) else [out] * len(what)
        if isinstance(what, tuple):
            ks.returned(*what, out)
            return
        for c, r in zip(what, out):
            save(name, c, r)
            bar.update()

    per = max(1, cores.available() // jobs)
    units = _local_units(name, tasks(todo), ks)
    local_pool.run_units(units, jobs, done, initializer=_share_cores, initargs=(per,))


def _run_here(name: str, todo: list[dict], ks, bar) -> None:
    """``todo`` computed in this process, task by task (``jobs`` <= 1)."""
    for task in tasks(todo):
        if _is_kernel_search(task):
            for seed, stored in ks.start(task[0]):
                sink = kernel_search.LocalSink(name, task[0], seed)
                ks.returned(task[0], seed, _seed_call(task[0], seed, stored, sink))
            continue
        for c in task:
            save(name, c, _run_one(c, name))
            bar.update()


def _share_cores(per):
    """A local worker's share ``per`` of the cores for training, and BLAS on
    ``CELL_BLAS_THREADS``."""
    os.environ.setdefault(cores.ENV, str(per))
    threadpool_limits(CELL_BLAS_THREADS, user_api="blas")


def _on_worker(fn, threads, *args):
    """``fn(*args)`` on a Dask worker, after setting its training threads
    (``NTKGAP_TRAIN_WORKERS``) unless the worker has them: the client's
    value, else the worker's cores over its task slots (``--nthreads``)."""
    if threads is None:
        from distributed import get_worker  # optional package, present on a worker

        threads = max(1, cores.available() // max(1, int(get_worker().state.nthreads)))
    os.environ.setdefault(cores.ENV, str(threads))
    with threadpool_limits(CELL_BLAS_THREADS, user_api="blas"):
        return fn(*args)


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
    """The futures of one Dask run: which cell, search step or kernel-search
    seed each computes."""

    def __init__(self, client, name, bar):
        from distributed import as_completed as dask_completed  # optional package

        self.client, self.name, self.bar = client, name, bar
        self.pending = dask_completed()
        self.owner = {}  # future -> the cell it computes, (search, batch index) or (cell, seed)
        self.threads = config.train_workers()
        self.kernel = _KernelSearches(name, bar)
        self.topic = f"ntkgap-progress-{uuid.uuid4().hex[:12]}"
        self.searches: dict = {}  # search key -> cell, for the progress events
        client.subscribe_topic(self.topic, self._on_progress)

    def _submit(self, fn, *args, **kw):
        return self.client.submit(_on_worker, fn, self.threads, *args, pure=False, **kw)

    def submit_cell(self, cell):
        fut = self._submit(run_cell, cell)
        self.owner[fut] = cell
        self.pending.add(fut)

    def submit_step(self, srch):
        tag = f"{srch.cell['method']}-{cell_key(srch.cell)[:8]}-step{srch.step}"
        for i, batch in enumerate(srch.batches):
            fut = self._submit(
                run_cells,
                batch,
                key=f"{tag}.{i}-{uuid.uuid4().hex[:8]}",
                priority=SEARCH_STEP_PRIORITY,
            )
            self.owner[fut] = (srch, i)
            self.pending.add(fut)

    def submit_kernel_search(self, cell):
        """Submits each seed of a kernel search still to run as a task of its own."""
        key = cell_key(cell)
        self.searches[key] = cell
        for seed, stored in self.kernel.start(cell):
            sink = kernel_search.DaskSink(self.topic, key, seed)
            tag = f"ntk_search-{key[:8]}-seed{seed}-{uuid.uuid4().hex[:8]}"
            fut = self._submit(kernel_search.seed_task, cell, seed, stored, sink, key=tag)
            self.owner[fut] = (cell, seed)
            self.pending.add(fut)

    def _on_progress(self, event):
        """A seed's progress sent by its worker (``kernel_search.DaskSink``)."""
        msg = event[1]
        cell = self.searches.get(msg.get("key"))
        if cell is not None:
            self.kernel.progress(cell, msg["seed"], msg["progress"])

    def finish(self, cell, result):
        save(self.name, cell, result)
        self.bar.update()

    def advance(self, srch, results):
        """Starts or continues a search: its next step, or its result stored."""
        if (out := srch.advance(results)) is not None:
            self.finish(srch.cell, out)
            self.next_search(srch)
        else:
            self.submit_step(srch)

    def next_search(self, srch):
        """The next search of its task (``tasks``) starts now."""
        if srch.then:
            self.start_search(srch.then[0], srch.then[1:])

    def start_search(self, cell, then=()):
        """Starts a search cell, the searches ``then`` chained behind it."""
        self.advance(_DaskSearch(cell, search_steps(cell, self.name), then), None)

    def collect(self, fut):
        """Stores a returned future's results; a completed step moves its search
        on. A task that raised stores its cell (or its search) failed."""
        what = self.owner.pop(fut)
        try:
            result = fut.result()
        except UsageError:
            raise
        except Exception as exc:  # stored failed; the run goes on
            result = {"task_error": _reason(exc)}
        if isinstance(what, dict):
            self.finish(what, result)
            return
        if isinstance(what[0], dict):  # a kernel search's seed
            self.kernel.returned(what[0], what[1], result)
            return
        srch, i = what
        if srch.left <= 0:  # its search failed already: a step's other batch
            return
        if isinstance(result, dict):  # the step's batch raised: the search fails
            srch.left = 0
            self.finish(srch.cell, result)
            self.next_search(srch)
            return
        for sub, r in zip(srch.batches[i], result):
            save(self.name, sub, r)
        srch.results[i] = result
        srch.left -= 1
        if srch.left == 0:
            self.advance(srch, srch.results)


def _run_on_dask(client, name: str, todo: list[dict], bar) -> None:
    """Computes ``todo`` on a Dask cluster and stores each result here.

    An ordinary cell is one future; a kernel search is one future per seed
    (``kernel_search``), its progress sent here as worker events and stored
    as it comes. A training search's loop runs in this process
    (``sample_complexity.steps``): each step's batches of evaluation cells
    are futures, stored here as each returns, and a search's next step is
    submitted when its step is complete, so every search keeps a step in
    flight while other work fills the cluster. Workers write nothing: a
    cluster needs no shared folder, and a rerun after a lost worker or
    coordinator continues from the cells stored here.
    """
    dr = _DaskRun(client, name, bar)
    try:
        _start_tasks(dr, tasks(todo))
        for fut in dr.pending:
            dr.collect(fut)
    finally:
        client.unsubscribe_topic(dr.topic)


def _start_tasks(dr, work: list[list[dict]]) -> None:
    """Starts each task on a Dask run: a cell as a future, a kernel search
    seed by seed, a task of training searches by its first search, the rest
    chained behind it (``_DaskSearch.then``)."""
    for first, *rest in work:
        if first["method"] == kernel_search.METHOD:
            dr.submit_kernel_search(first)
        elif METHODS[first["method"]].needs_experiment:
            dr.start_search(first, rest)
        else:
            dr.submit_cell(first)


def _dask_client(scheduler: str | None, scheduler_file: str | None = None):
    """A connected Dask client (to ``scheduler``, or the address in
    ``scheduler_file``), or the one-line UsageError."""
    try:
        from distributed import Client  # optional package, needed only here
    except ImportError:
        raise UsageError("--executor dask needs the 'distributed' package") from None
    # distributed logs every failed attempt; the one-line error says it all
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    where = f"--scheduler {scheduler}" if scheduler else f"--scheduler-file {scheduler_file}"
    try:
        if scheduler:
            return Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
        return Client(scheduler_file=scheduler_file, timeout=DASK_CONNECT_TIMEOUT)
    except Exception as exc:  # OSError, TimeoutError, ValueError for a bad address
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(
            f"{where}: no Dask scheduler reachable in {DASK_CONNECT_TIMEOUT} s ({reason[:120]})"
        ) from None


def _worker_code_version() -> str:
    """This process's code version (run on each Dask worker)."""
    return code_version()


def check_worker_versions(client) -> None:
    """Refuses a Dask run whose workers run other code than this client.

    A results folder is never a mix of code versions: each connected worker
    reports its code version (``client.run``) and the first that differs
    ends the run before anything is submitted.

    Args:
        client: a connected ``distributed.Client`` (anything with its ``run``).

    Returns:
        None; raises the one-line UsageError naming both versions.
    """
    mine = code_version()
    theirs = client.run(_worker_code_version)
    other = sorted((w, v) for w, v in theirs.items() if v != mine)
    if other:
        worker, version = other[0]
        raise UsageError(
            f"--executor dask: worker {worker} runs code version {version}, this client "
            f"{mine} ({len(other)} of {len(theirs)} workers differ; start the workers "
            "from the same code)"
        )
