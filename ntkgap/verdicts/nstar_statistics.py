"""The statistics of searched sample complexities n*(eps): the ratio of two
predictors' n* on paired seeds (``nstar_ratio``), its growth per level of
depth (``nstar_ratio_growth``) and a published scaling law of one
predictor's n* (``nstar_scaling``). A censored n* (beyond the largest n
searched, or reached at the smallest) makes its seed's value an interval;
medians and CI ends become bounds, stated, and an open end counts as
+-infinity for the rule (:func:`ntkgap.verdicts.rules.decide`)."""

from __future__ import annotations

import math

import numpy as np

from ntkgap.errors import UsageError
from ntkgap.runs import runner, scaling
from ntkgap.verdicts import selection
from ntkgap.verdicts.rules import Measured
from ntkgap.verdicts.selection import Side


def _side_label(side: Side) -> str:
    ridge = side.ridge if side.method == "ntk_search" else None
    tag = {None: "", 0.0: " (ridgeless)", "tuned": " (ridge tuned on validation)"}.get(
        ridge, f" (ridge {ridge})"
    )
    return f"{side.method} {side.arch}{tag}"


def nstar_ratio(p: dict, exp: str) -> Measured:
    """log10 of the median over paired seeds of n*(A) / n*(B) (the same
    seeds, hence the same splits, on both sides), per target, with the
    distribution-free order-statistic CI of that median (>= MIN_SEEDS_FOR_CI
    seeds). A censored n* makes its seed's ratio an interval (a right-
    censored A over a resolved B: ratio > n_max / n*(B)); the median and CI
    ends become bounds, stated, and an open end counts as +-infinity for the
    rule. ``a`` may list several predictors and ``target``/``family`` cover
    several targets: the claim must hold for every (A, target) pair, so the
    value is the worst pair's and the CI the envelope that gives that verdict.
    ``also`` lists predictors reported beside A, outside the verdict.

    Args:
        p: the claim's params (``a``, ``b``, ``eps``, ``target`` or
            ``family``, ``also``) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured.
    """
    eps = p["eps"]
    if "target" in p:
        targets = p["target"] if isinstance(p["target"], list) else [p["target"]]

        def want(t):
            return t in targets
    else:

        def want(t):
            return selection.matches(t, p["family"])

    a_sides = [Side.parse(a) for a in (p["a"] if isinstance(p["a"], list) else [p["a"]])]
    b_side = Side.parse(p["b"])
    b = selection.searches(exp, b_side, eps, want)
    theory = {
        cell["target"]: res["n_star"][str(eps)]
        for cell, res in runner.results(exp, "theory")
        if want(cell["target"])
        and cell["arch"] == a_sides[0].arch
        and str(eps) in res.get("n_star", {})
    }
    also = [Side.parse(s) for s in p.get("also", [])]
    rows, lines, also_lines = [], [], []
    for t in sorted(set(b) | set(theory), key=lambda t: (selection.depth_of(t) or 0, t)):
        if t in b:
            _ratio_rows(exp, eps, t, b[t], a_sides, also, rows, lines, also_lines)
        else:
            lines.append(f"{t}: not searched in this profile")
        if th := theory.get(t):
            ok = "" if th.get("theory_valid", False) else ", outside theory's validity"
            also_lines.append(
                f"{t}: eigenlearning predicts n*({eps}) of NTK regression of {a_sides[0].arch} "
                + (f"> {th['n_max']:.0f}" if th["censored"] else f"{th['n_star']:.0f}")
                + f" (ridgeless theory, not a measurement{ok})"
            )
    head = f"log10 n*({eps}) of A over B = {_side_label(b_side)}, median over paired seeds"
    beside = "; beside (not in the verdict): " + "; ".join(also_lines) if also_lines else ""
    if not rows:
        return Measured(
            None,
            detail=head + ": " + ("; ".join(lines) or "no paired search records stored") + beside,
            depths=0,
        )
    return _ratio_measured(p["rule"]["kind"], rows, head + ": " + "; ".join(lines) + beside)


