"""Every activation and fc modification against independent references:
neural-tangents' kernel_fn against the dual kernels of ntkgap.kernels.dual (closed
forms, or the Hermite-series quadrature with its error bound), the
quadrature dual against closed forms, exact eigenvalues against eigh of
full Grams (hypercube: all 2^d points; circle: an equispaced grid), and
analytic kernels against Monte Carlo empirical NTKs of wide networks."""

import jax
import mpmath
import numpy as np
import pytest
from conftest import NT_KERNEL_RTOL

from ntkgap._infra.compat import nt
from ntkgap.kernels import dual, eigen
from ntkgap.kernels import gram as kernels
from ntkgap.nets.arch import ACTS, parse_arch
from ntkgap.targets.domains import Circle, Hypercube

MODS = [
    "fc:depth=2,act=leaky_relu,slope=0.3,b_std=0.0",
    "fc:depth=8,act=relu,b_std=1.0",
    "fc:depth=8,act=erf,b_std=0.0",
    "fc:depth=3,act=relu,residual=1,branch=0.5",
    "fc:depth=2,act=erf,norm=layer,b_std=1.0",
    "fc:depth=2,act=tanh,residual=1,norm=layer,branch=0.7",
    "fc:depth=2,act=gelu,residual=1,W_std=1.3",
]
SPECS = [f"fc:depth=2,act={a},b_std=0.3" for a in ACTS] + MODS


def _tol(arch):
    return NT_KERNEL_RTOL[arch.spec["act"]]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("kind", ["ntk", "nngp"])
def test_dual_kernel_equals_neural_tangents(spec, kind):
    a = parse_arch(spec)
    kw = dual.spec_kwargs(a.spec)
    x = Hypercube(10).sample(12, seed=3).astype(float)
    got = np.asarray(a.kernel_fn(x, x, kind))
    np.testing.assert_allclose(got, dual.fc_kernel(x @ x.T / 10, kind=kind, **kw), rtol=_tol(a))
    X = Circle().features(Circle().sample(10, seed=4))
    got = np.asarray(a.kernel_fn(X, X, kind))
    np.testing.assert_allclose(
        got, dual.fc_kernel(X @ X.T / 2, t0=0.5, kind=kind, **kw), rtol=_tol(a)
    )


def test_residual_with_zero_branch_is_depth_one():
    # branch = 0 switches the blocks off: stem Dense, act, readout
    x = Hypercube(9).sample(10, seed=1).astype(float)
    for act in ("relu", "tanh"):
        a = parse_arch(f"fc:depth=4,act={act},residual=1,branch=0.0")
        b = parse_arch(f"fc:depth=1,act={act}")
        np.testing.assert_allclose(
            np.asarray(a.kernel_fn(x, x, "ntk")), np.asarray(b.kernel_fn(x, x, "ntk")), rtol=1e-12
        )


def test_tanh_quadrature_dual_equals_fine_elementwise_numerical():
    # stax's numerical tanh kernel converges geometrically in its number of
    # Gauss-Hermite points (4e-4 at 25, 1e-9 at 96, here q = 1.53); at 200
    # the Hermite-series dual must agree to ~1e-11, far below QUAD_DEG's
    # tolerance above
    from ntkgap._infra.compat import stax

    a = parse_arch("fc:depth=1,act=tanh,b_std=0.3,W_std=1.2")
    layers = stax.serial(
        stax.Dense(1, W_std=1.2, b_std=0.3),
        stax.ElementwiseNumerical(jax.numpy.tanh, 200),
        stax.Dense(1, W_std=1.2, b_std=0.3),
    )
    x = Hypercube(10).sample(5, seed=2).astype(float)
    ref = np.asarray(layers[2](x, x, "ntk"))
    mine = dual.fc_kernel(x @ x.T / 10, **dual.spec_kwargs(a.spec))
    np.testing.assert_allclose(mine, ref, rtol=2e-11)


