"""Bounded tree nodes (tanh), exact moments of hypercube targets, and the
depth-indexed random layered circuits."""

import math

import numpy as np
import pytest

from ntkgap.errors import SpecError
from ntkgap.spectral import walsh
from ntkgap.targets import parse_target
from ntkgap.targets.boolean import tanh_scales
from ntkgap.targets.domains import Hypercube


def _brute_moments(t):
    # independent route: __call__ on every point of a small cube
    y = t(Hypercube(t.spec["d"]).enumerate())
    c = y - y.mean()
    return y.mean(), np.mean(c**2), np.mean(c**4), np.max(np.abs(y))


@pytest.mark.parametrize(
    "spec",
    [
        "tree:d=16,L=4,arity=2,node=linear-plus",
        "tree:d=16,L=4,arity=2,node=tanh",
        "tree:d=9,L=2,arity=3,node=tanh",
        "tree:d=16,L=2,arity=4,node=tanh",
        "tree:d=8,L=3,arity=2,node=and",
        "layered:d=16,L=4,fan_in=3,seed=2",
        "circuit:d=12,gates=6,fan_in=3,seed=1",
    ],
)
def test_moments_match_brute_force(spec):
    t = parse_target(spec)
    m = t.moments()
    mean, var, m4, mx = _brute_moments(t)
    assert m["exact"] and m["points"] == 2 ** len(t.support)
    assert m["mean"] == pytest.approx(mean, abs=1e-12)
    assert m["variance"] == pytest.approx(var, rel=1e-10)
    assert m["fourth_moment"] == pytest.approx(m4, rel=1e-10)
    assert m["kurtosis"] == pytest.approx(m4 / var**2, rel=1e-10)
    assert m["max_abs"] == pytest.approx(mx, rel=1e-12)


def test_moments_closed_forms():
    # AND of two bits: +1 w.p. 1/4, -1 w.p. 3/4 -> mean -1/2, var 3/4,
    # E(f + 1/2)^4 = (1/4)(3/2)^4 + (3/4)(1/2)^4 = 21/16, kurtosis 7/3
    m = parse_target("tree:d=2,L=1,arity=2,node=and").moments()
    assert (m["mean"], m["variance"], m["fourth_moment"]) == pytest.approx((-0.5, 0.75, 21 / 16))
    assert m["kurtosis"] == pytest.approx(7 / 3)
    p = parse_target("parity:d=30,k=5").moments()
    assert (p["mean"], p["variance"], p["kurtosis"], p["max_abs"]) == pytest.approx((0, 1, 1, 1))


def test_moments_beyond_24_bits_are_estimates():
    m = parse_target("parity:d=30,k=26").moments()
    assert not m["exact"] and m["points"] == 2**20
    assert m["variance"] == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("arity,L", [(2, 1), (2, 2), (2, 3), (2, 4), (3, 2), (4, 2), (5, 1)])
def test_tanh_tree_is_centred_unit_variance_and_bounded(arity, L):
    t = parse_target(f"tree:d={arity**L},L={L},arity={arity},node=tanh")
    mean, var, m4, mx = _brute_moments(t)
    assert abs(mean) < 1e-12
    assert var == pytest.approx(1.0, rel=1e-10)
    assert mx <= 1.0 / tanh_scales(arity, L)[-1] + 1e-12
    # light tails: below a Gaussian's kurtosis 3 at every depth tried
    assert m4 / var**2 < 3.0


def test_tanh_tree_level_one_closed_form():
    # arity 2, one level: tanh((x + y)/sqrt 2)/c, c^2 = tanh(sqrt 2)^2 / 2
    assert tanh_scales(2, 1)[0] == pytest.approx(math.tanh(math.sqrt(2)) / math.sqrt(2))


def test_tanh_tree_deep_normalisation_monte_carlo():
    # L = 6 (64 leaves) is past enumeration: unit variance within MC error
    t = parse_target("tree:d=64,L=6,arity=2,node=tanh")
    y = t(Hypercube(64).sample(200_000, seed=7))
    assert abs(y.mean()) < 5 * 1 / math.sqrt(y.size)
    assert np.var(y) == pytest.approx(1.0, abs=0.02)


def test_tanh_tree_too_deep_is_refused():
    with pytest.raises(SpecError, match="node=tanh"):
        parse_target("tree:d=128,L=7,arity=2,node=tanh")


