"""Scaling fits and the statistics every claim uses, in one place.

- power laws and n*(eps) read from a learning curve;
- the median n* over seeds with censoring (seed errors are bimodal, so the
  mean of seed curves is not a typical seed) and a distribution-free
  order-statistic CI for it;
- the percentile bootstrap over seeds, which states its number of distinct
  resamples and refuses below ``MIN_SEEDS_FOR_CI`` seeds;
- a two-sided equivalence test (TOST) on mean log ratios;
- the growth of n* with depth: exponential vs polynomial by AIC, chosen only
  from ``MIN_DEPTHS_FOR_MODEL_CHOICE`` resolved depths, with the fit's
  residual spread reported as such (never a bootstrap over deterministic
  theory points), and the per-level growth factor with a seed-level CI.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

# below this many seeds no CI is given (a bootstrap over m seeds has only
# C(2m-1, m) distinct resamples: 10 at m = 3, 6435 at m = 8)
MIN_SEEDS_FOR_CI = 8
# exponential-vs-polynomial model choice needs this many resolved depths
MIN_DEPTHS_FOR_MODEL_CHOICE = 4


def loglog_fit(x, y) -> dict:
    """Power-law fit y ~ a x^-b by least squares on log y = log a - b log x.

    Args:
        x: sample sizes (points with x <= 0 or y <= 0 are ignored).
        y: errors, one per x.

    Returns:
        dict with ``a`` and ``b`` (floats; both None with fewer than two
        usable points).
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = (x > 0) & (y > 0)
    if ok.sum() < 2:
        return {"a": None, "b": None}
    slope, icpt = np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)
    return {"a": float(np.exp(icpt)), "b": float(-slope)}


def power_law_offset_fit(x, y) -> dict:
    """Power law with offset y ~ a x^-b + c (c >= 0), least squares on log y.

    Args:
        x: sample sizes.
        y: errors, one per x.

    Returns:
        dict with ``a``, ``b`` and ``c`` (floats; c = 0.0 and a, b from
        ``loglog_fit`` with fewer than three points).
    """
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
    """First n where the (log-log interpolated) error curve reaches eps.

    Never extrapolates: if no measured point is <= eps the answer is
    censored (n_star None, "> n_max"); if the first point already is, n* is
    reported as <= n_min (``left_censored``).

    Args:
        ns: the n grid.
        errs: the error at each n.
        eps: the error level.

    Returns:
        dict with ``n_star`` (float or None), ``censored``,
        ``left_censored`` and ``n_max`` (the largest n).
    """
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


def n_star_per_seed(ns, errs_by_seed, eps) -> list[dict]:
    """``n_star`` of every seed's own curve.

    Args:
        ns: the n grid.
        errs_by_seed: seeds x len(ns) errors.
        eps: error level.

    Returns:
        one ``n_star`` dict per seed (feed them to ``median_n_star``).
    """
    return [n_star(ns, row, eps) for row in np.asarray(errs_by_seed, float)]


def _interval(item) -> tuple[float, float]:
    """(lowest, highest) value a possibly censored per-seed n* can have.

    Accepts a number (``inf`` = right-censored with no bound), a (low, high)
    pair, a ``search.seed_result`` dict (status resolved / left / right) or
    an ``n_star`` dict (censored / left_censored)."""
    if isinstance(item, dict):
        if "status" in item:
            if item["status"] == "resolved":
                return float(item["n_star"]), float(item["n_star"])
            if item["status"] == "left":
                return 0.0, float(item["bound"])
            if item["status"] == "right":
                return float(item["bound"]), math.inf
            raise ValueError(f"per-seed n*: status={item['status']!r} (search not finished)")
        if item.get("censored"):
            return float(item["n_max"]), math.inf
        if item.get("left_censored"):
            return 0.0, float(item["n_star"])
        return float(item["n_star"]), float(item["n_star"])
    if isinstance(item, (tuple, list)):
        return float(item[0]), float(item[1])
    v = float(item)
    if not v >= 0:
        raise ValueError(f"per-seed n*: value={v} must be >= 0 (inf for right-censored)")
    return v, v


def seed_interval(item) -> tuple[float, float]:
    """The (lowest, highest) value of one seed's possibly censored quantity.

    Args:
        item: a number (``inf``: right-censored with no bound), a (low,
            high) pair, a ``search.seed_result`` dict or an ``n_star`` dict.

    Returns:
        (low, high): equal for a resolved value, (0, n_min] for a
        left-censored n*, (n_max, inf) for a right-censored one.
    """
    return _interval(item)


