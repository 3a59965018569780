"""Experiment configs: reading, checking and expanding a TOML config into cells.

A config has ``name``, ``title`` and a table for each profile it uses
(``quick``, ``full``; at least one), each a list of ``grid`` tables. A grid
names a ``method`` and its parameters; list-valued parameters (except
``n`` for theory and ``seeds``/``eps``, which are one cell's lists) are
expanded as a cartesian product into cells, and each cell is filled with its
method's declared defaults (:func:`ntkgap.runs.registry.fill`). A search
with ``target_error = "classification"`` may give ``eps = "pstar"``: each
cell's eps is then the published P* threshold of its target's n_c
(:func:`ntkgap.targets.rhm_pstar.threshold_of`), written into the cell.
"""

from __future__ import annotations

import itertools
import json
import tomllib

from ntkgap._infra import memory
from ntkgap._infra.config import INCLUDES, PROFILES
from ntkgap.errors import UsageError
from ntkgap.nets import train_config
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import claim_family, target_files
from ntkgap.runs.registry import CLASSIFICATION, METHODS, REQUIRED, Param, fill
from ntkgap.targets import parse_target, rhm, rhm_pstar
from ntkgap.targets.domains import parse_domain
from ntkgap.targets.spectra import default_kmax


def _check_int(key, v, lo):
    if not isinstance(v, int) or isinstance(v, bool) or v < lo:
        what = "a positive integer" if lo == 1 else f"an integer >= {lo}"
        return f"{key}={v!r} must be {what}"


def _as_list(value):
    return value if isinstance(value, list) else [value]


def _check_number(key, value, kind):
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "number" and (not ok or value != value or value < 0):
        return f"{key}={value!r} must be a number >= 0"
    if kind == "ridge" and not ((ok and value >= 0) or value == "tuned"):
        # absolute, or tuned on the validation split
        return f"{key}={value!r} is not allowed (allowed: a number >= 0, 'tuned')"
    return None


def _check_param(key: str, prm: Param, value) -> str | None:
    """A one-line problem with ``value`` for parameter ``key``, or None."""
    if prm.kind == "int":
        return next(filter(None, (_check_int(key, v, prm.min) for v in _as_list(value))), None)
    if prm.kind in ("number", "ridge"):
        return _check_number(key, value, prm.kind)
    if prm.kind == "eps":
        for e in _as_list(value):
            if not isinstance(e, float) or not 0 < e < 1:
                return f"eps={e!r} must lie in (0, 1)"
    elif prm.kind == "seeds":
        if not isinstance(value, list) or not value:
            return f"{key} must be a non-empty list"
        return next(filter(None, (_check_int(key, v, 0) for v in value)), None)
    elif prm.kind == "lrs":  # one learning rate, or several chosen among on validation
        probs = (_check_param(key, Param("train"), v) for v in _as_list(value))
        return next(filter(None, probs), None)
    elif prm.kind == "choice" and prm.choices and value not in prm.choices:
        return f"{key}={value!r} is not allowed (allowed: {', '.join(map(repr, prm.choices))})"
    elif prm.kind == "train":
        try:
            train_config.check_value(key, value)
        except UsageError as exc:
            return str(exc)
    return None


def _read_toml(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise UsageError(f"config {path}: no such file") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"config {path}: unreadable ({str(exc).splitlines()[0]})") from None


def load_config(path: str, profile: str | None = None) -> dict:
    """Reads and validates an experiment config.

    It carries the profile tables it uses (at least one); with ``profile``,
    that one must be among them. Every cell's sizes are checked against the
    memory and time limits here, so a run refuses before any worker starts.

    Args:
        path: the TOML config file.
        profile: a profile the config must hold (None: any).

    Returns:
        the parsed config dict (``name``, ``title``, ``claim`` with the
        ``[[claim_family]]`` tables expanded: :mod:`ntkgap.runs.claim_family`,
        ``seal``: the predictions sealed before the cells run, checked with
        the claims, :mod:`ntkgap.verdicts.sealed_statistics`, and the
        profile tables).
    """
    cfg = claim_family.expand_families(_read_toml(path), path)  # [[claim_family]] tables
    unknown = set(cfg) - {"name", "title", "claim", "seal", *PROFILES}
    if unknown:
        raise UsageError(
            f"config {path}: unknown key '{sorted(unknown)[0]}' "
            f"(allowed: name, title, claim, claim_family, seal, {', '.join(PROFILES)})"
        )
    if not isinstance(cfg.get("name"), str) or not cfg["name"].replace("_", "").isalnum():
        raise UsageError(f"config {path}: 'name' must be a word of letters, digits and _")
    present = [p for p in PROFILES if p in cfg]
    if not present:
        raise UsageError(
            f"config {path}: no profile table (give at least one of "
            f"{', '.join(f'[{p}]' for p in PROFILES)})"
        )
    if profile is not None and not has_profile(cfg, profile):
        if profile not in PROFILES:
            raise UsageError(f"profile '{profile}' is not allowed (allowed: {', '.join(PROFILES)})")
        raise UsageError(
            f"config {path}: no [{profile}] table (this config has: {', '.join(present)})"
        )
    for prof in present:
        for cell in expand(cfg, prof, where=path):  # validates every grid
            check_cell_sizes(cell, path)
    return cfg


