"""Walsh spectra of tree targets by composition over the tree
(``ntkgap.targets.tree_power``), beyond the exact transform's 26 bits:
checked against the exact transform on small trees, and on the 32-leaf
headline target against Monte Carlo estimates of its coefficients."""

import json

import numpy as np
import pytest

from ntkgap import cli
from ntkgap.spectral import walsh
from ntkgap.targets import parse_target
from ntkgap.targets.tree_power import tree_power_profile

HEADLINE = "tree:d=40,L=5,arity=2,node=tanh"  # 32 leaves


@pytest.mark.parametrize(
    "spec",
    [
        "tree:d=8,L=3,arity=2,node=tanh",
        "tree:d=9,L=2,arity=3,node=tanh",
        "tree:d=16,L=4,arity=2,node=tanh",
        "tree:d=8,L=3,arity=2,node=random,seed=3",
        "tree:d=9,L=2,arity=3,node=majority",
    ],
)
def test_composition_matches_the_exact_transform(spec):
    """Per-degree weight, mean, L1 norm and sparsity by composition equal
    those of the exact 2^s Walsh transform (the brute-force reference)."""
    t = parse_target(spec)
    got, ws = tree_power_profile(t), walsh.walsh_spectrum(t)
    np.testing.assert_allclose(got["weight"], ws.degree_profile(), rtol=0, atol=1e-13)
    assert got["mean"] == pytest.approx(ws.coefficients[0], abs=1e-14)
    c = np.abs(ws.coefficients)
    if "l1_norm" in got:
        assert got["l1_norm"] == pytest.approx(c.sum(), rel=1e-12)
        assert got["sparsity"] == np.count_nonzero(c > 1e-12 * c.max())


def test_spectrum_of_the_headline_tree_by_composition(capsys):
    """``ntkgap spectrum --target tree:d=40,L=5,arity=2,node=tanh --json``:
    the 32-leaf target (beyond the exact transform) is reported; its weights
    sum to E f^2 = 1 (the tanh tree is normalised), sit on odd degrees only
    (every node is odd), and the degree-1 weight matches a Monte Carlo
    estimate of sum_i E[f x_i]^2."""
    rc = cli.main(["spectrum", "--target", HEADLINE, "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    r = json.loads(out)
    w = np.array(r["weight"])
    assert len(w) == 33 and r["support"] == list(range(32))
    assert w.sum() == pytest.approx(1.0, abs=1e-12) and r["variance"] == pytest.approx(1.0)
    assert np.all(w[0::2] < 1e-20) and "composition" in r["method"]
    t = parse_target(HEADLINE)
    x = t.domain.sample(2**18, seed=7)
    f = np.asarray(t(x), dtype=np.float64)
    xs = np.asarray(x, dtype=np.float64)[:, :32]
    est = ((f[:, None] * xs).mean(0) ** 2).sum() - 32 / x.shape[0]  # less the estimator's bias
    assert est == pytest.approx(w[1], abs=0.01), (est, w[1])
    rc = cli.main(["spectrum", "--target", HEADLINE])
    text = capsys.readouterr().out
    assert rc == 0 and "computed by composition over the tree" in text


def test_wide_non_tree_target_states_why(capsys):
    """``ntkgap spectrum --target parity:d=30,k=27``: refused in one line that
    says why (the transform's memory; only trees compose)."""
    rc = cli.main(["spectrum", "--target", "parity:d=30,k=27"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "1 GiB" in err and "composition" in err


def test_27_bit_dag_states_why(capsys, tmp_path):
    """``ntkgap spectrum --target file:dag27.toml`` (a majority of three
    9-bit parities): refused in one line with the transform's memory and
    that only tree targets go by composition beyond 26 bits."""
    lines = ['domain = "hypercube:d=27"']
    for i in range(3):
        lines += ["[[node]]", f'name = "p{i}"', f"inputs = {list(range(9 * i, 9 * i + 9))}",
                  'fn = "parity"']  # fmt: skip
    lines += ["[[node]]", 'name = "out"', 'inputs = ["p0", "p1", "p2"]', 'fn = "majority"']
    path = tmp_path / "dag27.toml"
    path.write_text("\n".join(lines) + "\n")
    rc = cli.main(["spectrum", "--target", f"file:{path}", "--json"])
    out, err = capsys.readouterr()
    assert rc == 2 and err.count("\n") == 1 and "27 bits" in err and "1 GiB" in err
    assert "only tree targets" in json.loads(out)["error"]


def test_compare_dry_run_names_a_missing_theory_point(capsys):
    """``ntkgap compare --family tree:d=64,arity=2,node=tanh --L 5..6
    --dry-run --json``: the fc theory at L = 6 (beyond the tanh composition's
    budget) is listed with its reason, not dropped silently; L = 5 (32 leaves,
    by composition) has its n*."""
    argv = ["compare", "--family", "tree:d=64,arity=2,node=tanh", "--L", "5..6", "--dry-run"]
    rc = cli.main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    r = json.loads(out)
    assert r["n_star_theory"]["fc NTK theory"]["5"] > 0
    assert "6" not in r["n_star_theory"]["fc NTK theory"]
    missing = r.get("theory_missing") or r["n_star_theory_missing"]  # the older key
    assert "tanh composition" in missing["fc NTK theory"]["6"]
    rc = cli.main(argv)
    text = capsys.readouterr().out
    said = [ln for ln in text.splitlines() if ln.startswith("theory n*: fc NTK theory: L=6: ")]
    assert rc == 0 and said and "tanh composition" in said[0]