@pytest.mark.parametrize("act,depth", [("erf", 3), ("sin", 2), ("relu", 1)])
@pytest.mark.parametrize("kind", ["ntk", "nngp"])
def test_quadrature_dual_is_within_its_bound_of_the_closed_form(act, depth, kind):
    # the Hermite-series route, forced where a closed form exists: the true
    # error must lie within the reported bound, and for smooth activations the
    # bound must be small (ReLU's kink makes its series and quadrature
    # converge only algebraically: a loose but still valid bound)
    kw = dict(depth=depth, act=act, W_std=1.1, b_std=0.2, kind=kind, arithmetic="mpmath")
    with mpmath.workdps(40):
        for t in ("-1", "-0.3", "0.2", "0.9", "1"):
            t = mpmath.mpf(t)
            exact = dual.fc_kernel(t, **kw)
            approx, bound = dual.fc_kernel_bound(t, quadrature=True, digits=28, **kw)
            assert abs(approx - exact) <= bound
            if act != "relu":
                assert bound < 1e-25
            else:  # the derivative series' tail decays like N^-1/2 (measured 0.7)
                assert bound < (1.0 if kind == "ntk" else 0.01)


@pytest.mark.parametrize("spec", SPECS)
def test_hypercube_eigenvalues_equal_eigh_of_full_gram(spec):
    a, d = parse_arch(spec), 10
    dom = Hypercube(d)
    X = a.inputs(dom, dom.enumerate())
    K = kernels.gram(a, X)  # neural-tangents' kernel_fn, by table look-up
    ev = np.sort(np.linalg.eigvalsh(K) / 2**d)[::-1]
    es = eigen.eigensystem(a, dom, d)
    mine = np.sort(np.repeat(es.eigenvalue, es.multiplicity.astype(int)))[::-1]
    # |d lambda| <= ||dK||_op / 2^d <= max |dK_ij| (row sums over 2^d entries)
    # with dK nt's error; eigh adds ~1e-15 x the largest eigenvalue
    atol = _tol(a) * K[0, 0] + 1e-14 * ev[0]
    np.testing.assert_allclose(mine, ev, rtol=1e-9, atol=atol)
    assert np.isclose(es.trace, K[0, 0], rtol=_tol(a))
    if a.spec["act"] in dual.QUADRATURE:
        # every eigenvalue is known to >= 8 digits
        assert es.error is not None and np.all(es.error < 1e-8 * es.eigenvalue.min())
    else:
        assert es.error is None


@pytest.mark.parametrize("act", ["relu", "gelu", "tanh"])
def test_hypercube_eigenvalues_equal_eigh_of_the_dual_gram(act):
    # a tighter route for the quadrature activations: eigh of the Gram of the
    # float64 dual kernel (no nt quadrature error), so agreement to ~1e-9
    # relative on every eigenvalue above eigh's ~1e-15 x largest floor
    a, d = parse_arch(f"fc:depth=3,act={act},b_std=0.1"), 9
    dom = Hypercube(d)
    X = dom.enumerate().astype(float)
    K = dual.fc_kernel(X @ X.T / d, **dual.spec_kwargs(a.spec))
    ev = np.sort(np.linalg.eigvalsh(K) / 2**d)[::-1]
    es = eigen.eigensystem(a, dom, d)
    mine = np.sort(np.repeat(es.eigenvalue, es.multiplicity.astype(int)))[::-1]
    big = ev > 1e-11 * ev[0]
    np.testing.assert_allclose(mine[big], ev[big], rtol=1e-8)


@pytest.mark.parametrize("spec", SPECS)
def test_circle_eigenvalues_match_eigh_of_equispaced_gram(spec):
    # on N equispaced angles the Gram is circulant: its eigenvalues / N are the
    # aliased sums sum_m lambda_{|k + m N|} of the operator's eigenvalues
    a, N = parse_arch(spec), 128
    # aliases: ReLU-like eigenvalues decay like k^-2, smooth activations'
    # geometrically (lambda_{4N} is below rounding)
    M = 32 if a.spec["act"] in ("relu", "leaky_relu", "abs") else 4
    es = eigen.circle(a, M * N)
    lam = es.eigenvalue
    X = Circle().features(Circle().grid(N))
    if a.spec["act"] in ("tanh", "silu", "softplus"):
        # stax.ElementwiseNumerical costs QUAD_DEG^2 per entry (minutes here):
        # the Gram of the float64 dual kernel, which agrees with it (tested above)
        K = dual.fc_kernel(X @ X.T / 2, t0=0.5, **dual.spec_kwargs(a.spec))
    else:
        K = kernels.gram(a, X)
    ev = np.sort(np.linalg.eigvalsh(K) / N)[::-1]
    alias = np.array(
        [
            sum(lam[abs(k + m * N)] for m in range(-M + 1, M) if abs(k + m * N) <= M * N)
            for k in range(N)
        ]
    )
    want = np.sort(alias)[::-1]
    # aliases beyond M N are left out (~k^2 / (M N^2) relative for the slowest,
    # k^-2, decay: ReLU-like); nt's kernel error moves each eigenvalue by at
    # most max |dK|
    q = N // 4
    atol = _tol(a) * K[0, 0] + 1e-14 * ev[0]
    np.testing.assert_allclose(ev[:q], want[:q], rtol=3e-3, atol=atol)


