"""Claims as data: each experiment config declares its claims (id, statement,
the paper's number, the statistic, the predictors compared and the decision
rule); this module evaluates them from stored results with one verdict
helper, so ``experiments/report.py`` and ``ntkgap show`` contain no rule.

A claim in an experiment's TOML::

    [[claim]]
    id = "E2"
    claim = "no kernel-network gap on band-limited targets"
    paper = "no gap"
    statistic = "log_ratio_every_n"
    predictors = ["ntk:fc:depth=2", "net:fc:depth=2"]
    profile = "quick"       # the profile whose grids decide it
    [claim.params]          # the statistic's inputs (which cells, eps, n, ...)
    [claim.rule]            # the pre-registered decision rule
    kind = "equivalence"
    margin = 0.5
    reason = "half a decade: ..."   # why this threshold (required)

The rules and their verdicts are :mod:`ntkgap.verdicts.rules`; the statistics
are in :mod:`ntkgap.verdicts.curve_statistics` and
:mod:`ntkgap.verdicts.nstar_statistics`; what they read, :mod:`ntkgap.verdicts.selection`.

Every evaluated claim is one JSON object with the fields ``id``, ``claim``,
``paper``, ``profile``, ``predictors``, ``statistic``, ``value``, ``lo``,
``hi``, ``seeds``, ``ci_method``, ``rule``, ``verdict``, ``p_value`` and
``detail``; depth-indexed claims add ``depths_resolved`` and
``depths_bounded``. The depth rule of a statistic (how many usable depths it
needs) is declared once, in :data:`MIN_DEPTHS`, for the experiments and
``ntkgap compare`` alike. :func:`validate_config` checks a whole config
(its cells and its claims) and every verb that reads one calls it before
any cell runs. :func:`family_wise` states what deciding many
claims means for the chance of a false "supported".

References:
    Holm, "A simple sequentially rejective multiple test procedure",
    Scand. J. Statist. 6 (1979) 65-70.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ntkgap._infra import config as env
from ntkgap.errors import UsageError
from ntkgap.runs import config as runs_config
from ntkgap.runs import store
from ntkgap.runs.registry import METHODS
from ntkgap.verdicts import (
    curve_statistics,
    e10_statistics,
    mechanism,
    nstar_statistics,
    rules,
    sealed_statistics,
    selection,
    universality,
)
from ntkgap.verdicts.rules import VERDICTS

__all__ = [
    "CLAIM_KEYS",
    "MIN_DEPTHS",
    "STATISTICS",
    "VERDICTS",
    "evaluate",
    "family_wise",
    "parse_claims",
    "validate_config",
]

CLAIM_KEYS = {
    "id", "claim", "paper", "profile", "statistic", "predictors", "params", "rule", "expect",
    "note",
}  # fmt: skip
#: every statistic a claim may name: ``fn(params, experiment) -> Measured``
STATISTICS: dict[str, Callable[[dict, str], rules.Measured]] = {
    "decay_exponent": curve_statistics.decay_exponent,
    "log_ratio_every_n": curve_statistics.log_ratio_every_n,
    "log_ratio_at_n": curve_statistics.log_ratio_at_n,
    "theory_growth": curve_statistics.theory_growth,
    "nstar_ratio_growth": nstar_statistics.nstar_ratio_growth,
    "nstar_ratio": nstar_statistics.nstar_ratio,
    "nstar_scaling": nstar_statistics.nstar_scaling,
    "nstar_kernel_convexity": nstar_statistics.nstar_kernel_convexity,
    "nstar_net_power": nstar_statistics.nstar_net_power,
    "pstar_scaling": nstar_statistics.pstar_scaling,
    "pstar_ratio": nstar_statistics.pstar_ratio,
    "after_kernel_share": mechanism.after_kernel_claim,
    "lazy_control": mechanism.lazy_control_claim,
    **e10_statistics.CLAIM_STATISTICS,
    **sealed_statistics.CLAIM_STATISTICS,
    "universality": lambda p, exp: _universality(p, exp),
}
#: each parsed config's claims by id (experiment name -> {id: Claim}): the
#: claims a ``universality`` claim reads the verdicts of
_PARSED: dict[str, dict] = {}


def _universality(params: dict, experiment: str) -> rules.Measured:
    """The ``universality`` statistic: its member claims evaluated here, then
    :func:`ntkgap.verdicts.universality.universal`.

    Args:
        params: the claim's params (``members``, ``reference``).
        experiment: the experiment's name (its config parsed before).

    Returns:
        Measured with its own verdict.
    """
    siblings = _PARSED.get(experiment, {})
    evaluated = [evaluate(siblings[i], experiment) for i in params["members"]]
    return universality.universal(params, evaluated)


#: the depth rule of each depth-indexed statistic: the usable (resolved or
#: bounded) depths a claim over a target ``family`` needs, whichever config
#: or ``compare`` declares it. Three for all: a growth factor from 2 depths
#: has nothing to check it against, a change of factor needs 2 factors, and
#: a slope in log C or a law from 2 points fits any 2 points exactly.
MIN_DEPTHS = {
    "nstar_ratio": 3,
    "nstar_ratio_growth": 3,
    "nstar_kernel_convexity": 3,
    "nstar_net_power": 3,
    "nstar_scaling": 3,
    "pstar_scaling": 3,
    "pstar_ratio": 3,
}


#: the claim params that name predictor sides (``selection.Side.parse``): one
#: side, or (``a`` of ``nstar_ratio``, ``also``) a list of side tables
SIDE_PARAMS = ("a", "b", "kernel", "also")
#: the methods whose stored searches a side can read
SIDE_METHODS = tuple(m for m in METHODS if m.endswith("_search"))


def validate_config(path: str, profile: str | None = None) -> tuple[dict, list[rules.Claim]]:
    """Reads and checks a whole experiment config: its cells (methods,
    parameters, specs, sizes: ``runs.config.load_config``) and its claims
    (every field, statistic, profile, rule kind and number, the rule's
    ``reason``, each predictor side: :func:`parse_claims`) and its
    ``[[seal]]`` tables. ``run``, ``run
    --dry-run``, ``show`` and ``compare`` call it before any cell runs.

    Args:
        path: the TOML config file.
        profile: a profile the config must hold (None: any).

    Returns:
        (the parsed config, its claims); a one-line UsageError naming the
        field and the allowed values otherwise.
    """
    cfg = runs_config.load_config(path, profile)
    seals = cfg.get("seal", [])
    if not isinstance(seals, list) or not all(isinstance(t, dict) for t in seals):
        raise UsageError(f"config {path}: 'seal' must be a list of [[seal]] tables")
    for i, table in enumerate(seals):
        sealed_statistics.check_seal(table, f"config {path}: seal {i}")
    return cfg, parse_claims(cfg, path)


def _sides_of(key: str, value) -> list:
    """The side specs a claim param holds (one side, or a list of tables)."""
    if key == "also" or (isinstance(value, list) and value and isinstance(value[0], dict)):
        return list(value) if isinstance(value, list) else [value]
    return [value]


def _check_sides(params: dict, tag: str) -> None:
    """One-line UsageError unless every predictor side of a claim's params
    parses and names a search method."""
    for key in SIDE_PARAMS:
        if key not in params:
            continue
        for side in _sides_of(key, params[key]):
            try:
                s = selection.Side.parse(side)
            except UsageError as exc:
                raise UsageError(f"{tag}: params.{key}: {exc}") from None
            if s.method not in SIDE_METHODS:
                raise UsageError(
                    f"{tag}: params.{key}: method {s.method!r} is not allowed "
                    f"(allowed: {', '.join(SIDE_METHODS)})"
                )
            if not isinstance(s.arch, str) or not s.arch:
                raise UsageError(f"{tag}: params.{key}: arch must be a non-empty spec string")


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
        _check_fields(c, tag)
        if c["id"] in seen:
            raise UsageError(f"{tag}: id given twice")
        seen.add(c["id"])
        out.append(
            rules.Claim(
                c["id"],
                c["claim"],
                str(c.get("paper", "")),
                c["statistic"],
                tuple(c.get("predictors", [])),
                dict(c.get("params", {})),
                _depth_rule(c, tag),
                c["profile"],
                c.get("expect"),
                str(c.get("note", "")),
            )
        )
    ids = {c.id for c in out}
    for c in out:
        if c.statistic == "universality":
            universality.check_params(c.params, ids - {c.id}, f"config {where}: claim {c.id!r}")
    _PARSED[str(cfg.get("name", where))] = {c.id: c for c in out}
    return out


def _check_fields(c: dict, tag: str) -> None:
    """One-line UsageError unless every field of a claim table is known and valid."""
    unknown = set(c) - CLAIM_KEYS
    if unknown:
        raise UsageError(
            f"{tag}: unknown key '{sorted(unknown)[0]}' (allowed: {', '.join(sorted(CLAIM_KEYS))})"
        )
    for key in ("id", "claim", "statistic", "profile"):
        if not isinstance(c.get(key), str) or not c[key]:
            raise UsageError(f"{tag}: '{key}' must be a non-empty string")
    for key in ("paper", "note"):
        if not isinstance(c.get(key, ""), str):
            raise UsageError(f"{tag}: '{key}' must be a string")
    if c["statistic"] not in STATISTICS:
        raise UsageError(
            f"{tag}: statistic '{c['statistic']}' is unknown "
            f"(allowed: {', '.join(sorted(STATISTICS))})"
        )
    if c["profile"] not in rules.CLAIM_PROFILES:
        raise UsageError(
            f"{tag}: profile '{c['profile']}' is unknown "
            f"(allowed: {', '.join(rules.CLAIM_PROFILES)})"
        )
    preds = c.get("predictors", [])
    if not isinstance(preds, list) or not all(isinstance(p, str) for p in preds):
        raise UsageError(f"{tag}: 'predictors' must be a list of spec strings")
    if not isinstance(c.get("params", {}), dict):
        raise UsageError(f"{tag}: 'params' must be a table")
    _check_sides(c.get("params", {}), tag)
    rules.check_rule(c.get("rule", {}), tag)
    allowed = (rules.NOT_SUPPORTED,)  # negative controls (control_check reads them so)
    if c.get("expect") is not None and c["expect"] not in allowed:
        raise UsageError(
            f"{tag}: expect '{c['expect']}' is not allowed (allowed: {', '.join(allowed)})"
        )


def _depth_rule(c: dict, tag: str) -> dict:
    """The claim's rule with its statistic's depth rule (``MIN_DEPTHS``) filled
    in for a claim over a target family; a config may not restate it."""
    rule = dict(c.get("rule", {}))
    need = MIN_DEPTHS.get(c["statistic"])
    if "min_depths" in rule:
        raise UsageError(
            f"{tag}: rule.min_depths is declared once per statistic, not in a config "
            f"(claims.MIN_DEPTHS: {', '.join(f'{k} {v}' for k, v in MIN_DEPTHS.items())})"
        )
    if need is not None and "family" in c.get("params", {}):
        rule["min_depths"] = need
    return rule


def evaluate(claim: rules.Claim, experiment: str, profile: str | None = None) -> dict:
    """Evaluates one claim from the stored results of ``experiment``.

    Args:
        claim: a parsed claim.
        experiment: the experiment's name.
        profile: the profile read (None: ``NTKGAP_PROFILE``, else quick): a
            claim of a larger profile is not run there.

    Returns:
        dict with the claim's ``id``, ``claim``, ``paper``, ``predictors``,
        ``statistic``, the measured ``value``, ``lo``, ``hi`` (None when
        absent; ``lo_censored``/``hi_censored`` when censoring left that end
        open), ``seeds``,
        ``ci_method``, ``depths``, ``rule`` (with its ``text``), ``verdict``,
        ``detail``, ``data`` and ``stale_cells`` (how many of the stored
        cells it read were computed by other code: kept by ``--reuse-stale``).
    """
    if not decided_here(claim, profile):
        return dict(_not_run(claim), stale_cells=0)
    # the profile read holds for the statistic too (a universality claim
    # evaluates its members, and selections read the profile's cells)
    here = {} if profile is None else {"profile": profile}
    with store.reading() as stale, env.override(**here):
        out = _evaluated(claim, experiment)
    out["stale_cells"] = len(stale)
    return out


def _evaluated(claim: rules.Claim, experiment: str) -> dict:
    """:func:`evaluate`'s dict, but ``stale_cells``, of a claim decided here."""
    # the statistic sees the rule too (a TOST needs the margin it is judged by)
    m = STATISTICS[claim.statistic](dict(claim.params, rule=claim.rule), experiment)
    out = {
        "id": claim.id,
        "claim": claim.claim,
        "note": claim.note,
        "paper": claim.paper,
        "profile": claim.profile,
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
        "p_value": m.p_value,
        "detail": m.detail,
        "data": m.data,
    }
    if m.depths_resolved is not None:
        out["depths_resolved"] = m.depths_resolved
        out["depths_bounded"] = m.depths_bounded or 0
    if claim.statistic == "nstar_ratio_growth" and "family" in claim.params:
        out["robustness"] = robustness(claim, experiment, out["verdict"])
    if claim.statistic in e10_statistics.CLAIM_STATISTICS:
        out["robustness"] = e10_robustness(claim, experiment, out["verdict"])
    if claim.expect is not None:
        out["control"] = rules.control_check(claim.rule, m, out["verdict"], claim.expect)
        out["detail"] += f"; negative control: {out['control']['text']}"
    return out


