"""The experiment runner: validation, resumption after SIGKILL, determinism,
the Dask path, and a smoke run of every experiment's cheapest cells."""

import glob
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from ntkgap.runs import config as runs_config
from ntkgap.runs import executors, methods, registry, store

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = """
name = "tiny"
title = "tiny"
[quick]
[[quick.grid]]
method = "ntk"
target = "parity:d=8,k=2"
arch = "fc:depth=1"
n = [20, 40, 60, 80, 100, 120, 140, 160]
seed = [0, 1]
[[quick.grid]]
method = "theory"
target = "parity:d=8,k=2"
arch = "fc:depth=1"
n = [10, 100]
eps = [0.1]
[full]
[[full.grid]]
method = "spectrum"
target = "sawtooth:L=2"
"""


def _env(results):
    env = dict(os.environ, NTKGAP_RESULTS=str(results), NTKGAP_PROGRESS="0")
    env.pop("NTKGAP_TRAIN_WORKERS", None)
    return env


def _run(cfg, results, *extra, check=True):
    r = subprocess.run(
        [sys.executable, "-m", "ntkgap", "run", str(cfg), "--json", *extra],
        capture_output=True,
        text=True,
        env=_env(results),
        cwd=ROOT,
        timeout=600,
    )
    if check:
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    return r


def strip(stored):
    """Stored results without their timings, for comparing runs."""
    return {k: {**json.loads(v)["result"], "cell_seconds": 0} for k, v in stored.items()}


def _stored(results, name="tiny"):
    out = {}
    for f in glob.glob(os.path.join(results, name, "*.json")):
        with open(f) as fh:
            out[os.path.basename(f)] = fh.read()
    return out


@pytest.fixture
def tiny(tmp_path):
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return p


def test_resume_determinism_and_changed_config(tiny, tmp_path, monkeypatch):
    a = _run(tiny, tmp_path / "a", "--jobs", "1")
    assert a["cells"] == 17 and a["computed"] == 17
    again = _run(tiny, tmp_path / "a", "--jobs", "1")
    assert again["computed"] == 0 and again["reused"] == 17
    _run(tiny, tmp_path / "b", "--jobs", "2")
    sa, sb = _stored(tmp_path / "a"), _stored(tmp_path / "b")
    assert strip(sa) == strip(sb)  # bit-identical numbers, serial or parallel
    tiny.write_text(TINY.replace("seed = [0, 1]", "seed = [0, 1, 2]"))
    c = _run(tiny, tmp_path / "a", "--jobs", "1")
    assert c["computed"] == 8 and c["reused"] == 17
    # the config is saved beside the results
    assert os.path.exists(tmp_path / "a" / "tiny" / ".config-quick.json")
    # a cell dropped from the config stays on disk but leaves the profile's results
    tiny.write_text(TINY.replace("seed = [0, 1]", "seed = [2]"))
    _run(tiny, tmp_path / "a", "--jobs", "1")
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path / "a"))
    monkeypatch.delenv("NTKGAP_PROFILE", raising=False)
    assert sorted({c["seed"] for c, _ in store.results("tiny", "ntk", profile="quick")}) == [2]
    assert {c["seed"] for c, _ in store.results("tiny", "ntk")} == {0, 1, 2}  # no profile: all
    assert len(_stored(tmp_path / "a")) == 25  # 24 ntk cells + 1 theory: nothing deleted
    monkeypatch.setenv("NTKGAP_PROFILE", "quick")
    assert len(store.results("tiny", "ntk")) == 8


NETS = """
name = "nets"
title = "nets"
[quick]
[[quick.grid]]
method = "net"
target = "tree:d=8,L=2,arity=2,node=parity"
arch = ["fc:depth=1", "tree:arity=2,L=2"]
width = 16
n = 64
seeds = [0, 1, 2, 3, 4, 5, 6, 7]
steps = 200
eval_every = 50
[full]
[[full.grid]]
method = "spectrum"
target = "sawtooth:L=2"
"""


