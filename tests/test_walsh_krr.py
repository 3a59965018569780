"""The Walsh-CG kernel solver (ntkgap.kernels.walsh_krr) against independent
references: numpy.linalg.eigh of the full 2^D Gram from neural-tangents'
kernel_fn (no look-up table), scipy's Cholesky solve of the dense Gram, and
the n* of a planted search run with the dense solver."""

import numpy as np
import pytest
import scipy.linalg as sla

from ntkgap.errors import MemoryLimitError, UsageError
from ntkgap.kernels import gram, ntk_predictor, walsh_krr
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import search
from ntkgap.runs.sample_complexity import _solver_facts
from ntkgap.spectral import walsh
from ntkgap.targets import parse_target
from ntkgap.targets.domains import Hypercube

FC = [
    "fc:depth=1,act=relu,b_std=0.1",
    "fc:depth=1,act=relu,b_std=1",
    "fc:depth=2,act=erf,b_std=0.1",
    "fc:depth=1,act=erf,b_std=1",
]
TREES = [
    "tree:arity=2,L=2",
    "tree:arity=3,L=2,act=erf",
    "tree:arity=2,L=3",
    "tree:arity=2,L=3,share=1",
]


def _full_gram(arch, D, kind="ntk"):
    """The 2^D Gram straight from kernel_fn in blocks (not the look-up tables
    the solver's kernel row is read from)."""
    x = arch.inputs(Hypercube(D), walsh.bit_column_matrix(D))
    return gram.gram(arch, x, kind=kind, hypercube_lookup=False)


@pytest.mark.parametrize(
    "spec,D,kind",
    [(FC[0], 10, "ntk"), (FC[1], 10, "ntk"), (FC[2], 9, "ntk"), (FC[3], 9, "nngp")]
    + [(t, None, "ntk") for t in TREES],
)
def test_spectrum_is_eigh_of_the_full_gram(spec, D, kind):
    """lambda = H g equals eigh of the full 2^D Gram as multisets, to 1e-10."""
    arch = parse_arch(spec)
    D = D or arch.leaves
    assert walsh_krr.read_set(arch, Hypercube(D)) == D
    lam = walsh_krr.spectrum(walsh_krr.kernel_row(arch, D, kind))
    ev = np.linalg.eigh(_full_gram(arch, D, kind))[0]
    scale = float(np.max(np.abs(ev)))
    assert np.max(np.abs(np.sort(lam) - ev)) <= 1e-10 * scale


def _cholesky_predictions(K, idx, y, ridge):
    A = K[np.ix_(idx, idx)] + ridge * np.eye(idx.size)
    return K[:, idx] @ sla.cho_solve(sla.cho_factor(A, lower=True), y)


@pytest.mark.parametrize(
    "spec,D,ns",
    [(FC[0], 11, (64, 1000, 1024)), (FC[3], 11, (64, 1000, 1024)),
     (TREES[0], 4, (8,)), (TREES[2], 8, (64, 128)), (TREES[3], 8, (64, 128)),
     (TREES[1], 9, (64, 256))],
)  # fmt: skip
def test_cg_predictions_equal_cholesky(spec, D, ns):
    """At n in {64, 1000, 2^D / 2} (1000 where the cube holds it), ridgeless
    and with a ridge, CG's predictions at every point of the cube, the
    complement of the training set included, equal Cholesky's to 1e-8."""
    arch = parse_arch(spec)
    K = gram.gram(arch, arch.inputs(Hypercube(D), walsh.bit_column_matrix(D)))
    system = walsh_krr.WalshSystem.of(arch, D)
    perm = np.random.default_rng(D).permutation(2**D)
    labels = np.prod(walsh.bit_column_matrix(D)[:, : min(3, D)], axis=1).astype(float)
    for n in ns:
        idx = perm[:n]
        for ridge in (0.0, 1e-2 * K[0, 0]):
            r = system.solve(idx, labels[idx], ridge=ridge)
            assert r["converged"] and r["residual"] <= walsh_krr.RTOL
            ref = _cholesky_predictions(K, idx, labels[idx], ridge)
            out = system.complement(idx)
            assert out.size == 2**D - n
            np.testing.assert_allclose(system.predict(idx, r["alpha"], out), ref[out], atol=1e-8)
            np.testing.assert_allclose(system.predict(idx, r["alpha"]), ref, atol=1e-8)


def test_preconditioner_cuts_iterations():
    """The low-degree Walsh block cuts CG's iterations (relu NTK, D = 12,
    n = 2,048), to the same answer."""
    arch = parse_arch(FC[0])
    system = walsh_krr.WalshSystem.of(arch, 12)
    idx = np.random.default_rng(1).permutation(2**12)[:2048]
    y = np.prod(walsh.bit_column_matrix(12, idx)[:, :4], axis=1).astype(float)
    plain = system.solve(idx, y, precondition=False)
    pre = system.solve(idx, y)
    assert pre["features"] > 0 and pre["iterations"] * 2 < plain["iterations"]
    np.testing.assert_allclose(pre["alpha"], plain["alpha"], atol=1e-6)


