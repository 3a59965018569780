"""The infinite-width NTK (or NNGP) regression predictor of a target from n
random samples, and its test error relative to the target's variance:
ridgeless, with a given ridge, or with its ridge tuned on the validation
split the trained nets use for early stopping (``ridge="tuned"``).

Nested: a seed's pools are nested in n (``ntkgap.targets.split``), so
:class:`NestedCurve` keeps one Gram and one Cholesky factor per ridge value
at the largest n asked for (grown by block Cholesky as larger n are asked,
``ntkgap.kernels.krr.extend``) and solves every smaller n from the factor's
leading block: a whole learning curve, or an n* search, costs about one
factorization per seed (per ridge value for the tuned ridge). The jitter of
a factor is the one ``krr``'s rule chooses at its largest n, and applies to
every smaller n (``krr``'s module doc). The Gram, the test cross Gram and
the factors grow in place in a :class:`~ntkgap.kernels.krr.Workspace`, which
a search passes from one seed's curve to the next. :func:`evaluate` is the
curve at one n.
"""

from __future__ import annotations

import numpy as np

from ntkgap._infra import memory
from ntkgap._infra.seeds import derive
from ntkgap.errors import UsageError
from ntkgap.kernels import gram as kernels
from ntkgap.kernels import krr, walsh_curve, walsh_krr
from ntkgap.nets.train_config import validation_size
from ntkgap.targets import rhm
from ntkgap.targets.split import CHUNK, split
from ntkgap.targets.variance import target_variance

#: the tuned ridge's candidates, relative to the Gram's (constant) diagonal
#: (0: ridgeless); the smallest wins ties. Short: each costs a factorization
RIDGE_GRID = (0.0, 1e-4, 1e-2, 1.0)
TUNED = "tuned"
#: solvers of a curve: by the estimated cost at each n, dense only, Walsh-CG only
AUTO, CHOLESKY = "auto", "cholesky"
SOLVERS = (AUTO, CHOLESKY, walsh_krr.SOLVER, walsh_krr.DIRECT)


