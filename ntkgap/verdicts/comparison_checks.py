"""What ``ntkgap compare`` knows about a design before any search runs:
eigenlearning's n* of each kernel side, the sides the design will censor
(their theory n* above their search cap), why a design cannot reach a
verdict (:func:`refusals`) and what a dry run prints (:func:`dry_run_summary`).

A side censored by design enters its claims as a bound. The claims'
statistic is the least-squares slope over depth of log n*(A)/n*(B); a bound
at a depth above the depths' mean leaves the slope open on one side, one
below it on the other. A claim whose censored sides open its slope on both
sides cannot reach a verdict whatever the searches find, and is refused.
"""

from __future__ import annotations

import math

from ntkgap._infra import config
from ntkgap.errors import UsageError
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import config as runs_config
from ntkgap.runs import cost as cost_model
from ntkgap.runs import cost_plan, scaling
from ntkgap.specs import raw_items
from ntkgap.verdicts import claims

NAME = "compare"
FC = "fc:depth=2"
#: the theory series of each architecture prefix
THEORY_LABEL = {"fc": "fc NTK theory", "tree": "depth-aware NTK theory"}


def theory_label(arch: str) -> str:
    """The theory series an architecture's kernel belongs to.

    Args:
        arch: an architecture spec.

    Returns:
        ``"fc NTK theory"`` or ``"depth-aware NTK theory"``.
    """
    return THEORY_LABEL["fc" if raw_items(arch)[0] == "fc" else "tree"]


def has_theory(target) -> bool:
    """Whether eigenlearning theory applies: its exact eigensystems are on
    the hypercube and the circle, not on a random hierarchy model's strings.

    Args:
        target: a target object.

    Returns:
        bool.
    """
    return getattr(target.domain, "name", None) != "rhm"


def theory_point(target, arch: str, eps: float) -> dict:
    """Eigenlearning's n*(eps) of one kernel side, or why it has none.

    Args:
        target: a target object.
        arch: an architecture spec.
        eps: the relative test MSE n* is read at.

    Returns:
        ``{"n_star": n* or None (not reached by 1e12), "reason": None or the
        one-line reason it could not be computed}``.

    References:
        Simon, Dickens, Karkada & DeWeese, "The eigenlearning framework"
        (arXiv 2110.03922).
    """
    from ntkgap.kernels import theory  # here: JAX loads only when theory is asked for

    if not has_theory(target):
        return {"n_star": None, "reason": "no exact eigensystem on a random hierarchy model"}
    a = parse_arch(arch)
    try:
        sp, _ = theory.spectrum(a, target)
    except UsageError as exc:  # beyond the exact transforms (e.g. fc on 32 tanh leaves)
        return {"n_star": None, "reason": str(exc)}
    return {"n_star": theory.nstar(sp, eps, a, target.domain)["n_star"], "reason": None}


def cells(cfg: dict) -> list[dict]:
    """Every grid of a comparison's config, whatever its profile.

    Args:
        cfg: a config from ``comparison.plan``.

    Returns:
        list of grid dicts.
    """
    return [g for p in config.PROFILES for g in cfg.get(p, {}).get("grid", [])]


def theory_points(cfg: dict) -> dict:
    """Eigenlearning's n* of every theory cell of a plan (the plan's own
    points when it sized its caps from them).

    Args:
        cfg: a config from ``comparison.plan``.

    Returns:
        ``{label: {L: theory_point}}``.
    """
    from ntkgap.targets import parse_target

    out = {lab: dict(v) for lab, v in cfg.get("_theory", {}).items()}
    for g in cells(cfg):
        lab, L = theory_label(g["arch"]), cfg["_depths"][g["target"]]
        if g["method"] == "theory" and L not in out.get(lab, {}):
            pt = theory_point(parse_target(g["target"]), g["arch"], cfg["_budget"]["eps"])
            out.setdefault(lab, {})[L] = pt
    return out


def theory_nstar(cfg: dict) -> dict:
    """Eigenlearning's n*(eps) of every kernel cell the plan has theory for.

    Args:
        cfg: a config from ``comparison.plan``.

    Returns:
        ``{"fc NTK theory" | "depth-aware NTK theory": {L: n* or None}}``
        (None: not reached by 1e12); a point that could not be computed is
        absent here and in :func:`theory_missing`.
    """
    pts = theory_points(cfg)
    out = {}
    for lab, by_L in pts.items():
        for L, p in sorted(by_L.items()):
            if p["reason"] is None:
                out.setdefault(lab, {})[L] = p["n_star"]
    return out


