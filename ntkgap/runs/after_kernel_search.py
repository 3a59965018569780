"""n*(eps) of the after-kernel predictor, of the initial empirical NTK and of
the trained net itself, all from the same trainings (E11).

An ``after_kernel_search`` cell is a ``net_search`` cell plus ``kernel``
(which predictor's n* it searches: ``after``, ``init`` or ``net``) and
``ridge`` (the kernel regressions'). Its evaluation at (seed, n) is a
one-seed ``after_kernel`` cell: the net trained at n as the ``net_search``
evaluation with the same keys trains it (same split, seed, initialisation,
batches and checkpoint rule; its rows padded to a shape of its own, so
rounding, which training amplifies, can differ from that evaluation's), then
kernel regression with
its initial and final empirical NTKs on that net's training points. The
evaluation cells do not depend on ``kernel``, so the three searches of one
configuration share every evaluation they both ask for (stored once; the
runner runs them one after another in one task, ``executors.tasks``), and
``kernel = "net"`` gives the net's n* from the very trainings whose kernels
the other two score.

The search is :mod:`ntkgap.runs.search`'s adaptive search, the learning
rate (a list) is chosen by the net_search's own sweep
(``sample_complexity.lr_sweep``: validation at ``sweep_n``, the grid grown
at an edge) on the net_search's own ``net`` evaluation cells, trained
without kernels (the sweep needs only their validation errors), and the
result has the form of every other search (``sample_complexity``'s:
``median``, ``per_seed``, ``evaluations``), plus ``kernel``.
"""

from __future__ import annotations

import math

from ntkgap.errors import UsageError
from ntkgap.runs import registry, sample_complexity, search

#: the error each ``kernel`` choice searches on, a key of an after_kernel result
ERROR_KEY = {"after": "after_kernel_test_mse", "init": "init_kernel_test_mse", "net": "test_mse"}


def evaluation_cell(cell: dict, n: int, seed: int, lr=None) -> dict:
    """The one-seed ``after_kernel`` cell of a search cell at (n, seed).

    Args:
        cell: an ``after_kernel_search`` cell (filled).
        n: the pool size.
        seed: the seed.
        lr: a learning rate (None: the cell's own).

    Returns:
        dict: the matching ``net_search``'s evaluation cell with
        ``method = "after_kernel"`` and the kernels' ``ridge``.
    """
    out = sample_complexity.evaluation_cell(_net_search(cell), n, seed, lr)
    return dict(out, method="after_kernel", ridge=cell["ridge"])


def evaluation_base(cell: dict) -> dict:
    """The base its ``net_search`` has (``sample_complexity.evaluation_base``):
    the three searches of one configuration (``kernel``), whatever their
    ``ridge``, and that net_search share their trainings (the rate sweep's
    ``net`` cells, and the after_kernel cells of one ridge).

    Args:
        cell: an ``after_kernel_search`` cell.

    Returns:
        dict: its net_search's evaluation base.
    """
    return sample_complexity.evaluation_base(_net_search(cell))


def _net_search(cell: dict) -> dict:
    """The ``net_search`` cell whose trainings an after_kernel_search scores."""
    return dict({k: v for k, v in cell.items() if k not in ("kernel", "ridge")},
                method="net_search")  # fmt: skip


def _error(r: dict, key: str) -> float:
    v = r.get(key)
    return math.nan if v is None or r.get("diverged") else float(v)


def _evaluate(cell, load, pairs, lr):
    """Generator: {(seed, n): result}; the missing evaluations are one batch."""
    out, missing = {}, []
    for seed, n in pairs:
        sub = evaluation_cell(cell, n, seed, lr)
        r = load(sub)
        if r is None:
            missing.append(((seed, n), sub))
        else:
            out[(seed, n)] = r
    if missing:
        (results,) = yield [[sub for _, sub in missing]]
        out.update({pair: r for (pair, _), r in zip(missing, results)})
    return out


def steps(cell: dict, load):
    """The search of an ``after_kernel_search`` cell as a generator of steps
    (the protocol of ``sample_complexity.steps``: yields lists of batches of
    evaluation cells, receives their results, returns the result).

    Args:
        cell: the search cell.
        load: ``load(evaluation cell) -> stored result or None``.

    Returns:
        a generator; its value is ``sample_complexity.drive``'s result form
        with ``kernel`` (and ``lr_chosen``, ``lr_sweep`` for a list of rates).

    References:
        Long, "Properties of the After Kernel", 2021.
    """
    cell = registry.fill(cell)
    if cell["kernel"] not in ERROR_KEY:
        raise UsageError(f"kernel={cell['kernel']!r} (allowed: {', '.join(ERROR_KEY)})")
    lr, sweep = None, None
    if isinstance(cell.get("lr"), list):  # the net_search's sweep, on its own net cells
        lr, sweep = yield from sample_complexity.lr_sweep(_net_search(cell), load)
    state = search.new_search(
        cell["seeds"], cell["eps"], cell["n_min"], cell["n_max"], factor=cell["resolution"]
    )
    seen, key = [], ERROR_KEY[cell["kernel"]]
    while not search.finished(state):
        res = yield from _evaluate(cell, load, search.propose(state), lr)
        state = search.update(state, {k: _error(r, key) for k, r in res.items()})
        seen += [
            {"seed": s, "n": n, "test_mse": _error(r, key), "overlap": r.get("overlap")}
            for (s, n), r in res.items()
        ]
    out = sample_complexity._result(cell, state, seen)  # the one search result form
    out["kernel"] = cell["kernel"]
    if sweep is not None:
        out.update(lr_chosen=lr, lr_sweep=sweep)
    return out
