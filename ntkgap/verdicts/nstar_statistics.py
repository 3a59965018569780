"""The statistics of searched sample complexities n*(eps), censoring as
information (:mod:`ntkgap.verdicts.intervals`): the ratio of two predictors'
n* on paired seeds at every depth or target (``nstar_ratio``), its growth
per level of depth (``nstar_ratio_growth``), the dichotomy's two halves
(``nstar_kernel_convexity``: the kernel's per-level factor grows with depth;
``nstar_net_power``: the trained net's n* is a power of the number of
constituents) and a published scaling law of one predictor's n*
(``nstar_scaling``), and the published sample complexity P* of the random
hierarchy model on the classification error (``pstar_scaling``: P* against
m^L; ``pstar_ratio``: P* at two n_c). A censored n* is an interval (above the largest n
searched, or at most the smallest): per seed the statistic ranges over the
values consistent with the intervals, and the median and CI over seeds are
those of interval data; depth-indexed claims report ``depths_resolved`` and
``depths_bounded``. The verdicts of the interval statistics are reached
there, under the claim's rule, with the depth gate.

References:
    arXiv 2607.06382 (the dichotomy of kernels and networks on
    compositional targets); Conover, Practical Nonparametric Statistics
    (3rd ed., 1999), sec. 3.2.
"""

from __future__ import annotations

import math

import numpy as np

from ntkgap.errors import UsageError
from ntkgap.runs import store
from ntkgap.runs.registry import CLASSIFICATION
from ntkgap.targets import constituents, parse_target, rhm_pstar
from ntkgap.verdicts import interval_statistics, intervals, selection
from ntkgap.verdicts.rules import INCONCLUSIVE, NOT_SUPPORTED, SUPPORTED, TOO_FEW_DEPTHS, Measured
from ntkgap.verdicts.selection import Side

#: the Fourier complexity the kernel's n* is fitted against: a key of a
#: spectrum cell's ``complexity`` (the Walsh degree profile's mean degree)
FOURIER_COMPLEXITY = "average_degree"


def _side_label(side: Side) -> str:
    ridge = side.ridge if side.method == "ntk_search" else None
    tag = {None: "", 0.0: " (ridgeless)", "tuned": " (ridge tuned on validation)"}.get(
        ridge, f" (ridge {ridge})"
    )
    return f"{side.method} {side.arch}{tag}"


def _measured(out: dict, detail: str, data: dict) -> Measured:
    """A Measured from an interval statistic's output (``intervals``)."""
    return Measured(
        out["value"],
        out["lo"],
        out["hi"],
        seeds=out["seeds"],
        ci_method=out["ci_method"],
        detail=detail,
        depths=out["depths_resolved"] + out["depths_bounded"],
        data=data,
        lo_censored=out["lo_censored"],
        hi_censored=out["hi_censored"],
        depths_resolved=out["depths_resolved"],
        depths_bounded=out["depths_bounded"],
        verdict=out["verdict"],
        p_value=out.get("p_value"),
        median_lo=out.get("bound_lo"),
        median_hi=out.get("bound_hi"),
    )


def _target_filter(p: dict):
    """Which targets a claim reads (``target``: one or a list; else ``family``),
    and the key each is indexed by (its depth L for a family, else its spec)."""
    if "target" in p:
        targets = p["target"] if isinstance(p["target"], list) else [p["target"]]
        return (lambda t: t in targets), (lambda t: t)
    return (lambda t: selection.matches(t, p["family"])), selection.depth_of


