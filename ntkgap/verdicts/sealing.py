"""Sealed predictions: the files ``predict`` writes before a measurement,
and their score against the searches made after them.

A prediction is sealed once (``seal_prediction``: the file never
overwritten, with its hash and time, :mod:`ntkgap.verdicts.seal_order`) in
``results/predictions/<hash of (target, arch, eps)>.json``.

Scoring: a censored measurement is an interval; |log10(pred / measured)|
is then the interval of distances from the prediction to it (0 at the near
end when the prediction lies inside the bound). A prediction interval is
consistent with it when the two intersect (``covers``); E10-coverage and the
sealed score's ``coverage`` count it covered only when it lies inside the
interval, missed when the two are disjoint, and undetermined otherwise (a
censored bound or a bracket across an end: ``coverage_state``).

References:
    Dichotomy of kernels and networks on compositional targets (arXiv
    2607.06382).
"""

from __future__ import annotations

import hashlib
import json
import math
import os

from ntkgap._infra import config
from ntkgap._infra.files import atomic_write, dumps
from ntkgap.errors import UsageError
from ntkgap.runs import store
from ntkgap.verdicts import intervals, seal_order

INF = math.inf
LN10 = math.log(10.0)
#: the folder of sealed predictions inside the results folder
PREDICTIONS = "predictions"


def median_log(record: dict) -> tuple:
    """The natural-log interval of a search record's median over seeds.

    Args:
        record: a search result (``per_seed`` with status resolved/left/right).

    Returns:
        (lo, hi): a point when resolved, half-open when censored.
    """
    sets = [intervals.log_interval(s) for s in record["per_seed"]]
    return tuple(intervals.median_ci(sets, min_seeds=INF)["median"])


def prediction_path(target: str, arch: str, eps: float, root: str | None = None) -> str:
    """The sealed prediction's file: ``results/predictions/<hash>.json``.

    Args:
        target: the target spec.
        arch: the architecture spec.
        eps: the error level.
        root: the results folder (default ``config.results_dir()``).

    Returns:
        str path; the hash is of {target, arch, eps}.
    """
    key = json.dumps({"target": target, "arch": arch, "eps": eps}, sort_keys=True)
    name = hashlib.sha256(key.encode()).hexdigest()[:20] + ".json"
    return os.path.join(root or config.results_dir(), PREDICTIONS, name)


def seal_prediction(prediction: dict, fitted_on, root: str | None = None) -> str:
    """Writes a prediction once, before its measurement; never overwrites.

    Args:
        prediction: ``predict``'s dict (inputs, law, numbers).
        fitted_on: the storage keys of the results the law was fitted on.
        root: the results folder (default ``config.results_dir()``).

    Returns:
        str, the file written.
    """
    path = prediction_path(prediction["target"], prediction["arch"], prediction["eps"], root)
    if os.path.exists(path):
        raise UsageError(f"predict: {path} is sealed already; a prediction is never overwritten")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    body = {k: v for k, v in prediction.items() if k != "sealed"}
    sealed = seal_order.stamp({"prediction": body, "fitted_on": sorted(fitted_on)})
    atomic_write(path, dumps(sealed, indent=1))
    return path


def sealed_or_seal(prediction: dict, fitted_on, root: str | None = None) -> tuple[str, dict]:
    """The prediction sealed earlier for the same (target, arch, eps), else
    this one sealed now (a rerun scores what was sealed before its first
    measurement, never a refit).

    Args:
        prediction: ``prediction``'s dict.
        fitted_on: the storage keys of the results its law was fitted on.
        root: the results folder (default ``config.results_dir()``).

    Returns:
        (path, the sealed prediction).
    """
    path = prediction_path(prediction["target"], prediction["arch"], prediction["eps"], root)
    sealed = store.load_result(path) if os.path.exists(path) else None
    if sealed is None:
        return seal_prediction(prediction, fitted_on, root), prediction
    return path, sealed["prediction"]


def distance(pred: float, iv) -> tuple:
    """|log10(pred / measured)| over a measured natural-log interval.

    Args:
        pred: the predicted n* (> 0).
        iv: (lo, hi) of log measured n* (-inf / inf open).

    Returns:
        (near, far) in log10: near is 0 when pred lies inside the interval.
    """
    y, (lo, hi) = math.log(pred), iv
    near = 0.0 if lo <= y <= hi else min(abs(y - lo), abs(y - hi))
    return near / LN10, max(abs(y - lo), abs(y - hi)) / LN10


