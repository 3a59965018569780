"""Hardening: sizes refused before allocating, one file writer, an
unreachable Dask scheduler, theory validity, the results flag and ``show``.

Size refusals run in-process through ``ntkgap.cli.main`` (so their time is
the check's, not Python's start-up) and must take under a second."""

import json
import math
import os
import socket
import stat
import time

import numpy as np
import pytest
from conftest import run_cli

from ntkgap import cli
from ntkgap._infra import files, memory
from ntkgap.errors import UsageError

# ------------------------------------------------------------------ sizes
HUGE = [
    (
        ["learning-curve", "--arch", "fc:depth=2", "--target", "parity:d=12,k=3"]
        + ["--n", "1000000000"],
        "n=1000000000",
    ),
    (
        ["learning-curve", "--arch", "fc:depth=2", "--target", "parity:d=12,k=3"]
        + ["--n", "100", "--n-test", "1000000000"],
        "n_test=1000000000",
    ),
    (["spectrum", "--target", "sawtooth:L=3", "--kmax", "10000000000"], "kmax=10000000000"),
    (
        ["eigenvalues", "--arch", "fc:depth=2", "--domain", "circle", "--kmax", "100000000"],
        "kmax=100000000",
    ),
    (
        ["eigenvalues", "--arch", "fc:depth=2", "--domain", "hypercube:d=100000"]
        + ["--kmax", "100000"],
        "d=100000",
    ),
    (
        ["sample-complexity", "--arch", "fc:depth=2", "--target", "parity:d=100000,k=3"]
        + ["--eps", "0.1"],
        "d=100000",
    ),
    (
        # no closed-form dual: the transform over all 2^64 leaf patterns
        ["eigenvalues", "--arch", "tree:arity=4,L=3,act=gelu", "--domain", "hypercube:d=100000"],
        "d=100000",
    ),
    (
        ["spectrum", "--target", "circuit:d=100000,gates=10000,fan_in=16"],
        "support of",
    ),
]


@pytest.mark.parametrize("argv,field", HUGE, ids=lambda a: a[0] if isinstance(a, list) else None)
def test_huge_sizes_refused_in_under_a_second_one_line(argv, field, capsys):
    start = time.perf_counter()
    rc = cli.main(argv + ["--json"])
    took = time.perf_counter() - start
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1 and err.startswith("ntkgap: error:"), err
    # --json: the error as one JSON object on stdout too
    assert rc == 2 and json.loads(out) == {"error": err[len("ntkgap: error: ") :].strip(),
                                           "status": 2}  # fmt: skip
    assert field in err
    if "support of" not in err:  # a size refusal names the estimate and the limit
        assert "needs about" in err and "limit" in err
    # building a 10^4-gate circuit (to learn its support) is ~1 s of draws
    assert took < (2.5 if "support of" in err else 1.0), took


def test_refusal_names_the_configured_limit(monkeypatch):
    monkeypatch.setenv("NTKGAP_MEMORY_LIMIT", "1M")
    # 1000 x 1000 float64 Gram alone is 8e6 bytes > 1 MiB: refused
    with pytest.raises(UsageError, match=r"over the memory limit of 1\.0 MiB"):
        memory.check_sizes(memory.regression_estimates(_target("parity:d=8,k=2"), [10, 1000], 10))
    memory.check_sizes(memory.regression_estimates(_target("parity:d=8,k=2"), [10], 10))


def _target(spec):
    from ntkgap.targets import parse_target

    return parse_target(spec)


@pytest.mark.parametrize("n,n_test,d", [(100, 10, 4), (3000, 500, 20), (10**6, 10**5, 30)])
def test_regression_estimate_covers_the_arrays_it_allocates(n, n_test, d):
    # independent lower bound: the n x n and n_test x n float64 Grams and the
    # float64 inputs of both point sets must all fit in the estimate
    floor = 8 * n * n + 8 * n_test * n + 8 * (n + n_test) * d
    assert memory.regression_bytes(n, n_test, d) >= floor


@pytest.mark.parametrize("kmax", [1, 100, 10**4, 10**8])
def test_circle_estimates_cover_the_fft_sizes(kmax):
    # eigen.circle samples the kernel row on N >= 64 (kmax + 1) angles, then
    # 2N; each angle has 2 float64 features and a complex128 transform value
    n = 2 ** math.ceil(math.log2(max(64 * (kmax + 1), 4096)))
    assert memory.circle_eigen_bytes(kmax) >= 2 * n * (16 + 16)
    assert memory.circle_power_bytes(kmax) >= 3 * 8 * (kmax + 1)


