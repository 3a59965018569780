"""A new user's trial, one test (or a few) per row of its findings: the
command a new user ran, and the behaviour expected instead. In-process (``cli.main``)
with tiny sizes; planted training results where a real run would be slow.
Row 6 (the RHM in spectrum / sample-complexity / learning-curve) is tested
with that work, not here."""

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib

import numpy as np
import pytest
from conftest import ROOT

import ntkgap
from ntkgap import cli

FAMILY = "tree:d=16,arity=2,node=tanh"
TREE_DAG = os.path.join(ROOT, "tests", "data", "dags", "tree.toml")  # depth-2 binary tree
HAND_DAG = os.path.join(ROOT, "tests", "data", "dags", "hand.toml")


def _main(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _one_line_refusal(rc, err):
    assert rc == 2 and err.startswith("ntkgap: error: ") and err.count("\n") == 1, err


# ------------------------------------------------------------ rows 1, 4, 5
def test_row1_compare_profile_tiny_is_refused(capsys, tmp_path):
    out = tmp_path / "X"
    rc, _, err = _main(capsys, "compare", "--family", FAMILY, "--L", "2..3", "--out",
                       str(out), "--profile", "tiny")  # fmt: skip
    _one_line_refusal(rc, err)
    assert "tiny" in err and "quick" in err and not out.exists()


@pytest.mark.parametrize(
    "family, depths, says",
    [
        (FAMILY, "2..3", "needs >= 3"),  # the statistic's depth rule (claims.MIN_DEPTHS)
        (HAND_DAG, "3", "not a balanced tree"),  # a DAG that fits no tree arch
    ],
)
def test_row4_designs_without_a_verdict_are_refused_up_front(capsys, tmp_path, family, depths,
                                                             says):  # fmt: skip
    rc, _, err = _main(capsys, "compare", "--family", family, "--L", depths, "--out",
                       str(tmp_path / "o"))  # fmt: skip
    _one_line_refusal(rc, err)
    assert says in err and "--force" in err
    assert os.listdir(tmp_path) == []


def test_row4_force_plans_the_refused_design(capsys):
    rc, out, _ = _main(capsys, "compare", "--family", FAMILY, "--L", "2..3", "--dry-run",
                       "--force", "--json")  # fmt: skip
    assert rc == 0
    assert any("needs >= 3" in x for x in json.loads(out)["refusals"])


def test_row5_dry_run_takes_eps_seeds_and_per_side_caps(capsys):
    rc, out, _ = _main(capsys, "compare", "--family", FAMILY, "--L", "2..4", "--eps", "0.3",
                       "--seeds", "3", "--n-max", "kernel=200,net=100", "--dry-run",
                       "--json")  # fmt: skip
    assert rc == 0
    r = json.loads(out)
    search = [c for c in r["cells"] if c["method"].endswith("_search")]
    assert {c["eps"] for c in search} == {0.3} and all(c["seeds"] == [0, 1, 2] for c in search)
    # the fc and tree archs read 16 and 2^L coordinates: the cap is the smaller of
    # the side's and 3/4 of the distinct inputs
    for c in search:
        side = 200 if c["method"] == "ntk_search" else 100
        reads = 16 if c["arch"].startswith("fc") else 2 ** c["L"]
        assert c["n_max"] == min(side, 2**reads * 3 // 4)
    assert r["cost"] > 0 and "core-seconds (ntkgap.runs.cost" in r["cost_unit"]
    for L in (2, 3, 4):  # the theory n* per predictor, as sample_complexity gives it
        t = f"tree:d=16,L={L},arity=2,node=tanh"
        want = ntkgap.sample_complexity("fc:depth=2", t, eps=0.3)["n_star"]
        assert r["n_star_theory"]["fc NTK theory"][str(L)] == want


def test_row5_every_cap_below_theory_is_refused(capsys, tmp_path):
    rc, _, err = _main(capsys, "compare", "--family", FAMILY, "--L", "2..4", "--n-max", "5",
                       "--out", str(tmp_path / "o"))  # fmt: skip
    _one_line_refusal(rc, err)
    assert "cap is below the theory's n*" in err and "--n-max" in err


def test_row5_censored_points_are_arrows_from_the_cap(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from ntkgap import compare_report

    figs = []
    monkeypatch.setattr(plt, "close", figs.append)
    series = {"fc NTK (KRR)": {2: {"n_star": 12, "censored": "right"}},
              "fc net (trained)": {2: {"n_star": 8, "censored": None, "lo": 6,
                                       "hi": 9}}}  # fmt: skip
    compare_report.plot(series, str(tmp_path / "c"), "t")
    ax = figs[0].axes[0]
    arrows = [a for a in ax.texts if getattr(a, "arrow_patch", None) is not None]
    assert len(arrows) == 1 and arrows[0].xyann[1] == 12 and arrows[0].xy[1] > 12
    # no marker at the cap but the cap's tick: a bound is not drawn as a measurement
    at_cap = [ln.get_marker() for ln in ax.lines if 12 in list(ln.get_ydata())]
    assert at_cap == ["_"]


# ------------------------------------------------------------------ row 2
def test_row2_claim_statistic_typo_is_refused_at_load():
    from ntkgap.errors import UsageError
    from ntkgap.verdicts import claims

    cfg = {"claim": [dict(id="x", claim="c", paper="p", statistic="nstar_ratio_grwth",
                          predictors=["ntk:fc", "net:fc"], params={}, profile="quick",
                          rule=dict(kind="above", threshold=1.5))]}  # fmt: skip
    with pytest.raises(UsageError, match="nstar_ratio_grwth"):
        claims.parse_claims(cfg, "cfg")


# ------------------------------------------------------------ rows 7, 8, 9
def _planted(**kw):
    r = dict(seeds=[0, 1], best_step=[0, 100], steps_per_seed=[5000, 5000], overlap=0.0,
             train_duplicates=[0, 0],
             loss_curve=[{"step": 0, "train_loss": [1.0, 1.0]},
                         {"step": 5000, "train_loss": [0.5, 0.2]}])  # fmt: skip
    r.update(kw)
    return r


@pytest.mark.parametrize(
    "planted, says",
    [
        (_planted(), ["seed(s) 0: the scored checkpoint is the initial"]),  # row 7
        (
            _planted(best_step=[50, 100], overlap=1.0, train_duplicates=[84, 80]),
            ["overlap 1 ", "164 duplicate"],
        ),  # row 8  # fmt: skip
        (
            _planted(
                best_step=[50, 100],
                loss_curve=[
                    {"step": 0, "train_loss": [0.988, 1.0]},
                    {"step": 50, "train_loss": [0.97, 0.5]},
                ],
            ),
            ["seed(s) 0: no progress"],
        ),  # row 9: 1.8% lower is within 5%  # fmt: skip
        (_planted(best_step=[50, 100]), []),
    ],
)
def test_rows789_training_warnings(planted, says):
    w = " | ".join(ntkgap.training_warnings(planted))
    for s in says:
        assert s in w
    assert bool(ntkgap.training_warnings(planted)) == bool(says)


def test_rows789_train_json_and_text_carry_the_warnings(capsys, monkeypatch):
    from ntkgap.nets import training

    monkeypatch.setattr(
        training, "train",
        lambda *a, **k: _planted(test_mse=1.124, test_mse_std=0.057, train_mse=0.96, steps=5000,
                                 seconds=1.0, diverged=False, overlap=0.5),
    )  # fmt: skip
    argv = ["train", "--arch", "fc:depth=2", "--width", "64", "--target", "parity:d=20,k=3",
            "--n", "200", "--seeds", "2"]  # fmt: skip
    rc, out, _ = _main(capsys, *argv, "--json")
    assert rc == 0 and len(json.loads(out)["warnings"]) == 2
    rc, out, _ = _main(capsys, *argv)
    assert rc == 0 and out.count("\nwarning: ") == 2 and "initial (untrained) net" in out


# ----------------------------------------------------------------- row 10
def test_row10_tree_eigenvalues_are_sorted_labelled_and_name_unread(capsys):
    rc, out, _ = _main(capsys, "eigenvalues", "--arch", "tree:arity=2,L=2", "--domain",
                       "hypercube:d=7", "--json")  # fmt: skip
    r = json.loads(out)
    assert rc == 0 and r["k"] == sorted(r["k"])
    # 4 leaves: subsets of degree 2 sit in one subtree (2) or across (4)
    assert [c.split(" shape")[0] for c in r["class"]] == [f"|S|={k}" for k in r["k"]]
    two = [m for k, m in zip(r["k"], r["multiplicity"]) if k == 2]
    assert sorted(two) == [2, 4]
    assert sum(r["multiplicity"]) == 2**4
    assert r["unread"]["eigenvalue"] == 0 and r["unread"]["multiplicity"] == 2**7 - 2**4
    rc, text, _ = _main(capsys, "eigenvalues", "--arch", "tree:arity=2,L=2", "--domain",
                        "hypercube:d=7")  # fmt: skip
    assert "class" in text and "unread coordinates 4..6 (0-based): eigenvalue 0" in text


# ----------------------------------------------------------------- row 11
def test_row11_sample_complexity_warns_when_the_dag_is_another_tree(capsys):
    rc, out, err = _main(capsys, "sample-complexity", "--arch", "tree:arity=2,L=1",
                         "--target", f"file:{TREE_DAG}", "--json")  # fmt: skip
    assert rc == 0 and "tree:arity=2,L=2" in json.loads(out)["warnings"][0]
    assert err.startswith("ntkgap: warning: ")
    rc, out, err = _main(capsys, "sample-complexity", "--arch", "tree:arity=2,L=2",
                         "--target", f"file:{TREE_DAG}", "--json")  # fmt: skip
    assert rc == 0 and json.loads(out)["warnings"] == [] and err == ""


# ----------------------------------------------------------------- row 12
def test_row12_api_carries_the_cli_key():
    r = ntkgap.sample_complexity("fc:depth=2", "parity:d=6,k=2", eps=0.1)
    assert r["n_star_theory"] == r["n_star"] is not None


@pytest.mark.parametrize("name", sorted(ntkgap.API))
def test_row12_every_api_function_has_a_signature_in_help(name):
    import inspect
    import pydoc

    fn = ntkgap.API[name]
    params = list(inspect.signature(fn).parameters)
    first = pydoc.render_doc(fn, renderer=pydoc.plaintext).splitlines()[2]
    assert first.startswith(f"{name}(") and all(p in first for p in params)


@pytest.mark.parametrize("spec", ["parity:d=20,k=3", "fc:depth=2"])
def test_row12_repr_round_trips_to_the_spec(spec):
    obj = ntkgap.target(spec) if spec.startswith("parity") else ntkgap.arch(spec)
    again = ntkgap.target if spec.startswith("parity") else ntkgap.arch
    assert "object at 0x" not in repr(obj) and str(again(eval(repr(obj)).spec)) == str(obj)


# every kind of target (a DAG file too) and arch: the reference is the Spec the
# parser gives for the string as the user wrote it
ROUND_TRIP = [
    ("target", "sawtooth:L=3"),
    ("target", "bandlimited:K=5,seed=2"),
    ("target", "parity:d=20,k=3"),
    ("target", "staircase:d=8,k=3"),
    ("target", "tree:d=24,L=3,arity=2,node=tanh"),
    ("target", "circuit:d=12,gates=5,fan_in=2,seed=1"),
    ("target", "layered:d=16,L=3,fan_in=3"),
    ("target", "rhm:v=3,n_c=2,m=3,s=2,L=2"),
    ("target", f"file:{TREE_DAG}"),
    ("arch", "fc:depth=2,act=erf,b_std=0.5"),
    ("arch", "tree:arity=2,L=3,share=1"),
]


@pytest.mark.parametrize("kind, spec", ROUND_TRIP)
def test_row12_targets_and_archs_print_as_their_spec(kind, spec):
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import dag, parse_spec

    make = ntkgap.target if kind == "target" else ntkgap.arch
    if spec.startswith("file:"):
        want = dag.file_spec(spec[len("file:") :])
    else:
        want = parse_spec(spec) if kind == "target" else parse_arch(spec).spec
    obj = make(spec)
    assert str(obj) == str(want)  # print(): the spec string, defaults filled in
    assert make(str(obj)).spec == want  # which the parser reads back
    assert repr(obj) == f"ntkgap.{kind}({str(want)!r})" and eval(repr(obj)).spec == want


# ------------------------------------------------------------- rows 13-15
def test_row13_errors_are_json_under_json(capsys):
    rc, out, err = _main(capsys, "spectrum", "--target", "parity:d=20,k=30", "--json")
    _one_line_refusal(rc, err)
    assert json.loads(out) == {"error": err[len("ntkgap: error: ") :].strip(), "status": 2}


@pytest.mark.parametrize("where, says", [("afile/K.npy", "is a file, not a folder"),
                                          ("/proc/K.npy", "cannot write /proc/K.npy")])  # fmt: skip
def test_row14_out_is_checked_before_any_compute(capsys, tmp_path, monkeypatch, where, says):
    (tmp_path / "afile").write_text("x")
    monkeypatch.setattr(ntkgap, "gram", lambda *a, **k: pytest.fail("computed the Gram"))
    path = where if where.startswith("/") else str(tmp_path / where)
    rc, _, err = _main(capsys, "kernel", "--arch", "fc:depth=2", "--domain", "hypercube:d=4",
                       "--out", path)  # fmt: skip
    _one_line_refusal(rc, err)
    assert says in err and "does not exist" not in err


def test_row15_refusal_suggests_only_options_the_verb_has(capsys):
    rc, _, err = _main(capsys, "sample-complexity", "--arch", "fc:depth=2", "--target",
                       "tree:d=100000,L=3,arity=2,node=and")  # fmt: skip
    _one_line_refusal(rc, err)
    assert "kmax" not in err and "fewer coordinates" in err


# ------------------------------------------------------------------ row 3
E9 = os.path.join(ROOT, "experiments", "e9_rhm.toml")


def _e9_ids():
    with open(E9, "rb") as fh:  # the config read directly, not through ntkgap
        return [c["id"] for c in tomllib.load(fh)["claim"]]


def _summary(folder, ids):
    folder.mkdir(parents=True, exist_ok=True)
    claims = [{"id": i, "claim": f"claim {i}", "verdict": "supported"} for i in ids]
    (folder / "summary.json").write_text(json.dumps({"profile": "quick", "claims": claims}))


def test_row3_show_lists_only_the_configs_own_claims(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path))
    own = _e9_ids()
    _summary(tmp_path, ["E1", own[1], "E4-Q1-tree-parity", *own[2:], own[0], "E8-relu"])
    rc, out, _ = _main(capsys, "show", E9, "--results", str(tmp_path), "--json")
    assert rc == 0 and sorted(c["id"] for c in json.loads(out)["claims"]) == sorted(own)
    assert "note" not in json.loads(out)
    rc, out, _ = _main(capsys, "show", E9, "--results", str(tmp_path))
    listed = re.findall(r"^  (\S+): supported: ", out, flags=re.M)
    assert rc == 0 and sorted(listed) == sorted(own)
    _summary(tmp_path, ["E1", *own[1:]])  # a summary without one of its claims says so
    rc, out, _ = _main(capsys, "show", E9, "--results", str(tmp_path))
    assert rc == 0 and f"1 of e9_rhm's {len(own)} claims ({own[0]})" in out.splitlines()[-1]


def test_row3_without_a_summary_says_what_to_run(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path))
    rc, out, _ = _main(capsys, "show", E9, "--results", str(tmp_path))
    said = [ln for ln in out.splitlines() if "summary.json" in ln]
    assert rc == 0 and len(said) == 1 and said[0] == out.splitlines()[-1]
    assert said[0].startswith(f"no claims: {tmp_path} has no summary.json; evaluate them with ")
    rc, js, _ = _main(capsys, "show", E9, "--results", str(tmp_path), "--json")
    assert json.loads(js)["note"] == said[0] and json.loads(js)["claims"] == []
    # the command it names makes the summary, and then show lists the claims
    words = shlex.split(said[0].split("evaluate them with ", 1)[1])
    env = dict(os.environ, **dict(w.split("=", 1) for w in words[:2]))
    assert words[2] == "python"
    subprocess.run([sys.executable, *words[3:]], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=300)  # fmt: skip
    rc, out, _ = _main(capsys, "show", E9, "--results", str(tmp_path), "--json")
    assert rc == 0 and sorted(c["id"] for c in json.loads(out)["claims"]) == sorted(_e9_ids())


# a search with one seed of each kind: resolved, right- and left-censored
PLANTED_SEEDS = [
    {"seed": 0, "lo": 40, "hi": 50, "n_star": 45.0, "censored": None, "bound": None},
    {"seed": 1, "lo": 4096, "hi": None, "n_star": None, "censored": "right", "bound": 4096},
    {"seed": 2, "lo": None, "hi": 4, "n_star": None, "censored": "left", "bound": 4},
]


def test_row3_plot_draws_the_searches(capsys, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    (tmp_path / "e9_rhm").mkdir()
    cell = {"method": "ntk_search", "eps": 0.3, "target": "rhm:v=3,n_c=2,m=3,s=2,L=2",
            "arch": "fc:depth=2", "seeds": [0, 1, 2], "n_max": 4096}  # fmt: skip
    result = {"eps": 0.3, "per_seed": PLANTED_SEEDS,
              "median": {"n_star": 4096, "censored": "right"}}  # fmt: skip
    (tmp_path / "e9_rhm" / "a.json").write_text(json.dumps({"cell": cell, "result": result}))
    figs = []
    monkeypatch.setattr(plt, "close", figs.append)
    rc, out, err = _main(capsys, "show", str(tmp_path / "e9_rhm"), "--plot",
                         str(tmp_path / "s.png"), "--json")  # fmt: skip
    assert rc == 0, err
    assert json.loads(out)["experiments"][0]["cells"][0]["per_seed"] == PLANTED_SEEDS
    (ax,) = figs[0].axes
    assert "n*(0.3)" in " ".join(t.get_text() for t in ax.texts)
    segments = [list(ln.get_xdata()) for ln in ax.lines if ln.get_linestyle() == "-"]
    assert segments == [[40, 50]]
    dots = [list(ln.get_xdata()) for ln in ax.lines if ln.get_marker() == "o"]
    assert dots == [[45.0]]
    arrows = {a.xyann[0]: a.xy[0] for a in ax.texts if getattr(a, "arrow_patch", None)}
    assert set(arrows) == {4096, 4} and arrows[4096] > 4096 and arrows[4] < 4
    lo, hi = ax.get_xlim()
    assert lo < arrows[4] and hi > arrows[4096]  # the arrows lie inside the axes


# ----------------------------------------------------------------- row 18
def test_row18_share_is_of_the_variance_and_the_constant_stands_apart(capsys):
    # AND of 4 (+1 = true) = -7/8 + sum_{S != 0} chi_S / 8: mean^2 = 49/64, and
    # degree k carries C(4, k) / 64 of the variance 15/64
    rc, out, _ = _main(capsys, "spectrum", "--target", "tree:d=4,L=2,arity=2,node=and")
    rows = re.findall(r"^\s+(\d+)\s+(\S+)\s+([\d.]+)%$", out, flags=re.M)
    assert rc == 0 and [int(k) for k, _, _ in rows] == [1, 2, 3, 4]
    for (_, weight, share), want in zip(rows, [4, 6, 4, 1]):
        assert float(weight) == pytest.approx(want / 64) and share == f"{100 * want / 15:.2f}"
    const = [ln for ln in out.splitlines() if ln.startswith("constant term")]
    assert len(const) == 1 and f"{49 / 64:.6e}" in const[0] and f"{100 * 49 / 64:.2f}%" in const[0]
    rc, js, _ = _main(capsys, "spectrum", "--target", "tree:d=4,L=2,arity=2,node=and", "--json")
    r = json.loads(js)  # the JSON is as it was: degree 0 still carries the mean^2
    assert np.isclose(r["weight"][0], 49 / 64) and {"degree", "weight", "mean"} <= set(r)


@pytest.mark.parametrize("spec", ["parity:d=6,k=2", "parity:d=20,k=3,seed=4"])
def test_row18_parity_seed_is_explained_by_the_support_it_chose(capsys, spec):
    rc, out, _ = _main(capsys, "spectrum", "--target", spec)
    (line,) = [ln for ln in out.splitlines() if ln.startswith("support: ")]
    seed = int(re.search(r"seed=(-?\d+)", out.splitlines()[0]).group(1))
    assert f"(seed={seed} chose it; seed -1: support = first k coordinates" in line
    coords = [int(j) for j in re.findall(r"x_(\d+)", line)]  # 0-based, as DAG files
    if seed == -1:
        assert coords == [0, 1]
    # brute force: the target is the product of exactly the printed coordinates
    d = int(re.search(r"d=(\d+)", spec).group(1))
    x = np.random.default_rng(0).choice([-1.0, 1.0], size=(256, d))
    np.testing.assert_array_equal(ntkgap.target(spec)(x), x[:, coords].prod(axis=1))
