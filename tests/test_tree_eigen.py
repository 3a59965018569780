"""Recursive tree-kernel eigenvalues and tree-target Walsh power
(ntkgap.kernels.tree_eigen) against independent references: the FWHT of
neural-tangents' kernel row, numpy.linalg.eigh of the full Gram, the
closed-form fc kernel (L = 1), and the FWHT of the target."""

import json

import numpy as np
import pytest

from ntkgap.kernels import dual, eigen, eigenlearning, theory, tree_eigen, tree_target
from ntkgap.kernels import gram as kernels
from ntkgap.nets.arch import parse_arch
from ntkgap.spectral import walsh
from ntkgap.targets import parse_target
from ntkgap.targets.domains import Hypercube


def _per_subset(ts, s):
    """Eigenvalue of every subset (bit mask) of the s leaves from the shapes."""
    ids = np.array([ts.shape_of(S) for S in range(2**s)])
    assert ids.min() >= 0
    return ts.eigenvalue[ids], ids


def _tol(arch):
    # neural-tangents' ReLU kernel with b_std > 0 is off by ~5e-10 relative at
    # rho = 1 (e.g. K(x, x) = 1.0199999994675786 for tree:arity=2,L=1, whose
    # closed form is 1.02); elsewhere it agrees to rounding
    return 1e-9 if arch.spec["act"] == "relu" and arch.spec["b_std"] > 0 else 1e-12


TREES = [
    f"tree:arity={a},L={L},act={act},b_std={b}"
    for a, Ls in ((2, (1, 2, 3, 4)), (3, (1, 2)))
    for L in Ls
    for act in ("relu", "erf")
    for b in (0.0, 0.1)
]


@pytest.mark.parametrize("spec", TREES)
def test_recursive_eigenvalues_equal_fwht_route(spec):
    arch = parse_arch(spec)
    s = arch.leaves
    ts = tree_eigen.tree_spectrum(arch)
    ref = eigen.hypercube_tree_fwht(arch, Hypercube(s))
    mu_ref = np.zeros(2**s)
    for block, lam in zip(ref.subsets, ref.eigenvalue):
        mu_ref[block] = lam
    mu, _ = _per_subset(ts, s)
    assert ts.capped_at is None
    assert np.max(np.abs(mu - mu_ref)) <= _tol(arch) * ts.trace
    # K(x, x) alone is where neural-tangents' ReLU error sits (~2e-9 relative)
    assert abs(ts.trace - ref.trace) <= 10 * _tol(arch) * ts.trace
    # every subset is in exactly one block: multiplicities are exact counts
    assert sum(ts.multiplicity) == 2**s
    assert np.array_equal(np.bincount(_per_subset(ts, s)[1]), np.array(ts.multiplicity))


@pytest.mark.parametrize("spec", ["tree:arity=4,L=1,W_std=1.3", "tree:arity=5,L=1,act=erf"])
def test_one_level_tree_is_the_closed_form_fc_kernel(spec):
    # L = 1: one locally connected layer over all leaves = fc:depth=1, so
    # mu_S = E_z[h(mean z) chi_S(z)] with h from ntkgap.kernels.dual; by symmetry
    # mu depends on |S| only: a Krawtchouk sum
    arch = parse_arch(spec)
    a, sp = arch.leaves, arch.spec
    h = dual.fc_kernel(
        (a - 2 * np.arange(a + 1)) / a, depth=1, act=sp["act"], W_std=sp["W_std"], b_std=sp["b_std"]
    )
    rows = eigen.krawtchouk_rows(a, a)
    ts = tree_eigen.tree_spectrum(arch)
    for k, lam in zip(ts.degree, ts.eigenvalue):
        assert lam == pytest.approx(np.dot(rows[k], h) / 2**a, abs=1e-14 * ts.trace)


@pytest.mark.parametrize(
    "spec", ["tree:arity=2,L=2", "tree:arity=2,L=3,act=erf,b_std=0.0", "tree:arity=3,L=1"]
)
def test_recursive_eigenvalues_equal_eigh_of_full_gram(spec):
    arch = parse_arch(spec)
    s = arch.leaves
    pts = walsh.bit_column_matrix(s)
    x = arch.inputs(Hypercube(s), pts)
    K = kernels.gram(arch, x)
    ref = np.sort(np.linalg.eigh(K / 2**s)[0])
    ts = tree_eigen.tree_spectrum(arch)
    ours = np.sort(np.repeat(ts.eigenvalue, np.array(ts.multiplicity, dtype=np.int64)))
    assert ours.size == 2**s
    assert np.max(np.abs(ours - ref)) <= max(_tol(arch), 1e-12) * ts.trace


NODES = ["parity", "and", "or", "linear-plus", "random"]


