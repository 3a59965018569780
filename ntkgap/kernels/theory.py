"""The spectral data eigenlearning needs for an (architecture, target)
pair: the kernel's eigenvalues in blocks and the target's power in each."""

from __future__ import annotations

import numpy as np

from ntkgap.kernels import eigen, eigenlearning, tree_eigen, tree_target
from ntkgap.kernels.eigenlearning import Spectrum
from ntkgap.spectral import complexity, fourier, walsh
from ntkgap.targets.boolean import Tree
from ntkgap.targets.domains import Circle
from ntkgap.targets.variance import target_variance

CIRCLE_KMAX_CAP = 2**14


def circle_kmax(target) -> int:
    """Highest circle frequency to list for a target's eigenlearning curve.

    Args:
        target: a circle target.

    Returns:
        int: 16 x its dominant frequency, at least 256 and at most
        CIRCLE_KMAX_CAP.
    """
    power = fourier.target_power(target, 2**12)
    dom = complexity.dominant(power)
    return int(min(max(16 * max(dom, 1), 256), CIRCLE_KMAX_CAP))


def _recursive_tree_target(arch, target) -> bool:
    """A tree target on exactly the arch's tree (same arity and depth)."""
    # every node kind composes (tanh by signed measures over node values) and
    # every activation has a dual (closed form or Hermite series): tree_eigen
    return (
        isinstance(target, Tree)
        and (target.spec["arity"], target.spec["L"]) == (arch.spec["arity"], arch.spec["L"])
        and tuple(target.support) == tuple(range(arch.leaves))
    )


def _multilinear_tree(target) -> bool:
    """A tree target whose nodes are multilinear in their children (not tanh)
    and whose support is too large for the Walsh transform."""
    return isinstance(target, Tree) and target.node != "tanh" and len(target.support) > 24


# above this many blocks, blocks whose eigenvalues agree to MERGE_RTOL are
# merged for eigenlearning (multiplicity and power summed, eigenvalue the
# multiplicity-weighted mean, so the trace is kept): a block's learnability
# lambda/(lambda + kappa) then moves by less than MERGE_RTOL relative
MERGE_ABOVE = 30_000
MERGE_RTOL = 2e-3


def _merge_blocks(lam, mult, power, rtol):
    order = np.argsort(-lam, kind="stable")
    lam, mult, power = lam[order], mult[order], power[order]
    pos = lam > 0
    bins = np.full(lam.size, -1, dtype=np.int64)
    bins[pos] = np.floor(np.log(lam[pos]) / np.log1p(rtol)).astype(np.int64)
    _, first, inverse = np.unique(-bins, return_index=True, return_inverse=True)
    m = np.bincount(inverse, weights=mult)
    ml = np.bincount(inverse, weights=mult * lam)
    p = np.bincount(inverse, weights=power)
    out = np.where(m > 0, ml / np.where(m > 0, m, 1), 0.0)
    # non-positive eigenvalues stay single blocks (eigenlearning drops them)
    return out, m, p


def _tree_spectrum(arch, target, kmax: int = 16):
    """Tree kernel eigenvalues and the tree target's power per shape, both
    by recursion over the tree (``ntkgap.kernels.tree_eigen``); blocks beyond a cap
    enter as the kernel's ``tail`` and the target's ``tail_power``; more
    than ``MERGE_ABOVE`` blocks are merged (``MERGE_RTOL``)."""
    ts = tree_eigen.tree_spectrum(arch, kcap=kmax, target=target, max_blocks=None)
    second = ts.second_moment
    lam = np.asarray(ts.eigenvalue, dtype=np.float64)
    mult = np.array([float(m) for m in ts.multiplicity])
    power = np.asarray(ts.power, dtype=np.float64)
    if lam.size > MERGE_ABOVE:
        lam, mult, power = _merge_blocks(lam, mult, power, MERGE_RTOL)
    sp = Spectrum(
        lam,
        mult,
        power,
        tail=ts.tail_trace,
        tail_power=max(second - float(ts.power.sum()), 0.0),
        variance=second - ts.mean**2,
    )
    return sp, eigen._tree_eigensystem(ts)


