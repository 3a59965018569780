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
    """The exact (Clopper-Pearson) 0.95 interval of a binomial proportion.

    Args:
        k: successes (0 <= k <= m; a non-integer count is read as that many).
        m: trials (> 0).

    Returns:
        (lo, hi): the interval's ends, 0 and 1 at the extremes.
    """
    lo = 0.0 if k <= 0 else float(stats.beta.ppf(0.025, k, m - k + 1))
    hi = 1.0 if k >= m else float(stats.beta.ppf(0.975, k + 1, m - k))
    return lo, hi


def most_favourable(rule: dict, m: int, shift: float) -> tuple:
    """The counts k of m whose interval best fits ``rule``: m for ``above``,
    0 for ``below``, the two integers around m x ``shift`` for
    ``equivalence`` (the interval is narrowest and centred there).

    Args:
        rule: the claim's rule (its ``kind``).
        m: the number of units.
        shift: the share an ``equivalence`` rule is centred on.

    Returns:
        A tuple of the most favourable counts.
    """
    if rule["kind"] == "above":
        return (m,)
    if rule["kind"] == "below":
        return (0,)
    return tuple(sorted({min(m, max(0, math.floor(m * shift))), min(m, math.ceil(m * shift))}))


def fewest_to_support(rule: dict, shift: float) -> int | None:
    """The fewest units m at which the most favourable count reads supported
    under ``rule`` (``most_favourable``): below it the proportion cannot be
    supported whatever the data.

    Args:
        rule: the claim's rule.
        shift: subtracted from the proportion before the rule reads it.

    Returns:
        The fewest m, or None when not within ``FEWEST_SEARCH_MAX``.
    """
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
    says when m is too few for "supported" whatever the data.

    Args:
        name: what is counted (the detail's words).
        k: the units counted right (the lower count when ``k_hi`` is given).
        m: the units scored.
        rule: the claim's rule.
        shift: subtracted from the share and its interval.
        k_hi: the upper count when censoring leaves units undetermined.

    Returns:
        Measured: the share (None when only bounded), its interval, the
        verdict under ``rule``, the CI method and the detail.

    Examples:
        >>> from ntkgap.verdicts.proportions import binomial
        >>> rule = {"kind": "above", "threshold": 0.5}
        >>> binomial("right", 15, 16, rule).verdict
        'supported'
        >>> binomial("right", 8, 16, rule).verdict.startswith("inconclusive")
        True
    """
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