def _ratio_rows(exp, eps, t, rb, a_sides, also, rows, lines, also_lines):
    """Appends the rows and lines of one target (B's record ``rb``): one per
    A side in the verdict, and the ``also`` sides beside it."""
    for side in a_sides:
        ra = selection.searches(exp, side, eps, lambda x: x == t).get(t)
        if ra is None:
            continue
        r = _ratio_of_searches(ra, rb)
        rows.append(dict(r, target=t, side=_side_label(side)))
        lines.append(
            f"{t}, A = {_side_label(side)}: n*({eps}) {_median_side(r['a'])} / "
            f"{_median_side(r['b'])}: {_ratio_text(r)}"
        )
    for side in also:
        ra = selection.searches(exp, side, eps, lambda x: x == t).get(t)
        if ra is not None:
            r = _ratio_of_searches(ra, rb)
            also_lines.append(
                f"{t}, {_side_label(side)}: n* {_median_side(r['a'])}: {_ratio_text(r)}"
            )


def _ratio_measured(kind: str, rows: list[dict], detail: str) -> Measured:
    """The Measured of ``nstar_ratio`` over its rows: the envelope that gives
    the all-rows verdict under a rule of ``kind``, its CI method and notes."""
    env = _envelope(kind, rows)
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


def nstar_ratio_growth(p: dict, exp: str) -> Measured:
    """Q1/Q2 of the dichotomy: how the ratio n*(A) / n*(B) of two predictors
    grows per level of depth. Each predictor is a search method over seeds
    (median seed, censoring explicit; ``[method, arch prefix, ridge]`` picks
    the kernel searches of that ridge, e.g. ``"tuned"``) or ``theory``
    (eigenlearning, used only where ``theory_valid``). Per seed (when both sides are searches on the
    same seeds) the log-ratio's slope over resolved depths; the value is the
    median over seeds of exp(slope), with a distribution-free order-statistic
    CI for the median (>= MIN_SEEDS_FOR_CI seeds).

    Args:
        p: the claim's params (``a``, ``b``: ``[method, arch prefix]`` or
            ``[method, arch prefix, ridge]``; ``eps``, ``family``).
        exp: the experiment's name.

    Returns:
        Measured.
    """
    eps = p["eps"]
    a, b = (_growth_side(exp, side, p["family"], eps) for side in (p["a"], p["b"]))
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
    m = _growth_over_seeds(
        [a[L]["per_seed"] for L in resolved], [b[L]["per_seed"] for L in resolved], resolved
    )
    if m is None:
        m = Measured(of_medians, detail=" (one side is deterministic theory: no seed-level CI)")
    m.detail = (
        detail
        + m.detail
        + f"; value: the median seed's per-level growth factor; the ratio of the median "
        f"seeds' n* grows {of_medians:.2f}x per level"
    )
    m.depths, m.data = len(resolved), data
    return m


def _growth_side(exp, side, family, eps) -> dict:
    """{L: {"n_star", "censored", "per_seed"}} of one side of
    ``nstar_ratio_growth``: a search's median seed (with its seeds), or
    valid, uncensored theory (no seeds)."""
    if not (isinstance(side, list) and len(side) in (2, 3)):
        raise UsageError(
            f"claim params a/b: {side!r} must be [method, arch prefix] or "
            "[method, arch prefix, ridge]"
        )
    if side[0] == "theory":
        th = selection.theory_nstar_by_depth(exp, family, side[1], eps)
        return {
            L: {"n_star": v["n_star"], "censored": v.get("censored"), "per_seed": None}
            for L, v in th.items()
            if v.get("theory_valid", False) and not v.get("censored")
        }
    recs = selection.nstar_by_depth(exp, Side.parse(side), family, eps)
    return {
        L: {
            "n_star": r["median"]["n_star"],
            "censored": r["median"].get("censored"),
            "per_seed": {s["seed"]: s for s in r["per_seed"]},
        }
        for L, r in recs.items()
    }


