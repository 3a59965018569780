"""Compatibility names for code written before the runner was split (#25).

The runner's four jobs now live in their own modules:
:mod:`ntkgap.runs.config` (reading, checking and expanding configs),
:mod:`ntkgap.runs.store` (the results store), :mod:`ntkgap.runs.registry`
and :mod:`ntkgap.runs.methods` (the methods), :mod:`ntkgap.runs.executors`
(computing cells: local, process pool, Dask). Import from those; this
module only re-exports their names for code still in flight, and goes once
nothing imports it.
"""

from ntkgap.runs.config import PROFILES, check_cell_sizes, expand, load_config
from ntkgap.runs.executors import run
from ntkgap.runs.methods import run_cell, run_cells
from ntkgap.runs.registry import METHODS, cost
from ntkgap.runs.store import cell_key, cell_path, failure, load_result, lr_choices, results

_path = cell_path
_cost = cost
_check_cell_sizes = check_cell_sizes

__all__ = [
    "METHODS",
    "PROFILES",
    "cell_key",
    "cell_path",
    "check_cell_sizes",
    "cost",
    "expand",
    "failure",
    "load_config",
    "load_result",
    "lr_choices",
    "results",
    "run",
    "run_cell",
    "run_cells",
]