def _combine_sides(kind: str, outs: list[dict]) -> dict:
    """One claim over several A sides ("for every A"): not supported when any
    side is, too few depths when any side has too few, supported when all
    are; the worst side's value and the CI ends giving that verdict."""
    verdicts = [o["verdict"] for o in outs]
    if NOT_SUPPORTED in verdicts:
        verdict = NOT_SUPPORTED
    elif TOO_FEW_DEPTHS in verdicts:
        verdict = TOO_FEW_DEPTHS
    elif all(v == SUPPORTED for v in verdicts):
        verdict = SUPPORTED
    else:
        verdict = INCONCLUSIVE
    inf = math.inf

    def end(o, k, open_value):
        return open_value if o[f"{k}_censored"] else o[k]

    los = [end(o, "lo", -inf) for o in outs]
    his = [end(o, "hi", inf) for o in outs]
    vals = [o["value"] for o in outs]
    pick = {"above": min, "below": max}.get(kind)
    if None in los + his:
        lo = hi = None
    elif pick is None:
        lo, hi = min(los), max(his)
    else:
        lo, hi = pick(los), pick(his)
    value = None if None in vals else (pick(vals) if pick else max(vals, key=abs))
    ps = [o.get("p_value") for o in outs]
    return dict(
        outs[0],
        verdict=verdict,
        value=value,
        lo=None if lo is None or not math.isfinite(lo) else lo,
        hi=None if hi is None or not math.isfinite(hi) else hi,
        lo_censored=lo == -inf,
        hi_censored=hi == inf,
        seeds=min(o["seeds"] for o in outs),
        depths_resolved=min(o["depths_resolved"] for o in outs),
        depths_bounded=min(o["depths_resolved"] + o["depths_bounded"] for o in outs)
        - min(o["depths_resolved"] for o in outs),
        p_value=None if None in ps else max(ps),
    )


def nstar_ratio(p: dict, exp: str) -> Measured:
    """log10 of n*(A) / n*(B) over paired seeds (the same seeds, hence the
    same splits), at every depth of a family or at each listed target, by
    ``interval_statistics.nstar_ratio``: per seed the ratio is an interval (a censored
    side makes it a bound), per depth the median and its order-statistic CI
    of interval data; a depth counts when it is resolved or its bound
    already places it on one side of the rule; the claim holds "at every
    depth", so one depth decided against it makes it not supported. ``a``
    may list several predictors: the claim must hold for each. ``also``
    lists predictors reported beside A, outside the verdict.

    Args:
        p: the claim's params (``a``, ``b``, ``eps``, ``target`` or
            ``family``, ``also``) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured (``verdict`` set; ``data["sides"]``: each A side's rows).
    """
    eps, rule = p["eps"], p["rule"]
    want, key = _target_filter(p)
    a_sides = [Side.parse(a) for a in (p["a"] if isinstance(p["a"], list) else [p["a"]])]
    b_side = Side.parse(p["b"])
    b = {key(t): (t, r) for t, r in selection.searches(exp, b_side, eps, want).items()}
    head = f"log10 n*({eps}) of A over B = {_side_label(b_side)}, median over paired seeds"
    outs, lines, data = [], [], {"sides": []}
    for side in a_sides:
        a = {key(t): (t, r) for t, r in selection.searches(exp, side, eps, want).items()}
        common = sorted(set(a) & set(b))
        if not common:
            lines.append(f"A = {_side_label(side)}: no paired search records stored")
            continue
        out = interval_statistics.nstar_ratio(
            {k: a[k][1]["per_seed"] for k in common}, {k: b[k][1]["per_seed"] for k in common}, rule
        )
        outs.append(out)
        gaps = [g for k in common if (g := _error_gap(a[k][1], b[k][1]))]
        lines.append(f"A = {_side_label(side)}: {out['detail']}" + "".join(gaps))
        data["sides"].append({"a": _side_label(side), "rows": out["rows"]})
    beside = _theory_lines(exp, p, eps, want, a_sides[0]) + _also_lines(exp, p, eps, want, b, key)
    detail = head + ": " + ("; ".join(lines) or "no search records stored")
    if beside:
        detail += "; beside (not in the verdict): " + "; ".join(beside)
    if not outs:  # nothing paired: 0 usable depths (the depth gate refuses it)
        zero = 0 if "family" in p else None
        return Measured(None, detail=detail, depths=0, depths_resolved=zero, depths_bounded=zero)
    m = _measured(_combine_sides(rule["kind"], outs), detail, data)
    if "target" in p:  # listed targets, not depths: no depth gate, no depth counts
        m.depths_resolved = m.depths_bounded = None
        m.verdict = INCONCLUSIVE if m.verdict == TOO_FEW_DEPTHS else m.verdict
    return m