def _nstars(target, spec, solver, ridge):
    arch, t = parse_arch(spec), parse_target(target)
    curves, used = {}, set()

    def evaluate(seed, n):
        c = curves.setdefault(seed, ntk_predictor.NestedCurve(
            arch, t, seed=seed, n_test=256, ridge=ridge, solver=solver))  # fmt: skip
        r = c.at(n)
        used.add(r["solver"])
        return r["test_mse"]

    run = search.run_nested(evaluate, [0, 1, 2, 3], 0.1, 16, 1024, factor=1.25)
    return [(s["status"], s["lo"], s["hi"], s["evaluations"], s["n_star"])
            for s in run["seeds"]], used  # fmt: skip


@pytest.mark.parametrize("ridge", [0.0, "tuned"])
def test_planted_nstar_same_with_both_solvers(ridge):
    """A planted search (parity d = 10, k = 2: relu NTK resolves near n = 100)
    finds the same n* on every seed with the dense Cholesky solver and with
    Walsh-CG at its stopping tolerance, ridgeless and tuned: the same
    evaluations, brackets and status, and n* (interpolated in the bracket
    from the two errors) to 1e-9."""
    dense, u1 = _nstars("parity:d=10,k=2", FC[0], "cholesky", ridge)
    fast, u2 = _nstars("parity:d=10,k=2", FC[0], "walsh-cg", ridge)
    assert u1 == {"cholesky"} and u2 == {"walsh-cg"}
    assert len(dense) == 4 and all(r[0] == search.RESOLVED for r in dense)
    assert [r[:4] for r in fast] == [r[:4] for r in dense]
    for f, d in zip(fast, dense):
        assert f[4] == pytest.approx(d[4], rel=1e-9)


def test_curve_answers_match_and_warm_start():
    """NestedCurve.at with solver="walsh-cg" gives the dense answer's test and
    train MSE and tuned ridge (d = 11 parity, n = 600, tuned); a second,
    larger n warm-starts from the first and reports its iterations."""
    arch, t = parse_arch(FC[1]), parse_target("parity:d=11,k=3")
    dense = ntk_predictor.evaluate(arch, t, 600, seed=3, n_test=700, ridge="tuned",
                                   solver="cholesky")  # fmt: skip
    curve = ntk_predictor.NestedCurve(arch, t, seed=3, n_test=700, ridge="tuned",
                                      solver="walsh-cg")  # fmt: skip
    fast = curve.at(600)
    assert dense["solver"] == "cholesky" and fast["solver"] == "walsh-cg"
    for key in ("test_mse", "train_mse", "test_mse_se"):
        assert fast[key] == pytest.approx(dense[key], abs=1e-9)
    assert fast["ridge_factor"] == dense["ridge_factor"]
    direct = ntk_predictor.evaluate(arch, t, 600, seed=3, n_test=700, ridge="tuned",
                                    solver="walsh-direct")  # fmt: skip
    assert direct["solver"] == "walsh-direct" and direct["cg_iterations"] == 0
    assert direct["test_mse"] == pytest.approx(dense["test_mse"], abs=1e-9)
    cold = ntk_predictor.NestedCurve(arch, t, seed=3, n_test=700, ridge="tuned",
                                     solver="walsh-cg").at(660)  # fmt: skip
    warm = curve.at(660)
    assert warm["test_mse"] == pytest.approx(cold["test_mse"], abs=1e-9)
    assert warm["cg_iterations"] < cold["cg_iterations"]
    facts = _solver_facts([dense, fast, warm])
    assert facts["solver"] == "walsh-cg" and facts["solver_evaluations"] == {
        "cholesky": 1, "walsh-cg": 2}  # fmt: skip
    assert 0 < facts["cg_residual"] <= walsh_krr.RTOL


def test_auto_chooses_by_cost_and_refusals_name_d(monkeypatch):
    """auto: Cholesky at small n, Walsh-CG where the dense path would cost
    more; a Walsh solve over the memory limit names D and the limit; a
    Walsh solver asked for a circle target is a one-line usage error."""
    assert not walsh_krr.prefer(20, 1000, 500)
    assert walsh_krr.prefer(20, 2**17, 500)
    assert walsh_krr.prefer(16, 8192, 2**15)
    assert not walsh_krr.prefer(None, 2**17, 500)
    monkeypatch.setenv("NTKGAP_MEMORY_LIMIT", "1M")
    with pytest.raises(MemoryLimitError, match=r"D=20.*memory limit of 1\.0 MiB"):
        walsh_krr.check_memory(20, 1000)
    monkeypatch.delenv("NTKGAP_MEMORY_LIMIT")
    with pytest.raises(UsageError, match="solver='walsh-cg' needs a hypercube"):
        ntk_predictor.NestedCurve(parse_arch("fc:depth=1"), parse_target("sawtooth:L=2"), seed=0,
                                  solver="walsh-cg")  # fmt: skip
