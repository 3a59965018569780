"""Kernel regression: the infinite-time gradient-descent predictor of the
infinite-width network on MSE (Jacot et al. 2018; Lee et al. 2019),
f(x) = K(x, X) (K(X, X) + ridge I)^-1 y, by float64 Cholesky.

Ridgeless by default. When the factorisation fails or the Gram is
numerically singular (LAPACK's reciprocal condition estimate below
``RCOND_MIN``: duplicate points, more points than distinct inputs), a
jitter is added to the diagonal, starting at 1e-12 x mean diag and growing
by 10x, and the value used is reported, never silently applied.

Nested learning curves: a seed's pools are nested (``ntkgap.targets.split``),
so the Gram at n is the leading block of the Gram at m > n, and its Cholesky
factor the leading block of the factor at m. ``factor`` factors once,
``extend`` grows a factor by new points (block Cholesky: growing in steps
costs one factorization's flops), ``leading_solve`` solves any leading n
from it. A :class:`Workspace` holds the flat buffers a nested curve grows
in: a matrix of n points is the first n * n entries of its buffer (leading
dimension n, so LAPACK reads it without a copy), and growing to m points
moves its columns apart in place (``grow_square``) instead of allocating
and copying into a new array; the buffers outlive one seed's curve, so the
next seed's reuses their memory (one curve owns a workspace at a time).

Jitter rule: a factor carries one jitter, the one the rule above chooses at
its largest n (``extend`` keeps it while it suffices, else the
caller refactors at the larger n); it applies to every smaller n. By
eigenvalue interlacing a leading block is never worse conditioned than the
whole Gram, so a jitter that suffices at the largest n suffices below it.

Threads: a Cholesky of ``SERIAL_FROM`` points or more runs on
``NTKGAP_CHOLESKY_THREADS`` BLAS threads (default 1). Multithreaded OpenBLAS
0.3.29 (scipy's wheel) segfaulted in ``dpotrf`` on a 16,384-point tree-NTK
Gram, reproducibly, and finished it on one thread; OpenBLAS's own tracker
reports the same class of fault in its parallel ``dpotrf`` at large n. One
thread costs ~1.9x wall time on 2 cores where it is the only work (12,288
points: 8.8 s against 4.6 s), and nothing where ``--jobs`` fills the cores.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from threadpoolctl import threadpool_limits

from ntkgap._infra import config
from ntkgap.errors import UsageError

RCOND_MIN = 1e-14
#: points from which a Cholesky runs on NTKGAP_CHOLESKY_THREADS threads: below
#: it a factorization takes well under a second, and the limit's library scan
#: (~1 ms) would be paid on every small solve of a search
SERIAL_FROM = 4096
_BLOCK = 1024  # rows per block of a leading-block substitution


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


@dataclass
class Factor:
    """A Cholesky factor of K + (ridge + jitter) I and how it was made.

    ``c``: the lower factor (Fortran order; its upper triangle is not read);
    ``colsum``: sum_i |K_ij| per column (the 1-norm for condition estimates).
    """

    c: np.ndarray
    ridge: float
    jitter: float
    rcond: float
    note: str
    colsum: np.ndarray
    buf: np.ndarray | None = None  # the flat buffer ``c`` is a view of (``extend`` reuses it)

    @property
    def size(self) -> int:
        return int(self.c.shape[0])


def _cholesky_threads(n: int):
    """The BLAS thread limit a Cholesky of n points runs under (module doc)."""
    if n < SERIAL_FROM:
        return contextlib.nullcontext()
    return threadpool_limits(config.cholesky_threads(), user_api="blas")


def _check(name, a):
    if not np.all(np.isfinite(a)):
        raise UsageError(f"{name} contains NaN or infinite values")


def _column_abs_sums(K, rows: int = 512) -> np.ndarray:
    """sum_i |K_ij| per column, in row blocks (no n x n temporary)."""
    acc = np.zeros(K.shape[1])
    for i in range(0, K.shape[0], rows):
        acc += np.abs(K[i : i + rows]).sum(axis=0)
    return acc


def factor(k_train, *, ridge: float = 0.0, max_jitter: float = 1e-2, out=None) -> Factor:
    """The Cholesky factor of K + (ridge + jitter) I, jitter by the module's rule.

    Args:
        k_train: the training Gram K(X, X), shape (n, n).
        ridge: the ridge added to the diagonal (finite, >= 0).
        max_jitter: the largest jitter tried, relative to mean diag.
        out: a flat float64 buffer of at least n * n entries to factor in
            (a :class:`Workspace`'s); None: a new array.

    Returns:
        a :class:`Factor` (lower factor ``c``, Fortran order).

    References:
        Golub & Van Loan, "Matrix Computations", 4th ed., 2013, sec. 4.2 (Cholesky).
    """
    K = np.asarray(k_train, dtype=np.float64)
    if ridge < 0 or not np.isfinite(ridge):
        raise UsageError(f"ridge={ridge} must be a finite number >= 0")
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise UsageError(f"Gram of shape {K.shape} is not square")
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
        src = K.T if K.flags.c_contiguous else K
        if out is None:
            A = np.array(src, order="F")
        else:
            A = square(out, n, order="F")
            A[...] = src
        A[np.diag_indices(n)] += ridge + jitter
        try:
            with _cholesky_threads(n):
                c, _ = sla.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
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
    return Factor(c, float(ridge), float(jitter), rcond, note, colsum, out)


def extend(f: Factor, k_cross, k_new) -> Factor | None:
    """The factor of the Gram grown by p points, by block Cholesky, keeping
    ``f``'s ridge and jitter; None when that jitter no longer suffices (the
    new block fails, or the whole factor's rcond falls below RCOND_MIN): the
    caller then refactors the whole Gram with :func:`factor`.

    With L L^T = K11 + D, the grown factor is [[L, 0], [B, L22]] with
    B = K21 L^-T and L22 L22^T = K22 + D - B B^T, so growing a factor in
    steps costs the flops of one factorization at the final size. A factor
    with a buffer (``factor(..., out=)``) grows in it when it has room
    (:func:`grow_square`): ``f`` is then consumed, valid no longer, even
    when the grown factor's rcond then fails (None).

    Args:
        f: the factor of the first n points.
        k_cross: K(X_old, X_new), shape (n, p).
        k_new: K(X_new, X_new), shape (p, p).

    Returns:
        a :class:`Factor` of n + p points, or None.

    References:
        Golub & Van Loan, "Matrix Computations", 4th ed., 2013, sec. 4.2.9 (block Cholesky).
    """
    n, p = f.c.shape[0], k_new.shape[0]
    k_cross, k_new = np.asarray(k_cross, np.float64), np.asarray(k_new, np.float64)
    _check("Gram matrix", k_cross)
    _check("Gram matrix", k_new)
    bt = sla.solve_triangular(f.c, k_cross, lower=True, check_finite=False)  # B^T = L^-1 K12
    s22 = k_new - bt.T @ bt
    s22[np.diag_indices(p)] += f.ridge + f.jitter
    try:
        with _cholesky_threads(p):
            l22 = sla.cholesky(s22, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    buf, c = grow_square(f.buf, f.c, n + p, order="F")
    c[:n, n:] = 0.0
    c[n:, :n] = bt.T
    c[n:, n:] = l22
    a12 = np.abs(k_cross)
    colsum = np.concatenate([f.colsum + a12.sum(axis=1), a12.sum(axis=0) + np.abs(k_new).sum(0)])
    anorm = float(np.max(colsum)) + f.ridge
    rcond = float(sla.lapack.dpocon(c, anorm + f.jitter, uplo="L")[0])
    if rcond < RCOND_MIN:
        return None
    return Factor(c, f.ridge, f.jitter, rcond, f.note, colsum, buf)


class Workspace:
    """Flat float64 buffers, by name, that nested curves grow their Grams and
    factors in (see the module doc). With a capacity, a buffer is made once
    for ``capacity`` points (its untouched pages cost no memory) and a later
    curve taking the same name reuses it: the earlier curve's matrices are
    then overwritten, so one curve owns a workspace at a time (``owner``,
    which a curve sets when it starts and checks before it reads).
    """

    def __init__(self, capacity: int = 0):
        """Args: capacity: the most points a curve is expected to grow to (0: none)."""
        self.capacity = int(capacity)
        self.owner = None
        self._bufs: dict = {}

    def take(self, name: str, size: int, reserve: int | None = None) -> np.ndarray:
        """The flat buffer ``name`` with at least ``size`` entries, made or
        enlarged as needed (the contents of an enlarged buffer are lost) with
        room for ``reserve`` entries (default: capacity^2); where the system
        refuses that reservation, with room for ``size`` only."""
        buf = self._bufs.get(name)
        if buf is None or buf.size < size:
            room = self.capacity**2 if reserve is None else int(reserve)
            try:
                buf = np.empty(max(int(size), room))
            except MemoryError:  # a strict overcommit policy: no reservation
                buf = np.empty(int(size))
            self._bufs[name] = buf
        return buf


def square(buf: np.ndarray, n: int, *, order: str = "C") -> np.ndarray:
    """The n x n matrix stored in the first n * n entries of a flat buffer.

    Args:
        buf: a flat float64 array of at least n * n entries.
        n: the matrix's size (its leading dimension).
        order: ``"C"`` (rows contiguous) or ``"F"`` (columns contiguous).

    Returns:
        an (n, n) view of ``buf``, contiguous in ``order``.
    """
    return buf[: n * n].reshape((n, n), order=order)


def grow_square(buf, a, m: int, *, order: str = "C"):
    """An n x n matrix as the leading block of an m x m one in a flat buffer
    (m >= n; the other blocks are left unset).

    When ``a`` is ``buf``'s own leading square (``square(buf, n)``) and
    ``buf`` has room for m * m entries, in place: the n rows (C order) or
    columns (F order) of length n move from offset j * n to j * m, the last
    first, so a move never writes over a row not yet moved (numpy copies a
    slice overlapping its destination correctly). Any other ``a`` is copied
    into ``buf`` when it has room, else into a new buffer.

    Args:
        buf: a flat float64 buffer, or None (a new one is made).
        a: the n x n matrix.
        m: the size to grow to.
        order: the layout of ``a`` and of the result, ``"C"`` or ``"F"``.

    Returns:
        (the buffer, the m x m view of it whose leading block is ``a``).
    """
    n = a.shape[0]
    if buf is None or buf.size < m * m:
        buf = np.empty(m * m)
    elif a.ctypes.data == buf.ctypes.data and a.flags[order + "_CONTIGUOUS"]:
        for j in range(n - 1, 0, -1):
            buf[j * m : j * m + n] = buf[j * n : j * n + n]
        return buf, square(buf, m, order=order)
    elif np.shares_memory(a, buf):  # a elsewhere in buf: read it before writing
        a = a.copy()
    square(buf, m, order=order)[:n, :n] = a
    return buf, square(buf, m, order=order)


def leading_solve(f: Factor, n: int, y) -> np.ndarray:
    """(K_n + (ridge + jitter) I)^-1 y for the first n points, from the
    leading n x n block of ``f``'s factor (the Cholesky factor of a leading
    principal submatrix is the leading block of the full factor), by blocked
    substitution on views (no n x n copy).

    Args:
        f: a factor of at least n points.
        n: how many leading points.
        y: right-hand side, shape (n,) or (n, k).

    Returns:
        the solution, shape of y.

    References:
        Golub & Van Loan, "Matrix Computations", 4th ed., 2013, sec. 4.2.
    """
    c = f.c
    z = np.array(y, dtype=np.float64)
    blocks = [(i, min(n, i + _BLOCK)) for i in range(0, n, _BLOCK)]
    for a, b in blocks:  # forward: L z = y
        z[a:b] -= c[a:b, :a] @ z[:a]
        z[a:b] = sla.solve_triangular(c[a:b, a:b], z[a:b], lower=True, check_finite=False)
    for a, b in reversed(blocks):  # backward: L^T alpha = z
        z[a:b] -= c[b:n, a:b].T @ z[b:n]
        z[a:b] = sla.solve_triangular(
            c[a:b, a:b], z[a:b], lower=True, trans="T", check_finite=False
        )
    return z


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
    y = np.asarray(y, dtype=np.float64)
    K = np.asarray(k_train, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] != y.shape[0]:
        raise UsageError(f"Gram of shape {K.shape} does not match {y.shape[0]} targets")
    _check("training targets", y)
    f = factor(K, ridge=ridge, max_jitter=max_jitter)
    alpha = sla.cho_solve((f.c, True), y, check_finite=False)
    return Solution(alpha, f.ridge, f.jitter, f.rcond, f.note)