def test_hypercube_eigen_estimate_bounds_a_measured_run():
    from ntkgap.kernels import eigen
    from ntkgap.nets.arch import parse_arch

    start = time.perf_counter()
    eigen.hypercube_fc(parse_arch("fc:depth=2"), 300, 8)
    took = time.perf_counter() - start
    # the estimate over-estimates; 3x slack for a loaded machine
    assert took <= 3 * memory.hypercube_eigen_seconds(300, 8) + 0.2
    # the d^2 terms (d-bit integer arithmetic) take over at large d
    big = memory.hypercube_eigen_seconds
    assert big(20_000, 8) >= 3.5 * big(10_000, 8)


def test_train_estimate_counts_parameters_and_activations():
    from ntkgap.nets.arch import parse_arch

    arch = parse_arch("fc:depth=2")
    target = _target("parity:d=20,k=3")
    # independent count: 20->w (+bias), w->w (+bias), w->1 (+bias)
    w = 512
    n_params = 20 * w + w + w * w + w + w + 1
    assert memory.fc_params(w, 2, 20) == n_params
    (est, what), *_ = [
        (b, t)
        for kind, b, t in memory.net_estimates(
            arch, target, width=w, n=1000, n_test=100, seeds=4, batch=0
        )
    ]
    # adam keeps 2 moments besides the parameters; 4 seeds; a 1000 x w activation
    assert est >= 4 * (3 * 8 * n_params + 8 * 1000 * w)
    assert "width 512" in what
    with pytest.raises(UsageError, match="width 100000"):
        memory.check_sizes(
            memory.net_estimates(arch, target, width=100_000, n=1000, n_test=100, seeds=8)
        )


def test_circuit_builds_fast_and_keeps_its_draws():
    from ntkgap.targets import parse_target

    start = time.perf_counter()
    big = parse_target("circuit:d=100000,gates=10000,fan_in=16")
    assert time.perf_counter() - start < 2.5  # was 43 s: O(pool) per gate
    assert len(big.support) > 26
    # the same random circuit as drawing from the explicit pool without ``first``
    spec = "circuit:d=30,gates=12,fan_in=3,seed=5"
    c = parse_target(spec)
    rng = np.random.default_rng(5)
    kinds = ["and", "or", "parity", "majority"]
    for i, (kind, src, signs) in enumerate(c._gates):
        pool = 30 + i
        if i == 0:
            ref = rng.choice(30, 3, replace=False)
        else:
            first = 30 + rng.integers(0, i)
            rest = rng.choice(np.setdiff1d(np.arange(pool), [first]), 2, replace=False)
            ref = np.concatenate([[first], rest])
        assert str(rng.choice(kinds)) == kind and list(ref) == src
        assert np.array_equal(rng.choice([-1.0, 1.0], size=3), signs)


