"""How each experiment method computes a cell, and computing cells in this process.

The methods' parameters and defaults are declared in
:mod:`ntkgap.runs.registry`; each function here takes a filled cell and
returns a JSON-ready result. ``run_cell`` and ``run_cells`` are what every
executor calls, in whatever process it chose. The JAX side (networks,
kernels) is imported inside the functions that compute: it loads in the
process that computes a cell, never in a coordinating one that only
checks configs and stores results.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import numpy as np

from ntkgap._infra.files import jsonable
from ntkgap.errors import UsageError
from ntkgap.kernels import eigen, eigenlearning, theory
from ntkgap.nets import sawtooth_net, train_config
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import after_kernel_search, sample_complexity, target_files
from ntkgap.runs.registry import METHODS, fill
from ntkgap.runs.store import cell_path, fresh_result, save
from ntkgap.spectral import complexity
from ntkgap.targets import parse_target, spectra
from ntkgap.targets.domains import Circle, parse_domain

#: method name -> the function computing a filled cell (``fn(cell)``, or
#: ``fn(cell, experiment, results)`` for methods that store cells)
COMPUTE: dict[str, Callable] = {}


def computes(name: str):
    """Decorator: ``fn`` computes the cells of declared method ``name``.

    Args:
        name: a method of ``registry.METHODS``.

    Returns:
        a decorator that records the function in COMPUTE, unchanged.
    """
    if name not in METHODS:
        raise ValueError(f"method {name!r} is not declared in ntkgap.runs.registry")

    def deco(fn):
        COMPUTE[name] = fn
        return fn

    return deco


def run_cell(cell: dict, experiment: str | None = None, results: str | None = None) -> dict:
    """Computes one cell (in whatever process the executor chose).

    A search cell stores its evaluations as cells of ``experiment``.

    Args:
        cell: a cell dict with its ``method`` (filled here).
        experiment: the experiment's name (for methods that store cells).
        results: the results folder those cells go to (default
            ``config.results_dir()``).

    Returns:
        the method's JSON-ready result dict, plus ``cell_seconds``.
    """
    from ntkgap._infra import compat  # noqa: F401  (x64, neural-tangents without TF; JAX cost)

    start = time.perf_counter()
    cell = fill(cell)
    target_files.provide(cell)  # a DAG file's contents shipped with the cell
    fn = COMPUTE[cell["method"]]
    out = jsonable(fn(cell, experiment, results) if METHODS[cell["method"]].needs_experiment
                   else fn(cell))  # fmt: skip
    out["cell_seconds"] = time.perf_counter() - start
    return out


def run_cells(cells: list, experiment: str | None = None, results: str | None = None) -> list[dict]:
    """Computes several cells, in order; one-seed ``net`` (or
    ``after_kernel``) cells that differ only in ``n`` and ``seeds`` train as
    one program (:func:`ntkgap.nets.training.train_runs`), the rest one by one.
    One-seed ``after_kernel`` cells always train there, with ``own_shapes``
    (alone too): their numbers are the same whatever shares their batch.

    Args:
        cells: cell dicts.
        experiment, results: as ``run_cell``.

    Returns:
        list of result dicts, one per cell (as ``run_cell`` gives them).
    """
    cells = [fill(c) for c in cells]
    for c in cells:
        target_files.provide(c)  # a DAG file's contents shipped with the cell
    out = [None] * len(cells)
    joint: dict[str, list[int]] = {}
    for i, c in enumerate(cells):
        if c["method"] in ("net", "after_kernel") and len(c["seeds"]) == 1:
            shared = {k: v for k, v in c.items() if k not in ("n", "seeds")}
            joint.setdefault(json.dumps(shared, sort_keys=True), []).append(i)
        else:
            out[i] = run_cell(c, experiment, results)
    for idx in joint.values():
        # an after_kernel cell (a search's evaluation, shared by searches that run side by
        # side) trains through train_runs' own shapes even alone: its numbers never depend
        # on which cells the timing put in its batch
        if len(idx) == 1 and cells[idx[0]]["method"] == "net":
            out[idx[0]] = run_cell(cells[idx[0]], experiment, results)
        else:
            for i, r in zip(idx, _net_runs([cells[i] for i in idx])):
                out[i] = r
    return out


@computes("spectrum")
def _spectrum(cell):
    return spectra.report(parse_target(cell["target"]))


@computes("eigen")
def _eigen(cell):
    es = eigen.eigensystem(parse_arch(cell["arch"]), parse_domain(cell["domain"]), cell["kmax"])
    return {
        "k": es.k.tolist(),
        "eigenvalue": es.eigenvalue.tolist(),
        "multiplicity": es.multiplicity.tolist(),
        "trace": es.trace,
    }


@computes("ntk")
def _ntk(cell):
    from ntkgap.kernels import ntk_predictor  # JAX cost: loads where cells compute

    return ntk_predictor.evaluate(
        parse_arch(cell["arch"]),
        sample_complexity.target_of(cell),
        cell["n"],
        seed=cell["seed"],
        n_test=cell["n_test"],
        ridge=cell["ridge"],
    )


@computes("theory")
def _theory(cell):
    arch, target = parse_arch(cell["arch"]), parse_target(cell["target"])
    sp, _ = theory.spectrum(arch, target)
    ns = cell["n"] if isinstance(cell["n"], list) else [cell["n"]]

    def valid(n):
        return eigenlearning.theory_valid(n, arch=arch, domain=target.domain)

    n_star = {str(e): eigenlearning.sample_complexity(sp, e) for e in cell["eps"]}
    for r in n_star.values():
        r["theory_valid"] = valid(r["n_max"] if r["censored"] else r["n_star"])
    return {
        "n": ns,
        "test_mse": eigenlearning.relative_test_mse(np.array(ns, float), sp).tolist(),
        "theory_valid": valid(ns),
        "theory_valid_per_n": [valid(n) for n in ns],
        "n_star": n_star,
        # ||f||_H^2 / Var f over the listed eigenspaces (the part of f the
        # kernel's listed blocks carry; Bietti & Mairal 2019 for its growth)
        "rkhs_norm_over_variance": complexity.rkhs_norm(sp.power, sp.eigenvalue) / sp.variance,
    }


def _train_cfg(cell):
    return train_config.from_mapping({k: v for k, v in cell.items() if k in train_config.BY_NAME})


def _thin(curve):
    """At most ~50 rows of a loss curve are stored."""
    return curve[:: max(1, len(curve) // 50)]


@computes("net")
def _net(cell):
    from ntkgap.nets import training  # JAX cost: loads where cells compute

    out = training.train(
        parse_arch(cell["arch"]),
        cell["width"],
        sample_complexity.target_of(cell),
        cell["n"],
        seeds=cell["seeds"],
        cfg=_train_cfg(cell),
        n_test=cell["n_test"],
    )
    out["loss_curve"] = _thin(out["loss_curve"])
    return out


def _net_runs(cells):
    """``net`` or ``after_kernel`` cells of one seed each, alike but for n and
    seeds, trained together (``net``: one program, each result as ``run_cell``
    gives it up to rounding; ``after_kernel``: ``own_shapes``, each result the
    same whatever shares the call) (``cell_seconds`` the whole call's,
    ``batched_runs`` how many runs shared it). An ``after_kernel`` run's
    kernels then follow from its parameters (:func:`_with_kernels`): the
    per-n programs of training never compile."""
    from ntkgap.nets import training  # JAX cost (imports ntkgap._infra.compat first: x64)

    start = time.perf_counter()
    c = cells[0]
    kernels = c["method"] == "after_kernel"
    if kernels:
        _check_ridge(c)  # refused before training (the cells share their ridge)
    arch, target, cfg = parse_arch(c["arch"]), sample_complexity.target_of(c), _train_cfg(c)
    outs = training.train_runs(
        arch, c["width"], target, [(x["seeds"][0], x["n"]) for x in cells],
        cfg=cfg, n_test=c["n_test"], return_params=kernels, own_shapes=kernels,
    )  # fmt: skip
    if kernels:
        outs = [_with_kernels(o, x, arch, target, cfg) for o, x in zip(outs, cells)]
    seconds = time.perf_counter() - start
    results = []
    for out in outs:
        out["loss_curve"] = _thin(out["loss_curve"])
        out = jsonable(out)
        out.update(cell_seconds=seconds, batched_runs=len(cells))
        results.append(out)
    return results


def _check_ridge(cell):
    """An after_kernel cell's ridge is a number (no tuned ridge for empirical kernels)."""
    if isinstance(cell["ridge"], str):
        raise UsageError(f"after_kernel: ridge={cell['ridge']!r} must be a number >= 0")


