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
predictions ``predict`` makes for a new family. A family is one arity of a
node function (``kin_of``: its every arity; random tables of any arity count
as one kind). Sealed files and scoring: :mod:`ntkgap.verdicts.sealing`;
E10's claim statistics: :mod:`ntkgap.verdicts.e10_statistics`.

References:
    Dichotomy of kernels and networks on compositional targets (arXiv
    2607.06382); Simon, Dickens, Karkada & DeWeese, "The Eigenlearning
    Framework" (arXiv 2110.03922); Draper & Smith, Applied Regression
    Analysis (3rd ed., 1998), sec. 3.1 (prediction interval of a new
    observation).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from ntkgap import specs
from ntkgap._infra import config
from ntkgap.errors import UsageError
from ntkgap.runs import scaling, store
from ntkgap.targets import constituents, parse_target
from ntkgap.verdicts import extrapolation, selection
from ntkgap.verdicts.sealing import median_log, seal_prediction

INF = math.inf
#: the stored results E10 and ``predict`` read (E10's own cells: kernel searches, and
#: net-and-kernel pairs on more tree families)
SOURCES = ("e4_trees", "e8_universality", "e9_rhm", "e10_predict")
NET_METHOD, KERNEL_METHOD = "net_search", "ntk_search"
LAW_FORM = "n* = c * C^p"
#: resolved points the law needs (two parameters and one degree of freedom)
MIN_POINTS = 3
PI_LEVEL = 0.95


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
