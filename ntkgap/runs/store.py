"""The results store: one JSON file per cell, keyed by a hash of the filled cell.

Each cell's result is stored atomically at ``results/<name>/<hash>.json``
beside the cell itself: a cell already stored is reused, an interrupted run
resumes where it stopped, and a changed grid recomputes only new cells. The
hash is of the cell with its method's defaults filled in
(:func:`ntkgap.runs.registry.fill`), so a cell that writes a default and one
that omits it are one cell. Beside the cells, ``.config-<profile>.json`` is
the config as last run and ``.lr-<hash>.json`` the learning rate the runner
chose on validation for a fixed-n ``net`` group (:func:`lr_choices`).

Each record carries ``code_version``, the version of the code that computed
it (:func:`ntkgap._infra.version.code_version`); a record of other code, or
of none (a folder from before records carried it), is stale
(:func:`is_stale`): ``ntkgap run`` recomputes it unless told to reuse it,
and readers count the stale records they return (:func:`reading`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os

from ntkgap._infra import config
from ntkgap._infra.files import atomic_write, dumps
from ntkgap._infra.version import code_version
from ntkgap.errors import UsageError
from ntkgap.runs.config import expand
from ntkgap.runs.registry import fill


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:20]


def cell_key(cell: dict) -> str:
    """The storage key of a cell: a hash of the canonical JSON of the filled cell.

    Args:
        cell: a cell dict (filled or not: the key is the same).

    Returns:
        str of 20 hex digits.
    """
    return _digest(fill(cell))


def cell_path(name: str, cell: dict, root: str | None = None) -> str:
    """The file of a cell of experiment ``name``.

    Args:
        name: the experiment's name.
        cell: a cell dict.
        root: the results folder (default ``config.results_dir()``).

    Returns:
        str path ``root/name/<cell_key>.json``.
    """
    return os.path.join(root or config.results_dir(), name, cell_key(cell) + ".json")


def load_result(path: str) -> dict | None:
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


def is_stale(record: dict) -> bool:
    """Whether a stored record was computed by other code than this process's.

    Args:
        record: a stored record (as :func:`load_result` gives it).

    Returns:
        bool: True when its ``code_version`` differs or is absent.
    """
    return record.get("code_version") != code_version()


def fresh_result(path: str) -> dict | None:
    """A stored cell's result when it was computed by this code, else None.

    Args:
        path: the result file.

    Returns:
        the record's ``result`` dict, or None (absent, unreadable or stale).
    """
    rec = load_result(path)
    return None if rec is None or is_stale(rec) else rec.get("result")


#: the open :func:`reading` logs: each gathers the keys of stale records read
_READ_LOGS: list[set] = []


@contextlib.contextmanager
def reading():
    """Gathers the storage keys of the stale records :func:`results` returns
    while the ``with`` block runs (the report's per-claim stale count).

    Returns:
        a context manager whose value is the set of storage keys, filled as
        stale records are read.
    """
    log: set = set()
    _READ_LOGS.append(log)
    try:
        yield log
    finally:
        _READ_LOGS.remove(log)


def failure(result: dict) -> str | None:
    """Why a computed cell is not a valid result (None when it is).

    A training run that diverged is stored marked failed, never as a result;
    so is a cell whose task raised (the runner stores ``task_error``, the
    one-line reason, and a rerun recomputes it).

    Args:
        result: a cell's result dict.

    Returns:
        str reason, or None.
    """
    if result.get("diverged"):
        return "diverged: non-finite loss, or no checkpoint better than the start"
    if result.get("task_error"):
        return str(result["task_error"])
    return None


def save(name: str, cell: dict, result: dict, root: str | None = None) -> None:
    """Stores a computed cell (filled), marked failed when :func:`failure` says so.

    Args:
        name: the experiment's name.
        cell: the cell dict.
        result: its JSON-ready result.
        root: the results folder (default ``config.results_dir()``).

    Returns:
        None; the file is written whole and renamed into place.
    """
    record = {"cell": fill(cell), "result": result, "code_version": code_version()}
    if why := failure(result):
        record["failed"] = why
    atomic_write(cell_path(name, cell, root), dumps(record))


def profile_keys(name: str, profile: str) -> set[str] | None:
    """The storage keys of the cells of ``profile``'s config as last run.

    Args:
        name: the experiment's name.
        profile: a profile.

    Returns:
        set of keys (empty when that profile never ran here).
    """
    folder = os.path.join(config.results_dir(), name)
    cfg = load_result(os.path.join(folder, f".config-{profile}.json"))
    return {cell_key(c) for c in expand(cfg, profile, validate=False)} if cfg else set()


def results(
    name: str, method: str | None = None, *, profile: str | None = None
) -> list[tuple[dict, dict]]:
    """Stored (cell, result) pairs of experiment ``name``.

    With a ``profile`` (default: the ``NTKGAP_PROFILE`` environment
    variable, which the Makefile sets) only the cells of that profile's
    config as last run are returned: results of cells since removed from
    the config stay on disk for reuse but never reach a figure or a verdict.
    Cells stored as failed are skipped. Cells come filled.

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
    keys = profile_keys(name, profile) if profile else None
    for fn in sorted(os.listdir(folder)):
        if fn.endswith(".json") and not fn.startswith(".") and (keys is None or fn[:-5] in keys):
            rec = load_result(os.path.join(folder, fn))
            if rec and "failed" in rec:  # kept so a rerun does not repeat it; never a result
                continue
            if rec and (method is None or rec["cell"]["method"] == method):
                out.append((fill(rec["cell"]), rec["result"]))
                if _READ_LOGS and is_stale(rec):
                    for log in _READ_LOGS:
                        log.add(fn[:-5])
    return out


# ------------------------------------------------- fixed-n learning-rate choices
def lr_group(cell: dict) -> dict:
    """The ``net`` group a fixed-n cell belongs to: its filled cell without ``lr``.

    The runner chooses one rate per group on validation when the group's
    config cells list several.

    Args:
        cell: a ``net`` cell.

    Returns:
        dict, the filled cell less ``lr``.
    """
    return {k: v for k, v in fill(cell).items() if k != "lr"}


def lr_choice_path(name: str, group: dict, root: str | None = None) -> str:
    """The file of a group's stored learning-rate choice.

    Args:
        name: the experiment's name.
        group: as :func:`lr_group` gives it.
        root: the results folder (default ``config.results_dir()``).

    Returns:
        str path ``root/name/.lr-<hash>.json``.
    """
    return os.path.join(root or config.results_dir(), name, f".lr-{_digest(group)}.json")


def _stored_choice(name: str, cells: list[dict], where) -> dict:
    """The stored choice of the one group that ``cells`` (the stored cells of
    one curve point) form, checked to be decided from exactly these cells."""
    groups = {_digest(lr_group(c)): lr_group(c) for c in cells}
    if len(groups) != 1:
        raise UsageError(
            f"{name}: the net cells at {where} form {len(groups)} groups that list "
            "several learning rates; each group has its own choice (add the fields that "
            "tell them apart to the curve key)"
        )
    (group,) = groups.values()
    rec = load_result(lr_choice_path(name, group))
    if rec is None or set(rec["cells"]) != {cell_key(c) for c in cells}:
        raise UsageError(
            f"{name}: no learning-rate choice stored for the net cells at {where} "
            "(run the config again with `ntkgap run`, or migrate an older results folder)"
        )
    return {"lr": rec["lr"], "median_best_val_mse": rec["median_best_val_mse"]}


def lr_choices(experiment: str, key=("target", "arch"), *, profile: str | None = None) -> dict:
    """The learning rate of each fixed-n ``net`` curve point, as the runner chose it.

    A ``net`` grid that lists several ``lr`` has a cell per rate; after
    running them the runner picks, per group (the cells alike but for
    ``lr``), the rate of lowest median over seeds of the best validation
    MSE (``sample_complexity.choose_lr``, the rule ``net_search`` uses),
    never by test error, and stores it. This reads those choices.

    Args:
        experiment: the experiment's name.
        key: the cell fields that identify a curve (with ``lr`` among them
            every rate is its own curve and nothing is chosen).
        profile: as :func:`results`.

    Returns:
        dict {(key..., n): {"lr": the rate used, "median_best_val_mse":
        {repr(lr): value} (empty when one rate was run)}}.
    """
    points: dict = {}
    for cell, _ in results(experiment, "net", profile=profile):
        k = (*(cell.get(x) for x in key), cell["n"])
        points.setdefault(k, {}).setdefault(cell["lr"], []).append(cell)
    out = {}
    for k, by_lr in points.items():
        if len(by_lr) == 1 or "lr" in key:
            out[k] = {"lr": next(iter(by_lr)), "median_best_val_mse": {}}
        else:
            out[k] = _stored_choice(experiment, [c for cs in by_lr.values() for c in cs], k)
    return out