def test_config_cell_too_large_refused_before_any_worker(tmp_path):
    cfg = tmp_path / "big.toml"
    cfg.write_text(
        "name = 'big'\n[quick]\n[[quick.grid]]\nmethod = 'ntk'\n"
        "target = 'parity:d=8,k=2'\narch = 'fc'\nn = 100\nseed = 0\nn_test = 1000000000\n"
    )
    r = run_cli("run", str(cfg), "--results", str(tmp_path / "res"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "n_test=1000000000" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "res").exists()


# ------------------------------------------------------------------ files
def test_unwritable_outputs_one_line_and_nothing_left(tmp_path):
    for argv in (
        ["spectrum", "--target", "parity:d=4,k=2", "--plot", "/proc/x.png"],
        ["kernel", "--arch", "fc", "--domain", "hypercube:d=3", "--out", "/proc/k.npy"],
        [
            "kernel",
            "--arch",
            "fc",
            "--domain",
            "hypercube:d=3",
            "--out",
            str(tmp_path / "no/k.npy"),
        ],
    ):
        r = run_cli(*argv)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "cannot write" in r.stderr
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize(
    "value,message",
    [("/proc/nope", "cannot create folder"), ("/nonexistent/dir", "does not exist"), ("", "empty")],
)
def test_bad_results_folder_one_line(value, message, tmp_path):
    r = run_cli("run", "experiments/zoo.toml", env={"NTKGAP_RESULTS": value})
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert message in r.stderr
    assert not os.path.exists("/nonexistent")


def test_atomic_write_honours_umask_and_creates_no_folder(tmp_path):
    old = os.umask(0o027)
    try:
        files.atomic_write(str(tmp_path / "a.json"), "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "a.json").st_mode) == 0o640
    with pytest.raises(UsageError, match="does not exist"):
        files.atomic_write(str(tmp_path / "sub" / "b.json"), "{}")
    assert sorted(os.listdir(tmp_path)) == ["a.json"]


def test_kernel_all_points_is_optional(tmp_path):
    out = tmp_path / "k.npy"
    r = run_cli("kernel", "--arch", "fc", "--domain", "hypercube:d=3", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    assert np.load(out).shape == (8, 8)


# ------------------------------------------------------------------- dask
def test_unreachable_scheduler_one_line_within_seconds_nothing_written(tmp_path):
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.perf_counter()
    r = run_cli(
        "run",
        "experiments/zoo.toml",
        "--executor",
        "dask",
        "--scheduler",
        f"tcp://127.0.0.1:{port}",
        "--results",
        str(tmp_path / "res"),
    )
    assert time.perf_counter() - start < 20
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "no Dask scheduler" in r.stderr
    assert not (tmp_path / "res").exists()
    r = run_cli("run", "experiments/zoo.toml", "--executor", "dask", "--results", str(tmp_path))
    assert r.returncode == 2 and "--scheduler" in r.stderr
    assert os.listdir(tmp_path) == []


# ----------------------------------------------------------------- theory
def test_theory_valid_rule():
    from ntkgap.kernels import eigenlearning
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets.domains import Circle, Hypercube

    fc, tree = parse_arch("fc:depth=2"), parse_arch("tree:arity=2,L=3")
    frac = eigenlearning.VALID_FRACTION
    assert eigenlearning.theory_valid(int(frac * 2**12), fc, Hypercube(12))
    assert not eigenlearning.theory_valid(int(frac * 2**12) + 1, fc, Hypercube(12))
    # a tree reads 8 leaves whatever d is
    assert not eigenlearning.theory_valid(int(frac * 2**8) + 1, tree, Hypercube(24))
    assert eigenlearning.theory_valid(10**12, fc, Circle())
    assert eigenlearning.theory_valid(10**12, fc, Hypercube(100_000))
    assert not eigenlearning.theory_valid(None, fc, Hypercube(12))


def test_sample_complexity_flags_the_issue_case():
    r = run_cli(
        "sample-complexity",
        "--arch",
        "fc:depth=2",
        "--target",
        "tree:d=12,L=3,arity=2,node=parity",
        "--eps",
        "0.1",
        "--json",
    )
    out = json.loads(r.stdout)
    # n* ~ 3889 > 10% of 2^12 = 409.6 distinct inputs
    assert out["n_star_theory"] > 0.1 * 2**12 and out["theory_valid"] is False
    r = run_cli(
        "sample-complexity", "--arch", "fc", "--target", "parity:d=30,k=2", "--eps", "0.5", "--json"
    )
    assert json.loads(r.stdout)["theory_valid"] is True


def test_learning_curve_and_runner_theory_carry_the_flag(tmp_path):
    r = run_cli(
        "learning-curve",
        "--arch",
        "fc",
        "--target",
        "parity:d=6,k=1",
        "--n",
        "4,20",
        "--seeds",
        "1",
        "--n-test",
        "20",
        "--json",
    )
    out = json.loads(r.stdout)
    assert out["theory_valid_per_n"] == [True, False] and out["theory_valid"] is False
    cfg = tmp_path / "th.toml"
    cfg.write_text(
        "name = 'th'\n[full]\n[[full.grid]]\nmethod = 'theory'\n"
        "target = 'parity:d=6,k=1'\narch = 'fc'\nn = [4, 20]\neps = [0.5]\n"
    )
    r = run_cli("run", str(cfg), "--profile", "full", "--results", str(tmp_path / "res"), "--json")
    assert r.returncode == 0, r.stderr
    (fn,) = [f for f in os.listdir(tmp_path / "res" / "th") if not f.startswith(".")]
    res = json.loads((tmp_path / "res" / "th" / fn).read_text())["result"]
    assert res["theory_valid_per_n"] == [True, False]
    assert "theory_valid" in res["n_star"]["0.5"]


# ------------------------------------------------------- results and show
def test_results_flag_profiles_and_show(tmp_path, monkeypatch):
    cfg = tmp_path / "mine.toml"
    cfg.write_text(
        "name = 'mine'\n[quick]\n[[quick.grid]]\nmethod = 'ntk'\n"
        "target = 'parity:d=6,k=1'\narch = 'fc'\nn = [8, 16]\nseed = 0\nn_test = 20\n"
    )
    env = {"NTKGAP_RESULTS": str(tmp_path / "elsewhere")}  # the flag wins
    r = run_cli("run", str(cfg), "--results", str(tmp_path / "res"), "--jobs", "1", env=env)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "elsewhere").exists()
    stored = [f for f in os.listdir(tmp_path / "res" / "mine") if not f.startswith(".")]
    assert len(stored) == 2
    r = run_cli("run", str(cfg), "--profile", "full", "--results", str(tmp_path / "res"))
    assert r.returncode == 2 and "no [full] table" in r.stderr
    (tmp_path / "res" / "summary.json").write_text(
        json.dumps({"claims": [{"id": "C1", "claim": "a claim", "verdict": "holds"}]})
    )
    r = run_cli("show", str(cfg), "--results", str(tmp_path / "res"), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    (exp,) = out["experiments"]
    assert sorted(c["n"] for c in exp["cells"]) == [8, 16]
    ref = {}
    for f in stored:  # the stored files read directly
        rec = json.loads((tmp_path / "res" / "mine" / f).read_text())
        ref[rec["cell"]["n"]] = rec["result"]["test_mse"]
    assert {c["n"]: c["test_mse"] for c in exp["cells"]} == ref
    assert out["claims"] == []  # 'mine' declares none; C1 is another config's
    plot = tmp_path / "show.png"
    r = run_cli("show", str(tmp_path / "res"), "--plot", str(plot))
    assert r.returncode == 0, r.stderr
    assert "mine" in r.stdout and "C1: holds" in r.stdout
    assert plot.read_bytes()[:4] == b"\x89PNG"
    r = run_cli("show", str(tmp_path / "nothing"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


# ----------------------------------------------------------------- output
def test_eigenvalues_tree_kmax_and_float_floor():
    r = run_cli(
        "eigenvalues",
        "--arch",
        "tree:arity=2,L=2",
        "--domain",
        "hypercube:d=4",
        "--kmax",
        "1",
        "--json",
    )
    out = json.loads(r.stdout)
    assert max(out["k"]) <= 1 and sum(out["multiplicity"]) == 1 + 4  # degrees 0 and 1 of 4 leaves
    from ntkgap.cli import _float_floor

    assert _float_floor([1.0, 3e-304, 1e-17, 1e-10], 1.0).tolist() == [False, True, True, False]
    # exact (mpmath) values are kept down to float64's normal range
    assert _float_floor([1.0, 3e-304, 1e-17], 1.0, exact=True).tolist() == [False, True, False]
    r = run_cli(
        "eigenvalues", "--arch", "fc:depth=2", "--domain", "hypercube:d=1000", "--kmax", "8"
    )
    rows = [line.split() for line in r.stdout.splitlines()[2:]]
    # mu_k ~ d^-k (exact, in mpmath): 1e-18 at k = 6 is a true value, printed as such
    assert all(float(row[1]) > 0 for row in rows) and "floor" not in r.stdout
    r = run_cli("eigenvalues", "--arch", "fc:act=erf,b_std=0", "--domain", "hypercube:d=20")
    assert float(r.stdout.splitlines()[2].split()[1]) == 0  # erf with no bias is odd


def test_unknown_name_quoted_once():
    r = run_cli("spectrum", "--target", "PARITY:d=3,k=1")
    assert "target 'PARITY' is unknown" in r.stderr and "''" not in r.stderr


def test_exact_zero_mean_printed_as_zero():
    # linear-plus has mean 0 exactly; its Walsh transform gives ~1e-17
    r = run_cli("spectrum", "--target", "tree:d=8,L=3,arity=2,node=linear-plus")
    first = r.stdout.splitlines()[0]
    assert "mean 0," in first, first


def test_train_estimate_steps_and_batch():
    from ntkgap.nets.arch import parse_arch

    arch, target = parse_arch("fc:depth=2"), _target("parity:d=20,k=3")

    def est(**kw):
        return memory.net_estimates(arch, target, width=64, n=10**6, n_test=100, **kw)[0][1]

    # a minibatch of 100 rows needs fewer activations than all 10^6 rows:
    # 64 units x 8 bytes x 6 x depth 2 per row
    assert est(batch=0) - est(batch=100) >= (10**6 - 100) * 64 * 8 * 6 * 2 * 0.99
    # the loss curve keeps steps / eval_every points (3 float64 each)
    assert est(steps=10**9, eval_every=1) - est(steps=1, eval_every=1) >= 3 * 8 * (10**9 - 1)
    with pytest.raises(UsageError, match="training 1 networks"):
        memory.check_sizes(
            memory.net_estimates(
                arch, target, width=64, n=100, n_test=100, steps=10**13, eval_every=1
            )
        )
