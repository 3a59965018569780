"""The Walsh power of ``tree`` targets by composition over the tree, under
its former name: the code is :mod:`ntkgap.targets.tree_power` (a target's
own spectrum, below the kernels, so ``ntkgap spectrum`` reads it too)."""

from __future__ import annotations

from ntkgap.targets.tree_power import (  # noqa: F401  (the names kernels import)
    _contract,
    _make_target,
    _mults,
    _push_forward,
    tree_degree_profile,
    tree_power_profile,
)
