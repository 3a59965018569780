"""JAX with float64, and neural-tangents without TensorFlow: the one module
through which ntkgap imports both (``from ntkgap._infra.compat import nt, stax``).

It enables float64 in JAX: kernel Gram matrices are ill-conditioned and
float32 Cholesky fails or loses most digits at n in the thousands. This is
the one place x64 is switched on; networks choose their own dtype. What
neural-tangents needs before it loads (and the JAX names it looks for, on
jax 0.4.38 up to the newest release) is in :mod:`ntkgap._infra.ntshim`.
"""

from __future__ import annotations

import logging
import os
import warnings

from ntkgap._infra import ntshim

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# JAX warns about absent accelerators through the logging module; the
# toolkit reports its device itself.
logging.getLogger("jax._src.xla_bridge").setLevel(logging.ERROR)

ntshim.prepare()

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

# neural-tangents 0.6.5 imports names that jax 0.4.38 deprecates (jax.core.*)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import neural_tangents as nt  # noqa: E402
    from neural_tangents import stax  # noqa: E402

ntshim.finish()

__all__ = ["jax", "nt", "stax"]