def _theory_lines(exp, p, eps, want, side) -> list[str]:
    """Eigenlearning's n* of A's architecture, beside the verdict."""
    out = []
    for cell, res in store.results(exp, "theory"):
        th = res.get("n_star", {}).get(str(eps))
        if th is None or not want(cell["target"]) or cell["arch"] != side.arch:
            continue
        ok = "" if th.get("theory_valid", False) else ", outside theory's validity"
        out.append(
            f"{cell['target']}: eigenlearning predicts n*({eps}) of NTK regression of "
            + f"{side.arch} "
            + (f"> {th['n_max']:.0f}" if th["censored"] else f"{th['n_star']:.0f}")
            + f" (ridgeless theory, not a measurement{ok})"
        )
    return out


def _also_lines(exp, p, eps, want, b, key) -> list[str]:
    """The ``also`` predictors' ratios over B, per depth, beside the verdict."""
    out = []
    for side in (Side.parse(s) for s in p.get("also", [])):
        a = {key(t): r for t, r in selection.searches(exp, side, eps, want).items()}
        common = sorted(set(a) & set(b))
        if common:
            r = interval_statistics.nstar_ratio(
                {k: a[k]["per_seed"] for k in common},
                {k: b[k][1]["per_seed"] for k in common},
                p["rule"],
            )
            out.append(f"{_side_label(side)}: {r['detail']}")
    return out


def _error_gap(ra: dict, rb: dict) -> str:
    """The error gap where both searches were measured: per seed the largest
    n both evaluated, median log10(err A / err B); '' when none."""
    ea = {(e["seed"], e["n"]): e["test_mse"] for e in ra.get("evaluations", [])}
    eb = {(e["seed"], e["n"]): e["test_mse"] for e in rb.get("evaluations", [])}
    gap = []
    for s in sorted({s for s, _ in ea} & {s for s, _ in eb}):
        common = sorted(n for (ss, n) in set(ea) & set(eb) if ss == s)
        if not common:
            continue
        x, y = ea[(s, common[-1])], eb[(s, common[-1])]
        if math.isfinite(x) and math.isfinite(y):
            gap.append((common[-1], math.log10(max(x, 1e-12) / max(y, 1e-12))))
    if not gap:
        return ""
    ns = sorted(n for n, _ in gap)
    g = float(np.median([x for _, x in gap]))
    return (
        f"; error gap where both were measured: median log10(err A / err B) = {g:.2f} at "
        f"n = {ns[0]}..{ns[-1]} (per seed the largest n both searches evaluated)"
    )


def _depth_side(exp, side, family, eps, budget: str = "base") -> dict:
    """{L: (target, per-seed n*)} of one predictor on a depth-indexed family:
    a search's per-seed records, or eigenlearning's n* (``["theory", arch
    prefix]``, used only where ``theory_valid``; the same for every seed)."""
    if not (isinstance(side, list) and len(side) in (2, 3, 4)):
        raise UsageError(
            f"claim params a/b: {side!r} must be [method, arch prefix] or "
            "[method, arch prefix, ridge] or [method, arch prefix, ridge, {cell fields}]"
        )
    if side[0] == "theory":
        th = selection.theory_nstar_by_depth(exp, family, side[1], eps)
        return {L: (None, v) for L, v in th.items() if v.get("theory_valid", False)}
    want = lambda t: selection.matches(t, family)  # noqa: E731
    recs = selection.searches(exp, Side.parse(side), eps, want, budget=budget)
    out = {selection.depth_of(t): (t, r["per_seed"]) for t, r in recs.items()}
    return dict(sorted(out.items(), key=lambda kv: kv[0]))


