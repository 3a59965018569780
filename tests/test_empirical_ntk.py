"""Empirical NTKs of finite nets (ntkgap.nets.empirical) against two
independent references: J J^T from central finite differences of stax's
own network function in float64, and, as the width grows, the analytic
infinite-width NTK (ntkgap.kernels.gram), with a fitted ~width^-1/2 trend
of the relative error (the empirical NTK's fluctuation at initialisation;
Jacot, Gabriel & Hongler 2018; Hanin & Nica 2020)."""

import jax
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from ntkgap.errors import UsageError
from ntkgap.kernels import gram as kernels
from ntkgap.nets import empirical
from ntkgap.nets.arch import parse_arch
from ntkgap.targets.domains import Hypercube

# smooth activations: central differences are exact to O(h^2) only off kinks
ARCHS = [
    ("fc:depth=2,act=tanh,b_std=0.3", 6, (6,)),
    ("fc:depth=1,act=erf,residual=1", 5, (5,)),
    ("tree:arity=2,L=2,act=tanh", 4, (4, 1)),
    ("tree:arity=2,L=3,act=erf,share=1", 8, (8, 1)),
]


def _fd_jacobian(apply_fn, params, x, h=1e-5):
    """d f(x_i) / d theta_p by central differences in float64, (n, P)."""
    flat, unravel = ravel_pytree(params)
    eye = np.eye(flat.size)

    def f(v):
        return apply_fn(unravel(v), x)[:, 0]

    fwd = jax.jit(jax.vmap(f))
    plus = np.asarray(fwd(flat[None, :] + h * eye))
    minus = np.asarray(fwd(flat[None, :] - h * eye))
    return ((plus - minus) / (2 * h)).T


# every arch on its default route; the structured tree on the Jacobian route too
FD_CASES = [(*case, "auto") for case in ARCHS] + [(*ARCHS[2], "jacobian")]


@pytest.mark.parametrize("spec,d,shape,route", FD_CASES)
def test_empirical_ntk_equals_finite_difference_jacobian_products(spec, d, shape, route):
    arch = parse_arch(spec)
    width = 6
    x = Hypercube(d).sample(7, seed=1).astype(np.float64).reshape((7,) + shape)
    x2 = Hypercube(d).sample(5, seed=2).astype(np.float64).reshape((5,) + shape)
    init_fn, _, _ = arch.stax(width)
    _, params = init_fn(jax.random.PRNGKey(3), x.shape)
    params = empirical.cast(params)
    # the reference differentiates stax's own apply_fn (not the fast tree path)
    J = _fd_jacobian(arch.stax(width, fast=False)[1], params, np.concatenate([x, x2]))
    J1, J2 = J[:7], J[7:]
    for got, ref in (
        (empirical.empirical_ntk(arch, width, params, x, route=route), J1 @ J1.T),
        (empirical.empirical_ntk(arch, width, params, x2, x, route=route), J2 @ J1.T),
    ):
        assert got.shape == ref.shape and got.dtype == np.float64
        rel = np.linalg.norm(got - ref) / np.linalg.norm(ref)
        assert rel < 1e-6, rel


# trees the structured route takes: arities, depths, activations with and
# without kinks, no bias, token channels (v = 3 one-hot channels a position)
STRUCTURED = [
    ("tree:arity=2,L=1,act=relu", 2, 1, 5),
    ("tree:arity=2,L=3,act=tanh", 8, 1, 7),
    ("tree:arity=3,L=2,act=erf,b_std=0", 9, 1, 4),
    ("tree:arity=2,L=2,act=gelu,W_std=1.3,b_std=0.5", 4, 3, 6),
    ("tree:arity=4,L=2,act=leaky_relu,slope=0.2", 16, 2, 3),
]


@pytest.mark.parametrize("spec,d,channels,width", STRUCTURED)
def test_structured_route_equals_jacobian_contraction(spec, d, channels, width):
    arch = parse_arch(spec)
    rng = np.random.default_rng(0)
    x = rng.choice([-1.0, 1.0], size=(9, d, channels))
    x2 = rng.choice([-1.0, 1.0], size=(4, d, channels))
    _, params = arch.stax(width)[0](jax.random.PRNGKey(1), x.shape)
    # trained-looking parameters: the init plus a perturbation of every leaf
    params = jax.tree_util.tree_map(
        lambda p: p + 0.3 * rng.standard_normal(np.shape(p)), empirical.cast(params)
    )
    assert empirical.structured(arch)
    for args in ((x,), (x2, x)):
        ref = empirical.empirical_ntk(arch, width, params, *args, route="jacobian")
        got = empirical.empirical_ntk(arch, width, params, *args, route="structured", block=4)
        assert np.linalg.norm(got - ref) <= 1e-10 * np.linalg.norm(ref)
    K, Kt = empirical.empirical_grams(arch, width, params, x, x2)
    np.testing.assert_array_equal(K, empirical.empirical_ntk(arch, width, params, x))
    np.testing.assert_array_equal(Kt, empirical.empirical_ntk(arch, width, params, x2, x))


