"""Exact eigenvalues of infinite-width kernels under the uniform measure.

* Circle, rotation-invariant kernels K(x, x') = k(cos(theta - theta')):
  the Fourier modes are eigenfunctions and lambda_k = (1/2pi) int k(cos t)
  e^{-ikt} dt, multiplicity 1 (k = 0) or 2 (cos and sin). Computed by an
  FFT of the kernel row on N equispaced angles; aliasing folds lambda_{k+mN}
  onto lambda_k, so N is doubled until the change at every k <= kmax is
  below ``rtol`` relative to lambda_k or below 1e-15 x the trace (float64's
  resolution), reported as ``error``.
* Hypercube, dot-product kernels K = h(<x,y>/d) (fc archs): the characters
  chi_S are eigenfunctions with eigenvalue
  mu_k = 2^-d sum_j h(1 - 2j/d) sum_i (-1)^i C(k,i) C(d-k, j-i), |S| = k,
  multiplicity C(d, k) (e.g. Yang & Salman 2019, arXiv 1907.10599). The
  sum cancels catastrophically (mu_k ~ d^-k while its terms are O(1)), so
  the Krawtchouk values are exact integers and the sum runs in mpmath at
  30 + k log10(d) digits, with h from ``ntkgap.kernels.dual``: a closed form
  (relu, leaky_relu, abs, erf, sin) or, for the other activations, the
  Hermite-series dual whose error bound e (absolute, on h) bounds the error
  of every mu_k (|d mu_k| <= E_z |d h| <= e); it is reported as ``error``.
* Hypercube, ``tree`` archs: the kernel is not a dot-product kernel, but it
  depends on x and y only through x*y (each locally connected unit sees
  <x_p, y_p> and |x_p|^2 = arity), i.e. it is translation-invariant on the
  group {-1,+1}^s of its s = arity^L leaves. Characters are again
  eigenfunctions, mu_S = 2^-s sum_z K(1, z) chi_S(z), and mu_S depends only
  on how S sits in the tree: ``hypercube_tree`` computes them per shape by
  the recursion of ``ntkgap.kernels.tree_eigen`` (whole spectrum while it fits,
  e.g. arity 2 to L = 5, arity 3 to L = 3; beyond, the shapes of low degree,
  with ``capped_at`` and ``tail_trace`` saying so).
  ``hypercube_tree_fwht`` is the reference: the FWHT of the kernel's first
  row (neural-tangents' kernel_fn), exact for s <= 20.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np

from ntkgap.errors import UsageError
from ntkgap.kernels import dual, tree_eigen
from ntkgap.spectral import walsh
from ntkgap.targets.domains import Circle, Hypercube

MAX_TREE_BITS = 20


@dataclass
class Eigensystem:
    """Eigenvalues in blocks: block i has eigenvalue ``eigenvalue[i]``,
    ``multiplicity[i]`` eigenfunctions and label ``k[i]`` (frequency,
    degree, or for tree kernels the degree of the subsets in the block).
    ``trace`` = E_x K(x, x) = sum over all blocks (also those not listed,
    so trace - sum(m lambda) is the mass of the blocks beyond kmax).
    ``subsets`` (FWHT tree route) lists each block's subsets as bit masks.
    ``capped_at`` (tree kernels) is None when every block is listed, else
    the degree up to which every block is listed (the rest is
    ``tail_trace``)."""

    k: np.ndarray
    eigenvalue: np.ndarray
    multiplicity: np.ndarray
    trace: float
    error: np.ndarray | None = None
    subsets: list | None = None
    capped_at: int | None = None

    @property
    def tail_trace(self) -> float:
        return max(self.trace - float(np.dot(self.multiplicity, self.eigenvalue)), 0.0)


def eigensystem(arch, domain, kmax: int, *, rtol: float = 1e-7) -> Eigensystem:
    """Exact eigenvalues of ``arch``'s infinite-width kernel on ``domain``.

    Dispatches to ``circle``, ``hypercube_tree`` or ``hypercube_fc``.

    Args:
        arch: a parsed architecture (``ntkgap.nets.arch``).
        domain: the circle or a hypercube (``ntkgap.targets.domains``).
        kmax: the highest frequency or degree listed.
        rtol: relative tolerance of the circle's FFT refinement.

    Returns:
        Eigensystem: eigenvalue blocks with labels ``k``, multiplicities,
        ``trace`` and, where approximate, ``error``.
    """
    arch.check_domain(domain)
    if isinstance(domain, Circle):
        return circle(arch, kmax, rtol=rtol)
    if arch.name == "tree":
        return hypercube_tree(arch, domain, kmax)
    return hypercube_fc(arch, domain.d, kmax)


def _circle_row(arch, n):
    # import-cost: gram loads JAX; eigen stays numpy-only on import
    from ntkgap.kernels import gram as kernels

    t = 2 * np.pi * np.arange(n) / n
    if arch.spec["act"] in dual.QUADRATURE and arch.spec["act"] != "gelu":
        # stax's Gauss-Hermite kernel (O(QUAD_DEG^2) per entry) is both slow
        # and less accurate than the Hermite-series dual (~1e-16 relative)
        kw = dual.spec_kwargs(arch.spec)
        return dual.fc_kernel(np.cos(t) / 2, t0=0.5, **kw)
    x = Circle().features(t)
    return kernels.gram(arch, x[:1], x, block=65536)[0]


def circle(arch, kmax: int, *, rtol: float = 1e-7, max_n: int = 2**22) -> Eigensystem:
    """Eigenvalues of a rotation-invariant kernel on the circle, by FFT.

    lambda_k = (1/2pi) int k(cos t) e^{-ikt} dt from an FFT of the kernel row
    on N equispaced angles, N doubled until the change at every k <= kmax is
    below ``rtol`` relative to lambda_k (or 1e-15 x the trace).

    Args:
        arch: an ``fc`` arch with input=embed.
        kmax: the highest frequency listed.
        rtol: relative tolerance between successive N.
        max_n: the largest N tried.

    Returns:
        Eigensystem with k = 0..kmax (length kmax + 1), multiplicity 1 at k = 0
        and 2 otherwise, ``trace`` = K(x, x) and ``error`` per frequency.
    """
    if arch.name != "fc" or arch.spec["input"] != "embed":
        raise UsageError(
            f"arch '{arch.spec}': circle eigenvalues need a rotation-invariant "
            "kernel (fc with input=embed)"
        )
    n = int(2 ** math.ceil(math.log2(max(64 * (kmax + 1), 4096))))
    row = _circle_row(arch, n)
    lam = np.fft.rfft(row).real[: kmax + 1] / n
    while True:
        n2 = 2 * n
        row2 = _circle_row(arch, n2)
        lam2 = np.fft.rfft(row2).real[: kmax + 1] / n2
        err = np.abs(lam2 - lam)
        # below ~1e-15 x trace the float64 row cannot resolve an eigenvalue:
        # geometrically decaying ones (smooth activations) stop there
        floor = 1e-15 * abs(row2[0])
        ok = np.all(err <= np.maximum(rtol * np.abs(lam2), floor)) or n2 >= max_n
        lam, n, row = lam2, n2, row2
        if ok:
            break
    mult = np.where(np.arange(kmax + 1) == 0, 1, 2).astype(np.float64)
    if arch.spec["act"] in dual.QUADRATURE and arch.spec["act"] != "gelu":
        # the Hermite-series dual's bound (float64 evaluation adds ~1e-16 x trace)
        _, bound = dual.fc_kernel_bound(0.5, t0=0.5, **dual.spec_kwargs(arch.spec))
        err = err + float(bound) + 4e-16 * abs(row[0])
    return Eigensystem(np.arange(kmax + 1), lam, mult, float(row[0]), error=err)


def krawtchouk_rows(d: int, kmax: int) -> list[list[int]]:
    """Exact Krawtchouk rows N_k(j) = sum_{|z| = j} chi_S(z) for |S| = k.

    They are the coefficients of (1 - y)^k (1 + y)^(d - k), obtained from row
    k-1 by multiplying by (1 - y) and dividing exactly by (1 + y).

    Args:
        d: the hypercube dimension.
        kmax: the highest degree k.

    Returns:
        list of kmax + 1 rows (k = 0..kmax), each a list of d + 1 Python ints
        (j = 0..d).
    """
    row = [math.comb(d, j) for j in range(d + 1)]
    rows = [row]
    for _ in range(kmax):
        prod = [row[0]] + [row[j] - row[j - 1] for j in range(1, d + 1)] + [-row[d]]
        quo = [0] * (d + 1)
        carry = 0
        for j in range(d + 1):  # synthetic division by (1 + y)
            quo[j] = prod[j] - carry
            carry = quo[j]
        row = quo
        rows.append(row)
    return rows


def hypercube_fc(arch, d: int, kmax: int) -> Eigensystem:
    """Eigenvalues of a dot-product (``fc``) kernel on {-1,+1}^d, per degree.

    mu_k = 2^-d sum_j h(1 - 2j/d) N_k(j), summed in mpmath at 30 + k log10(d)
    digits because the sum cancels catastrophically.

    Args:
        arch: a parsed ``fc`` arch.
        d: the hypercube dimension.
        kmax: the highest degree (capped at d).

    Returns:
        Eigensystem with k = 0..kmax, eigenvalue mu_k, multiplicity C(d, k),
        ``trace`` = h(1) and ``error`` (the Hermite-dual bound per degree, or
        None for closed-form activations).

    References:
        Yang & Salman, "A Fine-Grained Spectral Perspective on Neural
        Networks", 2019 (arXiv 1907.10599).
    """
    s = arch.spec
    kmax = min(kmax, d)
    digits = 30 + min(math.ceil(kmax * math.log10(max(d, 2))), d)
    kw = dual.spec_kwargs(s)
    with mpmath.workdps(digits):
        hb = [
            dual.fc_kernel_bound(
                mpmath.mpf(d - 2 * j) / d, arithmetic="mpmath", digits=digits - 10, **kw
            )
            for j in range(d + 1)
        ]
        h = [v for v, _ in hb]
        bound = float(max(e for _, e in hb))
        scale = mpmath.mpf(2) ** (-d)
        lam = []
        for row in krawtchouk_rows(d, kmax):
            acc = mpmath.fsum(mpmath.mpf(w) * hj for w, hj in zip(row, h))
            lam.append(float(acc * scale))
        trace = float(h[0])
    mult = np.array([float(math.comb(d, k)) for k in range(kmax + 1)])
    err = np.full(kmax + 1, bound) if s["act"] in dual.QUADRATURE else None
    return Eigensystem(np.arange(kmax + 1), np.array(lam), mult, trace, error=err)


def hypercube_tree(arch, domain: Hypercube, kmax: int = 16) -> Eigensystem:
    """Eigenvalues of a ``tree`` arch's NTK per shape (``ntkgap.kernels.tree_eigen``),
    largest first; ``k`` is each block's degree |S|.

    Args:
        arch: ``tree`` Arch (act relu or erf).
        domain: the hypercube (its d only needs to hold the leaves).
        kmax: degree cap, applied only where the whole spectrum is too large.

    Returns:
        Eigensystem with exact eigenvalues and multiplicities of the listed
        blocks, ``capped_at`` and ``tail_trace`` (0 when nothing is capped).
    """
    arch.check_domain(domain)
    if arch.spec["act"] not in ("relu", "erf") and arch.leaves <= MAX_TREE_BITS:
        return hypercube_tree_fwht(arch, domain)  # no closed-form dual: FWHT route
    ts = tree_eigen.tree_spectrum(arch, kcap=kmax)
    return _tree_eigensystem(ts)


def _tree_eigensystem(ts) -> Eigensystem:
    order = np.argsort(-ts.eigenvalue, kind="stable")
    mult = np.array([float(ts.multiplicity[i]) for i in order])
    return Eigensystem(
        ts.degree[order], ts.eigenvalue[order], mult, ts.trace, capped_at=ts.capped_at
    )


def hypercube_tree_fwht(arch, domain: Hypercube, *, group_rtol: float = 1e-9) -> Eigensystem:
    """Reference tree-kernel eigenvalues by an FWHT of the kernel's first row.

    The row runs over all 2^s leaf configurations (neural-tangents'
    kernel_fn); equal eigenvalues are grouped into blocks.

    Args:
        arch: a ``tree`` arch with at most MAX_TREE_BITS leaves.
        domain: the hypercube (its d only needs to hold the leaves).
        group_rtol: relative tolerance under which eigenvalues are equal.

    Returns:
        Eigensystem, largest block first, with ``k`` the (mean) degree of
        each block, multiplicities, ``trace`` and ``subsets`` (each block's
        subsets as bit masks).

    References:
        O'Donnell, "Analysis of Boolean Functions", 2014.
    """
    # import-cost: gram loads JAX; eigen stays numpy-only on import
    from ntkgap.kernels import gram as kernels

    s = arch.leaves
    if s > MAX_TREE_BITS:
        raise UsageError(
            f"arch '{arch.spec}': {s} leaves exceed {MAX_TREE_BITS} for exact "
            "tree-kernel eigenvalues"
        )
    z = np.ones((2**s, domain.d))
    z[:, :s] = walsh.bit_column_matrix(s)
    x = arch.inputs(domain, z)
    row = kernels.gram(arch, x[:1], x, block=4096)[0]
    mu = walsh.fwht(row) / 2**s
    # group equal eigenvalues (the tree's symmetries make many coincide)
    order = np.argsort(-mu, kind="stable")
    blocks, cur = [], [order[0]]
    for i in order[1:]:
        if abs(mu[i] - mu[cur[0]]) <= group_rtol * max(abs(mu[cur[0]]), 1e-300):
            cur.append(i)
        else:
            blocks.append(cur)
            cur = [i]
    blocks.append(cur)
    deg = walsh.popcount(np.arange(2**s))
    lam = np.array([mu[b].mean() for b in blocks])
    mult = np.array([float(len(b)) for b in blocks])
    kk = np.array([int(np.round(deg[b].mean())) for b in blocks])
    return Eigensystem(kk, lam, mult, float(row[0]), subsets=[np.array(b) for b in blocks])


def degree_profile(arch, d: int, kmax: int = 6) -> dict:
    """The degree profile of an ``fc`` arch's NTK on {-1,+1}^d: mu_k / trace
    for k = 0..kmax (mu_k the eigenvalue of each degree-k character), and for
    odd k in 1..kmax-1 the odd/even ratio mu_k / sqrt(mu_{k-1} mu_{k+1}): 1
    for a geometric decay through k, < 1 when odd degrees are suppressed
    (0 for the bias-free two-layer ReLU NTK at k >= 3).

    Args:
        arch: a parsed ``fc`` arch.
        d: the hypercube dimension.
        kmax: the highest degree (at most d; odd ratios need k + 1 <= kmax).
    Returns:
        dict with ``k``, ``normalised`` (mu_k / trace), ``error`` (the bound
        on each normalised value, 0 for closed-form activations),
        ``odd_even`` ({k: ratio}) and ``min_odd_even`` (the smallest ratio
        that is not nan, None if there is none).
    """
    if arch.name != "fc":
        raise UsageError(f"arch '{arch.spec}': a degree profile needs an fc arch")
    es = hypercube_fc(arch, d, kmax)
    lam = es.eigenvalue
    norm = lam / es.trace
    err = es.error / es.trace if es.error is not None else np.zeros_like(norm)
    # eigenvalues within their error (or the mpmath sum's rounding, ~1e-30
    # x trace) of 0 are 0: odd activations without bias have mu_k = 0 at even
    # k >= 2, the ReLU/GELU/SiLU family (x/2 + even function) at odd k >= 3
    thr = err + 1e-25
    z = np.where(np.abs(norm) <= thr, 0.0, norm)
    ratios = {}
    for k in range(1, len(lam) - 1, 2):
        even = z[k - 1] * z[k + 1]
        if even > 0:
            ratios[k] = float(z[k] / math.sqrt(even))
        else:
            ratios[k] = math.inf if z[k] > 0 else math.nan
    return {
        "k": es.k.tolist(),
        "normalised": norm.tolist(),
        "error": err.tolist(),
        "odd_even": ratios,
        "min_odd_even": min((r for r in ratios.values() if r == r), default=None),
    }