def _with_kernels(out, cell, arch, target, cfg):
    """A ``train`` result with its ``after_kernel`` diagnostics, parameters dropped
    (the callers refused a string ridge before training: ``_check_ridge``)."""
    from ntkgap.kernels import after_kernel  # JAX cost: loads where cells compute

    kern = after_kernel.train_kernels(out, arch, cell["width"], target, cell["n"], cfg=cfg,
                                      n_test=cell["n_test"], ridge=cell["ridge"])  # fmt: skip
    for key in ("params_init", "params_final"):
        out.pop(key)
    out.update(kern)
    return out


def search_steps(cell: dict, experiment: str | None, results: str | None = None):
    """A search cell's step generator (``sample_complexity.steps``), reading
    stored evaluations of ``experiment`` under ``results``.

    Args:
        cell: an ``ntk_search`` or ``net_search`` cell (filled).
        experiment: the experiment's name (its evaluations are its cells).
        results: the results folder (default ``config.results_dir()``).

    Returns:
        the generator of the search's steps.
    """
    if experiment is None:
        raise UsageError(f"method '{cell['method']}' runs inside an experiment (ntkgap run)")
    if cell["n_min"] >= cell["n_max"]:
        raise UsageError(f"n_min={cell['n_min']} must be < n_max={cell['n_max']}")
    steps = (after_kernel_search.steps if cell["method"] == "after_kernel_search"
             else sample_complexity.steps)  # fmt: skip
    return steps(fill(cell), lambda c: fresh_result(cell_path(experiment, c, results)))


