"""JAX with float64, and neural-tangents without TensorFlow: the one module
through which ntkgap imports both (``from ntkgap._infra.compat import nt, stax``).

It enables float64 in JAX: kernel Gram matrices are ill-conditioned and
float32 Cholesky fails or loses most digits at n in the thousands. This is
the one place x64 is switched on; networks choose their own dtype. What
neural-tangents needs before it loads (and the JAX names it looks for, on
jax 0.4.38 up to the newest release) is in :mod:`ntkgap._infra.ntshim`.
"""

from __future__ import annotations

import functools
import logging
import os
import warnings

from ntkgap._infra import config, ntshim

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# JAX warns about absent accelerators through the logging module; the
# toolkit reports its device itself.
logging.getLogger("jax._src.xla_bridge").setLevel(logging.ERROR)

ntshim.prepare()

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)


def _compilation_cache(folder: str | None) -> None:
    """Every compiled program into the persistent cache at ``folder`` (None:
    off): a search's programs are compiled once across worker processes and
    runs, not once per process (``config.jax_cache_dir``)."""
    if folder is None:
        return
    jax.config.update("jax_compilation_cache_dir", folder)
    # the small programs too: a search compiles hundreds, each well under a second
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


_compilation_cache(config.jax_cache_dir())

# neural-tangents 0.6.5 imports names that jax 0.4.38 deprecates (jax.core.*)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import neural_tangents as nt  # noqa: E402
    from neural_tangents import stax  # noqa: E402

ntshim.finish()

# Newer XLA CPU compilers hand chains of float64 elementwise ops to YNNPACK
# fusions, which run on one thread: tree-network NTK Grams (n x n x position
# arrays through ConvLocal kernels) took ~2x as long on 2 cores as on jax
# 0.4.38. Kernel code compiles without them where XLA has the option.
_NO_YNN_FUSIONS = {"xla_cpu_experimental_ynn_fusion_type": ""}


@functools.cache
def kernel_compiler_options() -> dict | None:
    """XLA compiler options for jitted kernel (Gram) code on this jaxlib.

    Returns:
        ``compiler_options`` for ``jax.jit``: YNNPACK fusions off where this
        XLA knows the option, else None (jax 0.4.38 has no such fusions).
    """
    try:
        jax.jit(lambda v: v + 1, compiler_options=_NO_YNN_FUSIONS).lower(0.0).compile()
    except jax.errors.JaxRuntimeError:
        return None
    return dict(_NO_YNN_FUSIONS)


__all__ = ["jax", "kernel_compiler_options", "nt", "stax"]
