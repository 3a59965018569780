"""Empirical sample complexity n*(eps) of a predictor (NTK regression or a
trained network) by the adaptive search of :mod:`ntkgap.runs.search`, run
through stored cells: every (seed, n) evaluation is an ordinary ``ntk`` or
``net`` cell of one seed, stored like any other, so a search killed in the
middle loses no finished evaluation and a rerun continues where it stopped.

All the trainings of a search step, seeds at different n included, run as
one call (``ntkgap.nets.training.train_runs``: one compiled program, each run's
data padded to the step's largest n and masked). A run's numbers are those
of the run alone, up to the order of sums over its rows, so each is stored
under its own one-seed ``net`` cell, as a separate run would be.

The search itself is a generator of steps (``steps``) that computes
nothing: ``drive`` runs it in one process, and the runner's Dask executor
drives many at once in the coordinating process, each step's batches
submitted to the cluster as futures. Both store the same cells.

A ``net_search`` cell may list several learning rates (``lr = [...]``): they
are compared first, on the validation split, at ``sweep_n`` samples
(default: the geometric mean of n_min and n_max, on the search grid), and
the rate with the lowest median validation error over seeds is used for the
whole search (recorded as ``lr_chosen`` with the sweep's numbers). The
rule (``choose_lr``) is also the one that picks among the rates of a
fixed-n ``net`` grid (``ntkgap.verdicts.claims.lr_choices``).

A search cell with ``target_error = "classification"`` (an rhm target) fits
one-hot labels (``target_of``) and compares the test classification error
(argmax) with eps; the learning rate is still chosen on the validation MSE.
"""

from __future__ import annotations

import math

import numpy as np

from ntkgap._infra.files import jsonable
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import registry, scaling, search
from ntkgap.targets import parse_target, rhm
from ntkgap.targets.variance import target_variance

# keys of a search cell that are not keys of its evaluation cells
SEARCH_KEYS = ("method", "eps", "seeds", "n_min", "n_max", "resolution", "sweep_n")


def target_of(cell: dict):
    """The target a cell fits: its spec parsed, read as one-hot labels
    (``rhm.OneHotLabels``) when ``target_error`` is classification.

    Args:
        cell: an ``ntk``/``net`` cell or a search cell.

    Returns:
        the parsed target.
    """
    t = parse_target(cell["target"])
    return rhm.OneHotLabels(t) if cell.get("target_error") == registry.CLASSIFICATION else t


#: the result key of an evaluation's test classification error (argmax)
CLASSIFICATION_KEY = rhm.CLASSIFICATION_RESULT


def evaluation_base(cell: dict) -> dict:
    """What every evaluation cell of a search cell shares: the cell without
    its search keys (SEARCH_KEYS). Two searches with one base share their
    evaluations (``executors.tasks`` runs them one after another).

    Args:
        cell: an ``ntk_search`` or ``net_search`` cell.

    Returns:
        dict: the cell without SEARCH_KEYS.
    """
    return {k: v for k, v in cell.items() if k not in SEARCH_KEYS}


def evaluation_cell(cell: dict, n: int, seed: int, lr=None) -> dict:
    """The one-seed ``ntk``/``net`` cell of a search cell at (n, seed).

    Args:
        cell: an ``ntk_search`` or ``net_search`` cell.
        n: the sample size.
        seed: the seed.
        lr: a learning rate for a ``net`` cell (None: the cell's own).

    Returns:
        dict: the cell without its search keys, with ``method`` ``ntk`` (and
        ``n``, ``seed``) or ``net`` (and ``n``, ``seeds`` = [seed], ``lr``).
    """
    base = evaluation_base(cell)
    if cell["method"] == "ntk_search":
        return dict(base, method="ntk", n=int(n), seed=int(seed))
    out = dict(base, method="net", n=int(n), seeds=[int(seed)])
    if lr is not None:
        out["lr"] = lr
    return out


