"""``ntkgap predict`` on every family E4, E8, E9 and E10 store (each target family
with each architecture variant, at the error level its searches use, read
from the configs), on user DAG files, and its one-line refusals; ``compare
--predict`` on a DAG file: predictions sealed before the searches run, scored
after, and a rerun that scores the sealed predictions, not a refit. The law
is planted (n* = c C^p on synthetic tree families), so every net prediction
has a closed form."""

import json
import os

import pytest
from conftest import ROOT, run_cli

import ntkgap
from ntkgap import compare_report
from ntkgap.runs import config as runs_config
from ntkgap.runs import store
from ntkgap.verdicts import comparison, predictions, selection

C0, P0 = 4.0, 1.3  # the planted law
PLANTED = ("parity", "tanh", "random")
LEVELS = (0.05, 0.1, 0.3)  # E4 and E8 (0.05: the robustness recheck), E9
DAGS = ("hand.toml", "tree.toml")


def _internal_nodes(arity, L):
    """Constituents of a full tree: (arity^L - 1) / (arity - 1)."""
    return (arity**L - 1) // (arity - 1)


def _plant(root, c=C0, p=P0, nodes=PLANTED):
    """8 resolved seeds at n* = c C^p for binary d=64 trees, L = 2, 3, 4, at
    every level, as e4_trees net searches."""
    (root / "e4_trees").mkdir(parents=True, exist_ok=True)
    for node in nodes:
        for L in (2, 3, 4):
            n = c * _internal_nodes(2, L) ** p
            per = [{"seed": s, "status": "resolved", "n_star": n} for s in range(8)]
            for eps in LEVELS:
                cell = {
                    "method": "net_search", "target": f"tree:d=64,L={L},arity=2,node={node}",
                    "arch": f"tree:arity=2,L={L}", "eps": eps, "seeds": list(range(8)),
                    "n_min": 4, "n_max": 4096, "width": 16,
                }  # fmt: skip
                store.save("e4_trees", cell, {"per_seed": per}, str(root))


def _config_pairs():
    """One (target, arch, eps) per (family, arch variant, eps) of the E4, E8,
    E9 and E10 configs' searches, at its smallest depth."""
    best = {}
    for exp in predictions.SOURCES:
        cfg = runs_config.load_config(os.path.join(ROOT, "experiments", f"{exp}.toml"))
        for prof in ("quick", "paper", "full"):
            if not runs_config.has_profile(cfg, prof):
                continue
            for c in runs_config.expand(cfg, prof, validate=False):
                # predict's law and theory are of the regression error; E9's classification
                # cells (target_error, P* at eps_rand / 10) are read by the E9-P claims only
                if c["method"] not in ("net_search", "ntk_search") or c.get("target_error"):
                    continue
                fam = selection.family_label(selection.family_of(c["target"]))
                key = (fam, predictions.arch_variant(c["arch"]), c["eps"])
                L = selection.depth_of(c["target"])
                if key not in best or L < best[key][0]:
                    best[key] = (L, c["target"], c["arch"], c["eps"])
    return sorted(v[1:] for v in best.values())


PAIRS = _config_pairs()


@pytest.fixture
def planted(tmp_path, monkeypatch):
    root = tmp_path / "results"
    monkeypatch.setenv("NTKGAP_RESULTS", str(root))
    monkeypatch.delenv("NTKGAP_PROFILE", raising=False)
    _plant(root)
    return root


def test_the_sweep_covers_every_kind_of_family():
    targets = " ".join(t for t, _, _ in PAIRS)
    archs = " ".join(a for _, a, _ in PAIRS)
    for kind in ("node=parity", "node=tanh", "node=random", "node=linear", "node=linear-plus",
                 "layered:", "rhm:", "arity=3"):  # fmt: skip
        assert kind in targets, kind
    for variant in ("act=gelu", "act=sin", "b_std=0,", "W_std=1", "norm=layer", "residual=1",
                    "share=1", "fc:depth=2"):  # fmt: skip
        assert variant in archs, variant
    assert {eps for _, _, eps in PAIRS} == set(LEVELS)


@pytest.mark.parametrize("target,arch,eps", PAIRS)
def test_predict_on_every_family_of_e4_e8_e9(planted, target, arch, eps):
    out = ntkgap.predict(target, arch, eps)
    assert out["net_n_star"] == pytest.approx(C0 * out["C"] ** P0, rel=1e-8)
    lo, hi = out["net_interval"]
    assert lo <= out["net_n_star"] <= hi
    fam = selection.family_of(target)
    if fam["name"] == "tree":
        assert out["C"] == _internal_nodes(int(fam["arity"]), selection.depth_of(target))
    own = selection.family_label(fam)
    assert own not in out["law"]["families"] and out["law"]["families"]
    if out["kernel_n_star"] is None:  # no exact spectrum: said, not extrapolated
        assert out["kernel_reason"] and out["winner"] is None
    else:
        assert out["kernel_n_star"] > 0 and out["winner"] in ("net", "kernel")
        assert out["ratio"] == pytest.approx(out["kernel_n_star"] / out["net_n_star"])
    assert out["measured"] is (own in {f"tree: arity=2, node={n}, seed=0" for n in PLANTED})
    assert (out["sealed"] is None) is out["measured"]


