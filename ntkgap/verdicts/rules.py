"""Claims' schema and decision rules: the Claim and the Measured value a
statistic returns, and the one verdict helper :func:`decide`.

Rules (``kind``): ``above`` / ``below`` a ``threshold`` (supported when the
whole CI is on the claimed side, not supported when it is wholly on the
other side, otherwise inconclusive); ``equivalence`` within +-``margin``
(two-sided: supported when the CI lies inside, not supported when it lies
wholly outside). ``deterministic = true`` decides on the value alone, for
statistics with no sampling error (theory); otherwise a missing CI (fewer
than ``scaling.MIN_SEEDS_FOR_CI`` seeds) gives "inconclusive".
``min_depths = K`` asks for at least K usable depths, resolved or bounded
("too few depths"); 0 usable depths never pass. It is declared once per
statistic (``ntkgap.verdicts.claims.MIN_DEPTHS``), not in the configs.
Every rule carries ``reason``: the one-line reason for its threshold or
margin (REPORT.md shows it beside the rule).
A statistic that decides per depth or per n (interval statistics, the
every-n equivalence) hands its verdict, reached with :func:`rule_verdict`,
in ``Measured.verdict``. A CI end that censoring leaves open (``lo_censored``/``hi_censored``: a
sample complexity beyond the largest n searched) counts as -inf/+inf, so
a bound can still decide on its closed side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ntkgap._infra.config import PROFILES
from ntkgap.errors import UsageError
from ntkgap.runs import scaling

SUPPORTED, NOT_SUPPORTED = "supported", "not supported"
INCONCLUSIVE, TOO_FEW_DEPTHS = "inconclusive at this profile's scale", "too few depths"
#: the verdict of a claim whose deciding profile is larger than the one run
#: (its cells are not in this run: nothing is measured, nothing is claimed)
NOT_RUN = "decided by a larger profile (not run)"
VERDICTS = (SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE, TOO_FEW_DEPTHS, NOT_RUN)
RULE_KINDS = {"above": ("threshold",), "below": ("threshold",), "equivalence": ("margin",)}
RULE_OPTIONS = {"deterministic", "min_depths"}
#: the key every rule of a config carries: the one-line reason for its threshold
#: or margin (shown beside the rule in REPORT.md)
RULE_REASON = "reason"
#: the profile that decides a claim: one of the run profiles, smallest first
CLAIM_PROFILES = PROFILES


@dataclass(frozen=True)
class Claim:
    """A declared claim (see the module docstring)."""

    id: str
    claim: str
    paper: str
    statistic: str
    predictors: tuple
    params: dict = field(default_factory=dict)
    rule: dict = field(default_factory=dict)
    profile: str = "quick"
    #: a negative control's expected verdict (None: not a control)
    expect: str | None = None
    #: the longer explanation beside the claim's short statement ("": none)
    note: str = ""


@dataclass
class Measured:
    """What a statistic returns: the number, its CI (or None with the
    reason in ``detail``), how many seeds it rests on and how the CI was
    made, the number of resolved depths where that matters, and the data
    behind it (for the report and figures)."""

    value: float | None
    lo: float | None = None
    hi: float | None = None
    seeds: int | None = None
    ci_method: str | None = None
    detail: str = ""
    depths: int | None = None
    data: dict = field(default_factory=dict)
    # a CI end that censoring leaves open (lo = -inf, hi = +inf): it still
    # decides on its other side
    lo_censored: bool = False
    hi_censored: bool = False
    # depth-indexed statistics: depths whose median is a point / a bound on one side
    depths_resolved: int | None = None
    depths_bounded: int | None = None
    # the statistic's own verdict under the claim's rule (per-depth or per-n
    # claims, interval statistics); None: ``decide`` decides on value and CI
    verdict: str | None = None
    # the one-sided p-value of "supported" where the statistic has one (sign
    # test over seeds, TOST); None otherwise
    p_value: float | None = None
    # interval statistics: the median seed's interval (censoring and search
    # brackets make it one; None: an open end)
    median_lo: float | None = None
    median_hi: float | None = None


def check_rule(rule, tag: str) -> None:
    """Raises the one-line UsageError unless ``rule`` is a valid rule table.

    Args:
        rule: a claim's ``rule`` table.
        tag: where the claim is, for messages.

    Returns:
        None.
    """
    if not isinstance(rule, dict) or rule.get("kind") not in RULE_KINDS:
        raise UsageError(f"{tag}: rule.kind must be one of {', '.join(RULE_KINDS)}")
    need = RULE_KINDS[rule["kind"]]
    allowed = {"kind", *need, *RULE_OPTIONS, RULE_REASON}
    unknown = set(rule) - allowed
    if unknown:
        raise UsageError(
            f"{tag}: rule key '{sorted(unknown)[0]}' is unknown "
            f"(allowed: {', '.join(sorted(allowed))})"
        )
    for key in need:
        v = rule.get(key)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise UsageError(f"{tag}: rule.{key} must be a number")
    why = rule.get(RULE_REASON)
    if not isinstance(why, str) or not why.strip() or "\n" in why:
        raise UsageError(
            f"{tag}: rule.{RULE_REASON} must be the threshold's reason in one line "
            f'(rule = {{ kind = ..., {need[0]} = ..., {RULE_REASON} = "..." }})'
        )


def rule_text(rule: dict) -> str:
    """The decision rule in words, echoed in the report.

    Args:
        rule: a claim's rule table (``kind`` and its numbers).

    Returns:
        str: when the claim is supported, not supported or inconclusive.
    """
    k = rule["kind"]
    ci = "the value" if rule.get("deterministic") else "the CI"
    if k == "above":
        t = rule["threshold"]
        s = f"supported when {ci} lies above {t:g}, not supported when at or below {t:g}"
    elif k == "below":
        t = rule["threshold"]
        s = f"supported when {ci} lies below {t:g}, not supported when at or above {t:g}"
    else:
        m = rule["margin"]
        s = (
            f"two-sided: supported when {ci} lies inside [-{m:g}, {m:g}], not supported "
            f"when wholly outside"
        )
    s += ", otherwise inconclusive"
    if rule.get("min_depths"):
        s += f"; needs >= {rule['min_depths']} usable (resolved or bounded) depths"
    if not rule.get("deterministic"):
        s += f"; no CI (fewer than {scaling.MIN_SEEDS_FOR_CI} seeds) is inconclusive"
    return s


def rule_verdict(rule: dict, lo, hi) -> str:
    """The verdict of a rule on one interval (a CI, or one seed's set).

    Args:
        rule: ``{"kind": "above" | "below", "threshold": t}`` or
            ``{"kind": "equivalence", "margin": m}`` (other keys ignored).
        lo: the lower end (-inf when open; None when there is no CI).
        hi: the upper end (inf when open; None when there is no CI).

    Returns:
        SUPPORTED, NOT_SUPPORTED or INCONCLUSIVE (also when lo or hi is None).
    """
    if lo is None or hi is None:
        return INCONCLUSIVE
    kind = rule["kind"]
    if kind == "above":
        t = rule["threshold"]
        return SUPPORTED if lo > t else NOT_SUPPORTED if hi <= t else INCONCLUSIVE
    if kind == "below":
        t = rule["threshold"]
        return SUPPORTED if hi < t else NOT_SUPPORTED if lo >= t else INCONCLUSIVE
    if kind != "equivalence":
        raise ValueError(f"rule kind {kind!r}: must be one of {', '.join(RULE_KINDS)}")
    mg = rule["margin"]
    if -mg < lo and hi < mg:
        return SUPPORTED
    return NOT_SUPPORTED if lo >= mg or hi <= -mg else INCONCLUSIVE


def decide(rule: dict, m: Measured) -> str:
    """The one verdict helper: a rule and a measurement -> one of VERDICTS.

    Args:
        rule: a claim's rule table.
        m: the measured statistic (value and CI, or its own verdict).

    Returns:
        str: SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE or TOO_FEW_DEPTHS.
    """
    if m.verdict is not None:
        return m.verdict
    # the gate holds at 0 usable depths too (a statistic with no depth never passes)
    if rule.get("min_depths") and (m.depths or 0) < rule["min_depths"]:
        return TOO_FEW_DEPTHS
    unknown = m.value is None or (isinstance(m.value, float) and not math.isfinite(m.value))
    if unknown and (rule.get("deterministic") or not (m.lo_censored or m.hi_censored)):
        return INCONCLUSIVE  # a censored median still decides by its CI's closed end
    if rule.get("deterministic"):
        return rule_verdict(rule, m.value, m.value)
    lo = -math.inf if m.lo is None and m.lo_censored else m.lo
    hi = math.inf if m.hi is None and m.hi_censored else m.hi
    return rule_verdict(rule, lo, hi)


def control_check(rule: dict, m: Measured, verdict: str, expect: str) -> dict:
    """Whether a negative control read what it expects ("not supported"), and
    if not, what its numbers say: it FAILS when it reads "supported" (an
    effect where none is); an undecided control is "leaning wrong" when its
    median lies wholly on the claimed side of the rule, "underpowered" when
    wholly on the expected side (the CI reaches across the rule), and
    "undetermined" when the median's own interval straddles the rule or
    nothing was measured.

    Args:
        rule: the claim's rule (``above``/``below`` with ``threshold``, or
            ``equivalence`` with ``margin``).
        m: the statistic's Measured (its median interval ``median_lo``/
            ``median_hi`` where it has one, else its ``value``).
        verdict: the verdict reached.
        expect: the verdict the control expects (``NOT_SUPPORTED``).

    Returns:
        dict with ``expect``, ``held`` (bool) and ``text`` (one sentence).
    """
    out = {"expect": expect, "held": verdict == expect}
    if verdict == expect:
        return dict(out, text=f"reads {expect}, as a control should")
    if verdict == SUPPORTED:
        text = ("FAILS its control: it reads supported where no effect is expected, so the "
                "claims its statistic serves must be read with that in mind")  # fmt: skip
        return dict(out, text=text)
    if m.value is None and m.median_lo is None and m.median_hi is None:
        return dict(out, text=f"undetermined: nothing measured to judge ({verdict})")
    if m.median_lo is None and m.median_hi is None:  # a point median
        mlo = mhi = m.value
    else:  # an interval median; a None end is open
        mlo = -math.inf if m.median_lo is None else m.median_lo
        mhi = math.inf if m.median_hi is None else m.median_hi
    side = rule_verdict(rule, mlo, mhi)  # the median's own side of the rule
    med = f"{mlo:.3g}" if mlo == mhi else f"in [{_end(mlo)}, {_end(mhi)}]"
    edge = f"+-{rule['margin']:g}" if rule["kind"] == "equivalence" else f"{rule['threshold']:g}"
    if verdict != INCONCLUSIVE or side == INCONCLUSIVE:
        return dict(out, text=f"undetermined ({verdict}): the median {med} against {edge}")
    if side == SUPPORTED:
        return dict(out, text=f"undecided, leaning wrong: the median {med} lies on the claimed "
                    f"side of {edge} where no effect is expected")  # fmt: skip
    ci = f"[{_end(m.lo)}, {_end(m.hi)}]"
    return dict(out, text=f"underpowered, not failed: the median {med} lies on the expected side "
                f"of {edge}, but the CI {ci} reaches across it; at this scale the test cannot "
                f"read {expect}")  # fmt: skip


def _end(x) -> str:
    return "open" if x is None or not math.isfinite(x) else f"{x:.3g}"
