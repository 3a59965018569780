"""Infinite-width kernels of fully connected networks on inputs of equal
norm, in any arithmetic (numpy float64 or mpmath at high precision).

The recursion of Jacot et al. 2018 / Arora et al. 2019 for
``Dense -> (act -> Dense) x depth`` in NTK parametrisation:
Sigma_1 = W^2 t + b^2, Theta_1 = Sigma_1, then per hidden layer
Sigma' = W^2 E[phi(u)phi(v)] + b^2, Theta' = Sigma' + W^2 Theta E[phi'(u)phi'(v)],
with (u, v) centred Gaussian of covariance [[q, c], [c, q]] (q is the same
for every input because all inputs have the same norm).

Dual activations in closed form (``CLOSED``):
* ReLU, the arc-cosine kernels of Cho & Saul 2009 (cos th = c/q):
  E phi phi = q (sin th + (pi - th) cos th) / 2pi, E phi' phi' = (pi - th)/2pi.
* leaky ReLU phi = relu(x) - s relu(-x) (abs is s = -1): by symmetry of
  the Gaussian, E phi phi = (1 + s^2) K(c) - 2 s K(-c) and
  E phi' phi' = (1 + s^2) D(c) + 2 s D(-c), with K, D the ReLU duals above.
* erf, Williams 1997: E phi phi = (2/pi) asin(2c/(1+2q)),
  E phi' phi' = (4/pi)/sqrt((1+2q)^2 - 4c^2).
* sin: E sin u sin v = e^-q sinh c, E cos u cos v = e^-q cosh c.

Every other activation (``QUADRATURE``: gelu, tanh, silu, softplus) goes
through its Hermite expansion (the dual-kernel series of Daniely, Frostig
& Singer 2016): with e_n = He_n / sqrt(n!) and z standard normal,
a_n = E[phi(sqrt(q) z) e_n(z)] gives E phi(u) phi(v) = sum_n a_n^2 rho^n and,
by Gaussian integration by parts, E phi'(u) phi'(v) = sum_n (n+1) a_{n+1}^2
rho^n / q, with rho = c/q. The a_n come from the trapezoid rule on
[-L, L] in exact fixed-point integer arithmetic (geometrically convergent
for these analytic integrands). Error bound of the truncated series: all
its terms are >= 0, so for |rho| <= 1 the missing part is at most
E[phi^2] - sum_{n<=N} a_n^2 (and likewise for phi'), with E[phi^2], E[phi'^2]
computed directly; the quadrature error is estimated as the change of every
a_n when the step is doubled (geometric convergence makes this an
over-estimate). Errors are carried through the layers with the Lipschitz
constants E[phi'^2] (of E phi phi in c, Price's theorem) and E[phi''^2]
(of E phi' phi'). ``fc_kernel_bound`` returns the kernel and this bound.

Architecture modifications (``ntkgap.nets.arch``), each keeping a function of
<x, x'> on equal-norm inputs:
* ``norm=layer``: stax.LayerNorm after each hidden Dense (before the
  activation); at infinite width it divides the kernels by q (and sets q = 1).
* ``residual=1``: a Dense stem, ``depth`` blocks z <- z + B Dense(act(z))
  (B = ``branch``; with ``norm=layer`` the block is pre-norm,
  z + B Dense(act(LN z))), then act (LN first with norm=layer) and the Dense
  readout. The branch's weights are independent of z, so
  Sigma <- Sigma + B^2 Sigma_branch and Theta <- Theta + B^2 Theta_branch.

This module is an independent reference for neural-tangents' kernel_fn
(tests compare them) and the high-precision source of hypercube eigenvalues.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np

from ntkgap.errors import UsageError

CLOSED = ("relu", "leaky_relu", "abs", "erf", "sin")
QUADRATURE = ("gelu", "tanh", "silu", "softplus")
ACTS = ("relu", "leaky_relu", "abs", "gelu", "erf", "tanh", "silu", "softplus", "sin")
# Hermite terms: at most this many; fewer once the tail bound is below the target
MAX_TERMS = 1600


class _Numpy:
    pi = np.pi
    sqrt = staticmethod(np.sqrt)
    acos = staticmethod(lambda x: np.arccos(np.clip(x, -1.0, 1.0)))
    asin = staticmethod(lambda x: np.arcsin(np.clip(x, -1.0, 1.0)))
    sin = staticmethod(np.sin)
    exp = staticmethod(np.exp)
    sinh = staticmethod(np.sinh)
    cosh = staticmethod(np.cosh)
    clip = staticmethod(lambda x: np.clip(x, -1.0, 1.0))


class _Mp:
    pi = property(lambda self: mpmath.mp.pi)
    sqrt = staticmethod(mpmath.sqrt)
    acos = staticmethod(mpmath.acos)
    asin = staticmethod(mpmath.asin)
    sin = staticmethod(mpmath.sin)
    exp = staticmethod(mpmath.exp)
    sinh = staticmethod(mpmath.sinh)
    cosh = staticmethod(mpmath.cosh)
    clip = staticmethod(lambda x: max(min(x, 1), -1))


# --- activations in mpmath: phi, phi', phi'' (for the quadrature duals) ---


def _sigmoid(x):
    return 1 / (1 + mpmath.exp(-x))


def _gauss(x):
    return mpmath.exp(-x * x / 2) / mpmath.sqrt(2 * mpmath.mp.pi)


def _ncdf(x):
    return mpmath.ncdf(x)


PHI = {
    # erf and sin also have closed forms: their quadrature duals exist to test
    # this route against them
    "erf": (
        mpmath.erf,
        lambda x: 2 / mpmath.sqrt(mpmath.mp.pi) * mpmath.exp(-x * x),
        lambda x: -4 * x / mpmath.sqrt(mpmath.mp.pi) * mpmath.exp(-x * x),
    ),
    "sin": (mpmath.sin, mpmath.cos, lambda x: -mpmath.sin(x)),
    # ReLU's kink makes its series and the trapezoid rule converge only
    # algebraically, and E phi''^2 is infinite: valid but loose bounds, for
    # depth 1 only (where no error enters E phi' phi')
    "relu": (
        lambda x: max(x, 0),
        lambda x: mpmath.mpf(1) if x > 0 else (mpmath.mpf(0.5) if x == 0 else mpmath.mpf(0)),
        None,
    ),
    "gelu": (
        lambda x: x * _ncdf(x),
        lambda x: _ncdf(x) + x * _gauss(x),
        lambda x: _gauss(x) * (2 - x * x),
    ),
    "tanh": (
        mpmath.tanh,
        lambda x: mpmath.sech(x) ** 2,
        lambda x: -2 * mpmath.tanh(x) * mpmath.sech(x) ** 2,
    ),
    "silu": (
        lambda x: x * _sigmoid(x),
        lambda x: _sigmoid(x) * (1 + x * (1 - _sigmoid(x))),
        lambda x: _sigmoid(x) * (1 - _sigmoid(x)) * (2 + x * (1 - 2 * _sigmoid(x))),
    ),
    "softplus": (
        lambda x: mpmath.log1p(mpmath.exp(x)) if x < 0 else x + mpmath.log1p(mpmath.exp(-x)),
        _sigmoid,
        lambda x: _sigmoid(x) * (1 - _sigmoid(x)),
    ),
}


@functools.lru_cache(maxsize=256)
def hermite_dual(act: str, q: str, digits: int, tol: str):
    """Hermite coefficients of an activation, with the moments that bound their tails.

    Terms are added until both tails are below ``tol`` or MAX_TERMS.

    Args:
        act: an activation with a quadrature dual (a key of PHI).
        q: the pre-activation variance, a decimal string (so the cache key
            is exact).
        digits: significant digits of the computation.
        tol: the target of the truncation tails, a decimal string.

    Returns:
        dict with ``pp`` (a_n^2, n = 0..N), ``dd`` ((n+1) a_{n+1}^2 / q,
        n = 0..N-1), the direct moments ``e_pp`` = E phi^2, ``e_dd`` =
        E phi'^2, ``e_2`` = E phi''^2, the tails ``tail_pp``, ``tail_dd`` (E
        minus the truncated sums, bounds of the truncation error for
        |rho| <= 1) and ``quad`` (the quadrature error estimate of the sums,
        by step-doubling).

    References:
        Daniely, Frostig & Singer, "Toward Deeper Understanding of Neural
        Networks: The Power of Initialization and a Dual View on
        Expressivity", 2016.
    """
    if act not in PHI:
        raise UsageError(f"act={act}: no quadrature dual (allowed: {', '.join(PHI)})")
    with mpmath.workdps(digits + 20):
        qm = mpmath.mpf(q)
        L, m, z, w = _trapezoid_rule(digits)
        phis, e_pp, e_dd, e_2 = _direct_moments(PHI[act], mpmath.sqrt(qm), z, w)
        a, a2h, sum_pp, sum_dd = _hermite_coefficients(
            z, w, phis, m, L, digits, qm, (e_pp, e_dd), mpmath.mpf(tol)
        )
        N = len(a) - 1
        pp = [ai * ai for ai in a]
        dd = [(i + 1) * a[i + 1] ** 2 / qm for i in range(N)]
        delta = max(abs(x - y) for x, y in zip(a, a2h))
        # |a_n^2 - (a_n + e)^2| <= 2 |a_n| delta + delta^2 for |e| <= delta
        quad = mpmath.fsum(2 * abs(ai) * delta + delta**2 for ai in a)
        quad_d = mpmath.fsum(i * (2 * abs(a[i]) * delta + delta**2) for i in range(1, N + 1)) / qm
        return {
            "pp": pp,
            "dd": dd,
            "e_pp": e_pp,
            "e_dd": e_dd,
            "e_2": e_2,
            "tail_pp": max(e_pp - sum_pp, mpmath.mpf(0)) + quad,
            "tail_dd": max(e_dd - sum_dd, mpmath.mpf(0)) + quad_d,
            "terms": N,
        }


def _trapezoid_rule(digits: int):
    """The trapezoid rule of the Gaussian expectations, at the working precision.

    The integrands are ~ e^{-z^2/4} |phi| (Hermite functions are O(1));
    beyond L they are below 10^-(digits + 10). The step resolves e_n up to
    n ~ (pi/step)^2 / 2 ~ 5000 > MAX_TERMS (beyond, the trapezoid rule
    aliases them), and step 2h up to ~1260.

    Args:
        digits: significant digits of the computation.

    Returns:
        (L, m, z, w): the cut-off, the nodes per side, the 2m + 1 nodes z in
        [-L, L] and their weights (step x the standard normal density).
    """
    L = math.sqrt(4 * math.log(10) * (digits + 10)) + 4
    step = mpmath.mpf(1) / 32
    m = int(math.ceil(L / step))
    z = [step * i for i in range(-m, m + 1)]
    w = [step * _gauss(zi) for zi in z]
    return L, m, z, w


def _direct_moments(phi, s, z, w):
    """phi(s z) at the nodes and the moments E phi^2, E phi'^2, E phi''^2.

    Args:
        phi: (phi, phi', phi'') of the activation (phi'' may be None: an
            infinite E phi''^2).
        s: the pre-activation standard deviation.
        z, w: the nodes and weights of :func:`_trapezoid_rule`.

    Returns:
        (phis, e_pp, e_dd, e_2).
    """
    f0, f1, f2 = phi
    phis = [f0(s * zi) for zi in z]
    e_pp = mpmath.fsum(wi * p * p for wi, p in zip(w, phis))
    e_dd = mpmath.fsum(wi * f1(s * zi) ** 2 for wi, zi in zip(w, z))
    e_2 = mpmath.inf if f2 is None else mpmath.fsum(wi * f2(s * zi) ** 2 for wi, zi in zip(w, z))
    return phis, e_pp, e_dd, e_2


def _hermite_coefficients(z, w, phis, m, L, digits, qm, moments, tol_m):
    """The normalised Hermite coefficients a_n = E phi(s z) He_n(z) / sqrt(n!)
    by the three-term recursion, until both tails are below tol.

    Exact fixed-point arithmetic on Python integers (numpy object arrays):
    values are scaled by 2^bits; the recursion's rounding (~2^-bits x the
    growth of e_n, < e^{L^2/4}) stays far below tol.

    Args:
        z, w: the nodes and weights of :func:`_trapezoid_rule`; m: nodes per side.
        phis: phi(s z) at the nodes.
        L: the cut-off of the nodes.
        digits: significant digits of the computation.
        qm: the pre-activation variance.
        moments: (E phi^2, E phi'^2).
        tol_m: the target of the truncation tails.

    Returns:
        (a, a2h, sum_pp, sum_dd): the coefficients a_0..a_N, the same by the
        step-2h rule, sum a_n^2 and sum n a_n^2 / q.
    """
    e_pp, e_dd = moments
    bits = int((digits + 30) * 3.33 + L * L / 4 / math.log(2)) + 64
    one = 1 << bits
    Z = np.array([int(mpmath.nint(zi * one)) for zi in z], dtype=object)
    F = np.array([int(mpmath.nint(wi * p * one)) for wi, p in zip(w, phis)], dtype=object)
    even = np.zeros(len(z), dtype=bool)
    even[m % 2 :: 2] = True  # the nodes of the step-2h rule, z = 0 among them
    Fe = F[even] * 2
    e_prev = np.full(len(z), one, dtype=object)
    e_cur = Z.copy()
    a, a2h = [], []

    def coef(e):
        return (
            mpmath.mpf(int(np.sum(F * e))) / one / one,
            mpmath.mpf(int(np.sum(Fe * e[even]))) / one / one,
        )

    for e in (e_prev, e_cur):
        c, c2 = coef(e)
        a.append(c)
        a2h.append(c2)
    n = 1
    sum_pp = a[0] ** 2 + a[1] ** 2
    sum_dd = a[1] ** 2 / qm
    while n + 1 <= MAX_TERMS:
        sq = int(mpmath.nint(mpmath.sqrt(n) * one))
        rs = int(mpmath.nint(one / mpmath.sqrt(n + 1)))
        e_next = (((Z * e_cur) >> bits) - ((e_prev * sq) >> bits)) * rs >> bits
        e_prev, e_cur = e_cur, e_next
        n += 1
        c, c2 = coef(e_cur)
        a.append(c)
        a2h.append(c2)
        sum_pp += c * c
        sum_dd += n * c * c / qm
        if e_pp - sum_pp < tol_m and e_dd - sum_dd < tol_m and n >= 8:
            break
    return a, a2h, sum_pp, sum_dd


def _series(coeffs, rho):
    acc = 0
    for c in reversed(coeffs):
        acc = acc * rho + c
    return acc


class _Dual:
    """E phi phi, E phi' phi' and E phi^2 of one activation at variance q,
    and (quadrature duals) the error bounds described in the module docstring."""

    def __init__(self, act, q, m, arithmetic, slope, digits, quadrature):
        self.act, self.q, self.m, self.slope = act, q, m, slope
        self.tail_pp = self.tail_dd = 0
        self.lip_pp = self.lip_dd = 0
        self.quadrature = quadrature or act in QUADRATURE
        if self.quadrature:
            tol = mpmath.mpf(10) ** (-digits)
            qm = mpmath.mpf(q) if arithmetic == "mpmath" else mpmath.mpf(float(q))
            key = mpmath.nstr(qm, digits + 10)
            h = hermite_dual(act, key, digits, mpmath.nstr(tol, 5))
            self.h = h
            if arithmetic == "mpmath":
                self.pp, self.dd = h["pp"], h["dd"]
                self.e_qq = h["e_pp"]
            else:
                self.pp = np.array([float(x) for x in h["pp"]])
                self.dd = np.array([float(x) for x in h["dd"]])
                self.e_qq = float(h["e_pp"])
            self.tail_pp, self.tail_dd = h["tail_pp"], h["tail_dd"]
            self.lip_pp, self.lip_dd = h["e_dd"], h["e_2"]

    def __call__(self, c):
        m, q, act = self.m, self.q, self.act
        if self.quadrature:
            rho = m.clip(c / q)
            if isinstance(self.pp, np.ndarray):
                return (
                    np.polynomial.polynomial.polyval(rho, self.pp),
                    np.polynomial.polynomial.polyval(rho, self.dd),
                    self.e_qq,
                )
            return _series(self.pp, rho), _series(self.dd, rho), self.e_qq
        if act in ("relu", "leaky_relu", "abs"):
            s = {"relu": 0, "abs": -1}.get(act, self.slope)
            rho = m.clip(c / q)
            th = m.acos(rho)
            root = m.sqrt(1 - rho * rho)
            k_pos = q * (root + (m.pi - th) * rho) / (2 * m.pi)
            k_neg = q * (root - th * rho) / (2 * m.pi)
            d_pos = (m.pi - th) / (2 * m.pi)
            d_neg = th / (2 * m.pi)
            if s == 0:
                return k_pos, d_pos, q / 2
            return (
                (1 + s * s) * k_pos - 2 * s * k_neg,
                (1 + s * s) * d_pos + 2 * s * d_neg,
                (1 + s * s) * q / 2,
            )
        if act == "erf":
            den = 1 + 2 * q
            return (
                2 / m.pi * m.asin(m.clip(2 * c / den)),
                4 / m.pi / m.sqrt(den * den - 4 * c * c),
                2 / m.pi * m.asin(2 * q / den),
            )
        if act == "sin":
            eq = m.exp(-q)
            return eq * m.sinh(c), eq * m.cosh(c), eq * m.sinh(q)
        raise UsageError(f"act={act} is not allowed (allowed: {', '.join(ACTS)})")


class _FcLayers:
    """The fc recursion on (Sigma, q, Theta) with their error bounds: one
    layer (activation then Dense), the optional layer norm, and the stack
    (plain, or residual branches of weight B2).

    A state is (c, q, theta, ec, et): Sigma at the pair, Sigma at one input,
    Theta at the pair, and the error bounds on c and theta (mpmath numbers
    even in numpy arithmetic).
    """

    def __init__(self, act, m, arithmetic, slope, digits, quadrature, W2, b2, norm):
        """Args: as ``fc_kernel_bound``; ``m`` its arithmetic's functions,
        ``W2``, ``b2`` the squared weight and bias scales."""
        self.act, self.m, self.arithmetic = act, m, arithmetic
        self.slope, self.digits, self.quadrature = slope, digits, quadrature
        self.W2, self.b2, self.norm = W2, b2, norm

    def dense(self, c, q, theta, ec, et):
        """act -> Dense: Sigma', Theta', q' and the error bounds on the first two."""
        W2, b2, mp_arith = self.W2, self.b2, self.arithmetic == "mpmath"
        args = (self.m, self.arithmetic, self.slope, self.digits, self.quadrature)
        dual = _Dual(self.act, q, *args)
        e_pp, e_dd, e_qq = dual(c)
        c_new = W2 * e_pp + b2
        th_new = c_new + W2 * theta * e_dd
        ec_new = W2 * (dual.tail_pp + dual.lip_pp * ec)
        if not mp_arith:
            th_max = abs(float(np.max(np.abs(theta))))
        else:
            # and the rounding of this layer's arithmetic
            th_max = abs(theta)
            ulp = mpmath.mpf(10) ** (3 - mpmath.mp.dps)
            ec_new += ulp * (abs(c_new) + 1)
        d_dd = dual.tail_dd + (dual.lip_dd * ec if ec else 0)
        et_new = ec_new + W2 * (et * dual.lip_pp + th_max * d_dd)
        if mp_arith:
            et_new += ulp * (abs(th_new) + 1)
        return c_new, W2 * e_qq + b2, th_new, ec_new, et_new

    def normed(self, c, q, theta, ec, et):
        """Layer norm (``norm="layer"``): everything divided by q; else unchanged."""
        if self.norm != "layer":
            return c, q, theta, ec, et
        one = 1 if self.arithmetic == "numpy" else mpmath.mpf(1)
        return c / q, one, theta / q, ec / q, et / q

    def run(self, state, depth, residual, B2):
        """The whole stack from the input's state to the readout's.

        Args:
            state: (c, q, theta, ec, et) at the input.
            depth: hidden layers.
            residual: whether each hidden layer is a residual branch.
            B2: the branches' squared weight.

        Returns:
            the state at the readout.
        """
        if not residual:
            state = self.normed(*state)
            for i in range(depth):
                state = self.dense(*state)
                if i < depth - 1:
                    state = self.normed(*state)
            return state
        for _ in range(depth):
            branch = self.dense(*self.normed(*state))
            state = tuple(x + B2 * y for x, y in zip(state, branch))
        return self.dense(*self.normed(*state))


def fc_kernel_bound(
    t,
    *,
    depth: int,
    act: str,
    W_std: float,
    b_std: float,
    t0=1.0,
    kind: str = "ntk",
    arithmetic: str = "numpy",
    slope: float = 0.01,
    residual: int = 0,
    branch: float = 1.0,
    norm: str = "none",
    digits: int = 30,
    quadrature: bool = False,
):
    """NTK or NNGP of an ``fc`` arch at <x,x'>/n0 = t when every input has
    <x,x>/n0 = t0 (t0 = 1 on the hypercube, 1/2 on the circle embedding),
    and a bound on its absolute error (0 for closed-form activations, up to
    rounding; for quadrature activations the series/quadrature bound of the
    module docstring, targeting 10^-digits per layer).

    Args:
        t: a scalar (mpmath) or array (numpy) of normalised inner products.
        depth, act, W_std, b_std, slope, residual, branch, norm: the arch
            spec's fields (see ``ntkgap.nets.arch``).
        kind: "ntk" or "nngp".
        arithmetic: "numpy" (float64) or "mpmath" (current mpmath precision).
        digits: the per-layer error target of the quadrature duals.
        quadrature: use the Hermite series even where a closed form exists
            (erf, sin; for tests of the quadrature route).
    Returns:
        (kernel, error bound).
    References:
        Jacot et al. 2018; Arora et al. 2019; Cho & Saul 2009; Williams 1997;
        Daniely, Frostig & Singer 2016 (dual activations, Hermite series).
    """
    if act not in ACTS:
        raise UsageError(f"arch act={act} is not allowed (allowed: {', '.join(ACTS)})")
    m = _Mp() if arithmetic == "mpmath" else _Numpy()
    if arithmetic == "mpmath":
        W2, b2 = mpmath.mpf(W_std) ** 2, mpmath.mpf(b_std) ** 2
        t, t0 = mpmath.mpf(t), mpmath.mpf(t0)
        B2 = mpmath.mpf(branch) ** 2
    else:
        W2, b2, B2 = W_std**2, b_std**2, branch**2
        t = np.asarray(t, dtype=np.float64)
    c = W2 * t + b2
    state = (c, W2 * t0 + b2, c, mpmath.mpf(0), mpmath.mpf(0))
    layers = _FcLayers(act, m, arithmetic, slope, digits, quadrature, W2, b2, norm)
    c, _, theta, ec, et = layers.run(state, depth, residual, B2)
    if kind == "ntk":
        return theta, et
    return c, ec


def fc_kernel(t, **kwargs):
    """The kernel of ``fc_kernel_bound``, without the error bound.

    Args:
        t: a scalar (mpmath) or array (numpy) of normalised inner products.
        **kwargs: the keyword arguments of ``fc_kernel_bound``.

    Returns:
        the NTK or NNGP value(s), shaped like ``t``.

    References:
        Jacot, Gabriel & Hongler, "Neural Tangent Kernel", 2018; Cho & Saul,
        "Kernel Methods for Deep Learning", 2009.
    """
    return fc_kernel_bound(t, **kwargs)[0]


def spec_kwargs(spec) -> dict:
    """``fc_kernel``'s keyword arguments for a parsed ``fc`` arch spec.

    Args:
        spec: the parsed spec of an ``fc`` arch (``ntkgap.nets.arch``).

    Returns:
        dict with keys depth, act, W_std, b_std, slope, residual, branch, norm.
    """
    keys = ("depth", "act", "W_std", "b_std", "slope", "residual", "branch", "norm")
    return {k: spec[k] for k in keys}
