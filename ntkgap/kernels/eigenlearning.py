"""Theory learning curves of kernel (ridge) regression from the kernel's
eigenvalues and the target's power per eigenspace.

Eigenlearning (Simon, Dickens, Karkada & DeWeese 2021, arXiv 2110.03922;
equivalent to Canatar, Bordelon & Pehlevan 2021 and Jacot et al. 2020):
with eigenvalues lambda_i of multiplicity m_i, ridge delta and n samples,
the effective regulariser kappa solves

    sum_i m_i lambda_i / (lambda_i + kappa) + delta / kappa = n,

the learnabilities are L_i = lambda_i / (lambda_i + kappa), the
overfitting coefficient E0 = n / (n - sum_i m_i L_i^2), and the test MSE
against the clean target is

    E0 (sum_i (1 - L_i)^2 P_i + noise) - noise,

where P_i is the target's power in block i (sum of its squared coefficients
there, so degenerate eigenspaces are single blocks: C(d, k) copies are
never expanded) and ``noise`` the label-noise variance. Blocks beyond those
listed enter through their total mass ``tail`` = trace - sum m_i lambda_i,
as tail / kappa (their lambda << kappa); target power there is ``tail_power``
and is never learned.

Where it holds (measured here, tests in ``tests/test_kernels.py``): on the
hypercube (d = 16..20) it matches empirical ridgeless KRR within 15%; on
the circle it matches within 15% with a ridge (0.1: within 5% for
n = 20..640), but ridgeless it under-predicts empirical KRR by 2-5x. The
theory assumes the eigenfunctions of the sample behave like Gaussian
features; in one dimension the ridgeless interpolant's error is set by the
largest gaps between random points (a heavy-tailed statistic it does not
see), so ridgeless circle curves from theory are optimistic. Tomasini,
Sclocchi & Wyart (ICML 2022, "Failure and success of the spectral bias
prediction for Laplace kernel ridge regression: the case of low-dimensional
data") describe this failure for kernels of this smoothness (eigenvalues
~ k^-2 in one dimension) and its cure by a ridge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ntkgap.errors import UsageError


@dataclass
class Spectrum:
    """Kernel eigenvalues and target power, in blocks."""

    eigenvalue: np.ndarray
    multiplicity: np.ndarray
    power: np.ndarray
    tail: float = 0.0  # kernel mass in unlisted blocks
    tail_power: float = 0.0  # target power in unlisted / zero-eigenvalue blocks
    variance: float = 1.0  # the target's variance (for relative errors)

    def __post_init__(self):
        lam = np.asarray(self.eigenvalue, dtype=np.float64)
        m = np.asarray(self.multiplicity, dtype=np.float64)
        p = np.asarray(self.power, dtype=np.float64)
        if not (lam.shape == m.shape == p.shape):
            raise UsageError("eigenvalue, multiplicity and power must have one entry per block")
        zero = lam <= 0
        self.tail_power = float(self.tail_power + p[zero].sum())
        keep = ~zero
        self.eigenvalue, self.multiplicity, self.power = lam[keep], m[keep], p[keep]

    @property
    def rank(self) -> float:
        return float(np.inf) if self.tail > 0 else float(self.multiplicity.sum())


def _g(kappa, n, sp: Spectrum, ridge):
    lam = sp.eigenvalue[None, :]
    k = kappa[:, None]
    return (sp.multiplicity[None, :] * lam / (lam + k)).sum(1) + (ridge + sp.tail) / kappa - n


def solve_kappa(n, sp: Spectrum, ridge: float = 0.0, *, iters: int = 200) -> np.ndarray:
    """Solves the eigenlearning equation for the effective regulariser kappa(n).

    Vectorised bisection in log kappa on
    sum_i m_i lambda_i / (lambda_i + kappa) + (ridge + tail) / kappa = n.

    Args:
        n: a sample size or an array of them.
        sp: the kernel's eigenvalues and the target's power, in blocks.
        ridge: the ridge delta (>= 0).
        iters: the most bisection steps.

    Returns:
        float64 array of kappa, one per n (shape of ``np.atleast_1d(n)``); 0
        where the ridgeless equation has no positive root (n >= rank).

    References:
        Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework",
        2021 (arXiv 2110.03922).
    """
    n = np.atleast_1d(np.asarray(n, dtype=np.float64))
    kappa = np.zeros_like(n)
    solvable = (n < sp.rank) | (ridge > 0)
    if not np.any(solvable):
        return kappa
    ns = n[solvable]
    top = float(sp.multiplicity @ sp.eigenvalue) + ridge + sp.tail
    hi = np.full(ns.shape, np.log(top / np.maximum(ns, 1e-300)) + 2.0)  # g(hi) < 0
    lo = np.full(ns.shape, np.log(max(sp.eigenvalue.min(initial=top), 1e-300)) - 60.0)
    lo_bad = _g(np.exp(lo), ns, sp, ridge) < 0
    while np.any(lo_bad):
        lo[lo_bad] -= 60.0
        lo_bad = (_g(np.exp(lo), ns, sp, ridge) < 0) & (lo > -1400)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        pos = _g(np.exp(mid), ns, sp, ridge) > 0
        lo = np.where(pos, mid, lo)
        hi = np.where(pos, hi, mid)
        if np.all(hi - lo < 1e-13):
            break
    kappa[solvable] = np.exp(0.5 * (lo + hi))
    return kappa


def _kappa_learnability_e0(n, sp: Spectrum, ridge):
    """What ``test_mse`` and ``internals`` share, after checking their arguments.

    Args:
        n: a sample size or an array of them (each >= 1).
        sp: the kernel's eigenvalues and the target's power, in blocks.
        ridge: the ridge delta (>= 0).

    Returns:
        (kappa, learnability, E0): kappa per n (``solve_kappa``), L_i =
        lambda_i / (lambda_i + kappa) as an n x blocks array (1 where kappa
        = 0: ridgeless n >= rank learns every listed block), and E0 = n / (n -
        sum_i m_i L_i^2) per n, inf where it diverges.
    """
    if ridge < 0:
        raise UsageError(f"ridge={ridge} must be >= 0")
    n = np.atleast_1d(np.asarray(n, dtype=np.float64))
    if np.any(n < 1):
        raise UsageError("n must be >= 1")
    kappa = solve_kappa(n, sp, ridge)
    lam = sp.eigenvalue[None, :]
    k = kappa[:, None]
    with np.errstate(invalid="ignore"):
        learn = np.where(k > 0, lam / (lam + k), 1.0)
    denom = n - (sp.multiplicity[None, :] * learn**2).sum(1)
    e0 = np.where(denom > 0, n / np.where(denom > 0, denom, 1.0), np.inf)
    return kappa, learn, e0


def test_mse(n, sp: Spectrum, *, ridge: float = 0.0, noise: float = 0.0) -> np.ndarray:
    """Predicted test MSE of kernel ridge regression against the clean target.

    Args:
        n: a sample size or an array of them (each >= 1).
        sp: the kernel's eigenvalues and the target's power, in blocks.
        ridge: the ridge delta (>= 0).
        noise: the label-noise variance (>= 0).

    Returns:
        float64 array of E0 (sum_i (1 - L_i)^2 P_i + noise) - noise, one per n
        (shape of ``np.atleast_1d(n)``); inf where E0 diverges.

    References:
        Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework",
        2021 (arXiv 2110.03922).
    """
    if noise < 0:
        raise UsageError(f"noise={noise} must be >= 0")
    kappa, learn, e0 = _kappa_learnability_e0(n, sp, ridge)
    unlearned = ((1 - learn) ** 2 * sp.power[None, :]).sum(1) + sp.tail_power
    with np.errstate(invalid="ignore"):
        out = e0 * (unlearned + noise) - noise
    # ridgeless, n >= rank: interpolation of every mode, only noise is left
    full = kappa == 0
    out = np.where(full & (unlearned + noise == 0), sp.tail_power, out)
    return out


def internals(n, sp: Spectrum, *, ridge: float = 0.0) -> dict:
    """Eigenlearning's internal quantities at each sample size.

    Args:
        n: a sample size or an array of them (each >= 1).
        sp: the kernel's eigenvalues and the target's power, in blocks (the
            blocks of ``sp``, zero-eigenvalue blocks already dropped).
        ridge: the ridge delta (>= 0).

    Returns:
        dict of float64 arrays: ``kappa`` (per n, the effective ridge; 0
        where ridgeless n >= rank), ``learnability`` (n x blocks, L_i =
        lambda_i / (lambda_i + kappa), the same for every mode of a block),
        ``effective_dof`` (per n, sum_i m_i L_i: equal to n - (ridge +
        tail) / kappa, the conservation law), ``overfitting`` (per n, E0 =
        n / (n - sum_i m_i L_i^2), inf where it diverges), and per block the
        ``eigenvalue``, ``multiplicity`` and ``power`` (the target's weight
        in the eigenspace) they refer to.

    References:
        Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework",
        2021 (arXiv 2110.03922), eq. for kappa and the conservation law
        sum_i L_i = n (ridgeless).
    """
    kappa, learn, e0 = _kappa_learnability_e0(n, sp, ridge)
    return {
        "kappa": kappa,
        "learnability": learn,
        "effective_dof": (sp.multiplicity[None, :] * learn).sum(1),
        "overfitting": e0,
        "eigenvalue": sp.eigenvalue.copy(),
        "multiplicity": sp.multiplicity.copy(),
        "power": sp.power.copy(),
    }


def relative_test_mse(n, sp: Spectrum, **kw) -> np.ndarray:
    """Predicted test MSE divided by the target's variance.

    Args:
        n: a sample size or an array of them (each >= 1).
        sp: the kernel's eigenvalues and the target's power, in blocks.
        **kw: ``ridge`` and ``noise``, as for ``test_mse``.

    Returns:
        float64 array of ``test_mse(n, sp, **kw) / sp.variance``, one per n.

    References:
        Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework",
        2021 (arXiv 2110.03922).
    """
    return test_mse(n, sp, **kw) / sp.variance


def sample_complexity(
    sp: Spectrum, eps: float, *, ridge: float = 0.0, noise: float = 0.0, n_max: float = 1e12
) -> dict:
    """Smallest sample size whose predicted relative test MSE is at most eps.

    Args:
        sp: the kernel's eigenvalues and the target's power, in blocks.
        eps: the relative-MSE threshold, in (0, 1).
        ridge: the ridge delta (>= 0).
        noise: the label-noise variance (>= 0).
        n_max: the largest sample size searched.

    Returns:
        dict with ``n_star`` (the smallest integer n <= n_max, or None),
        ``censored`` (True when eps is not reached by n_max) and ``n_max``;
        when censored also ``relative_mse_at_n_max``.

    References:
        Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework",
        2021 (arXiv 2110.03922).
    """
    if not 0 < eps < 1:
        raise UsageError(f"eps={eps} must lie in (0, 1)")
    grid = np.unique(np.round(np.logspace(0, np.log10(n_max), 400)))
    err = relative_test_mse(grid, sp, ridge=ridge, noise=noise)
    hit = np.nonzero(err <= eps)[0]
    if hit.size == 0:
        return {
            "n_star": None,
            "censored": True,
            "n_max": n_max,
            "relative_mse_at_n_max": float(err[-1]),
        }
    j = hit[0]
    lo = 0.0 if j == 0 else grid[j - 1]
    hi = grid[j]
    while hi - lo > 1:  # bisection on integers: err(lo) > eps >= err(hi)
        mid = np.floor(0.5 * (lo + hi))
        if relative_test_mse([mid], sp, ridge=ridge, noise=noise)[0] <= eps:
            hi = mid
        else:
            lo = mid
    return {"n_star": int(hi), "censored": False, "n_max": n_max}


#: eigenlearning treats the n samples as distinct draws from a continuum;
#: on a finite domain it is trusted only while n is at most this fraction
#: of the distinct inputs the kernel reads (beyond it, repeated points and
#: the finite rank make the measured error fall off differently)
VALID_FRACTION = 0.1


def distinct_inputs_log2(arch, domain) -> float:
    """log2 of the number of distinct inputs the kernel of ``arch`` reads on
    ``domain``: d on the hypercube {-1,+1}^d for fc archs, the leaf count for
    tree archs (they read x_0..x_(leaves-1) only); the number of valid strings of
    a random hierarchy model; infinity on the circle.

    Args:
        arch: a parsed architecture (``ntkgap.nets.arch``).
        domain: a parsed domain (``ntkgap.targets.domains``).

    Returns:
        log2 of the count (a float, so d = 10^5 needs no 2^d).
    """
    if getattr(domain, "name", "") == "rhm":  # the valid strings of the hierarchy
        return math.log2(domain.size)
    if getattr(domain, "name", "") != "hypercube":
        return float("inf")
    if getattr(arch, "name", "") == "tree":
        return float(arch.leaves)
    return float(domain.d)


def theory_valid(n, arch, domain) -> bool:
    """Whether eigenlearning's prediction at sample size(s) ``n`` is within
    its validity: every n <= VALID_FRACTION x the distinct inputs.

    Args:
        n: a sample size or a list of them (None, e.g. a censored n*: False).
        arch: a parsed architecture.
        domain: the domain the target lives on.

    Returns:
        True when every n is at most the fraction of the distinct inputs.
    """
    ns = n if isinstance(n, (list, tuple, np.ndarray)) else [n]
    bits = distinct_inputs_log2(arch, domain)
    limit = math.log2(VALID_FRACTION) + bits
    for v in ns:
        if v is None:
            return False
        if v > 0 and math.log2(float(v)) > limit:
            return False
    return True