@computes("ntk_search")
@computes("net_search")
@computes("after_kernel_search")
def _search(cell, experiment, results=None):
    return sample_complexity.drive(
        search_steps(cell, experiment, results),
        lambda c, r: save(experiment, c, r, results),
        lambda cells: run_cells(cells, experiment, results),
    )


@computes("after_kernel")
def _after_kernel(cell):
    """The ``net`` cell's training (``training.train``, same split, seeds and
    config), then each seed's after-kernel and initial-kernel regression and
    diagnostics on the same split (:func:`ntkgap.kernels.after_kernel.train_kernels`);
    the parameters are not stored."""
    from ntkgap.nets import training  # JAX cost: loads where cells compute

    if len(cell["seeds"]) == 1:  # a search's evaluation: the path run_cells takes
        out = _net_runs([cell])[0]
        for key in ("cell_seconds", "batched_runs"):
            out.pop(key)
        return out
    arch, target, cfg = parse_arch(cell["arch"]), parse_target(cell["target"]), _train_cfg(cell)
    _check_ridge(cell)  # refused before training
    out = training.train(
        arch, cell["width"], target, cell["n"], seeds=cell["seeds"], cfg=cfg,
        n_test=cell["n_test"], return_params=True,
    )  # fmt: skip
    out = _with_kernels(out, cell, arch, target, cfg)
    out["loss_curve"] = _thin(out["loss_curve"])
    return out


@computes("exact_sawtooth")
def _exact_sawtooth(cell):
    L = cell["L"]
    theta = np.linspace(0, 2 * np.pi, 100_001)
    err = np.max(
        np.abs(
            sawtooth_net.apply(sawtooth_net.exact_params(L), Circle.angle(theta))
            - parse_target(f"sawtooth:L={L}")(theta)
        )
    )
    return {"n_params": sawtooth_net.n_params(L), "max_abs_error": float(err), "test_mse": 0.0}
