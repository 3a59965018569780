"""Exact kernel regression on the hypercube by the Walsh-Hadamard transform:
a matrix-free preconditioned conjugate-gradient solver whose cost per
iteration is O(D 2^D) whatever the number n of training points.

The structure. Every kernel this toolkit uses on {-1,+1}^D -- an ``fc``
NTK or NNGP of any activation and bias, a ``tree`` NTK or NNGP (and its
CNN, ``share=1``), whose leaves read coordinates -- depends on a pair only
through the coordinate-wise product x * y (``ntkgap.kernels.gram``'s
module doc): K(x, y) = g(x * y) with g(z) = K(z, 1). In the index
convention of ``ntkgap.spectral.walsh`` (point i has x_j = -1 where bit j
of i is set) x * y is the point i XOR j, so K is a convolution on the group
Z_2^D and the characters chi_T diagonalise it (O'Donnell, "Analysis of
Boolean Functions", 2014, ch. 1, the convolution theorem H(g * a) =
(H g)(H a)): on all 2^D points

    K = H diag(lambda) H / 2^D,    lambda = H g,

with H the (unnormalised, symmetric, H H = 2^D I) Walsh-Hadamard matrix:
lambda is the multiset of the 2^D eigenvalues of the full Gram, one
evaluation of g on the cube and one fast transform away. For a training
set S (indices, n of them) and P_S the n x 2^D selection,

    K_SS v = P_S H (lambda * H P_S^T v) / 2^D,

two fast transforms, and the prediction at every point of the cube,
K(., S) alpha = H (lambda * H P_S^T alpha) / 2^D, is the same computation:
a search scores the exact test MSE over any set of unseen points (the
whole complement of S included) at no extra cost.

The solver. (K_SS + ridge I) alpha = y is solved by conjugate gradients
(Hestenes & Stiefel 1952; Saad, "Iterative Methods for Sparse Linear
Systems", 2003, sec. 9.2 for the preconditioned form), from
``scipy.sparse.linalg.cg`` on a ``LinearOperator``: scipy is already a
dependency, its CG takes a preconditioner, an initial guess (the nested
searches warm-start each n from the previous solution) and a relative
residual tolerance, and runs in float64 numpy with no compilation; lineax
or matfree would add JAX tracing of a numpy transform for no gain here.

The preconditioner is the low-degree Walsh block: with Phi the n x m
matrix of the characters chi_T(x_i), |T| <= k0, and Lambda their
eigenvalues g_hat(T) = lambda_T / 2^D, K_SS = Phi Lambda Phi^T + (the
rest), and the rest is approximated by c I with c its diagonal
(sum of the other g_hat(T)) plus the ridge. Its inverse by Woodbury,
(c I + Phi Lambda Phi^T)^-1 = (I - Phi (c Lambda^-1 + G)^-1 Phi^T) / c,
needs the m x m Gram G = Phi^T Phi, whose entry (T, T') is
sum_i chi_{T xor T'}(x_i): one transform of the training set's indicator
gives all of them; Phi^T v and Phi w are one transform each, so a
preconditioned iteration costs four transforms and an m x m triangular
solve pair, and Phi is never stored.

Stopping: ``RTOL`` on the relative residual |y - A alpha| / |y| (the
residual reported is recomputed from the final alpha, not CG's recurrence);
tests check that the n* of a search is the same with the dense Cholesky
solver (``ntkgap.kernels.krr``) and with this one.
"""

from __future__ import annotations

import math
import time

import numpy as np
import scipy.linalg as sla
from scipy.sparse.linalg import LinearOperator, cg
from threadpoolctl import threadpool_limits

from ntkgap._infra import memory
from ntkgap.errors import UsageError
from ntkgap.kernels import krr
from ntkgap.spectral import walsh