def _per_seed(side: dict, other: dict) -> dict:
    """{L: per-seed n*}; a theory side (one dict, no seeds) takes the other
    side's seeds, the same value for each."""
    out = {}
    for L, (t, v) in side.items():
        if t is not None:
            out[L] = v
        elif L in other and other[L][0] is not None:
            out[L] = dict.fromkeys(intervals.by_seed(other[L][1]), v)
    return out


def _depth_text(side: dict) -> str:
    return ", ".join(f"L={L}" for L in side) or "none"


def nstar_ratio_growth(p: dict, exp: str) -> Measured:
    """Q1/Q2 of the dichotomy: the per-level growth factor of n*(A) / n*(B),
    by ``interval_statistics.nstar_ratio_growth``: per seed the least-squares slope
    over depth of the log ratio ranges over the set its per-depth intervals
    allow (a censored side makes a depth's ratio a bound); the median over
    seeds of exp(slope) and its order-statistic CI of interval data. Each
    predictor is a search (``[method, arch prefix(, ridge)]``) or
    ``["theory", arch prefix]`` (eigenlearning where ``theory_valid``).

    Args:
        p: the claim's params (``a``, ``b``, ``eps``, ``family``) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured (``verdict`` set).
    """
    eps, budget = p["eps"], p.get("budget", "base")
    a, b = (_depth_side(exp, side, p["family"], eps, budget) for side in (p["a"], p["b"]))
    pa, pb = _per_seed(a, b), _per_seed(b, a)
    out = interval_statistics.nstar_ratio_growth(pa, pb, p["rule"])
    head = f"n*({eps}) of {' '.join(map(str, p['a']))} / {' '.join(map(str, p['b']))}"
    detail = f"{head}: A at {_depth_text(a)}, B at {_depth_text(b)}; {out['detail']}"
    data = {k: out[k] for k in ("depths", "per_seed", "seeds_decided") if k in out}
    common = sorted(set(pa) & set(pb))
    meds = {side: [_median_n(x[L]) for L in common] for side, x in (("a", pa), ("b", pb))}
    data.update(
        L=common,
        **{k: [m[0] for m in v] for k, v in meds.items()},
        **{f"{k}_censored": [m[1] for m in v] for k, v in meds.items()},
    )
    return _measured(out, detail, data)


def _median_n(per_seed) -> tuple[float | None, str | None]:
    """The median seed's n* at one depth and how it is censored: (n*, None)
    when a point, (bound, "right") above n_max, (bound, "left") at n_min,
    (None, "unknown") when the median interval is open both ways."""
    items = list(intervals.by_seed(per_seed).values())
    lo, hi = intervals.median_ci(
        [intervals.log_interval(v) for v in items], min_seeds=len(items) + 1
    )["median"]
    if lo == hi or (math.isfinite(lo) and math.isfinite(hi)):  # a point, or a bracket
        return math.exp(0.5 * (lo + hi)), None
    if math.isfinite(lo):
        return math.exp(lo), "right"
    return (math.exp(hi), "left") if math.isfinite(hi) else (None, "unknown")


def _fourier_beside(exp: str, kernel: dict, eps) -> tuple[str, dict | None]:
    """interval_statistics.fourier_fit of the kernel's n* against the Fourier complexity
    of the same targets, where spectrum cells give it (reported, no verdict)."""
    spec = {
        cell["target"]: res.get("complexity", {}).get(FOURIER_COMPLEXITY)
        for cell, res in store.results(exp, "spectrum")
    }
    F = {L: spec[t] for L, (t, _) in kernel.items() if spec.get(t)}
    if len(set(F.values())) < 2:
        return f"; no Fourier fit ({len(F)} depth(s) with a spectrum cell, < 2 distinct)", None
    try:
        fit = interval_statistics.fourier_fit({L: kernel[L][1] for L in F}, F)
    except ValueError as e:  # a seed left with one distinct complexity
        return f"; no Fourier fit ({e})", None
    fom = fit["fit_of_medians"]
    text = (
        f"; beside (no verdict): kernel n*({eps}) against the Fourier complexity "
        f"({FOURIER_COMPLEXITY} of the Walsh degree profile: "
        + ", ".join(f"L={L}: {v:.3g}" for L, v in F.items())
        + f"): {fit['detail']}"
        + (
            f"; fit of the median n*: n* = {fom['c']:.3g} F^{fom['k']:.2f}, R^2 = {fom['r2']:.3f}"
            if fom
            else ""
        )
    )
    keep = ("value", "lo", "hi", "bound_lo", "bound_hi", "seeds", "fit_of_medians")
    return text, {"complexity": F, **{k: fit[k] for k in keep}}


