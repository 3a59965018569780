"""The sample size a search cell is expected to reach before it runs, and the
evaluations it will make there: what :mod:`ntkgap.runs.cost` prices a search
by (a search resolved at n* ~ 600 under a cap of 16,384 costs what its
evaluations up to ~600 cost, not what the cap would).

Where the n comes from (:func:`n_reach`), in turn:

- a stored sibling: a stored search of the same method, target and arch (at
  other seeds, eps or cap); each of its seeds reaches where its evaluated
  errors first get to the cell's eps (log-log interpolated between the
  evaluations either side: its own n* at its own eps), a seed that never
  got there the cell's n_max (expected to censor); the median over seeds;
- the theory: eigenlearning's n*(eps) of the cell's kernel on its target
  (``ntkgap.kernels.theory``; for a network search the NTK's n* is the
  proxy), n_max where the theory's n* lies beyond the cap;
- otherwise n_max (nothing says where the search stops: it may censor).

:func:`evaluated_ns` replays the search itself (``ntkgap.runs.search``) on a
planted learning curve crossing eps at that n, so the evaluations priced
are the ones the search would make: its geometric bracket from n_min and
its bisection to the cell's resolution.
"""

from __future__ import annotations

import functools
import math
import statistics

from ntkgap.errors import UsageError
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import registry, search
from ntkgap.targets import parse_target

#: the keys a sibling search may differ in (a search at other seeds, eps or cap)
SIBLING_FREE = ("seeds", "eps", "n_max", "n_min")


def _error(ev: dict) -> float | None:
    """An evaluation's error (the classification error where it has one)."""
    for key in ("error", "test_error", "test_mse"):
        if isinstance(ev.get(key), (int, float)):
            return float(ev[key])
    return None


def seeds_reached(rec: dict, eps=None, n_max: int | None = None) -> list[float]:
    """Per seed, the n a stored search reached (or would reach) at ``eps``.

    Args:
        rec: a stored search record (``cell``, ``result`` with ``evaluations``).
        eps: the error level (default the record's own eps); a non-numeric eps
            (e.g. the RHM's ``pstar``) reads the seeds' own n*.
        n_max: what a seed that never got to eps counts (default the stored cap).

    Returns:
        list of floats, one per seed with evaluations.
    """
    cell, res = rec["cell"], rec["result"]
    eps = cell["eps"] if eps is None else eps
    cap = n_max or cell["n_max"]
    if not isinstance(eps, (int, float)) or isinstance(eps, bool):
        return [
            float(s["n_star"]) if s.get("n_star") is not None else float(cap)
            for s in res.get("per_seed", [])
        ]
    by_seed: dict = {}
    for ev in res.get("evaluations", []):
        err = _error(ev)
        if err is not None:
            by_seed.setdefault(ev["seed"], []).append((ev["n"], err))
    return [_crossing(sorted(evs), eps, cap) for evs in by_seed.values()]


def _crossing(evs, eps, cap) -> float:
    """Where a seed's error curve ``[(n, error)]`` (sorted by n) first gets
    to eps: log-log interpolated between the last evaluation above it and
    the first at or below; ``cap`` when none is."""
    below = [i for i, (_, err) in enumerate(evs) if err <= eps]
    if not below:
        return float(cap)
    j = below[0]
    above = [(n, e) for n, e in evs[:j] if e > eps and e > 0]
    n1, e1 = evs[j]
    if not above or e1 <= 0:
        return float(n1)
    n0, e0 = above[-1]
    t = math.log(e0 / eps) / math.log(e0 / e1)
    return float(n0 * (n1 / n0) ** t)


def stored_reach(rec: dict) -> float:
    """The median n a stored search's seeds reached at its own eps.

    Args:
        rec: a stored search record.

    Returns:
        float (its n_max when it holds no evaluations).
    """
    got = seeds_reached(rec)
    return float(statistics.median(got)) if got else float(rec["cell"]["n_max"])


def _sibling(cell: dict, records: list[dict]) -> dict | None:
    """The stored search most like ``cell`` that differs at most in
    ``SIBLING_FREE`` plus other settings (the most equal settings win)."""
    same = [
        r
        for r in records
        if r["cell"]["method"] == cell["method"]
        and r["cell"].get("target") == cell.get("target")
        and r["cell"].get("arch") == cell.get("arch")
        and r["result"].get("evaluations")
    ]
    if not same:
        return None

    def agree(r):
        c = r["cell"]
        return sum(c.get(k) == v for k, v in cell.items() if k not in SIBLING_FREE)

    return max(same, key=agree)


@functools.lru_cache(maxsize=1024)
def theory_nstar(arch: str, target: str, eps: float) -> float | None:
    """Eigenlearning's n*(eps) of ``arch``'s NTK on ``target``.

    Args:
        arch, target: spec strings.
        eps: the relative test MSE.

    Returns:
        float n*, ``inf`` when it is not reached by 1e12, or None where the
        theory does not apply (no exact spectrum for the pair).

    References:
        Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework",
        2021 (arXiv 2110.03922).
    """
    from ntkgap.kernels import theory  # here: JAX loads only when a search needs it

    try:
        a, t = parse_arch(arch), parse_target(target)
        sp, _ = theory.spectrum(a, t)
        r = theory.nstar(sp, eps, a, t.domain)
    except (UsageError, ValueError, KeyError, NotImplementedError):
        return None
    return float("inf") if r["n_star"] is None else float(r["n_star"])


def n_reach(cell: dict, records: list[dict]) -> tuple[float, str]:
    """The n a search cell is expected to reach (see the module doc).

    Args:
        cell: a filled search cell.
        records: stored search records (any experiment) to take a sibling from.

    Returns:
        (n within [n_min, n_max], source): ``sibling``, ``theory``,
        ``theory (censors)`` or ``n_max``.
    """
    lo, hi = cell["n_min"], cell["n_max"]
    sib = _sibling(cell, records)
    if sib is not None:
        got = seeds_reached(sib, cell["eps"], hi)
        if got:
            return float(min(hi, max(lo, statistics.median(got)))), "sibling"
    eps = cell["eps"]
    if isinstance(eps, (int, float)) and "arch" in cell and "target" in cell:
        n = theory_nstar(cell["arch"], cell["target"], float(eps))
        if n is not None:
            return (float(max(lo, n)), "theory") if n <= hi else (float(hi), "theory (censors)")
    return float(hi), "n_max"


def evaluated_ns(cell: dict, reach: float) -> list[int]:
    """The n's one seed of a search evaluates when its error crosses eps at
    ``reach`` (a planted curve, error = eps x reach / n, searched as the
    cell's method searches: nested kernel searches grow by
    ``search.NESTED_GROWTH``).

    Args:
        cell: a filled search cell.
        reach: the n where the planted curve crosses eps (n_max or more: it
            censors).

    Returns:
        list of int, in the order evaluated.
    """
    cell = registry.fill(cell)
    return list(_evaluated(cell["n_min"], cell["n_max"], cell["resolution"],
                           cell["method"] == "ntk_search", float(reach)))  # fmt: skip


@functools.lru_cache(maxsize=4096)
def _evaluated(n_min, n_max, resolution, nested, reach):
    seen = []

    def curve(batch):
        seen.extend(n for _, n in batch)
        return [0.1 * reach / n for _, n in batch]

    settings = {"growth": search.NESTED_GROWTH} if nested else {}
    search.run_search(curve, [0], 0.1, n_min, n_max, factor=resolution, **settings)
    return tuple(seen)