#: the largest read set D served (a vector of 2^24 float64 is 128 MiB)
D_MAX = 24
#: CG's stopping tolerance on the relative residual (see the module doc)
RTOL = 1e-10
#: most low-degree features in the preconditioner (an m x m Cholesky factor)
PRECOND_MAX_FEATURES = 1500
#: seconds per element and log2-level of one fast transform (float64 numpy,
#: one core; an over-estimate of the measured ~1.7e-9 at 2^20)
TRANSFORM_SECONDS_PER_ENTRY = 2.5e-9
#: iterations assumed by the cost estimate (preconditioned, ridgeless)
ITERATIONS_GUESS = 60
#: dense float64 flop rate assumed by the crossover estimate (flop/s)
DENSE_FLOPS = 1.0e10
#: seconds per kernel entry of the dense path's Grams (the look-up path with
#: its split and labels; calibrated on a test set of half the 20-cube)
ENTRY_SECONDS = 1e-7
#: below this estimated dense cost (seconds) a search keeps the dense path:
#: its nested factor serves every smaller n, and the difference is negligible
SWITCH_SECONDS = 1.0
#: how much cheaper (estimated) the Walsh route must be: the dense estimate
#: counts a whole factorization at n, which a nested curve grows from its
#: previous n instead (block Cholesky), so it over-states the dense cost
SWITCH_RATIO = 2.0
#: 2^D float64 vectors alive at the peak of a solve (the eigenvalues, the
#: scattered vector, the transform's copy and half-length scratch, the
#: product and the indicator's transform)
VECTORS = 7
SOLVER = "walsh-cg"
#: the same predictions where the training Gram is small: K_SS read from g
#: at i XOR j and solved by Cholesky (``ntkgap.kernels.krr``), the
#: predictions still one convolution (``DIRECT_MAX`` points at most)
DIRECT = "walsh-direct"
DIRECT_MAX = 8192


def read_set(arch, domain) -> int | None:
    """D, the number of hypercube coordinates ``arch`` reads (fc: d; tree and
    CNN: its arity^L leaves), or None where the Walsh solver does not apply
    (not a hypercube, not an fc or tree arch, D > ``D_MAX``).

    Args:
        arch: a parsed architecture.
        domain: the target's domain.

    Returns:
        int or None.
    """
    if getattr(domain, "name", None) != "hypercube":
        return None
    if arch.name == "fc":
        D = int(domain.d)
    elif arch.name == "tree":
        D = int(arch.leaves)
    else:
        return None
    return D if 1 <= D <= D_MAX else None


def kernel_row(arch, D: int, kind: str = "ntk") -> np.ndarray:
    """g(z) = K(z, 1) at every point z of {-1,+1}^D, in index order.

    fc: the kernel's table by Hamming distance (d + 1 kernel evaluations)
    read at popcount(i); tree: ``gram.tree_table`` (one kernel evaluation
    per leaf-pattern orbit).

    Args:
        arch: a parsed fc or tree architecture reading D coordinates.
        D: the read set's size (``read_set``).
        kind: ``"ntk"`` or ``"nngp"``.

    Returns:
        float64 array of shape (2^D,).
    """
    from ntkgap.kernels import gram  # import cost: JAX, only where a kernel is evaluated

    memory.check(8.0 * 3 * 2**D, f"a Walsh kernel row at D={D}")
    if arch.name == "fc":
        table = gram.hypercube_table(arch, D, kind)
        return table[walsh.popcount(np.arange(2**D))]
    return np.asarray(gram.tree_table(arch, kind), dtype=np.float64)


def spectrum(g) -> np.ndarray:
    """lambda = H g: the eigenvalue of the full 2^D Gram on chi_T, by subset
    index T (module doc; O'Donnell 2014, ch. 1).

    Args:
        g: the kernel row ``kernel_row`` (length 2^D).

    Returns:
        float64 array of shape (2^D,).
    """
    return walsh.fwht(g)


def solve_bytes(D: int, n: int, features: int = PRECOND_MAX_FEATURES) -> float:
    """Peak bytes of one solve: ``VECTORS`` vectors of 2^D, CG's n-vectors and
    the preconditioner's m x m factor.

    Args:
        D: the read set's size.
        n: training points.
        features: the preconditioner's features (at most).

    Returns:
        bytes (float).
    """
    return 8.0 * (VECTORS * 2.0**D + 10.0 * n + 2.0 * features**2)


def check_memory(D: int, n: int) -> None:
    """Refuse (``MemoryLimitError``) a solve whose vectors would not fit.

    Args:
        D: the read set's size.
        n: training points.

    Returns:
        None (raises ``MemoryLimitError`` naming D and the limit).
    """
    memory.check(solve_bytes(D, n), f"the Walsh-CG solver at D={D} (vectors of 2^{D})")


def solve_seconds(D: int, n: int, iterations: int = ITERATIONS_GUESS) -> float:
    """Estimated seconds of one preconditioned solve: four transforms per
    iteration (two for the matvec, two for the preconditioner) and one for
    the predictions, each D 2^D ``TRANSFORM_SECONDS_PER_ENTRY``.

    Args:
        D: the read set's size.
        n: training points (the cost does not grow with n).
        iterations: CG iterations assumed.

    Returns:
        seconds (float).
    """
    del n  # the transform's cost is independent of n
    return (4 * iterations + 3) * D * 2.0**D * TRANSFORM_SECONDS_PER_ENTRY


