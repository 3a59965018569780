"""Import-time environment for neural-tangents without TensorFlow, and float64.

Why this module exists
----------------------
``neural_tangents/__init__.py`` (0.6.5, the last release) begins with
``from . import experimental``, and ``neural_tangents.experimental`` imports
TensorFlow and tf2jax for its TF-to-JAX utilities (``empirical_ntk_fn_tf``).
ntkgap never uses them. Installing TensorFlow costs ~2 GB and ~7 s on every
import, so the lock file installs neural-tangents with ``--no-deps`` and this
module registers an empty placeholder for ``neural_tangents.experimental``
in ``sys.modules`` *before* neural-tangents is imported. Touching any
attribute of the placeholder raises an ImportError that says why.

It also enables float64 in JAX: kernel Gram matrices are ill-conditioned
and float32 Cholesky fails or loses most digits at n in the thousands. This
is the one place x64 is switched on; networks choose their own dtype.
"""
from __future__ import annotations

import logging
import os
import sys
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# JAX warns about absent accelerators through the logging module; the
# toolkit reports its device itself.
logging.getLogger("jax._src.xla_bridge").setLevel(logging.ERROR)


class _NoExperimental(types.ModuleType):
    """Stand-in for ``neural_tangents.experimental`` (TensorFlow utilities)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise ImportError(
            "neural_tangents.experimental needs TensorFlow, which ntkgap does "
            "not install (see ntkgap/_compat.py)")


if "neural_tangents" not in sys.modules:
    sys.modules.setdefault("neural_tangents.experimental",
                           _NoExperimental("neural_tangents.experimental"))

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import warnings  # noqa: E402

# neural-tangents 0.6.5 imports names that jax 0.4.38 deprecates (jax.core.*)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import neural_tangents as nt  # noqa: E402,F401
    from neural_tangents import stax  # noqa: E402,F401