def spectrum(arch, target, *, kmax: int | None = None) -> tuple[Spectrum, eigen.Eigensystem]:
    """Eigenlearning inputs for an (architecture, target) pair.

    The kernel's eigenvalues in blocks (``ntkgap.kernels.eigen``) and the target's
    power in each block (Fourier on the circle, Walsh on the hypercube; per
    tree shape for a tree target on the arch's own tree).

    Args:
        arch: a parsed architecture.
        target: a parsed target; its domain must suit ``arch``.
        kmax: the highest circle frequency (default ``circle_kmax``); unused
            on the hypercube.

    Returns:
        (Spectrum, Eigensystem): the blocks with eigenvalue, multiplicity,
        power, ``tail``, ``tail_power`` and ``variance``, and the kernel's
        eigensystem they come from.

    References:
        Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework",
        2021 (arXiv 2110.03922); Yang & Salman, 2019 (arXiv 1907.10599).
    """
    domain = target.domain
    arch.check_domain(domain)
    if getattr(domain, "name", "") == "rhm":
        # lazy: rhm_theory builds Grams (JAX, ~1 s to import) over the valid strings
        from ntkgap.kernels import rhm_theory

        return rhm_theory.spectrum(arch, target)
    if isinstance(domain, Circle):
        kmax = kmax or circle_kmax(target)
        es = eigen.circle(arch, kmax)
        power = fourier.target_power(target, kmax)
        second = target.variance + target.mean**2
        sp = Spectrum(
            es.eigenvalue,
            es.multiplicity,
            power,
            tail=es.tail_trace,
            tail_power=max(second - power.sum(), 0.0),
            variance=target.variance,
        )
        return sp, es
    if arch.name == "tree" and _recursive_tree_target(arch, target):
        return _tree_spectrum(arch, target)
    if arch.name == "fc" and _multilinear_tree(target):
        # the degree profile by recursion over the tree: no 2^s transform
        prof = tree_target.tree_degree_profile(target)
        return _fc_spectrum(arch, domain, target, prof, float(prof[1:].sum()))
    if arch.name == "fc" and isinstance(target, Tree) and len(target.support) > 24:
        # tanh nodes: by signed measures per shape over the tree (tree_power)
        prof = tree_target.tree_power_profile(target)["weight"]
        return _fc_spectrum(arch, domain, target, prof, float(prof[1:].sum()))
    ws = walsh.walsh_spectrum(target)
    variance = target_variance(target)
    if arch.name == "tree":
        es = eigen.hypercube_tree_fwht(arch, domain)
        leaves = arch.leaves
        sub = np.arange(ws.coefficients.size)
        # target subset (bits over its support) -> subset of the arch's leaves
        mask = np.zeros_like(sub)
        outside = np.zeros(sub.shape, dtype=bool)
        for j, coord in enumerate(target.support):
            has = (sub >> j) & 1 == 1
            if coord < leaves:
                mask |= has.astype(np.int64) << coord
            else:
                outside |= has
        per_subset = np.zeros(2**leaves)
        np.add.at(per_subset, mask[~outside], ws.coefficients[~outside] ** 2)
        power = np.array([per_subset[b].sum() for b in es.subsets])
        sp = Spectrum(
            es.eigenvalue,
            es.multiplicity,
            power,
            tail_power=float((ws.coefficients[outside] ** 2).sum()),
            variance=variance,
        )
        return sp, es
    return _fc_spectrum(arch, domain, target, ws.degree_profile(), variance)


def _fc_spectrum(arch, domain, target, prof, variance):
    """An fc kernel's blocks (one per Walsh degree) and the target's power per degree."""
    d = domain.d
    kmax = d if d <= 40 else min(d, len(target.support) + 8)
    es = eigen.hypercube_fc(arch, d, kmax)
    power = np.zeros(kmax + 1)
    power[: prof.size] = prof
    sp = Spectrum(es.eigenvalue, es.multiplicity, power, tail=es.tail_trace, variance=variance)
    return sp, es


def nstar(sp: Spectrum, eps: float, arch, domain, **options) -> dict:
    """Eigenlearning's n*(eps) with its validity check: the one theory n*
    of the API, the command line and the runner's ``theory`` cells.

    Args:
        sp: the (architecture, target) pair's blocks (:func:`spectrum`).
        eps: the relative test MSE to reach, in (0, 1).
        arch: the parsed architecture (for the distinct inputs it reads).
        domain: the target's domain.
        **options: ``ridge``, ``noise`` and ``n_max`` of
            ``eigenlearning.sample_complexity`` (its defaults otherwise).

    Returns:
        dict from ``eigenlearning.sample_complexity`` (``n_star``,
        ``censored``, ``n_max``, ...) plus ``theory_valid``: whether n*
        (``n_max`` when censored) is within the theory's validity.

    References:
        Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework",
        2021 (arXiv 2110.03922).
    """
    r = dict(eigenlearning.sample_complexity(sp, eps, **options))
    n = r["n_max"] if r["censored"] else r["n_star"]
    r["theory_valid"] = eigenlearning.theory_valid(n, arch, domain)
    return r
