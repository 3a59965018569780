"""ntkgap: exact infinite-width NTK predictors against trained networks on
compositional targets.

Importing the package is cheap: JAX and neural-tangents load (through
``ntkgap._compat``, which keeps TensorFlow out and enables float64) only
when a module that needs them is imported, so the figure scripts and the
runner's bookkeeping start without paying ~0.7 s for JAX.
"""
from ntkgap.errors import SpecError, UsageError  # noqa: F401

__version__ = "0.1.0"
