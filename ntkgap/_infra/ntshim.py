"""What neural-tangents needs in place before it is imported: a placeholder
for ``neural_tangents.experimental`` (which would import TensorFlow), and
the JAX names neural-tangents 0.6.5 looks for where it looks for them.

``neural_tangents/__init__.py`` (0.6.5, the last release) begins with
``from . import experimental``, and ``neural_tangents.experimental`` imports
TensorFlow and tf2jax for TF-to-JAX utilities (``empirical_ntk_fn_tf``)
that ntkgap never uses. Installing TensorFlow costs ~2 GB and ~7 s on every
import, so the lock installs neural-tangents with ``--no-deps`` and
:func:`prepare` registers an empty placeholder in ``sys.modules`` first.
Touching any attribute of it raises an ImportError that says why.

:func:`install_hook` (called by ``import ntkgap``, and cheap: it imports
nothing) makes a later ``import neural_tangents`` anywhere in the process
run :func:`prepare` first, so ``import ntkgap, neural_tangents`` works in a
notebook without ntkgap's kernel modules having been loaded.
"""

from __future__ import annotations

import importlib.abc
import sys
import types

_PREPARED = False


class _NoExperimental(types.ModuleType):
    """Stand-in for ``neural_tangents.experimental`` (TensorFlow utilities)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise ImportError(
            "neural_tangents.experimental needs TensorFlow, which ntkgap does "
            "not install (see ntkgap/_infra/ntshim.py)"
        )


def prepare() -> None:
    """Make ``import neural_tangents`` work: idempotent."""
    global _PREPARED
    if _PREPARED:
        return
    if "neural_tangents" not in sys.modules:
        sys.modules.setdefault(
            "neural_tangents.experimental", _NoExperimental("neural_tangents.experimental")
        )
    _PREPARED = True


class _Hook(importlib.abc.MetaPathFinder):
    """Runs :func:`prepare` when neural-tangents is first imported, then
    lets the ordinary finders load it."""

    def find_spec(self, name, path=None, target=None):
        if name == "neural_tangents":
            uninstall_hook()
            prepare()
        return None


_HOOK = _Hook()


def install_hook() -> None:
    if "neural_tangents" not in sys.modules and _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)


def uninstall_hook() -> None:
    if _HOOK in sys.meta_path:
        sys.meta_path.remove(_HOOK)
