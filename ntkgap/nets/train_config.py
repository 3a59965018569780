"""The training configuration, declared once.

``FIELDS`` lists every hyperparameter of :func:`ntkgap.nets.training.train`: its
name, type, default, allowed values or range and a one-line doc. From it
come the :class:`TrainConfig` tuple, its validation (:func:`check_value`,
:func:`validate`), the ``ntkgap train`` options (:func:`add_options`), the
runner's ``net`` method parameters and the report's budget text
(:func:`budget_text`). This module imports no JAX, so the CLI and the
runner read the schema without loading it.
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ntkgap.errors import UsageError


@dataclass(frozen=True)
class Option:
    """One hyperparameter: type (int, float or str), default, range, doc.

    ``min``/``max`` bound numbers (inclusive unless ``open_min``/``open_max``);
    ``choices`` lists the allowed strings; ``optional`` admits None (unset).
    """

    name: str
    type: type
    default: Any
    doc: str
    choices: tuple | None = None
    min: float | None = None
    max: float | None = None
    open_min: bool = False
    open_max: bool = False
    optional: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def allowed(self) -> str:
        """The allowed values in words, e.g. ``adam, sgd`` or ``>= 1``."""
        if self.choices:
            return ", ".join(self.choices)
        if self.min is not None and self.max is not None:
            lo, hi = "(" if self.open_min else "[", ")" if self.open_max else "]"
            return f"{lo}{_fmt(self.min)}, {_fmt(self.max)}{hi}"
        if self.min is not None:
            return f"{'>' if self.open_min else '>='} {_fmt(self.min)}"
        return "any " + ("integer" if self.type is int else "number")


FIELDS: tuple[Option, ...] = (
    Option("steps", int, 5000, "optimisation steps (exactly this many)", min=1),
    Option("lr", float, 1e-3, "learning rate (0: the untrained baseline)", min=0),
    Option("optimizer", str, "adam", "optimiser", choices=("adam", "sgd")),
    Option("schedule", str, "constant", "learning-rate schedule", choices=("constant", "cosine")),
    Option("batch", int, 0, "minibatch size (0: full batch)", min=0),
    Option("eval_every", int, 100, "steps between validation checks", min=1),
    Option("patience", int, 0, "checks without improvement before a seed stops (0: off)", min=0),
    Option(
        "val_frac", float, 0.2, "share of the n samples held out", min=0, max=1, open_min=True,
        open_max=True,
    ),
    Option(
        "alpha", float, None, "centred alpha (f - f0) model, lazy when large (unset: off)", min=0,
        open_min=True, optional=True,
    ),
    Option("param", str, "ntk", "parametrisation (mf: muP / mean-field, readout 1/width and "
           "learning rates scaled with width; training.param_scaling)", choices=("ntk", "mf")),
    Option("weight_decay", float, 0.0, "weight decay (decoupled for adam)", min=0),
    Option("dtype", str, "float32", "parameter and data dtype", choices=("float32", "float64")),
    Option("checkpoint", str, "best", "parameters scored: best validation or last",
           choices=("best", "last")),
)  # fmt: skip
BY_NAME: dict[str, Option] = {f.name: f for f in FIELDS}

_Base = namedtuple("_Base", [f.name for f in FIELDS], defaults=[f.default for f in FIELDS])


class TrainConfig(_Base):
    """The training hyperparameters (one field per entry of ``FIELDS``)."""

    __slots__ = ()


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def validation_size(n: int, val_frac: float | None = None) -> int:
    """How many of n samples are held out for validation (nets and the tuned ridge).

    Args:
        n: the pool size.
        val_frac: the held-out share (default: the ``val_frac`` default).

    Returns:
        int: max(1, round(val_frac * n)).
    """
    frac = BY_NAME["val_frac"].default if val_frac is None else val_frac
    return max(1, int(round(frac * n)))


def check_value(name: str, value, *, text: bool = False):
    """The value of field ``name`` converted and checked, else UsageError.

    Args:
      name: a field of ``FIELDS``.
      value: the value as given (a TOML value, or a string when ``text``).
      text: ``value`` is command-line text, to convert to the field's type.

    Returns:
      The value with the field's type (ints accepted for floats).

    Raises UsageError with one line ``name=value ...`` naming what is allowed;
    the message is the same whether the value came from the CLI or a config.
    """
    opt = BY_NAME.get(name)
    if opt is None:
        raise UsageError(f"unknown training field '{name}' (allowed: {', '.join(BY_NAME)})")
    if value is None:
        if opt.optional:
            return None
        raise UsageError(f"{name} must be set (allowed: {opt.allowed()})")
    v = value
    if text and isinstance(value, str) and opt.type is not str:
        try:
            v = opt.type(value)
        except ValueError:
            v = value
    bad = isinstance(v, bool)
    if opt.type is int:
        if bad or not isinstance(v, int):
            raise UsageError(f"{name}={value!r} is not an integer")
    elif opt.type is float:
        if bad or not isinstance(v, (int, float)):
            raise UsageError(f"{name}={value!r} is not a number")
        v = float(v)
        if not math.isfinite(v):
            raise UsageError(f"{name}={value!r} is not a finite number")
    elif not isinstance(v, str):
        raise UsageError(f"{name}={value!r} is not allowed (allowed: {opt.allowed()})")
    if opt.choices is not None and v not in opt.choices:
        raise UsageError(f"{name}={v!r} is not allowed (allowed: {opt.allowed()})")
    lo_bad = opt.min is not None and (v <= opt.min if opt.open_min else v < opt.min)
    hi_bad = opt.max is not None and (v >= opt.max if opt.open_max else v > opt.max)
    if lo_bad or hi_bad:
        if opt.min is not None and opt.max is not None:
            raise UsageError(f"{name}={_fmt(v)} must lie in {opt.allowed()}")
        what = "a positive integer" if opt.type is int and opt.min == 1 else (
            ("an integer " if opt.type is int else "a number ") + opt.allowed()
        )  # fmt: skip
        raise UsageError(f"{name}={_fmt(v)} must be {what}")
    return v


def from_mapping(values: Mapping, *, text: bool = False) -> TrainConfig:
    """A validated TrainConfig from ``values`` (missing fields: defaults).

    Args:
      values: field name -> value; keys outside ``FIELDS`` are refused.
      text: values are command-line strings (see :func:`check_value`).

    Returns:
      The TrainConfig.
    """
    unknown = sorted(set(values) - set(BY_NAME))
    if unknown:
        raise UsageError(f"unknown training field '{unknown[0]}' (allowed: {', '.join(BY_NAME)})")
    return TrainConfig(**{k: check_value(k, v, text=text) for k, v in values.items()})


def validate(cfg: TrainConfig) -> None:
    """Checks a TrainConfig's fields and their combination.

    Raises UsageError ``training: name=value ...`` for the first bad field,
    or for a combination that would not mean what it says (alpha needs sgd
    and param=ntk).

    Args:
        cfg: the training configuration.

    Returns:
        None.
    """
    try:
        for f in FIELDS:
            check_value(f.name, getattr(cfg, f.name))
    except UsageError as exc:
        raise UsageError(f"training: {exc}") from None
    if cfg.alpha is not None and cfg.optimizer != "sgd":
        # the alpha (f - f0) model with the loss / alpha^2 is lazy under
        # gradient descent (Chizat, Oyallon & Bach 2019); Adam normalises its
        # steps, which moves f by ~alpha * lr and breaks that scaling
        raise UsageError(
            f"training: alpha={cfg.alpha:g} needs optimizer=sgd (got {cfg.optimizer}): "
            "Adam's normalised steps do not give the lazy (linearised) dynamics"
        )
    if cfg.alpha is not None and cfg.param == "mf":
        # two output scalings at once: alpha sets the lazy/rich scale itself
        raise UsageError(
            f"training: alpha={cfg.alpha:g} needs param=ntk (got param=mf): alpha and the "
            "mean-field parametrisation both set the output scale"
        )


def add_options(parser) -> None:
    """Adds one ``--name`` option per training field to an argparse parser.

    Each help names the default and allowed values; values stay strings
    until :func:`from_args` checks them.

    Args:
        parser: an ``argparse.ArgumentParser`` (or argument group).

    Returns:
        None.
    """
    for f in FIELDS:
        default = "unset" if f.default is None else _fmt(f.default)
        metavar = "{" + ",".join(f.choices) + "}" if f.choices else f.type.__name__.upper()
        parser.add_argument(
            f.flag,
            dest=f.name,
            default=f.default,
            metavar=metavar,
            help=f"{f.doc} [default: {default}; allowed: {f.allowed()}]",
        )


def from_args(args) -> TrainConfig:
    """The validated TrainConfig of parsed ``add_options`` arguments.

    Args:
        args: the ``argparse.Namespace`` holding every field.

    Returns:
        TrainConfig.
    """
    try:
        return from_mapping({f.name: getattr(args, f.name) for f in FIELDS}, text=True)
    except UsageError as exc:
        raise UsageError(f"training: {exc}") from None


def budget_text(cell: Mapping) -> str:
    """A training budget in words, for the report.

    Args:
      cell: a runner cell or grid (``width`` and schema fields; a list value
        is shown comma-separated; absent fields take their defaults), or a
        TrainConfig's ``_asdict()`` (then no width).

    Returns:
      E.g. ``width 32, 4000 steps of adam, lr 0.003, full batch, ...``: every
      field of the schema, so two budgets differ in text when they differ.
    """

    def get(name):
        v = cell.get(name, BY_NAME[name].default if name in BY_NAME else None)
        if isinstance(v, (list, tuple)):  # a grid's axis: one value per cell
            return "{" + ", ".join(map(_fmt, v)) + "}"
        return "unset" if v is None else _fmt(v)

    batch = get("batch")
    parts = [f"width {get('width')}"] if "width" in cell else []
    parts += [
        f"{get('steps')} steps of {get('optimizer')}",
        f"lr {get('lr')} ({get('schedule')})",
        "full batch" if batch == "0" else f"batch {batch}",
        f"weight decay {get('weight_decay')}",
        f"{get('param')} parametrisation",
        f"alpha {get('alpha')}",
        f"validation share {get('val_frac')} checked every {get('eval_every')} steps",
        f"patience {get('patience')}",
        f"{get('checkpoint')} checkpoint",
        get("dtype"),
    ]
    return ", ".join(parts)