def direct_seconds(D: int, n: int) -> float:
    """Estimated seconds of a ``DIRECT`` solve: the n^2 look-up, the n^3 / 3
    Cholesky flops and the predictions' two transforms.

    Args:
        D: the read set's size.
        n: training points.

    Returns:
        seconds (float).
    """
    return (float(n) ** 3 / 3 + 20.0 * float(n) ** 2) / DENSE_FLOPS + solve_seconds(D, n, 0)


def walsh_seconds(D: int, n: int) -> float:
    """The estimated seconds of the cheaper Walsh route at n (``DIRECT`` up
    to ``DIRECT_MAX`` points, else CG): the number a cost model can call.

    Args:
        D: the read set's size.
        n: training points.

    Returns:
        seconds (float).
    """
    cg_s = solve_seconds(D, n)
    return min(cg_s, direct_seconds(D, n)) if n <= DIRECT_MAX else cg_s


def dense_seconds(n: int, n_test: int) -> float:
    """Estimated seconds of the dense Cholesky path at n: n^3 / 3 flops
    (``DENSE_FLOPS``) and the n^2 + n_test n kernel entries (``ENTRY_SECONDS``).

    Args:
        n: training points.
        n_test: test points.

    Returns:
        seconds (float).
    """
    n, n_test = float(n), float(n_test)
    return n**3 / 3 / DENSE_FLOPS + ENTRY_SECONDS * (n * n + n * n_test)


def prefer(D: int | None, n: int, n_test: int) -> bool:
    """Whether a search should solve at n by Walsh-CG (or ``DIRECT``): D
    within ``D_MAX`` and the dense path's memory over the limit, or its
    estimated time over ``SWITCH_SECONDS`` and ``SWITCH_RATIO`` times the
    Walsh route's.

    Args:
        D: ``read_set``'s answer (None: never).
        n: training points.
        n_test: test points.

    Returns:
        bool.
    """
    if D is None:
        return False
    dense_bytes = memory.regression_bytes(n, n_test, D) + 8.0 * n * n_test
    if dense_bytes > memory.limit():
        return True
    dense = dense_seconds(n, n_test)
    return dense > SWITCH_SECONDS and SWITCH_RATIO * walsh_seconds(D, n) < dense


def indices(x) -> np.ndarray:
    """Point indices (bit j set where x_j = -1) of +-1 rows.

    Args:
        x: array of shape (n, D) with entries +-1.

    Returns:
        int64 array of shape (n,).
    """
    bits = (np.asarray(x) < 0).astype(np.int64)
    return bits @ (np.int64(1) << np.arange(bits.shape[1], dtype=np.int64))