class NestedCurve:
    """One seed's kernel predictor at every pool size n up to the largest
    asked for: the pool's Gram, the test points' cross Gram and a Cholesky
    factor per ridge value, grown as larger n are asked (see the module doc).

    Attributes:
        factorizations: factorizations made from scratch (a growth by block
            Cholesky is part of the factorization it grows).
        generation: bumped whenever a factor is remade with a larger jitter
            (answers given before may have used a smaller one).
        size: the pool size the Gram and factors cover.
    """

    def __init__(self, arch, target, *, seed, n_test=2000, ridge=0.0, noise=0.0, kind="ntk",
                 variance=None, workspace=None, solver=AUTO):  # fmt: skip
        """Args: as :func:`evaluate` (``ridge``: a number >= 0 or ``"tuned"``);
        ``workspace``: the :class:`~ntkgap.kernels.krr.Workspace` to grow in
        (its earlier curve is void once this one grows; None: a new one);
        ``solver``: one of SOLVERS (``"auto"``: Walsh-CG at the n where
        ``walsh_krr.prefer`` says so, else Cholesky)."""
        if isinstance(ridge, str) and ridge != TUNED:
            raise UsageError(f"ridge={ridge!r} is not allowed (allowed: a number >= 0, {TUNED!r})")
        if solver not in SOLVERS:
            raise UsageError(f"solver={solver!r} is not allowed (allowed: {', '.join(SOLVERS)})")
        self.solver, self._walsh = solver, None
        self._D = walsh_krr.read_set(arch, target.domain) if solver != CHOLESKY else None
        if solver in (walsh_krr.SOLVER, walsh_krr.DIRECT) and self._D is None:
            raise UsageError(
                f"solver={solver!r} needs a hypercube target and an fc or tree arch reading "
                f"at most D_MAX={walsh_krr.D_MAX} coordinates"
            )
        if variance is None:
            variance = target_variance(target)
        self.arch, self.target, self.seed, self.n_test = arch, target, int(seed), int(n_test)
        self.ridge, self.noise, self.kind, self.variance = ridge, float(noise), kind, variance
        self.factorizations, self.generation, self.size = 0, 0, 0
        self.K = self.kt = self.x = self.y = None
        self.factors: dict = {}  # grid factor (tuned) or 0.0 -> krr.Factor
        self._info: dict = {}
        self.ws = krr.Workspace() if workspace is None else workspace

    def grow(self, n: int) -> None:
        """Cover pools up to n points (no-op when already covered)."""
        n = int(n)
        if n <= self.size:
            return
        sp = split(self.target, n, seed=self.seed, n_test=self.n_test)
        self._info[n] = sp.info()  # the split's facts, for at(n)
        dom, kind = self.target.domain, self.kind
        xi = self.arch.inputs(dom, np.concatenate([sp.x_train, sp.x_val]))
        y = self.pool_labels(np.concatenate([sp.y_train, sp.y_val]), n)
        m = self.size
        if m == 0:
            self.ws.owner = self
            self.xt, self.y_test = self.arch.inputs(dom, sp.x_test), sp.y_test
            K = kernels.gram(self.arch, xi, kind=kind)  # into the workspace at the next growth
        else:
            self._check_owner()
            k12 = kernels.gram(self.arch, self.x, xi[m:], kind=kind)
            k22 = kernels.gram(self.arch, xi[m:], kind=kind)  # both before K moves
            _, K = krr.grow_square(self.ws.take("K", n * n), self.K, n)
            K[:m, m:], K[m:, :m], K[m:, m:] = k12, k12.T, k22
        self._grow_kt(m, n, xi)
        self.K, self.x, self.y, self.size = K, xi, y, n
        self._refactor(m)

    def pool_labels(self, y, n: int) -> np.ndarray:
        """The fitted labels of a pool of n points: ``y`` plus the label noise,
        drawn per chunk of pool points, so nested in n."""
        if self.noise > 0:
            eps = [np.random.default_rng(derive(self.seed, "noise", k)).standard_normal(CHUNK)
                   for k in range(-(-n // CHUNK))]  # fmt: skip
            y = y + np.sqrt(self.noise) * np.concatenate(eps)[:n]
        return y

    def _walsh_at(self, n: int, return_predictions: bool):
        """The answer at n by Walsh-CG where the solver choice says so, else None."""
        if self._D is None:
            return None
        if self.solver == AUTO and not walsh_krr.prefer(self._D, n, self.n_test):
            return None
        if self._walsh is None:
            self._walsh = walsh_curve.WalshCurve(self, self._D)
        return self._walsh.at(n, RIDGE_GRID, return_predictions=return_predictions)

    def _check_owner(self) -> None:
        """Refuse to read buffers a later curve of the workspace has taken."""
        if self.ws.owner is not self:
            raise RuntimeError("NestedCurve: its workspace now belongs to another curve")

    def _grow_kt(self, m: int, n: int, xi) -> None:
        """The test points' cross Gram from m to n pool points: columns of one
        (n_test, capacity) buffer, so ``kt[:, :n]`` is a view at every n."""
        rows = self.xt.shape[0]
        cap = self.kt.shape[1] if self.kt is not None else 0
        if n > cap:
            # room for the capacity where it fits (a large test set: n only)
            fits = 8.0 * rows * self.ws.capacity <= memory.limit() / 4
            cap = max(n, self.ws.capacity) if fits else n
            kt = self.ws.take("kt", rows * cap, reserve=rows * cap)
            kt = kt[: rows * cap].reshape(rows, cap)
            if m:  # a buffer too small for n: its columns copied over
                old = self.kt[:, :m]
                kt[:, :m] = old.copy() if np.shares_memory(old, kt) else old
            self.kt = kt
        step = memory.predict_block_rows(n)
        for i in range(0, rows, step):
            self.kt[i : i + step, m:n] = kernels.gram(self.arch, self.xt[i : i + step], xi[m:],
                                                      kind=self.kind)  # fmt: skip

    def _ridges(self) -> dict:
        if not isinstance(self.ridge, str):
            return {0.0: float(self.ridge)}
        diag = np.diag(self.K)
        scale = float(diag[0]) or 1.0
        if np.max(np.abs(diag - scale)) > 1e-12 * abs(scale):
            raise UsageError("ridge=tuned: the nested tuned ridge needs a constant Gram diagonal")
        return {f: f * scale for f in RIDGE_GRID}

    def _refactor(self, m: int) -> None:
        """Grow each ridge's factor from m to self.size points, or remake it."""
        K, n = self.K, self.size
        remade = False
        for f, r in self._ridges().items():
            old = self.factors.get(f)
            new = None if old is None else krr.extend(old, K[:m, m:], K[m:, m:])
            if new is None:
                new = krr.factor(K, ridge=r, out=self.ws.take(f"factor {f}", n * n))
                self.factorizations += 1
                remade |= old is not None and new.jitter != old.jitter
            self.factors[f] = new
        self.generation += remade
        assert all(fa.size == n for fa in self.factors.values())

    def _solve(self, f, n: int) -> np.ndarray:
        return krr.leading_solve(self.factors[f], n, self.y[:n])

    def at(self, n: int, *, return_predictions: bool = False) -> dict:
        """The predictor fitted on the first n pool points, scored on the test
        points: the dict :func:`evaluate` returns (and ``factor_n``, the size
        of the factor it was solved from)."""
        n = int(n)
        fast = self._walsh_at(n, return_predictions)
        if fast is not None:
            return fast
        self.grow(n)
        self._check_owner()
        extra, f = {}, 0.0
        if isinstance(self.ridge, str):
            f, extra = self._tune(n)
        alpha = self._solve(f, n)
        fac = self.factors[f]
        pred = self.kt[:, :n] @ alpha
        var = self.variance
        sq = _row_squares(pred, self.y_test)
        out = {
            "test_mse": float(np.mean(sq)) / var,
            # sampling error of the test points
            "test_mse_se": float(np.std(sq) / np.sqrt(sq.size)) / var,
            "train_mse": float(np.mean(_row_squares(self.K[:n, :n] @ alpha, self.y[:n]))) / var,
            **self._split_info(n),
            "ridge": fac.ridge, "jitter": fac.jitter, "rcond": fac.rcond, "note": fac.note,
            "factor_n": fac.size, "solver": CHOLESKY,
            **extra,
        }  # fmt: skip
        if pred.ndim == 2:  # one output per class: scored by argmax too
            out[rhm.CLASSIFICATION_RESULT] = rhm.classification_error(
                pred, rhm.predicted_classes(self.y_test)
            )
        if return_predictions:
            out["test_predictions"] = pred
        return out

    def _split_info(self, n: int) -> dict:
        """The split's facts at n (``Split.info``), computed once per n."""
        if n not in self._info:
            self._info[n] = split(self.target, n, seed=self.seed, n_test=self.n_test).info()
        return self._info[n]

    def _tune(self, n: int):
        """The RIDGE_GRID factor with the lowest validation MSE at n (the first
        n - validation_size(n) points fitted, the rest validating), and facts."""
        m = n - validation_size(n)
        if m < 1:
            raise UsageError(f"ridge=tuned: n={n} leaves no points after the validation split")
        table = {}
        for f in RIDGE_GRID:
            pred = self.K[m:n, :m] @ self._solve_m(f, m)
            table[f] = float(np.mean(_row_squares(pred, self.y[m:n])))
        best = min(RIDGE_GRID, key=lambda f: (table[f], f))
        return best, {
            "ridge_tuned": True,
            "ridge_factor": best,
            "ridge_val_mse": {repr(f): v / self.variance for f, v in table.items()},
        }

    def _solve_m(self, f, m):
        return krr.leading_solve(self.factors[f], m, self.y[:m])


def _row_squares(pred, y) -> np.ndarray:
    """Each point's squared error, summed over the outputs of a vector label
    (``rhm.regression_error``'s numerator), shape (points,)."""
    d = (pred - y) ** 2
    return d if d.ndim == 1 else np.sum(d, axis=1)


def evaluate(
    arch,
    target,
    n: int,
    *,
    seed: int,
    n_test: int = 2000,
    ridge: float | str = 0.0,
    noise: float = 0.0,
    kind: str = "ntk",
    variance: float | None = None,
    return_predictions: bool = False,
    solver: str = AUTO,
) -> dict:
    """Fit kernel regression on the pool of the shared split and score it on
    its test points (one n of a :class:`NestedCurve`).

    Args:
      arch, target: parsed architecture and target.
      n: pool size of :func:`ntkgap.targets.split.split`; the fit uses all of
        it (the points a trained net uses for training and validation together).
      seed: the split's seed (the same seed gives a trained net the same pool
        and test points).
      n_test: test points wanted.
      ridge: ridge (absolute), or ``"tuned"``: each of ``RIDGE_GRID`` (times
        the Gram's constant diagonal) is fitted on the pool less its
        validation points (:func:`ntkgap.nets.train_config.validation_size`,
        the nets' own split), the one with the lowest validation MSE is
        refitted on the whole pool; the test points are the same.
      noise: label-noise variance added to the fitted labels.
      kind: ``ntk`` or ``nngp``.
      variance: the target's variance (default: :func:`target_variance`).
      return_predictions: also return the test predictions and points.
      solver: one of SOLVERS (``NestedCurve``'s; the result's ``solver`` says
        which ran, Walsh-CG adding ``cg_iterations`` and ``cg_residual``).

    Returns:
      ``test_mse`` and ``train_mse`` relative to the variance (and
      ``test_mse_se``, the test mean's standard error; for vector labels
      the squared errors are summed over the outputs, and
      ``test_classification_error`` is the argmax error), the split's
      facts (``overlap``, ...) and the solver's (``ridge``, ``jitter``,
      ``rcond``, ``note``, ``factor_n``); tuned: also ``ridge_factor`` (the
      chosen grid value) and ``ridge_val_mse`` (validation MSE relative to
      the variance, per factor).

    References:
      Jacot, Gabriel & Hongler, "Neural Tangent Kernel", 2018.
    """
    curve = NestedCurve(arch, target, seed=seed, n_test=n_test, ridge=ridge, noise=noise,
                        kind=kind, variance=variance, solver=solver)  # fmt: skip
    out = curve.at(n, return_predictions=return_predictions)
    if return_predictions:
        out["x_test"] = split(target, n, seed=seed, n_test=n_test).x_test
    return out
