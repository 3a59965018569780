"""The spectral data eigenlearning needs for an (architecture, target)
pair: the kernel's eigenvalues in blocks and the target's power in each."""

from __future__ import annotations

import numpy as np

from ntkgap import complexity, eigen, fourier, walsh
from ntkgap.domains import Circle
from ntkgap.eigenlearning import Spectrum
from ntkgap.variance import target_variance

CIRCLE_KMAX_CAP = 2**14


def circle_kmax(target) -> int:
    power = fourier.target_power(target, 2**12)
    dom = complexity.dominant(power)
    return int(min(max(16 * max(dom, 1), 256), CIRCLE_KMAX_CAP))


def spectrum(arch, target, *, kmax: int | None = None) -> tuple[Spectrum, eigen.Eigensystem]:
    domain = target.domain
    arch.check_domain(domain)
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
    ws = walsh.walsh_spectrum(target)
    variance = target_variance(target)
    if arch.name == "tree":
        es = eigen.hypercube_tree(arch, domain)
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
    d = domain.d
    kmax = d if d <= 40 else min(d, len(target.support) + 8)
    es = eigen.hypercube_fc(arch, d, kmax)
    power = np.zeros(kmax + 1)
    prof = ws.degree_profile()
    power[: prof.size] = prof
    sp = Spectrum(es.eigenvalue, es.multiplicity, power, tail=es.tail_trace, variance=variance)
    return sp, es