def _growth_over_seeds(pa, pb, resolved) -> Measured | None:
    """The median over the seeds both sides share of each seed's growth
    factor (:func:`_seed_growth`) with its order-statistic CI; None when a
    side is theory (no seeds). Its ``detail`` lists the seeds' factors."""
    if not all(x is not None for x in pa + pb):
        return None
    common_seeds = sorted(set.intersection(*[set(x) for x in pa + pb]))
    per_seed = []
    for s in common_seeds:
        rows = [(L, x[s], y[s]) for L, x, y in zip(resolved, pa, pb)]
        per_seed.append(_seed_growth(rows))
    ci = scaling.median_censored(per_seed)
    detail = "; per-seed growth factors: " + ", ".join(
        "censored" if isinstance(v, tuple) else f"{v:.2f}" for v in per_seed
    )
    if ci["reason"]:
        detail += f" (no CI: {ci['reason']})"
    elif ci["lo"] is None or ci["hi"] is None:
        detail += " (CI end censored)"
    seeds = len(common_seeds)
    return Measured(
        # the value is the estimand of the CI: the median of the seeds' factors
        ci["value"] if ci["status"] == "resolved" else None,
        ci["lo"],
        ci["hi"],
        seeds=seeds,
        ci_method=ci["method"],
        detail=detail,
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


def nstar_scaling(p: dict, exp: str) -> Measured:
    """A published scaling law of one predictor's n*: log n* = log c + x log g
    (``law = "exp"``: n* ~ c g^x, x a target key such as L) or log n* = log c
    + k log x (``law = "power"``: n* ~ c x^k, e.g. x = m). Per seed a least-
    squares line over the x values where the median seed is resolved (a seed
    censored at one of them has an unknown slope); the value is the median
    seed's log(g / ``base``) (exp) or k - ``exponent`` (power), so 0 is the
    law and an ``equivalence`` rule is two-sided on it; the CI is the
    distribution-free order-statistic CI of the median over seeds (>=
    MIN_SEEDS_FOR_CI seeds). The prefactor c (median seed, same CI method)
    is in the detail and data.

    Args:
        p: the claim's params (``a = [method, arch prefix]``, ``eps``,
            ``family``, ``x``, ``law`` and its ``base`` or ``exponent``).
        exp: the experiment's name.

    Returns:
        Measured.
    """
    eps, family, key = p["eps"], p["family"], p.get("x", "L")
    law = p.get("law", "exp")
    if law not in ("exp", "power") or not (isinstance(p.get("a"), list) and len(p["a"]) == 2):
        raise UsageError("claim params: law must be exp or power, a = [method, arch prefix]")
    ref = float(p["base"] if law == "exp" else p["exponent"])
    method, arch = p["a"]
    recs = nstar_by_key(exp, Side.parse(p["a"]), family, key, eps)
    xs = sorted(recs)
    resolved = [x for x in xs if not recs[x]["median"].get("censored")]
    detail = f"n*({eps}) of {method} {arch} by {key}: " + ", ".join(
        f"{key}={x}: " + _fmt_n(recs[x]["median"]) for x in xs
    )
    data = {key: xs, "n_star": [recs[x]["median"]["n_star"] for x in xs]}
    if len(resolved) < 2:
        return Measured(None, depths=len(resolved), detail=detail + "; < 2 resolved", data=data)
    t = np.array(resolved, float) if law == "exp" else np.log(np.array(resolved, float))
    seeds = sorted(set.intersection(*[{r["seed"] for r in recs[x]["per_seed"]} for x in resolved]))
    slopes, prefactors = _seed_fits(recs, resolved, t, seeds)
    ci, cc = scaling.median_censored(slopes), scaling.median_censored(prefactors)

    def shift(v):
        return None if v is None else math.log(v) - (math.log(ref) if law == "exp" else ref)

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
    name = "log growth factor per unit of " + key if law == "exp" else f"exponent of {key}"
    data.update(prefactor=cc["value"], prefactor_lo=cc["lo"], prefactor_hi=cc["hi"], what=name)
    return Measured(
        shift(ci["value"]) if ci["status"] == "resolved" else None,
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


def _seed_fits(recs, resolved, t, seeds):
    """Per seed the least-squares line of log n* against ``t`` (the resolved
    x values, or their logs): exp(slope) and the prefactor exp(intercept),
    or intervals where a censored n* makes them bounds."""
    slopes, prefactors = [], []
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
    return slopes, prefactors


def _fmt_n(side) -> str:
    if side["censored"] == "right":
        return f"> {side['n_star']:.0f}" if side["n_star"] else "not reached"
    if side["censored"] == "left":
        return f"<= {side['n_star']:.0f}"
    return f"{side['n_star']:.0f}" if side["n_star"] is not None else "-"