def _empirical(a, x, width, seeds):
    init_fn, apply_fn, _ = a.stax(width)
    efn = jax.jit(nt.empirical_ntk_fn(apply_fn, trace_axes=(-1,), vmap_axes=0))
    out = []
    for s in seeds:
        _, params = init_fn(jax.random.PRNGKey(s), x.shape)
        out.append(np.asarray(efn(x, None, params)))
    return np.mean(out, 0)


@pytest.mark.parametrize(
    "spec",
    [
        "fc:depth=2,act=relu",
        "fc:depth=2,act=erf",
        "fc:depth=2,act=gelu",
        "fc:depth=2,act=tanh",
        "fc:depth=2,act=silu,b_std=1.0",
        "fc:depth=2,act=sin",
        "fc:depth=2,act=relu,residual=1,branch=0.5",
        "fc:depth=2,act=erf,norm=layer",
    ],
)
def test_analytic_ntk_matches_monte_carlo_finite_width(spec):
    # A width-n network's empirical NTK fluctuates around the analytic one by
    # O(1/sqrt(n)) relative (and is biased by O(1/n)); averaged over S inits,
    # ~1/sqrt(n S). Width 2048, S = 4: ~1.1e-2 x an O(1) constant; tolerance
    # 6/sqrt(n S) = 6.6e-2, and the analytic NTK of another activation (a
    # different kernel) must be further away than that.
    a = parse_arch(spec)
    x = Hypercube(8).sample(6, seed=0).astype(float)
    width, seeds = 2048, range(4)
    exact = kernels.gram(a, x)
    mc = _empirical(a, x, width, seeds)
    tol = 6 / np.sqrt(width * len(seeds))
    err = np.linalg.norm(mc - exact) / np.linalg.norm(exact)
    assert err < tol
    # the analytic NTK of another activation is a different kernel: the test
    # can tell them apart at this width
    other = "relu" if a.spec["act"] != "relu" else "erf"
    b = parse_arch(spec.replace(f"act={a.spec['act']}", f"act={other}"))
    wrong = kernels.gram(b, x)
    assert np.linalg.norm(mc - wrong) / np.linalg.norm(wrong) > tol


def test_degree_profile_against_eigh_and_the_bias_free_relu_zeros():
    # normalised eigenvalues from eigh of the full Gram (an independent route);
    # the bias-free two-layer ReLU NTK has mu_3 = 0 (Bietti & Mairal 2019)
    d = 8
    for spec in ("fc:depth=1,act=erf,b_std=0.1", "fc:depth=1,act=relu,b_std=0.0"):
        a = parse_arch(spec)
        prof = eigen.degree_profile(a, d, 6)
        X = Hypercube(d).enumerate().astype(float)
        K = dual.fc_kernel(X @ X.T / d, **dual.spec_kwargs(a.spec))
        ev = np.sort(np.linalg.eigvalsh(K) / 2**d)[::-1] / K[0, 0]
        for v in prof["normalised"]:
            assert np.min(np.abs(ev - v)) <= 1e-12 + 1e-9 * abs(v)
        assert set(prof["odd_even"]) == {1, 3, 5}
    assert abs(prof["odd_even"][3]) < 1e-12 and prof["min_odd_even"] < 1e-12
    with pytest.raises(Exception, match="fc arch"):
        eigen.degree_profile(parse_arch("tree:arity=2,L=2"), 8)
