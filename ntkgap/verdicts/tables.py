"""The report's tables of stored results beside the claims: the moments
(kurtosis, max |y|) and Walsh average degree of each depth-indexed target
family of an experiment."""

from __future__ import annotations

from ntkgap.runs import store
from ntkgap.targets import parse_target
from ntkgap.verdicts import selection

_MOMENTS: dict = {}


def target_moments(target: str) -> dict:
    """The target's moments (``target.moments()``: exact on support cubes
    up to 2^24 points, else a fixed-seed Monte Carlo estimate), computed
    once per spec and process: the one place figures and the report get a
    target's kurtosis and max |y| from.

    Args:
        target: a target spec string.

    Returns:
        dict from ``HypercubeTarget.moments`` (``kurtosis``, ``max_abs``,
        ``exact``, ...).
    """
    if target not in _MOMENTS:
        _MOMENTS[target] = parse_target(target).moments()
    return _MOMENTS[target]


def family_moments(experiment: str) -> list[dict]:
    """Per depth-indexed family and depth: kurtosis and max |y| of the
    target, and its Walsh average degree where the experiment stored a
    ``spectrum`` cell for it (None otherwise: no new transform here).

    Args:
        experiment: the experiment's name.

    Returns:
        list of dicts with ``family`` (label), ``L``, ``target``,
        ``kurtosis``, ``max_abs``, ``exact`` and ``average_degree``, in
        family then depth order.
    """
    degree = {
        cell["target"]: res.get("complexity", {}).get("average_degree")
        for cell, res in store.results(experiment, "spectrum")
    }
    rows = []
    for label, (_, targets) in selection.depth_families(experiment).items():
        for L, spec in targets.items():
            m = target_moments(spec)
            rows.append(
                {
                    "family": label,
                    "L": L,
                    "target": spec,
                    "kurtosis": m["kurtosis"],
                    "max_abs": m["max_abs"],
                    "exact": m["exact"],
                    "average_degree": degree.get(spec),
                }
            )
    return rows
