"""ntkgap: exact infinite-width NTK predictors against trained networks on
compositional targets.

Importing the package is cheap: JAX and neural-tangents load (through
``ntkgap._infra.compat``, which keeps TensorFlow out and enables float64)
only when a module that needs them is imported, so the figure scripts and
the runner's bookkeeping start without paying ~1 s for JAX. A later
``import neural_tangents`` in the same process works too (importing
``ntkgap._infra.import_hook`` installs the hook; see ``ntkgap._infra.ntshim``).

This module only re-exports: the API lives in :mod:`ntkgap.api`.
"""

from ntkgap._infra import import_hook as _import_hook  # noqa: F401  (installs the nt hook)
from ntkgap._version import __version__ as __version__
from ntkgap.api import API as API
from ntkgap.api import arch as arch
from ntkgap.api import compare as compare
from ntkgap.api import domain as domain
from ntkgap.api import eigensystem as eigensystem
from ntkgap.api import gram as gram
from ntkgap.api import learning_curve as learning_curve
from ntkgap.api import predict as predict
from ntkgap.api import sample_complexity as sample_complexity
from ntkgap.api import spectrum as spectrum
from ntkgap.api import target as target
from ntkgap.api import train as train
from ntkgap.errors import SpecError as SpecError
from ntkgap.errors import UsageError as UsageError
from ntkgap.nets.train_warnings import NO_PROGRESS as NO_PROGRESS
from ntkgap.nets.train_warnings import training_warnings as training_warnings

__all__ = [
    "SpecError",
    "UsageError",
    "arch",
    "compare",
    "domain",
    "eigensystem",
    "gram",
    "learning_curve",
    "predict",
    "sample_complexity",
    "spectrum",
    "target",
    "train",
]
