"""How far a ``predict`` question lies outside what its law was fitted on.

The law n* = c C^p (``ntkgap.verdicts.predictions.fit_law``) is fitted on
points, but the points of one family share one offset from the law (E10
scores coverage per family for this reason), so the family is the unit of
its error for a new family. With k families fitted on, the between-family
residual sd s_f has k - 2 degrees of freedom (two parameters); it needs
``MIN_FAMILIES`` = 3 for one. The new family's C is also compared with the
range of C fitted on: its distance outside it, in decades of C.

The interval ``predict`` reports is then, where the question is flagged
(too few families, or C outside the fitted range), the wider of the law's
point-level interval and the family-level one, log n*_0 +- t_{k-2} s_f
sqrt(1 + 1/k + (x_0 - xbar_f)^2 / Sxx_f) over the families' mean log C
(Draper & Smith, Applied Regression Analysis, 3rd ed., sec. 3.1, with the
family as the observation); refused (the interval [0, inf]) where k < 3 or
the distance exceeds ``MAX_DECADES`` beyond the fitted range.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

#: families the law needs for a between-family error: 2 parameters + 1 dof
MIN_FAMILIES = 3
#: the farthest a new C may lie outside the fitted range before the interval
#: is refused, in decades of C
MAX_DECADES = 0.5


def _family_means(points) -> dict:
    """{family: (mean log C, mean log n*)} over the resolved net points."""
    by = {}
    for pt in points:
        if pt.net is None or not all(map(math.isfinite, pt.net)):
            continue
        by.setdefault(pt.family, []).append((math.log(pt.C), sum(pt.net) / 2.0))
    return {f: tuple(np.mean(v, axis=0)) for f, v in by.items()}


def assess(points, law: dict, C: int, level: float = 0.95) -> dict:
    """The extrapolation record of a prediction at C from ``law``.

    Args:
        points: the Points the law was fitted on.
        law: ``fit_law``'s dict.
        C: the new family's number of constituents.
        level: the interval's nominal coverage.

    Returns:
        dict with ``families`` (fitted on), ``needed``, ``C``, ``C_range``
        ([min, max] fitted on), ``distance`` (decades of C outside that range,
        0 inside), ``flagged``, ``refused``, ``interval`` (the family-level
        interval, None where refused or not computed) and ``text``.
    """
    fam = _family_means(points)
    cs = [pt.C for pt in points if pt.net is not None]
    lo_c, hi_c = (min(cs), max(cs)) if cs else (C, C)
    dist = max(0.0, math.log10(C / hi_c), math.log10(lo_c / C))
    k = len(fam)
    flagged = k < MIN_FAMILIES or dist > 0
    refused = k < MIN_FAMILIES or dist > MAX_DECADES
    out = {
        "families": k, "needed": MIN_FAMILIES, "C": C, "C_range": [lo_c, hi_c],
        "distance": dist, "flagged": flagged, "refused": refused, "interval": None,
    }  # fmt: skip
    if flagged and not refused:
        out["interval"] = _family_interval(fam, law, C, level)
    out["text"] = _text(out)
    return out


def _family_interval(fam: dict, law: dict, C: int, level: float) -> list:
    """The prediction interval with the family as the observation."""
    xs = np.array([x for x, _ in fam.values()])
    ys = np.array([y for _, y in fam.values()])
    k = len(xs)
    resid = ys - (law["log_c"] + law["p"] * xs)
    s_f = max(law["s"], math.sqrt(float(np.sum(resid**2)) / (k - 2)))
    sxx = float(np.sum((xs - xs.mean()) ** 2))
    x0 = math.log(C)
    lever = (x0 - xs.mean()) ** 2 / sxx if sxx > 0 else math.inf
    half = float(stats.t.ppf(0.5 + level / 2.0, k - 2)) * s_f * math.sqrt(1 + 1 / k + lever)
    y0 = law["log_c"] + law["p"] * x0
    return [math.exp(y0 - half), math.exp(y0 + half)] if math.isfinite(half) else [0.0, math.inf]


def _text(e: dict) -> str:
    """The record in one line."""
    where = (
        f"C = {e['C']} inside the fitted C {e['C_range'][0]}..{e['C_range'][1]}"
        if e["distance"] == 0
        else f"C = {e['C']} lies {e['distance']:.2g} decades outside the fitted C "
        f"{e['C_range'][0]}..{e['C_range'][1]}"
    )
    head = f"law fitted on {e['families']} families (needs {e['needed']}); {where}"
    if e["refused"]:
        why = (
            "too few families for a between-family error"
            if e["families"] < e["needed"]
            else f"beyond {MAX_DECADES:g} decades"
        )
        return f"extrapolation refused ({why}): {head}; no interval"
    if e["flagged"]:
        return f"extrapolation: {head}; interval widened to the family level"
    return f"within the law's reach: {head}"
