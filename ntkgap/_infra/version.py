"""The version of the code that computes results: a hash of the numerics.

Every stored record carries it (:func:`ntkgap.runs.store.save`), so a rerun
tells results of this code from results of other code. It hashes the
contents of the package's source files, sorted by their path relative to
the package, and ``ntkgap.__version__``: the same in a checkout, an sdist or
an installed copy of one source tree. Left out are the files no cell's
numbers depend on (the layering keeps them out of the computing modules):
the root façade (``__init__.py``, ``__main__.py``, ``api.py``, ``cli*.py``),
``verdicts/`` (reads stored results, computes no cell) and anything that is
not a ``.py`` file.
"""

from __future__ import annotations

import functools
import hashlib
import pathlib

from ntkgap._version import __version__

#: the package's folder
PACKAGE = pathlib.Path(__file__).resolve().parents[1]

#: the root modules left out (the façade over the computing levels)
_ROOT_FACADE = ("__init__.py", "__main__.py", "api.py")

#: the subpackages left out
_SKIPPED_FOLDERS = ("verdicts",)

#: characters of the hex digest kept
DIGITS = 16


def _counts(rel: pathlib.PurePath) -> bool:
    """Whether a package file (its path relative to the package) is hashed."""
    if rel.suffix != ".py" or "__pycache__" in rel.parts:
        return False
    if len(rel.parts) == 1:
        return rel.name not in _ROOT_FACADE and not rel.name.startswith("cli")
    return rel.parts[0] not in _SKIPPED_FOLDERS


def source_files(package: pathlib.Path = PACKAGE) -> list[pathlib.PurePosixPath]:
    """The package's files the code version hashes, sorted by relative path.

    Args:
        package: the package folder (default: this package's).

    Returns:
        list of paths relative to ``package`` (POSIX form).
    """
    rels = (pathlib.PurePosixPath(p.relative_to(package).as_posix()) for p in package.rglob("*"))
    return sorted(r for r in rels if _counts(r) and (package / r).is_file())


def compute(package: pathlib.Path = PACKAGE, version: str = __version__) -> str:
    """The code version of a package folder, computed afresh.

    Args:
        package: the package folder.
        version: the package's ``__version__``.

    Returns:
        str, ``<version>+<DIGITS hex digits>``.
    """
    h = hashlib.sha256(f"ntkgap {version}\n".encode())
    for rel in source_files(package):
        data = (package / rel).read_bytes()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return f"{version}+{h.hexdigest()[:DIGITS]}"


@functools.cache
def code_version() -> str:
    """The code version of this process's package, computed once per process.

    Returns:
        str, as :func:`compute` gives it.
    """
    return compute()
