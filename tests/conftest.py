"""Strict numerics for every test: float64 in JAX (ntkgap._infra.compat enables
it), numpy errors raised instead of warned, and a helper to run the CLI
as a user does."""

import os
import subprocess
import sys

import numpy as np
import pytest

import ntkgap._infra.compat  # noqa: F401  (enables x64 before any test builds arrays)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One memory budget for the whole suite unless the caller sets one: the
# shipped configs' largest cells are checked against it at load, and 80% of
# the memory free at that moment would make those checks depend on whatever
# else the machine runs. Tests of the guard itself set or unset it.
os.environ.setdefault("NTKGAP_MEMORY_LIMIT", "16G")

# Every shared tolerance lives here.
# dtype-keyed tolerances for comparisons against independent references
RTOL = {np.float64: 1e-8, np.float32: 1e-4}
# relative agreement of neural-tangents' kernel_fn with ntkgap.kernels.dual, by
# activation: closed forms to rounding (ReLU-like duals: nt's arccos safety
# margin costs ~1e-8 near correlation 1); stax.ElementwiseNumerical (tanh,
# silu, softplus) to its Gauss-Hermite error at arch.QUAD_DEG points
# (measured ~1e-9 for these specs, q ~ 1)
NT_KERNEL_RTOL = {
    "relu": 1e-7,
    "leaky_relu": 1e-7,
    "abs": 1e-7,
    "gelu": 1e-12,
    "erf": 1e-12,
    "sin": 1e-12,
    "tanh": 1e-7,
    "silu": 1e-7,
    "softplus": 1e-7,
}


# The longest files, longest first (their durations on 2 workers are in
# benchmarks/RESULTS.md, "Test suite"): `make test` runs the files in this order (--dist
# loadfile --no-loadscope-reorder), so the pipeline's one long fixture does
# not start last with the other worker idle (xdist's own order is by number
# of tests, which put it at the end). The others keep collection order.
FIRST = ("test_pipeline.py", "test_runner.py", "test_networks.py", "test_activations.py",
         "test_kernels.py", "test_tree_gram.py", "test_compare.py")  # fmt: skip


def pytest_collection_modifyitems(items):
    def rank(item):
        name = os.path.basename(str(item.path))
        return FIRST.index(name) if name in FIRST else len(FIRST)

    items.sort(key=rank)  # stable: each file's tests stay together and in order


@pytest.fixture(autouse=True)
def _strict_numpy():
    old = np.seterr(all="raise", under="ignore")
    yield
    np.seterr(**old)


def run_cli(*args, cwd=None, env=None, timeout=300):
    """Run ``python -m ntkgap ARGS``; returns CompletedProcess (text)."""
    e = dict(os.environ, NTKGAP_PROGRESS="0", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "ntkgap", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=e,
        timeout=timeout,
    )


@pytest.fixture
def cli():
    return run_cli
