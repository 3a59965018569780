"""Kernel theory and kernel classification on random hierarchy model strings.

The law of RHM inputs is uniform over the n_valid valid strings, a finite
set whose token positions are dependent, so no closed-form eigensystem of
the NTK under it is known. It is exact by enumeration: the kernel's
integral operator under the uniform law on the strings is the matrix
K / n_valid, its eigenfunctions are sqrt(n_valid) times the unit
eigenvectors u_i, and the target's coefficient on eigenfunction i is
u_i . y / sqrt(n_valid) (summed in squares over the n_c outputs of a
one-hot label). Eigenlearning on these blocks is the theory for this law
(``spectrum``); it applies while n_valid <= ``MAX_PROJECTION`` strings.

``kernel_classifier`` is the NTK predictor on vector (one-hot) labels, one
kernel regression per output, scored by the regression error and the
classification error (argmax) as in the reference implementation of the
RHM.

References:
    Cagnetta, Petrini, Tomasini, Favero & Wyart, "How deep neural networks
    learn compositional data: the random hierarchy model", Phys. Rev. X 14,
    031001 (2024); Simon, Dickens, Karkada & DeWeese, "The eigenlearning
    framework" (arXiv 2110.03922).
"""

from __future__ import annotations

import numpy as np

from ntkgap.errors import UsageError
from ntkgap.kernels import krr
from ntkgap.kernels.eigenlearning import Spectrum
from ntkgap.kernels.gram import gram
from ntkgap.targets import rhm


def spectrum(arch, target, *, kind: str = "ntk"):
    """The kernel's eigenvalues and the label's power under the uniform law
    of the valid strings, by enumeration (see the module docstring).

    Args:
        arch: a parsed architecture that reads RHM strings.
        target: an ``RHM`` with at most ``rhm.MAX_PROJECTION`` valid strings.
        kind: ``"ntk"`` or ``"nngp"``.

    Returns:
        (Spectrum, None): one block per eigenvalue (multiplicity 1);
        ``variance`` is the label's (``RHM.variance``).

    References:
        Simon, Dickens, Karkada & DeWeese, arXiv 2110.03922 (eigenlearning);
        Cagnetta et al., Phys. Rev. X 14, 031001 (2024) (the law).
    """
    if target.n_valid > rhm.MAX_PROJECTION:
        raise UsageError(
            f"target '{target.spec}': kernel theory on RHM strings is exact only by "
            f"enumerating the valid strings (no closed form under their dependent law); "
            f"this grammar has {target.n_valid} (allowed: <= {rhm.MAX_PROJECTION})"
        )
    x, y = target.enumerate()
    n = x.shape[0]
    K = gram(arch, arch.inputs(target.domain, x), kind=kind) / n
    lam, vec = np.linalg.eigh(K)
    coef = vec.T @ y  # (n,) or (n, n_c): u_i . y
    power = (coef**2 if coef.ndim == 1 else np.sum(coef**2, axis=1)) / n
    lam = np.where(lam > 1e-12 * lam[-1], lam, 0.0)
    sp = Spectrum(lam, np.ones_like(lam), power, variance=target.variance)
    return sp, None


def kernel_classifier(arch, target, n: int, *, seed: int, n_test: int, kind: str = "ntk"):
    """The kernel predictor on one split, with vector labels for n_c > 2.

    Args:
        arch: a parsed architecture that reads RHM strings.
        target: an ``RHM``.
        n: training strings (distinct; the pool of ``RHMDomain.draw_split``).
        seed: the split's seed (pool seed ``seed``, test seed ``seed + 1``).
        n_test: test strings, outside the pool.
        kind: ``"ntk"`` or ``"nngp"``.

    Returns:
        dict: ``regression_error`` (summed MSE over outputs / ``RHM.variance``),
        ``classification_error`` (argmax), ``n``, ``n_test`` (as drawn),
        ``exhaustive``, ``jitter``.

    References:
        Jacot, Gabriel & Hongler (2018) (the kernel predictor); Cagnetta et
        al., Phys. Rev. X 14, 031001 (2024) (one-hot outputs, argmax).
    """
    dom = target.domain
    xtr, xte, exhaustive = dom.draw_split(n, n_test, pool_seed=seed, test_seed=seed + 1)
    ctr, cte = target.classes(xtr), target.classes(xte)
    ftr, fte = arch.inputs(dom, xtr), arch.inputs(dom, xte)
    sol = krr.fit(gram(arch, ftr, kind=kind), target.label(ctr))
    pred = gram(arch, fte, ftr, kind=kind) @ sol.alpha
    return {
        "n": int(n),
        "n_test": int(xte.shape[0]),
        "exhaustive": exhaustive,
        "jitter": float(sol.jitter),
        "regression_error": rhm.regression_error(pred, target.label(cte), target.variance),
        "classification_error": rhm.classification_error(pred, cte),
    }
