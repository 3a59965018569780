"""One seed's kernel predictor on the hypercube by the Walsh-CG solver
(``ntkgap.kernels.walsh_krr``): the matrix-free counterpart of
:class:`~ntkgap.kernels.ntk_predictor.NestedCurve`'s Cholesky factors,
which delegates to it at the n where the dense path would cost more
(``walsh_krr.prefer``). Where n is small (``walsh_krr.DIRECT_MAX``) and
the curve's solver is "auto", the training Gram is read from the kernel row
at i XOR j and solved by Cholesky (``walsh_krr.DIRECT``), the predictions
still one convolution: what makes a test set of half the cube cheap at
every n.

The pool, its labels and the test points are the shared split's
(``ntkgap.targets.split``), so the answers are those of the dense path up to
CG's tolerance (tests compare them). Nested: each n's solve starts from the
solution at the previous n asked for (its first entries, zeros for the new
points), per ridge value; the tuned ridge solves once per ``RIDGE_GRID``
value on the pool less its validation points (warm-started the same way),
then once at the whole pool with the chosen value. Predictions cost one
more pair of transforms whatever the number of test points, so the test
MSE is exact over the split's whole test set (half the cube when
``n_test`` asks for it).
"""

from __future__ import annotations

import numpy as np

from ntkgap.errors import UsageError
from ntkgap.kernels import walsh_krr
from ntkgap.nets.train_config import validation_size
from ntkgap.targets.split import split


class WalshCurve:
    """Walsh-CG solves of one seed's nested pools (see the module doc).

    Attributes:
        D: the read set's size; ``system``: the :class:`~walsh_krr.WalshSystem`.
    """

    def __init__(self, curve, D: int):
        """Args: curve: the NestedCurve it serves (its arch, target, seed,
        n_test, ridge, kind, variance and label rule); D: ``read_set``."""
        self.curve, self.D = curve, int(D)
        walsh_krr.check_memory(self.D, 0)
        self.system = walsh_krr.WalshSystem.of(curve.arch, self.D, curve.kind)
        self._warm: dict = {}

    def pool(self, n: int):
        """(pool indices, labels, test indices, test labels, split facts) at
        n; None when the pool repeats a point of the read set (ridgeless
        CG would face a singular system: the dense path's jitter rule
        serves it)."""
        c = self.curve
        sp = split(c.target, n, seed=c.seed, n_test=c.n_test)
        x = np.concatenate([sp.x_train, sp.x_val])[:, : self.D]
        idx = walsh_krr.indices(x)
        if np.unique(idx).size < idx.size:
            return None
        y = c.pool_labels(np.concatenate([sp.y_train, sp.y_val]), n)
        return idx, y, walsh_krr.indices(sp.x_test[:, : self.D]), sp.y_test, sp.info()

    def _solve(self, key, idx, y, ridge):
        D, n, how = self.D, idx.size, self.curve.solver
        cheaper = walsh_krr.direct_seconds(D, n) < walsh_krr.solve_seconds(D, n)
        if how == walsh_krr.DIRECT or (how != walsh_krr.SOLVER and cheaper
                                       and n <= walsh_krr.DIRECT_MAX):  # fmt: skip
            return self.system.solve_direct(idx, y, ridge=ridge)
        prev = self._warm.get(key)
        x0 = None
        if prev is not None:
            x0 = np.zeros(n)
            k = min(n, prev.size)
            x0[:k] = prev[:k]
        r = self.system.solve(idx, y, ridge=ridge, x0=x0)
        self._warm[key] = r["alpha"]
        return r

    def at(self, n: int, ridge_grid, *, return_predictions: bool = False) -> dict | None:
        """The predictor on the first n pool points, scored on the test points:
        the dict ``NestedCurve.at`` returns, with ``solver`` ("walsh-cg", or
        "walsh-direct" where the curve's solver is that or "auto" and the
        training Gram is small enough that Cholesky of it is the cheaper),
        ``cg_iterations`` (all solves of this n), ``cg_residual`` (the final
        solve's relative residual) and ``precond_features``; None where
        :meth:`pool` refuses.

        Args:
            n: pool size.
            ridge_grid: the tuned ridge's candidates (relative to the diagonal).
            return_predictions: also return the test predictions.

        Returns:
            dict or None.
        """
        got = self.pool(n)
        if got is None:
            return None
        idx, y, tidx, yt, info = got
        c, g0, extra, iters = self.curve, self.system.g0, {}, 0
        if isinstance(c.ridge, str):
            best, extra, iters = self._tune(idx, y, n, ridge_grid)
            ridge = best * g0
        else:
            ridge = float(c.ridge)
        r = self._solve(("pool", ridge), idx, y, ridge)
        f = self.system.convolve(idx, r["alpha"])
        pred, fit = f[tidx], f[idx]
        var = c.variance
        sq = (pred - yt) ** 2
        out = {
            "test_mse": float(np.mean(sq)) / var,
            "test_mse_se": float(np.std(sq) / np.sqrt(sq.size)) / var,
            "train_mse": float(np.mean((fit - y) ** 2)) / var,
            **info,
            "ridge": ridge, "jitter": r.get("jitter", 0.0), "rcond": None, "note": "",
            "factor_n": int(n), "cg_iterations": iters + r["iterations"],
            "solver": r["method"],
            "cg_residual": r["residual"], "cg_converged": r["converged"],
            "precond_features": r["features"],
            **extra,
        }  # fmt: skip
        if return_predictions:
            out["test_predictions"] = pred
        return out

    def _tune(self, idx, y, n, ridge_grid):
        """The grid value with the lowest validation MSE (ties: the smallest),
        the facts ``NestedCurve._tune`` reports, and the CG iterations spent."""
        c, g0 = self.curve, self.system.g0
        m = n - validation_size(n)
        if m < 1:
            raise UsageError(f"ridge=tuned: n={n} leaves no points after the validation split")
        table, iters = {}, 0
        for f in ridge_grid:
            r = self._solve(("val", f), idx[:m], y[:m], f * g0)
            iters += r["iterations"]
            pred = self.system.predict(idx[:m], r["alpha"], idx[m:n])
            table[f] = float(np.mean((pred - y[m:n]) ** 2))
        best = min(ridge_grid, key=lambda f: (table[f], f))
        facts = {
            "ridge_tuned": True,
            "ridge_factor": best,
            "ridge_val_mse": {repr(f): v / c.variance for f, v in table.items()},
        }
        return best, facts, iters