def nstar_kernel_convexity(p: dict, exp: str) -> Measured:
    """The kernel half of the dichotomy: the own-architecture NTK's n* grows
    faster than any fixed power of the number of constituents, read as its
    per-level factor growing with depth (log n* convex in L): per seed the
    change per level of the log per-level factor over its interval set
    (``interval_statistics.kernel_convexity``), reported as the factor by which the
    per-level factor is multiplied per level; beside it (no verdict) the fit
    of kernel n* against the target's Fourier complexity where spectrum
    cells give it.

    Args:
        p: the claim's params (``a = [method, arch prefix(, ridge)]``: the
            kernel; ``eps``, ``family``) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured (``verdict`` set; ``data["fourier_fit"]`` or None).

    References:
        arXiv 2607.06382 (kernel n* governed by Fourier complexity).
    """
    eps = p["eps"]
    kernel = _depth_side(exp, p["a"], p["family"], eps)
    out = interval_statistics.kernel_convexity({L: v for L, (_, v) in kernel.items()}, p["rule"])
    fourier, fit = _fourier_beside(exp, kernel, eps)
    detail = f"n*({eps}) of {' '.join(map(str, p['a']))} at {_depth_text(kernel)}; "
    data = {k: out[k] for k in ("depths", "per_seed", "seeds_decided") if k in out}
    return _measured(out, detail + out["detail"] + fourier, dict(data, fourier_fit=fit))


def nstar_net_power(p: dict, exp: str) -> Measured:
    """The net half of the dichotomy: the trained net's n* grows at most
    polynomially in the number of constituents C (``constituents.of_target``):
    per seed the least-squares slope p of log n* on log C over its interval
    set (``interval_statistics.net_power``), median and CI over seeds. With ``kernel``
    given, the kernel's Fourier fit is reported beside (no verdict).

    Args:
        p: the claim's params (``a``: the net side; ``eps``, ``family``;
            optional ``kernel``: a kernel side) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured (``verdict`` set; ``data["constituents"]``).

    References:
        arXiv 2607.06382 (network n* governed by architectural complexity).
    """
    eps = p["eps"]
    net = _depth_side(exp, p["a"], p["family"], eps)
    if any(t is None for t, _ in net.values()):
        raise UsageError("claim params: nstar_net_power needs a search side, not theory")
    C = {L: constituents.of_target(parse_target(t)) for L, (t, _) in net.items()}
    out = interval_statistics.net_power({L: v for L, (_, v) in net.items()}, C, p["rule"])
    fourier, fit = "", None
    if "kernel" in p:
        fourier, fit = _fourier_beside(exp, _depth_side(exp, p["kernel"], p["family"], eps), eps)
    detail = (
        f"n*({eps}) of {' '.join(map(str, p['a']))} against the number of constituents C: "
        + (", ".join(f"L={L}: C={c}" for L, c in C.items()) or "no depths")
        + f"; {out['detail']}"
    )
    data = {k: out[k] for k in ("depths", "per_seed", "seeds_decided") if k in out}
    return _measured(out, detail + fourier, dict(data, constituents=C, fourier_fit=fit))


