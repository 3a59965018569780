"""What cells will cost before they run, in seconds of one core, calibrated
on the cells already stored (usually the quick profile's), and the makespan
of their tasks on N workers (:func:`plan`).

Work per cell (:func:`work`): for a network, seeds x steps x (batch x
weights + a fixed per-step cost); for KRR, n^3 / 3 (Cholesky) plus the test
Gram; other methods have no work law and take their median stored time.

Calibration (:func:`calibrate`): each method's seconds per unit of work are
fitted on the stored cells: an affine law on the stored cells of the same
experiment where they have at least 3 different amounts of work, else a
rate fitted on the largest quarter of every experiment's cells of that
method (the most compute-bound). The per-step cost of a network is fitted
on the stored net cells with the steps they really ran (a plateau stops
them before the cap).

Search cells (methods ``*_search``; :func:`search_estimate`) are priced by
the n their evaluations will reach (:func:`ntkgap.runs.reach.n_reach`: a
stored sibling's crossing of the cell's eps, else eigenlearning's n*, the
cap only where that is expected to censor), the search replayed on a
planted curve crossing eps there (:func:`ntkgap.runs.reach.evaluated_ns`:
its bracket and bisection), each evaluation's work by :func:`work` (a nested
kernel search pays one factorization per seed, at its largest n; a network
search one training per evaluation, plus its learning-rate sweep):

- a kernel search whose stored twin (same method, target and arch, its
  modelled work within ``TWIN_RANGE`` of the cell's) exists is that twin's
  seconds times the ratio of modelled work (and the tuned factor where the
  ridge kind differs);
- otherwise an affine law of seconds on modelled work, fitted on the stored
  ridgeless searches of the method and arch family (else the method), its
  experiment's first, else every experiment's, each at the n it reached;
  a tuned ridge times the tuned factor: the median
  seconds ratio, tuned over ridgeless, of stored searches differing only in
  their ridge, at the stored cap nearest the cell's (1 without a pair; a
  twin of the other ridge kind takes the same factor);
- with fewer than 3 stored amounts of work, the most similar stored search
  (same experiment first; preferring tuned-ness, arch family, target, arch,
  nearest n_max) scaled by the ratio of modelled work;
- an after-kernel search with none stored: the net_search of its keys plus
  its two kernel regressions per evaluation;
- a solver with its own cost law answers first (``SEARCH_COST_HOOKS``).

A search with no stored search of its method anywhere costs its evaluations
at the n it will reach, each priced as a cell (a floor). A stored cell
costs nothing (it is not computed again) unless its record is of other code.

Uncalibrated: a method with a work law and no stored cell takes the rate of
its reference measurement in ``REFERENCES`` (this 2-core CPU machine,
``benchmarks/RESULTS.md``); with nothing stored at all every cell does. A
rough guide (within 2x on the held-out check of benchmarks/cost_check.py,
calibrated; more uncalibrated), not a
promise: it assumes this machine and cell sizes it can extrapolate to.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field

import numpy as np

from ntkgap._infra import config
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import reach, store
from ntkgap.runs.sample_complexity import evaluation_cell
from ntkgap.targets import parse_target

#: one Adam step of 8 seeds at minibatch 128 on d = 40 inputs
_STEP = dict(
    method="net", target="tree:d=40,L=3,arity=2,node=tanh", n=2000, batch=128, steps=1,
    seeds=list(range(8)),
)  # fmt: skip
#: The uncalibrated rates: per method (and arch family for a net), a cell
#: measured on this 2-core CPU machine (benchmarks/RESULTS.md) and its
#: seconds; a cell's uncalibrated seconds are its work times the reference's
#: seconds per unit of work. ntk: KRR n=7999, Gram + solve + predict; net: a
#: training step (fc:depth=2 w=64, tree:arity=2,L=4 w=32).
REFERENCES = {
    ("ntk", None): (dict(method="ntk", n=7999, n_test=2000), 2.418),
    ("net", "fc"): (dict(_STEP, arch="fc:depth=2", width=64), 0.29e-3),
    ("net", "tree"): (dict(_STEP, arch="tree:arity=2,L=4", width=32), 0.93e-3),
}
#: seconds of a cell with neither a work law nor a stored cell of its method
DEFAULT_SECONDS = 1.0


def _weights(cell: dict) -> int:
    """Multiply-adds of one example's forward pass of a net cell (a dense
    layer's weights; a tree's every node, shared or not)."""
    a, dom = parse_arch(cell["arch"]), parse_target(cell["target"]).domain
    w = cell["width"]
    if a.name == "fc":
        return dom.input_dim * w + (a.spec["depth"] - 1) * w * w + w
    arity, L = a.spec["arity"], a.spec["L"]
    c0 = dom.input_dim // dom.length if dom.name == "rhm" else 1  # channels of a leaf
    inner = sum(arity ** (L - level + 1) for level in range(2, L + 1))  # nodes x arity
    return a.leaves * c0 * w + inner * w * w + w


def work(cell: dict, step_overhead: float = 0.0) -> float | None:
    """Modelled work of a cell.

    Args:
        cell: a filled cell.
        step_overhead: the fixed cost of one training step of one run (dispatch,
            optimiser update) in units of rows x weights.

    Returns:
        for a net, seeds x steps x (rows per step x weights + ``step_overhead``),
        weights the multiply-adds of one example's forward pass; for KRR,
        n^3 / 3 (Cholesky) plus 50 n n_test (test Gram); None for other
        methods.
    """
    m = cell["method"]
    if m == "net":
        rows = int(0.8 * cell["n"])  # the training rows: a batch larger is the full set
        batch = min(cell.get("batch") or rows, rows)
        steps = len(cell["seeds"]) * cell["steps"]
        return steps * (batch * _weights(cell) + step_overhead)
    if m == "ntk":
        return cell["n"] ** 3 / 3 + 50 * cell["n"] * cell.get("n_test", 2000)
    return None


def stored_records(root: str) -> dict[str, list[dict]]:
    """The stored cells of a results folder, failed ones included (their time
    was spent).

    Args:
        root: a results folder (``root/<experiment>/<key>.json``).

    Returns:
        experiment name -> list of stored records (``cell``, ``result``) whose
        result has ``cell_seconds``; empty when the folder is absent.
    """
    out = {}
    for path in glob.glob(os.path.join(root, "*", "*.json")):
        if os.path.basename(path).startswith("."):
            continue
        rec = store.load_result(path)
        if rec and "cell_seconds" in rec.get("result", {}):
            out.setdefault(os.path.basename(os.path.dirname(path)), []).append(rec)
    return out


@dataclass(frozen=True)
class Calibration:
    """The fitted constants of the model (all empty: uncalibrated).

    Attributes:
        step_overhead: a training step's fixed cost in rows x weights.
        local: (experiment, method) -> (overhead seconds, seconds per unit).
        rate: method -> seconds per unit of work, over every experiment.
        floor: method -> median stored seconds.
        ntk_power: experiment -> p of a one-seed ntk cell's time ~ n^p.
        tuned_factor: seconds of a tuned-ridge search over the same search
            ridgeless, at the largest n_max with a stored pair (1 with none).
        tuned_pairs: (n_max, that ratio) of every stored pair
            (:func:`tuned_factor_at`).
        cells: how many stored cells it was fitted on.
    """

    step_overhead: float = 0.0
    local: dict = field(default_factory=dict)
    rate: dict = field(default_factory=dict)
    floor: dict = field(default_factory=dict)
    ntk_power: dict = field(default_factory=dict)
    tuned_factor: float = 1.0
    cells: int = 0
    tuned_pairs: tuple = ()


def _seconds_points(recs, step_overhead):
    """method -> [(work, seconds per run)] of stored records (a search
    step's runs share one call: its seconds divided among them)."""
    by_m = {}
    for rec in recs:
        c, res = rec["cell"], rec["result"]
        point = (work(c, step_overhead), res["cell_seconds"] / res.get("batched_runs", 1))
        by_m.setdefault(c["method"], []).append(point)
    return by_m


def _affine(points):
    """(overhead, rate) of seconds = overhead + rate x work, both >= 0, or
    None with fewer than 3 different amounts of work."""
    if points[0][0] is None or len({w for w, _ in points}) < 3:
        return None
    w = np.array([x for x, _ in points], float)
    t = np.array([y for _, y in points], float)
    rate, overhead = np.polyfit(w, t, 1)
    if rate <= 0:  # no visible growth: the median time
        return float(np.median(t)), 0.0
    if overhead < 0:
        return 0.0, float(np.sum(w * t) / np.sum(w * w))
    return float(overhead), float(rate)


def _ntk_power(recs):
    """p of a one-seed ntk cell's seconds ~ a n^p, fitted log-log on the
    larger half of n (the Gram, not the Cholesky, may lead there), clipped
    to [1, 3]; None with too few sizes."""
    nt = [
        (r["cell"]["n"], r["result"]["cell_seconds"]) for r in recs if r["cell"]["method"] == "ntk"
    ]
    n = np.array([x for x, _ in nt], float)
    if len(set(n)) < 3:
        return None
    big = n >= np.median(n)
    if len(set(n[big])) < 2:
        return None
    t = np.array([y for _, y in nt], float)[big]
    return float(np.clip(np.polyfit(np.log(n[big]), np.log(t), 1)[0], 1, 3))


def _step_overhead(stored) -> float:
    """The fixed cost of one training step in rows x weights: seconds per run
    = a + steps x seeds x (p + q x rows x weights), least squares on the
    stored net cells with the steps they really ran; p / q (0 with fewer than
    10 such cells or a fit without both p, q > 0). Small nets are dominated
    by p, so a purely compute-bound law would overrate them."""
    x, t = [], []
    for recs in stored.values():
        for rec in recs:
            c, res = rec["cell"], rec["result"]
            if c["method"] != "net" or "steps_per_seed" not in res:
                continue
            ran = dict(c, steps=max(res["steps_per_seed"]))
            x.append((work(dict(ran, seeds=[0], steps=1)), len(c["seeds"]) * ran["steps"]))
            t.append(res["cell_seconds"] / res.get("batched_runs", 1))
    if len(t) < 10:
        return 0.0
    A = np.array([[1.0, s, s * w] for w, s in x])
    (_, p, q), *_ = np.linalg.lstsq(A, np.array(t), rcond=None)
    return float(p / q) if p > 0 and q > 0 else 0.0


def _is_search(cell: dict) -> bool:
    return cell["method"].endswith("_search")


def _tuned(cell: dict) -> bool:
    """Whether a cell's ridge is tuned (the one ridge that is not a number)."""
    return isinstance(cell.get("ridge"), str)


def _tuned_factor(stored) -> tuple:
    """(median seconds ratio, tuned over ridgeless, of the stored searches
    that differ only in their ridge at the largest n_max with such a pair,
    1.0 without a pair; every pair's (n_max, ratio))."""
    groups = {}
    for recs in stored.values():
        for r in recs:
            c = r["cell"]
            if _is_search(c) and "ridge" in c:
                rest = json.dumps({k: v for k, v in c.items() if k != "ridge"}, sort_keys=True)
                groups.setdefault(rest, {})[_tuned(c)] = r
    pairs = [
        (
            g[True]["cell"]["n_max"],
            g[True]["result"]["cell_seconds"] / g[False]["result"]["cell_seconds"],
        )
        for g in groups.values()
        if len(g) == 2 and g[False]["result"]["cell_seconds"] > 0
    ]
    if not pairs:
        return 1.0, ()
    top = max(n for n, _ in pairs)
    return float(np.median([x for n, x in pairs if n == top])), tuple(sorted(pairs))


def tuned_factor_at(cal: Calibration, n_max: int) -> float:
    """The tuned-over-ridgeless seconds ratio for a search of cap ``n_max``:
    the median over the stored pairs at the stored cap nearest it (in log):
    a tuned ridge's extra factorizations weigh less where fixed costs lead.

    Args:
        cal: a :class:`Calibration`.
        n_max: the search's cap.

    Returns:
        float (``cal.tuned_factor`` with no stored pair).
    """
    if not cal.tuned_pairs:
        return cal.tuned_factor
    near = min({n for n, _ in cal.tuned_pairs}, key=lambda n: abs(np.log(n / n_max)))
    return float(np.median([x for n, x in cal.tuned_pairs if n == near]))


def calibrate(stored: dict[str, list[dict]]) -> Calibration:
    """Fits the model on stored cells (see the module doc).

    Args:
        stored: :func:`stored_records`' dict.

    Returns:
        a :class:`Calibration` (empty when nothing is stored).
    """
    overhead = _step_overhead(stored)
    local, pts, powers = {}, {}, {}
    for exp, recs in stored.items():
        for m, p in _seconds_points(recs, overhead).items():
            pts.setdefault(m, []).extend(p)
            if (fit := _affine(p)) is not None:
                local[(exp, m)] = fit
        if (p := _ntk_power(recs)) is not None:
            powers[exp] = p
    rate, floor = {}, {}
    for m, p in pts.items():
        secs = np.array([y for _, y in p])
        floor[m] = float(np.median(secs))
        if p[0][0] is not None:
            w = np.array([x for x, _ in p], float)
            big = w >= np.quantile(w, 0.75)
            rate[m] = float(np.median(secs[big] / w[big]))
    n = sum(map(len, stored.values()))
    factor, pairs = _tuned_factor(stored)
    return Calibration(overhead, local, rate, floor, powers, factor, n, pairs)


def _reference_seconds(cell: dict) -> float:
    """A cell's uncalibrated seconds: its work at its ``REFERENCES`` rate
    (a net of another family than fc and tree takes fc's)."""
    m = cell["method"]
    family = parse_arch(cell["arch"]).name if m == "net" else None
    ref, secs = REFERENCES.get((m, family)) or REFERENCES[(m, "fc")]
    return secs * work(cell) / work(ref)


def cell_seconds(cal: Calibration, cell: dict, experiment: str | None = None) -> float:
    """Estimated seconds of a (non-search) cell.

    Args:
        cal: a :class:`Calibration`.
        cell: a filled cell.
        experiment: its experiment's name (its own affine fit when it has one).

    Returns:
        float seconds: the experiment's fit, else the method's rate, else
        (a method with a work law and nothing stored) the reference's rate,
        else the method's median stored seconds, else ``DEFAULT_SECONDS``.
    """
    m = cell["method"]
    w = work(cell, cal.step_overhead)
    if w is not None and (experiment, m) in cal.local:
        overhead, rate = cal.local[(experiment, m)]
        return overhead + rate * w
    if w is not None and m in cal.rate:
        return cal.rate[m] * w
    if w is not None:
        return _reference_seconds(cell)
    return cal.floor.get(m, DEFAULT_SECONDS)


#: hooks pricing a search from its expected n: functions ``(cell, n_reach) ->
#: seconds or None`` (None: not theirs), asked in turn before the model; a
#: solver module with its own cost law (e.g. a fast solver for one kernel
#: family) registers one with :func:`register_search_cost`
SEARCH_COST_HOOKS: list = []


def register_search_cost(hook) -> None:
    """Adds a search-cost hook (see ``SEARCH_COST_HOOKS``).

    Args:
        hook: ``hook(cell, n_reach) -> seconds or None``.

    Returns:
        None.
    """
    if hook not in SEARCH_COST_HOOKS:
        SEARCH_COST_HOOKS.append(hook)


def _search_unit(cal, cell, experiment):
    """Modelled work of one evaluation of a search (:func:`work`)."""
    return work(cell, cal.step_overhead)


def _lrs(cell):
    return cell["lr"] if isinstance(cell.get("lr"), list) else [cell.get("lr")]


def _search_work(cal, exp, cell, n_reach):
    """Modelled cost of ``cell``'s search when its seeds reach ``n_reach``:
    per seed the evaluations the search makes (``reach.evaluated_ns``), a
    nested kernel search paying its one factorization at the largest; a
    learning-rate sweep's seeds x rates at its n."""

    def one(n, lr=None):
        return _search_unit(cal, evaluation_cell(cell, int(n), 0, lr=lr), exp)

    ns = reach.evaluated_ns(cell, n_reach)
    per_seed = one(max(ns)) if cell["method"] == "ntk_search" else sum(map(one, ns))
    total = len(cell["seeds"]) * per_seed
    if cell["method"] != "ntk_search" and len(_lrs(cell)) > 1:
        n = cell.get("sweep_n") or n_reach
        total += len(cell["seeds"]) * sum(one(n, lr) for lr in _lrs(cell))
    return total


def _match(cell, candidates):
    """The stored search record most like ``cell`` (same method), or None."""
    same = [r for r in candidates if r["cell"]["method"] == cell["method"]]

    def score(r):
        c = r["cell"]
        return (
            _tuned(c) == _tuned(cell),  # a tuned ridge: a factorization per ridge value
            parse_arch(c["arch"]).name == parse_arch(cell["arch"]).name,  # an evaluation's cost
            c["target"] == cell["target"],  # where the search stops
            c["arch"] == cell["arch"],
            -abs(np.log(c["n_max"] / cell["n_max"])),
            r["result"]["cell_seconds"],  # ties: the costliest
        )

    return max(same, key=score) if same else None


def search_estimate(
    cal: Calibration, experiment: str, cell: dict, candidates: list[dict], siblings=None
) -> dict | None:
    """Estimated seconds of a search cell from the n it is expected to reach.

    Args:
        cal: a :class:`Calibration`.
        experiment: the cell's experiment name.
        cell: a filled search cell (method ``*_search``).
        candidates: stored search records to scale from.
        siblings: stored search records to read its expected n from
            (``reach.n_reach``; default ``candidates``).

    Returns:
        ``{"seconds", "n_reach", "reach_from"}`` (see the module doc), or
        None when no candidate has the cell's method.
    """
    n, src = reach.n_reach(cell, candidates if siblings is None else siblings)
    for hook in SEARCH_COST_HOOKS:
        if (secs := hook(cell, n)) is not None:
            return {"seconds": float(secs), "n_reach": n, "reach_from": src}
    q = _match(cell, candidates)
    if q is None:
        return None
    if q["cell"] == cell:
        return {"seconds": q["result"]["cell_seconds"], "n_reach": n, "reach_from": src}
    modelled_new = _search_work(cal, experiment, cell, n)
    twins = [  # near in size: a far one's seconds are mostly fixed costs, the fit knows them
        r
        for r in candidates
        if _twin(r["cell"], cell)
        and 1 / TWIN_RANGE
        <= _search_work(cal, experiment, r["cell"], reach.stored_reach(r)) / max(modelled_new, 1e-9)
        <= TWIN_RANGE
    ]
    if twins:  # the same tuned-ness first, then the nearest cap
        q = max(
            twins,
            key=lambda r: (
                _tuned(r["cell"]) == _tuned(cell),
                -abs(np.log(r["cell"]["n_max"] / cell["n_max"])),
            ),
        )
    fit = _search_fit(cal, experiment, cell, candidates, siblings or [])
    if fit is not None and not twins:
        secs = (fit[0] + fit[1] * modelled_new) * tuned_factor_at(cal, cell["n_max"]) ** _tuned(
            cell
        )
        return {"seconds": float(secs), "n_reach": n, "reach_from": src}
    modelled_stored = _search_work(cal, experiment, q["cell"], reach.stored_reach(q))
    ridge = tuned_factor_at(cal, cell["n_max"]) ** (_tuned(cell) - _tuned(q["cell"]))
    secs = q["result"]["cell_seconds"] * ridge * modelled_new / max(modelled_stored, 1e-9)
    return {"seconds": float(secs), "n_reach": n, "reach_from": src}


#: how far (a ratio of modelled work, either way) a twin is scaled from
TWIN_RANGE = 8.0


def _twin(stored: dict, cell: dict) -> bool:
    """Whether a stored kernel search is the cell's own kind (method, target,
    arch), differing at most in seeds, eps, cap or ridge (a ridge differing:
    :func:`tuned_factor_at`): scaled from it directly (its work is its
    factorizations). A network search is not: its
    trainings stop on a plateau, far from the steps and widths it may give,
    so the fit over every stored search prices it better."""
    return stored["method"] == "ntk_search" and all(
        stored.get(k) == cell.get(k) for k in ("method", "target", "arch")
    )


def _search_fit(cal, experiment, cell, candidates, others=()):
    """(overhead, seconds per unit) of ``cell``'s kind of search: an affine
    law of stored seconds on modelled work (:func:`_search_work` at the n
    each stored search reached), fitted on the ridgeless stored searches of
    its method and arch family, else of its method, among ``candidates``
    (its experiment's), else among ``others`` (every experiment's); None
    with fewer than 3 amounts of work anywhere."""
    family = parse_arch(cell["arch"]).name
    pools = []
    for recs in (candidates, others):
        same = [r for r in recs if r["cell"]["method"] == cell["method"] and not _tuned(r["cell"])]
        pools += [[r for r in same if parse_arch(r["cell"]["arch"]).name == family], same]
    for pool in pools:
        pts = [
            (_search_work(cal, experiment, r["cell"], reach.stored_reach(r)),
             r["result"]["cell_seconds"])
            for r in pool
        ]  # fmt: skip
        if pts and (fit := _affine(pts)) is not None:
            return fit
    return None


def search_seconds(
    cal: Calibration, experiment: str, cell: dict, candidates: list[dict]
) -> float | None:
    """Estimated seconds of a search cell, scaled from a stored search.

    Args:
        cal: a :class:`Calibration`.
        experiment: the cell's experiment name.
        cell: a filled search cell (method ``*_search``).
        candidates: stored search records to scale from.

    Returns:
        float seconds (:func:`search_estimate`'s), or None when no candidate
        has the cell's method.
    """
    est = search_estimate(cal, experiment, cell, candidates)
    return None if est is None else est["seconds"]


def _floor_search(cal, name, cell, siblings):
    """A search with no stored search of its method: its evaluations at the
    n it is expected to reach, each priced as a cell of its own."""
    n, src = reach.n_reach(cell, siblings)
    for hook in SEARCH_COST_HOOKS:
        if (secs := hook(cell, n)) is not None:
            return {"seconds": float(secs), "n_reach": n, "reach_from": src}
    ns = reach.evaluated_ns(cell, n)
    ns = [max(ns)] if cell["method"] == "ntk_search" else ns
    one = sum(cell_seconds(cal, evaluation_cell(cell, int(m), 0), name) for m in ns)
    return {"seconds": one * len(cell["seeds"]), "n_reach": n, "reach_from": src}


def _one_cell(cal, name, cell, own, everyone):
    """The estimate of one cell of experiment ``name`` (``seconds``, ``how``,
    for a search ``n_reach`` and ``reach_from``): ``own`` its stored records
    by key, ``everyone`` every stored search record."""
    rec = own.get(store.cell_key(cell))  # stale records are left out of own (estimate)
    if rec is not None:
        return {"seconds": 0.0, "how": "stored", "stored_seconds": rec["result"]["cell_seconds"]}
    if not _is_search(cell):
        return {"seconds": cell_seconds(cal, cell, name), "how": "model"}
    every = [r["record"] for r in everyone]
    mine = [r["record"] for r in everyone if r["experiment"] == name]
    for how, candidates in (("search", mine), ("other experiment's search", every)):
        est = search_estimate(cal, name, cell, candidates, siblings=every)
        if est is not None:
            return dict(est, how=how)
    if cell["method"] == "after_kernel_search":
        return _after_kernel_search(cal, name, cell, mine, every)
    return dict(_floor_search(cal, name, cell, every), how="floor")


def _after_kernel_search(cal, name, cell, mine, every):
    """An after-kernel search with none stored to scale: its trainings are
    those of the net_search with its keys (priced as that search, sweep
    included), plus per evaluation its two kernel regressions (the initial
    and final empirical NTKs), each priced as an ``ntk`` cell of its n."""
    net = {k: v for k, v in cell.items() if k not in ("kernel", "ridge")}
    net["method"] = "net_search"
    how, est = "net_search", search_estimate(cal, name, net, mine, siblings=every)
    if est is None:
        how = "other experiment's net_search"
        est = search_estimate(cal, name, net, every, siblings=every)
    if est is None:
        how, est = "floor", _floor_search(cal, name, net, every)
    ns = reach.evaluated_ns(cell, est["n_reach"])
    base = {k: cell[k] for k in ("target", "arch", "n_test")}
    kern = sum(cell_seconds(cal, dict(base, method="ntk", n=int(m), seed=0), name) for m in ns)
    return dict(est, seconds=est["seconds"] + 2 * len(cell["seeds"]) * kern, how=f"as {how}")


def estimate(
    cells: dict[str, list[dict]],
    root: str | None = None,
    exclude: frozenset = frozenset(),
    reuse_stale: bool = False,
) -> dict:
    """Estimated seconds of experiments' cells, calibrated on a results folder.

    Args:
        cells: experiment name -> its expanded (filled) cells
            (``ntkgap.runs.config.expand``).
        root: the results folder to calibrate on; its stored cells cost
            nothing (they are not computed again) and report their stored
            seconds (default ``config.results_dir()``; absent or empty:
            uncalibrated, the rates of ``REFERENCES``).
        exclude: cell keys whose stored records the model must not read
            (a held-out check's cells).
        reuse_stale: whether a record of other code counts as stored (by
            default it is priced as a run recomputes it; its seconds still
            calibrate the model).

    Returns:
        ``{"root", "calibrated_on" (stored cells; 0: uncalibrated),
        "seconds" (total core-seconds to compute), "experiments": {name:
        {"seconds", "stored_seconds", "searches", "own_cells" (stored cells
        of its own), "cells": [{"seconds", "how", ...}, ...] in the order
        given}}}``; ``how`` is ``stored`` (0 s; ``stored_seconds`` what it
        took), ``model``, ``search`` (scaled from its own stored search),
        ``other experiment's search`` or ``floor`` (no stored search of that
        method anywhere); a search's also ``n_reach`` and ``reach_from``
        (``reach.n_reach``).
    """
    root = root or config.results_dir()
    stored = {
        exp: [r for r in recs if store.cell_key(r["cell"]) not in exclude]
        for exp, recs in stored_records(root).items()
    }
    cal = calibrate(stored)
    searches = [
        {"experiment": exp, "record": r}
        for exp, recs in stored.items()
        for r in recs
        if _is_search(r["cell"])
    ]
    out = {}
    stale = getattr(store, "is_stale", None) if not reuse_stale else None
    for name, exp_cells in cells.items():
        own = {
            store.cell_key(r["cell"]): r
            for r in stored.get(name, [])
            if stale is None or not stale(r)  # a stale record is computed again
        }
        per = [_one_cell(cal, name, c, own, searches) for c in exp_cells]
        for p in per:
            p["seconds"] = float(p["seconds"])
        out[name] = {
            "seconds": float(sum(p["seconds"] for p in per)),
            "stored_seconds": float(sum(p.get("stored_seconds", 0.0) for p in per)),
            "searches": sum(map(_is_search, exp_cells)),
            "own_cells": len(stored.get(name, [])),
            "cells": per,
        }
    total = float(sum(e["seconds"] for e in out.values()))
    return {"root": root, "calibrated_on": cal.cells, "seconds": total, "experiments": out}
