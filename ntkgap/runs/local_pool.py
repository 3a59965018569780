"""A local process pool that admits work by its estimated memory and
survives a worker process that dies.

Two kernel-search seeds of a tuned ridge at n = 16,384 each hold a Gram
and one Cholesky factor per ridge value (about 13 GiB): run side by side on
a 24 GB machine, the kernel's out-of-memory killer ends one of them, and a
``ProcessPoolExecutor`` then fails every unit still pending. Here a unit
starts only while the estimates of the units running and its own stay
within the memory limit (``ntkgap._infra.memory.limit``), the slowest
first; a unit over the limit on its own runs alone. If a worker dies
anyway, the pool is rebuilt with one process and every unit that had not
returned runs again there, one at a time; a unit that kills even that
process is reported failed and the rest go on.

``concurrent.futures`` has no memory admission and no recovery from a
broken pool, and Dask's local cluster would add a scheduler to every run,
so this is written here (about 100 lines over ``ProcessPoolExecutor``).
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from ntkgap._infra import config, memory
from ntkgap.errors import UsageError

__all__ = ["Unit", "DIED", "run_units"]

#: the reason stored for a unit whose process died even when it ran alone
DIED = (
    "BrokenProcessPool: the worker process died running this unit alone "
    "(killed for memory? see NTKGAP_MEMORY_LIMIT)"
)


#: a worker process's own memory (the interpreter, numpy, JAX), added to
#: each unit's estimate when admitting it
PROCESS_BYTES = 2**29


@dataclass(frozen=True)
class Unit:
    """One piece of work: ``fn(*args)`` in a worker, ``what`` handed back
    with its outcome, ``nbytes`` its estimated peak memory, ``seconds`` its
    estimated run time (the slowest start first, so the pool ends together)."""

    fn: Callable
    args: tuple
    what: Any
    nbytes: float = 0.0
    seconds: float = 0.0


def _start_worker(limit: int, initializer, initargs: tuple) -> None:
    """A worker's start: the run's memory budget as its own limit
    (``NTKGAP_MEMORY_LIMIT``), then the caller's initializer."""
    config.set_memory_limit(limit)
    if initializer is not None:
        initializer(*initargs)


def _admit(queue: list, running: float, busy: int, jobs: int, limit: float) -> list:
    """The units at the head of ``queue`` that start now: while a slot is
    free and the head's estimate fits beside what runs (anything fits an
    idle pool). A head that does not fit waits for the pool to empty: the
    units behind it do not overtake it, so it is not put off to the end."""
    start = []
    while queue and busy + len(start) < jobs:
        u = queue[0]
        need = u.nbytes + PROCESS_BYTES
        if busy + len(start) and running + need > limit:
            break
        start.append(queue.pop(0))
        running += need
    return start


def _drain(units: list, jobs: int, pool_args: dict, done: Callable, limit: float) -> list:
    """Runs ``units`` in one pool; returns those lost to a broken pool, the
    one that was running first when ``jobs`` is 1."""
    queue = sorted(units, key=lambda u: -u.seconds)
    futs: dict = {}
    with ProcessPoolExecutor(max_workers=jobs, **pool_args) as pool:
        while queue or futs:
            running = sum(u.nbytes + PROCESS_BYTES for u in futs.values())
            for u in _admit(queue, running, len(futs), jobs, limit):
                futs[pool.submit(u.fn, *u.args)] = u
            finished, _ = wait(futs, return_when=FIRST_COMPLETED)
            for fut in finished:
                u = futs.pop(fut)
                try:
                    out = fut.result()
                except BrokenProcessPool:
                    return [u, *futs.values(), *queue]
                except UsageError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the unit's own failure, reported
                    done(u.what, None, exc)
                    continue
                done(u.what, out, None)
    return []


def run_units(units: list[Unit], jobs: int, done: Callable, *, initializer=None,
              initargs=(), limit: float | None = None) -> None:  # fmt: skip
    """Runs every unit in ``jobs`` spawned processes, calling
    ``done(what, result, None)`` here as each returns, or
    ``done(what, None, exc)`` for a unit that raised, or whose process died
    running alone (``exc`` a ``BrokenProcessPool`` saying ``DIED``).

    Args:
        units: the work (``Unit``).
        jobs: worker processes (>= 1).
        done: the callback, called in this process, one unit at a time.
        initializer, initargs: run in each worker process at its start.
        limit: the memory budget in bytes (None: ``memory.limit()``).

    Returns:
        None. A ``UsageError`` raised by a unit propagates.
    """
    limit = memory.limit() if limit is None else limit
    # every worker checks its arrays against this one budget, fixed when the run starts:
    # 80% of what is available *now*, read in a worker while the others hold their memory,
    # would refuse a cell the budget admits
    pool_args = dict(mp_context=mp.get_context("spawn"), initializer=_start_worker,
                     initargs=(int(limit), initializer, initargs))  # fmt: skip
    lost = _drain(units, jobs, pool_args, done, limit)
    while lost:  # a worker died: what had not returned runs again, one at a time
        lost = _drain(lost, 1, pool_args, done, limit)
        if lost:  # alone in its process and killed again: the running unit is the cause
            done(lost[0].what, None, BrokenProcessPool(DIED))
            lost = lost[1:]