def nstar_scaling(p: dict, exp: str) -> Measured:
    """A published scaling law of one predictor's n*: log n* = log c + x log g
    (``law = "exp"``: n* ~ c g^x, x a target key such as L) or log n* = log c
    + k log x (``law = "power"``: n* ~ c x^k, e.g. x = m). Per seed the
    least-squares slope over every x value, over the set its per-x intervals
    allow (``interval_statistics.law_slope``: a censored n* is a bound, never
    a dropped x); the value is the median seed's log(g / ``base``) (exp) or
    k - ``exponent`` (power), so 0 is the law and an ``equivalence`` rule is
    two-sided on it; the CI is the order-statistic CI of interval data. The
    prefactor c of a line through the resolved medians is in the detail and
    data (descriptive, no CI).

    Args:
        p: the claim's params (``a = [method, arch prefix]``, ``eps``,
            ``family``, ``x``, ``law`` and its ``base`` or ``exponent``) with
            its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured (``verdict`` set).
    """
    eps, family, key = p["eps"], p["family"], p.get("x", "L")
    law = p.get("law", "exp")
    if law not in ("exp", "power") or not (isinstance(p.get("a"), list) and len(p["a"]) == 2):
        raise UsageError("claim params: law must be exp or power, a = [method, arch prefix]")
    ref = float(p["base"] if law == "exp" else p["exponent"])
    method, arch = p["a"]
    recs = nstar_by_key(exp, Side.parse(p["a"]), family, key, eps)
    xs = sorted(recs)
    t = {x: float(x) if law == "exp" else math.log(x) for x in xs}
    name = "log growth factor per unit of " + key if law == "exp" else f"exponent of {key}"
    out = interval_statistics.law_slope(
        {x: recs[x]["per_seed"] for x in xs}, t, math.log(ref) if law == "exp" else ref,
        f"{name}, minus the law's", p.get("rule"),
    )  # fmt: skip
    detail = f"n*({eps}) of {method} {arch} by {key}: " + ", ".join(
        f"{key}={x}: " + _fmt_n(recs[x]["median"]) for x in xs
    )
    data = {key: xs, "n_star": [recs[x]["median"]["n_star"] for x in xs], "what": name}
    resolved = [x for x in xs if not recs[x]["median"].get("censored")]
    if len(resolved) >= 2:  # descriptive: the line through the resolved medians
        logn = np.log([recs[x]["median"]["n_star"] for x in resolved])
        _, logc = np.polyfit([t[x] for x in resolved], logn, 1)
        data["prefactor"] = math.exp(logc)
        detail += (
            f"; prefactor c = {math.exp(logc):.3g} of the line through the {len(resolved)}"
            " resolved medians (descriptive, no CI)"
        )
    detail += (
        "; per-seed fit log n* = log c + "
        + (f"{key} log g" if law == "exp" else f"k log {key}")
        + "; value = median seed's "
        + (f"log(g / {ref:g})" if law == "exp" else f"k - {ref:g}")
        + f"; {out['detail']}"
    )
    data.update({k: out[k] for k in ("depths", "per_seed", "seeds_decided") if k in out})
    return _measured(out, detail, data)


#: the abscissae a ``pstar_scaling`` claim may name (``x``): m^L of each cell,
#: the published law's dependence on the depth L and the synonyms m
PSTAR_X = {"m^L": lambda m, L: rhm_pstar.paper_pstar(1, m, L)}


def _pstar_cells(exp: str, p: dict, family: dict) -> dict:
    """{cell label "m=..,L=..": (target, per-seed P*)} of the claim's side
    ``a`` on ``family``: classification searches at eps = the claim's
    (default each target's ``rhm_pstar.pstar_threshold``)."""
    recs = selection.searches(
        exp, Side.parse(p["a"]), p.get("eps", rhm_pstar.PSTAR_EPS),
        lambda t: selection.matches(t, family), error=p.get("target_error", CLASSIFICATION),
    )  # fmt: skip
    out = {}
    for t, r in recs.items():
        m, L = selection.param_of(t, "m"), selection.depth_of(t)
        out[f"m={m},L={L}"] = (t, r["per_seed"], (m, L))
    return dict(sorted(out.items()))