def theory_missing(cfg: dict) -> dict:
    """The theory points of a plan's kernel sides that could not be computed.

    Args:
        cfg: a config from ``comparison.plan``.

    Returns:
        ``{label: {L: reason}}``.
    """
    out = {}
    for lab, by_L in theory_points(cfg).items():
        for L, p in sorted(by_L.items()):
            if p["reason"] is not None:
                out.setdefault(lab, {})[L] = p["reason"]
    return out


def _kernel_caps(cfg: dict) -> dict:
    """{(label, L): n_max} of the plan's kernel searches."""
    return {(theory_label(g["arch"]), cfg["_depths"][g["target"]]): g["n_max"]
            for g in cells(cfg) if g["method"] == "ntk_search"}  # fmt: skip


def censored_sides(cfg: dict, nstar: dict) -> list[dict]:
    """The kernel sides the design censors: theory n* above the search's cap.

    Args:
        cfg: a config from ``comparison.plan``.
        nstar: :func:`theory_nstar` of it.

    Returns:
        list of ``{"label", "L", "n_star" (None: beyond 1e12), "n_max"}``
        in label and depth order.
    """
    caps, out = _kernel_caps(cfg), []
    for lab, by_L in sorted(nstar.items()):
        for L, n in sorted(by_L.items()):
            cap = caps.get((lab, L))
            if cap is not None and (n is None or n > cap):
                out.append({"label": lab, "L": L, "n_star": n, "n_max": cap})
    return out


def design_warnings(cfg: dict, nstar: dict) -> list[str]:
    """One line per side the design will censor, per theory point that could
    not be computed, and per ``--arch-variant`` field an architecture lacks.

    Args:
        cfg: a config from ``comparison.plan``.
        nstar: :func:`theory_nstar` of it.

    Returns:
        list of str.
    """
    out = []
    for s in censored_sides(cfg, nstar):
        n = "> 1e12" if s["n_star"] is None else f"{s['n_star']:.6g}"
        out.append(f"{s['label']} at L={s['L']}: theory n* {n} is above n_max {s['n_max']}: "
                   "its search will be censored (a bound, not a value)")  # fmt: skip
    for lab, by_L in theory_missing(cfg).items():
        for L, why in by_L.items():
            out.append(f"{lab} at L={L}: no theory n* ({why}); whether its search is "
                       "censored is not known before it runs")  # fmt: skip
    return out + list(cfg.get("_variant_notes", []))


def _open_sides(claim: dict, depths: list[int], censored: list[dict]) -> set[str]:
    """Which way a claim's slope is left open by its censored kernel sides:
    ``up`` and/or ``down``."""
    mean = sum(depths) / len(depths)
    out = set()
    for sign, side in ((1, claim["params"]["a"]), (-1, claim["params"]["b"])):
        if side[0] != "ntk_search":
            continue
        for s in censored:
            w = (s["L"] - mean) * sign
            if s["label"] == THEORY_LABEL[side[1]] and s["L"] in depths and w != 0:
                out.add("up" if w > 0 else "down")  # a right-censored n*: a lower bound
    return out


def _censor_refusals(cfg: dict, nstar: dict, depths: list[int]) -> list[str]:
    """A claim whose censored sides open its slope on both sides."""
    censored, out = censored_sides(cfg, nstar), []
    for c in cfg["claim"]:
        if _open_sides(c, depths, censored) == {"up", "down"}:
            mine = [
                s
                for s in censored
                if s["label"]
                in (THEORY_LABEL[c["params"]["a"][1]], THEORY_LABEL[c["params"]["b"][1]])
            ]
            s = mine[0]
            n = "> 1e12" if s["n_star"] is None else f"{s['n_star']:.6g}"
            where = ", ".join(f"L={x['L']}" for x in mine)
            out.append(
                f"{c['id']}: censored by design at {where} (e.g. {s['label']} at L={s['L']}: "
                f"theory n* {n} > n_max {s['n_max']}), below and above the depths' mean, so its "
                "ratio growth is open both ways and no verdict is possible; raise --n-max or "
                "give other depths"
            )  # fmt: skip
    return out


