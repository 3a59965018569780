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
moved names it imports when it loads or reads on the structured-derivative
path (see :data:`_MOVED`; jax 0.4.38 already lacks two of them), so
:func:`prepare` puts each one back where neural-tangents looks, and only
where it is missing. It then checks that
every JAX name neural-tangents needs (:data:`NEEDED`) resolves, and raises
an ImportError naming the first one that does not, so a future JAX that
moves something else fails at import with the name instead of deep inside
neural-tangents.

After neural-tangents' ``empirical`` and ``predict`` modules load,
:func:`finish` adapts what changed signature rather than place, in those
modules' own namespaces only (JAX and scipy stay untouched for everyone
else):

- ``empirical``: two helpers are routed around ``jnp.size``/``jnp.shape``
  on a ``jax.ShapeDtypeStruct`` (deprecated in newer JAX, to become an
  error), which ``nt.empirical_ntk_fn`` reaches; structured derivatives
  (implementation 3) call ``ad.linearize`` with its jax 0.4 signature, which
  jax 0.7+ replaced (:func:`linearize_flat`), and test for
  ``jax.core.DShapedArray``, which jax 0.7+ removed with dynamic shapes,
  and wrap a function without the ``DebugInfo`` jax 0.5+ asks for
  (:func:`wrap_init`);
  implementation ``AUTO`` reads FLOPs from ``cost_analysis()``, whose
  return changed from a list to a dict (:func:`flops`).
- ``predict``: ``max_learning_rate`` calls ``scipy.linalg.eigvalsh`` with
  ``eigvals=``, which scipy 1.14 removed in favour of ``subset_by_index=``
  (:func:`eigvalsh`).

:func:`prepare` also gives ``jax.core.Primitive`` back the
``map_primitive = False`` flag that structured derivatives read and jax
0.7+ dropped (no map primitives remain).

:func:`install_hook` (called by ``import ntkgap``, and cheap: it imports
nothing) makes a later ``import neural_tangents`` anywhere in the process
run :func:`prepare` first and :func:`finish` as each adapted module loads, so
``import ntkgap, neural_tangents`` works in a notebook without ntkgap's
kernel modules having been loaded.
"""

from __future__ import annotations

import importlib
import importlib.abc
import inspect
import sys
import types
import warnings

_PREPARED = False
_EMPIRICAL = "neural_tangents._src.empirical"
_PREDICT = "neural_tangents._src.predict"
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
    # structured derivatives (empirical_ntk_fn implementation 3) read these
    ("jax.interpreters.ad", "source_info_util", "jax._src"),
    ("jax.interpreters.ad", "reducing_transposes", "jax._src.interpreters.ad"),
    ("jax.interpreters.ad", "config", "jax"),
)

# (class, attribute, the value it had): attributes neural-tangents reads that
# newer JAX dropped; restored with that value on the class where missing.
_DROPPED = (("jax.extend.core.Primitive", "map_primitive", False),)

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
    import jax  # lazy: `import ntkgap` loads this module and must not pay ~1 s for JAX

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


def _restore_dropped_attributes() -> None:
    for cls_name, attr, value in _DROPPED:
        cls = resolve(cls_name)
        if not _has(cls, attr):
            setattr(cls, attr, value)


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
    _restore_dropped_attributes()
    _PREPARED = True


def _shape_only(tree):
    """``tree`` with each ``jax.ShapeDtypeStruct`` leaf replaced by a
    zero-stride numpy array of its shape and dtype: no memory, and
    ``jnp.size``/``jnp.shape`` accept it. Weakly typed leaves stay (a numpy
    array would lose the weak type that ``result_type`` reads)."""
    # lazy, as in _jax_version: `import ntkgap` loads this module (< 0.1 s)
    import jax
    import numpy as np

    def leaf(x):
        if isinstance(x, jax.ShapeDtypeStruct) and not x.weak_type:
            return np.broadcast_to(np.zeros((), x.dtype), x.shape)
        return x

    return jax.tree_util.tree_map(leaf, tree)


class _View(types.ModuleType):
    """A module as one neural-tangents module sees it: ``overrides`` first,
    every other name read from ``base``. It replaces ``base`` only in that
    module's namespace, so JAX, scipy and everyone else keep the real one."""

    def __init__(self, base: types.ModuleType, **overrides):
        super().__init__(base.__name__, base.__doc__)
        self.__dict__.update(overrides, _view_base=base)

    def __getattr__(self, name):
        return getattr(self.__dict__["_view_base"], name)


class _OutTangent:
    """Per output, what jax 0.4's ``ad.linearize`` returned (a partial
    value): known exactly when the output's tangent is a symbolic zero."""

    __slots__ = ("_zero",)

    def __init__(self, zero: bool):
        self._zero = zero

    def is_known(self) -> bool:
        return self._zero


class _NoDynamicShapes:
    """Stands for ``jax.core.DShapedArray`` (dynamic shapes, removed in jax
    0.7): no abstract value is an instance of it, as none can be there."""


def takes_primals_positionally(linearize) -> bool:
    """Whether ``linearize`` has jax 0.4's signature
    ``(traceable, *primals, **kwargs)`` (newer: ``(traceable, primals_ft,
    has_aux=False, is_vjp=False)``).

    Args:
        linearize: a JAX ``ad.linearize``.

    Returns:
        True for the old, positional signature.
    """
    kinds = [p.kind for p in inspect.signature(linearize).parameters.values()]
    return inspect.Parameter.VAR_POSITIONAL in kinds


