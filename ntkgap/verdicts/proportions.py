"""Proportions of units with their exact binomial intervals, as the claim
statistics that count units (E10's winner and coverage, the sealed
predictions' winner) read them, and the fewest units at which a rule could
read "supported" at all.

References:
    Clopper & Pearson, The use of confidence or fiducial limits illustrated
    in the case of the binomial, Biometrika 26 (1934) 404-413.
"""

from __future__ import annotations

import math

from scipy import stats

from ntkgap.verdicts import rules

#: the most units ``fewest_to_support`` looks through
FEWEST_SEARCH_MAX = 1000


def clopper_pearson(k: float, m: int) -> tuple[float, float]:
    """The exact 0.95 binomial interval of k successes in m."""
    lo = 0.0 if k <= 0 else float(stats.beta.ppf(0.025, k, m - k + 1))
    hi = 1.0 if k >= m else float(stats.beta.ppf(0.975, k + 1, m - k))
    return lo, hi


def most_favourable(rule: dict, m: int, shift: float) -> tuple:
    """The counts k of m whose interval best fits ``rule``: m for ``above``,
    0 for ``below``, the two integers around m x ``shift`` for
    ``equivalence`` (the interval is narrowest and centred there)."""
    if rule["kind"] == "above":
        return (m,)
    if rule["kind"] == "below":
        return (0,)
    return tuple(sorted({min(m, max(0, math.floor(m * shift))), min(m, math.ceil(m * shift))}))


def fewest_to_support(rule: dict, shift: float) -> int | None:
    """The fewest units m at which the most favourable count reads supported
    under ``rule`` (``most_favourable``): below it the proportion cannot be
    supported whatever the data (None when not within FEWEST_SEARCH_MAX)."""
    for m in range(1, FEWEST_SEARCH_MAX + 1):
        for k in most_favourable(rule, m, shift):
            lo, hi = clopper_pearson(k, m)
            if rules.rule_verdict(rule, lo - shift, hi - shift) == rules.SUPPORTED:
                return m
    return None


def binomial(
    name, k: float, m: int, rule: dict, shift: float = 0.0, k_hi: float | None = None
) -> rules.Measured:
    """A proportion k/m with its Clopper-Pearson interval (minus ``shift``);
    with ``k_hi`` the count is only bounded, [k, k_hi] (undetermined units),
    the lower end from k and the upper from k_hi, no point value; the detail
    says when m is too few for "supported" whatever the data."""
    if m == 0:
        return rules.Measured(None, detail=f"{name}: nothing scored", verdict=rules.INCONCLUSIVE)
    k_hi = k if k_hi is None else k_hi
    lo, hi = clopper_pearson(k, m)[0], clopper_pearson(k_hi, m)[1]
    val, lo, hi = (k / m - shift if k_hi == k else None), lo - shift, hi - shift
    detail = f"{name}: {k:g} of {m}" if k_hi == k else f"{name}: {k:g} to {k_hi:g} of {m}"
    fewest = fewest_to_support(rule, shift)
    if fewest is not None and m < fewest:
        detail += (
            f" (with {m}, not even the most favourable count can read supported under this"
            f" rule: that needs >= {fewest})"
        )
    method = (
        "Clopper-Pearson 0.95 (exact binomial for a whole count; a count"
        " summing per-unit shares is read as that many successes, an approximation)"
        if k != int(k) or k_hi != int(k_hi)
        else "Clopper-Pearson 0.95 (exact binomial)"
    )
    if k_hi != k:
        method += "; a count bounded by censoring: lower end from its lower count, upper from upper"
    return rules.Measured(
        val, lo, hi, seeds=m, ci_method=method, detail=detail,
        verdict=rules.rule_verdict(rule, lo, hi),
    )  # fmt: skip
