"""The experiment methods, declared once: each method's parameters (kind,
range, default), its relative cost and whether it stores cells of its own.

This module declares; :mod:`ntkgap.runs.methods` computes. Every default a
cell may omit is declared here (the training fields' defaults come from
:mod:`ntkgap.nets.train_config`), and :func:`fill` is the one place that
writes them into a cell: configs are expanded into filled cells
(:func:`ntkgap.runs.config.expand`), cells are stored filled and keyed by
their filled form (:func:`ntkgap.runs.store.cell_key`), so no reader
restates a default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ntkgap.nets import train_config

#: marks a parameter a cell must give (no default)
REQUIRED = object()
#: marks an optional parameter that has no default written into cells: a
#: cell that omits it keeps the key it had before the parameter existed
ABSENT = object()


@dataclass(frozen=True)
class Param:
    """One parameter of a method: its kind, range, default and whether it
    is one cell's list (never expanded into cells).

    ``kind`` is ``int``, ``number``, ``ridge`` (a number >= 0 or ``tuned``),
    ``eps`` (a number in (0, 1)), ``seeds`` (a non-empty list of integers
    >= 0), ``lrs`` (a learning rate or a list chosen among on validation),
    ``target``, ``arch``, ``domain`` (spec strings), ``train`` (a field of
    :mod:`ntkgap.nets.train_config`) or ``choice`` (one of ``choices``, when
    given).
    """

    kind: str
    min: int = 1
    default: Any = REQUIRED
    per_cell_list: bool = False
    choices: tuple = ()


def _unit_cost(cell: dict) -> float:
    return 1.0


@dataclass(frozen=True)
class Method:
    """An experiment method: its parameters, its cost model (a function of
    a filled cell, relative units) and whether computing a cell stores cells
    of its own (a search's evaluations)."""

    name: str
    params: Mapping[str, Param]
    cost: Callable[[dict], float] = _unit_cost
    needs_experiment: bool = False

    @property
    def lists(self) -> set:
        """The parameters whose list value is one cell's, never a grid axis."""
        return {k for k, p in self.params.items() if p.per_cell_list}


METHODS: dict[str, Method] = {}


def declare(name: str, cost=None, needs_experiment: bool = False, **params: Param) -> Method:
    """Declares experiment method ``name`` in METHODS.

    Args:
        name: the method's name, as configs give it.
        cost: a function of a filled cell estimating its relative cost
            (default 1.0).
        needs_experiment: whether computing a cell stores cells of its own.
        **params: the method's parameters, each a Param.

    Returns:
        the Method.
    """
    METHODS[name] = Method(name, params, cost or _unit_cost, needs_experiment)
    return METHODS[name]


def fill(cell: dict) -> dict:
    """The cell with every parameter it omits set to its method's default.

    Idempotent; a cell of an unknown method, required parameters and
    ``ABSENT`` ones are left as they are (validation reports the missing).

    Args:
        cell: a cell dict with its ``method``.

    Returns:
        a new dict: the cell's own values, then the declared defaults of the
        parameters it omits.
    """
    meth = METHODS.get(cell.get("method"))
    if meth is None:
        return dict(cell)
    out = dict(cell)
    for key, prm in meth.params.items():
        if key not in out and prm.default is not REQUIRED and prm.default is not ABSENT:
            out[key] = prm.default
    return out


def cost(cell: dict) -> float:
    """A cell's relative cost (its method's cost model on the filled cell).

    Args:
        cell: a cell dict.

    Returns:
        float, relative units (the local executor starts the costliest first).
    """
    return METHODS[cell["method"]].cost(fill(cell))


def _train_params() -> dict[str, Param]:
    return {f.name: Param("train", default=f.default) for f in train_config.FIELDS}


def _net_cost(cell):
    return cell["steps"] * cell["n"] ** 0.3 * cell["width"] ** 0.5


#: what a kernel or net cell fits and scores: absent, the scalar label and the
#: test MSE relative to its variance; ``classification``, an rhm target's
#: one-hot labels (n_c outputs, ``ntkgap.targets.rhm.OneHotLabels``) and,
#: for a search, the test classification error (argmax) against ``eps``
CLASSIFICATION = "classification"
TARGET_ERRORS = (CLASSIFICATION,)
_ERROR_PARAM = dict(target_error=Param("choice", default=ABSENT, choices=TARGET_ERRORS))

_SEARCH_PARAMS = dict(
    target=Param("target"),
    arch=Param("arch"),
    eps=Param("eps"),
    seeds=Param("seeds", per_cell_list=True),
    n_min=Param("int"),
    n_max=Param("int"),
    resolution=Param("number", default=1.25),
    n_test=Param("int", default=2000),
    **_ERROR_PARAM,
)

declare("spectrum", target=Param("target"))
declare("eigen", arch=Param("arch"), domain=Param("domain"), kmax=Param("int"))
declare(
    "ntk",
    cost=lambda cell: cell["n"] ** 2 / 50,
    target=Param("target"),
    arch=Param("arch"),
    n=Param("int"),
    seed=Param("int", min=0),
    n_test=Param("int", default=2000),
    ridge=Param("ridge", default=0.0),
    **_ERROR_PARAM,
)
declare(
    "theory",
    target=Param("target"),
    arch=Param("arch"),
    n=Param("int", per_cell_list=True),
    eps=Param("eps", default=[], per_cell_list=True),
)
declare(
    "net",
    cost=_net_cost,
    target=Param("target"),
    arch=Param("arch"),
    width=Param("int"),
    n=Param("int"),
    seeds=Param("seeds", per_cell_list=True),
    n_test=Param("int", default=2000),
    **_train_params(),
    **_ERROR_PARAM,
)
declare(
    "ntk_search",
    cost=lambda cell: cell["n_max"] ** 2 / 50,
    needs_experiment=True,
    ridge=Param("ridge", default=0.0),
    **_SEARCH_PARAMS,
)
declare(
    "net_search",
    cost=lambda cell: 20 * cell["steps"] * cell["n_max"] ** 0.3 * cell["width"] ** 0.5,
    needs_experiment=True,
    width=Param("int"),
    sweep_n=Param("int", default=0),
    **{
        **_train_params(),
        "lr": Param("lrs", default=train_config.BY_NAME["lr"].default, per_cell_list=True),
    },
    **_SEARCH_PARAMS,
)
declare("exact_sawtooth", L=Param("int"))

#: the predictors an ``after_kernel_search`` can search: the trained net's
#: final empirical NTK, its initial one, or the net itself (same trainings)
AFTER_KERNEL_PREDICTORS = ("after", "init", "net")

declare(
    "after_kernel",
    cost=lambda cell: 2 * _net_cost(cell) + (cell["n"] + cell["n_test"]) * cell["n"] / 50,
    ridge=Param("ridge", default=0.0),
    **{k: v for k, v in METHODS["net"].params.items() if k not in _ERROR_PARAM},
)
declare(
    "after_kernel_search",
    cost=lambda cell: 2 * METHODS["net_search"].cost(cell) + cell["n_max"] ** 2 / 25,
    needs_experiment=True,
    kernel=Param("choice", default=AFTER_KERNEL_PREDICTORS[0]),
    ridge=Param("ridge", default=0.0),
    **{k: v for k, v in METHODS["net_search"].params.items() if k not in _ERROR_PARAM},
)