def linearize_flat(fun, *primals, has_aux: bool = False):
    """jax 0.4's ``ad.linearize(fun, *primals)`` on a newer JAX, as
    neural-tangents' structured derivatives call it.

    Args:
        fun: a ``linear_util.WrappedFun`` of flat arrays to a flat list.
        *primals: the flat inputs.
        has_aux: must be False (neural-tangents never asks for aux).

    Returns:
        ``(primals_out, out_tangents, jaxpr, consts)``: the flat outputs, one
        :class:`_OutTangent` per output, the linear jaxpr (its inputs the
        tangents, its outputs the non-zero output tangents) and its consts.
    """
    if has_aux:
        raise NotImplementedError("ntkgap's linearize_flat: has_aux=True")
    flat_tree = resolve("jax._src.tree_util.FlatTree")
    linearize = resolve("jax._src.interpreters.ad.linearize")
    out, zeros, jaxpr, consts = linearize(fun.call_wrapped, flat_tree.flatten(primals))
    return list(out), [_OutTangent(z) for z in zeros], jaxpr, consts


def wrap_init(f, params=None, *, debug_info=None):
    """``linear_util.wrap_init`` with the ``DebugInfo`` that jax 0.5+ asks
    for (without one it warns, deprecated, to become an error); neural-
    tangents' structured derivatives pass none.

    Args:
        f: the function to wrap.
        params: its static keyword parameters.
        debug_info: a ``jax.extend.core.DebugInfo``; by default one naming
            ``f`` with unknown argument names.

    Returns:
        The ``WrappedFun``.
    """
    if debug_info is None:
        info = resolve("jax.extend.core.DebugInfo")
        name = getattr(f, "__qualname__", type(f).__name__)
        debug_info = info("neural_tangents structured derivatives", name, None, None)
    return resolve("jax.extend.linear_util.wrap_init")(f, params, debug_info=debug_info)


def eigvalsh(a, b=None, *, eigvals=None, **kwargs):
    """``scipy.linalg.eigvalsh`` that also takes the ``eigvals=(lo, hi)``
    keyword scipy 1.14 removed (it is ``subset_by_index`` since scipy 1.5).

    Args:
        a: Hermitian matrix.
        b: optional positive definite right-hand matrix.
        eigvals: indices ``(lo, hi)`` of the ascending eigenvalues wanted.
        **kwargs: passed to ``scipy.linalg.eigvalsh``.

    Returns:
        The selected eigenvalues, ascending.
    """
    import scipy.linalg  # only on the path that needs it (import cost)

    if eigvals is not None:
        kwargs["subset_by_index"] = eigvals
    return scipy.linalg.eigvalsh(a, b, **kwargs)


def flops(f, optimize: bool, *args, **kwargs) -> float:
    """FLOPs XLA estimates for ``jax.jit(f)`` (neural-tangents' ``AUTO``
    implementation picks by it): ``Compiled.cost_analysis()`` returned a
    one-element list up to jax 0.4.x and returns the dict itself since.

    Args:
        f: the function.
        optimize: estimate after XLA's optimisations (compile) or before.
        *args: its arguments.
        **kwargs: its keyword arguments.

    Returns:
        The ``"flops"`` entry of the cost analysis.
    """
    import jax  # neural-tangents has loaded it by now (import cost)

    lowered = jax.jit(f).lower(*args, **kwargs)
    analysis = lowered.compile().cost_analysis() if optimize else lowered.cost_analysis()
    if isinstance(analysis, (list, tuple)):
        (analysis,) = analysis
    return analysis["flops"]


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
    mod._get_flops = flops
    if not takes_primals_positionally(mod.ad.linearize):
        mod.ad = _View(mod.ad, linearize=linearize_flat)
    if "debug_info" in inspect.signature(mod.lu.wrap_init).parameters:
        mod.lu = _View(mod.lu, wrap_init=wrap_init)
    if not _has(mod.core, "DShapedArray"):
        mod.core = _View(mod.core, DShapedArray=_NoDynamicShapes)
    setattr(mod, _PATCHED, True)


def _patch_predict(mod: types.ModuleType) -> None:
    if getattr(mod, _PATCHED, False):
        return
    linalg = importlib.import_module("scipy.linalg")
    if "eigvals" not in inspect.signature(linalg.eigvalsh).parameters:
        mod.sp = _View(mod.sp, linalg=_View(linalg, eigvalsh=eigvalsh))
    setattr(mod, _PATCHED, True)


# neural-tangents module -> what adapts it once it has executed
_PATCHES = {_EMPIRICAL: _patch_empirical, _PREDICT: _patch_predict}


def finish() -> None:
    """After neural-tangents has loaded: adapt its ``empirical`` and
    ``predict`` modules (module docstring). Idempotent; skips a module not
    yet imported."""
    for name, patch in _PATCHES.items():
        mod = sys.modules.get(name)
        if mod is not None:
            patch(mod)


class _FinishingLoader(importlib.abc.Loader):
    """Wraps the loader of a neural-tangents module named in
    :data:`_PATCHES` so that its adapter runs as soon as the module has
    executed; the hook leaves once every such module is adapted."""

    def __init__(self, loader, patch):
        self._loader = loader
        self._patch = patch

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._patch(module)
        if all(name in sys.modules for name in _PATCHES):
            uninstall_hook()

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _Hook(importlib.abc.MetaPathFinder):
    """Runs :func:`prepare` when neural-tangents is first imported, lets the
    ordinary finders load it, and wraps the loaders of the modules that
    :func:`finish` adapts (:class:`_FinishingLoader`)."""

    def find_spec(self, name, path=None, target=None):
        if name == "neural_tangents":
            prepare()
        elif name in _PATCHES:
            for finder in sys.meta_path:
                if finder is self:
                    continue
                spec = getattr(finder, "find_spec", lambda *a: None)(name, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _FinishingLoader(spec.loader, _PATCHES[name])
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