def test_parallel_jobs_share_the_cores_and_keep_the_numbers(tmp_path):
    from ntkgap._infra import cores

    cfg = tmp_path / "nets.toml"
    cfg.write_text(NETS)
    # 8 seeds are two vmapped groups of GROUP_SIZE = 4, so two threads can share them
    _run(cfg, tmp_path / "a", "--jobs", "1")  # one process: a thread per core
    _run(cfg, tmp_path / "b", "--jobs", "2")  # two processes: cores / 2 threads each
    ra, rb = (
        [json.loads(v)["result"] for _, v in sorted(_stored(tmp_path / x, "nets").items())]
        for x in "ab"
    )
    assert len(ra) == len(rb) == 2
    c = cores.available()
    for a, b in zip(ra, rb):
        assert a["workers"] == min(c, 2) and b["workers"] == (2 if c >= 4 else 1)
        for key in ("test_mse_per_seed", "train_mse", "best_step", "loss_curve"):
            assert a[key] == b[key], key


def _kill_twice(tiny, res) -> int:
    """Two runs of ``tiny`` into ``res``, each SIGKILLed as soon as it has
    stored a new result; every stored file checked whole. Returns how many
    results are stored after the second kill."""
    for _ in range(2):
        start = len(_stored(res))
        proc = subprocess.Popen(
            [sys.executable, "-m", "ntkgap", "run", str(tiny), "--jobs", "1"],
            env=_env(res),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        t0 = time.time()
        while len(_stored(res)) <= start and time.time() - t0 < 120 and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for v in _stored(res).values():
            json.loads(v)  # never a truncated file
    return len(_stored(res))


def test_sigkill_midway_then_resume(tiny, tmp_path):
    ref = tmp_path / "ref"
    _run(tiny, ref, "--jobs", "1")
    # a run may store several results between two polls; a try whose kills came after the
    # last result tests no interruption and is repeated in a fresh folder (at most 3 tries)
    for attempt in range(3):
        res = tmp_path / f"killed{attempt}"
        after_kill = _kill_twice(tiny, res)
        if after_kill < 17:
            break
    assert 0 < after_kill < 17
    r = _run(tiny, res, "--jobs", "1")
    assert r["reused"] == after_kill and r["computed"] == 17 - after_kill
    assert strip(_stored(res)) == strip(_stored(ref))
    assert not glob.glob(os.path.join(res, "tiny", ".tmp-*"))


def test_stale_temp_files_of_dead_writers_are_removed(tmp_path):
    from ntkgap._infra.files import atomic_write, remove_stale_temp

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a PID that no longer runs
    stale = tmp_path / f".tmp-{dead.pid}-abc.json"
    live = tmp_path / f".tmp-{os.getpid()}-def.json"
    other = tmp_path / ".tmp-notapid-x.json"
    for f in (stale, live, other):
        f.write_text("{")
    atomic_write(tmp_path / "r.json", "{}")
    assert remove_stale_temp(str(tmp_path)) == 1
    assert not stale.exists() and live.exists() and other.exists()
    assert json.loads((tmp_path / "r.json").read_text()) == {}


HEAD = "name = 'x'\n[quick]\n[[quick.grid]]\n"
BAD_CONFIGS = [
    ("name = 'x'\n", "no profile table"),
    ("name = 'x'\nfoo = 1\n[quick]\ngrid=[]\n[full]\ngrid=[]\n", "unknown key 'foo'"),
    ("name = 'x'\n[quick]\n[[quick.grid]]\nmethod = 'magic'\n[full]\ngrid=[]\n", "method='magic'"),
    (
        HEAD + "method = 'ntk'\ntarget='parity:d=4,k=2'\narch='fc'\nn=[]\nseed=0\n"
        "[full]\ngrid=[]\n",
        "n is an empty list",
    ),
    (
        HEAD + "method = 'ntk'\ntarget='parity:d=4,k=9'\narch='fc'\nn=4\nseed=0\n[full]\ngrid=[]\n",
        "k=9 exceeds d=4",
    ),
    (
        HEAD + "method = 'ntk'\ntarget='parity:d=4,k=2'\narch='fc'\nn=4\nseed=0\n"
        "colour='red'\n[full]\ngrid=[]\n",
        "unknown key 'colour'",
    ),
    (
        HEAD + "method = 'ntk'\ntarget='parity:d=4,k=2'\narch='fc'\nn=-4\nseed=0\n"
        "[full]\ngrid=[]\n",
        "n=-4 must be a positive integer",
    ),
    (
        HEAD + "method = 'net'\ntarget='parity:d=4,k=2'\narch='fc'\nn=4\nwidth=8\n"
        "seeds=[0]\nlr=-0.1\n[full]\ngrid=[]\n",
        "lr=-0.1 must be a number >= 0",
    ),
    (
        HEAD + "method = 'theory'\ntarget='parity:d=4,k=2'\narch='fc'\nn=[4]\n"
        "eps=[2.0]\n[full]\ngrid=[]\n",
        "eps=2.0 must lie in (0, 1)",
    ),
    ("name = 'x\n", "unreadable"),
    ("name = 'bad name'\n[quick]\ngrid=[]\n[full]\ngrid=[]\n", "'name' must be a word"),
]


@pytest.mark.parametrize("text,msg", BAD_CONFIGS)
def test_bad_config_one_line_exit_2(tmp_path, text, msg):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    r = _run(p, tmp_path / "res", check=False)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and msg in r.stderr and "Traceback" not in r.stderr
    assert not os.path.exists(tmp_path / "res")


def test_missing_config_and_bad_profile(tmp_path, tiny):
    r = _run(tmp_path / "nope.toml", tmp_path / "res", check=False)
    assert r.returncode == 2 and "no such file" in r.stderr
    r = _run(tiny, tmp_path / "res", "--profile", "medium", check=False)
    assert r.returncode == 2 and "profile 'medium'" in r.stderr


def test_dask_executor_on_a_local_cluster(tiny, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None, processes=True
    ) as cluster:
        r = _run(
            tiny, tmp_path / "dask", "--executor", "dask", "--scheduler", cluster.scheduler_address
        )
    assert r["computed"] == 17
    ref = tmp_path / "ref"
    _run(tiny, ref, "--jobs", "1")
    assert strip(_stored(tmp_path / "dask")) == strip(_stored(ref))


SEARCH = """
name = "srch"
title = "srch"
[quick]
[[quick.grid]]
method = "net_search"
target = "parity:d=8,k=1"
arch = "fc:depth=1"
width = 8
eps = 0.3
seeds = [0, 1, 2, 3]
n_min = 8
n_max = 64
n_test = 64
steps = 40
eval_every = 20
batch = 4
lr = 0.05
[[quick.grid]]
method = "ntk_search"
target = "parity:d=8,k=2"
arch = "fc:depth=1"
eps = 0.3
seeds = [0, 1, 2]
n_min = 8
n_max = 256
n_test = 64
[full]
[[full.grid]]
method = "spectrum"
target = "sawtooth:L=2"
"""
SEEDS_NET = [0, 1, 2, 3]  # the net_search's seeds above
# how a cell ran, not what it computed: a run resumed mid-step trains that
# step's remaining runs in a smaller program (same numbers, fewer batched_runs)
RUN_FACTS = ("cell_seconds", "seconds", "workers", "batched_runs", "ran_on", "seed_seconds")


def _numbers(stored):
    """Stored records without how they ran (RUN_FACTS), keyed by file."""
    out = {}
    for k, v in stored.items():
        rec = json.loads(v)
        out[k] = dict(rec, result={x: y for x, y in rec["result"].items() if x not in RUN_FACTS})
    return out


def _same_numbers(got: dict, want: dict):
    """The same files and numbers: bit for bit, except the nested kernel
    searches, which run in the coordinating process under its BLAS threads
    (a worker process elsewhere), so their errors agree to float rounding;
    reruns on one executor are bit-identical (tests/test_nested.py)."""
    assert got.keys() == want.keys()
    for k in want:
        if want[k]["cell"]["method"] != "ntk_search":
            assert got[k] == want[k], k
            continue
        g, w = got[k]["result"], want[k]["result"]
        assert [(e["seed"], e["n"]) for e in g["evaluations"]] == [
            (e["seed"], e["n"]) for e in w["evaluations"]
        ]
        np.testing.assert_allclose(
            [e["test_mse"] for e in g["evaluations"]],
            [e["test_mse"] for e in w["evaluations"]],
            rtol=1e-10,
        )
        assert [p["status"] for p in g["per_seed"]] == [p["status"] for p in w["per_seed"]]


@pytest.fixture(scope="module")
def search_ref(tmp_path_factory):
    """The search config run in this process by the local executor: (config, results)."""
    tmp = tmp_path_factory.mktemp("search")
    cfg = tmp / "srch.toml"
    cfg.write_text(SEARCH)
    mp = pytest.MonkeyPatch()
    mp.setenv("NTKGAP_RESULTS", str(tmp / "ref"))
    mp.setenv("NTKGAP_PROGRESS", "0")
    try:
        r = executors.run(str(cfg), "quick", jobs=1)
    finally:
        mp.undo()
    assert r["computed"] == 2 and not r["failed"]
    return cfg, _stored(tmp / "ref", "srch")


def test_search_steps_train_seeds_at_different_n_together(search_ref):
    _, ref = search_ref
    recs = [json.loads(v) for v in ref.values()]
    net = [r for r in recs if r["cell"]["method"] == "net"]
    assert all(len(r["cell"]["seeds"]) == 1 for r in net)  # one-seed cells, as before
    # runs that shared a program (same cell_seconds) spanned several n
    calls = {}
    for r in net:
        calls.setdefault(r["result"]["cell_seconds"], set()).add(r["cell"]["n"])
    assert max(len(ns) for ns in calls.values()) > 1
    (search,) = [r for r in recs if r["cell"]["method"] == "net_search"]
    assert search["result"]["trainings"] == len(net)


def _task_log(distributed):
    """A scheduler plugin recording, in order, when each task appears and
    when it finishes (reaches memory or errs): ``.events`` of (key, what)."""

    class TaskLog(distributed.diagnostics.plugin.SchedulerPlugin):
        name = "task-log"

        def __init__(self):
            self.events = []  # (key, "start" | "end")
            self.live = set()

        def transition(self, key, start, finish, *args, **kwargs):
            if finish in ("waiting", "queued", "processing", "no-worker"):
                if key not in self.live:
                    self.live.add(key)
                    self.events.append((str(key), "start"))
            elif finish in ("memory", "erred") and key in self.live:
                self.live.discard(key)
                self.events.append((str(key), "end"))

    return TaskLog()


def test_search_on_a_dask_local_cluster_equals_local(search_ref, tmp_path):
    distributed = pytest.importorskip("distributed")
    cfg, ref = search_ref
    log = _task_log(distributed)
    # the scheduler and worker run in this process (whose NTKGAP_RESULTS is
    # not the CLI's): the evaluations must still land in the CLI's folder
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        cluster.scheduler.add_plugin(log)
        r = _run(
            cfg, tmp_path / "dask", "--executor", "dask", "--scheduler", cluster.scheduler_address
        )
        first = len(log.events)
        # a rerun after a crash: the first step's trainings (every seed at
        # n_min) are stored, the rest is lost
        kept = {k: v for k, v in ref.items() if json.loads(v)["cell"].get("n") == 8}
        (tmp_path / "resumed" / "srch").mkdir(parents=True)
        for k, v in kept.items():
            (tmp_path / "resumed" / "srch" / k).write_text(v)
        _run(
            cfg,
            tmp_path / "resumed",
            "--executor",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
        )
    resumed, log.events = log.events[first:], log.events[:first]
    assert r["computed"] == 2
    dask = _stored(tmp_path / "dask", "srch")
    _same_numbers(_numbers(dask), _numbers(ref))
    recs = {k: json.loads(v) for k, v in ref.items()}
    batched = {k: r["result"].get("batched_runs") for k, r in recs.items()}
    assert {k: json.loads(v)["result"].get("batched_runs") for k, v in dask.items()} == batched

    # the net search ran here; each net step's batches were futures of their own
    # (one per training program of the local run); the nested ntk_search ran as
    # one future per seed (one factorization per seed, no evaluation cells)
    starts = [k for k, what in log.events if what == "start"]
    seeds = [k for k in starts if k.startswith("ntk_search-")]  # the kernel search: a task per seed
    assert len(seeds) == 3
    assert not [k for k in starts if not k.startswith(("net_search-", "ntk_search-"))]
    programs = {r["result"]["cell_seconds"] for r in recs.values() if r["cell"]["method"] == "net"}
    assert not [r for r in recs.values() if r["cell"]["method"] == "ntk"]
    (nested,) = [r for r in recs.values() if r["cell"]["method"] == "ntk_search"]
    assert nested["result"]["nested"] is True
    net_steps = [k for k in starts if k.startswith("net_search-")]
    assert len(net_steps) == len(programs) > 1

    # the rerun trained only the lost steps, and ended where the first run did
    first_step = {
        r["result"]["cell_seconds"]
        for r in recs.values()
        if r["cell"]["method"] == "net" and r["cell"]["n"] == 8
    }
    assert len(first_step) == 1 and len(kept) == len(SEEDS_NET)
    again = _stored(tmp_path / "resumed", "srch")
    assert {k: again[k] for k in kept} == kept
    _same_numbers(_numbers(again), _numbers(ref))
    resumed_steps = [k for k, what in resumed if what == "start" and k.startswith("net_search-")]
    assert len(resumed_steps) == len(programs) - 1


def test_sigkill_mid_search_then_resume(search_ref, tmp_path, monkeypatch):
    cfg, ref = search_ref
    res = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ntkgap", "run", str(cfg), "--jobs", "1"],
        env=_env(res),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    t0 = time.time()
    while len(_stored(res, "srch")) < 5 and time.time() - t0 < 120 and proc.poll() is None:
        time.sleep(0.02)  # killed while the second step's trainings are being stored
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _stored(res, "srch")
    methods = [json.loads(v)["cell"]["method"] for v in before.values()]
    assert "net" in methods and "net_search" not in methods
    monkeypatch.setenv("NTKGAP_RESULTS", str(res))
    monkeypatch.setenv("NTKGAP_PROGRESS", "0")
    r = executors.run(str(cfg), "quick", jobs=1)
    assert r["computed"] == 2
    after = _stored(res, "srch")
    assert {k: after[k] for k in before} == before  # no finished training was redone
    assert _numbers(after) == _numbers(ref)
    assert not glob.glob(os.path.join(res, "srch", ".tmp-*"))


def _shrink(cell):
    """The cheapest version of a cell: the smallest sizes its method allows."""
    c = dict(cell)
    if c["method"] == "net":
        c.update(
            steps=min(c.get("steps", 200), 200),
            n=min(c["n"], 64),
            width=min(c["width"], 16),
            seeds=c["seeds"][:1],
            eval_every=50,
            n_test=200,
        )
    if c["method"] == "ntk":
        c.update(n=min(c["n"], 64), n_test=200)
    if c["method"] == "theory":
        c.update(n=c["n"][:3])
    if c["method"] in ("ntk_search", "net_search", "after_kernel_search"):
        c.update(n_min=4, n_max=8, seeds=c["seeds"][:2], n_test=4)
    if c["method"] in ("net_search", "after_kernel_search"):
        c.update(steps=50, width=min(c["width"], 8), eval_every=25)
        if isinstance(c.get("lr"), list):  # one rate: the sweep still runs, without growing
            c["lr"] = c["lr"][:1]
    if c["method"] == "after_kernel":
        c.update(steps=50, n=min(c["n"], 16), width=min(c["width"], 8), seeds=c["seeds"][:1],
                 eval_every=25, n_test=16)  # fmt: skip
    return c


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "experiments", "*.toml"))))
def test_every_experiment_smoke(path, tmp_path, monkeypatch):
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path))  # where searches store evaluations
    (tmp_path / "smoke").mkdir()
    cfg = runs_config.load_config(path)
    cells = [
        c
        for p in runs_config.PROFILES
        if runs_config.has_profile(cfg, p)
        for c in runs_config.expand(cfg, p)
    ]
    seen = set()
    for cell in sorted(cells, key=registry.cost):
        if cell["method"] in seen or (
            cell["method"] == "eigen" and "1000" in cell.get("domain", "")
        ):
            continue
        seen.add(cell["method"])
        out = methods.run_cell(_shrink(cell), "smoke")
        assert "cell_seconds" in out
        json.dumps(out, allow_nan=False)
