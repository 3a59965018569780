"""``compare --predict``: each (depth, architecture) pair's n* predicted
before its searches (``ntkgap predict``), sealed, and scored against the
searches made after it; and each prediction in one line for the verb and the
report. The comparison's plan and run are :mod:`ntkgap.verdicts.comparison`.
"""

from __future__ import annotations

import math
import os

from ntkgap._infra import config
from ntkgap.errors import UsageError
from ntkgap.runs import store
from ntkgap.verdicts import (
    comparison_variant,
    predictions,
    seal_order,
    sealing,
    selection,
)
from ntkgap.verdicts.comparison_checks import NAME

EPS = 0.1
#: E4's net design (experiments/e4_trees.toml, quick): steps, learning rates, evaluation
E4_NET = dict(steps=1500, lr=[0.01, 0.03, 0.1], eval_every=100, patience=5)
#: the budgets: seeds, the search range, training steps and widths. ``n_max`` is
#: the least default cap; ``n_cap`` the most a cap sized from the theory's n*
#: may reach (E4's quick design searches to 16,384 at L = 5; None: not sized)
BUDGETS = {
    # hidden, for tests: finishes in seconds, verdicts inconclusive
    "tiny": dict(seeds=2, n_max=12, n_cap=None, steps=20, width=8, lr=[0.01], n_test=32,
                 batch=0, eval_every=10, patience=0, theory_n=[4, 16]),
    "quick": dict(seeds=8, n_max=256, n_cap=16384, width=32, n_test=2048, batch=128,
                  theory_n=[4, 16, 64, 256], **E4_NET),
    "paper": dict(seeds=12, n_max=1024, n_cap=32768, width=64, n_test=2048, batch=128,
                  theory_n=[4, 16, 64, 256, 1024], **E4_NET),
    "full": dict(seeds=12, n_max=4096, n_cap=65536, width=64, n_test=2048, batch=128,
                 theory_n=[4, 16, 64, 256, 1024, 4096],
                 **dict(E4_NET, steps=3000, patience=10)),
}  # fmt: skip
#: the sides of ``--n-max kernel=N,net=M``: the methods each caps
SIDES = {"kernel": ("theory", "ntk_search"), "net": ("net_search",)}
#: Q1/Q2 of E4: (id, side a, side b, statement)
CLAIMS = (
    ("Q1-tree", ("ntk_search", "tree"), ("net_search", "tree"),
     "the depth-aware NTK needs exponentially more samples in L than the trained depth-aware "
     "network (kernel vs features, same architecture)"),
    ("Q1-fc", ("ntk_search", "fc"), ("net_search", "fc"),
     "the fc NTK needs exponentially more samples in L than the trained fc network"),
    ("Q2-kernel", ("ntk_search", "fc"), ("ntk_search", "tree"),
     "the fc NTK needs exponentially more samples than the depth-aware NTK as L grows"),
    ("Q2-net", ("net_search", "fc"), ("net_search", "tree"),
     "the trained fc net needs exponentially more samples than the trained depth-aware net"),
)  # fmt: skip
#: the reason for Q1/Q2's threshold, E4's
Q_REASON = (
    "E4's threshold: a per-level factor of 1.5 exceeds one search bracket per level "
    "(resolutions 1.1-1.25), so bracket error alone cannot produce it; a floor on the growth "
    "of the ratio, not a test of exponential against polynomial form"
)
SERIES = (  # (method, arch prefix, label, colour, marker)
    ("ntk_search", "tree", "depth-aware NTK (KRR)", "#1e8449", "s"),
    ("net_search", "tree", "depth-aware net (trained)", "#8e44ad", "o"),
    ("ntk_search", "fc", "fc NTK (KRR)", "#2471a3", "D"),
    ("net_search", "fc", "fc net (trained)", "#c0392b", "^"),
)
SUMMARY_KEYS = (
    "id", "claim", "predictors", "statistic", "value", "lo", "hi", "seeds", "rule", "verdict",
    "detail",
)  # fmt: skip


def _n_text(lo: float, hi: float) -> str:
    """A measured n* interval in words: a value, a bracket or a bound."""
    if hi == math.inf:
        return f"> {lo:.3g}"
    if lo == 0.0:
        return f"<= {hi:.3g}"
    return f"{lo:.3g}" if lo == hi else f"[{lo:.3g}, {hi:.3g}]"


#: the sealed score's ``coverage`` in ``compare --predict``'s words
_COVERAGE_TEXT = {
    "covered": "covered by the interval",
    "missed": "outside the interval",
    "undetermined": "undetermined: a bound across the interval's end",
}


