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

Rules (``kind``): ``above`` / ``below`` a ``threshold`` (supported when the
whole CI is on the claimed side, not supported when it is wholly on the
other side, otherwise inconclusive); ``equivalence`` within +-``margin``
(two-sided: supported when the CI lies inside, not supported when it lies
wholly outside). ``deterministic = true`` decides on the value alone, for
statistics with no sampling error (theory); otherwise a missing CI (fewer
than ``scaling.MIN_SEEDS_FOR_CI`` seeds) gives "inconclusive".
``min_depths = K`` asks for at least K resolved depths ("too few depths").
A CI end that censoring leaves open (``lo_censored``/``hi_censored``: a
sample complexity beyond the largest n searched) counts as -inf/+inf, so
a bound can still decide on its closed side.

Every evaluated claim is one JSON object with the fields ``id``, ``claim``,
``paper``, ``predictors``, ``statistic``, ``value``, ``lo``, ``hi``,
``seeds``, ``ci_method``, ``rule``, ``verdict`` and ``detail``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ntkgap.errors import UsageError
from ntkgap.nets import train_config
from ntkgap.runs import runner, sample_complexity, scaling

SUPPORTED, NOT_SUPPORTED = "supported", "not supported"
INCONCLUSIVE, TOO_FEW_DEPTHS = "inconclusive at this profile's scale", "too few depths"
VERDICTS = (SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE, TOO_FEW_DEPTHS)
RULE_KINDS = {"above": ("threshold",), "below": ("threshold",), "equivalence": ("margin",)}
RULE_OPTIONS = {"deterministic", "min_depths"}
CLAIM_KEYS = {"id", "claim", "paper", "statistic", "predictors", "params", "rule"}


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


STATISTICS: dict[str, Callable[[dict, str], Measured]] = {}


def statistic(name):
    """Decorator registering ``fn(params, experiment) -> Measured`` in STATISTICS.

    Args:
        name: the statistic's name, as claims give it.

    Returns:
        a decorator that registers the function and returns it unchanged.
    """

    def deco(fn):
        STATISTICS[name] = fn
        return fn

    return deco