class WalshSystem:
    """The Gram of a hypercube kernel restricted to training indices, as an
    operator (module doc). Attributes: ``D``, ``lam`` (lambda = H g),
    ``g0`` (the kernel's diagonal g(1))."""

    def __init__(self, lam, g=None):
        """Args: lam: the spectrum (``spectrum``); g: the kernel row (None:
        H lam / 2^D)."""
        self.lam = np.asarray(lam, dtype=np.float64)
        self.size = self.lam.size
        self.D = int(round(math.log2(self.size)))
        self.g = walsh.fwht(self.lam) / self.size if g is None else np.asarray(g, np.float64)
        self.g0 = float(self.g[0])
        self._deg = walsh.popcount(np.arange(self.size))

    @classmethod
    def of(cls, arch, D: int, kind: str = "ntk") -> WalshSystem:
        """The system of ``arch``'s kernel on {-1,+1}^D (``kernel_row``)."""
        g = kernel_row(arch, D, kind)
        return cls(spectrum(g), g)

    def _scatter(self, idx, v) -> np.ndarray:
        u = np.zeros(self.size)
        np.add.at(u, idx, v)
        return u

    def convolve(self, idx, v) -> np.ndarray:
        """K(., S) v at every point of the cube: H (lambda * H P_S^T v) / 2^D."""
        w = walsh.fwht(self._scatter(idx, v))
        w *= self.lam
        out = walsh.fwht(w)
        out /= self.size
        return out

    def matvec(self, idx, v, ridge: float = 0.0) -> np.ndarray:
        """(K_SS + ridge I) v for training indices ``idx``."""
        return self.convolve(idx, v)[idx] + ridge * np.asarray(v)

    def preconditioner(self, idx, ridge: float = 0.0, k0: int | None = None):
        """The low-degree Walsh block's Woodbury inverse (module doc) as a
        function v -> P^-1 v, and its facts (``k0``, ``features``).

        Args:
            idx: training indices.
            ridge: the ridge of the system.
            k0: the largest degree kept (None: the largest whose features
                number at most min(n / 4, PRECOND_MAX_FEATURES)).

        Returns:
            (function or None, dict).
        """
        n, D = len(idx), self.D
        if k0 is None:
            k0, m = 0, 1
            while k0 < D and m + math.comb(D, k0 + 1) <= min(n / 4, PRECOND_MAX_FEATURES):
                k0 += 1
                m += math.comb(D, k0)
        ghat = self.lam / self.size
        low = np.flatnonzero((self._deg <= k0) & (ghat > 0))
        c = self.g0 - float(ghat[low].sum()) + ridge
        if low.size == 0 or c <= 1e-14 * max(self.g0, 1e-300):
            return None, {"k0": None, "features": 0}
        h = walsh.fwht(self._scatter(idx, 1.0))  # sum_i chi_T(x_i), every T
        G = h[np.bitwise_xor(low[:, None], low[None, :])]
        G[np.diag_indices(low.size)] += c / ghat[low]
        cf = sla.cho_factor(G, lower=True, check_finite=False)

        def apply(v):
            u = walsh.fwht(self._scatter(idx, v))[low]
            w = np.zeros(self.size)
            w[low] = sla.cho_solve(cf, u, check_finite=False)
            return (v - walsh.fwht(w)[idx]) / c

        return apply, {"k0": int(k0), "features": int(low.size)}

    def solve_direct(self, idx, y, *, ridge: float = 0.0) -> dict:
        """Solve (K_SS + ridge I) alpha = y by Cholesky of K_SS read from g at
        i XOR j (``krr.fit``: its jitter rule where K_SS is singular).

        Args:
            idx: training indices.
            y: targets, shape (n,).
            ridge: the ridge (>= 0).

        Returns:
            as :meth:`solve` (``iterations`` 0), and ``jitter``.
        """
        idx = np.asarray(idx, dtype=np.int64)
        t0 = time.perf_counter()
        memory.check(8.0 * 3 * idx.size**2, f"a {idx.size} x {idx.size} Walsh-direct Gram")
        sol = krr.fit(self.g[np.bitwise_xor(idx[:, None], idx[None, :])], y, ridge=ridge)
        ynorm = float(np.linalg.norm(y)) or 1.0
        res = float(np.linalg.norm(y - self.matvec(idx, sol.alpha, ridge))) / ynorm
        return {
            "alpha": sol.alpha, "iterations": 0, "residual": res, "converged": True,
            "seconds": time.perf_counter() - t0, "k0": None, "features": 0,
            "jitter": sol.jitter, "method": DIRECT,
        }  # fmt: skip

    def solve(self, idx, y, *, ridge: float = 0.0, x0=None, rtol: float = RTOL,
              precondition: bool = True, maxiter: int | None = None) -> dict:  # fmt: skip
        """Solve (K_SS + ridge I) alpha = y by preconditioned CG.

        Args:
            idx: training indices (int, in [0, 2^D)).
            y: targets, shape (n,).
            ridge: the ridge (>= 0).
            x0: initial guess (a warm start), shape (n,), or None.
            rtol: stopping tolerance on the relative residual.
            precondition: whether to use the low-degree block.
            maxiter: iteration limit (default 20 n + 1000).

        Returns:
            ``alpha``, ``iterations``, ``residual`` (|y - A alpha| / |y|,
            recomputed), ``converged``, ``seconds``, ``k0``, ``features``,
            ``method`` (``SOLVER``).

        References:
            Saad, "Iterative Methods for Sparse Linear Systems", 2003, alg. 9.1.
        """
        idx = np.asarray(idx, dtype=np.int64)
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 1 or y.shape[0] != idx.shape[0]:
            raise UsageError(f"Walsh-CG: targets of shape {y.shape} for {idx.shape[0]} points")
        if ridge < 0 or not np.isfinite(ridge):
            raise UsageError(f"ridge={ridge} must be a finite number >= 0")
        check_memory(self.D, idx.size)
        t0, n = time.perf_counter(), idx.size
        A = LinearOperator((n, n), matvec=lambda v: self.matvec(idx, v, ridge), dtype=np.float64)
        blas = threadpool_limits(1, user_api="blas")  # small solves: threads only spin
        pre, facts = self.preconditioner(idx, ridge) if precondition else (None, {})
        M = None if pre is None else LinearOperator((n, n), matvec=pre, dtype=np.float64)
        count = [0]

        def tick(_):
            count[0] += 1

        with blas:
            alpha, info = cg(A, y, x0=x0, rtol=rtol, atol=0.0, M=M, callback=tick,
                             maxiter=maxiter or 20 * n + 1000)  # fmt: skip
        ynorm = float(np.linalg.norm(y)) or 1.0
        res = float(np.linalg.norm(y - self.matvec(idx, alpha, ridge))) / ynorm
        return {
            "alpha": alpha, "iterations": count[0], "residual": res, "converged": info == 0,
            "seconds": time.perf_counter() - t0, "k0": facts.get("k0"),
            "features": facts.get("features", 0), "method": SOLVER,
        }  # fmt: skip

    def predict(self, idx, alpha, at=None) -> np.ndarray:
        """Predictions K(at, S) alpha.

        Args:
            idx: training indices.
            alpha: the solution, shape (n,).
            at: indices to predict at; None: every point of the cube.

        Returns:
            float64 array, shape (len(at),) or (2^D,).
        """
        f = self.convolve(np.asarray(idx, np.int64), alpha)
        return f if at is None else f[np.asarray(at, np.int64)]

    def complement(self, idx) -> np.ndarray:
        """The indices of every point not in ``idx`` (sorted).

        Args:
            idx: training indices.

        Returns:
            int64 array.
        """
        mask = np.ones(self.size, bool)
        mask[np.asarray(idx, np.int64)] = False
        return np.flatnonzero(mask)