def _estimates(cell: dict) -> list:
    """The memory/time estimates of one filled cell."""
    m = cell["method"]
    target = parse_target(cell["target"]) if "target" in cell else None
    arch = parse_arch(cell["arch"]) if "arch" in cell else None
    if m == "spectrum":
        return memory.spectrum_estimates(target, default_kmax(target))
    if m == "eigen":
        return memory.eigen_estimates(arch, parse_domain(cell["domain"]), cell["kmax"])
    if m == "theory":
        return memory.theory_estimates(arch, target)
    n = cell["n"] if m in ("ntk", "net") else cell.get("n_max")  # a search runs up to n_max
    if m in ("ntk", "ntk_search"):
        # imported here: walsh_krr loads scipy, which reading a config must not pay for
        from ntkgap.kernels import walsh_krr

        fast = walsh_krr.regression_estimates(arch, target, n, cell["n_test"]) if arch else None
        held = 1
        if cell.get("ridge") == "tuned":  # one factor per ridge value (imported here: jax)
            from ntkgap.kernels.ntk_predictor import RIDGE_GRID

            held = len(RIDGE_GRID)
        return fast or memory.regression_estimates(target, n, cell["n_test"], held)
    if m in ("net", "net_search"):
        return memory.net_estimates(
            arch,
            target,
            width=cell["width"],
            n=n,
            n_test=cell["n_test"],
            seeds=len(cell["seeds"]),
            batch=cell["batch"],
            steps=cell["steps"],
            eval_every=cell["eval_every"],
            optimizer=cell["optimizer"],
        )
    return []


def cell_bytes(cell: dict) -> float:
    """A filled cell's estimated peak memory in bytes (its largest estimate).

    Args:
        cell: a filled cell dict.

    Returns:
        float: bytes (0 for a cell with no memory estimate).
    """
    return max((a for kind, a, _ in _estimates(cell) if kind == "bytes"), default=0.0)


def check_cell_sizes(cell: dict, where: str) -> None:
    """Refuses a cell whose memory/time estimates exceed the limits, before
    anything is computed.

    Args:
        cell: a cell dict (filled here).
        where: the config's path, for messages.

    Returns:
        None; raises UsageError naming the method and the limit.
    """
    cell = fill(cell)
    try:
        memory.check_sizes(_estimates(cell))
    except UsageError as exc:
        raise UsageError(f"config {where}: method '{cell['method']}': {exc}") from None


def _validate_cell(cell, where):
    m = cell["method"]
    meth = METHODS[m]
    missing = [k for k, p in meth.params.items() if p.default is REQUIRED and k not in cell]
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
        if "target_error" in cell and "target" in cell:
            rhm.OneHotLabels(t)  # refuses a target other than an rhm
    except UsageError as exc:
        raise UsageError(f"config {where}: {exc}") from None
    for key, prm in meth.params.items():
        if key in cell and (problem := _check_param(key, prm, cell[key])):
            raise UsageError(f"config {where}: method '{m}': {problem}")


def _resolve_eps(cell: dict, where: str) -> dict:
    """The cell with ``eps = "pstar"`` replaced by its target's P* threshold
    (only a classification search may give it)."""
    if cell.get("eps") != rhm_pstar.PSTAR_EPS:
        return cell
    if cell.get("target_error") != CLASSIFICATION or "target" not in cell:
        raise UsageError(
            f"config {where}: eps = {rhm_pstar.PSTAR_EPS!r} needs target_error = {CLASSIFICATION!r}"
        )
    try:
        n_c = rhm.OneHotLabels(parse_target(cell["target"])).n_c
    except UsageError as exc:
        raise UsageError(f"config {where}: {exc}") from None
    return dict(cell, eps=rhm_pstar.threshold_of(cell["eps"], n_c))


def has_profile(cfg: dict, profile: str) -> bool:
    """Whether a config has cells in ``profile``: its own table, or one of the
    profiles that it includes (``INCLUDES``: paper holds quick's cells).

    Args:
        cfg: a parsed config.
        profile: a profile name.

    Returns:
        bool.
    """
    return any(p in cfg for p in (profile, *INCLUDES.get(profile, ())))


def _grids(cfg: dict, profile: str, where: str) -> list:
    if profile not in PROFILES:
        raise UsageError(f"profile '{profile}' is not allowed (allowed: {', '.join(PROFILES)})")
    grids = []
    for prof in (*INCLUDES.get(profile, ()), profile):
        if prof not in cfg:
            continue
        table = cfg[prof]
        if (
            not isinstance(table, dict)
            or set(table) - {"grid"}
            or not isinstance(table.get("grid"), list)
        ):
            raise UsageError(f"config {where}: [{prof}] must hold only [[{prof}.grid]] tables")
        grids += table["grid"]
    if not grids and not has_profile(cfg, profile):
        raise UsageError(f"config {where}: no [{profile}] table")
    return grids


def _axes(grid: dict, where: str) -> dict:
    """A grid's axes: {key: list of values} (one cell's lists stay whole)."""
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
    return axes


def expand(cfg: dict, profile: str, where: str = "config", *, validate: bool = True) -> list[dict]:
    """The cells of a config's profile: each grid's list values expanded as a
    product, each cell filled with its method's defaults.

    Args:
        cfg: a parsed config.
        profile: one of PROFILES.
        where: the config's path, for messages.
        validate: whether each cell's values are checked (before filling:
            the defaults are the declaration's own).

    Returns:
        list of filled cell dicts (key -> one value), in grid order; a
        ``file:`` target's cell carries its file's contents
        (:mod:`ntkgap.runs.target_files`).
    """
    cells = []
    for grid in _grids(cfg, profile, where):
        axes = _axes(grid, where)
        keys = sorted(axes)
        for combo in itertools.product(*(axes[k] for k in keys)):
            cell = _resolve_eps(dict(zip(keys, combo)), where)
            if validate:
                _validate_cell(cell, where)
            cells.append(target_files.attach(fill(cell)))
    unique = {json.dumps(c, sort_keys=True): c for c in reversed(cells)}  # first one kept
    return [c for c in cells if unique.get(json.dumps(c, sort_keys=True)) is c]
