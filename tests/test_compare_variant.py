"""``ntkgap compare --arch-variant``: a user's own modification, each trained net against
the NTK of its own modified architecture on the same targets, a field an architecture
lacks reported, the nets' width set, bad fields refused in one line writing nothing, and
with ``--predict`` the modified pairs sealed before their cells and scored after."""

import json
import os

import pytest
from conftest import run_cli
from test_predict_families import (  # noqa: F401  (planted is a fixture)
    C0,
    P0,
    _internal_nodes,
    planted,
)

from ntkgap import compare_report
from ntkgap.verdicts import seal_order

FAMILY = "tree:d=8,arity=2,node=and"


def _dry(tmp_path, variant):
    r = run_cli("compare", "--family", FAMILY, "--L", "2..3", "--arch-variant", variant,
                "--dry-run", "--json", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_every_net_meets_the_ntk_of_its_own_modified_architecture(tmp_path):
    r = _dry(tmp_path, "residual,b_std=0,width=16,mf")
    searches = [c for c in r["cells"] if c["method"] in ("ntk_search", "net_search")]
    assert len(searches) == 8  # 2 depths x (tree, fc) x (kernel, net)
    for c in searches:
        kind = c["arch"].partition(":")[0]
        fields = c["arch"].partition(":")[2].split(",")
        assert "b_std=0" in fields
        assert ("residual=1" in fields) == (kind == "fc")  # a tree spec has no residual key
        if c["method"] == "net_search":
            assert c["width"] == 16 and c["param"] == "mf"
            assert c["lr"] == [0.01, 0.03, 0.1, 0.3, 1.0]  # E8's mf grid
            twins = [k for k in searches if k["method"] == "ntk_search"
                     and (k["arch"], k["target"]) == (c["arch"], c["target"])]  # fmt: skip
            assert len(twins) == 1
    assert r["budget"]["arch_variant"] == "residual,b_std=0,width=16,mf"
    assert r["budget"]["width"] == 16
    said = [w for w in r["warnings"] if w.startswith("--arch-variant")]
    assert said[0] == (
        "--arch-variant residual=1: a tree spec has no key 'residual', "
        "so the tree net and its NTK are compared unmodified"
    )
    assert len(said) == 2 and "fitted on unmodified nets" in said[1]
    assert os.listdir(tmp_path) == []


def test_a_modification_name_is_the_e8_field():
    import tomllib

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "experiments", "e8_modifications.toml"), "rb") as fh:
        mods = {m["mod"]: m["net"] for m in tomllib.load(fh)["claim_family"][0]["each"]}
    from ntkgap.verdicts import comparison_variant as cv

    for name in ("b0", "b1", "residual", "layernorm"):
        arch = cv.apply("fc:act=relu,b_std=0.1,depth=2", cv.parse_variant(name))
        if mods[name].startswith("fc:"):
            assert sorted(arch.split(":")[1].split(",")) == sorted(mods[name][3:].split(","))
        else:  # E8 applies the bias variants to trees; the field is the same
            key = cv.NAMES[name]
            assert key in mods[name].split(":")[1].split(",") and key in arch


@pytest.mark.parametrize(
    "variant, says",
    [("foo=1", "'foo=1' is not an architecture field (allowed: width, param, depth, act"),
     ("arity=3", "'arity=3' is not an architecture field"),
     ("param=lazy", "param='lazy' is not allowed (allowed: ntk, mf)"),
     ("width=0", "width='0' must be an integer >= 1"),
     ("width=", "width= needs a value"),
     ("b0,b1", "b_std given twice (b_std=0, b_std=1)"),
     ("act=bogus", "act=bogus: arch 'tree': act=bogus is not allowed (allowed: relu")],
)  # fmt: skip
def test_a_bad_variant_exits_2_in_one_line_writing_nothing(tmp_path, variant, says):
    out = tmp_path / "out"
    r = run_cli("compare", "--family", FAMILY, "--L", "2..3", "--arch-variant", variant,
                "--out", str(out), "--json", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ntkgap: error: --arch-variant")
    assert says in lines[0] and "Traceback" not in r.stderr
    assert json.loads(r.stdout)["status"] == 2
    assert os.listdir(tmp_path) == []


def test_a_variant_is_sealed_before_its_cells_and_scored(planted, tmp_path):  # noqa: F811
    out = tmp_path / "cmp"
    res = compare_report.compare("tree:d=64,arity=2,node=and", "2", str(out), budget="tiny",
                                 force=True, predict=True, arch_variant="b0,width=12")  # fmt: skip
    preds = res["predictions"]
    assert sorted(i["prediction"]["arch"] for i in preds) == [
        "fc:depth=2,b_std=0", "tree:arity=2,L=2,b_std=0"]  # fmt: skip
    for item in preds:
        assert item["prediction"]["net_n_star"] == pytest.approx(C0 * _internal_nodes(2, 2) ** P0)
        with open(item["sealed"]) as fh:
            sealed = json.load(fh)
        at = seal_order.check_hash(sealed, item["sealed"])
        first = seal_order.first_measured(str(out / "results" / "compare"), *(
            sealed["prediction"][k] for k in ("target", "arch")))  # fmt: skip
        assert first is not None and at < first  # sealed, then measured
        assert item["score"] is not None and "kernel_measured" in item["score"]
    cells = []
    for name in os.listdir(out / "results" / "compare"):
        if name.endswith(".json") and not name.startswith("."):
            with open(out / "results" / "compare" / name) as fh:
                cells.append(json.load(fh)["cell"])
    nets = [c for c in cells if c["method"] == "net_search"]
    assert len(nets) == 2 and all(c["width"] == 12 and "b_std=0" in c["arch"] for c in nets)
    assert "arch variant b0,width=12" in (out / "report.md").read_text()


def test_a_field_no_compared_architecture_has_is_refused(tmp_path):
    # parity targets have no depth-aware arch: only fc is compared, and fc has no share key
    r = run_cli("compare", "--family", "parity:d=8,k={L}", "--L", "2..3", "--arch-variant",
                "share=1", "--dry-run", "--json", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "ntkgap: error: --arch-variant share=1: no compared architecture (fc) has the key 'share'"
    ]


def test_a_repeated_flag_adds_its_fields(tmp_path):
    r = run_cli("compare", "--family", FAMILY, "--L", "2..3", "--arch-variant", "b0",
                "--arch-variant", "width=24", "--dry-run", "--json", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    cells = json.loads(r.stdout)["cells"]
    nets = [c for c in cells if c["method"] == "net_search"]
    assert nets and all(c["width"] == 24 and "b_std=0" in c["arch"] for c in nets)