def refusals(cfg: dict, nstar: dict) -> list[str]:
    """Why a planned comparison cannot reach a verdict, even with censored
    sides counted as bounds (empty: it can).

    Args:
        cfg: a config from ``comparison.plan``.
        nstar: :func:`theory_nstar` of it.

    Returns:
        One-line reasons: a member without a depth-aware architecture, too
        few seeds for a CI (``scaling.MIN_SEEDS_FOR_CI``), too few depths for
        the statistic's depth rule (``claims.MIN_DEPTHS``), every kernel
        cell capped below the theory's n*, a claim its censored sides leave
        open both ways.
    """
    depths = sorted(set(cfg["_depths"].values()))
    need = claims.MIN_DEPTHS["nstar_ratio_growth"]
    flat = [s for s, tree in cfg["_tree"].items() if tree is None]
    out = [] if not flat else [
        f"--family: {flat[0]} is not a balanced tree of arity >= 2 on aligned coordinate "
        "blocks, so it has no depth-aware architecture: Q1-tree, Q2-kernel and Q2-net "
        "cannot be evaluated"
    ]  # fmt: skip
    seeds = cfg["_budget"]["seeds"]
    if seeds < scaling.MIN_SEEDS_FOR_CI:
        out.append(f"--seeds {seeds}: the claims' CI needs >= {scaling.MIN_SEEDS_FOR_CI} seeds "
                   "(runs.scaling.MIN_SEEDS_FOR_CI): every verdict would read inconclusive; "
                   "give more seeds")  # fmt: skip
    if len(depths) < need:
        out.append(f"--L gives {len(depths)} depth(s) {depths}; the claims' statistic "
                   f"nstar_ratio_growth needs >= {need} (claims.MIN_DEPTHS): no verdict "
                   "is possible; give more depths")  # fmt: skip
    caps = _kernel_caps(cfg)
    pairs = [(lab, L, n, caps[(lab, L)]) for lab, by_L in nstar.items() for L, n in by_L.items()]
    if pairs and all(n is None or n > cap for _lab, _L, n, cap in pairs):
        lab, L, n, cap = pairs[0]
        out.append(
            f"every kernel cell's cap is below the theory's n* (e.g. {lab} at L={L}: "
            f"n_max {cap} < n* {n}): every search would be censored; raise --n-max"
        )
    elif len(depths) >= need:
        out += _censor_refusals(cfg, nstar, depths)
    return out


def dry_run_summary(cfg: dict, nstar: dict, jobs: int = 1) -> dict:
    """What a comparison would run: its cells, the theory's n* per predictor
    and its estimated cost (``ntkgap.runs.cost``, calibrated on the project's
    stored cells; uncalibrated reference rates when there are none).

    Args:
        cfg: a config from ``comparison.plan``.
        nstar: :func:`theory_nstar` of it.
        jobs: the workers the makespan is for.

    Returns:
        ``{"cells", "n_star_theory", "theory_missing", "warnings", "cost",
        "cost_unit", "refusals", "per_cell", "makespan_s", "jobs"}``
        (``cost_plan.plan``'s per-cell estimates of the cells to compute and
        makespan on ``jobs`` workers).
    """
    profile = next(p for p in config.PROFILES if p in cfg)
    listed = [dict(g, L=cfg["_depths"][g["target"]]) for g in cells(cfg)]
    expanded = runs_config.expand(cfg, profile, where="compare")
    est = cost_model.estimate({NAME: expanded}, config.results_dir())
    how = cost_plan.basis(est)
    pl = cost_plan.plan(NAME, expanded, est, jobs)
    missing = theory_missing(cfg)
    return {
        "per_cell": pl["per_cell"],
        "makespan_s": pl["makespan_s"],
        "jobs": jobs,
        "cells": listed,
        "n_star_theory": {lab: {str(L): n for L, n in v.items()} for lab, v in nstar.items()},
        "theory_missing": {lab: {str(L): r for L, r in v.items()} for lab, v in missing.items()},
        "warnings": design_warnings(cfg, nstar),
        "cost": est["seconds"],
        "cost_unit": f"core-seconds (ntkgap.runs.cost, {how}; a guide within ~2-3x)",
        "refusals": refusals(cfg, nstar),
    }


def next_power_of_two(x: float) -> int:
    """The least power of two >= x (x >= 1; inf gives inf).

    Args:
        x: a positive number.

    Returns:
        int (or math.inf).
    """
    return math.inf if x == math.inf else 2 ** max(0, math.ceil(math.log2(x)))