def _regime_clip(cells: dict) -> tuple[dict, dict]:
    """The cells of ``_pstar_cells`` read inside the published law's regime
    (``rhm_pstar.pstar_regime_edge``: P* at most 10% of the valid strings), and how
    many seeds per cell were read so.

    A seed whose P* may lie beyond its cell's edge (resolved beyond it, a
    bracket across it, or censored above a bound beyond it) is read as "not
    reached within the regime": censored above at the lesser of its lower
    end and the edge, the bound its data imply within the regime (evidence,
    never a dropped point). A seed censored above a bound inside the regime
    already reads so and is left as it is. The rule depends on the design
    only (the edge), seed by seed.

    Returns:
        ({label: (target, {seed: item}, (m, L))}, {label: (seeds read so, of, edge)}).
    """
    out, clipped = {}, {}
    for k, (t, per_seed, (m, L)) in cells.items():
        n_c, s = selection.param_of(t, "n_c"), selection.param_of(t, "s")
        edge = rhm_pstar.pstar_regime_edge(n_c, m, s, L)
        items, beyond = {}, 0
        for seed, item in intervals.by_seed(per_seed).items():
            lo, hi = intervals.log_interval(item)
            already = hi == math.inf and lo <= math.log(edge)  # a bound inside the regime
            if hi > math.log(edge) and not already:
                item, beyond = (min(math.exp(lo), edge), math.inf), beyond + 1
            items[seed] = item
        out[k] = (t, items, (m, L))
        if beyond:
            clipped[k] = (beyond, len(items), edge)
    return out, clipped


def _regime_text(clipped: dict) -> str:
    """The detail's sentence on the seeds ``_regime_clip`` read as bounds
    ({label: (seeds, of, edge)}; labels may name their n_c)."""
    if not clipped:
        return ""
    pct = f"{100 * rhm_pstar.PSTAR_REGIME_FRACTION:g}%"
    return (
        f"; seeds whose P* may lie beyond the regime (P* <= {pct} of the valid strings), read "
        "as censored at its edge: "
        + ", ".join(f"{k}: {b} of {n} (edge {e:.4g})" for k, (b, n, e) in clipped.items())
    )


def _cells_text(cells: dict) -> str:
    return ", ".join(f"{k}: {_median_text(v[1])}" for k, v in cells.items()) or "none"


def _median_text(per_seed) -> str:
    n, cens = _median_n(per_seed)
    return {None: f"{n:.3g}", "right": f"> {n:.3g}", "left": f"<= {n:.3g}"}.get(cens, "unknown")


def pstar_scaling(p: dict, exp: str) -> Measured:
    """The published law P* ~ n_c m^L of a hierarchy model (at fixed n_c, P*
    ~ x = m^L), on the classification error: per seed the least-squares slope
    of log P* on log x over the set its per-cell intervals allow
    (``interval_statistics.pstar_scaling``; censored cells are bounds), the
    value the median seed's slope minus ``exponent``. Each cell is read
    inside the law's regime (``_regime_clip``: a seed whose P* may lie
    beyond 10% of the valid strings is a bound at that edge); ``data``'s
    ``beyond_regime`` counts such seeds per cell.

    Args:
        p: the claim's params (``a = [method, arch prefix]``, ``family``,
            ``x`` (a key of ``PSTAR_X``), ``exponent``; ``eps`` default
            ``rhm_pstar.PSTAR_EPS``) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured (``verdict`` set).

    References:
        Cagnetta, Petrini, Tomasini, Favero & Wyart, Phys. Rev. X 14,
        031001 (2024).
    """
    if p.get("x") not in PSTAR_X:
        raise UsageError(f"claim params: x={p.get('x')!r} (allowed: {', '.join(PSTAR_X)})")
    cells, clipped = _regime_clip(_pstar_cells(exp, p, p["family"]))
    x = {k: PSTAR_X[p["x"]](*mL) for k, (_, _, mL) in cells.items()}
    out = interval_statistics.pstar_scaling(
        {k: v[1] for k, v in cells.items()}, x, float(p.get("exponent", 1)), p["rule"]
    )
    detail = (
        f"classification P* of {' '.join(map(str, p['a']))} against x = {p['x']}: "
        + ", ".join(f"{k} (x={x[k]:g}): {_median_text(v[1])}" for k, v in cells.items())
        + f"; {out['detail']}{_regime_text(clipped)}"
    )
    data = {k: out[k] for k in ("depths", "per_seed", "seeds_decided") if k in out}
    beyond = {k: v[0] for k, v in clipped.items()}
    return _measured(out, detail, dict(data, x=x, beyond_regime=beyond))