def regression_estimates(arch, target, n: int, n_test: int) -> list | None:
    """A kernel search's memory estimates when Walsh-CG serves its largest n
    (``memory.check_sizes`` triples): the solver's vectors, and the dense
    path's at the largest n below n where it is still preferred; None where
    the dense path serves n (``memory.regression_estimates`` then applies).

    Args:
        arch: a parsed architecture.
        target: a parsed target.
        n: the largest pool size.
        n_test: test points.

    Returns:
        list of ``("bytes", amount, what)`` or None.
    """
    D = read_set(arch, target.domain)
    if not prefer(D, n, n_test):
        return None
    m = int(n)
    while m > 1 and prefer(D, m, n_test):
        m = int(m / 1.25)
    what = f"the Walsh-CG solver at D={D} (vectors of 2^{D}), n={n}, n_test={n_test}"
    dense = memory.regression_estimates(target, m, n_test) if m > 1 else []
    return [("bytes", solve_bytes(D, n) + 16.0 * D * (n + n_test), what)] + dense


def search_seconds(cell: dict, n_reach: float) -> float | None:
    """A cost-model hook (``ntkgap.runs.cost.register_search_cost``'s
    signature): the estimated seconds of an ``ntk_search`` cell whose seeds
    reach ``n_reach`` where the Walsh route serves its largest n, else None.
    Per seed: the doubling evaluations from n_min to n_reach and about three
    bisection steps, each ``walsh_seconds`` (five solves each for the tuned
    ridge), plus one split of n_test points per evaluation.

    Args:
        cell: a filled ``ntk_search`` cell (``arch``, ``target``, ``n_min``,
            ``n_test``, ``seeds``, ``ridge``).
        n_reach: the n the seeds' searches are expected to reach.

    Returns:
        seconds (float) or None.
    """
    from ntkgap.nets.arch import parse_arch  # import cost: the cost model's path only
    from ntkgap.targets import parse_target

    arch, target = parse_arch(cell["arch"]), parse_target(cell["target"])
    D, top, n_test = read_set(arch, target.domain), int(n_reach), int(cell["n_test"])
    if not prefer(D, top, n_test):
        return None
    ns, n = [], float(cell.get("n_min", 16))
    while n < top:
        ns.append(n)
        n *= 2
    ns += [top] * 4
    solves = 5 if isinstance(cell.get("ridge"), str) else 1
    each = [min(walsh_seconds(D, int(m)), dense_seconds(m, n_test)) for m in ns]
    return len(cell["seeds"]) * (solves * sum(each) + 2.5e-6 * n_test * len(ns))
