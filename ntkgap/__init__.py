"""ntkgap: exact infinite-width NTK predictors against trained networks on
compositional targets.

Importing the package imports neural-tangents (without TensorFlow, see
``ntkgap._compat``) and enables float64 in JAX.
"""
from ntkgap import _compat  # noqa: F401  (must run before anything imports neural_tangents)
from ntkgap.errors import SpecError, UsageError  # noqa: F401

__version__ = "0.1.0"