@pytest.mark.parametrize("dag", DAGS)
def test_predict_on_a_user_dag_file(planted, dag):
    path = os.path.join(ROOT, "tests", "data", "dags", dag)
    r = run_cli("predict", "--target", f"file:{path}", "--arch", "fc:depth=2", "--json",
                "--seal", env={"NTKGAP_RESULTS": str(planted)})  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["net_n_star"] == pytest.approx(C0 * out["C"] ** P0, rel=1e-8)
    assert len(out["law"]["families"]) == len(PLANTED) and out["sealed"]
    text = run_cli("predict", "--target", f"file:{path}", "--arch", "fc:depth=2", "--no-seal",
                   env={"NTKGAP_RESULTS": str(planted)})  # fmt: skip
    assert text.returncode == 0 and text.stdout.count("\n") >= 3
    assert text.stdout.startswith("kernel n*(0.1): ") and "net n*(0.1): " in text.stdout


@pytest.mark.parametrize(
    "stored,eps",
    [
        ((), 0.1),  # nothing stored
        (("parity",), 0.1),  # only the target's own family
        (PLANTED, 0.2),  # stored, at other error levels
    ],
)
def test_predict_refuses_in_one_line_with_nothing_to_fit(tmp_path, stored, eps):
    _plant(tmp_path, nodes=stored)
    args = ["predict", "--target", "tree:d=40,L=3,arity=2,node=parity",
            "--arch", "tree:arity=2,L=3", "--eps", str(eps)]  # fmt: skip
    env = {"NTKGAP_RESULTS": str(tmp_path)}
    r = run_cli(*args, env=env)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("ntkgap: error: predict: nothing to fit on")
    assert r.stderr.count("\n") == 1
    j = run_cli(*args, "--json", env=env)
    assert j.returncode == 2 and json.loads(j.stdout)["status"] == 2
    assert not (tmp_path / "predictions").exists()


DAG = os.path.join(ROOT, "tests", "data", "dags", "tree.toml")  # a depth-2 binary tree


def _compare(out):
    """compare --predict on a user's DAG file at its depth (tiny budget)."""
    return compare_report.compare([DAG], "2", str(out), budget="tiny", force=True, predict=True)


def test_compare_predict_seals_before_the_searches_and_scores_after(planted, tmp_path, monkeypatch):
    out = tmp_path / "cmp"
    seen = []
    real_run = comparison.executors.run

    def run(*args, **kw):  # every pair's prediction is on disk before any search
        folder = os.path.join(str(out), "results", "predictions")
        seen.append(sorted(os.listdir(folder)))
        return real_run(*args, **kw)

    monkeypatch.setattr(comparison.executors, "run", run)
    res = _compare(out)
    assert len(seen) == 1 and len(seen[0]) == 2  # the file's tree arch and fc
    preds = res["predictions"]
    assert sorted(os.path.basename(i["sealed"]) for i in preds) == seen[0]
    for item in preds:
        p, sc = item["prediction"], item["score"]
        assert p["net_n_star"] == pytest.approx(C0 * _internal_nodes(2, item["L"]) ** P0)
        assert sc is not None and set(sc) >= {"measured", "error_log10", "covered"}
        assert "kernel_measured" in sc  # the own-kernel search is scored too
    with open(out / "report.md") as fh:
        report = fh.read()
    assert "Predictions, sealed before the searches" in report
    assert report.count("net predicted") == 2
    # rerun with the source store poisoned: the sealed predictions are scored again
    _plant(planted, c=1000.0, p=0.1)
    again = _compare(out)["predictions"]
    assert [i["prediction"]["net_n_star"] for i in again] == [
        i["prediction"]["net_n_star"] for i in preds
    ]


def test_compare_predict_refuses_before_writing_with_nothing_to_fit(tmp_path, monkeypatch):
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path / "empty"))
    out = tmp_path / "cmp"
    with pytest.raises(ntkgap.UsageError, match="nothing to fit on"):
        _compare(out)
    assert not out.exists()


def _reseal(path, **change):
    """Rewrites a sealed file: ``sealed_at`` moved (hash recomputed) or a
    prediction field edited (hash kept)."""
    import datetime as dt

    from ntkgap.verdicts import seal_order

    with open(path) as fh:
        body = json.load(fh)
    if "later" in change:
        plain = {k: v for k, v in body.items() if k not in ("sealed_at", "sha256")}
        future = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
        body = seal_order.stamp(plain, now=future)
    if "net_n_star" in change:
        body["prediction"]["net_n_star"] = change["net_n_star"]
    with open(path, "w") as fh:
        json.dump(body, fh)


def test_compare_predict_seals_with_a_hash_and_a_time_before_the_cells(planted, tmp_path):
    out = tmp_path / "cmp"
    preds = _compare(out)["predictions"]
    from ntkgap.verdicts import seal_order

    for item in preds:
        with open(item["sealed"]) as fh:
            sealed = json.load(fh)
        at = seal_order.check_hash(sealed, item["sealed"])
        first = seal_order.first_measured(str(out / "results" / "compare"), *(
            sealed["prediction"][k] for k in ("target", "arch")))  # fmt: skip
        assert first is not None and at < first  # sealed, then measured
        assert "refused" not in item and item["score"] is not None


@pytest.mark.parametrize(
    "change, says",
    [(dict(later=True), "after the first measured cell"),
     (dict(net_n_star=123.0), "does not match its sha256")],
)  # fmt: skip
def test_compare_predict_refuses_a_late_or_edited_seal(planted, tmp_path, change, says):
    """A prediction file newer than its measured cells, or edited after
    sealing, is not scored: the rerun of compare --predict says why."""
    out = tmp_path / "cmp"
    for item in _compare(out)["predictions"]:
        _reseal(item["sealed"], **change)
    again = _compare(out)["predictions"]
    assert again and all(says in i["refused"] and i["score"] is None for i in again)
    with open(out / "report.md") as fh:
        assert "not scored: sealed prediction" in fh.read()