# ------------------------------------------------------------------ parsing
def parse_claims(cfg: dict, where: str) -> list[Claim]:
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
        _check_rule(rule, tag)
        preds = c.get("predictors", [])
        if not isinstance(preds, list) or not all(isinstance(p, str) for p in preds):
            raise UsageError(f"{tag}: 'predictors' must be a list of spec strings")
        out.append(
            Claim(
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


def _check_rule(rule, tag):
    if not isinstance(rule, dict) or rule.get("kind") not in RULE_KINDS:
        raise UsageError(f"{tag}: rule.kind must be one of {', '.join(RULE_KINDS)}")
    need = RULE_KINDS[rule["kind"]]
    allowed = {"kind", *need, *RULE_OPTIONS}
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


# ------------------------------------------------------------------ verdict
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
        s += f"; needs >= {rule['min_depths']} resolved depths"
    if not rule.get("deterministic"):
        s += f"; no CI (fewer than {scaling.MIN_SEEDS_FOR_CI} seeds) is inconclusive"
    return s


def decide(rule: dict, m: Measured) -> str:
    """The one verdict helper: a rule and a measurement -> one of VERDICTS.

    Args:
        rule: a claim's rule table.
        m: the measured statistic (value and CI).

    Returns:
        str: SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE or TOO_FEW_DEPTHS.
    """
    if rule.get("min_depths") and m.depths and m.depths < rule["min_depths"]:
        return TOO_FEW_DEPTHS
    unknown = m.value is None or (isinstance(m.value, float) and not math.isfinite(m.value))
    if unknown and (rule.get("deterministic") or not (m.lo_censored or m.hi_censored)):
        return INCONCLUSIVE  # a censored median still decides by its CI's closed end
    if rule.get("deterministic"):
        lo = hi = m.value
    else:
        lo = -math.inf if m.lo is None and m.lo_censored else m.lo
        hi = math.inf if m.hi is None and m.hi_censored else m.hi
        if lo is None or hi is None:
            return INCONCLUSIVE
    k = rule["kind"]
    if k == "above":
        t = rule["threshold"]
        return SUPPORTED if lo > t else NOT_SUPPORTED if hi <= t else INCONCLUSIVE
    if k == "below":
        t = rule["threshold"]
        return SUPPORTED if hi < t else NOT_SUPPORTED if lo >= t else INCONCLUSIVE
    mg = rule["margin"]
    if -mg < lo and hi < mg:
        return SUPPORTED
    return NOT_SUPPORTED if lo >= mg or hi <= -mg else INCONCLUSIVE


def evaluate(claim: Claim, experiment: str) -> dict:
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
        "rule": dict(claim.rule, text=rule_text(claim.rule)),
        "verdict": decide(claim.rule, m),
        "detail": m.detail,
        "data": m.data,
    }


# ------------------------------------------------------- shared collectors
def depth_of(target: str) -> int | None:
    """The depth key ``L`` of a target spec (through the one spec parser).

    Args:
        target: a target spec string.

    Returns:
        int L, or None when the target has no depth.
    """
    from ntkgap.targets import parse_spec

    return parse_spec(target).params.get("L")


def param_of(target: str, key: str):
    """One parameter of a target spec (through the one spec parser).

    Args:
        target: a target spec string.
        key: the parameter's key.

    Returns:
        its parsed value, or None when the target has no such key.
    """
    from ntkgap.targets import parse_spec

    return parse_spec(target).params.get(key)


def matches(spec: str, family: dict) -> bool:
    """Whether a target spec has every key=value of ``family`` (and its name).

    Args:
        spec: a target spec string.
        family: required key/value pairs; ``name`` (if given) the spec name.

    Returns:
        bool.
    """
    from ntkgap.targets import parse_spec

    s = parse_spec(spec)
    name = family.get("name")
    if name and s.name != name:
        return False
    return all(s.params.get(k) == v for k, v in family.items() if k != "name")


def nstar_by_depth(
    experiment: str, method: str, family: dict, arch_name: str, eps: float, ridge=0.0
) -> dict:
    """The one n*-vs-L collector of a search method; figures and report use it.

    Args:
        experiment: the experiment's name.
        method: a search method.
        family: the target family (see ``matches``).
        arch_name: the prefix the cells' arch specs must start with.
        eps: the error level.
        ridge: only cells with this ``ridge`` (a cell without one has 0.0;
            ``"tuned"``: the validation-tuned kernel).

    Returns:
        dict {L: search record}, sorted by depth L.
    """
    out = {}
    for cell, res in runner.results(experiment, method):
        if not cell["arch"].startswith(arch_name) or not matches(cell["target"], family):
            continue
        if abs(cell["eps"] - eps) > 1e-12 or cell.get("ridge", 0.0) != ridge:
            continue
        out[depth_of(cell["target"])] = res
    return dict(sorted(out.items()))


def theory_nstar_by_depth(experiment: str, family: dict, arch_name: str, eps: float) -> dict:
    """Eigenlearning's n* per depth, from the stored theory cells.

    Args:
        experiment: the experiment's name.
        family: the target family (see ``matches``).
        arch_name: the prefix the cells' arch specs must start with.
        eps: the error level.

    Returns:
        dict {L: {"n_star", "censored", "theory_valid"}}, sorted by depth L.

    References:
        Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework",
        2021 (arXiv 2110.03922).
    """
    out = {}
    for cell, res in runner.results(experiment, "theory"):
        if not cell["arch"].startswith(arch_name) or not matches(cell["target"], family):
            continue
        v = res.get("n_star", {}).get(str(eps))
        if v is not None:
            out[depth_of(cell["target"])] = v
    return dict(sorted(out.items()))


# a family of targets indexed by depth: a spec's name and parameters but these
FAMILY_FREE = ("L", "d")


def family_of(target: str) -> dict | None:
    """The depth-indexed family a target spec belongs to.

    Args:
        target: a target spec string.

    Returns:
        dict with ``name`` and every parameter except ``FAMILY_FREE`` (the
        depth L and the dimension d), usable with ``matches``; None when the
        target has no depth L.
    """
    from ntkgap.targets import parse_spec

    s = parse_spec(target)
    if "L" not in s.params:
        return None
    return {"name": s.name, **{k: v for k, v in s.params.items() if k not in FAMILY_FREE}}


def family_label(family: dict) -> str:
    """A family in words, e.g. ``tree: arity=2, node=parity, seed=0``.

    Args:
        family: a dict from ``family_of``.

    Returns:
        str.
    """
    rest = ", ".join(f"{k}={v}" for k, v in family.items() if k != "name")
    return f"{family['name']}: {rest}" if rest else family["name"]


def depth_families(experiment: str) -> dict:
    """Every depth-indexed target family of an experiment's stored cells,
    with one target spec per depth (the first stored).

    Args:
        experiment: the experiment's name.

    Returns:
        dict {family label: (family dict, {L: target spec})}, labels sorted.
    """
    out = {}
    for cell, _ in runner.results(experiment):
        fam = family_of(cell["target"]) if "target" in cell else None
        if fam is None:
            continue
        entry = out.setdefault(family_label(fam), (fam, {}))
        entry[1].setdefault(depth_of(cell["target"]), cell["target"])
    return {k: (f, dict(sorted(t.items()))) for k, (f, t) in sorted(out.items())}


_MOMENTS: dict = {}


def target_moments(target: str) -> dict:
    """The target's moments (``target.moments()``: exact on support cubes
    up to 2^24 points, else a fixed-seed Monte Carlo estimate), computed
    once per spec and process: the one place figures and the report get a
    target's kurtosis and max |y| from.

    Args:
        target: a target spec string.

    Returns:
        dict from ``HypercubeTarget.moments`` (``kurtosis``, ``max_abs``,
        ``exact``, ...).
    """
    if target not in _MOMENTS:
        from ntkgap.targets import parse_target

        _MOMENTS[target] = parse_target(target).moments()
    return _MOMENTS[target]


def family_moments(experiment: str) -> list[dict]:
    """Per depth-indexed family and depth: kurtosis and max |y| of the
    target, and its Walsh average degree where the experiment stored a
    ``spectrum`` cell for it (None otherwise: no new transform here).

    Args:
        experiment: the experiment's name.

    Returns:
        list of dicts with ``family`` (label), ``L``, ``target``,
        ``kurtosis``, ``max_abs``, ``exact`` and ``average_degree``, in
        family then depth order.
    """
    degree = {
        cell["target"]: res.get("complexity", {}).get("average_degree")
        for cell, res in runner.results(experiment, "spectrum")
    }
    rows = []
    for label, (_, targets) in depth_families(experiment).items():
        for L, spec in targets.items():
            m = target_moments(spec)
            rows.append(
                {
                    "family": label,
                    "L": L,
                    "target": spec,
                    "kurtosis": m["kurtosis"],
                    "max_abs": m["max_abs"],
                    "exact": m["exact"],
                    "average_degree": degree.get(spec),
                }
            )
    return rows


def lr_choices(experiment: str, key=("target", "arch")) -> dict:
    """The learning rate of each fixed-n ``net`` curve point, chosen on validation.

    A ``net`` grid that lists several ``lr`` has a cell per rate; at each
    (curve, n) the rate is picked by ``sample_complexity.choose_lr`` (the
    rule ``net_search`` uses: lowest median over seeds of the best
    validation MSE), never by test error.

    Args:
        experiment: the experiment's name.
        key: the cell fields that identify a curve (with ``lr`` among them
            every rate is its own curve and nothing is chosen).

    Returns:
        dict {(key..., n): {"lr": the rate used, "median_best_val_mse":
        {repr(lr): value} (empty when one rate was run)}}.
    """
    groups: dict = {}
    for cell, res in runner.results(experiment, "net"):
        k = (*(cell.get(x) for x in key), cell["n"])
        lr = cell.get("lr", train_config.BY_NAME["lr"].default)
        groups.setdefault(k, {}).setdefault(lr, []).append(res)
    out = {}
    for k, by_lr in groups.items():
        if len(by_lr) == 1 or "lr" in key:
            out[k] = {"lr": next(iter(by_lr)), "median_best_val_mse": {}}
            continue
        vals = {
            lr: [sample_complexity.best_val(r, i) for r in rs for i in range(len(r["seeds"]))]
            for lr, rs in by_lr.items()
        }
        best, table = sample_complexity.choose_lr(vals)
        out[k] = {"lr": best, "median_best_val_mse": {repr(a): v for a, v in table.items()}}
    return out


def lr_edges(experiment: str) -> list[dict]:
    """How often the learning rate chosen on validation sits at an end of its grid.

    A rate picked at the top (or bottom) of the grid may mean the best rate
    lies outside it; the report lists these counts beside the budgets so a
    reader can judge. Counted over the ``net_search`` cells (their
    ``lr_chosen``) and the fixed-n ``net`` curve points (``lr_choices``)
    whose grid has at least two rates.

    Args:
        experiment: the experiment's name.

    Returns:
        list of dicts, one per (method, arch, grid): ``method``, ``arch``,
        ``grid`` (the rates, sorted), ``choices`` (how many were made),
        ``at_low`` and ``at_high`` (how many picked the smallest / largest).
    """
    rows: dict = {}

    def count(method, arch, grid, chosen):
        grid = tuple(sorted(float(g) for g in grid))
        r = rows.setdefault(
            (method, arch, grid),
            dict(method=method, arch=arch, grid=list(grid), choices=0, at_low=0, at_high=0),
        )
        r["choices"] += 1
        r["at_low"] += float(chosen) == grid[0]
        r["at_high"] += float(chosen) == grid[-1]

    for cell, res in runner.results(experiment, "net_search"):
        grid = cell.get("lr")
        if isinstance(grid, list) and len(grid) > 1 and res.get("lr_chosen") is not None:
            count("net_search", cell["arch"], grid, res["lr_chosen"])
    for (_, arch, _), choice in lr_choices(experiment).items():
        grid = [float(r) for r in choice["median_best_val_mse"]]  # empty for a single rate
        if len(grid) > 1:
            count("net", arch, grid, choice["lr"])
    return list(rows.values())


def curves(experiment: str, method: str, key=("target", "arch")) -> dict:
    """Relative test MSE per sample size and seed, of the fixed-n cells of ``method``.

    Networks trained with several learning rates enter with the rate
    ``lr_choices`` picked on validation at that (curve, n).

    Args:
        experiment: the experiment's name.
        method: ``ntk`` (one seed a cell) or ``net`` (a seed list a cell).
        key: the cell fields that identify a curve.

    Returns:
        dict {(target, arch, ...): {n: {seed: relative test MSE}}}, n sorted.
    """
    out: dict = {}
    chosen = lr_choices(experiment, key) if method == "net" else None
    for cell, res in runner.results(experiment, method):
        k = tuple(cell.get(x) for x in key)
        if chosen is not None:
            lr = cell.get("lr", train_config.BY_NAME["lr"].default)
            if lr != chosen[(*k, cell["n"])]["lr"]:
                continue
        seeds = cell["seeds"] if "seeds" in cell else [cell.get("seed", 0)]
        vals = res.get("test_mse_per_seed", [res.get("test_mse")])
        out.setdefault(k, {}).setdefault(cell["n"], {}).update(zip(seeds, vals))
    return {k: dict(sorted(v.items())) for k, v in out.items()}


# --------------------------------------------------------------- statistics
@statistic("decay_exponent")
def _decay_exponent(p, exp):
    """Circle eigenvalue decay exponent of each arch: a deterministic fit
    (no sampling error); the spread over fitting windows is reported as what
    it is, not as a CI. Value: the exponent farthest from ``expected``."""
    windows = [tuple(w) for w in p.get("windows", [[8, 129], [16, 257], [32, 257], [8, 257]])]
    rows = []
    for cell, r in runner.results(exp, "eigen"):
        if cell["domain"] != "circle":
            continue
        k, lam = np.array(r["k"], float), np.array(r["eigenvalue"], float)
        fits = [np.polyfit(np.log(k[a:b]), np.log(lam[a:b]), 1)[0] for a, b in windows]
        rows.append((cell["arch"], fits[-1], min(fits), max(fits)))
    if not rows:
        return Measured(None, detail="no circle eigenvalues stored")
    expected = p.get("expected", -2.0)
    worst = max(rows, key=lambda r: abs(r[1] - expected))
    detail = "fitted exponents " + ", ".join(
        f"{a}: {v:.3f} (windows {lo:.3f}..{hi:.3f})" for a, v, lo, hi in rows
    )
    return Measured(
        abs(worst[1] - expected),
        detail=detail + f"; value = largest |exponent - ({expected:g})|",
        data={"archs": [r[0] for r in rows], "exponents": [r[1] for r in rows]},
    )


def _paired_log_ratio(exp, p):
    """{target: (n list, seeds x n matrix of log10(ntk / net))} for the ntk
    cells (one seed each) and net cells (a seed list) of the same target and
    the same architecture spec. An error of exactly 0 is clamped at 1e-12 of
    the variance (below float32 resolution), so one exact fit cannot dominate
    a mean."""
    ntk = curves(exp, "ntk")
    net = curves(exp, "net")
    out = {}
    for (t, a), c in ntk.items():
        partner = [v for (tt, aa), v in net.items() if tt == t and aa == a]
        if not partner:
            continue
        nc = partner[0]
        ns = sorted(set(c) & set(nc))
        if p.get("n"):
            ns = [n for n in ns if n in p["n"]]
        seeds = sorted(set.intersection(*[set(c[n]) & set(nc[n]) for n in ns])) if ns else []
        if not seeds:
            continue
        mat = np.array(
            [[math.log10(max(c[n][s], 1e-12) / max(nc[n][s], 1e-12)) for n in ns] for s in seeds]
        )
        out[t] = (ns, seeds, mat)
    return out


@statistic("mean_log_ratio")
def _mean_log_ratio(p, exp):
    """Per target, the mean over n of log10(NTK error / net error), paired by
    seed, with the (1 - 2 alpha) Student-t CI of the mean over seeds (the
    interval of a TOST equivalence test, >= MIN_SEEDS_FOR_CI seeds). The
    claim covers every target: the value is the largest |mean| and the CI the
    envelope of all targets' CIs, so "inside the margin" holds for all."""
    pairs = _paired_log_ratio(exp, p)
    if not pairs:
        return Measured(None, detail="no paired NTK and network cells stored")
    per = {}
    for t, (ns, seeds, mat) in pairs.items():
        tost = scaling.equivalence_test(mat.mean(axis=1), p["rule"]["margin"])
        per[t] = dict(tost, n=ns, seeds=len(seeds))
    worst_t = max(per, key=lambda t: abs(per[t]["value"]))
    complete = all(v["lo"] is not None for v in per.values())
    lo = min(v["lo"] for v in per.values()) if complete else None
    hi = max(v["hi"] for v in per.values()) if complete else None
    detail = "; ".join(
        f"{t}: {v['value']:.2f}"
        + (f" [{v['lo']:.2f}, {v['hi']:.2f}]" if v["lo"] is not None else f" ({v['reason']})")
        + f" (n={v['n'][0]}..{v['n'][-1]}, {v['seeds']} seeds)"
        for t, v in per.items()
    )
    lrs = {k: v for k, v in lr_choices(exp).items() if k[0] in per}
    chosen = ""
    if any(v["median_best_val_mse"] for v in lrs.values()):
        chosen = "; nets' lr chosen on validation (lowest median best validation MSE) per " + (
            "(target, n): "
            + ", ".join(f"{k[0]} n={k[2]}: {v['lr']:g}" for k, v in sorted(lrs.items()))
        )
    return Measured(
        per[worst_t]["value"],
        lo,
        hi,
        seeds=min(v["seeds"] for v in per.values()),
        ci_method=per[worst_t].get("method") + "; the envelope over targets",
        detail="mean over n of log10(NTK error / net error) per target: "
        + detail
        + " (a mean over n can hide a gap that changes sign with n: see the E2 figure)"
        + chosen,
        data={"per_target": per, "lr_chosen": [[*k, v["lr"]] for k, v in sorted(lrs.items())]},
    )


@statistic("log_ratio_at_n")
def _log_ratio_at_n(p, exp):
    """log10(NTK error / net error) at the pre-registered n, mean over paired
    seeds, seed-level bootstrap CI."""
    n0 = p["n"]
    pairs = _paired_log_ratio(exp, {"n": [n0]})
    tgt = p.get("target")
    pairs = {t: v for t, v in pairs.items() if tgt is None or t == tgt}
    if not pairs:
        return Measured(None, detail=f"no paired cells at n={n0}")
    t, (ns, seeds, mat) = next(iter(pairs.items()))
    ci = scaling.seed_bootstrap(lambda s: float(np.mean(s)), mat, seed=p.get("seed", 4))
    every = _paired_log_ratio(exp, {}).get(t)
    at_all = (
        "; the mean gap at every n of the grid: "
        + ", ".join(f"n={n}: {g:.2f}" for n, g in zip(every[0], every[2].mean(axis=0)))
        if every
        else ""
    )
    return Measured(
        ci["value"],
        ci["lo"],
        ci["hi"],
        seeds=len(seeds),
        ci_method=ci.get("method"),
        detail=f"{t} at n={n0}: log10(NTK / net) = {ci['value']:.2f}"
        + (f" [{ci['lo']:.2f}, {ci['hi']:.2f}]" if ci["lo"] is not None else f" ({ci['reason']})")
        + at_all,
    )


@statistic("theory_growth")
def _theory_growth(p, exp):
    """Per-level growth factor of a theory quantity (eigenlearning n*(eps),
    or the RKHS norm over the variance) over depth, from deterministic theory
    cells: the geometric mean of the per-level ratios over the depths where
    they have settled (the last ``settled`` levels); their spread is
    reported as what it is, not as a CI."""
    family, arch, key = p["family"], p["arch"], p.get("quantity", "n_star")
    rows = {}
    for cell, res in runner.results(exp, "theory"):
        if not cell["arch"].startswith(arch) or not matches(cell["target"], family):
            continue
        if key == "n_star":
            v = res.get("n_star", {}).get(str(p["eps"]))
            # theory enters a verdict only where n is small against the distinct inputs
            if v and not v.get("censored") and v.get("theory_valid", False):
                rows[depth_of(cell["target"])] = v["n_star"]
        elif res.get(key) is not None:
            rows[depth_of(cell["target"])] = res[key]
    if len(rows) < 2:
        return Measured(None, detail="fewer than two depths resolved", depths=len(rows))
    L = sorted(rows)
    vals = np.array([rows[x] for x in L], float)
    # per level: a step over a dropped depth spans several levels
    ratios = (vals[1:] / vals[:-1]) ** (1.0 / np.diff(L))
    settled = int(p.get("settled", 3))
    tail = ratios[-settled:]
    value = float(np.exp(np.mean(np.log(tail))))
    return Measured(
        value,
        depths=len(L),
        detail=f"{key} for L={L[0]}..{L[-1]}: per-level ratios "
        + ", ".join(f"{r:.2f}" for r in ratios)
        + f"; value = geometric mean of the last {len(tail)} (L={L[-len(tail) - 1]}..{L[-1]}), "
        f"spread {tail.min():.2f}..{tail.max():.2f} (deterministic theory: no CI)",
        data={"L": L, "values": vals.tolist()},
    )


@statistic("nstar_ratio_growth")
def _nstar_ratio_growth(p, exp):
    """Q1/Q2 of the dichotomy: how the ratio n*(A) / n*(B) of two predictors
    grows per level of depth. Each predictor is a search method over seeds
    (median seed, censoring explicit; ``[method, arch prefix, ridge]`` picks
    the kernel searches of that ridge, e.g. ``"tuned"``) or ``theory``
    (eigenlearning, used only where ``theory_valid``). Per seed (when both sides are searches on the
    same seeds) the log-ratio's slope over resolved depths; the value is the
    median over seeds of exp(slope), with a distribution-free order-statistic
    CI for the median (>= MIN_SEEDS_FOR_CI seeds)."""
    eps, family = p["eps"], p["family"]
    sides = []
    for side in (p["a"], p["b"]):
        if not (isinstance(side, list) and len(side) in (2, 3)):
            raise UsageError(
                f"claim params a/b: {side!r} must be [method, arch prefix] or "
                "[method, arch prefix, ridge]"
            )
        method, arch, ridge = (*side, 0.0)[:3]
        if method == "theory":
            th = theory_nstar_by_depth(exp, family, arch, eps)
            sides.append(
                {
                    L: {"n_star": v["n_star"], "censored": v.get("censored"), "per_seed": None}
                    for L, v in th.items()
                    if v.get("theory_valid", False) and not v.get("censored")
                }
            )
        else:
            recs = nstar_by_depth(exp, method, family, arch, eps, ridge)
            sides.append(
                {
                    L: {
                        "n_star": r["median"]["n_star"],
                        "censored": r["median"].get("censored"),
                        "per_seed": {s["seed"]: s for s in r["per_seed"]},
                    }
                    for L, r in recs.items()
                }
            )
    a, b = sides
    common = sorted(set(a) & set(b))
    resolved = [L for L in common if not a[L]["censored"] and not b[L]["censored"]]
    data = {
        "L": common,
        "a": [a[L]["n_star"] for L in common],
        "b": [b[L]["n_star"] for L in common],
        "a_censored": [a[L]["censored"] for L in common],
        "b_censored": [b[L]["censored"] for L in common],
    }
    detail = (
        f"n*({eps}) of {' '.join(map(str, p['a']))} / {' '.join(map(str, p['b']))} by depth: "
        + ", ".join(f"L={L}: {_fmt_n(a[L])} / {_fmt_n(b[L])}" for L in common)
        + f"; {len(resolved)} depth(s) resolved on both sides"
    )
    if len(resolved) < 2:
        return Measured(None, depths=len(resolved), detail=detail, data=data)
    logr = np.array([math.log(a[L]["n_star"] / b[L]["n_star"]) for L in resolved])
    # descriptive: the per-level growth of the ratio of the median seeds' n*
    of_medians = float(math.exp(np.polyfit(resolved, logr, 1)[0]))
    value = of_medians
    lo = hi = None
    seeds, method = None, None
    pa, pb = [a[L]["per_seed"] for L in resolved], [b[L]["per_seed"] for L in resolved]
    if all(x is not None for x in pa + pb):
        common_seeds = sorted(set.intersection(*[set(x) for x in pa + pb]))
        per_seed = []
        for s in common_seeds:
            rows = [(L, x[s], y[s]) for L, x, y in zip(resolved, pa, pb)]
            per_seed.append(_seed_growth(rows))
        ci = scaling.median_censored(per_seed)
        seeds, lo, hi, method = len(common_seeds), ci["lo"], ci["hi"], ci["method"]
        # the value is the estimand of the CI: the median of the seeds' factors
        value = ci["value"] if ci["status"] == "resolved" else None
        detail += "; per-seed growth factors: " + ", ".join(
            "censored" if isinstance(v, tuple) else f"{v:.2f}" for v in per_seed
        )
        if ci["reason"]:
            detail += f" (no CI: {ci['reason']})"
        elif lo is None or hi is None:
            detail += " (CI end censored)"
    else:
        detail += " (one side is deterministic theory: no seed-level CI)"
    detail += (
        f"; value: the median seed's per-level growth factor; the ratio of the median "
        f"seeds' n* grows {of_medians:.2f}x per level"
    )
    return Measured(
        value,
        lo,
        hi,
        seeds=seeds,
        ci_method=method,
        depths=len(resolved),
        detail=detail,
        data=data,
        lo_censored=bool(ci.get("lo_censored")) if seeds else False,
        hi_censored=bool(ci.get("hi_censored")) if seeds else False,
    )


def _resolved_targets(rows) -> int:
    """Targets (depths) whose median seed is resolved on every side (a bound is
    not a resolved depth)."""
    by_target = {}
    for r in rows:
        by_target.setdefault(r["target"], []).append(r["status"] == "resolved")
    return sum(all(v) for v in by_target.values())


def _seed_growth(rows):
    """One seed's per-level growth factor of n*(A)/n*(B) over rows (L, a, b):
    the least-squares slope of the log ratio, exp'd. A censored n* makes its
    ratio a bound (A beyond n_max or B at the smallest n: a lower bound; the
    reverse: an upper bound), which moves the slope one way (up when a lower
    bound sits above the mean depth or an upper bound below it); when every
    censored row moves it the same way the factor at the bounds is a
    one-sided bound, otherwise it is unknown."""

    def n(side):
        return side.get("n_star") or side.get("bound")

    xs = np.array([r[0] for r in rows], float)
    lr = [math.log(n(a) / n(b)) for _, a, b in rows]
    g = math.exp(float(np.polyfit(xs, lr, 1)[0]))
    moves = set()
    for x, (_, a, b) in zip(xs, rows):
        ca, cb = a.get("censored"), b.get("censored")
        if not ca and not cb:
            continue
        lower = ca in ("right", None) and cb in ("left", None)  # A above, or B below
        upper = ca in ("left", None) and cb in ("right", None)
        if lower == upper:  # both sides censored: the ratio is unknown
            return (0.0, math.inf)
        moves.add((x > xs.mean()) == lower)
    if not moves:
        return g
    return (g, math.inf) if moves == {True} else (0.0, g) if moves == {False} else (0.0, math.inf)


def _side_label(side: dict) -> str:
    ridge = side.get("ridge", 0.0) if side["method"] == "ntk_search" else None
    tag = {None: "", 0.0: " (ridgeless)", "tuned": " (ridge tuned on validation)"}.get(
        ridge, f" (ridge {ridge})"
    )
    return f"{side['method']} {side['arch']}{tag}"


def search_records(exp: str, side: dict, eps: float, want=lambda t: True) -> dict:
    """The search records of one predictor: the one collector of the
    ``nstar_ratio`` claims and their figures.

    Args:
        exp: the experiment's name.
        side: {"method": a search method, "arch": the exact arch spec,
            "ridge": for ``ntk_search`` (default 0.0; "tuned")}.
        eps: the error level.
        want: which target specs to keep.

    Returns:
        dict {target: search record}.
    """
    if not isinstance(side, dict) or not {"method", "arch"} <= set(side):
        raise UsageError(f"claim params: side {side!r} must be a table with method and arch")
    out = {}
    for cell, res in runner.results(exp, side["method"]):
        if cell["arch"] != side["arch"] or not want(cell["target"]):
            continue
        if abs(cell["eps"] - eps) > 1e-12:
            continue
        if side["method"] == "ntk_search" and cell.get("ridge", 0.0) != side.get("ridge", 0.0):
            continue
        out[cell["target"]] = res
    return out


def _log10_or_none(v):
    return None if v is None or not 0 < v < math.inf else math.log10(v)


def _ratio_of_searches(ra: dict, rb: dict) -> dict:
    """The paired-seed ratio n*(A) / n*(B) of two search records, as log10."""
    pa = {s["seed"]: s for s in ra["per_seed"]}
    pb = {s["seed"]: s for s in rb["per_seed"]}
    seeds = sorted(set(pa) & set(pb))
    iv = []
    for s in seeds:
        (alo, ahi), (blo, bhi) = scaling.seed_interval(pa[s]), scaling.seed_interval(pb[s])
        iv.append((alo / bhi if bhi < math.inf else 0.0, ahi / blo if blo > 0 else math.inf))
    med = scaling.median_censored(iv)
    value = {"resolved": med["value"], "right": med["bound_lo"], "left": med["bound_hi"]}
    # the error gap where both were measured: per seed the largest n both searches evaluated
    gap = []
    ea = {(e["seed"], e["n"]): e["test_mse"] for e in ra.get("evaluations", [])}
    eb = {(e["seed"], e["n"]): e["test_mse"] for e in rb.get("evaluations", [])}
    for s in seeds:
        common = sorted(n for (ss, n) in set(ea) & set(eb) if ss == s)
        if common:
            x, y = ea[(s, common[-1])], eb[(s, common[-1])]
            if math.isfinite(x) and math.isfinite(y):
                gap.append((common[-1], math.log10(max(x, 1e-12) / max(y, 1e-12))))
    return {
        "value": _log10_or_none(value.get(med["status"])),
        "status": med["status"],
        "lo": _log10_or_none(med["lo"]),
        "hi": _log10_or_none(med["hi"]),
        "lo_censored": med["lo_censored"],
        "hi_censored": med["hi_censored"],
        "no_ci": med["method"] is None,
        "reason": med["reason"],
        "method": med["method"],
        "seeds": len(seeds),
        "censored": med["censored"],
        "a": ra["median"],
        "b": rb["median"],
        "gap": gap,
    }


def _median_side(m: dict) -> str:
    c = m.get("censored")
    n = m.get("n_star")
    if c == "right":
        return f"> {n:.0f}"
    if c == "left":
        return f"<= {n:.0f}"
    return "undetermined" if n is None else f"{n:.0f}"


def _ratio_text(r: dict) -> str:
    v = r["value"]
    sign = {"right": "> ", "left": "<= "}.get(r["status"], "")
    txt = f"log10 ratio {sign}{v:.2f}" if v is not None else f"log10 ratio {r['status']}"
    if r["no_ci"]:
        txt += f" ({r['reason']})"
    else:
        lo = "-inf" if r["lo"] is None else f"{r['lo']:.2f}"
        hi = "+inf" if r["hi"] is None else f"{r['hi']:.2f}"
        txt += f" [{lo}, {hi}]"
    cens = r["censored"]
    if cens["left"] or cens["right"]:
        txt += f" ({cens['right']} seed ratios open above, {cens['left']} open below)"
    if r["gap"]:
        ns = sorted(n for n, _ in r["gap"])
        g = float(np.median([x for _, x in r["gap"]]))
        txt += (
            f"; error gap where both were measured: median log10(err A / err B) = {g:.2f} at "
            f"n = {ns[0]}..{ns[-1]} (per seed the largest n both searches evaluated)"
        )
    return txt


def _envelope(kind: str, rows: list[dict]) -> dict:
    """One value and CI for "the claim holds for every row": the worst row's
    value, and the CI ends that make ``decide`` give the all-rows verdict."""
    inf = math.inf

    def ends(r):
        return (
            -inf if r["lo"] is None else r["lo"],
            inf if r["hi"] is None else r["hi"],
        )

    vals = [r["value"] for r in rows]
    los, his = zip(*(ends(r) for r in rows))
    if kind == "above":
        lo, hi = min(los), min(his)
        value = None if None in vals else min(vals)
    elif kind == "below":
        lo, hi = max(los), max(his)
        value = None if None in vals else max(vals)
    else:
        lo, hi = min(los), max(his)
        value = None if None in vals else max(vals, key=abs)
    if any(r["no_ci"] for r in rows):
        return {"value": value, "lo": None, "hi": None, "lo_c": False, "hi_c": False}
    return {
        "value": value,
        "lo": lo if math.isfinite(lo) else None,
        "hi": hi if math.isfinite(hi) else None,
        "lo_c": not math.isfinite(lo),
        "hi_c": not math.isfinite(hi),
    }


@statistic("nstar_ratio")
def _nstar_ratio(p, exp):
    """log10 of the median over paired seeds of n*(A) / n*(B) (the same
    seeds, hence the same splits, on both sides), per target, with the
    distribution-free order-statistic CI of that median (>= MIN_SEEDS_FOR_CI
    seeds). A censored n* makes its seed's ratio an interval (a right-
    censored A over a resolved B: ratio > n_max / n*(B)); the median and CI
    ends become bounds, stated, and an open end counts as +-infinity for the
    rule. ``a`` may list several predictors and ``target``/``family`` cover
    several targets: the claim must hold for every (A, target) pair, so the
    value is the worst pair's and the CI the envelope that gives that verdict.
    ``also`` lists predictors reported beside A, outside the verdict."""
    eps = p["eps"]
    if "target" in p:
        targets = p["target"] if isinstance(p["target"], list) else [p["target"]]

        def want(t):
            return t in targets
    else:

        def want(t):
            return matches(t, p["family"])

    a_sides = p["a"] if isinstance(p["a"], list) else [p["a"]]
    b = search_records(exp, p["b"], eps, want)
    theory = {
        cell["target"]: res["n_star"][str(eps)]
        for cell, res in runner.results(exp, "theory")
        if want(cell["target"])
        and cell["arch"] == a_sides[0]["arch"]
        and str(eps) in res.get("n_star", {})
    }
    rows, lines, also_lines = [], [], []
    for t in sorted(set(b) | set(theory), key=lambda t: (depth_of(t) or 0, t)):
        if t not in b:
            lines.append(f"{t}: not searched in this profile")
        for side in a_sides if t in b else []:
            ra = search_records(exp, side, eps, lambda x, t=t: x == t).get(t)
            if ra is None:
                continue
            r = _ratio_of_searches(ra, b[t])
            rows.append(dict(r, target=t, side=_side_label(side)))
            lines.append(
                f"{t}, A = {_side_label(side)}: n*({eps}) {_median_side(r['a'])} / "
                f"{_median_side(r['b'])}: {_ratio_text(r)}"
            )
        for side in p.get("also", []) if t in b else []:
            ra = search_records(exp, side, eps, lambda x, t=t: x == t).get(t)
            if ra is not None:
                r = _ratio_of_searches(ra, b[t])
                also_lines.append(
                    f"{t}, {_side_label(side)}: n* {_median_side(r['a'])}: {_ratio_text(r)}"
                )
        if th := theory.get(t):
            ok = "" if th.get("theory_valid", False) else ", outside theory's validity"
            also_lines.append(
                f"{t}: eigenlearning predicts n*({eps}) of NTK regression of {a_sides[0]['arch']} "
                + (f"> {th['n_max']:.0f}" if th["censored"] else f"{th['n_star']:.0f}")
                + f" (ridgeless theory, not a measurement{ok})"
            )
    head = f"log10 n*({eps}) of A over B = {_side_label(p['b'])}, median over paired seeds"
    beside = "; beside (not in the verdict): " + "; ".join(also_lines) if also_lines else ""
    if not rows:
        return Measured(
            None,
            detail=head + ": " + ("; ".join(lines) or "no paired search records stored") + beside,
            depths=0,
        )
    env = _envelope(p["rule"]["kind"], rows)
    detail = head + ": " + "; ".join(lines) + beside
    open_ends = [x for x, c in (("lower", env["lo_c"]), ("upper", env["hi_c"])) if c]
    if open_ends:
        detail += f"; the CI's {' and '.join(open_ends)} end is open (censored n*)"
    if len(rows) > 1:
        detail += "; value and CI: the envelope over the rows (the claim holds for every row)"
    if any(r["status"] in ("right", "left") for r in rows):
        detail += "; a value marked > or <= is a bound (the median seed's ratio is censored)"
    first = next((r for r in rows if r["method"]), rows[0])
    method = (
        None
        if env["lo"] is None and env["hi"] is None and not (env["lo_c"] or env["hi_c"])
        else f"{first['method']}; applied to the paired seeds' ratios n*(A)/n*(B)"
        + ("; envelope over the rows" if len(rows) > 1 else "")
    )
    return Measured(
        env["value"],
        env["lo"],
        env["hi"],
        seeds=min(r["seeds"] for r in rows),
        ci_method=method,
        depths=_resolved_targets(rows),
        detail=detail,
        data={"rows": rows},
        lo_censored=env["lo_c"],
        hi_censored=env["hi_c"],
    )


@statistic("nstar_scaling")
def _nstar_scaling(p, exp):
    """A published scaling law of one predictor's n*: log n* = log c + x log g
    (``law = "exp"``: n* ~ c g^x, x a target key such as L) or log n* = log c
    + k log x (``law = "power"``: n* ~ c x^k, e.g. x = m). Per seed a least-
    squares line over the x values where the median seed is resolved (a seed
    censored at one of them has an unknown slope); the value is the median
    seed's log(g / ``base``) (exp) or k - ``exponent`` (power), so 0 is the
    law and an ``equivalence`` rule is two-sided on it; the CI is the
    distribution-free order-statistic CI of the median over seeds (>=
    MIN_SEEDS_FOR_CI seeds). The prefactor c (median seed, same CI method)
    is in the detail and data."""
    eps, family, key = p["eps"], p["family"], p.get("x", "L")
    law = p.get("law", "exp")
    if law not in ("exp", "power") or not (isinstance(p.get("a"), list) and len(p["a"]) == 2):
        raise UsageError("claim params: law must be exp or power, a = [method, arch prefix]")
    ref = float(p["base"] if law == "exp" else p["exponent"])
    method, arch = p["a"]
    recs = {}
    for cell, res in runner.results(exp, method):
        if not cell["arch"].startswith(arch) or not matches(cell["target"], family):
            continue
        if abs(cell["eps"] - eps) <= 1e-12:
            recs[param_of(cell["target"], key)] = res
    xs = sorted(recs)
    resolved = [x for x in xs if not recs[x]["median"].get("censored")]
    detail = f"n*({eps}) of {method} {arch} by {key}: " + ", ".join(
        f"{key}={x}: " + _fmt_n(recs[x]["median"]) for x in xs
    )
    data = {key: xs, "n_star": [recs[x]["median"]["n_star"] for x in xs]}
    if len(resolved) < 2:
        return Measured(None, depths=len(resolved), detail=detail + "; < 2 resolved", data=data)
    t = np.array(resolved, float) if law == "exp" else np.log(np.array(resolved, float))
    slopes, prefactors = [], []
    seeds = sorted(set.intersection(*[{r["seed"] for r in recs[x]["per_seed"]} for x in resolved]))
    for sd in seeds:
        rows = [next(r for r in recs[x]["per_seed"] if r["seed"] == sd) for x in resolved]
        cens = [r.get("censored") for r in rows]
        b, a = np.polyfit(t, np.log([r.get("n_star") or r.get("bound") for r in rows]), 1)
        if not any(cens):
            slopes.append(math.exp(b))  # exp(slope) > 0: the median's scale
            prefactors.append(math.exp(a))
        else:
            # a censored n* moves the least-squares slope one way: up when it is
            # right-censored above the mean x or left-censored below it, else down;
            # when all agree, the slope at the bounds is a one-sided bound
            ups = {(x > t.mean()) == (c == "right") for x, c in zip(t, cens) if c}
            g = math.exp(b)
            slopes.append((g, math.inf) if ups == {True} else (0.0, g) if ups == {False}
                          else (0.0, math.inf))  # fmt: skip
            prefactors.append((0.0, math.inf))
    ci, cc = scaling.median_censored(slopes), scaling.median_censored(prefactors)

    def shift(v):
        return None if v is None else math.log(v) - (math.log(ref) if law == "exp" else ref)

    value = shift(ci["value"]) if ci["status"] == "resolved" else None
    name = "log growth factor per unit of " + key if law == "exp" else f"exponent of {key}"
    fmt = "; ".join(
        f"{what}: median seed {v['value']:.3g}" if v["value"] is not None else f"{what}: censored"
        for what, v in (("exp(slope)", ci), ("prefactor c", cc))
    )
    detail += (
        f"; {len(resolved)} {key} value(s) resolved; per-seed fit log n* = log c + "
        + (f"{key} log g" if law == "exp" else f"k log {key}")
        + f"; {fmt}; prefactor CI [{cc['lo']}, {cc['hi']}]; value = median seed's "
        + (f"log(g / {ref:g})" if law == "exp" else f"k - {ref:g}")
        + (f" (no CI: {ci['reason']})" if ci["reason"] else "")
    )
    data.update(prefactor=cc["value"], prefactor_lo=cc["lo"], prefactor_hi=cc["hi"], what=name)
    return Measured(
        value,
        shift(ci["lo"]),
        shift(ci["hi"]),
        seeds=len(seeds),
        ci_method=ci["method"],
        depths=len(resolved),
        detail=detail,
        data=data,
        lo_censored=bool(ci.get("lo_censored")),
        hi_censored=bool(ci.get("hi_censored")),
    )


def _fmt_n(side) -> str:
    if side["censored"] == "right":
        return f"> {side['n_star']:.0f}" if side["n_star"] else "not reached"
    if side["censored"] == "left":
        return f"<= {side['n_star']:.0f}"
    return f"{side['n_star']:.0f}" if side["n_star"] is not None else "-"
