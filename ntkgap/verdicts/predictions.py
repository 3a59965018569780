"""Predicting n* before measuring it, and scoring the prediction (E10).

Kernel side: eigenlearning's n*(eps) of the architecture's own NTK
(``kernels.theory.nstar``), flagged where the theory is not valid; where no
exact spectrum exists (a Walsh support beyond the exact transform, RHM
strings too many to enumerate) the kernel side is absent with the reason,
never extrapolated, and the winner is then not predicted.

Net side: the architectural-complexity law n* = c C^p, C the number of
constituents (``targets.constituents.of_target``), fitted by least squares
of log n* on log C over the stored ``net_search`` medians of *other*
families at the same eps. A stored median (its interval from
``intervals.median_ci``) is a point when finite (a resolved search's final
bracket: its log-scale midpoint, as the claims read a bracket) and a bound
when censored. Bounds enter as one-sided squared hinges: a lower bound b
adds max(0, b - f(x))^2 to the sum of squares, an upper bound
max(0, f(x) - b)^2, so a bound costs nothing when the fit is on its side
and pulls like a point when it is not (convex; solved from the ordinary
fit of the points). The prediction interval is the t-based prediction
interval of that log-linear regression: log n*_0 +- t_{m-2, (1+level)/2} s
sqrt(1 + 1/m + (x_0 - xbar)^2 / Sxx), with m the resolved points, s^2 =
RSS / (m - 2) (RSS with the bounds' hinge terms) and xbar, Sxx over the
points. Fewer than ``MIN_POINTS`` resolved points or a single C: refused in
one line.

Groups and units: a measurement's group is its target family
(``selection.family_of``) with the architecture less its depth (activation,
bias, modification); its family is the target family alone. Both ``predict``
and E10's leave-one-out exclude every measurement of the family predicted
(all its architecture variants, every eps), so that E10 scores the
predictions ``predict`` makes for a new family; E10 predicts each held-out
point from the other families' points at that point's eps (E10's params list
the levels read). E10's claims count units, never points. E10-kernel and
E10-winner: one per (family, depth, eps), whose architecture variants share
targets, seeds and splits (their distances' median is one value; their share
predicted right one count). E10-net and E10-coverage: one per family, since
a held-out family's depths share one fitted law, whose error there is one
family-level offset (coverage is counted per family for this reason);
the kernel theory fits nothing, so its depths stay separate units. A family
is one arity of a node function; its siblings of other arities stay in its
fit, so E10-net's detail also scores each family by a law fitted without
its node function's every arity (``kin_of``; random tables of any arity
count as one kind), a sensitivity check that decides nothing.

Scoring: a censored measurement is an interval; |log10(pred / measured)|
is then the interval of distances from the prediction to it (0 at the near
end when the prediction lies inside the bound). A prediction interval is
consistent with it when the two intersect (``covers``); E10-coverage and the
sealed score's ``coverage`` count it covered only when it lies inside the
interval, missed when the two are disjoint, and undetermined otherwise (a
censored bound or a bracket across an end: ``coverage_state``).

References:
    Dichotomy of kernels and networks on compositional targets (arXiv
    2607.06382); Simon, Dickens, Karkada & DeWeese, "The Eigenlearning
    Framework" (arXiv 2110.03922); Draper & Smith, Applied Regression
    Analysis (3rd ed., 1998), sec. 3.1 (prediction interval of a new
    observation); Clopper & Pearson, Biometrika 26 (1934) 404-413.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from ntkgap import specs
from ntkgap._infra import config
from ntkgap._infra.files import atomic_write, dumps
from ntkgap.errors import UsageError
from ntkgap.runs import scaling, store
from ntkgap.targets import constituents, parse_target
from ntkgap.verdicts import extrapolation, intervals, rules, seal_order, selection

INF = math.inf
LN10 = math.log(10.0)
#: the stored results E10 and ``predict`` read (E10's own cells: kernel searches, and
#: net-and-kernel pairs on more tree families)
SOURCES = ("e4_trees", "e8_universality", "e9_rhm", "e10_predict")
NET_METHOD, KERNEL_METHOD = "net_search", "ntk_search"
LAW_FORM = "n* = c * C^p"
#: resolved points the law needs (two parameters and one degree of freedom)
MIN_POINTS = 3
PI_LEVEL = 0.95
PREDICTIONS = "predictions"


@dataclass(frozen=True)
class Point:
    """One (group, depth) at one eps: natural-log intervals of the medians
    over seeds of the stored net and own-kernel n* (None where not stored),
    C, the storage keys of the cells behind them and the kernel search's
    n_max (None without one)."""

    group: str
    family: str
    experiment: str
    target: str
    arch: str
    C: int
    net: tuple | None
    kernel: tuple | None
    keys: tuple
    eps: float
    kernel_n_max: float | None = None


def arch_variant(arch: str) -> str:
    """An architecture spec less its depth ``L`` (the group's architecture).

    Args:
        arch: an arch spec, e.g. ``tree:act=relu,arity=2,L=3``.

    Returns:
        str, e.g. ``tree:act=relu,arity=2``.
    """
    return specs.label(arch, drop=("L",))


def family_label(target: str) -> str | None:
    """The depth-indexed family of a target spec in words.

    Args:
        target: a target spec (a DAG file too).

    Returns:
        str (``selection.family_label``), or None for a target without a
        depth family: a DAG file (``file:PATH``) or a spec without ``L``.
    """
    if target.strip().startswith("file:"):  # as targets.parse_target tells a DAG file
        return None
    fam = selection.family_of(target)
    return selection.family_label(fam) if fam else None


def kin_of(target: str) -> str | None:
    """A target's family less its arity: the node function's kin (every
    arity of a tree's node function, e.g. ``tree: node=tanh, seed=0``; a
    family without an arity is its own kin).

    Args:
        target: a target spec string.

    Returns:
        str, or None for a target without a depth family.
    """
    fam = selection.family_of(target)
    return selection.family_label({k: v for k, v in fam.items() if k != "arity"}) if fam else None


def median_log(record: dict) -> tuple:
    """The natural-log interval of a search record's median over seeds.

    Args:
        record: a search result (``per_seed`` with status resolved/left/right).

    Returns:
        (lo, hi): a point when resolved, half-open when censored.
    """
    sets = [intervals.log_interval(s) for s in record["per_seed"]]
    return tuple(intervals.median_ci(sets, min_seeds=INF)["median"])


def _preference(found, budget: str = "base") -> tuple:
    """A stored search's rank among those of one pair. ``"base"``: more seeds
    first, then the smaller training budget (the design's own; a larger one is
    a robustness rerun, e.g. E4's twice-the-steps net at L = 5). ``"max"``
    (the claims' budget recheck): among searches with the CI's seeds
    (``scaling.MIN_SEEDS_FOR_CI``) the larger budget first, then more seeds."""
    cell, res = found
    seeds, steps = len(res["per_seed"]), cell.get("steps", 0)
    if budget == "max":
        return seeds >= scaling.MIN_SEEDS_FOR_CI, steps, seeds
    return seeds, -steps


def _searches(experiment, method, eps, profile, budget: str = "base"):
    """{(target, arch): (cell, result)} of one search method at eps, ridgeless;
    of several stored searches of one pair, the first by ``_preference``
    (the last stored among equals)."""
    out = {}
    rank = functools.partial(_preference, budget=budget)
    for cell, res in store.results(experiment, method, profile=profile):
        if selection.at(cell, eps) and family_label(cell["target"]) is not None:
            old = out.get((cell["target"], cell["arch"]))
            if old is None or rank((cell, res)) >= rank(old):
                out[(cell["target"], cell["arch"])] = (cell, res)
    return out


def eps_levels(eps) -> tuple:
    """One error level or several as a tuple of floats.

    Args:
        eps: a number or a sequence of numbers.

    Returns:
        tuple of float.
    """
    return tuple(float(e) for e in eps) if isinstance(eps, (list, tuple)) else (float(eps),)


def collect(
    sources=SOURCES, eps=0.1, *, profile: str | None = None, budget: str = "base"
) -> list[Point]:
    """Every stored (group, depth) with a net search or an own-kernel search
    at ``eps``.

    Args:
        sources: experiment names whose stored results are read.
        eps: the error level of the searches, or a list of levels (each
            point carries its own).
        profile: as ``store.results``.
        budget: which of a pair's stored searches (``_preference``).

    Returns:
        list of Point, in level, source and storage order: those with a net
        search first (``keys`` its cell's key first), then those with a
        kernel search only (``net`` None: E10-kernel's, never the law's).
    """
    points = []
    for level, exp in ((e, x) for e in eps_levels(eps) for x in sources):
        kern = _searches(exp, KERNEL_METHOD, level, profile)
        nets = _searches(exp, NET_METHOD, level, profile, budget)
        for pair in [*nets, *(k for k in kern if k not in nets)]:
            net, k = nets.get(pair), kern.get(pair)
            target, arch = pair
            fam = family_label(target)
            points.append(
                Point(
                    f"{fam} | {arch_variant(arch)}",
                    fam,
                    exp,
                    target,
                    arch,
                    constituents.of_target(parse_target(target)),
                    median_log(net[1]) if net else None,
                    median_log(k[1]) if k else None,
                    tuple(store.cell_key(x[0]) for x in (net, k) if x),
                    level,
                    float(k[0]["n_max"]) if k else None,
                )
            )
    return points


def _hinge_fit(x, y, lows, highs):
    """(log c, p) minimising the squares of the points' residuals plus the
    bounds' one-sided hinges, started from the points' ordinary fit."""
    p0, c0 = np.polyfit(x, y, 1)

    def resid(theta):
        c, p = theta
        r = [y - (c + p * x)]
        if len(lows):
            r.append(np.maximum(0.0, lows[:, 1] - (c + p * lows[:, 0])))
        if len(highs):
            r.append(np.maximum(0.0, (c + p * highs[:, 0]) - highs[:, 1]))
        return np.concatenate(r)

    sol = optimize.least_squares(resid, [c0, p0], method="trf", xtol=1e-12, ftol=1e-12)
    return float(sol.x[0]), float(sol.x[1]), float(np.sum(resid(sol.x) ** 2))


def fit_law(points) -> dict:
    """The law n* = c C^p on the points' stored net medians (see the module
    docstring for the brackets, the bounds and the prediction interval).

    Args:
        points: Points of one eps (those with ``net`` None are skipped).

    Returns:
        dict with ``form``, ``c``, ``p``, ``log_c``, ``s`` (residual sd, log
        scale), ``dof``, ``m`` (resolved points), ``bounds`` (censored
        medians used as bounds), ``xbar``, ``sxx``, ``families`` and
        ``groups`` (fitted on), ``keys`` (the cells fitted on), ``method``.

    References:
        Draper & Smith, Applied Regression Analysis (3rd ed., 1998), sec. 3.1.
    """
    pts, lows, highs, used = [], [], [], []
    for pt in points:
        if pt.net is None or pt.net == (-INF, INF):
            continue
        lo, hi = pt.net
        x = math.log(pt.C)
        if hi == INF:
            lows.append((x, lo))
        elif lo == -INF:
            highs.append((x, hi))
        else:  # resolved: a point, or a search's final bracket read at its midpoint
            pts.append((x, (lo + hi) / 2.0))
        used.append(pt)
    xs = np.array([x for x, _ in pts])
    if len(pts) < MIN_POINTS or len(set(xs.tolist())) < 2:
        raise UsageError(
            f"predict: nothing to fit on ({len(pts)} resolved net n* of other families at "
            f"{len(set(xs.tolist()))} distinct constituent counts; need {MIN_POINTS} and 2)"
        )
    ys = np.array([y for _, y in pts])
    log_c, p, rss = _hinge_fit(
        xs, ys, np.array(lows).reshape(-1, 2), np.array(highs).reshape(-1, 2)
    )
    dof = len(pts) - 2
    return {
        "form": LAW_FORM,
        "c": math.exp(log_c),
        "p": p,
        "log_c": log_c,
        "s": math.sqrt(rss / dof),
        "dof": dof,
        "m": len(pts),
        "bounds": len(lows) + len(highs),
        "xbar": float(xs.mean()),
        "sxx": float(np.sum((xs - xs.mean()) ** 2)),
        "families": sorted({pt.family for pt in used}),
        "groups": sorted({pt.group for pt in used}),
        "keys": sorted({k for pt in used for k in pt.keys[:1]}),
        "method": "least squares of log n* on log C, censored medians as one-sided hinge "
        f"bounds; t-based {PI_LEVEL:g} prediction interval of the log-linear regression",
    }


def law_predict(law: dict, C: int, level: float = PI_LEVEL) -> dict:
    """The law's n* at C with its prediction interval.

    Args:
        law: from ``fit_law``.
        C: the number of constituents.
        level: the interval's nominal coverage.

    Returns:
        dict with ``n_star`` and ``interval`` ([lo, hi], natural scale).
    """
    x0 = math.log(C)
    y0 = law["log_c"] + law["p"] * x0
    t = float(stats.t.ppf(0.5 + level / 2.0, law["dof"]))
    half = t * law["s"] * math.sqrt(1.0 + 1.0 / law["m"] + (x0 - law["xbar"]) ** 2 / law["sxx"])
    return {"n_star": math.exp(y0), "interval": [math.exp(y0 - half), math.exp(y0 + half)]}


def kernel_theory(target: str, arch: str, eps: float) -> dict:
    """Eigenlearning's n*(eps) of the architecture's own NTK.

    Args:
        target: a target spec.
        arch: an architecture spec (refused in one line where it cannot
            read the target's domain).
        eps: the relative test MSE.

    Returns:
        dict with ``n_star`` (``n_max`` when censored; None where no exact
        spectrum exists), ``censored``, ``theory_valid`` and ``reason``
        (why the theory is absent, else None).

    References:
        Simon, Dickens, Karkada & DeWeese, arXiv 2110.03922.
    """
    # here: the spectra load JAX, which ``import ntkgap`` and the claims must not
    from ntkgap.kernels import theory
    from ntkgap.nets.arch import parse_arch

    a, t = parse_arch(arch), parse_target(target)
    a.check_domain(t.domain)
    try:
        sp, _ = theory.spectrum(a, t)
        r = theory.nstar(sp, eps, a, t.domain)
    except UsageError as exc:  # no exact spectrum here: absent, never extrapolated
        return {"n_star": None, "censored": False, "theory_valid": False, "reason": str(exc)}
    n = r["n_max"] if r["censored"] else r["n_star"]
    return {
        "n_star": float(n),
        "censored": bool(r["censored"]),
        "theory_valid": r["theory_valid"],
        "reason": None,
    }


def combine(kernel: dict, net: dict, law: dict) -> dict:
    """The contract's fields from a kernel prediction and a law prediction.

    Args:
        kernel: ``kernel_theory``'s dict.
        net: ``law_predict``'s dict.
        law: the fitted law.

    Returns:
        dict with ``kernel_n_star``, ``kernel_censored``,
        ``kernel_theory_valid``, ``kernel_reason``, ``net_n_star``,
        ``net_interval``, ``ratio`` (kernel / net), ``ratio_interval`` (open
        above when the kernel is censored), ``winner`` ("net" when ratio >
        1, else "kernel"), ``winner_decided`` (the ratio interval excludes
        1) and ``law``; ratio, its interval and the winner are None where
        the kernel theory is absent.
    """
    k, (lo, hi) = kernel["n_star"], net["interval"]
    out = {
        "kernel_n_star": k,
        "kernel_censored": kernel["censored"],
        "kernel_theory_valid": kernel["theory_valid"],
        "kernel_reason": kernel.get("reason"),
        "net_n_star": net["n_star"],
        "net_interval": [lo, hi],
        "winner": None,
        "winner_decided": False,
        "ratio": None,
        "ratio_interval": None,
        "law": {key: law[key] for key in ("form", "c", "p", "s", "dof", "families", "method")},
    }
    if k is not None:
        r_iv = [k / hi, INF if kernel["censored"] or lo == 0 else k / lo]
        ratio = k / net["n_star"]
        out.update(ratio=ratio, ratio_interval=r_iv, winner="net" if ratio > 1 else "kernel")
        out["winner_decided"] = r_iv[0] > 1 or r_iv[1] < 1
    return out


def prediction(
    target: str, arch: str, eps: float = 0.1, *, points=None, sources=SOURCES,
    profile: str | None = None, kernel_fn=kernel_theory,
) -> tuple[dict, dict]:  # fmt: skip
    """The prediction of ``predict``, unsealed, with the law behind it.

    Args:
        target: a target spec (a DAG file too).
        arch: the architecture spec (the kernel is its own NTK).
        eps: the relative test MSE.
        points: ``collect``'s Points at ``eps`` (default: collected now).
        sources: the experiments whose stored results are fitted on.
        profile: as ``store.results``.
        kernel_fn: (target, arch, eps) -> ``kernel_theory``'s dict.

    Returns:
        (``combine``'s dict plus ``target``, ``arch``, ``eps``, ``C``,
        ``measured`` (whether the family has stored net n*) and
        ``extrapolation`` (``extrapolation.assess``: families fitted on and
        needed, the distance of C outside the fitted range; a flagged
        question's interval widened to the family level, a refused one's
        [0, inf]); the law).
    """
    own = family_label(target)
    points = collect(sources, eps, profile=profile) if points is None else points
    points = [pt for pt in points if abs(pt.eps - eps) <= selection.EPS_TOL and pt.net is not None]
    if not points:
        raise UsageError(
            f"predict: nothing to fit on: no stored net search of {', '.join(sources)} at eps "
            f"{eps:g} in {config.results_dir()} (run them there, or give --results DIR)"
        )
    others = [pt for pt in points if pt.family != own and pt.target != target]
    law = fit_law(others)
    C = constituents.of_target(parse_target(target))
    ext = extrapolation.assess(others, law, C, PI_LEVEL)
    net = law_predict(law, C)
    if ext["refused"]:
        net["interval"] = [0.0, INF]
    elif ext["interval"] is not None:  # the wider of the point- and family-level intervals
        lo, hi = net["interval"]
        net["interval"] = [min(lo, ext["interval"][0]), max(hi, ext["interval"][1])]
    out = combine(kernel_fn(target, arch, eps), net, law)
    out.update(target=target, arch=arch, eps=eps, C=C, measured=len(others) < len(points))
    out["extrapolation"] = {k: v for k, v in ext.items() if k != "interval"}
    return out, law


def predict(
    target: str,
    arch: str,
    eps: float = 0.1,
    *,
    sources=SOURCES,
    profile: str | None = None,
    seal: bool = True,
    kernel_fn=kernel_theory,
) -> dict:
    """Predict the kernel's and the trained net's n*(eps) before training.

    The law is fitted on the stored net searches at ``eps`` of every family
    but the target's own. When no stored net search of the target's family
    exists, the prediction is sealed (``seal_prediction``) before anything
    is measured.

    Args:
        target: a target spec (a DAG file too).
        arch: the architecture spec (the kernel is its own NTK).
        eps: the relative test MSE.
        sources: the experiments whose stored results are fitted on.
        profile: as ``store.results``.
        seal: whether to seal a prediction for an unmeasured family.
        kernel_fn: (target, arch, eps) -> ``kernel_theory``'s dict.

    Returns:
        ``prediction``'s dict plus ``sealed`` (the file written, or None).
    """
    out, law = prediction(target, arch, eps, sources=sources, profile=profile, kernel_fn=kernel_fn)
    out["sealed"] = None
    if seal and not out["measured"]:
        out["sealed"] = seal_prediction(out, law["keys"])
    return out


def prediction_path(target: str, arch: str, eps: float, root: str | None = None) -> str:
    """The sealed prediction's file: ``results/predictions/<hash>.json``.

    Args:
        target: the target spec.
        arch: the architecture spec.
        eps: the error level.
        root: the results folder (default ``config.results_dir()``).

    Returns:
        str path; the hash is of {target, arch, eps}.
    """
    key = json.dumps({"target": target, "arch": arch, "eps": eps}, sort_keys=True)
    name = hashlib.sha256(key.encode()).hexdigest()[:20] + ".json"
    return os.path.join(root or config.results_dir(), PREDICTIONS, name)


def seal_prediction(prediction: dict, fitted_on, root: str | None = None) -> str:
    """Writes a prediction once, before its measurement; never overwrites.

    Args:
        prediction: ``predict``'s dict (inputs, law, numbers).
        fitted_on: the storage keys of the results the law was fitted on.
        root: the results folder (default ``config.results_dir()``).

    Returns:
        str, the file written.
    """
    path = prediction_path(prediction["target"], prediction["arch"], prediction["eps"], root)
    if os.path.exists(path):
        raise UsageError(f"predict: {path} is sealed already; a prediction is never overwritten")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    body = {k: v for k, v in prediction.items() if k != "sealed"}
    sealed = seal_order.stamp({"prediction": body, "fitted_on": sorted(fitted_on)})
    atomic_write(path, dumps(sealed, indent=1))
    return path


def sealed_or_seal(prediction: dict, fitted_on, root: str | None = None) -> tuple[str, dict]:
    """The prediction sealed earlier for the same (target, arch, eps), else
    this one sealed now (a rerun scores what was sealed before its first
    measurement, never a refit).

    Args:
        prediction: ``prediction``'s dict.
        fitted_on: the storage keys of the results its law was fitted on.
        root: the results folder (default ``config.results_dir()``).

    Returns:
        (path, the sealed prediction).
    """
    path = prediction_path(prediction["target"], prediction["arch"], prediction["eps"], root)
    sealed = store.load_result(path) if os.path.exists(path) else None
    if sealed is None:
        return seal_prediction(prediction, fitted_on, root), prediction
    return path, sealed["prediction"]


def distance(pred: float, iv) -> tuple:
    """|log10(pred / measured)| over a measured natural-log interval.

    Args:
        pred: the predicted n* (> 0).
        iv: (lo, hi) of log measured n* (-inf / inf open).

    Returns:
        (near, far) in log10: near is 0 when pred lies inside the interval.
    """
    y, (lo, hi) = math.log(pred), iv
    near = 0.0 if lo <= y <= hi else min(abs(y - lo), abs(y - hi))
    return near / LN10, max(abs(y - lo), abs(y - hi)) / LN10


def covers(interval, iv) -> bool:
    """Whether a prediction interval is consistent with a measured interval.

    Args:
        interval: [lo, hi] natural scale.
        iv: (lo, hi) of log measured n*.

    Returns:
        bool: the two intersect (a point: it lies inside).
    """
    a, b = math.log(interval[0]), math.log(interval[1])
    return a <= iv[1] and iv[0] <= b


def coverage_state(interval, iv) -> bool | None:
    """Whether a prediction interval covers a measured n*, as E10-coverage
    counts it: a censored bound (or a bracket across an end) that overlaps
    the interval but reaches beyond it is undetermined, since the truth may
    lie on either side (``covers``, the sealed score's consistency, calls it
    consistent).

    Args:
        interval: [lo, hi] natural scale.
        iv: (lo, hi) of log measured n* (hi inf where right-censored).

    Returns:
        True inside, False disjoint, None undetermined.
    """
    a, b = math.log(interval[0]), math.log(interval[1])
    if a <= iv[0] and iv[1] <= b:
        return True
    return False if iv[1] < a or b < iv[0] else None


#: ``coverage_state``'s values in words (the sealed score and ``compare --predict``)
COVERAGE_WORDS = {True: "covered", False: "missed", None: "undetermined"}


def score_against(pred: dict, net_record: dict, kernel_record: dict | None = None) -> dict:
    """Scores a prediction against the net (and kernel) searches made after it.

    Args:
        pred: ``prediction``'s dict (``net_n_star``, ``net_interval``,
            ``kernel_n_star``, ``winner``).
        net_record: the net search's stored result (``per_seed``).
        kernel_record: the own-kernel search's stored result, or None.

    Returns:
        dict with ``measured`` (log-median interval as [lo, hi] n*),
        ``error_log10`` ([near, far] of |log10(pred / measured)|),
        ``consistent`` (the point prediction lies inside the measured
        interval), ``covered`` (the prediction interval meets it: consistent),
        ``coverage`` ("covered", "missed" or "undetermined", as E10-coverage
        counts it: ``coverage_state``) and, with
        a kernel record, ``kernel_measured``, ``kernel_error_log10`` (None
        where the theory is absent) and ``winner_measured`` (None where the
        medians' ratio interval contains 1).
    """
    iv = median_log(net_record)
    near, far = distance(pred["net_n_star"], iv)
    out = {
        "measured": [math.exp(iv[0]), math.exp(iv[1])],
        "error_log10": [near, far],
        "consistent": near == 0.0,
        "covered": covers(pred["net_interval"], iv),
        "coverage": COVERAGE_WORDS[coverage_state(pred["net_interval"], iv)],
    }
    if kernel_record is not None:
        kiv = median_log(kernel_record)
        k = pred.get("kernel_n_star")
        out["kernel_measured"] = [math.exp(kiv[0]), math.exp(kiv[1])]
        out["kernel_error_log10"] = None if k is None else list(distance(k, kiv))
        out["winner_measured"] = _winner_of(kiv, iv)
    return out


def score(
    path: str, record: dict, kernel_record: dict | None = None, folder: str | None = None
) -> dict:
    """Scores a sealed prediction against a later net search.

    Args:
        path: the sealed file (``seal_prediction``).
        record: the net search's stored result (``per_seed``).
        kernel_record: the own-kernel search's stored result, or None.
        folder: the experiment folder of the measured cells: when given, a
            prediction edited since sealing, or sealed after the first
            measured cell of its pair, is refused
            (``seal_order.check_sealed_before``).

    Returns:
        ``score_against``'s dict.
    """
    sealed = store.load_result(path)
    if sealed is None:
        raise UsageError(f"score: no sealed prediction at {path}")
    if folder is not None:
        seal_order.check_sealed_before(sealed, path, folder)
    return score_against(sealed["prediction"], record, kernel_record)


def _winner_of(kernel_iv, net_iv) -> str | None:
    """'net' / 'kernel' where the log medians' ratio interval excludes 1."""
    (klo, khi), (nlo, nhi) = kernel_iv, net_iv
    lo, hi = klo - nhi, khi - nlo
    return "net" if lo > 0 else "kernel" if hi < 0 else None


def _loo_row(pt: Point, law: dict, eps: float, kernel_fn) -> dict:
    """One held-out point predicted by a law fitted without it (without its
    family, or its node function: ``leave_one_out``'s ``held``)."""
    net = law_predict(law, pt.C)
    row = {
        "group": pt.group,
        "family": pt.family,
        "target": pt.target,
        "arch": pt.arch,
        "eps": eps,
        "C": pt.C,
        "net": pt.net,
        "kernel": pt.kernel,
        "net_pred": net["n_star"],
        "net_interval": net["interval"],
        "kernel_pred": None,
        "kernel_valid": None,
        "winner_pred": None,
        "winner_measured": None,
    }
    if pt.kernel is not None:
        kern = kernel_fn(pt.target, pt.arch, eps)
        both = combine(kern, net, law)
        row.update(kernel_pred=kern["n_star"], kernel_valid=kern["theory_valid"])
        row.update(winner_pred=both["winner"], winner_measured=_winner_of(pt.kernel, pt.net))
    return row


def leave_one_out(points, kernel_fn=kernel_theory, fit=None, held=None) -> list[dict]:
    """Each family held out in turn (all its architecture variants): for
    each eps of it, the law fitted on the other families' points at that eps
    only, the held-out family's points predicted and compared.

    Args:
        points: ``collect``'s Points (each is read at its own eps; those
            without a net search are not predicted here).
        kernel_fn: (target, arch, eps) -> ``kernel_theory``'s dict.
        fit: the law fitter (default ``fit_law``; a test may watch it).
        held: Point -> the key held out together (default its family;
            ``kin_of`` holds out every arity of a node function at once).

    Returns:
        list of rows, one per predicted point: ``group``, ``family``,
        ``target``, ``arch``, ``eps``, ``C``, ``net`` / ``kernel`` (measured
        log intervals, kernel None where not stored), ``net_pred``,
        ``net_interval``, ``kernel_pred`` (None where not stored or the
        theory is absent), ``kernel_valid``, ``winner_pred``,
        ``winner_measured``. A (family, eps) whose law is refused (too few
        points elsewhere) has no row.
    """
    fit = fit or fit_law
    held = held or (lambda pt: pt.family)
    rows = []
    keyed = [(held(pt), pt) for pt in points if pt.net is not None]  # each key once
    for key, level in sorted({(k, pt.eps) for k, pt in keyed}):
        at = [(k, pt) for k, pt in keyed if abs(pt.eps - level) <= selection.EPS_TOL]
        try:
            law = fit([pt for k, pt in at if k != key])
        except UsageError:
            continue
        rows += [_loo_row(pt, law, level, kernel_fn) for k, pt in at if k == key]
    return rows


def kernel_rows(points, kernel_fn=kernel_theory) -> list[dict]:
    """Theory against measurement for the own-architecture kernel: every
    point with a kernel search, whether or not a net search is stored
    beside it (no law is fitted: the theory sees no measurement).

    Args:
        points: ``collect``'s Points.
        kernel_fn: (target, arch, eps) -> ``kernel_theory``'s dict.

    Returns:
        list of rows: ``group``, ``family``, ``target``, ``arch``, ``eps``,
        ``C``, ``kernel`` (measured log interval), ``kernel_pred`` (None
        where no exact spectrum exists), ``kernel_valid`` and
        ``kernel_n_max`` (the search's largest n).
    """
    rows = []
    for pt in points:
        if pt.kernel is None:
            continue
        kern = kernel_fn(pt.target, pt.arch, pt.eps)
        rows.append(
            {
                "group": pt.group,
                "family": pt.family,
                "target": pt.target,
                "arch": pt.arch,
                "eps": pt.eps,
                "C": pt.C,
                "kernel": pt.kernel,
                "kernel_pred": kern["n_star"],
                "kernel_valid": kern["theory_valid"],
                "kernel_n_max": pt.kernel_n_max,
            }
        )
    return rows


@functools.lru_cache(maxsize=8)
def e10_rows(sources: tuple, eps: tuple, profile: str | None, budget: str = "base") -> tuple:
    """E10's points and rows from the stored results, computed once for the
    four claims and the figure.

    Args:
        sources: experiment names (a tuple: the result is cached).
        eps: the levels (``eps_levels``).
        profile: as ``store.results`` (the claims pass ``config.profile()``).
        budget: which of a pair's stored net searches (``_preference``).

    Returns:
        (points, leave-one-out rows, kernel rows), each a tuple.
    """
    points = collect(sources, eps, profile=profile, budget=budget)
    memo: dict = {}

    def kern(*key):  # one theory per (target, arch, eps) for both row kinds
        if key not in memo:
            memo[key] = kernel_theory(*key)
        return memo[key]

    return tuple(points), tuple(leave_one_out(points, kern)), tuple(kernel_rows(points, kern))


def _no_theory(*_) -> dict:
    """A kernel prediction left out (the node-function hold-out scores nets only)."""
    return {"n_star": None, "censored": False, "theory_valid": False}


def e10_kin_rows(sources: tuple, eps: tuple, profile: str | None, budget: str = "base") -> tuple:
    """E10-net's sensitivity rows: leave-one-out holding out a node function
    with all its arities (``kin_of``), so that no sibling of another arity
    stays in the fit; net side only (not cached: the points are ``e10_rows``'s
    and the fits take milliseconds).

    Args:
        sources, eps, profile, budget: as ``e10_rows``.

    Returns:
        tuple of leave-one-out rows, scored as ``e10_net``'s (by family); no
        kernel theory (``kernel_pred`` and ``winner_pred`` None).
    """
    points = e10_rows(*_cache_key(sources, eps, profile, budget))[0]
    return tuple(leave_one_out(points, _no_theory, held=lambda pt: kin_of(pt.target)))


def _cache_key(sources: tuple, eps: tuple, profile: str | None, budget: str) -> tuple:
    """``e10_rows``'s arguments, the budget only where it is not ``"base"``:
    one cache entry for the claims, the sensitivity rows and the figure's
    three-argument call."""
    return (sources, eps, profile) + ((budget,) if budget != "base" else ())


def _read(params: dict) -> tuple:
    """The arguments of ``e10_rows`` a claim's rows are read with
    (``_cache_key``; the budget is ``"max"`` only in the claims' recheck)."""
    sources = tuple(params.get("sources", SOURCES))
    return _cache_key(sources, eps_levels(params["eps"]), config.profile(),
                      params.get("budget", "base"))  # fmt: skip


def larger_budgets(params: dict) -> list[str]:
    """The net pairs the claims' budget recheck may read differently: those
    with stored searches at more than one step budget (a source's robustness
    reruns), each as "experiment: target | arch".

    Args:
        params: a claim's params (``sources``, ``eps``).

    Returns:
        list of str, in source, level and storage order.
    """
    sources, levels, profile = _read(params)[:3]
    out = []
    for exp in sources:  # one read of a source's stored nets for all its levels
        steps: dict = {level: {} for level in levels}
        for cell, _res in store.results(exp, NET_METHOD, profile=profile):
            if family_label(cell["target"]) is None:
                continue
            for level in (e for e in levels if selection.at(cell, e)):
                pair = (cell["target"], cell["arch"])
                steps[level].setdefault(pair, set()).add(cell.get("steps", 0))
        out += [f"{exp}: {t} | {a}" for at in steps.values() for (t, a), ks in at.items()
                if len(ks) > 1]  # fmt: skip
    return out


def _rows(params: dict, which: int = 0) -> list[dict]:
    """E10's leave-one-out rows (``which`` 0) or kernel rows (1)."""
    return list(e10_rows(*_read(params))[1 + which])


def _kin_rows(params: dict) -> list[dict]:
    """E10-net's sensitivity rows (``e10_kin_rows``) for the claim's params."""
    return list(e10_kin_rows(*_read(params)))


def unit_of(row: dict) -> tuple:
    """A row's (family, depth) unit.

    Args:
        row: a leave-one-out or kernel row.

    Returns:
        (family, C, eps).
    """
    return row["family"], row["C"], row["eps"]


def family_of_row(row: dict) -> tuple:
    """A row's family unit.

    Args:
        row: a leave-one-out or kernel row.

    Returns:
        (family,).
    """
    return (row["family"],)


def _by_unit(rows, key=unit_of) -> dict:
    """{unit: [rows]} in sorted unit order."""
    out: dict = {}
    for r in sorted(rows, key=key):
        out.setdefault(key(r), []).append(r)
    return out


def _unit_shares(rows, key, hit) -> tuple[float, int]:
    """(the sum over units of the share of their rows for which ``hit``
    holds, the number of units)."""
    units = _by_unit(rows, key)
    return sum(sum(map(hit, us)) / len(us) for us in units.values()), len(units)


def _median_claim(name: str, rows: list, dist, rule: dict, key=unit_of) -> rules.Measured:
    """Median and order-statistic CI over units (``key``) of log10 distance
    intervals, a unit's interval the median of its rows' (``dist(row)``):
    the lower end from their lower ends, the upper from their upper ends (a
    censored row can only widen it)."""
    units = _by_unit(rows, key)
    what = "(family, depth) units" if key is unit_of else "families"
    if not units:
        return rules.Measured(None, detail=f"{name}: no scored point", verdict=rules.INCONCLUSIVE)
    sets = [
        intervals.median_ci([dist(r) for r in us], min_seeds=INF)["median"] for us in units.values()
    ]
    ci = intervals.median_ci(sets)
    lo, hi = ci["median"]
    verdict = rules.rule_verdict(rule, ci["lo"], ci["hi"])
    families = len({u[0] for u in units})
    return rules.Measured(
        lo if lo == hi else None,
        None if ci["lo"] in (None, -INF) else ci["lo"],
        None if ci["hi"] in (None, INF) else ci["hi"],
        seeds=len(sets),
        ci_method=ci["method"] and ci["method"].replace("seeds", what),
        detail=f"{name}: median in [{lo:.3g}, {hi:.3g}] over {len(sets)} {what}"
        + (f" of {families} families" if key is unit_of else "")
        + f" ({len(rows)} points: depths and architecture variants"
        + f"; {sum(b == INF for _, b in sets)} of the {len(sets)} open above: censored)"
        + (f" ({ci['reason'].replace('seeds', what)})" if ci["reason"] else ""),
        hi_censored=ci["hi"] == INF,
        verdict=verdict,
        data={"sets": sets, "units": [list(map(str, u)) for u in units]},
    )


def e10_kernel(params: dict, experiment: str) -> rules.Measured:
    """E10-kernel: median over (family, depth) units of |log10(theory n* /
    measured kernel n*)| where the theory is valid and its n* within the
    kernel search's n_max (``params``: ``eps``, ``sources``, ``rule``). The
    scope is decided by the prediction alone: beyond n_max the measurement
    can only be a bound the theory sits inside (distance [0, inf)).

    Args:
        params: the claim's params.
        experiment: unused (E10 reads ``sources``).

    Returns:
        Measured.
    """
    rows = [
        r
        for r in _rows(params, which=1)
        if r["kernel_valid"] and r["kernel_pred"] <= r["kernel_n_max"]
    ]
    return _median_claim(
        "|log10 kernel pred/measured|",
        rows,
        lambda r: distance(r["kernel_pred"], r["kernel"]),
        params["rule"],
    )


def e10_net(params: dict, experiment: str) -> rules.Measured:
    """E10-net: median over families of |log10(law n* / measured net n*)|
    (a family's value the median over its depths and variants), the law
    fitted without the family. The detail adds a sensitivity check that
    decides nothing: the same median over families, each predicted by a law
    fitted without its node function's every arity (``e10_kin_rows``), since
    a family is one arity and its siblings of other arities stay in its fit
    (a node function whose law is refused drops its families: the count
    says so).

    Args:
        params: the claim's params (``eps``, ``sources``, ``rule``).
        experiment: unused.

    Returns:
        Measured.
    """
    rule = params["rule"]
    out = _median_claim(
        "|log10 net pred/measured|", _rows(params), _net_distance, rule, family_of_row
    )
    check = _median_claim(
        "sensitivity, each node function held out with all its arities",
        _kin_rows(params), _net_distance, rule, family_of_row,
    )  # fmt: skip
    ci = _ci_text(check)
    out.detail += f"; {check.detail}" + (f", CI {ci}" if ci else "")
    return out


def _net_distance(row: dict) -> tuple:
    """A leave-one-out row's |log10 law / measured net n*| interval."""
    return distance(row["net_pred"], row["net"])


def _ci_text(m: rules.Measured) -> str:
    """A Measured's CI as [lo, hi] (open ends as -inf / inf), "" without one."""
    if m.lo is None and m.hi is None and not m.hi_censored:
        return ""
    lo = "-inf" if m.lo is None else f"{m.lo:.3g}"
    return f"[{lo}, {'inf' if m.hi is None else f'{m.hi:.3g}'}]"


#: the most units ``_fewest_to_support`` looks through
FEWEST_SEARCH_MAX = 1000


def _clopper_pearson(k: float, m: int) -> tuple[float, float]:
    """The exact 0.95 binomial interval of k successes in m."""
    lo = 0.0 if k <= 0 else float(stats.beta.ppf(0.025, k, m - k + 1))
    hi = 1.0 if k >= m else float(stats.beta.ppf(0.975, k + 1, m - k))
    return lo, hi


def _most_favourable(rule: dict, m: int, shift: float) -> tuple:
    """The counts k of m whose interval best fits ``rule``: m for ``above``,
    0 for ``below``, the two integers around m x ``shift`` for
    ``equivalence`` (the interval is narrowest and centred there)."""
    if rule["kind"] == "above":
        return (m,)
    if rule["kind"] == "below":
        return (0,)
    return tuple(sorted({min(m, max(0, math.floor(m * shift))), min(m, math.ceil(m * shift))}))


def _fewest_to_support(rule: dict, shift: float) -> int | None:
    """The fewest units m at which the most favourable count reads supported
    under ``rule`` (``_most_favourable``): below it the proportion cannot be
    supported whatever the data (None when not within FEWEST_SEARCH_MAX)."""
    for m in range(1, FEWEST_SEARCH_MAX + 1):
        for k in _most_favourable(rule, m, shift):
            lo, hi = _clopper_pearson(k, m)
            if rules.rule_verdict(rule, lo - shift, hi - shift) == rules.SUPPORTED:
                return m
    return None


def _binomial(
    name, k: float, m: int, rule: dict, shift: float = 0.0, k_hi: float | None = None
) -> rules.Measured:
    """A proportion k/m with its Clopper-Pearson interval (minus ``shift``);
    with ``k_hi`` the count is only bounded, [k, k_hi] (undetermined units),
    the lower end from k and the upper from k_hi, no point value; the detail
    says when m is too few for "supported" whatever the data."""
    if m == 0:
        return rules.Measured(None, detail=f"{name}: nothing scored", verdict=rules.INCONCLUSIVE)
    k_hi = k if k_hi is None else k_hi
    lo, hi = _clopper_pearson(k, m)[0], _clopper_pearson(k_hi, m)[1]
    val, lo, hi = (k / m - shift if k_hi == k else None), lo - shift, hi - shift
    detail = f"{name}: {k:g} of {m}" if k_hi == k else f"{name}: {k:g} to {k_hi:g} of {m}"
    fewest = _fewest_to_support(rule, shift)
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


def e10_winner(params: dict, experiment: str) -> rules.Measured:
    """E10-winner: the share of (family, depth) units whose measured winner
    (medians' ratio interval excludes 1) was predicted right; a unit with
    several architecture variants counts the share of its decided variants
    predicted right (variants without a kernel prediction are left out and
    counted in the detail).

    Args:
        params: the claim's params (``eps``, ``sources``, ``rule``).
        experiment: unused.

    Returns:
        Measured (value the share, Clopper-Pearson CI on the unit count).
    """
    decided = [r for r in _rows(params) if r["winner_measured"] is not None]
    rows = [r for r in decided if r["winner_pred"] is not None]
    k, m = _unit_shares(rows, unit_of, lambda r: r["winner_pred"] == r["winner_measured"])
    out = _binomial("(family, depth) units' winner predicted right", k, m, params["rule"])
    if len(rows) < len(decided):  # no exact kernel spectrum: no prediction to score
        out.detail += f" ({len(decided) - len(rows)} decided point(s) without kernel theory)"
    return out


def e10_coverage(params: dict, experiment: str) -> rules.Measured:
    """E10-coverage: prediction-interval coverage minus its nominal level,
    counted per family (each family's share of covered points, summed over
    families, over the number of families: its depths and architecture
    variants share the law's error). A censored point overlapping its
    interval is undetermined (``coverage_state``): the count is then a
    bound, [covered, covered + undetermined], and the CI runs from the
    lower count's lower end to the upper count's upper end.

    Args:
        params: the claim's params (``eps``, ``sources``, ``rule``).
        experiment: unused.

    Returns:
        Measured (value coverage - nominal; Clopper-Pearson CI on the
        per-family count).
    """
    rows = _rows(params)
    state = lambda r: coverage_state(r["net_interval"], r["net"])  # noqa: E731
    k, m = _unit_shares(rows, family_of_row, lambda r: state(r) is True)
    k_hi, _ = _unit_shares(rows, family_of_row, lambda r: state(r) is not False)
    out = _binomial("families' coverage", k, m, params["rule"], shift=PI_LEVEL, k_hi=k_hi)
    if rows:  # how much a covered point says: a wide interval covers cheaply
        width = float(np.median([math.log10(b / a) for a, b in (r["net_interval"] for r in rows)]))
        open_ = [r for r in rows if state(r) is None]
        out.detail += (
            f"; {len(open_)} of {len(rows)} points undetermined (a censored bound or a bracket"
            f" across an end of its interval), in {len({r['family'] for r in open_})}"
            f" families; the intervals' median width {width:.2f} decades (coverage <= 1:"
            " too wide an interval is never a miss; E10-net's distance says how near the"
            " law's point lies)"
        )
    return out


#: E10's claim statistics by name (``ntkgap.verdicts.claims.STATISTICS`` takes them from here)
CLAIM_STATISTICS = {
    "e10_kernel": e10_kernel,
    "e10_net": e10_net,
    "e10_winner": e10_winner,
    "e10_coverage": e10_coverage,
}
