"""The local pool: memory admission and a worker killed mid-run."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from ntkgap.runs import local_pool
from ntkgap.runs.local_pool import PROCESS_BYTES, Unit

GIB = 2**30


def _interval(path, tag, seconds):
    """Sleeps, writing (start, end) of this call to path/tag.json."""
    t0 = time.time()
    time.sleep(seconds)
    with open(os.path.join(path, f"{tag}.json"), "w") as fh:
        json.dump([t0, time.time(), os.getpid()], fh)
    return tag


def _die(path, tag):
    """Kills its own process, as the out-of-memory killer would."""
    os.kill(os.getpid(), signal.SIGKILL)


def _raise(path, tag):
    raise ValueError(f"unit {tag} failed")


def _worker_limit(path, tag):
    """The memory limit a worker checks its arrays against."""
    from ntkgap._infra import memory

    return memory.limit()


def _overlap(a, b):
    return a[0] < b[1] and b[0] < a[1]


def _collect():
    got = {}

    def done(what, out, exc):
        got[what] = (out, None if exc is None else str(exc))

    return got, done


def test_units_over_the_limit_together_never_run_side_by_side(tmp_path):
    # two 10 GiB units under a 16 GiB limit: one at a time; two small ones
    # beside each other
    # (the big ones listed slowest, though they sleep less: the second small
    # one starts while the first still runs)
    big = [Unit(_interval, (str(tmp_path), f"big{i}", 0.3), f"big{i}", 10 * GIB, 5) for i in (0, 1)]
    small = [Unit(_interval, (str(tmp_path), f"s{i}", 1.5), f"s{i}", 1e6, 1) for i in (0, 1)]
    got, done = _collect()
    local_pool.run_units(big + small, 2, done, limit=16 * GIB)
    assert {k: v[0] for k, v in got.items()} == {u.what: u.what for u in big + small}
    t = {u.what: json.loads((tmp_path / f"{u.what}.json").read_text()) for u in big + small}
    assert not _overlap(t["big0"], t["big1"])
    assert _overlap(t["s0"], t["s1"])  # the limit admits small units in parallel


def test_a_unit_over_the_limit_alone_still_runs(tmp_path):
    got, done = _collect()
    u = Unit(_interval, (str(tmp_path), "huge", 0.1), "huge", 100 * GIB)
    local_pool.run_units([u], 2, done, limit=GIB)
    assert got == {"huge": ("huge", None)}


def test_a_killed_worker_fails_only_its_unit(tmp_path):
    # the dying unit is the slowest (it starts first, beside another):
    # the pool breaks; every other unit still returns, the killer is reported
    units = [Unit(_die, (str(tmp_path), "killer"), "killer", 0.0, 10)]
    units += [Unit(_interval, (str(tmp_path), f"u{i}", 0.2), f"u{i}", 0.0, 1) for i in range(5)]
    got, done = _collect()
    local_pool.run_units(units, 2, done, limit=64 * GIB)
    assert set(got) == {u.what for u in units}
    assert got["killer"][0] is None and local_pool.DIED in got["killer"][1]
    for i in range(5):
        assert got[f"u{i}"] == (f"u{i}", None)


def test_a_raising_unit_is_reported_and_the_rest_run(tmp_path):
    units = [Unit(_raise, (str(tmp_path), "bad"), "bad")]
    units += [Unit(_interval, (str(tmp_path), "ok", 0.0), "ok")]
    got, done = _collect()
    local_pool.run_units(units, 2, done, limit=64 * GIB)
    assert got["ok"] == ("ok", None) and "unit bad failed" in got["bad"][1]


def test_admission_counts_each_process_own_memory():
    # two units of (limit / 2 - a little): they fit by their estimates alone,
    # not once each worker's own memory is counted
    limit = 8 * GIB
    nb = limit / 2 - PROCESS_BYTES / 2
    queue = [Unit(print, (), i, nb) for i in range(2)]
    assert len(local_pool._admit(list(queue), 0.0, 0, 2, limit)) == 1
    queue = [Unit(print, (), i, nb - PROCESS_BYTES) for i in range(2)]
    assert len(local_pool._admit(list(queue), 0.0, 0, 2, limit)) == 2


@pytest.mark.parametrize("jobs", [1, 2])
def test_empty_work_returns_at_once(jobs):
    got, done = _collect()
    local_pool.run_units([], jobs, done, limit=GIB)
    assert got == {}


def test_every_worker_checks_against_the_budget_fixed_at_the_start(tmp_path, monkeypatch):
    """A worker's limit is the run's budget, not 80% of what is available when
    it asks (the other workers' memory held then): a budget of 3 GiB given,
    each of two workers reports 3 GiB."""
    monkeypatch.delenv("NTKGAP_MEMORY_LIMIT", raising=False)
    got, done = _collect()
    units = [Unit(_worker_limit, (str(tmp_path), t), t) for t in ("a", "b")]
    local_pool.run_units(units, 2, done, limit=3 * GIB)
    assert got == {"a": (3 * GIB, None), "b": (3 * GIB, None)}