#: the pre-registered recheck of every depth-indexed ratio verdict: a second
#: error level (halving eps asks the same question of the curves' tails) and
#: the deepest depth's trained net with twice its step budget (a net stopped
#: by its cap, not by its plateau, would move its n*)
ROBUST_EPS = 0.05


def robustness(claim: rules.Claim, experiment: str, verdict: str) -> dict:
    """A ratio claim's verdict again at ``ROBUST_EPS`` and with the B side's
    largest stored step budget (robustness reruns), each "not run" when the
    profile holds no such searches.

    Args:
        claim: a parsed ``nstar_ratio_growth`` claim over a target family.
        experiment: the experiment's name.
        verdict: the claim's own verdict.

    Returns:
        dict with ``eps``, ``verdict_eps``, ``budget``, ``verdict_budget``
        and ``flips`` (whether a verdict that was run differs from ``verdict``).
    """
    p = dict(claim.params, rule=claim.rule)
    want = lambda t: selection.matches(t, p["family"])  # noqa: E731
    a, b = (selection.Side.parse(p[k]) for k in ("a", "b"))
    at_eps = selection.searches(experiment, a, ROBUST_EPS, want)
    v_eps = rules.decide(claim.rule, STATISTICS[claim.statistic](
        dict(p, eps=ROBUST_EPS), experiment)) if at_eps else "not run"  # fmt: skip
    stored = selection.budgets(experiment, b, p["eps"], want)
    larger = [t for t, ks in stored.items() if len(ks) > 1]
    v_budget = rules.decide(claim.rule, STATISTICS[claim.statistic](
        dict(p, budget="max"), experiment)) if larger else "not run"  # fmt: skip
    ran = [v for v in (v_eps, v_budget) if v != "not run"]
    return {
        "eps": ROBUST_EPS, "verdict_eps": v_eps,
        "budget": "the B side's largest stored step budget (" + (", ".join(larger) or "none") + ")",
        "verdict_budget": v_budget, "flips": any(v != verdict for v in ran),
    }  # fmt: skip