def covers(interval, iv) -> bool:
    """Whether a prediction interval is consistent with a measured interval.

    Args:
        interval: [lo, hi] natural scale.
        iv: (lo, hi) of log measured n*.

    Returns:
        bool: the two intersect (a point: it lies inside).
    """
    a, b = math.log(interval[0]), math.log(interval[1])
    return a <= iv[1] and iv[0] <= b


def coverage_state(interval, iv) -> bool | None:
    """Whether a prediction interval covers a measured n*, as E10-coverage
    counts it: a censored bound (or a bracket across an end) that overlaps
    the interval but reaches beyond it is undetermined, since the truth may
    lie on either side (``covers``, the sealed score's consistency, calls it
    consistent).

    Args:
        interval: [lo, hi] natural scale.
        iv: (lo, hi) of log measured n* (hi inf where right-censored).

    Returns:
        True inside, False disjoint, None undetermined.
    """
    a, b = math.log(interval[0]), math.log(interval[1])
    if a <= iv[0] and iv[1] <= b:
        return True
    return False if iv[1] < a or b < iv[0] else None


#: ``coverage_state``'s values in words (the sealed score and ``compare --predict``)
COVERAGE_WORDS = {True: "covered", False: "missed", None: "undetermined"}


def score_against(pred: dict, net_record: dict, kernel_record: dict | None = None) -> dict:
    """Scores a prediction against the net (and kernel) searches made after it.

    Args:
        pred: ``prediction``'s dict (``net_n_star``, ``net_interval``,
            ``kernel_n_star``, ``winner``).
        net_record: the net search's stored result (``per_seed``).
        kernel_record: the own-kernel search's stored result, or None.

    Returns:
        dict with ``measured`` (log-median interval as [lo, hi] n*),
        ``error_log10`` ([near, far] of |log10(pred / measured)|),
        ``consistent`` (the point prediction lies inside the measured
        interval), ``covered`` (the prediction interval meets it: consistent),
        ``coverage`` ("covered", "missed" or "undetermined", as E10-coverage
        counts it: ``coverage_state``) and, with
        a kernel record, ``kernel_measured``, ``kernel_error_log10`` (None
        where the theory is absent) and ``winner_measured`` (None where the
        medians' ratio interval contains 1).
    """
    iv = median_log(net_record)
    near, far = distance(pred["net_n_star"], iv)
    out = {
        "measured": [math.exp(iv[0]), math.exp(iv[1])],
        "error_log10": [near, far],
        "consistent": near == 0.0,
        "covered": covers(pred["net_interval"], iv),
        "coverage": COVERAGE_WORDS[coverage_state(pred["net_interval"], iv)],
    }
    if kernel_record is not None:
        kiv = median_log(kernel_record)
        k = pred.get("kernel_n_star")
        out["kernel_measured"] = [math.exp(kiv[0]), math.exp(kiv[1])]
        out["kernel_error_log10"] = None if k is None else list(distance(k, kiv))
        out["winner_measured"] = _winner_of(kiv, iv)
    return out


def score(
    path: str, record: dict, kernel_record: dict | None = None, folder: str | None = None
) -> dict:
    """Scores a sealed prediction against a later net search.

    Args:
        path: the sealed file (``seal_prediction``).
        record: the net search's stored result (``per_seed``).
        kernel_record: the own-kernel search's stored result, or None.
        folder: the experiment folder of the measured cells: when given, a
            prediction edited since sealing, or sealed after the first
            measured cell of its pair, is refused
            (``seal_order.check_sealed_before``).

    Returns:
        ``score_against``'s dict.
    """
    sealed = store.load_result(path)
    if sealed is None:
        raise UsageError(f"score: no sealed prediction at {path}")
    if folder is not None:
        seal_order.check_sealed_before(sealed, path, folder)
    return score_against(sealed["prediction"], record, kernel_record)


def _winner_of(kernel_iv, net_iv) -> str | None:
    """'net' / 'kernel' where the log medians' ratio interval excludes 1."""
    (klo, khi), (nlo, nhi) = kernel_iv, net_iv
    lo, hi = klo - nhi, khi - nlo
    return "net" if lo > 0 else "kernel" if hi < 0 else None
