"""Derived numbers shared by the figure scripts and the report: read stored
results only (never compute cells), group them, fit them."""

from __future__ import annotations

import os
import sys
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ntkgap import runner, scaling  # noqa: E402

EPS = 0.1


def curves(exp, method, key=("target", "arch")):
    """{(target, arch[, width, alpha]): {n: [per-seed relative test MSE]}}."""
    out = defaultdict(lambda: defaultdict(list))
    for cell, res in runner.results(exp, method):
        k = tuple(cell.get(x) for x in key)
        vals = res.get("test_mse_per_seed", [res["test_mse"]])
        out[k][cell["n"]].extend(vals)
    return {k: dict(sorted(v.items())) for k, v in out.items()}


def theory(exp):
    return {(c["target"], c["arch"]): r for c, r in runner.results(exp, "theory")}


def curve_stats(curve):
    """(n, mean over seeds, error bars) with the bars spanning the seeds'
    min..max as a (2, len(n)) array for ``errorbar(yerr=...)``: unlike
    mean +- std it never reaches zero, so it draws on log axes."""
    ns = np.array(sorted(curve))
    per = [np.asarray(curve[n], float) for n in ns]
    m = np.array([p.mean() for p in per])
    bars = np.array([[mi - p.min(), p.max() - mi] for mi, p in zip(m, per)]).T
    return ns, m, bars


def n_star_with_ci(curve, eps=EPS, seed=0):
    """n*(eps) of the seed-mean curve, with a bootstrap CI over seeds."""
    ns = np.array(sorted(curve))
    m = min(len(curve[n]) for n in ns)
    mat = np.array([curve[n][:m] for n in ns]).T  # seeds x n
    point = scaling.n_star(ns, mat.mean(0), eps)

    def stat(s):
        r = scaling.n_star(ns, s.mean(0), eps)
        return r["n_star"] if not r["censored"] else np.nan

    ci = scaling.bootstrap(stat, mat, seed=seed, B=300)
    return {**point, "lo": ci["lo"], "hi": ci["hi"], "seeds": m}


def depth_of(spec):
    for part in spec.split(":", 1)[-1].split(","):
        if part.startswith("L="):
            return int(part[2:])
    return None


def node_of(spec):
    for part in spec.split(":", 1)[-1].split(","):
        if part.startswith("node="):
            return part[5:]
    return None