def e10_robustness(claim: rules.Claim, experiment: str, verdict: str) -> dict:
    """An E10 claim's verdict again with each net pair's largest stored step
    budget (the sources' robustness reruns, e.g. E4's twice-the-steps nets at
    L = 5); "not run" where no pair has one, "not applicable" for E10-kernel
    (its rows read no net search). The second error level is "not run": E10
    reads each source at its own levels (``params.eps``), and no source holds
    a leave-one-family-out's worth of families at ``ROBUST_EPS``.

    Args:
        claim: a parsed E10 claim.
        experiment: the experiment's name.
        verdict: the claim's own verdict.

    Returns:
        dict with ``robustness``'s keys.
    """
    p = dict(claim.params, rule=claim.rule)
    larger = e10_statistics.larger_budgets(p)
    if claim.statistic == "e10_kernel":
        v_budget = "not applicable"
    elif larger:
        v_budget = rules.decide(claim.rule, STATISTICS[claim.statistic](
            dict(p, budget="max"), experiment))  # fmt: skip
    else:
        v_budget = "not run"
    return {
        "eps": ROBUST_EPS, "verdict_eps": "not run", "label": "largest stored budget",
        "budget": f"each net pair's largest stored step budget ({len(larger)} pair(s) with a"
        " larger one: " + ("; ".join(larger) or "none") + ")",
        "verdict_budget": v_budget,
        "flips": v_budget not in ("not run", "not applicable", verdict),
    }  # fmt: skip


