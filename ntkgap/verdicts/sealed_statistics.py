"""Claims scored on sealed predictions: predictions written before their
cells run, then scored against them.

A config's ``[[seal]]`` tables name the units (target, architecture) whose
predictions ``ntkgap run`` seals before it runs any cell of the profile
(:func:`seal_config`): the own NTK's n* from eigenlearning theory, the
trained net's from the law fitted on the ``sources`` experiments' stored
searches (:func:`ntkgap.verdicts.predictions.prediction`), the winner from
the two. A prediction is sealed once (its hash and time,
:mod:`ntkgap.verdicts.seal_order`) and never refitted; a unit already
measured when the run starts is not sealed (its prediction could see it).

Two claim statistics read them. ``sealed_winner``: the share of units,
among those whose measured winner is decided (the medians' ratio interval
excludes 1), whose winner was predicted right, with its Clopper-Pearson
interval. ``sealed_nstar``: per side (net, kernel) the median over units
of |log10(predicted / measured n*)| (a censored measurement an interval of
distances), with the order-statistic CI; the claim reads the worse side. A
unit whose prediction is missing, sealed after its first measured cell (of
its net or, spelt apart, its kernel) or edited since sealing is not scored;
the detail counts each kind.

What the order rests on: the sealed time against the stored cells' file
times (a cell recomputed later, as a stale one is, moves its time later),
and an unkeyed sha256 that shows an accidental edit, not a deliberate
re-stamp. A copy of a results folder must keep its files' times (``cp -p``,
``rsync -t``): a plain copy makes every cell look newer than its seal.
Committing the sealed files before the run makes the order a matter of
record.

References:
    Dichotomy of kernels and networks on compositional targets (arXiv
    2607.06382): the theory's predictive power, tested before measuring.
"""

from __future__ import annotations

import itertools
import os

from ntkgap._infra import config
from ntkgap.errors import UsageError
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import store
from ntkgap.targets import parse_target
from ntkgap.verdicts import (
    intervals,
    predictions,
    proportions,
    rules,
    seal_order,
    sealing,
    selection,
)

__all__ = ["SEAL_KEYS", "seal_config", "sealed_nstar", "sealed_winner", "units"]

#: the keys of a ``[[seal]]`` table
SEAL_KEYS = ("profile", "target", "arch", "eps", "sources")
#: the methods of a unit's two sides
SIDES = {"net": "net_search", "kernel": "ntk_search"}


def units(table: dict) -> list[tuple[str, str, str, dict]]:
    """The (target, arch, kernel arch, net fields) units of a ``[[seal]]``
    table or a claim's params. The kernel arch is the net's unless a unit
    names another spelling of its NTK (a mean-field net's arch spelt apart
    for its own key); the fields are cell fields the unit's net search must
    hold (``{width = 16}``: nets of one arch spec that differ in training
    only share the unit's one sealed prediction, the law's n* being the
    same for them).

    Args:
        table: with ``target`` and ``arch`` (a spec or a list of specs each;
            their product, target outermost) or ``units`` (a list of
            [target, arch], [target, arch, kernel arch] or [target, arch,
            kernel arch, {fields}]).

    Returns:
        list of (target, arch, kernel arch, fields).
    """
    if "units" in table:
        return [
            (u[0], u[1], u[2] if len(u) > 2 else u[1], dict(u[3]) if len(u) > 3 else {})
            for u in table["units"]
        ]
    as_list = lambda v: [v] if isinstance(v, str) else list(v)  # noqa: E731
    pairs = itertools.product(as_list(table["target"]), as_list(table["arch"]))
    return [(t, a, a, {}) for t, a in pairs]