def _coverage_text(sc: dict) -> str:
    """A score's coverage in words (a score stored before ``coverage`` existed
    says only whether the interval meets the measurement)."""
    if "coverage" in sc:
        return _COVERAGE_TEXT[sc["coverage"]]
    return "consistent with the interval" if sc["covered"] else "outside the interval"


def prediction_text(item: dict) -> str:
    """One prediction in one line, with its score where it has one (the
    verb and the report print it).

    Args:
        item: an item of :func:`score_members`'s (or, dry run,
            :func:`predict_members`'s) list.

    Returns:
        str.
    """
    p, sc = item["prediction"], item.get("score")
    lo, hi = p["net_interval"]
    k = "absent (no exact spectrum)" if p["kernel_n_star"] is None else f"{p['kernel_n_star']:.3g}"
    text = (f"L={item['L']} {p['arch']}: net predicted {p['net_n_star']:.3g} [{lo:.3g}, {hi:.3g}]"
            f", kernel predicted {k}, winner predicted {p['winner'] or '-'}")  # fmt: skip
    if "score" not in item:  # a dry run: nothing measured yet
        return text
    if item.get("refused"):
        return text + "; not scored: " + item["refused"]
    if sc is None:
        return text + "; not measured"
    text += (f"; net measured {_n_text(*sc['measured'])} "
             f"({_coverage_text(sc)})")  # fmt: skip
    if "kernel_measured" in sc:
        text += f", kernel measured {_n_text(*sc['kernel_measured'])}"
        text += f", winner measured {sc['winner_measured'] or 'undecided'}"
    return text


def predict_members(cfg: dict) -> list[dict]:
    """Every (member, architecture) pair's prediction, before any search:
    the own NTK's n* from eigenlearning theory and the trained net's from
    the law fitted on the stored searches of other families in the results
    folder in force when it is called (``predictions.prediction``; the
    comparison calls it before its own ``--results`` is put in force);
    refused in one line where nothing is stored to fit on.

    Args:
        cfg: a config from :func:`plan`.

    Returns:
        list of ``{"L", "prediction", "fitted_on"}`` (the prediction
        unsealed; ``fitted_on`` the storage keys of the law's cells), in
        depth order, the depth-aware architecture first.
    """
    eps = cfg["_budget"]["eps"]
    points = predictions.collect(predictions.SOURCES, eps)  # read once for every pair
    out = []
    for spec, L in sorted(cfg["_depths"].items(), key=lambda kv: kv[1]):
        for arch in comparison_variant.compared(cfg["_tree"][spec], cfg["_budget"]["variant"]):
            pred, law = predictions.prediction(spec, arch, eps, points=points)
            out.append({"L": L, "prediction": pred, "fitted_on": law["keys"]})
    return out


def seal_members(predicted: list[dict]) -> list[dict]:
    """Seals each prediction in the results folder in force, or reads the one
    a previous run of the comparison sealed (``sealing.sealed_or_seal``).

    Args:
        predicted: :func:`predict_members`'s list.

    Returns:
        list of ``{"L", "prediction", "sealed"}`` (the prediction as sealed).
    """
    out = []
    for item in predicted:
        path, pred = sealing.sealed_or_seal(item["prediction"], item["fitted_on"])
        out.append({"L": item["L"], "prediction": pred, "sealed": path})
    return out


def score_members(sealed: list[dict], eps: float, profile: str) -> list[dict]:
    """Each sealed prediction scored against the searches run after it
    (``sealing.score_against``; None where its net search is not stored).

    Args:
        sealed: :func:`seal_members`'s list.
        eps: the error level of the searches.
        profile: the profile the comparison ran under.

    Returns:
        the list with ``score`` added to each item.
    """
    recs = {}
    for meth in ("net_search", "ntk_search"):
        for cell, res in store.results(NAME, meth, profile=profile):
            if selection.at(cell, eps):
                recs[(meth, cell["target"], cell["arch"])] = res
    folder = os.path.join(config.results_dir(), NAME)
    out = []
    for item in sealed:
        key = (item["prediction"]["target"], item["prediction"]["arch"])
        net, kern = recs.get(("net_search", *key)), recs.get(("ntk_search", *key))
        try:  # sealed before the first measured cell of its pair, and unedited
            seal_order.check_sealed_before(store.load_result(item["sealed"]), item["sealed"],
                                           folder)  # fmt: skip
        except UsageError as exc:
            out.append(dict(item, score=None, refused=str(exc)))
            continue
        scored = None if net is None else sealing.score_against(item["prediction"], net, kern)
        out.append(dict(item, score=scored))
    return out
