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

from ntkgap._infra import config
from ntkgap.errors import UsageError

PROFILES = ("quick", "full")
METHODS = {
    "spectrum": {"target"},
    "eigen": {"arch", "domain", "kmax"},
    "ntk": {"target", "arch", "n", "seed", "n_test", "ridge"},
    "theory": {"target", "arch", "n", "eps"},
    "net": {
        "target",
        "arch",
        "width",
        "n",
        "seeds",
        "steps",
        "lr",
        "batch",
        "weight_decay",
        "optimizer",
        "alpha",
        "param",
        "eval_every",
        "patience",
        "n_test",
        "schedule",
    },
    "exact_sawtooth": {"L"},
}
LIST_PARAMS = {"theory": {"n", "eps"}, "net": {"seeds"}}


def load_config(path: str, profile: str | None = None) -> dict:
    """Read and validate a config. It carries the profile tables it uses
    (at least one); with ``profile``, that one must be among them. Every
    cell's sizes are checked against the memory and time limits here, so a
    run refuses before any worker starts."""
    try:
        with open(path, "rb") as fh:
            cfg = tomllib.load(fh)
    except FileNotFoundError:
        raise UsageError(f"config {path}: no such file") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"config {path}: unreadable ({str(exc).splitlines()[0]})") from None
    unknown = set(cfg) - {"name", "title", *PROFILES}
    if unknown:
        raise UsageError(
            f"config {path}: unknown key '{sorted(unknown)[0]}' "
            f"(allowed: name, title, {', '.join(PROFILES)})"
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
    from ntkgap.arch import parse_arch
    from ntkgap.domains import parse_domain
    from ntkgap.targets import parse_target

    m = cell["method"]
    est = []
    target = parse_target(cell["target"]) if "target" in cell else None
    arch = parse_arch(cell["arch"]) if "arch" in cell else None
    if m == "spectrum":
        est = memory.spectrum_estimates(target)
    elif m == "eigen":
        est = memory.eigen_estimates(arch, parse_domain(cell["domain"]), cell["kmax"])
    elif m == "theory":
        est = memory.theory_estimates(arch, target)
    elif m == "ntk":
        est = memory.regression_estimates(target, cell["n"], cell.get("n_test", 2000))
    elif m == "net":
        est = memory.net_estimates(
            arch,
            target,
            width=cell["width"],
            n=cell["n"],
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
    from ntkgap.arch import parse_arch
    from ntkgap.domains import parse_domain
    from ntkgap.targets import parse_target

    m = cell["method"]
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
    for key in (
        "n",
        "seed",
        "width",
        "steps",
        "kmax",
        "n_test",
        "L",
        "batch",
        "eval_every",
        "patience",
    ):
        vals = cell.get(key)
        for v in vals if isinstance(vals, list) else [vals] if vals is not None else []:
            if (
                not isinstance(v, int)
                or isinstance(v, bool)
                or v < (0 if key in ("seed", "batch", "patience") else 1)
            ):
                raise UsageError(
                    f"config {where}: method '{m}': {key}={v!r} must be a positive integer"
                )
    if m == "net" and not cell.get("seeds"):
        raise UsageError(f"config {where}: method 'net': seeds must be a non-empty list")
    for key in ("lr", "ridge", "weight_decay", "alpha"):
        v = cell.get(key)
        if v is not None and (
            not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0 or v != v
        ):
            raise UsageError(f"config {where}: method '{m}': {key}={v!r} must be a number >= 0")
    for e in cell.get("eps", []) if m == "theory" else []:
        if not isinstance(e, float) or not 0 < e < 1:
            raise UsageError(f"config {where}: method 'theory': eps={e!r} must lie in (0, 1)")


def expand(cfg: dict, profile: str, where: str = "config", *, validate: bool = True) -> list[dict]:
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
        unknown = set(grid) - METHODS[m] - {"method"}
        if unknown:
            raise UsageError(
                f"config {where}: method '{m}': unknown key '{sorted(unknown)[0]}' "
                f"(allowed: {', '.join(sorted(METHODS[m]))})"
            )
        keep = LIST_PARAMS.get(m, set())
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
    return hashlib.sha256(json.dumps(cell, sort_keys=True).encode()).hexdigest()[:20]


def _path(name, cell):
    return os.path.join(config.results_dir(), name, cell_key(cell) + ".json")


def load_result(path):
    """A stored result, or None if absent or unreadable (never a partial one:
    files are written whole and renamed into place)."""
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
            if rec and (method is None or rec["cell"]["method"] == method):
                out.append((rec["cell"], rec["result"]))
    return out


def run_cell(cell: dict) -> dict:
    """Compute one cell (in whatever process the executor chose)."""
    from ntkgap._infra import compat  # noqa: F401  (x64 and neural-tangents without TF, before any work)
    from ntkgap.arch import parse_arch
    from ntkgap.targets import parse_target

    m = cell["method"]
    start = time.perf_counter()
    if m == "spectrum":
        from ntkgap import spectra

        out = spectra.report(parse_target(cell["target"]))
    elif m == "eigen":
        from ntkgap import eigen
        from ntkgap.domains import parse_domain

        es = eigen.eigensystem(parse_arch(cell["arch"]), parse_domain(cell["domain"]), cell["kmax"])
        out = {
            "k": es.k.tolist(),
            "eigenvalue": es.eigenvalue.tolist(),
            "multiplicity": es.multiplicity.tolist(),
            "trace": es.trace,
        }
    elif m == "ntk":
        from ntkgap import ntk_predictor

        out = ntk_predictor.evaluate(
            parse_arch(cell["arch"]),
            parse_target(cell["target"]),
            cell["n"],
            seed=cell["seed"],
            n_test=cell.get("n_test", 2000),
            ridge=cell.get("ridge", 0.0),
        )
    elif m == "theory":
        import functools

        import numpy as np

        from ntkgap import eigenlearning, theory

        sp, _ = theory.spectrum(parse_arch(cell["arch"]), parse_target(cell["target"]))
        ns = cell["n"] if isinstance(cell["n"], list) else [cell["n"]]
        valid = functools.partial(
            eigenlearning.theory_valid,
            arch=parse_arch(cell["arch"]),
            domain=parse_target(cell["target"]).domain,
        )
        n_star = {str(e): eigenlearning.sample_complexity(sp, e) for e in cell.get("eps", [])}
        for r in n_star.values():
            r["theory_valid"] = valid(r["n_max"] if r["censored"] else r["n_star"])
        out = {
            "n": ns,
            "test_mse": eigenlearning.relative_test_mse(np.array(ns, float), sp).tolist(),
            "theory_valid": valid(ns),
            "theory_valid_per_n": [valid(n) for n in ns],
            "n_star": n_star,
        }
    elif m == "net":
        from ntkgap import training

        kw = {
            k: cell[k]
            for k in (
                "steps",
                "lr",
                "batch",
                "weight_decay",
                "optimizer",
                "alpha",
                "param",
                "eval_every",
                "patience",
                "schedule",
            )
            if k in cell
        }
        out = training.train(
            parse_arch(cell["arch"]),
            cell["width"],
            parse_target(cell["target"]),
            cell["n"],
            seeds=cell["seeds"],
            cfg=training.TrainConfig(**kw),
            n_test=cell.get("n_test", 2000),
        )
        out["loss_curve"] = out["loss_curve"][:: max(1, len(out["loss_curve"]) // 50)]
    elif m == "exact_sawtooth":
        import numpy as np

        from ntkgap import sawtooth_net
        from ntkgap.domains import Circle

        L = cell["L"]
        theta = np.linspace(0, 2 * np.pi, 100_001)
        err = np.max(
            np.abs(
                sawtooth_net.apply(sawtooth_net.exact_params(L), Circle.angle(theta))
                - parse_target(f"sawtooth:L={L}")(theta)
            )
        )
        out = {"n_params": sawtooth_net.n_params(L), "max_abs_error": float(err), "test_mse": 0.0}
    else:
        raise AssertionError(m)
    from ntkgap._infra.files import jsonable

    out = jsonable(out)
    out["cell_seconds"] = time.perf_counter() - start
    return out


def _store(name, cell, result):
    from ntkgap._infra.files import atomic_write, dumps

    atomic_write(_path(name, cell), dumps({"cell": cell, "result": result}))


def run(
    path: str,
    profile: str = "quick",
    *,
    jobs: int = 2,
    executor: str = "local",
    scheduler: str | None = None,
) -> dict:
    """Compute the cells of ``path``'s ``profile`` not stored yet.

    Nothing is written until the config, the results folder and the
    executor are all known good: a bad scheduler leaves no trace."""
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
                from distributed import as_completed

                futs = {client.submit(run_cell, c, pure=False): c for c in todo}
                for fut in as_completed(futs):
                    _store(name, futs[fut], fut.result())
                    bar.update()
            elif jobs <= 1:
                for c in todo:
                    _store(name, c, run_cell(c))
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
                    futs = {pool.submit(run_cell, c): c for c in todo}
                    for fut in as_completed(futs):
                        _store(name, futs[fut], fut.result())
                        bar.update()
    finally:
        if client is not None:
            client.close()
    return {
        "experiment": name,
        "profile": profile,
        "cells": len(cells),
        "computed": len(todo),
        "reused": len(cells) - len(todo),
        "seconds": time.perf_counter() - start,
    }


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
    if cell["method"] == "net":
        return cell.get("steps", 5000) * cell["n"] ** 0.3 * cell["width"] ** 0.5
    if cell["method"] == "ntk":
        return cell["n"] ** 2 / 50
    return 1.0
