"""Kernel regression: the infinite-time gradient-descent predictor of the
infinite-width network on MSE (Jacot et al. 2018; Lee et al. 2019),
f(x) = K(x, X) (K(X, X) + ridge I)^-1 y, by float64 Cholesky.

Ridgeless by default. When the factorisation fails or the Gram is
numerically singular (LAPACK's reciprocal condition estimate below
``RCOND_MIN``: duplicate points, more points than distinct inputs), a
jitter is added to the diagonal, starting at 1e-12 x mean diag and growing
by 10x, and the value used is reported, never silently applied.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ntkgap.errors import UsageError

RCOND_MIN = 1e-14


@dataclass
class Solution:
    alpha: np.ndarray  # (K + (ridge + jitter) I)^-1 y
    ridge: float
    jitter: float  # extra diagonal added for stability (0.0 if none)
    rcond: float  # LAPACK reciprocal condition estimate of the factored matrix
    note: str = ""

    def predict(self, k_test_train) -> np.ndarray:
        return np.asarray(k_test_train) @ self.alpha

    def info(self) -> dict:
        return {"ridge": self.ridge, "jitter": self.jitter, "rcond": self.rcond, "note": self.note}


def _check(name, a):
    if not np.all(np.isfinite(a)):
        raise UsageError(f"{name} contains NaN or infinite values")


def _column_abs_sums(K, rows: int = 512) -> np.ndarray:
    """sum_i |K_ij| per column, in row blocks (no n x n temporary)."""
    acc = np.zeros(K.shape[1])
    for i in range(0, K.shape[0], rows):
        acc += np.abs(K[i : i + rows]).sum(axis=0)
    return acc


def fit(k_train, y, *, ridge: float = 0.0, max_jitter: float = 1e-2) -> Solution:
    """Kernel ridge regression weights: solves (K + ridge I) alpha = y by Cholesky.

    When the factorisation fails or the Gram is numerically singular (rcond
    below RCOND_MIN), a jitter starting at 1e-12 x mean diag grows by 10x
    until it succeeds, and is reported in the result.

    Args:
        k_train: the training Gram K(X, X), shape (n, n).
        y: training targets, shape (n,) or (n, outputs).
        ridge: the ridge added to the diagonal (finite, >= 0).
        max_jitter: the largest jitter tried, relative to mean diag.

    Returns:
        Solution with ``alpha`` (shape of y), ``ridge``, ``jitter`` (0.0 if
        none), ``rcond`` and ``note``.

    References:
        Jacot, Gabriel & Hongler, "Neural Tangent Kernel", 2018; Lee et al.,
        "Wide Neural Networks of Any Depth Evolve as Linear Models Under
        Gradient Descent", 2019.
    """
    K = np.asarray(k_train, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if ridge < 0 or not np.isfinite(ridge):
        raise UsageError(f"ridge={ridge} must be a finite number >= 0")
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] != y.shape[0]:
        raise UsageError(f"Gram of shape {K.shape} does not match {y.shape[0]} targets")
    _check("training targets", y)
    n = K.shape[0]
    # one pass gives both the 1-norm (for the condition estimate) and the
    # finiteness check: a NaN or inf anywhere makes its column sum non-finite
    colsum = _column_abs_sums(K)
    _check("Gram matrix", colsum)
    scale = float(np.mean(np.diag(K))) or 1.0
    anorm = float(np.max(colsum)) + ridge
    jitter, note = 0.0, ""
    while True:
        # K is symmetric, so K^T (a Fortran-ordered view of a C-ordered K) is
        # the same matrix: copying it is a plain memcpy, not a transpose, and
        # LAPACK then factors the copy in place
        A = np.array(K.T if K.flags.c_contiguous else K, order="F")
        A[np.diag_indices(n)] += ridge + jitter
        try:
            c, low = sla.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
            rcond = float(sla.lapack.dpocon(c, anorm + jitter, uplo="L")[0])
            if rcond >= RCOND_MIN or ridge + jitter >= max_jitter * scale:
                break
            note = f"Gram numerically singular (rcond {rcond:.1e}); jitter added"
        except np.linalg.LinAlgError:
            rcond = 0.0
            note = "Cholesky failed; jitter added"
        if jitter >= max_jitter * scale:
            raise UsageError(f"Gram matrix not positive definite even with jitter {jitter:.1e}")
        jitter = 1e-12 * scale if jitter == 0.0 else jitter * 10.0
    alpha = sla.cho_solve((c, low), y, check_finite=False)
    return Solution(alpha, float(ridge), float(jitter), rcond, note)
