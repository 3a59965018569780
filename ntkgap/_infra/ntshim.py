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

neural-tangents 0.6.5 was written against jax 0.4.x. Later JAX releases
moved three things it imports when it loads (see :data:`_MOVED`), so
:func:`prepare` puts each one back where neural-tangents looks, and only
where it is missing: on jax 0.4.38 nothing is changed. It then checks that
every JAX name neural-tangents needs (:data:`NEEDED`) resolves, and raises
an ImportError naming the first one that does not, so a future JAX that
moves something else fails at import with the name instead of deep inside
neural-tangents.

After neural-tangents' ``empirical`` module loads, :func:`finish` routes
two of its helpers around ``jnp.size``/``jnp.shape`` on a
``jax.ShapeDtypeStruct`` (deprecated in newer JAX, to become an error),
which ``nt.empirical_ntk_fn`` reaches.

:func:`install_hook` (called by ``import ntkgap``, and cheap: it imports
nothing) makes a later ``import neural_tangents`` anywhere in the process
run :func:`prepare` first and :func:`finish` after, so
``import ntkgap, neural_tangents`` works in a notebook without ntkgap's
kernel modules having been loaded.
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
import types
import warnings

_PREPARED = False
_EMPIRICAL = "neural_tangents._src.empirical"
_PATCHED = "_ntkgap_shape_patched"

# (where neural-tangents looks, name, where newer JAX keeps it); a missing
# module (jax.util, removed in jax 0.6) is registered empty first.
_MOVED = (
    ("jax.core", "Jaxpr", "jax.extend.core"),
    ("jax.core", "JaxprEqn", "jax.extend.core"),
    ("jax.core", "Literal", "jax.extend.core"),
    ("jax.core", "Primitive", "jax.extend.core"),
    ("jax.core", "Var", "jax.extend.core"),
    ("jax.util", "safe_map", "jax._src.util"),
    ("jax.util", "safe_zip", "jax._src.util"),
    # neural-tangents uses it only as a key of its rule tables
    ("jax.interpreters.ad", "zeros_like_p", "jax._src.ad_util"),
)

# Every JAX name neural-tangents 0.6.5 imports when it loads, plus those it
# looks up on the paths ntkgap uses (eval_context: nt.predict, stax).
NEEDED = (
    *(f"jax.core.{n}" for n in ("AbstractValue", "ShapedArray", "Value", "eval_context")),
    *(f"{mod}.{name}" for mod, name, _ in _MOVED),
    "jax.interpreters.ad.UndefinedPrimal",
    "jax.interpreters.ad.Zero",
    "jax.extend.linear_util.wrap_init",
    "jax.example_libraries.stax.serial",
    "jax.experimental.ode.odeint",
)