def pstar_ratio(p: dict, exp: str) -> Measured:
    """P* at the larger n_c over P* at the smaller, on the same (m, L) cells
    of a hierarchy model family, on the classification error: per seed the
    mean over cells of log2 of the ratio over the set its per-cell intervals
    allow (``interval_statistics.pstar_ratio``), minus the published law's
    log2(n_c ratio) (``rhm_pstar.paper_pstar``). Each n_c's cells are read inside
    its own regime (``_regime_clip``, ``data["beyond_regime"]``); a cell
    where both are bounds above gives an unbounded ratio for that seed and
    drops from its mean (no information either way).

    Args:
        p: the claim's params (``a``, ``family`` without n_c, ``n_c = [B, A]``:
            the ratio is P*(A) / P*(B); ``eps`` as ``pstar_scaling``) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured (``verdict`` set).

    References:
        Cagnetta et al., Phys. Rev. X 14, 031001 (2024) (P* ~ n_c m^L).
    """
    nb, na = p["n_c"]
    (a, clip_a), (b, clip_b) = (
        _regime_clip(_pstar_cells(exp, p, dict(p["family"], n_c=n))) for n in (na, nb)
    )
    clipped = {f"n_c={n} {k}": v for n, c in ((na, clip_a), (nb, clip_b)) for k, v in c.items()}
    # the law's ratio does not depend on (m, L): read it at m = L = 1
    expected = math.log2(rhm_pstar.paper_pstar(na, 1, 1) / rhm_pstar.paper_pstar(nb, 1, 1))
    out = interval_statistics.pstar_ratio(
        {k: v[1] for k, v in a.items()}, {k: v[1] for k, v in b.items()}, expected, p["rule"]
    )
    detail = (
        f"classification P* of {' '.join(map(str, p['a']))}, n_c={na} over n_c={nb}: "
        f"n_c={na}: {_cells_text(a)}; n_c={nb}: {_cells_text(b)}; {out['detail']}"
        + _regime_text(clipped)
    )
    data = {k: out[k] for k in ("depths", "per_seed", "seeds_decided") if k in out}
    beyond = {k: v[0] for k, v in clipped.items()}
    return _measured(out, detail, dict(data, expected_log2=expected, beyond_regime=beyond))


def nstar_by_key(exp: str, side: Side, family: dict, key: str, eps: float) -> dict:
    """The search records of one predictor on a target family, by one key of
    the target spec (e.g. the depth L or the synonyms m of a hierarchy model).

    Args:
        exp: the experiment's name.
        side: the predictor.
        family: the target family (see ``selection.matches``).
        key: the target spec's key indexing the records.
        eps: the error level.

    Returns:
        dict {value of key: search record}, sorted by that value.
    """
    recs = selection.searches(exp, side, eps, lambda t: selection.matches(t, family))
    out = {selection.param_of(t, key): r for t, r in recs.items()}
    return dict(sorted(out.items()))


def _fmt_n(side) -> str:
    if side["censored"] == "right":
        return f"> {side['n_star']:.0f}" if side["n_star"] else "not reached"
    if side["censored"] == "left":
        return f"<= {side['n_star']:.0f}"
    return f"{side['n_star']:.0f}" if side["n_star"] is not None else "-"
