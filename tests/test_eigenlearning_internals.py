"""Eigenlearning internals: the effective ridge kappa against an
independent root-find of the eigenlearning equation over the expanded modes, and the
learnabilities summing to the effective degrees of freedom (the conservation law).

References: Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework", 2021
(arXiv 2110.03922).
"""

import numpy as np
import pytest
from scipy.optimize import brentq

from ntkgap.kernels import eigenlearning
from ntkgap.kernels.eigenlearning import Spectrum

# (eigenvalues, multiplicities, tail, ridge, sample sizes)
CASES = [
    ([1.0, 0.1, 0.01], [1, 5, 20], 0.0, 0.0, [1, 3, 10, 25]),
    ([1.0, 0.1, 0.01], [1, 5, 20], 0.0, 0.05, [1, 10, 40, 200]),
    ([0.5, 0.2, 0.03, 0.004], [1, 4, 12, 40], 0.02, 0.0, [2, 8, 30, 200]),
    ([2.0, 1e-3, 1e-6], [3, 30, 300], 0.0, 1e-4, [2, 20, 100, 400]),
]


def _expanded_kappa(lam, mult, tail, ridge, n):
    """kappa by brentq on the per-mode equation sum_modes l/(l+k) + (ridge+tail)/k = n."""
    modes = np.repeat(np.asarray(lam, float), mult)

    def g(log_k):
        k = np.exp(log_k)
        return float(np.sum(modes / (modes + k)) + (ridge + tail) / k - n)

    return float(np.exp(brentq(g, -200.0, 50.0, xtol=1e-14, rtol=1e-14)))


@pytest.mark.parametrize("lam, mult, tail, ridge, ns", CASES)
def test_kappa_matches_independent_root(lam, mult, tail, ridge, ns):
    sp = Spectrum(np.array(lam), np.array(mult), np.ones(len(lam)), tail=tail)
    got = eigenlearning.internals(ns, sp, ridge=ridge)
    for n, kappa in zip(ns, got["kappa"]):
        assert kappa == pytest.approx(_expanded_kappa(lam, mult, tail, ridge, n), rel=1e-9)


@pytest.mark.parametrize("lam, mult, tail, ridge, ns", CASES)
def test_learnabilities_sum_to_effective_dof(lam, mult, tail, ridge, ns):
    sp = Spectrum(np.array(lam), np.array(mult), np.ones(len(lam)), tail=tail)
    got = eigenlearning.internals(ns, sp, ridge=ridge)
    # each mode's learnability from the independent kappa, summed mode by mode
    for i, n in enumerate(ns):
        k = _expanded_kappa(lam, mult, tail, ridge, n)
        modes = np.repeat(np.asarray(lam, float), mult)
        dof = np.sum(modes / (modes + k))
        assert got["effective_dof"][i] == pytest.approx(dof, rel=1e-9)
        assert dof == pytest.approx(n - (ridge + tail) / k, rel=1e-9)  # conservation law
        assert np.all((got["learnability"][i] > 0) & (got["learnability"][i] < 1))


def test_ridgeless_learnabilities_sum_to_n_and_saturate_past_rank():
    sp = Spectrum(np.array([1.0, 0.3]), np.array([2, 3]), np.ones(2))
    got = eigenlearning.internals([1, 4, 5, 9], sp)
    assert got["effective_dof"][:2] == pytest.approx([1.0, 4.0], rel=1e-9)
    # n >= rank (5): every mode interpolated, kappa 0, learnability 1
    assert list(got["kappa"][2:]) == [0.0, 0.0]
    assert np.all(got["learnability"][2:] == 1.0)


def test_test_mse_from_internals():
    """The test MSE rebuilt from E0, L_i and P_i (Simon et al.'s formula) by hand."""
    rng = np.random.default_rng(0)
    lam = np.sort(rng.uniform(1e-4, 1.0, 6))[::-1]
    mult, power = rng.integers(1, 9, 6), rng.uniform(0, 1, 6)
    sp = Spectrum(lam, mult, power)
    ns = [2, 7, 15]
    got = eigenlearning.internals(ns, sp, ridge=0.01)
    for i, n in enumerate(ns):
        k = _expanded_kappa(lam, mult, 0.0, 0.01, n)
        L = lam / (lam + k)
        e0 = n / (n - np.sum(mult * L**2))
        assert got["overfitting"][i] == pytest.approx(e0, rel=1e-8)
        want = e0 * np.sum((1 - L) ** 2 * power)
        assert eigenlearning.test_mse([n], sp, ridge=0.01)[0] == pytest.approx(want, rel=1e-8)
    assert list(got["power"]) == list(power)


def test_tree_spectrum_internals():
    """On a real tree spectrum: one learnability per block of ``sp``, decreasing with
    the block's eigenvalue, and the ridgeless conservation law with the tail."""
    from ntkgap.kernels import theory
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import parse_target

    sp, _ = theory.spectrum(parse_arch("tree:arity=2,L=3"),
                            parse_target("tree:d=40,L=3,arity=2,node=tanh"))  # fmt: skip
    got = eigenlearning.internals([16, 64], sp)
    assert got["learnability"].shape == (2, sp.eigenvalue.size)
    order = np.argsort(-sp.eigenvalue)
    assert np.all(np.diff(got["learnability"][:, order], axis=1) <= 1e-15)
    dof = 16 - sp.tail / got["kappa"][0]
    assert got["effective_dof"][0] == pytest.approx(dof, rel=1e-9)
