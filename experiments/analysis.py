"""What the figure scripts read: stored results grouped by target and arch,
through the same collectors the claims use (``ntkgap.verdicts.selection``); spec keys
come from the one spec parser. Never computes cells."""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ntkgap.runs import scaling, store
from ntkgap.verdicts import selection

EPS = 0.1


def curves(exp, method, key=("target", "arch")):
    """{(target, arch[, ...]): {n: [per-seed relative test MSE]}} (seed order)."""
    return {
        k: {n: [v[s] for s in sorted(v)] for n, v in c.items()}
        for k, c in selection.curves(exp, method, key).items()
    }


def theory(exp):
    return {(c["target"], c["arch"]): r for c, r in store.results(exp, "theory")}


def curve_stats(curve):
    """(n, median over seeds, bars spanning the seeds' min..max) with the bars
    as a (2, len(n)) array for ``errorbar(yerr=...)``: never reaching zero,
    they draw on log axes."""
    ns = np.array(sorted(curve))
    per = [np.asarray(curve[n], float) for n in ns]
    m = np.array([np.median(p) for p in per])
    bars = np.array([[mi - p.min(), p.max() - mi] for mi, p in zip(m, per)]).T
    return ns, m, bars


def n_star_with_ci(curve, eps=EPS):
    """n*(eps) of the median seed on a fixed n grid (each seed's crossing,
    censoring explicit), with the order-statistic CI of ``scaling``."""
    ns = np.array(sorted(curve))
    m = min(len(curve[n]) for n in ns)
    per_seed = scaling.n_star_per_seed(ns, np.array([curve[n][:m] for n in ns]).T, eps)
    med = scaling.median_n_star(per_seed)
    return {
        "n_star": med["value"],
        "censored": med["status"] == "right",
        "left_censored": med["status"] == "left",
        "lo": med["lo"],
        "hi": med["hi"],
        "seeds": m,
    }


def depth_of(spec):
    return selection.depth_of(spec)


def node_of(spec):
    return selection.param_of(spec, "node")