def check_seal(table: dict, where: str) -> None:
    """One-line UsageError unless a ``[[seal]]`` table is well formed.

    Args:
        table: the table as read from TOML.
        where: the config and the table's index, for the message.

    Returns:
        None.
    """
    unknown = set(table) - set(SEAL_KEYS)
    if unknown:
        raise UsageError(
            f"{where}: unknown key '{sorted(unknown)[0]}' (allowed: {', '.join(SEAL_KEYS)})"
        )
    for key in SEAL_KEYS:
        if key not in table:
            raise UsageError(f"{where}: '{key}' is missing (a seal needs {', '.join(SEAL_KEYS)})")
    if table["profile"] not in rules.CLAIM_PROFILES:
        raise UsageError(
            f"{where}: profile '{table['profile']}' is unknown "
            f"(allowed: {', '.join(rules.CLAIM_PROFILES)})"
        )
    if not isinstance(table["eps"], (int, float)) or not 0 < table["eps"] < 1:
        raise UsageError(f"{where}: eps must be a number in (0, 1)")
    src = table["sources"]
    if not isinstance(src, list) or not src or not all(isinstance(x, str) and x for x in src):
        raise UsageError(
            f"{where}: sources must be a non-empty list of experiment names (the 'name' of "
            "configs whose stored net searches, in the same results folder, the law fits on)"
        )
    for target, arch, _, _ in units(table):
        for what, text, parse in (("target", target, parse_target), ("arch", arch, parse_arch)):
            try:
                parse(text)
            except UsageError as exc:
                raise UsageError(f"{where}: {what} {text!r}: {exc}") from None


def seal_config(cfg: dict, profile: str) -> list[str]:
    """Seals every unit of the config's ``[[seal]]`` tables of this profile
    (or a smaller one) not sealed yet, before any of its cells runs.

    Args:
        cfg: the config (``runs.config.load_config``'s dict).
        profile: the profile about to run.

    Returns:
        list of one-line messages: what was sealed, what was sealed before,
        and each unit measured before it could be sealed (never sealed, so
        never scored); a one-line UsageError, before any cell runs, when a
        unit cannot be predicted (its sources not stored yet).
    """
    here = rules.CLAIM_PROFILES.index(profile)
    tables = [t for t in cfg.get("seal", []) if rules.CLAIM_PROFILES.index(t["profile"]) <= here]
    folder = os.path.join(config.results_dir(), cfg["name"])
    made, before, lines = 0, 0, []
    for t in tables:
        points = predictions.collect(tuple(t["sources"]), t["eps"])  # read once per table
        for target, arch in dict.fromkeys((u[0], u[1]) for u in units(t)):
            path = sealing.prediction_path(target, arch, t["eps"])
            if os.path.exists(path):
                before += 1
            elif seal_order.first_measured(folder, target, arch) is not None:
                lines.append(f"not sealed: {target} on {arch}: measured before sealing")
            else:
                try:
                    pred, law = predictions.prediction(
                        target, arch, t["eps"], points=points, sources=tuple(t["sources"])
                    )
                except UsageError as exc:  # its cells would run unpredicted: none runs
                    raise UsageError(
                        f"seal: no prediction of {target} on {arch} ({exc}); no cell was run"
                    ) from None
                sealing.seal_prediction(pred, law["keys"])
                made += 1
    if made or before:
        lines.insert(0, f"{cfg['name']}: {made} predictions sealed, {before} sealed before")
    return lines


