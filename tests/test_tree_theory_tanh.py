"""Walsh power of tanh tree targets per tree shape (ntkgap.kernels.tree_eigen,
signed measures over node values) against the FWHT of the target (L <= 4)
and Monte Carlo estimates of f_hat (L = 5)."""

import numpy as np
import pytest

from ntkgap.kernels import tree_eigen
from ntkgap.nets.arch import parse_arch
from ntkgap.spectral import walsh
from ntkgap.targets import parse_target

MC_SEED = 11
MC_SAMPLES = 200_000


@pytest.mark.parametrize("a,L", [(2, 1), (2, 2), (2, 3), (2, 4), (3, 2), (4, 1)])
def test_tanh_power_per_shape_equals_fwht(a, L):
    s = a**L
    ts = tree_eigen.tree_spectrum(
        parse_arch(f"tree:arity={a},L={L}"),
        target=parse_target(f"tree:d={s},L={L},arity={a},node=tanh"),
    )
    ws = walsh.walsh_spectrum(parse_target(f"tree:d={s},L={L},arity={a},node=tanh"))
    ids = np.array([ts.shape_of(S) for S in range(2**s)])
    ref = np.bincount(ids, weights=ws.coefficients**2, minlength=len(ts.eigenvalue))
    zero = ref <= 1e-28  # zero up to the transform's rounding (odd target: even |S|)
    assert zero.any() and (~zero).any()
    assert np.max(np.abs(ts.power[~zero] - ref[~zero]) / ref[~zero]) <= 1e-10
    assert np.max(np.abs(ts.power[zero])) <= 1e-12
    assert ts.second_moment == pytest.approx(float((ws.coefficients**2).sum()), rel=1e-12)
    assert abs(ts.mean) <= 1e-14


def test_tanh_power_at_32_leaves_within_monte_carlo_error():
    target = parse_target("tree:d=32,L=5,arity=2,node=tanh")
    ts = tree_eigen.tree_spectrum(parse_arch("tree:arity=2,L=5"), target=target)
    x = np.random.default_rng(MC_SEED).choice([-1.0, 1.0], size=(MC_SAMPLES, 32))
    f = target(x)
    subsets = [
        [0],
        [5, 9],
        [0, 1, 2],
        [0, 2, 4],
        [0, 16, 17],
        [0, 1, 2, 3, 4],
        list(range(0, 32, 4)),
    ]
    for S in subsets:
        chi = np.prod(x[:, S], axis=1)
        est, se = float(np.mean(f * chi)), float(np.std(f * chi) / np.sqrt(MC_SAMPLES))
        k = ts.shape_of(sum(1 << j for j in S))
        theory = np.sqrt(ts.power[k] / float(ts.multiplicity[k]))  # |f_hat| per subset
        assert abs(abs(est) - theory) <= 4 * se + 1e-15, (S, est, theory, se)
