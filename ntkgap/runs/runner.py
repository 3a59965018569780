"""The experiment runner: a TOML config -> cells -> results on disk.

A config has ``name``, ``title`` and a table for each profile it uses
(``quick``, ``full``; at least one), each a list of ``grid`` tables. A grid names a ``method`` and
its parameters; list-valued parameters (except ``n`` for theory and
``seeds``/``eps``, which are one cell's lists) are expanded as a cartesian
product into cells. Each cell's result is stored atomically at
``results/<name>/<hash>.json`` beside the cell's own config, keyed by the
hash of that config: a cell already stored is reused, an interrupted run
resumes where it stopped, and a changed grid recomputes only new cells.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ntkgap._infra import config
from ntkgap.errors import UsageError

PROFILES = ("quick", "full")
_REQUIRED = object()


@dataclass(frozen=True)
class Param:
    """One parameter of a method: its kind, range, default and whether it
    is one cell's list (never expanded into cells).

    ``kind`` is ``int``, ``number``, ``ridge`` (a number >= 0 or ``tuned``),
    ``eps`` (a number in (0, 1)), ``seeds``
    (a non-empty list of integers >= 0), ``target``, ``arch``, ``domain``
    (spec strings) or ``train`` (a field of :mod:`ntkgap.nets.train_config`).
    """

    kind: str
    min: int = 1
    default: Any = _REQUIRED
    per_cell_list: bool = False


@dataclass(frozen=True)
class Method:
    """An experiment method: its parameters and the function computing a
    cell (a dict of those parameters) into a JSON-ready result."""

    name: str
    params: Mapping[str, Param]
    fn: Callable[[dict], dict]
    cost: Callable[[dict], float] = lambda cell: 1.0
    needs_experiment: bool = False

    @property
    def lists(self) -> set:
        return {k for k, p in self.params.items() if p.per_cell_list}


METHODS: dict[str, Method] = {}


def method(name, cost=None, needs_experiment=False, **params):
    """Decorator registering ``fn`` as experiment method ``name`` in METHODS.

    Args:
        name: the method's name, as configs give it.
        cost: a function of a cell estimating its relative cost (default 1.0).
        needs_experiment: whether ``fn(cell, experiment)`` stores cells of
            its own (else ``fn(cell)``).
        **params: the method's parameters, each a Param.

    Returns:
        a decorator that registers the function and returns it unchanged.
    """

    def deco(fn):
        METHODS[name] = Method(name, params, fn, cost or (lambda cell: 1.0), needs_experiment)
        return fn

    return deco


def _check_int(key, v, lo):
    if not isinstance(v, int) or isinstance(v, bool) or v < lo:
        what = "a positive integer" if lo == 1 else f"an integer >= {lo}"
        return f"{key}={v!r} must be {what}"


def _check_param(key, prm, value):
    """A one-line problem with ``value`` for parameter ``key``, or None."""
    if prm.kind == "int":
        for v in value if isinstance(value, list) else [value]:
            if problem := _check_int(key, v, prm.min):
                return problem
    elif prm.kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or value != value or value < 0:
            return f"{key}={value!r} must be a number >= 0"
    elif prm.kind == "ridge":  # absolute, or tuned on the validation split
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
        if not (ok or value == "tuned"):
            return f"{key}={value!r} is not allowed (allowed: a number >= 0, 'tuned')"
    elif prm.kind == "eps":
        for e in value if isinstance(value, list) else [value]:
            if not isinstance(e, float) or not 0 < e < 1:
                return f"eps={e!r} must lie in (0, 1)"
    elif prm.kind == "seeds":
        if not isinstance(value, list) or not value:
            return f"{key} must be a non-empty list"
        for v in value:
            if problem := _check_int(key, v, 0):
                return problem
    elif prm.kind == "lrs":  # one learning rate, or several chosen among on validation
        for v in value if isinstance(value, list) else [value]:
            if problem := _check_param(key, Param("train"), v):
                return problem
    elif prm.kind == "train":
        from ntkgap.nets import train_config

        try:
            train_config.check_value(key, value)
        except UsageError as exc:
            return str(exc)
    return None


def _train_params():
    from ntkgap.nets import train_config

    return {f.name: Param("train", default=f.default) for f in train_config.FIELDS}


def load_config(path: str, profile: str | None = None) -> dict:
    """Reads and validates an experiment config.

    It carries the profile tables it uses (at least one); with ``profile``,
    that one must be among them. Every cell's sizes are checked against the
    memory and time limits here, so a run refuses before any worker starts.

    Args:
        path: the TOML config file.
        profile: a profile the config must hold (None: any).

    Returns:
        the parsed config dict (``name``, ``title``, ``claim`` and the
        profile tables).
    """
    try:
        with open(path, "rb") as fh:
            cfg = tomllib.load(fh)
    except FileNotFoundError:
        raise UsageError(f"config {path}: no such file") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"config {path}: unreadable ({str(exc).splitlines()[0]})") from None
    unknown = set(cfg) - {"name", "title", "claim", *PROFILES}
    if unknown:
        raise UsageError(
            f"config {path}: unknown key '{sorted(unknown)[0]}' "
            f"(allowed: name, title, claim, {', '.join(PROFILES)})"
        )
    if not isinstance(cfg.get("name"), str) or not cfg["name"].replace("_", "").isalnum():
        raise UsageError(f"config {path}: 'name' must be a word of letters, digits and _")
    present = [p for p in PROFILES if p in cfg]
    if not present:
        raise UsageError(
            f"config {path}: no profile table (give at least one of "
            f"{', '.join(f'[{p}]' for p in PROFILES)})"
        )
    if profile is not None and profile not in cfg:
        if profile not in PROFILES:
            raise UsageError(f"profile '{profile}' is not allowed (allowed: {', '.join(PROFILES)})")
        raise UsageError(
            f"config {path}: no [{profile}] table (this config has: {', '.join(present)})"
        )
    for prof in present:
        for cell in expand(cfg, prof, where=path):  # validates every grid
            _check_cell_sizes(cell, path)
    return cfg


def _check_cell_sizes(cell: dict, where: str) -> None:
    """The memory/time estimates of one cell, before anything is computed."""
    from ntkgap._infra import memory
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import parse_target
    from ntkgap.targets.domains import parse_domain

    m = cell["method"]
    est = []
    target = parse_target(cell["target"]) if "target" in cell else None
    arch = parse_arch(cell["arch"]) if "arch" in cell else None
    if m == "spectrum":
        from ntkgap.targets.spectra import default_kmax

        est = memory.spectrum_estimates(target, default_kmax(target))
    elif m == "eigen":
        est = memory.eigen_estimates(arch, parse_domain(cell["domain"]), cell["kmax"])
    elif m == "theory":
        est = memory.theory_estimates(arch, target)
    elif m in ("ntk", "ntk_search"):
        n = cell["n"] if m == "ntk" else cell["n_max"]  # a search evaluates up to n_max
        est = memory.regression_estimates(target, n, cell.get("n_test", 2000))
    elif m in ("net", "net_search"):
        est = memory.net_estimates(
            arch,
            target,
            width=cell["width"],
            n=cell["n"] if m == "net" else cell["n_max"],
            n_test=cell.get("n_test", 2000),
            seeds=len(cell["seeds"]),
            batch=cell.get("batch", 0),
            steps=cell.get("steps", 5000),
            eval_every=cell.get("eval_every", 100),
            optimizer=cell.get("optimizer", "adam"),
        )
    try:
        memory.check_sizes(est)
    except UsageError as exc:
        raise UsageError(f"config {where}: method '{m}': {exc}") from None


def _validate_cell(cell, where):
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import parse_target
    from ntkgap.targets.domains import parse_domain

    m = cell["method"]
    meth = METHODS[m]
    missing = [k for k, p in meth.params.items() if p.default is _REQUIRED and k not in cell]
    if missing:
        raise UsageError(f"config {where}: method '{m}': missing key '{missing[0]}'")
    try:
        if "target" in cell:
            t = parse_target(cell["target"])
        if "arch" in cell:
            a = parse_arch(cell["arch"])
            if "target" in cell:
                a.check_domain(t.domain)
        if "domain" in cell:
            parse_domain(cell["domain"])
    except UsageError as exc:
        raise UsageError(f"config {where}: {exc}") from None
    for key, prm in meth.params.items():
        if key in cell and (problem := _check_param(key, prm, cell[key])):
            raise UsageError(f"config {where}: method '{m}': {problem}")


def expand(cfg: dict, profile: str, where: str = "config", *, validate: bool = True) -> list[dict]:
    """The cells of a config's profile: each grid's list values expanded as a product.

    Args:
        cfg: a parsed config.
        profile: one of PROFILES.
        where: the config's path, for messages.
        validate: whether each cell's values are checked.

    Returns:
        list of cell dicts (key -> one value), in grid order.
    """
    if profile not in PROFILES:
        raise UsageError(f"profile '{profile}' is not allowed (allowed: {', '.join(PROFILES)})")
    table = cfg.get(profile)
    if (
        not isinstance(table, dict)
        or set(table) - {"grid"}
        or not isinstance(table.get("grid"), list)
    ):
        raise UsageError(f"config {where}: [{profile}] must hold only [[{profile}.grid]] tables")
    cells = []
    for grid in table["grid"]:
        m = grid.get("method")
        if m not in METHODS:
            raise UsageError(
                f"config {where}: method={m!r} is not allowed (allowed: {', '.join(METHODS)})"
            )
        unknown = set(grid) - set(METHODS[m].params) - {"method"}
        if unknown:
            raise UsageError(
                f"config {where}: method '{m}': unknown key '{sorted(unknown)[0]}' "
                f"(allowed: {', '.join(sorted(METHODS[m].params))})"
            )
        keep = METHODS[m].lists
        axes = {k: (v if isinstance(v, list) and k not in keep else [v]) for k, v in grid.items()}
        for k, v in axes.items():
            if not v:
                raise UsageError(f"config {where}: method '{m}': {k} is an empty list")
        keys = sorted(axes)
        for combo in itertools.product(*(axes[k] for k in keys)):
            cell = dict(zip(keys, combo))
            if validate:
                _validate_cell(cell, where)
            cells.append(cell)
    return cells


def cell_key(cell: dict) -> str:
    """The storage key of a cell: a hash of its canonical JSON.

    Args:
        cell: a cell dict.

    Returns:
        str of 20 hex digits.
    """
    return hashlib.sha256(json.dumps(cell, sort_keys=True).encode()).hexdigest()[:20]


def _path(name, cell, root=None):
    return os.path.join(root or config.results_dir(), name, cell_key(cell) + ".json")


def load_result(path):
    """A stored result, or None if absent or unreadable.

    Never a partial one: files are written whole and renamed into place.

    Args:
        path: the result file.

    Returns:
        the parsed JSON record (``cell``, ``result``, maybe ``failed``), or
        None.
    """
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def results(
    name: str, method: str | None = None, *, profile: str | None = None
) -> list[tuple[dict, dict]]:
    """Stored (cell, result) pairs of experiment ``name``.

    With a ``profile`` (default: the ``NTKGAP_PROFILE`` environment
    variable, which the Makefile sets) only the cells of that profile's
    config as last run are returned: results of cells since removed from
    the config stay on disk for reuse but never reach a figure or a verdict.
    Cells stored as failed are skipped.

    Args:
        name: the experiment's name.
        method: only cells of this method (None: all).
        profile: the profile whose cells are returned.

    Returns:
        list of (cell dict, result dict), sorted by storage key.
    """
    folder = os.path.join(config.results_dir(), name)
    out = []
    if not os.path.isdir(folder):
        return out
    profile = profile or config.profile()
    keys = None
    if profile:
        cfg = load_result(os.path.join(folder, f".config-{profile}.json"))
        keys = {cell_key(c) for c in expand(cfg, profile, validate=False)} if cfg else set()
    for fn in sorted(os.listdir(folder)):
        if fn.endswith(".json") and not fn.startswith(".") and (keys is None or fn[:-5] in keys):
            rec = load_result(os.path.join(folder, fn))
            if rec and "failed" in rec:  # kept so a rerun does not repeat it; never a result
                continue
            if rec and (method is None or rec["cell"]["method"] == method):
                out.append((rec["cell"], rec["result"]))
    return out


def run_cell(cell: dict, experiment: str | None = None, results: str | None = None) -> dict:
    """Computes one cell (in whatever process the executor chose).

    A search cell stores its evaluations as cells of ``experiment``.

    Args:
        cell: a cell dict with its ``method``.
        experiment: the experiment's name (for methods that store cells).
        results: the results folder those cells go to (default
            ``config.results_dir()``).

    Returns:
        the method's JSON-ready result dict, plus ``cell_seconds``.
    """
    from ntkgap._infra import compat  # noqa: F401  (x64 and neural-tangents without TF, before any work)
    from ntkgap._infra.files import jsonable

    start = time.perf_counter()
    meth = METHODS[cell["method"]]
    out = jsonable(meth.fn(cell, experiment, results) if meth.needs_experiment else meth.fn(cell))
    out["cell_seconds"] = time.perf_counter() - start
    return out


def run_cells(cells: list, experiment: str | None = None, results: str | None = None) -> list[dict]:
    """Computes several cells, in order; one-seed ``net`` cells that differ
    only in ``n`` and ``seeds`` train as one program
    (:func:`ntkgap.nets.training.train_runs`), the rest one by one.

    Args:
        cells: cell dicts.
        experiment, results: as ``run_cell``.

    Returns:
        list of result dicts, one per cell (as ``run_cell`` gives them).
    """
    out = [None] * len(cells)
    joint: dict[str, list[int]] = {}
    for i, c in enumerate(cells):
        if c["method"] == "net" and len(c["seeds"]) == 1:
            shared = {k: v for k, v in c.items() if k not in ("n", "seeds")}
            joint.setdefault(json.dumps(shared, sort_keys=True), []).append(i)
        else:
            out[i] = run_cell(c, experiment, results)
    for idx in joint.values():
        if len(idx) == 1:
            out[idx[0]] = run_cell(cells[idx[0]], experiment, results)
        else:
            for i, r in zip(idx, _net_runs([cells[i] for i in idx])):
                out[i] = r
    return out


# ------------------------------------------------------------------ methods
def _get(cell, key):
    """A cell's value of ``key``, else its method's declared default."""
    return cell.get(key, METHODS[cell["method"]].params[key].default)


@method("spectrum", target=Param("target"))
def _spectrum(cell):
    from ntkgap.targets import parse_target, spectra

    return spectra.report(parse_target(cell["target"]))


@method("eigen", arch=Param("arch"), domain=Param("domain"), kmax=Param("int"))
def _eigen(cell):
    from ntkgap.kernels import eigen
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets.domains import parse_domain

    es = eigen.eigensystem(parse_arch(cell["arch"]), parse_domain(cell["domain"]), cell["kmax"])
    return {
        "k": es.k.tolist(),
        "eigenvalue": es.eigenvalue.tolist(),
        "multiplicity": es.multiplicity.tolist(),
        "trace": es.trace,
    }


@method(
    "ntk",
    cost=lambda cell: cell["n"] ** 2 / 50,
    target=Param("target"),
    arch=Param("arch"),
    n=Param("int"),
    seed=Param("int", min=0),
    n_test=Param("int", default=2000),
    ridge=Param("ridge", default=0.0),
)
def _ntk(cell):
    from ntkgap.kernels import ntk_predictor
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import parse_target

    return ntk_predictor.evaluate(
        parse_arch(cell["arch"]),
        parse_target(cell["target"]),
        cell["n"],
        seed=cell["seed"],
        n_test=_get(cell, "n_test"),
        ridge=_get(cell, "ridge"),
    )


@method(
    "theory",
    target=Param("target"),
    arch=Param("arch"),
    n=Param("int", per_cell_list=True),
    eps=Param("eps", default=[], per_cell_list=True),
)
def _theory(cell):
    import numpy as np

    from ntkgap.kernels import eigenlearning, theory
    from ntkgap.nets.arch import parse_arch
    from ntkgap.spectral import complexity
    from ntkgap.targets import parse_target

    arch, target = parse_arch(cell["arch"]), parse_target(cell["target"])
    sp, _ = theory.spectrum(arch, target)
    ns = cell["n"] if isinstance(cell["n"], list) else [cell["n"]]

    def valid(n):
        return eigenlearning.theory_valid(n, arch=arch, domain=target.domain)

    n_star = {str(e): eigenlearning.sample_complexity(sp, e) for e in _get(cell, "eps")}
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


def _net_cost(cell):
    return _get(cell, "steps") * cell["n"] ** 0.3 * cell["width"] ** 0.5


def _train_cfg(cell):
    from ntkgap.nets import train_config

    return train_config.from_mapping({k: v for k, v in cell.items() if k in train_config.BY_NAME})


def _thin(curve):
    """At most ~50 rows of a loss curve are stored."""
    return curve[:: max(1, len(curve) // 50)]


@method(
    "net",
    cost=_net_cost,
    target=Param("target"),
    arch=Param("arch"),
    width=Param("int"),
    n=Param("int"),
    seeds=Param("seeds", per_cell_list=True),
    n_test=Param("int", default=2000),
    **_train_params(),
)
def _net(cell):
    from ntkgap.nets import training
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import parse_target

    cfg = _train_cfg(cell)
    out = training.train(
        parse_arch(cell["arch"]),
        cell["width"],
        parse_target(cell["target"]),
        cell["n"],
        seeds=cell["seeds"],
        cfg=cfg,
        n_test=_get(cell, "n_test"),
    )
    out["loss_curve"] = _thin(out["loss_curve"])
    return out


def _net_runs(cells):
    """``net`` cells of one seed each, alike but for n and seeds, trained as
    one program; each result as ``run_cell`` would give it (``cell_seconds``
    the whole call's, ``batched_runs`` how many runs shared it)."""
    from ntkgap._infra.files import jsonable
    from ntkgap.nets import training  # imports ntkgap._infra.compat first (x64)
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import parse_target

    start = time.perf_counter()
    c = cells[0]
    outs = training.train_runs(
        parse_arch(c["arch"]),
        c["width"],
        parse_target(c["target"]),
        [(x["seeds"][0], x["n"]) for x in cells],
        cfg=_train_cfg(c),
        n_test=_get(c, "n_test"),
    )
    seconds = time.perf_counter() - start
    results = []
    for out in outs:
        out["loss_curve"] = _thin(out["loss_curve"])
        out = jsonable(out)
        out.update(cell_seconds=seconds, batched_runs=len(cells))
        results.append(out)
    return results


_SEARCH_PARAMS = dict(
    target=Param("target"),
    arch=Param("arch"),
    eps=Param("eps"),
    seeds=Param("seeds", per_cell_list=True),
    n_min=Param("int"),
    n_max=Param("int"),
    resolution=Param("number", default=1.25),
    n_test=Param("int", default=2000),
)


def _search_steps(cell, experiment, results=None):
    """A search cell's step generator (``sample_complexity.steps``), reading
    stored evaluations of ``experiment`` under ``results``."""
    from ntkgap.runs import sample_complexity

    if experiment is None:
        raise UsageError(f"method '{cell['method']}' runs inside an experiment (ntkgap run)")
    if cell["n_min"] >= cell["n_max"]:
        raise UsageError(f"n_min={cell['n_min']} must be < n_max={cell['n_max']}")
    return sample_complexity.steps(
        cell, lambda c: (load_result(_path(experiment, c, results)) or {}).get("result")
    )


def _search(cell, experiment, results=None):
    from ntkgap.runs import sample_complexity

    return sample_complexity.drive(
        _search_steps(cell, experiment, results),
        lambda c, r: _store(experiment, c, r, results),
        lambda cells: run_cells(cells, experiment, results),
    )


method(
    "ntk_search",
    cost=lambda cell: cell["n_max"] ** 2 / 50,
    needs_experiment=True,
    ridge=Param("ridge", default=0.0),
    **_SEARCH_PARAMS,
)(_search)
method(
    "net_search",
    cost=lambda cell: 20 * _get(cell, "steps") * cell["n_max"] ** 0.3 * cell["width"] ** 0.5,
    needs_experiment=True,
    width=Param("int"),
    sweep_n=Param("int", default=0),
    **{**_train_params(), "lr": Param("lrs", default=0.001, per_cell_list=True)},
    **_SEARCH_PARAMS,
)(_search)


@method("exact_sawtooth", L=Param("int"))
def _exact_sawtooth(cell):
    import numpy as np

    from ntkgap.nets import sawtooth_net
    from ntkgap.targets import parse_target
    from ntkgap.targets.domains import Circle

    L = cell["L"]
    theta = np.linspace(0, 2 * np.pi, 100_001)
    err = np.max(
        np.abs(
            sawtooth_net.apply(sawtooth_net.exact_params(L), Circle.angle(theta))
            - parse_target(f"sawtooth:L={L}")(theta)
        )
    )
    return {"n_params": sawtooth_net.n_params(L), "max_abs_error": float(err), "test_mse": 0.0}


def failure(result: dict) -> str | None:
    """Why a computed cell is not a valid result (None when it is).

    A training run that diverged is stored marked failed, never as a result.

    Args:
        result: a cell's result dict.

    Returns:
        str reason, or None.
    """
    if result.get("diverged"):
        return "diverged: non-finite loss, or no checkpoint better than the start"
    return None


def _store(name, cell, result, root=None):
    from ntkgap._infra.files import atomic_write, dumps

    record = {"cell": cell, "result": result}
    if why := failure(result):
        record["failed"] = why
    atomic_write(_path(name, cell, root), dumps(record))


def run(
    path: str,
    profile: str = "quick",
    *,
    jobs: int = 2,
    executor: str = "local",
    scheduler: str | None = None,
) -> dict:
    """Computes the cells of ``path``'s ``profile`` not stored yet.

    Nothing is written until the config, the results folder and the
    executor are all known good: a bad scheduler leaves no trace.

    Args:
        path: the TOML config file.
        profile: one of PROFILES.
        jobs: worker processes of the local executor.
        executor: ``local`` or ``dask``.
        scheduler: the dask scheduler address (with ``executor="dask"``).

    Returns:
        dict with ``experiment``, ``profile``, ``cells``, ``computed``,
        ``reused``, ``failed`` (list of {cell, key, reason}) and ``seconds``.
    """
    from ntkgap._infra import progress
    from ntkgap._infra.files import atomic_write, dumps, ensure_folder, remove_stale_temp

    if executor not in ("local", "dask"):
        raise UsageError(f"--executor {executor} is not allowed (allowed: local, dask)")
    if executor == "dask" and not scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS")
    cfg = load_config(path, profile)
    name = cfg["name"]
    cells = expand(cfg, profile, where=path)
    root = config.results_dir()
    parent = os.path.dirname(os.path.abspath(root))
    if not os.path.isdir(root) and not os.path.isdir(parent):
        raise UsageError(f"results folder {root}: its parent {parent} does not exist")
    if os.path.exists(root) and not os.path.isdir(root):
        raise UsageError(f"results folder {root} is not a folder")
    todo = [c for c in cells if load_result(_path(name, c)) is None]
    client = _dask_client(scheduler) if executor == "dask" and todo else None
    try:
        folder = ensure_folder(os.path.join(ensure_folder(root), name))
        remove_stale_temp(folder)  # left by a run killed mid-write
        atomic_write(os.path.join(folder, f".config-{profile}.json"), dumps(cfg, indent=1))
        start = time.perf_counter()
        with progress.bar(total=len(todo), desc=f"{name} [{profile}]") as bar:
            if not todo:
                pass
            elif client is not None:
                _run_on_dask(client, name, todo, bar)
            elif jobs <= 1:
                for c in todo:
                    _store(name, c, run_cell(c, name))
                    bar.update()
            else:
                import multiprocessing as mp
                from concurrent.futures import ProcessPoolExecutor, as_completed

                # the slowest cells first, so the pool ends together
                todo.sort(key=lambda c: -_cost(c))
                # each process trains its seeds on cores / jobs threads
                from ntkgap._infra import cores

                per = max(1, cores.available() // jobs)
                with ProcessPoolExecutor(
                    max_workers=jobs,
                    mp_context=mp.get_context("spawn"),
                    initializer=_share_cores,
                    initargs=(per,),
                ) as pool:
                    futs = {pool.submit(run_cell, c, name): c for c in todo}
                    for fut in as_completed(futs):
                        _store(name, futs[fut], fut.result())
                        bar.update()
    finally:
        if client is not None:
            client.close()
    failed = []
    for c in cells:
        rec = load_result(_path(name, c))
        if rec and "failed" in rec:
            failed.append({"cell": c, "key": cell_key(c), "reason": rec["failed"]})
    return {
        "experiment": name,
        "profile": profile,
        "cells": len(cells),
        "computed": len(todo),
        "reused": len(cells) - len(todo),
        "failed": failed,
        "seconds": time.perf_counter() - start,
    }


#: Dask priority of a search step over an ordinary cell: a search is a chain
#: of steps, so its next step runs before cells that could run at any time
SEARCH_STEP_PRIORITY = 1


class _DaskSearch:
    """A search cell driven in the coordinating process: its step generator,
    the step in flight (batches, results so far) and its start time."""

    def __init__(self, cell, gen):
        self.cell, self.gen = cell, gen
        self.start = time.perf_counter()
        self.step = 0
        self.batches, self.results, self.left = [], [], 0

    def advance(self, results):
        """Sends a finished step's results (None to start) and takes the
        next step's batches; returns the search's result when it is done."""
        from ntkgap._infra.files import jsonable

        try:
            batches = next(self.gen) if results is None else self.gen.send(results)
            while not batches:  # defensive: a step with nothing to compute
                batches = self.gen.send([])
        except StopIteration as stop:
            out = jsonable(stop.value)
            out["cell_seconds"] = time.perf_counter() - self.start
            return out
        self.step += 1
        self.batches, self.results, self.left = batches, [None] * len(batches), len(batches)
        return None


def _run_on_dask(client, name, todo, bar):
    """Computes ``todo`` on a Dask cluster and stores each result here.

    An ordinary cell is one future. A search cell's loop runs in this
    process (``sample_complexity.steps``): each step's batches of evaluation
    cells are futures, stored here as each returns, and a search's next step
    is submitted when its step is complete, so every search keeps a step in
    flight while ordinary cells fill the cluster. Workers write nothing: a
    cluster needs no shared folder, and a rerun after a lost worker or
    coordinator continues from the cells stored here.
    """
    import uuid

    from distributed import as_completed

    pending = as_completed()
    owner = {}  # future -> the cell it computes, or (search, batch index)

    def submit_step(srch):
        tag = f"{srch.cell['method']}-{cell_key(srch.cell)[:8]}-step{srch.step}"
        for i, batch in enumerate(srch.batches):
            fut = client.submit(
                run_cells,
                batch,
                key=f"{tag}.{i}-{uuid.uuid4().hex[:8]}",
                priority=SEARCH_STEP_PRIORITY,
            )
            owner[fut] = (srch, i)
            pending.add(fut)

    def finish(cell, result):
        _store(name, cell, result)
        bar.update()

    for c in todo:
        if METHODS[c["method"]].needs_experiment:
            srch = _DaskSearch(c, _search_steps(c, name))
            if (out := srch.advance(None)) is not None:
                finish(c, out)  # every evaluation was stored already
            else:
                submit_step(srch)
        else:
            fut = client.submit(run_cell, c, pure=False)
            owner[fut] = c
            pending.add(fut)
    for fut in pending:
        what = owner.pop(fut)
        result = fut.result()  # a task's error ends the run; stored cells stay
        if isinstance(what, dict):
            finish(what, result)
            continue
        srch, i = what
        for sub, r in zip(srch.batches[i], result):
            _store(name, sub, r)
        srch.results[i] = result
        srch.left -= 1
        if srch.left == 0:
            if (out := srch.advance(srch.results)) is not None:
                finish(srch.cell, out)
            else:
                submit_step(srch)


#: seconds to wait for a Dask scheduler before giving up
DASK_CONNECT_TIMEOUT = 5


def _dask_client(scheduler: str):
    """A connected Dask client, or the one-line UsageError."""
    import logging

    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--executor dask needs the 'distributed' package") from None
    # distributed logs every failed attempt; the one-line error says it all
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    try:
        return Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
    except Exception as exc:  # OSError, TimeoutError, ValueError for a bad address
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(
            f"--scheduler {scheduler}: no Dask scheduler reachable within "
            f"{DASK_CONNECT_TIMEOUT} s ({reason[:120]})"
        ) from None


def _share_cores(per):
    from ntkgap._infra import cores

    os.environ.setdefault(cores.ENV, str(per))


def _cost(cell):
    return METHODS[cell["method"]].cost(cell)