def scored(params: dict, experiment: str) -> tuple[list[dict], dict]:
    """Each unit's sealed prediction scored against its stored searches.

    Args:
        params: the claim's params (``eps``, the units: :func:`units`).
        experiment: the experiment whose cells the units' searches are.

    Returns:
        (rows, counts): one row per scored unit (``target``, ``arch``,
        ``fields``, ``winner_pred`` and ``sealing.score_against``'s keys);
        counts of units ``not sealed``, ``refused`` (late or edited: the
        reason of the first in ``first_refusal``), ``not measured`` and
        ``ambiguous`` (several stored net searches fit it).
    """
    eps, root = params["eps"], config.results_dir()
    recs: dict = {}
    for meth in SIDES.values():
        for cell, res in store.results(experiment, meth):
            if selection.at(cell, eps):
                recs.setdefault((meth, cell["target"], cell["arch"]), []).append((cell, res))
    folder = os.path.join(root, experiment)
    rows, counts = [], {"not sealed": 0, "refused": 0, "not measured": 0, "ambiguous": 0}
    for target, arch, kernel_arch, fields in units(params):
        path = sealing.prediction_path(target, arch, eps, root)
        sealed = store.load_result(path) if os.path.exists(path) else None
        if sealed is None:
            counts["not sealed"] += 1
            continue
        try:
            seal_order.check_sealed_before(sealed, path, folder)
            _check_kernel_after(sealed, path, folder, target, kernel_arch)
        except UsageError as exc:
            counts["refused"] += 1
            counts.setdefault("first_refusal", str(exc))
            continue
        net = _one(recs.get((SIDES["net"], target, arch), []), fields)
        kern = _one(recs.get((SIDES["kernel"], target, kernel_arch), []), {})
        if net is _MANY or kern is _MANY:
            counts["ambiguous"] += 1
            continue
        if net is None or kern is None:
            counts["not measured"] += 1
            continue
        pred = sealed["prediction"]
        row = sealing.score_against(pred, net, kern)
        rows.append(
            dict(row, target=target, arch=arch, fields=fields, winner_pred=pred.get("winner"))
        )
    return rows, counts


#: :func:`_one`'s answer when several stored searches fit a unit
_MANY = object()


def _one(found: list, fields: dict):
    """The one stored search among ``found`` ((cell, result) pairs) holding
    ``fields``: its result, None when there is none, ``_MANY`` when several
    fit (a unit whose fields do not tell its nets apart)."""
    fit = [res for cell, res in found if all(cell.get(k) == v for k, v in fields.items())]
    return fit[0] if len(fit) == 1 else None if not fit else _MANY


def _check_kernel_after(sealed: dict, path: str, folder: str, target: str, arch: str) -> None:
    """Refuses a prediction sealed after the first cell of its unit's kernel
    where the kernel's cells are spelt apart from the net's."""
    if arch == sealed["prediction"]["arch"]:
        return  # checked with the net's (check_sealed_before)
    first = seal_order.first_measured(folder, target, arch)
    if first is not None and seal_order.check_hash(sealed, path) > first:
        raise UsageError(
            f"sealed prediction {path}: sealed at {sealed['sealed_at']}, after the first "
            f"measured cell of {target} on {arch} (its kernel): not scored"
        )


def _counts_text(counts: dict) -> str:
    """The units left unscored, in words ("" when none)."""
    parts = [f"{v} {k}" for k, v in counts.items() if k != "first_refusal" and v]
    text = f"; units not scored: {', '.join(parts)}" if parts else ""
    if "first_refusal" in counts:
        text += f" (first refusal: {counts['first_refusal']})"
    return text


def sealed_winner(params: dict, experiment: str) -> rules.Measured:
    """The sealed winners scored on the units whose measured winner is
    decided (the medians' ratio interval excludes 1). Without a
    ``baseline``: the share predicted right. With ``baseline`` ("net" or
    "kernel": always calling that side), a paired comparison: on the units
    where the prediction departs from the baseline exactly one of the two is
    right, and the value is the share of them the prediction gets right
    (an exact sign test, McNemar's; above 0.5: better than the baseline). A
    prediction that never departs from it has no such unit: inconclusive.
    Clopper-Pearson 0.95 on the count either way; the detail gives both.

    Args:
        params: the claim's params (``eps``, the units, ``rule``, optional
            ``baseline``).
        experiment: the experiment holding the units' searches.

    Returns:
        Measured.

    References:
        McNemar, Psychometrika 12 (1947) 153-157.
    """
    rows, counts = scored(params, experiment)
    decided = [r for r in rows if r["winner_measured"] is not None]
    predicted = [r for r in decided if r["winner_pred"]]
    right = sum(r["winner_pred"] == r["winner_measured"] for r in predicted)
    base = params.get("baseline")
    if base is None:
        name = "units' winner predicted right"
        out = proportions.binomial(name, right, len(predicted), params["rule"])
    else:
        apart = [r for r in predicted if r["winner_pred"] != base]
        k = sum(r["winner_pred"] == r["winner_measured"] for r in apart)
        name = f"units where the prediction departs from always '{base}', right"
        out = proportions.binomial(name, k, len(apart), params["rule"])
        wins = sum(r["winner_measured"] == base for r in predicted)
        out.detail += (
            f"; predicted right {right} of {len(predicted)}, always '{base}' {wins} of"
            f" {len(predicted)}"
        )
    out.detail += (
        f" ({len(rows) - len(decided)} scored units undecided, {len(decided) - len(predicted)}"
        " decided without a kernel prediction)" + _counts_text(counts)
    )
    out.data = {"rows": rows, "counts": counts}
    return out


