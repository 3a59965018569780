"""The statistics of fixed-n learning curves and of deterministic theory
cells: each ``fn(params, experiment) -> Measured`` reads the stored results
through :mod:`ntkgap.verdicts.selection` (the claims' params select them)."""

from __future__ import annotations

import math

import numpy as np

from ntkgap.runs import scaling, store
from ntkgap.verdicts import selection
from ntkgap.verdicts.rules import (
    INCONCLUSIVE,
    NOT_SUPPORTED,
    SUPPORTED,
    Measured,
    rule_verdict,
)


def decay_exponent(p: dict, exp: str) -> Measured:
    """Circle eigenvalue decay exponent of each arch: a deterministic fit
    (no sampling error); the spread over fitting windows is reported as what
    it is, not as a CI. Value: the exponent farthest from ``expected``.

    Args:
        p: the claim's params (``windows``, ``expected``) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured.
    """
    windows = [tuple(w) for w in p.get("windows", [[8, 129], [16, 257], [32, 257], [8, 257]])]
    rows = []
    for cell, r in store.results(exp, "eigen"):
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
    ntk = selection.curves(exp, "ntk")
    net = selection.curves(exp, "net")
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


def _lr_text(exp: str, targets) -> tuple[dict, str]:
    """The nets' learning rates chosen on validation for these targets, and a line."""
    lrs = {k: v for k, v in selection.lr_choices(exp).items() if k[0] in targets}
    if not any(v["median_best_val_mse"] for v in lrs.values()):
        return lrs, ""
    return lrs, "; nets' lr chosen on validation (lowest median best validation MSE) per " + (
        "(target, n): " + ", ".join(f"{k[0]} n={k[2]}: {v['lr']:g}" for k, v in sorted(lrs.items()))
    )


def log_ratio_every_n(p: dict, exp: str) -> Measured:
    """No gap at any n: per target and per sample size n, the mean over
    paired seeds of log10(NTK error / net error) with the (1 - 2 alpha)
    Student-t CI of a TOST equivalence test. Supported only when every
    (target, n)'s CI lies inside +-margin; not supported when any lies
    wholly outside; inconclusive otherwise (a gap that changes sign with n
    cannot cancel in an average, since there is none). Value: the worst
    (target, n)'s mean; CI: the envelope of all the CIs; p-value: the
    largest TOST p (intersection-union test).

    Args:
        p: the claim's params (``n``: the sample sizes, default all) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured (``verdict`` set; ``data["per_target"]``: each target's
        per-n rows).

    References:
        Schuirmann, J. Pharmacokin. Biopharm. 15, 657 (1987) (TOST);
        Berger & Hsu, Statistical Science 11 (1996) 283 (intersection-union).
    """
    pairs = _paired_log_ratio(exp, p)
    rule = p["rule"]
    if not pairs:
        return Measured(None, detail="no paired NTK and network cells stored")
    per = {
        t: [
            dict(tost, n=n, verdict=rule_verdict(rule, tost["lo"], tost["hi"]))
            for j, n in enumerate(ns)
            for tost in [scaling.equivalence_test(mat[:, j], rule["margin"])]
        ]
        for t, (ns, _, mat) in pairs.items()
    }
    rows = [r for rs in per.values() for r in rs]
    verdicts = [r["verdict"] for r in rows]
    verdict = (
        NOT_SUPPORTED
        if NOT_SUPPORTED in verdicts
        else SUPPORTED
        if all(v == SUPPORTED for v in verdicts)
        else INCONCLUSIVE
    )
    worst = max(rows, key=lambda r: abs(r["value"]))
    complete = all(r["lo"] is not None for r in rows)
    ps = [r["p"] for r in rows]
    lines = "; ".join(
        f"{t}: "
        + ", ".join(
            f"n={r['n']}: {r['value']:.2f}"
            + (f" [{r['lo']:.2f}, {r['hi']:.2f}]" if r["lo"] is not None else " (no CI)")
            for r in rs
        )
        for t, rs in per.items()
    )
    lrs, chosen = _lr_text(exp, per)
    return Measured(
        worst["value"],
        min(r["lo"] for r in rows) if complete else None,
        max(r["hi"] for r in rows) if complete else None,
        seeds=min(r["seeds"] for r in rows),
        ci_method=worst["method"] + "; per (target, n), the envelope over them",
        detail="log10(NTK error / net error) per target and n, mean over paired seeds: "
        + lines
        + f"; {verdicts.count(SUPPORTED)} of {len(rows)} (target, n) inside the margin, "
        + f"{verdicts.count(NOT_SUPPORTED)} wholly outside"
        + chosen,
        data={
            "per_target": {
                t: [{k: r[k] for k in ("n", "value", "lo", "hi", "p", "verdict")} for r in rs]
                for t, rs in per.items()
            },
            "lr_chosen": [[*k, v["lr"]] for k, v in sorted(lrs.items())],
        },
        verdict=verdict,
        p_value=None if None in ps else max(ps),
    )


def log_ratio_at_n(p: dict, exp: str) -> Measured:
    """log10(NTK error / net error) at the pre-registered n, mean over paired
    seeds, seed-level bootstrap CI.

    Args:
        p: the claim's params (``n``, ``target``, ``seed`` of the bootstrap) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured.
    """
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


def theory_growth(p: dict, exp: str) -> Measured:
    """Per-level growth factor of a theory quantity (eigenlearning n*(eps),
    or the RKHS norm over the variance) over depth, from deterministic theory
    cells: the geometric mean of the per-level ratios over the depths where
    they have settled (the last ``settled`` levels); their spread is
    reported as what it is, not as a CI.

    Args:
        p: the claim's params (``family``, ``arch``, ``quantity``, ``eps``,
            ``settled``) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured.
    """
    family, arch, key = p["family"], p["arch"], p.get("quantity", "n_star")
    rows = {}
    for cell, res in store.results(exp, "theory"):
        if not cell["arch"].startswith(arch) or not selection.matches(cell["target"], family):
            continue
        if key == "n_star":
            v = res.get("n_star", {}).get(str(p["eps"]))
            # theory enters a verdict only where n is small against the distinct inputs
            if v and not v.get("censored") and v.get("theory_valid", False):
                rows[selection.depth_of(cell["target"])] = v["n_star"]
        elif res.get(key) is not None:
            rows[selection.depth_of(cell["target"])] = res[key]
    if len(rows) < 2:
        return Measured(
            None,
            detail="fewer than two depths resolved",
            depths=len(rows),
            depths_resolved=len(rows),
            depths_bounded=0,
        )
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
        depths_resolved=len(L),
        depths_bounded=0,  # theory is censored or valid: a censored depth is left out
        detail=f"{key} for L={L[0]}..{L[-1]}: per-level ratios "
        + ", ".join(f"{r:.2f}" for r in ratios)
        + f"; value = geometric mean of the last {len(tail)} (L={L[-len(tail) - 1]}..{L[-1]}), "
        f"spread {tail.min():.2f}..{tail.max():.2f} (deterministic theory: no CI)",
        data={"L": L, "values": vals.tolist()},
    )
