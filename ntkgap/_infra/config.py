"""Every environment variable ntkgap reads, read and validated here alone.

Each is read when asked for (not at import), so a test or a parent process
may set it before the work starts; ``NTKGAP_JAX_CACHE`` alone is read when
``ntkgap._infra.compat`` loads, since JAX must know it before it compiles. A bad value raises
:class:`~ntkgap.errors.UsageError` naming the variable and what is allowed.

| variable | meaning | default |
|---|---|---|
| ``NTKGAP_RESULTS`` | folder of experiment results (``--results`` overrides) | ``results`` |
| ``NTKGAP_PROFILE`` | profile whose cells figures and report read | none (all cells) |
| ``NTKGAP_PROGRESS`` | ``1``/``0``: progress bars on/off | on when stderr is a terminal |
| ``NTKGAP_MEMORY_LIMIT`` | bytes (or K/M/G suffix) a request may use | 80% of available |
| ``NTKGAP_TRAIN_WORKERS`` | threads that share the vmapped seeds | the available cores |
| ``NTKGAP_CHOLESKY_THREADS`` | BLAS threads a large Gram's Cholesky may use | ``1`` |
| ``NTKGAP_JAX_CACHE`` | JAX compilation cache folder; ``off``: none | ``~/.cache/ntkgap/jax`` |
| ``NTKGAP_FIGURES`` | folder the figure scripts draw into | ``figures`` |
| ``NTKGAP_REPORT`` | path of the report | ``REPORT.md`` |
"""

from __future__ import annotations

import contextlib
import os

from ntkgap.errors import UsageError

#: the run profiles, smallest first: quick (the default, <= 15 minutes), paper
#: (<= 75 minutes: every seed claim) and full (the extended grids)
PROFILES = ("quick", "paper", "full")
#: a profile that holds another's cells besides its own table's: paper runs
#: the quick cells and adds its [paper] grids, so quick's results are reused
INCLUDES = {"paper": ("quick",)}
VARIABLES = (
    "NTKGAP_RESULTS",
    "NTKGAP_PROFILE",
    "NTKGAP_PROGRESS",
    "NTKGAP_MEMORY_LIMIT",
    "NTKGAP_TRAIN_WORKERS",
    "NTKGAP_CHOLESKY_THREADS",
    "NTKGAP_JAX_CACHE",
    "NTKGAP_FIGURES",
    "NTKGAP_REPORT",
)


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    return None if value is None else value.strip()


def _path(name: str, default: str) -> str:
    value = _raw(name)
    if value is None:
        return default
    if not value:
        raise UsageError(f"{name} is empty (give a path, or unset it for {default!r})")
    return value


def results_dir() -> str:
    return _path("NTKGAP_RESULTS", "results")


def set_results_dir(path: str) -> None:
    """The ``--results DIR`` flag: overrides NTKGAP_RESULTS for this process
    and the workers it starts (they inherit the environment)."""
    if not isinstance(path, str) or not path.strip():
        raise UsageError("--results is empty (give a folder)")
    os.environ["NTKGAP_RESULTS"] = path.strip()


def set_memory_limit(nbytes: int) -> None:
    """A run's memory budget, fixed for this process (and the workers it
    starts) as NTKGAP_MEMORY_LIMIT, in bytes."""
    os.environ["NTKGAP_MEMORY_LIMIT"] = str(int(nbytes))


@contextlib.contextmanager
def override(**values):
    """Set NTKGAP_<NAME> variables for the duration of a block, then restore
    them (``override(results="out/results", profile="quick")``)."""
    names = {f"NTKGAP_{k.upper()}": v for k, v in values.items()}
    unknown = sorted(set(names) - set(VARIABLES))
    if unknown:
        raise UsageError(
            f"{unknown[0]} is not an ntkgap variable (allowed: {', '.join(VARIABLES)})"
        )
    saved = {k: os.environ.get(k) for k in names}
    os.environ.update({k: str(v) for k, v in names.items()})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def figures_dir(default: str) -> str:
    return _path("NTKGAP_FIGURES", default)


def report_path(default: str = "REPORT.md") -> str:
    return _path("NTKGAP_REPORT", default)


def profile() -> str | None:
    value = _raw("NTKGAP_PROFILE")
    if not value:
        return None
    if value not in PROFILES:
        raise UsageError(
            f"NTKGAP_PROFILE={value!r} is not allowed (allowed: {', '.join(PROFILES)})"
        )
    return value


def progress(isatty: bool) -> bool:
    value = _raw("NTKGAP_PROGRESS")
    if value is None or value == "":
        return isatty
    if value not in ("0", "1"):
        raise UsageError(f"NTKGAP_PROGRESS={value!r} is not allowed (allowed: 0, 1)")
    return value == "1"


def memory_limit() -> int | None:
    """Bytes, or None when unset (the caller uses its own default)."""
    value = _raw("NTKGAP_MEMORY_LIMIT")
    if not value:
        return None
    text = value.upper()
    scale = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}.get(text[-1], 1)
    try:
        out = int(float(text.rstrip("KMGT")) * scale)
    except ValueError:
        out = 0
    if out <= 0:
        raise UsageError(f"NTKGAP_MEMORY_LIMIT={value!r} is not a positive size like 8G")
    return out


TRAIN_WORKERS = "NTKGAP_TRAIN_WORKERS"
CHOLESKY_THREADS = "NTKGAP_CHOLESKY_THREADS"
JAX_CACHE = "NTKGAP_JAX_CACHE"


def _positive_int(name: str, value: str) -> int:
    try:
        w = int(value)
    except ValueError:
        w = 0
    if w < 1:
        raise UsageError(f"{name}={value!r} must be an integer >= 1")
    return w


def cholesky_threads() -> int:
    """BLAS threads for the Cholesky factorization of a large Gram (default 1:
    multithreaded OpenBLAS ``dpotrf`` has faulted at n ~ 16k, see
    ``ntkgap.kernels.krr``)."""
    value = _raw(CHOLESKY_THREADS)
    return _positive_int(CHOLESKY_THREADS, value) if value else 1


def jax_cache_dir() -> str | None:
    """The folder of JAX's persistent compilation cache, or None when off.

    Default ``$XDG_CACHE_HOME/ntkgap/jax`` (``~/.cache`` without it): a
    compiled program is reused by every worker process and later run instead
    of compiled again (a depth-5 tree net's first batch spent ~25 s compiling
    on one core). The cache holds compiled code only, keyed by the program, its
    compiler options and jaxlib's version, so it changes no number.
    """
    value = _raw(JAX_CACHE)
    if value is not None and value.lower() in ("off", "0", "none", ""):
        return None
    if value:
        return value
    base = _raw("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ntkgap", "jax")


def train_workers() -> int | None:
    """The requested thread count, or None when unset."""
    value = _raw(TRAIN_WORKERS)
    return _positive_int(TRAIN_WORKERS, value) if value else None
