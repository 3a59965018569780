"""ntkgap: exact infinite-width NTK predictors against trained networks on
compositional targets.

Importing the package is cheap: JAX and neural-tangents load (through
``ntkgap._infra.compat``, which keeps TensorFlow out and enables float64)
only when a module that needs them is imported, so the figure scripts and
the runner's bookkeeping start without paying ~1 s for JAX. A later
``import neural_tangents`` in the same process works too (an import hook
prepares it; see ``ntkgap._infra.ntshim``).
"""

from ntkgap._infra import ntshim as _ntshim
from ntkgap.errors import SpecError, UsageError  # noqa: F401

__version__ = "0.1.0"

_ntshim.install_hook()