@pytest.mark.parametrize(
    "a,L,node",
    [(2, L, n) for L in (1, 3, 4) for n in NODES]
    + [(3, 2, n) for n in NODES + ["majority"]]
    + [(4, 1, "random")],
)
def test_target_power_per_shape_equals_fwht(a, L, node):
    arch = parse_arch(f"tree:arity={a},L={L}")
    target = parse_target(f"tree:d={a**L + 3},L={L},arity={a},node={node},seed=7")
    ts = tree_eigen.tree_spectrum(arch, target=target)
    ws = walsh.walsh_spectrum(target)
    _, ids = _per_subset(ts, a**L)
    ref = np.bincount(ids, weights=ws.coefficients**2, minlength=len(ts.eigenvalue))
    assert np.max(np.abs(ts.power - ref)) <= 1e-14
    assert ts.mean == pytest.approx(ws.coefficients[0], abs=1e-14)
    assert ts.second_moment == pytest.approx(float((ws.coefficients**2).sum()), abs=1e-13)


def test_capped_root_lists_exact_eigenvalues_and_says_so(monkeypatch):
    # force the cap on a tree that also runs whole: the listed shapes must
    # carry the whole spectrum's eigenvalues, multiplicities and powers
    arch = parse_arch("tree:arity=2,L=5,act=erf")
    target = parse_target("tree:d=32,L=5,arity=2,node=linear-plus")
    whole = tree_eigen.tree_spectrum(arch, target=target)
    assert sum(whole.multiplicity) == 2**32
    monkeypatch.setattr(tree_eigen, "MAX_CELLS", 100)
    monkeypatch.setattr(tree_eigen, "MAX_CARRIED", 5)
    cap = tree_eigen.tree_spectrum(arch, target=target, max_blocks=10**9)
    assert cap.capped_at is not None
    ids = [whole.levels[-1]["index"][tuple(sorted(c))] for c in cap.levels[-1]["children"].tolist()]
    assert len(set(ids)) == len(ids) < len(whole.eigenvalue)
    assert np.max(np.abs(whole.eigenvalue[ids] - cap.eigenvalue)) <= 1e-14 * whole.trace
    assert np.array_equal(np.array(whole.multiplicity, dtype=float)[ids], cap.multiplicity)
    assert np.max(np.abs(whole.power[ids] - cap.power)) <= 1e-15
    # every shape of degree <= capped_at is listed
    low = np.nonzero(whole.degree <= cap.capped_at)[0]
    assert set(low.tolist()) <= set(ids)
    missing = np.setdiff1d(np.arange(len(whole.eigenvalue)), ids)
    m_whole = np.array(whole.multiplicity, dtype=float)
    assert cap.tail_trace == pytest.approx(
        float(m_whole[missing] @ whole.eigenvalue[missing]), rel=1e-9
    )


def test_theory_tree_route_equals_fwht_route():
    arch = parse_arch("tree:arity=2,L=3")
    target = parse_target("tree:d=10,L=3,arity=2,node=linear-plus")
    sp, es = theory.spectrum(arch, target)
    ref = eigen.hypercube_tree_fwht(arch, Hypercube(10))
    ws = walsh.walsh_spectrum(target)
    coef = ws.coefficients
    power = np.array([np.sum(coef[b] ** 2) for b in ref.subsets])
    var = float((coef**2).sum() - coef[0] ** 2)
    sp_ref = eigenlearning.Spectrum(ref.eigenvalue, ref.multiplicity, power, variance=var)
    ns = [4, 30, 100, 200]
    ours = eigenlearning.relative_test_mse(ns, sp)
    theirs = eigenlearning.relative_test_mse(ns, sp_ref)
    assert np.allclose(ours, theirs, rtol=1e-6)
    assert es.capped_at is None and es.tail_trace <= 1e-12 * es.trace


def test_cli_eigenvalues_tree_multiplicities_sum_to_cube(cli):
    r = cli("eigenvalues", "--arch", "tree:arity=3,L=2", "--domain", "hypercube:d=12", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert sum(out["multiplicity"]) == 2**9
    assert len(out["eigenvalue"]) == len(out["multiplicity"]) == 20


@pytest.mark.parametrize(
    "spec",
    [
        "tree:d=10,L=3,arity=2,node=parity",
        "tree:d=8,L=3,arity=2,node=linear-plus",
        "tree:d=16,L=4,arity=2,node=random,seed=3",
        "tree:d=9,L=2,arity=3,node=random,seed=1",
        "tree:d=9,L=2,arity=3,node=majority",
    ],
)
def test_degree_profile_by_recursion_equals_fwht(spec):
    target = parse_target(spec)
    rec = tree_target.tree_degree_profile(target)
    ref = walsh.walsh_spectrum(target).degree_profile()
    assert rec.size == len(target.support) + 1
    np.testing.assert_allclose(rec[: ref.size], ref, rtol=0, atol=1e-12)
    assert np.all(rec[ref.size :] == 0)


def test_fc_theory_on_a_large_tree_uses_the_recursion_and_keeps_its_variance():
    # 32 leaves: beyond the Walsh transform; the weights still sum to Var f
    # (linear-plus: unit variance at every level, by construction)
    arch = parse_arch("fc:depth=2")
    sp, _ = theory.spectrum(arch, parse_target("tree:d=40,L=5,arity=2,node=linear-plus"))
    assert sp.variance == pytest.approx(1.0, abs=1e-12)
    assert float(sp.power.sum()) == pytest.approx(1.0, abs=1e-12)