def _evaluate(cell, load, requests):
    """Generator of one step: {(seed, n): result} for each request (pairs, lr),
    from the store or computed.

    Yields the missing evaluations once, as batches: a network request's
    missing evaluations are one batch (one program trains them all, whatever
    their n), a kernel evaluation is a batch of its own. Receives each
    batch's results, in order. Yields nothing when all are stored."""
    outs, todo = [], []
    for pairs, lr in requests:
        out = {}
        missing = []
        for seed, n in pairs:
            sub = evaluation_cell(cell, n, seed, lr)
            r = load(sub)
            if r is None:
                missing.append((out, (seed, n), sub))
            else:
                out[(seed, n)] = r
        outs.append(out)
        if cell["method"] == "net_search":
            todo.append(missing)
        else:
            todo += [[m] for m in missing]
    todo = [b for b in todo if b]
    if todo:
        results = yield [[sub for _, _, sub in b] for b in todo]
        for batch, rs in zip(todo, results):
            for (out, pair, _), r in zip(batch, rs):
                out[pair] = r
    return outs


def _error(r, cell: dict) -> float:
    """The error a search compares with eps: the test MSE (relative), or the
    test classification error for a classification search."""
    key = CLASSIFICATION_KEY if cell.get("target_error") == registry.CLASSIFICATION else "test_mse"
    v = r.get(key)
    return math.nan if v is None or r.get("diverged") else float(v)


def best_val(r, i: int = 0) -> float:
    """A training result's lowest validation MSE (relative) of seed ``i``.

    Args:
        r: a ``net`` cell's result (its ``loss_curve`` rows hold one
            ``val_mse`` per seed).
        i: the seed's position in the result.

    Returns:
        float (inf when no finite validation error was recorded).
    """
    if r.get("best_val_mse"):  # the checkpoint's own score, not a thinned curve's
        return float(r["best_val_mse"][i])
    vals = [row["val_mse"][i] for row in r.get("loss_curve", []) if row.get("val_mse")]
    vals = [v for v in vals if v is not None and math.isfinite(v)]
    return min(vals) if vals else math.inf


def choose_lr(best_vals: dict):
    """The one rule that picks a learning rate on validation: the lowest
    median over seeds of each seed's best validation MSE (ties: the smaller lr).

    Args:
        best_vals: {lr: [best validation MSE of each seed]}.

    Returns:
        (the chosen lr, {lr: median best validation MSE}).
    """
    table = {lr: float(np.median(v)) for lr, v in best_vals.items()}
    return min(table, key=lambda k: (table[k], k)), table


#: how many geometric steps the lr sweep may add beyond each end of a
#: config's grid when validation keeps choosing that end (bounded, so a
#: runaway rate stops; a choice still at an edge is reported as ``edge``)
LR_EDGE_STEPS = 2


def _next_rates(rates: list, best) -> list:
    """The rate one geometric step beyond the grid end that ``best`` sits on
    (the grid's own ratio at that end), or [] when ``best`` is interior."""
    lo, hi = min(rates), max(rates)
    ordered = sorted(rates)
    if best == hi and len(ordered) > 1:
        return [hi * ordered[-1] / ordered[-2]]
    if best == lo and len(ordered) > 1:
        return [lo * ordered[0] / ordered[1]]
    return []