def decided_here(claim: rules.Claim, profile: str | None = None) -> bool:
    """Whether the profile being read (``NTKGAP_PROFILE``; quick when unset)
    holds the cells of the profile that decides ``claim``.

    Args:
        claim: a parsed claim.
        profile: the profile read (None: the environment's).

    Returns:
        bool: the claim's profile is this one or a smaller one.
    """
    here = profile or env.profile() or rules.CLAIM_PROFILES[0]
    return rules.CLAIM_PROFILES.index(claim.profile) <= rules.CLAIM_PROFILES.index(here)


def _not_run(claim: rules.Claim) -> dict:
    """A claim whose deciding profile was not run: no number, no verdict."""
    return {
        "id": claim.id, "claim": claim.claim, "note": claim.note, "paper": claim.paper,
        "profile": claim.profile, "predictors": list(claim.predictors),
        "statistic": claim.statistic, "value": None, "lo": None, "hi": None,
        "seeds": None, "rule": dict(claim.rule, text=rules.rule_text(claim.rule)),
        "verdict": rules.NOT_RUN, "p_value": None,
        "detail": f"decided by the {claim.profile} profile: make figures PROFILE={claim.profile}",
        "data": None,
    }  # fmt: skip


def _one_sided_alpha(c: dict, level: float) -> float:
    """The chance that one claim reads "supported" falsely: its p-value's
    test level where it has one, else the one-sided error of its CI
    ((1 - coverage) / 2: the CI misses on the claimed side at most that
    often), else (1 - level) / 2; 0 for deterministic (theory) rules."""
    if c["rule"].get("deterministic"):
        return 0.0
    cov = _coverage(c.get("ci_method"))
    return (1.0 - (cov if cov is not None else level)) / 2.0


