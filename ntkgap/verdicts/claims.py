"""Claims as data: each experiment config declares its claims (id, statement,
the paper's number, the statistic, the predictors compared and the decision
rule); this module evaluates them from stored results with one verdict
helper, so ``experiments/report.py`` and ``ntkgap show`` contain no rule.

A claim in an experiment's TOML::

    [[claim]]
    id = "E2"
    claim = "no kernel-network gap on band-limited targets"
    paper = "no gap"
    statistic = "mean_log_ratio"
    predictors = ["ntk:fc:depth=2", "net:fc:depth=2"]
    [claim.params]          # the statistic's inputs (which cells, eps, n, ...)
    [claim.rule]            # the pre-registered decision rule
    kind = "equivalence"
    margin = 0.5

The rules and their verdicts are :mod:`ntkgap.verdicts.rules`; the statistics
are in :mod:`ntkgap.verdicts.curve_statistics` and
:mod:`ntkgap.verdicts.nstar_statistics`; what they read, :mod:`ntkgap.verdicts.selection`.

Every evaluated claim is one JSON object with the fields ``id``, ``claim``,
``paper``, ``predictors``, ``statistic``, ``value``, ``lo``, ``hi``,
``seeds``, ``ci_method``, ``rule``, ``verdict`` and ``detail``.
"""

from __future__ import annotations

from collections.abc import Callable

from ntkgap.errors import UsageError
from ntkgap.verdicts import curve_statistics, nstar_statistics, rules
from ntkgap.verdicts.rules import VERDICTS

__all__ = ["CLAIM_KEYS", "STATISTICS", "VERDICTS", "evaluate", "parse_claims"]

CLAIM_KEYS = {"id", "claim", "paper", "statistic", "predictors", "params", "rule"}
#: every statistic a claim may name: ``fn(params, experiment) -> Measured``
STATISTICS: dict[str, Callable[[dict, str], rules.Measured]] = {
    "decay_exponent": curve_statistics.decay_exponent,
    "mean_log_ratio": curve_statistics.mean_log_ratio,
    "log_ratio_at_n": curve_statistics.log_ratio_at_n,
    "theory_growth": curve_statistics.theory_growth,
    "nstar_ratio_growth": nstar_statistics.nstar_ratio_growth,
    "nstar_ratio": nstar_statistics.nstar_ratio,
    "nstar_scaling": nstar_statistics.nstar_scaling,
}


def parse_claims(cfg: dict, where: str) -> list[rules.Claim]:
    """The ``[[claim]]`` tables of a config, validated (one-line errors).

    Args:
        cfg: the parsed experiment config.
        where: the config's path, for messages.

    Returns:
        list of Claim, in the config's order.
    """
    raw = cfg.get("claim", [])
    if not isinstance(raw, list):
        raise UsageError(f"config {where}: 'claim' must be a list of [[claim]] tables")
    out, seen = [], set()
    for i, c in enumerate(raw):
        tag = f"config {where}: claim {c.get('id', i)!r}" if isinstance(c, dict) else where
        if not isinstance(c, dict):
            raise UsageError(f"{tag}: each claim must be a table")
        unknown = set(c) - CLAIM_KEYS
        if unknown:
            raise UsageError(
                f"{tag}: unknown key '{sorted(unknown)[0]}' "
                f"(allowed: {', '.join(sorted(CLAIM_KEYS))})"
            )
        for key in ("id", "claim", "statistic"):
            if not isinstance(c.get(key), str) or not c[key]:
                raise UsageError(f"{tag}: '{key}' must be a non-empty string")
        if c["id"] in seen:
            raise UsageError(f"{tag}: id given twice")
        seen.add(c["id"])
        if c["statistic"] not in STATISTICS:
            raise UsageError(
                f"{tag}: statistic '{c['statistic']}' is unknown "
                f"(allowed: {', '.join(sorted(STATISTICS))})"
            )
        rule = c.get("rule", {})
        rules.check_rule(rule, tag)
        preds = c.get("predictors", [])
        if not isinstance(preds, list) or not all(isinstance(p, str) for p in preds):
            raise UsageError(f"{tag}: 'predictors' must be a list of spec strings")
        out.append(
            rules.Claim(
                c["id"],
                c["claim"],
                str(c.get("paper", "")),
                c["statistic"],
                tuple(preds),
                dict(c.get("params", {})),
                dict(rule),
            )
        )
    return out


def evaluate(claim: rules.Claim, experiment: str) -> dict:
    """Evaluates one claim from the stored results of ``experiment``.

    Args:
        claim: a parsed claim.
        experiment: the experiment's name.

    Returns:
        dict with the claim's ``id``, ``claim``, ``paper``, ``predictors``,
        ``statistic``, the measured ``value``, ``lo``, ``hi`` (None when
        absent; ``lo_censored``/``hi_censored`` when censoring left that end
        open), ``seeds``,
        ``ci_method``, ``depths``, ``rule`` (with its ``text``), ``verdict``,
        ``detail`` and ``data``.
    """
    # the statistic sees the rule too (a TOST needs the margin it is judged by)
    m = STATISTICS[claim.statistic](dict(claim.params, rule=claim.rule), experiment)
    return {
        "id": claim.id,
        "claim": claim.claim,
        "paper": claim.paper,
        "predictors": list(claim.predictors),
        "statistic": claim.statistic,
        "value": m.value,
        "lo": m.lo,
        "hi": m.hi,
        "lo_censored": m.lo_censored,
        "hi_censored": m.hi_censored,
        "seeds": m.seeds,
        "ci_method": m.ci_method,
        "depths": m.depths,
        "rule": dict(claim.rule, text=rules.rule_text(claim.rule)),
        "verdict": rules.decide(claim.rule, m),
        "detail": m.detail,
        "data": m.data,
    }
