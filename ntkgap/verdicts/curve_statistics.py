"""The statistics of fixed-n learning curves and of deterministic theory
cells: each ``fn(params, experiment) -> Measured`` reads the stored results
through :mod:`ntkgap.verdicts.selection` (the claims' params select them)."""

from __future__ import annotations

import math

import numpy as np

from ntkgap.runs import runner, scaling
from ntkgap.verdicts import selection
from ntkgap.verdicts.rules import Measured


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


def mean_log_ratio(p: dict, exp: str) -> Measured:
    """Per target, the mean over n of log10(NTK error / net error), paired by
    seed, with the (1 - 2 alpha) Student-t CI of the mean over seeds (the
    interval of a TOST equivalence test, >= MIN_SEEDS_FOR_CI seeds). The
    claim covers every target: the value is the largest |mean| and the CI the
    envelope of all targets' CIs, so "inside the margin" holds for all.

    Args:
        p: the claim's params (``n``: the sample sizes, default all) with its ``rule``.
        exp: the experiment's name.

    Returns:
        Measured.
    """
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
    lrs = {k: v for k, v in selection.lr_choices(exp).items() if k[0] in per}
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
    for cell, res in runner.results(exp, "theory"):
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