def _middle(sorted_vals: np.ndarray) -> float:
    """Median of sorted values; for an even count the geometric mean of the
    middle pair (n* lives on a log scale); NaN when that pair is (0, inf)."""
    m = len(sorted_vals)
    if m % 2:
        return float(sorted_vals[m // 2])
    a, b = float(sorted_vals[m // 2 - 1]), float(sorted_vals[m // 2])
    if a == b:
        return a
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.exp(0.5 * (np.log(a) + np.log(b))))


def order_statistic_ci(m: int, level: float = 0.95):
    """The symmetric distribution-free CI for a median from m samples.

    [X_(j), X_(m+1-j)] covers the median of any continuous distribution
    with probability P(j <= B <= m - j), B ~ Binomial(m, 1/2), exactly; j is
    the largest index whose coverage is still >= level.

    Args:
        m: number of samples.
        level: the least coverage asked for.

    Returns:
        (j, coverage) with j 1-based, or (None, coverage of [X_(1), X_(m)])
        when even the full range does not reach ``level``.

    References:
        Conover, Practical Nonparametric Statistics (3rd ed., 1999), sec. 3.2
        (confidence interval for a quantile).
    """
    best = None
    for j in range(1, m // 2 + 1):
        cov = float(stats.binom.cdf(m - j, m, 0.5) - stats.binom.cdf(j - 1, m, 0.5))
        if cov >= level:
            best = (j, cov)
        else:
            break
    if best is None:
        return None, float(1 - 2 * 0.5**m) if m >= 1 else 0.0
    return best


def _median_status(med_lo: float, med_hi: float) -> str:
    """How the median is known from its lowest and highest possible values.

    Args:
        med_lo: the median of the seeds' lowest values (0: left-censored).
        med_hi: the median of their highest values (inf: right-censored).

    Returns:
        'resolved' (equal and finite), 'left' (only an upper bound),
        'right' (only a lower bound), 'interval' (both bounds) or
        'undetermined' (no bound, or a NaN middle pair).
    """
    if np.isnan(med_lo) or np.isnan(med_hi):
        return "undetermined"
    if med_lo == med_hi and math.isfinite(med_lo):
        return "resolved"
    if med_lo == 0 and math.isfinite(med_hi):
        return "left"
    if med_hi == math.inf and med_lo > 0:
        return "right"
    if med_lo == 0:
        return "undetermined"
    return "interval"


def median_censored(items, *, level: float = 0.95, min_seeds: int = MIN_SEEDS_FOR_CI) -> dict:
    """Median over seeds of a possibly censored quantity, with an
    order-statistic CI.

    Each seed's value is an interval: exact for a resolved seed, (0, n_min]
    for a left-censored one, (n_max, inf) for a right-censored one. Order
    statistics are monotone in every value, so the median lies between the
    median of the lowest values and that of the highest; it is resolved only
    when the two agree (that is, when the middle order statistic is not
    censored), otherwise ``status`` says how it is censored. The CI takes its
    lower end from the lowest values and its upper end from the highest, so
    censoring only widens it (coverage stays >= the stated one).

    Args:
        items: per-seed values (see ``_interval``: numbers, ``search``
            results or ``n_star`` dicts).
        level: the least coverage of the CI.
        min_seeds: below this many seeds no CI is given.

    Returns:
        dict with ``value`` (None unless resolved), ``status`` ('resolved',
        'left': median <= ``bound_hi``, 'right': median > ``bound_lo``,
        'interval': between them, 'undetermined'), ``bound_lo``/``bound_hi``
        (None for 0 / inf), ``lo``/``hi`` (None when refused or when that end
        is censored: ``lo_censored``/``hi_censored``), ``coverage`` (exact,
        for continuous distributions), ``seeds``, ``censored`` counts,
        ``method`` and ``reason`` (why there is no CI, else None).

    References:
        Conover, Practical Nonparametric Statistics (3rd ed., 1999), sec. 3.2.
    """
    iv = [_interval(x) for x in items]
    m = len(iv)
    if m == 0:
        raise ValueError("median_censored: no values")
    lows = np.sort([a for a, _ in iv])
    highs = np.sort([b for _, b in iv])
    med_lo, med_hi = _middle(lows), _middle(highs)
    status = _median_status(med_lo, med_hi)
    out = {
        "value": med_lo if status == "resolved" else None,
        "status": status,
        "bound_lo": med_lo if 0 < med_lo < math.inf else None,
        "bound_hi": med_hi if 0 < med_hi < math.inf else None,
        "lo": None,
        "hi": None,
        "lo_censored": False,
        "hi_censored": False,
        "level": level,
        "coverage": None,
        "seeds": m,
        "censored": {
            "left": int(sum(a == 0 and b > 0 for a, b in iv)),
            "right": int(sum(b == math.inf for _, b in iv)),
        },
        "method": None,
        "reason": None,
    }
    if m < min_seeds:
        out["reason"] = f"{m} seeds, no CI (a CI needs >= {min_seeds} seeds)"
        return out
    j, cov = order_statistic_ci(m, level)
    if j is None:
        out["reason"] = (
            f"{m} seeds, no CI: even [min, max] covers the median only with "
            f"probability {cov:.4f} < {level}"
        )
        return out
    lo, hi = float(lows[j - 1]), float(highs[m - j])
    out.update(
        lo=lo if lo > 0 else None,
        hi=hi if hi < math.inf else None,
        lo_censored=not lo > 0,
        hi_censored=not hi < math.inf,
        coverage=cov,
        method=(
            f"distribution-free order-statistic interval [X_({j}), X_({m + 1 - j})] of {m} "
            f"seeds, exact coverage {cov:.4f} (Binomial({m}, 1/2)) for any continuous "
            "distribution; censored seeds only widen it"
        ),
    )
    return out


def median_n_star(per_seed, *, level: float = 0.95, min_seeds: int = MIN_SEEDS_FOR_CI) -> dict:
    """n* across seeds read from the median seed (see ``median_censored``).

    Args:
        per_seed: one n* per seed: ``search.result`` entries, ``n_star``
            dicts, or numbers (``inf`` for right-censored).
        level, min_seeds: as ``median_censored``.

    Returns:
        the ``median_censored`` dict.
    """
    return median_censored(per_seed, level=level, min_seeds=min_seeds)


def growth_factor_per_level(
    per_depth: dict, *, level: float = 0.95, min_seeds: int = MIN_SEEDS_FOR_CI
) -> dict:
    """Per-level growth factor of n* with L, with a seed-level CI.

    For every seed the factor between consecutive depths is n*_L' / n*_L
    per level, (n*_L' / n*_L)^(1 / (L' - L)); over all depths it is the
    seed's (n*_Lmax / n*_Lmin)^(1 / (Lmax - Lmin)). Censored n* give
    censored ratios (interval arithmetic on the per-seed intervals). The
    median over seeds and its order-statistic CI come from
    ``median_censored``.

    Args:
        per_depth: {L: [per-seed n*, ...]}, the same seeds in the same order
            at every depth.
        level, min_seeds: as ``median_censored``.

    Returns:
        dict with ``overall`` (the median factor per level over all depths)
        and ``steps`` ([{"L": [L, L'], ...median_censored}]).
    """
    depths = sorted(per_depth)
    if len(depths) < 2:
        raise ValueError("growth_factor_per_level: give at least two depths")
    m = {len(per_depth[L]) for L in depths}
    if len(m) != 1:
        raise ValueError(f"growth_factor_per_level: seed counts differ across depths {sorted(m)}")
    iv = {L: [_interval(x) for x in per_depth[L]] for L in depths}

    def ratios(a, b):
        k = b - a
        out = []
        for (alo, ahi), (blo, bhi) in zip(iv[a], iv[b]):
            low = blo / ahi if ahi > 0 else math.inf
            high = bhi / alo if alo > 0 else math.inf
            out.append((low ** (1 / k), high ** (1 / k)))
        return out

    steps = [
        {"L": [a, b], **median_censored(ratios(a, b), level=level, min_seeds=min_seeds)}
        for a, b in zip(depths, depths[1:])
    ]
    overall = median_censored(ratios(depths[0], depths[-1]), level=level, min_seeds=min_seeds)
    return {"overall": overall, "steps": steps}


def equivalence_test(
    log_ratios, margin: float, *, alpha: float = 0.05, min_seeds: int = MIN_SEEDS_FOR_CI
) -> dict:
    """Two one-sided tests (TOST) of |mean log ratio| < margin.

    The (1 - 2 alpha) Student-t CI of the mean over seeds (m - 1 degrees of
    freedom) decides: inside (-margin, +margin) -> "equivalent" (both
    one-sided tests reject at level alpha); wholly above +margin or below
    -margin -> "different"; otherwise "inconclusive". Below ``min_seeds``
    finite values the verdict is "no CI".

    Args:
        log_ratios: one log ratio per seed (e.g. log10 NTK error / net error);
            non-finite entries are dropped and counted.
        margin: the equivalence margin (> 0), on the same log scale.
        alpha: level of each one-sided test.
        min_seeds: least number of finite values for a verdict.

    Returns:
        dict with ``verdict``, ``value`` (the mean), ``lo``/``hi`` (the CI),
        ``p`` (the TOST p-value: the larger one-sided one), ``seeds``,
        ``dropped``, ``margin``, ``method`` and ``reason``.

    References:
        Schuirmann, J. Pharmacokin. Biopharm. 15, 657 (1987).
    """
    if not margin > 0:
        raise ValueError(f"equivalence_test: margin={margin} must be > 0")
    x = np.asarray(log_ratios, float).ravel()
    ok = np.isfinite(x)
    x, dropped = x[ok], int((~ok).sum())
    m = len(x)
    method = (
        f"TOST: two one-sided t-tests at alpha={alpha}, i.e. the {100 * (1 - 2 * alpha):g}% "
        f"Student-t CI of the mean ({m} seeds, {m - 1} df) against +-{margin}"
    )
    out = {
        "verdict": "no CI",
        "value": float(x.mean()) if m else None,
        "lo": None,
        "hi": None,
        "p": None,
        "seeds": m,
        "dropped": dropped,
        "margin": margin,
        "method": method,
        "reason": None,
    }
    if m < min_seeds:
        out["reason"] = f"{m} seeds, no CI (a CI needs >= {min_seeds} seeds)"
        return out
    mean, se = float(x.mean()), float(x.std(ddof=1) / math.sqrt(m))
    t = float(stats.t.ppf(1 - alpha, m - 1))
    lo, hi = mean - t * se, mean + t * se
    if se > 0:
        p_low = float(stats.t.sf((mean + margin) / se, m - 1))  # H0: mean <= -margin
        p_high = float(stats.t.cdf((mean - margin) / se, m - 1))  # H0: mean >= +margin
        p = max(p_low, p_high)
    else:
        p = 0.0 if abs(mean) < margin else 1.0
    if -margin < lo and hi < margin:
        verdict = "equivalent"
    elif lo > margin or hi < -margin:
        verdict = "different"
    else:
        verdict = "inconclusive"
    out.update(verdict=verdict, lo=lo, hi=hi, p=p)
    return out


def _ic(rss, n, k):
    rss = max(rss, 1e-300)
    return n * np.log(rss / n) + 2 * k, n * np.log(rss / n) + k * np.log(n)


def growth_fit(L, nstar, *, min_depths: int = MIN_DEPTHS_FOR_MODEL_CHOICE) -> dict:
    """log n* = a + L log beta (exponential) vs log n* = a + p log L
    (polynomial), by least squares on log n*; the model is chosen by AIC.

    Both models have 2 parameters, so AIC and BIC pick the same. A depth
    whose n* is missing (None, NaN, inf: censored) is dropped and counted;
    with fewer than ``min_depths`` resolved depths both fits are still
    reported but ``preferred`` is "too few depths". The spread of the
    residuals about each fit (``residual_sd``, log n* units, with n - 2
    degrees of freedom) says how well the curve fits; for deterministic
    theory points it is NOT a confidence interval, and none is given.

    Args:
        L: depths (> 0).
        nstar: n* per depth.
        min_depths: least number of resolved depths for a model choice.

    Returns:
        dict with ``exponential`` (``beta``), ``polynomial`` (``p``), each
        with ``intercept``, ``slope``, ``rss``, ``aic``, ``bic``,
        ``residual_sd``; ``preferred`` ("exponential", "polynomial" or
        "too few depths"), ``delta_aic`` (polynomial minus exponential),
        ``depths`` (used), ``dropped`` and ``method``.
    """
    L = np.asarray(L, float)
    y = np.array([np.nan if v is None else float(v) for v in np.ravel(nstar)], float)
    ok = np.isfinite(y) & (y > 0)
    L, y = L[ok], np.log(y[ok])
    out = {
        "depths": L.tolist(),
        "dropped": int((~ok).sum()),
        "method": "least squares on log n*; model choice by AIC; residual_sd is the fit's "
        "residual spread, not a CI",
    }
    if len(L) < 2:
        out.update(exponential=None, polynomial=None, preferred="too few depths", delta_aic=None)
        return out
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
            "residual_sd": float(np.sqrt(rss / (len(L) - 2))) if len(L) > 2 else None,
        }
    out["exponential"]["beta"] = float(np.exp(out["exponential"]["slope"]))
    out["polynomial"]["p"] = out["polynomial"]["slope"]
    out["delta_aic"] = float(out["polynomial"]["aic"] - out["exponential"]["aic"])
    if len(L) < min_depths:
        out["preferred"] = "too few depths"
    else:
        out["preferred"] = "exponential" if out["delta_aic"] > 0 else "polynomial"
    return out


def distinct_resamples(m: int) -> int:
    """Number of distinct bootstrap resamples (multisets) of m seeds.

    Args:
        m: the number of seeds.

    Returns:
        int C(2m-1, m); 0 when m <= 0.
    """
    return math.comb(2 * m - 1, m) if m > 0 else 0


def bootstrap(
    statistic,
    samples,
    *,
    seed: int,
    B: int = 1000,
    level: float = 0.95,
    min_seeds: int = 1,
    vectorized: bool = False,
) -> dict:
    """Percentile bootstrap over the first axis of ``samples`` (seeds).

    ``statistic(resampled) -> float``; None/NaN results (e.g. a censored n*)
    are dropped and counted in ``dropped``: a CI from few surviving
    resamples is biased, so callers should check it. With fewer than
    ``min_seeds`` seeds no CI is given (``lo``/``hi`` None, ``reason`` says
    why); claims use ``seed_bootstrap``, which sets it to MIN_SEEDS_FOR_CI.

    Args:
        statistic: function of a (resampled) array; with ``vectorized`` it
            gets all B resamples at once, shape (B, m, ...), and returns B values.
        samples: array with seeds on the first axis.
        seed: RNG seed of the resampling.
        B: number of resamples.
        level: two-sided level of the percentile interval.
        min_seeds: least number of seeds for a CI.
        vectorized: see ``statistic``.

    Returns:
        dict with ``value``, ``lo``, ``hi``, ``level``, ``dropped``, ``seeds``,
        ``distinct_resamples`` (C(2m-1, m)), ``B``, ``method``, ``reason``.
    """
    samples = np.asarray(samples, dtype=float)
    m = len(samples)
    point = statistic(samples[None])[0] if vectorized else statistic(samples)
    out = {
        "value": point,
        "lo": None,
        "hi": None,
        "level": level,
        "dropped": 0,
        "seeds": m,
        "distinct_resamples": distinct_resamples(m),
        "B": B,
        "method": f"percentile bootstrap over {m} seeds, {B} resamples "
        f"({distinct_resamples(m)} distinct possible)",
        "reason": None,
    }
    if m < min_seeds:
        out["reason"] = (
            f"{m} seeds, no CI (a CI needs >= {min_seeds} seeds; a bootstrap over {m} seeds "
            f"has {distinct_resamples(m)} distinct resamples)"
        )
        return out
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, m, (B, m))
    if vectorized:
        vals = np.asarray(statistic(samples[idx]), float)
    else:
        vals = np.array(
            [np.nan if (v := statistic(samples[i])) is None else float(v) for i in idx], float
        )
    vals = vals[np.isfinite(vals)]
    out["dropped"] = int(B - len(vals))
    if len(vals):
        lo, hi = np.quantile(vals, [(1 - level) / 2, (1 + level) / 2])
        out.update(lo=float(lo), hi=float(hi))
    else:
        out["reason"] = "every resample's statistic was undefined"
    return out


def seed_bootstrap(statistic, samples, *, seed: int, B: int = 1000, **kw) -> dict:
    """``bootstrap`` that refuses a CI below MIN_SEEDS_FOR_CI seeds (for claims).

    Args:
        statistic: function of a (resampled) array, as for ``bootstrap``.
        samples: array with seeds on the first axis.
        seed: RNG seed of the resampling.
        B: number of resamples.
        **kw: further ``bootstrap`` arguments (``min_seeds`` defaults to
            MIN_SEEDS_FOR_CI).

    Returns:
        ``bootstrap``'s dict (``value``, ``lo``, ``hi``, ``level``,
        ``dropped``, ``seeds``, ``distinct_resamples``, ``B``, ``method``,
        ``reason``).
    """
    kw.setdefault("min_seeds", MIN_SEEDS_FOR_CI)
    return bootstrap(statistic, samples, seed=seed, B=B, **kw)
