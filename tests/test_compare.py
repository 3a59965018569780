"""``ntkgap compare`` end to end on a family no built-in experiment uses, on
the hidden ``tiny`` budget: every promised file, the claim format, a rerun
that reuses every cell, and bad input that exits 2 writing nothing."""

import json
import os
import tomllib

import pytest
from conftest import ROOT, run_cli

FAMILY = "tree:d=8,arity=2,node=and"  # E4 uses d=40 parity/tanh trees
KEYS = ["id", "claim", "predictors", "statistic", "value", "lo", "hi", "seeds", "rule",
        "verdict", "detail"]  # fmt: skip


def _tiny(family, depths, out):
    # the tests' budget (API only: the command line takes the run profiles);
    # two depths cannot reach a verdict, so forced
    from ntkgap import compare_report

    return compare_report.compare(family, depths, out, budget="tiny", force=True)


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("cmp") / "out")
    res = json.loads(json.dumps(_tiny(FAMILY, "2..3", out)))
    return out, (FAMILY, "2..3", out), res


def test_compare_writes_every_promised_file(compared):
    out, _, res = compared
    for name in ("report.md", "compare.png", "compare.pdf", "results.json", "compare.toml"):
        assert os.path.getsize(os.path.join(out, name)) > 0, name
    with open(os.path.join(out, "compare.png"), "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(os.path.join(out, "compare.pdf"), "rb") as fh:
        assert fh.read(5) == b"%PDF-"
    with open(os.path.join(out, "results.json")) as fh:
        assert json.load(fh)["claims"] == res["claims"]
    assert os.path.isdir(os.path.join(out, "results", "compare"))


def test_compare_config_is_the_e4_design_on_the_family(compared):
    out, _, _ = compared
    with open(os.path.join(out, "compare.toml"), "rb") as fh:
        cfg = tomllib.load(fh)
    cells = {(g["method"], g["arch"], g["target"]) for g in cfg["quick"]["grid"]}
    want = set()
    for L in (2, 3):
        t = f"tree:d=8,L={L},arity=2,node=and,seed=0"
        for a in (f"tree:arity=2,L={L}", "fc:depth=2"):
            want |= {(m, a, t) for m in ("theory", "ntk_search", "net_search")}
    assert cells == want
    assert [c["id"] for c in cfg["claim"]] == ["Q1-tree", "Q1-fc", "Q2-kernel", "Q2-net"]
    assert {c["statistic"] for c in cfg["claim"]} == {"nstar_ratio_growth"}


def test_compare_claims_use_the_summary_format(compared):
    from ntkgap.verdicts import claims

    out, _, res = compared
    assert [c["id"] for c in res["claims"]] == ["Q1-tree", "Q1-fc", "Q2-kernel", "Q2-net"]
    with open(os.path.join(out, "report.md")) as fh:
        report = fh.read()
    for c in res["claims"]:
        assert list(c) == KEYS
        assert c["verdict"] in claims.VERDICTS
        assert c["statistic"] == "nstar_ratio_growth"
        assert f"| {c['id']} | {c['verdict']} |" in report
        # the detail lists both predictors' n* at each of the two depths
        assert "L=2" in c["detail"] and "L=3" in c["detail"]


def test_compare_theory_series_matches_sample_complexity(compared):
    import ntkgap

    _, _, res = compared
    for L in (2, 3):
        t = f"tree:d=8,L={L},arity=2,node=and"
        for arch, label in (("fc:depth=2", "fc NTK theory"),
                            (f"tree:arity=2,L={L}", "depth-aware NTK theory")):  # fmt: skip
            want = ntkgap.sample_complexity(arch, t, eps=0.1)["n_star"]
            assert res["n_star"][label][str(L)]["n_star"] == want


def test_compare_rerun_reuses_every_cell(compared):
    _, args, first = compared
    run = _tiny(*args)["run"]
    assert run["computed"] == 0 and run["reused"] == first["run"]["cells"]


def test_compare_plan_reads_a_tree_dag_file():
    from ntkgap.verdicts import comparison

    dag = os.path.join(ROOT, "tests", "data", "dags", "tree.toml")
    cfg = comparison.plan([dag], "2", "tiny")
    archs = {g["arch"] for g in cfg["quick"]["grid"]}
    assert archs == {"tree:arity=2,L=2", "fc:depth=2"}  # the file: a depth-2 binary tree
    assert list(cfg["_depths"].values()) == [2]


@pytest.mark.parametrize(
    "bad",
    [
        ["--L", "3..1"],
        ["--L", "x"],
        ["--L", "0..2"],
        ["--family", "tree:d=8,arity=2,node=nand"],
        ["--family", "tree:d=4,arity=2,node=and"],  # L=3 needs 8 leaves
        ["--profile", "huge"],
        ["--profile", "tiny"],  # the tests' budget is not a run profile
        ["--out", "{tmp}/missing/out"],
        ["--out", "{tmp}/a_file"],
    ],
)
def test_compare_bad_input_exits_2_and_writes_nothing(tmp_path, bad):
    (tmp_path / "a_file").write_text("x")
    opts = {"--family": FAMILY, "--L": "2..4", "--out": str(tmp_path / "out"), "--force": ""}
    opts[bad[0]] = bad[1].format(tmp=tmp_path)
    r = run_cli("compare", *[x for kv in opts.items() for x in kv if x])
    assert r.returncode == 2
    assert r.stderr.startswith("ntkgap: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["a_file"]


def test_compare_runs_on_a_random_hierarchy_model_family(tmp_path):
    # the RHM's depth-aware arch is its CNN over one-hot tokens; no theory cells
    # (eigenlearning's exact eigensystems are on the hypercube and the circle)
    out = str(tmp_path / "rhm")
    fam = "rhm:v=3,n_c=2,m=2,s=2,seed=0"
    res = _tiny(fam, "2..3", out)
    with open(os.path.join(out, "compare.toml"), "rb") as fh:
        cfg = tomllib.load(fh)
    cells = {(g["method"], g["arch"], g["target"], g["n_max"]) for g in cfg["quick"]["grid"]}
    want = set()
    for L, n_valid in ((2, 16), (3, 256)):  # 2 m^(2^L - 1) valid strings
        t = f"rhm:v=3,n_c=2,m=2,s=2,L={L},seed=0"
        n_max = min(12, n_valid * 3 // 4)
        for a in (f"tree:arity=2,L={L},share=1", "fc:depth=2"):
            want |= {(m, a, t, n_max) for m in ("ntk_search", "net_search")}
    assert cells == want
    assert [c["id"] for c in res["claims"]] == ["Q1-tree", "Q1-fc", "Q2-kernel", "Q2-net"]
    for c in res["claims"]:
        assert list(c) == KEYS and "L=2" in c["detail"] and "L=3" in c["detail"]
    for name in ("report.md", "compare.png", "compare.pdf", "results.json"):
        assert os.path.getsize(os.path.join(out, name)) > 0, name