@pytest.mark.parametrize("L", [1, 2, 3, 4])
def test_layered_support_grows_with_depth(L):
    t = parse_target(f"layered:d=24,L={L},fan_in=3,seed=4")
    a = t.architecture()
    assert t.support == tuple(range(2**L))
    assert (a["constituents"], a["depth"], a["support_size"]) == (2**L - 1, L, 2**L)
    # depends only on its support: flipping the other coordinates changes nothing
    x = Hypercube(24).sample(300, seed=1)
    y = x.copy()
    y[:, 2**L :] *= -1
    np.testing.assert_array_equal(t(x), t(y))
    np.testing.assert_array_equal(t(x), parse_target(str(t.spec))(x))
    assert set(np.unique(t(x))) <= {-1.0, 1.0}


def test_layered_shares_gates_and_reads_every_input():
    t = parse_target("layered:d=16,L=4,fan_in=3,seed=0")
    reads = [src for layer in t._layers for _, src, _ in layer]
    # fan_in 3: a third input per gate, read by another parent too (a DAG)
    assert all(
        len(r) == min(3, 2 ** (4 - k)) for k, layer in enumerate(t._layers) for r in [layer[0][1]]
    )
    below = t._layers[0]
    counts = np.bincount([s for _, src, _ in below for s in src], minlength=16)
    assert np.all(counts >= 1) and np.any(counts >= 2)
    assert len(reads) == 15
    # every input matters: each coordinate has nonzero influence
    coef = walsh.walsh_spectrum(t).coefficients
    idx = np.arange(coef.size)
    for j in range(16):
        assert np.sum(coef[(idx >> j) & 1 == 1] ** 2) > 0


def test_layered_seeds_differ_and_errors():
    x = Hypercube(16).enumerate()
    a = parse_target("layered:d=16,L=4,fan_in=3,seed=0")(x)
    b = parse_target("layered:d=16,L=4,fan_in=3,seed=1")(x)
    assert not np.array_equal(a, b)
    with pytest.raises(SpecError, match="exceeds d=8"):
        parse_target("layered:d=8,L=4,fan_in=2")


def test_circle_moments_against_a_fine_grid():
    theta = np.linspace(0, 2 * np.pi, 2**20, endpoint=False) + 1e-7
    for spec in ("sawtooth:L=3", "bandlimited:K=5,seed=2"):
        t = parse_target(spec)
        m = t.moments()
        y = t(theta)
        c = y - y.mean()
        assert m["mean"] == pytest.approx(y.mean(), abs=1e-6)
        assert m["variance"] == pytest.approx(np.mean(c**2), rel=1e-5)
        assert m["fourth_moment"] == pytest.approx(np.mean(c**4), rel=1e-5)
        assert m["kurtosis"] == pytest.approx(np.mean(c**4) / np.mean(c**2) ** 2, rel=1e-5)
        assert m["max_abs"] == pytest.approx(np.max(np.abs(y)), rel=1e-3)


# ------------------------------------------------ the linear node (negative control)
@pytest.mark.parametrize("arity, L", [(2, 1), (2, 3), (2, 4), (3, 2)])
def test_linear_tree_walsh_spectrum_is_exactly_degree_one(arity, L):
    # planted closed form: f = sum of the a^L leaves / a^(L/2), so every
    # singleton coefficient is a^(-L/2) and nothing else carries weight
    target = parse_target(f"tree:d={arity**L + 2},L={L},arity={arity},node=linear")
    ws = walsh.walsh_spectrum(target)
    profile = ws.degree_profile()
    assert profile[1] == pytest.approx(1.0, abs=1e-12)
    assert np.sum(np.delete(profile, 1)) == pytest.approx(0.0, abs=1e-24)
    x = Hypercube(target.spec["d"]).sample(64, seed=0)
    np.testing.assert_allclose(target(x), x[:, : arity**L].sum(axis=1) / arity ** (L / 2))


@pytest.mark.parametrize("arity, L", [(2, 3), (2, 5), (3, 3)])
def test_linear_tree_recursions_treat_it_as_a_multilinear_node(arity, L):
    # tree_eigen's recursion (any number of leaves) against the closed form:
    # all the unit variance at degree 1; the shape powers against the FWHT
    from ntkgap.kernels import tree_eigen, tree_target
    from ntkgap.nets.arch import parse_arch

    target = parse_target(f"tree:d={arity**L},L={L},arity={arity},node=linear")
    rec = tree_target.tree_degree_profile(target)
    ref = np.zeros(arity**L + 1)
    ref[1] = 1.0
    np.testing.assert_allclose(rec, ref, rtol=0, atol=1e-12)
    if arity**L <= 16:
        ts = tree_eigen.tree_spectrum(parse_arch(f"tree:arity={arity},L={L}"), target=target)
        ws = walsh.walsh_spectrum(target)
        assert ts.second_moment == pytest.approx(float((ws.coefficients**2).sum()), abs=1e-13)
        assert ts.mean == pytest.approx(0.0, abs=1e-14)
