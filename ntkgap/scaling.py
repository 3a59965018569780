"""Scaling fits with uncertainty: power laws, sample complexity n*(eps)
from a learning curve, and the growth of n* with depth (exponential vs
polynomial, chosen by AIC/BIC), with bootstrap confidence intervals."""

from __future__ import annotations

import numpy as np
from scipy import optimize


def loglog_fit(x, y) -> dict:
    """log y = log a - b log x by least squares: y ~ a x^-b."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = (x > 0) & (y > 0)
    if ok.sum() < 2:
        return {"a": None, "b": None}
    slope, icpt = np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)
    return {"a": float(np.exp(icpt)), "b": float(-slope)}


def power_law_offset_fit(x, y) -> dict:
    """y ~ a x^-b + c (c >= 0), least squares on log y."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    start = loglog_fit(x, y)
    if start["a"] is None or len(x) < 3:
        return {"a": start["a"], "b": start["b"], "c": 0.0}

    def resid(p):
        with np.errstate(all="ignore"):  # LM probes wild steps; they get large residuals
            a, b, c = np.exp(p[0]), p[1], np.exp(p[2])
            r = np.log(a * x**-b + c) - np.log(y)
        return np.where(np.isfinite(r), r, 1e6)

    best = None
    for frac in (1e-4, 0.1, 0.5, 0.9):  # a few starts for the offset: LM is local
        p0 = [np.log(start["a"]), start["b"], np.log(max(y.min() * frac, 1e-300))]
        sol = optimize.least_squares(resid, p0, method="lm", max_nfev=5000)
        if best is None or sol.cost < best.cost:
            best = sol
    sol = best
    return {"a": float(np.exp(sol.x[0])), "b": float(sol.x[1]), "c": float(np.exp(sol.x[2]))}


def n_star(ns, errs, eps) -> dict:
    """First n where the (log-log interpolated) curve reaches eps.

    Never extrapolates: if no measured point is <= eps the answer is
    censored (n_star None, "> n_max"); if the first point already is, n*
    is reported as <= n_min (``left_censored``)."""
    ns, errs = np.asarray(ns, float), np.asarray(errs, float)
    order = np.argsort(ns)
    ns, errs = ns[order], errs[order]
    below = np.nonzero(errs <= eps)[0]
    if below.size == 0:
        return {"n_star": None, "censored": True, "left_censored": False, "n_max": float(ns[-1])}
    j = below[0]
    if j == 0:
        return {
            "n_star": float(ns[0]),
            "censored": False,
            "left_censored": True,
            "n_max": float(ns[-1]),
        }
    x0, x1 = np.log(ns[j - 1]), np.log(ns[j])
    y0, y1 = np.log(max(errs[j - 1], 1e-300)), np.log(max(errs[j], 1e-300))
    t = (np.log(eps) - y0) / (y1 - y0) if y1 != y0 else 1.0
    return {
        "n_star": float(np.exp(x0 + t * (x1 - x0))),
        "censored": False,
        "left_censored": False,
        "n_max": float(ns[-1]),
    }


def _ic(rss, n, k):
    rss = max(rss, 1e-300)
    return n * np.log(rss / n) + 2 * k, n * np.log(rss / n) + k * np.log(n)


def growth_fit(L, nstar) -> dict:
    """log n* = a + L log beta (exponential) vs log n* = a + p log L
    (polynomial); both with 2 parameters, so AIC and BIC pick the same."""
    L, y = np.asarray(L, float), np.log(np.asarray(nstar, float))
    out = {}
    for name, x in (("exponential", L), ("polynomial", np.log(L))):
        slope, icpt = np.polyfit(x, y, 1)
        rss = float(np.sum((y - (icpt + slope * x)) ** 2))
        aic, bic = _ic(rss, len(L), 2)
        out[name] = {
            "intercept": float(icpt),
            "slope": float(slope),
            "rss": rss,
            "aic": aic,
            "bic": bic,
        }
    out["exponential"]["beta"] = float(np.exp(out["exponential"]["slope"]))
    out["polynomial"]["p"] = out["polynomial"]["slope"]
    if len(L) < 3:
        out["preferred"] = "undetermined"  # two points fit both models exactly
    else:
        out["preferred"] = (
            "exponential" if out["exponential"]["aic"] < out["polynomial"]["aic"] else "polynomial"
        )
    return out


def bootstrap(statistic, samples, *, seed: int, B: int = 1000, level: float = 0.95) -> dict:
    """Percentile bootstrap over the first axis of ``samples`` (seeds).

    ``statistic(resampled) -> float``; None/NaN results (e.g. a censored n*)
    are dropped and counted in ``dropped``: a CI from few surviving
    resamples is biased, so callers should check it."""
    samples = np.asarray(samples, dtype=float)
    rng = np.random.default_rng(seed)
    point = statistic(samples)
    vals = []
    for _ in range(B):
        v = statistic(samples[rng.integers(0, len(samples), len(samples))])
        if v is not None and np.isfinite(v):
            vals.append(v)
    dropped = B - len(vals)
    if not vals:
        return {"value": point, "lo": None, "hi": None, "level": level, "dropped": dropped}
    lo, hi = np.quantile(vals, [(1 - level) / 2, (1 + level) / 2])
    return {"value": point, "lo": float(lo), "hi": float(hi), "level": level, "dropped": dropped}