def _side(name: str, dists: list, rule: dict) -> rules.Measured:
    """Median over units of one side's distance intervals, with its CI."""
    if not dists:
        return rules.Measured(None, detail=f"{name}: no scored unit", verdict=rules.INCONCLUSIVE)
    ci = intervals.median_ci(dists)
    lo, hi = ci["median"]
    open_lo, open_hi = ci["lo"] in (None, -intervals.INF), ci["hi"] in (None, intervals.INF)
    return rules.Measured(
        lo if lo == hi else None,
        None if open_lo else ci["lo"],
        None if open_hi else ci["hi"],
        seeds=len(dists),
        ci_method=ci["method"] and ci["method"].replace("seeds", "units"),
        detail=f"{name}: median in [{lo:.3g}, {hi:.3g}] over {len(dists)} units"
        + (f" ({ci['reason'].replace('seeds', 'units')})" if ci["reason"] else ""),
        hi_censored=ci["hi"] == intervals.INF,
        verdict=rules.rule_verdict(rule, ci["lo"], ci["hi"]),
        data={"median": [lo, hi]},
    )


def _upper(m: rules.Measured) -> float:
    """A side's CI upper end (inf where open); without a CI (too few units)
    its median's upper end; -inf for a side with no scored unit."""
    if m.hi is not None or m.hi_censored:
        return intervals.INF if m.hi is None else m.hi
    return m.data["median"][1] if m.data else -intervals.INF


def sealed_nstar(params: dict, experiment: str) -> rules.Measured:
    """Median over units of |log10(predicted / measured n*)|, per side: the
    claim reads *supported* when both sides are, *not supported* when either
    side is, else *inconclusive*; its value and CI are the worse side's.

    Args:
        params: the claim's params (``eps``, the units, ``rule``).
        experiment: the experiment holding the units' searches.

    Returns:
        Measured.
    """
    rows, counts = scored(params, experiment)
    net = _side("net |log10 pred/measured|", [r["error_log10"] for r in rows], params["rule"])
    kern = _side(
        "kernel |log10 pred/measured|",
        [r["kernel_error_log10"] for r in rows if r["kernel_error_log10"] is not None],
        params["rule"],
    )
    verdicts = {net.verdict, kern.verdict}
    refuted = [m for m in (net, kern) if m.verdict == rules.NOT_SUPPORTED]
    worse = refuted[0] if refuted else max((net, kern), key=_upper)
    worse.verdict = (
        rules.NOT_SUPPORTED if refuted
        else rules.SUPPORTED if verdicts == {rules.SUPPORTED}
        else rules.INCONCLUSIVE
    )  # fmt: skip
    bare = sum(r["kernel_error_log10"] is None for r in rows)
    worse.detail = (
        f"{net.detail}; {kern.detail}"
        + (f" ({bare} units without a kernel prediction)" if bare else "")
        + _counts_text(counts)
    )
    worse.data = {"rows": rows, "counts": counts}
    return worse


#: the statistics by name (``ntkgap.verdicts.claims.STATISTICS`` takes them from here)
CLAIM_STATISTICS = {"sealed_winner": sealed_winner, "sealed_nstar": sealed_nstar}