def lr_sweep(cell, load):
    """Generator: pick the learning rate on the validation split (see module
    doc) for a ``net_search`` cell, whose ``net`` evaluations it yields;
    every rate's trainings are one step. When the choice lands on an end
    of the grid, the grid grows one geometric step on that side and the new
    rate is trained too, at most ``LR_EDGE_STEPS`` times per side, so the
    chosen rate is interior or the sweep says it is still at an ``edge``.

    Args:
        cell: a filled ``net_search`` cell with a list of rates (``lr``).
        load: ``load(evaluation cell) -> stored result or None``.

    Returns:
        a generator (the steps' protocol, see ``steps``); its value is
        (the chosen rate, the sweep's record: ``n``, ``median_best_val_mse``,
        ``extended``, ``edge``).
    """
    grid = search.geometric_grid(cell["n_min"], cell["n_max"], cell["resolution"])
    n0 = cell.get("sweep_n") or grid[len(grid) // 2]
    pairs = [(s, n0) for s in cell["seeds"]]
    rates = list(cell["lr"])
    res = yield from _evaluate(cell, load, [(pairs, lr) for lr in rates])
    vals = {lr: [best_val(r) for r in out.values()] for lr, out in zip(rates, res)}
    best, table = choose_lr(vals)
    added = []
    while (more := _next_rates(rates, best)) and len(added) < 2 * LR_EDGE_STEPS:
        side = "upper" if more[0] > max(rates) else "lower"
        if sum(1 for _, sd in added if sd == side) >= LR_EDGE_STEPS:
            break
        (out,) = yield from _evaluate(cell, load, [(pairs, more[0])])
        vals[more[0]] = [best_val(r) for r in out.values()]
        rates.append(more[0])
        added.append((more[0], side))
        best, table = choose_lr(vals)
    edge = {max(rates): "upper", min(rates): "lower"}.get(best) if len(rates) > 1 else None
    return best, {
        "n": int(n0),
        "median_best_val_mse": {repr(k): v for k, v in sorted(table.items())},
        "extended": [r for r, _ in added],
        "edge": edge,
    }


def steps(cell: dict, load):
    """The search of an ``ntk_search``/``net_search`` cell as a generator of
    steps, so that whoever drives it decides where evaluations run (in this
    process, or as futures on a cluster, several searches at once).

    Each ``next``/``send`` yields one step's missing evaluations as a list
    of batches, each a list of evaluation cells computed together (one
    ``run_cells`` call: a network step is one batch, a kernel evaluation a
    batch of its own, the learning-rate sweep one batch per rate); the
    driver sends back each batch's results, a list per batch in order, and
    stores them. Evaluations already stored are read with ``load`` and never
    yielded, so a search rebuilt after a crash continues where it stopped.
    The generator returns the search's result (``StopIteration.value``).

    Args:
        cell: the search cell (target, arch, eps, seeds, n_min, n_max,
            resolution, and the evaluation method's own keys).
        load: ``load(evaluation cell) -> stored result or None``.

    Returns:
        a generator; its return value is as ``drive`` describes.
    """
    lr = None
    sweep = None
    cell = registry.fill(cell)  # the declared defaults, never restated here
    if cell["method"] == "net_search" and isinstance(cell.get("lr"), list):
        lr, sweep = yield from lr_sweep(cell, load)
    if cell["method"] == "ntk_search":
        return _ntk_nested(cell)  # in this process, nothing yielded: see its doc
    state = search.new_search(
        cell["seeds"],
        cell["eps"],
        cell["n_min"],
        cell["n_max"],
        factor=cell["resolution"],
    )
    seen = []
    while not search.finished(state):
        pairs = search.propose(state)
        (res,) = yield from _evaluate(cell, load, [(pairs, lr)])
        state = search.update(state, {k: _error(r, cell) for k, r in res.items()})
        seen += [_seen(s, n, r, cell) for (s, n), r in res.items()]
    out = _result(cell, state, seen)
    if sweep is not None:
        out.update(lr_chosen=lr, lr_sweep=sweep)
    return out


def _seen(seed, n, r, cell) -> dict:
    """One evaluation as a search records it (both errors for a classification search)."""
    out = {"seed": seed, "n": n, "test_mse": _error(r, {}), "overlap": r.get("overlap")}
    if cell.get("target_error") == registry.CLASSIFICATION:
        out[CLASSIFICATION_KEY] = _error(r, cell)
    return out


def _ntk_nested(cell) -> dict:
    """An ``ntk_search`` on nested learning curves, every seed in this
    process, one after another (``nested_seed``, then ``nested_result``).

    The runner instead runs each seed as a task of its own
    (:mod:`ntkgap.runs.kernel_search`); the numbers are the same.
    """
    cell = registry.fill(cell)  # callers may pass a raw cell
    return nested_result(cell, [nested_seed(cell, s) for s in cell["seeds"]])


def nested_seed(cell: dict, seed: int, stored: dict | None = None, publish=None) -> dict:
    """One seed of an ``ntk_search`` on its nested learning curve
    (``search.run_nested`` for that seed): one
    :class:`~ntkgap.kernels.ntk_predictor.NestedCurve` grown to the largest n
    the seed's search asks for, every n read from its factor.

    A seed's search depends on its own evaluations alone, so each seed may
    run anywhere (its curve stays where it runs). With ``stored`` (a record
    this function published or returned before), the stored evaluations are
    read, not computed, while the search asks for them, and the curve is
    first grown at the first n not stored: the seed resumes from its last
    stored n. Its later evaluations are then solved from a factor made at
    that n rather than grown to it, so they agree with an uninterrupted
    run's to rounding (an uninterrupted run is bit-identical to itself).

    Args:
        cell: a filled ``ntk_search`` cell.
        seed: one of its seeds.
        stored: the seed's earlier record (``evaluations``, ``factorizations``,
            ``replays``), or None.
        publish: ``publish(record)`` after each evaluation computed (None: none).

    Returns:
        the seed's record: ``seed``, ``evaluations`` ({str(n): the ``ntk``
        evaluation's result}, in the order computed), ``factorizations``
        (from scratch), ``replays`` and ``done`` (True).
    """
    from ntkgap.kernels import krr, ntk_predictor  # import cost: JAX, scipy

    arch, target = parse_arch(cell["arch"]), target_of(cell)
    variance = target_variance(target)
    stored = stored or {}
    old = {int(n): r for n, r in stored.get("evaluations", {}).items()}
    records: dict = {}
    made = [None, int(stored.get("factorizations", 0))]  # the curve, factorizations before it

    def record(done=False):
        fac = made[1] + (made[0].factorizations if made[0] is not None else 0)
        return {"seed": int(seed), "evaluations": {str(n): r for n, r in records.items()},
                "factorizations": fac, "replays": replays[0], "done": done}  # fmt: skip

    def evaluate(_seed, n):
        if n in old:
            r = old[n]
        else:
            if made[0] is None:  # a workspace of its own: the seed's curve may run anywhere
                made[0] = ntk_predictor.NestedCurve(
                    arch, target, seed=seed, n_test=cell["n_test"], ridge=cell["ridge"],
                    variance=variance, workspace=krr.Workspace(capacity=cell["n_max"]),
                )  # fmt: skip
            gen = made[0].generation
            r = jsonable(made[0].at(n))
            if made[0].generation != gen:
                records.clear()
                old.clear()  # read from an earlier factor: void too
                replays[0] += 1
                raise search.Restart
        records[n] = r
        if publish is not None and n not in old:
            publish(record())
        return _error(r, cell)

    replays = [int(stored.get("replays", 0))]
    search.run_nested(evaluate, [seed], cell["eps"], cell["n_min"], cell["n_max"],
                      factor=cell["resolution"])  # fmt: skip
    return record(done=True)


def nested_result(cell: dict, seeds: list[dict]) -> dict:
    """An ``ntk_search``'s result from its seeds' records (``nested_seed``).

    Args:
        cell: the filled ``ntk_search`` cell.
        seeds: one record per seed, in the cell's seed order.

    Returns:
        ``_result``'s dict with ``factorizations`` (from scratch, all seeds;
        tuned: one per ridge value and seed), ``factor_n`` (each seed's
        largest n factored), ``replays``, ``nested: True`` and the solver's
        facts (``_solver_facts``).
    """
    state = search.new_search(cell["seeds"], cell["eps"], cell["n_min"], cell["n_max"],
                              factor=cell["resolution"], growth=search.NESTED_GROWTH)  # fmt: skip
    records = {rec["seed"]: {int(n): r for n, r in rec["evaluations"].items()} for rec in seeds}
    state = search.update(state, {(s, n): _error(r, cell) for s, rs in records.items()
                                  for n, r in rs.items()})  # fmt: skip
    seen = [_seen(s, n, r, cell) for s, rs in records.items() for n, r in rs.items()]
    out = _result(cell, state, seen)
    out.update(
        **_solver_facts([r for rs in records.values() for r in rs.values()]),
        factorizations=sum(rec["factorizations"] for rec in seeds),
        factor_n={str(s): max(rs) for s, rs in records.items() if rs},
        replays=sum(rec["replays"] for rec in seeds),
        nested=True,
    )
    return out


def _solver_facts(results) -> dict:
    """Which kernel solver a nested search's evaluations ran: ``solver``
    ("walsh-cg" where any did, else "walsh-direct" where any did, else
    "cholesky"), ``solver_evaluations`` (count per solver) and, for the Walsh
    solvers, ``cg_iterations`` (all solves) and ``cg_residual`` (the largest
    final relative residual)."""
    names = [r.get("solver", "cholesky") for r in results]
    cg = [r for r in results if r.get("solver") in ("walsh-cg", "walsh-direct")]
    top = [k for k in ("walsh-cg", "walsh-direct") if k in names]
    out = {
        "solver": top[0] if top else "cholesky",
        "solver_evaluations": {k: names.count(k) for k in sorted(set(names))},
    }
    if cg:
        out["cg_iterations"] = int(sum(r["cg_iterations"] for r in cg))
        out["cg_residual"] = float(max(r["cg_residual"] for r in cg))
    return out


def _result(cell, state, seen) -> dict:
    """A search's result from its final state and its evaluations."""
    per_seed = search.result(state)
    med = scaling.median_censored(per_seed)
    median = {
        "n_star": med["value"]
        if med["status"] == "resolved"
        else (med["bound_lo"] if med["status"] == "right" else med["bound_hi"]),
        "censored": None if med["status"] == "resolved" else med["status"],
        "lo": med["lo"],
        "hi": med["hi"],
        "method": med["method"],
        "reason": med["reason"],
        "seeds": med["seeds"],
    }
    overlaps = [e["overlap"] for e in seen if e["overlap"] is not None]
    return {
        "eps": cell["eps"],
        "per_seed": [
            dict(r, censored=None if r["status"] == search.RESOLVED else r["status"])
            for r in per_seed
        ],
        "median": median,
        "evaluations": sorted(seen, key=lambda e: (e["seed"], e["n"])),
        "trainings": len(seen),
        "overlap_max": max(overlaps) if overlaps else None,
    }


def drive(gen, save, run_cells) -> dict:
    """Drive a search's step generator in this process: one batch after
    another, each batch's results saved as soon as it is computed.

    Args:
        gen: a generator from ``steps`` (not started).
        save: ``save(evaluation cell, result)``, the store's.
        run_cells: computes a list of evaluation cells into their results,
            in order (the runner's ``run_cells``: one-seed ``net`` or
            ``after_kernel`` cells of different n train as one program).

    Returns:
        dict with ``per_seed`` (each seed's bracket, n* and censoring),
        ``median`` (n* of the median seed with its order-statistic CI, from
        ``scaling.median_censored``), ``evaluations`` (every (seed, n, error,
        overlap)), ``trainings``, ``overlap_max``, and ``lr_chosen`` and
        ``lr_sweep`` for networks.
    """
    try:
        batches = next(gen)
        while True:
            results = []
            for batch in batches:
                rs = run_cells(batch)
                for sub, r in zip(batch, rs):
                    save(sub, r)
                results.append(rs)
            batches = gen.send(results)
    except StopIteration as stop:
        return stop.value