def test_routes_refused_in_one_line():
    tree = parse_arch("tree:arity=2,L=2,act=erf,share=1")
    x = np.ones((2, 4, 1))
    params = tree.stax(4)[0](jax.random.PRNGKey(0), x.shape)[1]
    assert not empirical.structured(tree)
    for fn in (
        lambda r: empirical.empirical_ntk(tree, 4, params, x, route=r),
        lambda r: empirical.empirical_grams(tree, 4, params, x, x, route=r),
    ):
        with pytest.raises(UsageError, match="route='structured' needs a tree with share=0"):
            fn("structured")
        with pytest.raises(UsageError, match="route='exact' is not allowed .allowed: auto, "):
            fn("exact")
    tree0 = parse_arch("tree:arity=2,L=2,act=erf")  # the structured route
    for arch in (tree, tree0):
        with pytest.raises(UsageError, match="block=0 must be >= 1"):
            empirical.empirical_ntk(arch, 4, params, x, block=0)


def test_several_outputs_take_the_jacobian_route():
    """The structured route differentiates one output: a readout of 3 units
    (one-hot labels) is refused there, and auto takes the Jacobian route,
    which sums the kernel over the outputs as neural-tangents does."""
    arch = parse_arch("tree:arity=2,L=2,act=tanh")
    x = np.random.default_rng(0).choice([-1.0, 1.0], size=(5, 4, 1))
    params = arch.stax(6, outputs=3)[0](jax.random.PRNGKey(0), x.shape)[1]
    with pytest.raises(UsageError, match="one output, not tree.* with 3 outputs"):
        empirical.empirical_ntk(arch, 6, params, x, route="structured")
    ref = empirical.empirical_ntk(arch, 6, params, x, route="jacobian")
    np.testing.assert_array_equal(empirical.empirical_ntk(arch, 6, params, x), ref)
    np.testing.assert_array_equal(empirical.empirical_grams(arch, 6, params, x, x)[0], ref)


@pytest.mark.parametrize("route", ["structured", "jacobian"])
def test_blocks_give_the_same_gram_exactly_symmetric_and_psd(route):
    arch = parse_arch("tree:arity=2,L=2,act=tanh")
    x = Hypercube(4).sample(9, seed=0).astype(np.float64)[:, :, None]
    _, params = arch.stax(8)[0](jax.random.PRNGKey(0), x.shape)
    whole = empirical.empirical_ntk(arch, 8, params, x, route=route)
    # blocks of 4 rows, the last padded: the same numbers, mirrored exactly
    K = empirical.empirical_ntk(arch, 8, params, x, block=4, route=route)
    np.testing.assert_allclose(K, whole, rtol=1e-12, atol=1e-12 * np.abs(whole).max())
    np.testing.assert_allclose(
        empirical.empirical_ntk(arch, 8, params, x[:5], x, block=4, route=route), whole[:5],
        rtol=1e-12, atol=1e-12 * np.abs(whole).max(),
    )  # fmt: skip
    assert np.array_equal(K, K.T)
    assert np.linalg.eigvalsh(K).min() > -1e-10 * np.trace(K)


@pytest.mark.parametrize(
    "spec,d,shape,widths",
    [
        ("fc:depth=1,act=erf", 8, (8,), (64, 256, 1024, 4096)),
        ("tree:arity=2,L=2,act=erf", 4, (4, 1), (16, 64, 256, 1024)),
    ],
)
def test_empirical_ntk_approaches_analytic_ntk_as_width_grows(spec, d, shape, widths):
    arch = parse_arch(spec)
    x = Hypercube(d).sample(6, seed=0).astype(np.float64).reshape((6,) + shape)
    exact = kernels.gram(arch, x)
    errs = []
    for width in widths:
        init_fn = arch.stax(width)[0]
        rel = []
        for s in range(5):  # the mean over seeds of each seed's error
            _, params = init_fn(jax.random.PRNGKey(s), x.shape)
            K = empirical.empirical_ntk(arch, width, params, x)
            rel.append(np.linalg.norm(K - exact) / np.linalg.norm(exact))
        errs.append(np.mean(rel))
    slope, _ = np.polyfit(np.log(widths), np.log(errs), 1)
    # a width^-1/2 fluctuation (a bias of order 1/width would give -1)
    assert -0.75 < slope < -0.3, (slope, errs)
    assert errs[-1] < 0.15, errs


def test_weight_movement_of_planted_trees():
    p0 = ((np.full((2, 3), 1.0), np.zeros(3)), (), (np.full(4, 2.0),))
    # moved by 0.5 in 6 entries and by -1 in one: sqrt(6 / 4 + 1) / sqrt(6 + 16)
    p1 = ((np.full((2, 3), 1.5), np.zeros(3)), (), (np.array([1.0, 2.0, 2.0, 2.0]),))
    want = np.sqrt(6 * 0.25 + 1.0) / np.sqrt(6 * 1.0 + 4 * 4.0)
    assert empirical.weight_movement(p0, p1) == pytest.approx(want, rel=1e-15)
    assert empirical.weight_movement(p0, p0) == 0.0