class _NoExperimental(types.ModuleType):
    """Stand-in for ``neural_tangents.experimental`` (TensorFlow utilities)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise ImportError(
            "neural_tangents.experimental needs TensorFlow, which ntkgap does "
            "not install (see ntkgap/_infra/ntshim.py)"
        )


def _jax_version() -> str:
    import jax

    return jax.__version__


def _module(path: str, create: bool = False) -> types.ModuleType | None:
    """The module ``path``, or None where it does not exist; with
    ``create``, an empty one registered in ``sys.modules`` and on its parent."""
    try:
        return importlib.import_module(path)
    except ImportError as err:
        if not create:
            return None
        # only a module that is absent, not one that fails while importing
        if not (isinstance(err, ModuleNotFoundError) and err.name == path):
            raise
    parent, _, child = path.rpartition(".")
    mod = types.ModuleType(path, f"{path}: restored by ntkgap for neural-tangents 0.6.5")
    sys.modules[path] = mod
    setattr(importlib.import_module(parent), child, mod)
    return mod


def _has(obj, name: str) -> bool:
    # jax 0.4.x warns on deprecated names it still has
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return hasattr(obj, name)


def _restore_moved_names() -> None:
    for where, name, home in _MOVED:
        mod = _module(where, create=True)
        if _has(mod, name):
            continue
        src = _module(home)
        if src is None or not _has(src, name):
            raise ImportError(
                f"ntkgap: neural-tangents 0.6.5 needs {where}.{name}, and jax "
                f"{_jax_version()} has it neither there nor in {home}"
            )
        setattr(mod, name, getattr(src, name))


def resolve(dotted: str):
    """The object named ``dotted`` (``package.module.attribute``), imported
    as neural-tangents would; raises ImportError naming it if it is absent.

    Args:
        dotted: full name, e.g. ``"jax.core.ShapedArray"``.

    Returns:
        The object.
    """
    path, _, name = dotted.rpartition(".")
    mod = _module(path)
    if mod is None or not _has(mod, name):
        raise ImportError(
            f"ntkgap: neural-tangents 0.6.5 needs {dotted}, which jax {_jax_version()} "
            "does not provide: ntkgap/_infra/ntshim.py must learn where it moved"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(mod, name)


def prepare() -> None:
    """Make ``import neural_tangents`` work: idempotent. Imports JAX, never
    neural-tangents.

    Raises:
        ImportError: naming the JAX symbol neural-tangents needs and the
            installed JAX lacks.
    """
    global _PREPARED
    if _PREPARED:
        return
    if "neural_tangents" not in sys.modules:
        sys.modules.setdefault(
            "neural_tangents.experimental", _NoExperimental("neural_tangents.experimental")
        )
    _restore_moved_names()
    for dotted in NEEDED:
        resolve(dotted)
    _PREPARED = True


def _shape_only(tree):
    """``tree`` with each ``jax.ShapeDtypeStruct`` leaf replaced by a
    zero-stride numpy array of its shape and dtype: no memory, and
    ``jnp.size``/``jnp.shape`` accept it. Weakly typed leaves stay (a numpy
    array would lose the weak type that ``result_type`` reads)."""
    import jax
    import numpy as np

    def leaf(x):
        if isinstance(x, jax.ShapeDtypeStruct) and not x.weak_type:
            return np.broadcast_to(np.zeros((), x.dtype), x.shape)
        return x

    return jax.tree_util.tree_map(leaf, tree)


def _patch_empirical(mod: types.ModuleType) -> None:
    if getattr(mod, _PATCHED, False):
        return
    std_basis = mod._std_basis
    unravel = mod._unravel_array_into_pytree

    def _std_basis(pytree):
        return std_basis(_shape_only(pytree))

    def _unravel_array_into_pytree(pytree, axis, arr):
        return unravel(_shape_only(pytree), axis, arr)

    mod._std_basis = _std_basis
    mod._unravel_array_into_pytree = _unravel_array_into_pytree
    setattr(mod, _PATCHED, True)


def finish() -> None:
    """After neural-tangents has loaded: route its empirical-NTK helpers
    around ``jnp.size`` on shape structs. Idempotent; does nothing before
    ``neural_tangents._src.empirical`` is imported."""
    mod = sys.modules.get(_EMPIRICAL)
    if mod is not None:
        _patch_empirical(mod)


class _FinishingLoader(importlib.abc.Loader):
    """Wraps the loader of neural-tangents' ``empirical`` module so that
    :func:`finish` runs as soon as that module has executed."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _patch_empirical(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _Hook(importlib.abc.MetaPathFinder):
    """Runs :func:`prepare` when neural-tangents is first imported, lets the
    ordinary finders load it, and wraps the loader of its ``empirical``
    module (:class:`_FinishingLoader`)."""

    def find_spec(self, name, path=None, target=None):
        if name == "neural_tangents":
            prepare()
        elif name == _EMPIRICAL:
            uninstall_hook()
            for finder in sys.meta_path:
                spec = getattr(finder, "find_spec", lambda *a: None)(name, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _FinishingLoader(spec.loader)
                    return spec
        return None


_HOOK = _Hook()


def install_hook() -> None:
    """Make a later ``import neural_tangents`` prepare itself (cheap:
    imports nothing). Does nothing once neural-tangents is loaded."""
    if "neural_tangents" not in sys.modules and _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)


def uninstall_hook() -> None:
    if _HOOK in sys.meta_path:
        sys.meta_path.remove(_HOOK)
