"""Statistics for the E11 mechanism claims: how much of the log
sample-complexity gap between the NTK and the trained net the net's own
after kernel closes, and the lazy control whose kernel does not move.

Per seed, the share of the log gap the after kernel closes is

    s = (log n*_NTK - log n*_after) / (log n*_NTK - log n*_net),

from the three searches' per-seed results (same seeds, same pools). A
censored n* is an interval ((0, n_min] or (n_max, inf)); s is monotone in
each of its three arguments separately on any box where the gap is
positive, so its interval is the range over the box's corners (an infinite
end is evaluated at ``LOG_INF``). A seed whose gap interval reaches 0 has
an undefined share (the interval (-inf, inf)). The median over seeds has
the distribution-free order-statistic CI (lower end from the seeds' lowest
values, upper from their highest: censoring only widens it).
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np

from ntkgap.runs import scaling, store
from ntkgap.verdicts.rules import Measured

#: log n* standing in for an infinite (right-censored) end: the share's
#: limit there is reached to ~1/LOG_INF
LOG_INF = 1e6


def _log_interval(item) -> tuple[float, float]:
    lo, hi = scaling.seed_interval(item)
    return (0.0 if lo <= 1 else math.log(lo)), (LOG_INF if hi == math.inf else math.log(hi))


def share_interval(ntk, after, net) -> tuple[float, float]:
    """The (lowest, highest) share of the log gap one seed's after kernel closes.

    Args:
        ntk, after, net: the seed's n* of each predictor (a number, a
            (low, high) pair or a ``search.seed_result`` dict).

    Returns:
        (lo, hi); (-inf, inf) where the gap log n*_NTK - log n*_net can be <= 0.

    References:
        Long, "Properties of the After Kernel", 2021; Atanasov, Bordelon &
        Pehlevan, "Neural networks as kernel learners: the silent alignment
        effect", ICLR 2022.
    """
    a, b, c = _log_interval(ntk), _log_interval(after), _log_interval(net)
    if a[0] - c[1] <= 0:
        return -math.inf, math.inf
    vals = [(x - y) / (x - z) for x, y, z in itertools.product(a, b, c)]
    return min(vals), max(vals)


def gap_interval(ntk, net) -> tuple[float, float]:
    """(lowest, highest) log n*_NTK - log n*_net of one seed.

    Args:
        ntk, net: the seed's n* of each (as :func:`share_interval` takes them).

    Returns:
        (lo, hi), ends at +-LOG_INF where censored.
    """
    a, c = _log_interval(ntk), _log_interval(net)
    return a[0] - c[1], a[1] - c[0]


def median_interval(intervals, *, level: float = 0.95) -> dict:
    """Median over seeds of interval-valued per-seed numbers, with the
    order-statistic CI (Conover 1999, sec. 3.2).

    Args:
        intervals: (lo, hi) per seed.
        level: the CI's least coverage.

    Returns:
        dict: ``median_lo``/``median_hi`` (the median lies between), ``lo``/
        ``hi`` (the CI; None without one), ``coverage``, ``seeds``, ``reason``.

    References:
        Conover, Practical Nonparametric Statistics (3rd ed., 1999), sec. 3.2.
    """
    m = len(intervals)
    lows, highs = np.sort([a for a, _ in intervals]), np.sort([b for _, b in intervals])
    out = {"median_lo": float(np.median(lows)), "median_hi": float(np.median(highs)),
           "lo": None, "hi": None, "coverage": None, "seeds": m, "reason": None}  # fmt: skip
    if m < scaling.MIN_SEEDS_FOR_CI:
        out["reason"] = f"{m} seeds, no CI (a CI needs >= {scaling.MIN_SEEDS_FOR_CI} seeds)"
        return out
    j, cov = scaling.order_statistic_ci(m, level)
    if j is None:
        out["reason"] = f"{m} seeds: even [min, max] covers the median only with p={cov:.4f}"
        return out
    out.update(lo=float(lows[j - 1]), hi=float(highs[m - j]), coverage=cov)
    return out


def _rule(ci: dict, threshold: float, above: bool) -> str:
    if ci["lo"] is None:
        return "inconclusive"
    if above:
        return "supported" if ci["lo"] >= threshold else (
            "refuted" if ci["hi"] < threshold else "inconclusive")  # fmt: skip
    return "supported" if ci["hi"] <= threshold else (
        "refuted" if ci["lo"] > threshold else "inconclusive")  # fmt: skip


def after_kernel_share(by_depth: dict, *, threshold: float, level: float = 0.95) -> dict:
    """The E11-after-kernel statistic: the median share of the log gap the
    after kernel closes, at the deepest depth whose gap CI excludes zero.

    Args:
        by_depth: {L: (ntk per_seed, after per_seed, net per_seed)}, each a
            list in the same seed order (the searches' ``per_seed``).
        threshold: the share the claim asks for (rule: CI lower end >= it).
        level: the CIs' least coverage.

    Returns:
        dict: ``depth`` (None where no gap's CI excludes zero), ``gap`` per
        depth (median_interval of the log gap), ``share`` at ``depth``
        (median_interval, with ``per_seed`` intervals), ``verdict``.
    """
    gaps = {L: median_interval([gap_interval(a, c) for a, _, c in zip(ntk, aft, net)],
                               level=level)
            for L, (ntk, aft, net) in by_depth.items()}  # fmt: skip
    ok = [L for L, g in gaps.items() if g["lo"] is not None and g["lo"] > 0]
    out = {"gap": {str(L): g for L, g in gaps.items()}, "depth": None, "share": None,
           "threshold": threshold, "verdict": "inconclusive"}  # fmt: skip
    if not ok:
        out["reason"] = "no depth's log-gap CI excludes zero: the share is undefined"
        return out
    L = max(ok)
    per_seed = [share_interval(*t) for t in zip(*by_depth[L])]
    share = dict(median_interval(per_seed, level=level), per_seed=per_seed)
    out.update(depth=L, share=share, verdict=_rule(share, threshold, above=True))
    return out


def lazy_control(runs, *, kernel_tol: float, mse_tol: float, level: float = 0.95) -> dict:
    """The E11-lazy-control statistic: a lazy net's after kernel equals its
    initial kernel (relative Frobenius change) and predicts as it does.

    Args:
        runs: ``run_kernels`` dicts (``kernel_change``, ``after_kernel_test_mse``,
            ``init_kernel_test_mse``), one per (seed, n).
        kernel_tol: the largest median kernel change accepted (CI upper end).
        mse_tol: the largest median |log(after MSE / initial MSE)| accepted
            (the share of the gap closed is then ~0).
        level: the CIs' least coverage.

    Returns:
        dict: ``kernel_change`` and ``log_mse_ratio`` (median_interval each)
        and ``verdict`` (supported when both CIs' upper ends are within
        tolerance, refuted when either CI lies above it).
    """
    kc = [(r["kernel_change"],) * 2 for r in runs]
    lr = [(abs(math.log(r["after_kernel_test_mse"] / r["init_kernel_test_mse"])),) * 2
          for r in runs]  # fmt: skip
    out = {"kernel_change": median_interval(kc, level=level),
           "log_mse_ratio": median_interval(lr, level=level),
           "kernel_tol": kernel_tol, "mse_tol": mse_tol}  # fmt: skip
    verdicts = (_rule(out["kernel_change"], kernel_tol, above=False),
                _rule(out["log_mse_ratio"], mse_tol, above=False))  # fmt: skip
    out["verdict"] = ("refuted" if "refuted" in verdicts else
                      "supported" if all(v == "supported" for v in verdicts)
                      else "inconclusive")  # fmt: skip
    return out


def _depth(cell) -> int:
    return int(re.search(r"\bL=(\d+)", cell["target"]).group(1))


def _by_seed(result) -> dict:
    return {r["seed"]: r for r in result["per_seed"]}


def _triples(exp: str, eps: float) -> dict:
    """{L: (ntk, after, net) per_seed lists on common seeds} of an experiment's
    ridgeless ``ntk_search`` and ``after_kernel_search`` cells (same target and arch)."""
    found: dict = {}
    for cell, r in store.results(exp, "ntk_search"):
        if cell["eps"] == eps and cell["ridge"] == 0.0:
            found.setdefault((cell["target"], cell["arch"]), {})["ntk"] = _by_seed(r)
    for cell, r in store.results(exp, "after_kernel_search"):
        if cell["eps"] == eps:
            found.setdefault((cell["target"], cell["arch"]), {})[cell["kernel"]] = _by_seed(r)
    out = {}
    for (target, _), sides in found.items():
        if {"ntk", "after", "net"} <= set(sides):
            seeds = sorted(set.intersection(*(set(sides[k]) for k in ("ntk", "after", "net"))))
            out[_depth({"target": target})] = tuple(
                [sides[k][s] for s in seeds] for k in ("ntk", "after", "net"))  # fmt: skip
    return out


def after_kernel_claim(p: dict, exp: str) -> Measured:
    """Claim statistic ``after_kernel_share`` (E11-after-kernel) from stored searches.

    Args:
        p: the claim's params (``eps``) with its ``rule`` (``above``, threshold).
        exp: the experiment's name.

    Returns:
        Measured: the median share and its CI at the chosen depth, ``verdict`` set.
    """
    res = after_kernel_share(_triples(exp, p["eps"]), threshold=p["rule"]["threshold"])
    sh = res["share"]
    if sh is None:
        return Measured(None, detail=res.get("reason", ""), verdict="inconclusive", data=res)
    point = sh["median_lo"] if sh["median_lo"] == sh["median_hi"] else None
    return Measured(
        point, lo=sh["lo"], hi=sh["hi"], seeds=sh["seeds"], verdict=res["verdict"], data=res,
        ci_method="order-statistic CI of interval-valued per-seed shares (Conover 1999)",
        detail=(f"L = {res['depth']}: median share of the log gap closed in "
                f"[{sh['median_lo']:.3g}, {sh['median_hi']:.3g}], CI {sh['lo']}..{sh['hi']}"),
    )  # fmt: skip


def is_lazy(cell: dict, alpha_min: float) -> bool:
    """Whether a stored net cell is a lazy one (Chizat, Oyallon & Bach 2019).

    Args:
        cell: a stored net cell (``alpha``: its output scale; None is the plain, unscaled
            model, a rich net).
        alpha_min: the least alpha that counts as lazy (the claim's ``alpha_min``).

    Returns:
        bool: alpha is set and at least ``alpha_min``.
    """
    return (cell.get("alpha") or 0.0) >= alpha_min


def lazy_control_claim(p: dict, exp: str) -> Measured:
    """Claim statistic ``lazy_control`` (E11-lazy-control) from stored ``after_kernel`` cells.

    Args:
        p: the claim's params (``alpha_min``: cells with alpha >= it are the lazy
            ones; ``mse_tol``) with its ``rule`` (``below``, threshold: kernel_tol).
        exp: the experiment's name.

    Returns:
        Measured: the median kernel change and its CI, ``verdict`` set.
    """
    runs = [k for cell, r in store.results(exp, "after_kernel")
            if is_lazy(cell, p["alpha_min"]) for k in r["kernels_per_seed"]]  # fmt: skip
    if not runs:
        return Measured(None, detail="no lazy after_kernel cells stored", verdict="inconclusive")
    res = lazy_control(runs, kernel_tol=p["rule"]["threshold"], mse_tol=p["mse_tol"])
    kc = res["kernel_change"]
    return Measured(
        kc["median_lo"], lo=kc["lo"], hi=kc["hi"], seeds=kc["seeds"], verdict=res["verdict"],
        ci_method="order-statistic CI over (seed, n) runs (Conover 1999)", data=res,
        detail=(f"median ||K_T - K_0|| / ||K_0|| = {kc['median_lo']:.3g}; median "
                f"|log(after MSE / init MSE)| = {res['log_mse_ratio']['median_lo']:.3g}"),
    )  # fmt: skip