def _coverage(method: str | None) -> float | None:
    """The coverage a CI method string states ('coverage >= 0.9614'), if any."""
    if not method or "coverage >= " not in method:
        return None
    try:
        return float(method.split("coverage >= ")[1].split()[0].rstrip(",;)"))
    except ValueError:
        return None


def family_wise(evaluated: list[dict], *, alpha: float = 0.05, level: float = 0.95) -> dict:
    """How many claims are decided, and the family-wise chance of a false
    "supported" among them.

    Two statements: (1) Holm's step-down correction over the claims with a
    one-sided p-value of "supported" (sign tests over seeds, TOST): sorted
    p_(1) <= ... <= p_(K), claim (i) stays supported while p_(j) <= alpha /
    (K - j + 1) for every j <= i; this holds the family-wise error rate at
    alpha. (2) For every claim that can read "supported" on sampling data
    (a CI), Bonferroni: P(some false "supported") <= the sum of the claims'
    one-sided CI error rates ((1 - coverage) / 2 each).

    Args:
        evaluated: the claims as :func:`evaluate` returns them.
        alpha: the family-wise level of the Holm correction.
        level: the CI level assumed where a CI states no coverage.

    Returns:
        dict with ``claims``, ``decided`` (supported or not supported),
        ``supported`` (ids), ``holm`` ({id: still supported after Holm} over
        the supported claims with a p-value), ``holm_alpha``,
        ``bonferroni_bound`` (the sum above, capped at 1), ``no_p`` (supported
        ids without a p-value) and ``text`` (one paragraph for REPORT.md).

    References:
        Holm, Scand. J. Statist. 6 (1979) 65-70; Bonferroni's inequality.
    """
    not_run = [c for c in evaluated if c["verdict"] == rules.NOT_RUN]
    evaluated = [c for c in evaluated if c["verdict"] != rules.NOT_RUN]  # nothing measured
    decided = [c for c in evaluated if c["verdict"] in (rules.SUPPORTED, rules.NOT_SUPPORTED)]
    supported = [c["id"] for c in evaluated if c["verdict"] == rules.SUPPORTED]
    with_p = sorted(
        (c for c in evaluated if c.get("p_value") is not None), key=lambda c: c["p_value"]
    )
    holm, k, alive = {}, len(with_p), True
    for j, c in enumerate(with_p):
        alive = alive and c["p_value"] <= alpha / (k - j)
        if c["verdict"] == rules.SUPPORTED:
            holm[c["id"]] = alive
    random_ones = [c for c in evaluated if not c["rule"].get("deterministic")]
    bound = min(1.0, math.fsum(_one_sided_alpha(c, level) for c in random_ones))
    no_p = [i for i in supported if i not in holm]
    lost = [i for i, ok in holm.items() if not ok]
    text = (
        f"{len(evaluated)} claims evaluated here ({len(not_run)} more belong to larger "
        f"profiles), {len(decided)} decided "
        f"({len(supported)} supported, {len(decided) - len(supported)} not supported). "
        f"Each CI errs on its claimed side with probability <= (1 - coverage) / 2; over the "
        f"{len(random_ones)} claims judged on sampled data (a CI) the chance of at least one false "
        f'"supported" is at most {bound:.2f} (Bonferroni). Holm over the {k} claims with a '
        f"one-sided p-value at family-wise level {alpha:g}: "
        + (
            f"{len(holm) - len(lost)} of {len(holm)} supported claims stay supported"
            + (f" (not: {', '.join(lost)})" if lost else "")
            if holm
            else "no supported claim has a p-value"
        )
        + (f"; supported without a p-value: {', '.join(no_p)}" if no_p else "")
        + "."
    )
    return {
        "claims": len(evaluated),
        "decided": len(decided),
        "supported": supported,
        "holm": holm,
        "holm_alpha": alpha,
        "bonferroni_bound": bound,
        "no_p": no_p,
        "text": text,
    }
