"""The curated Python API: every function documented, ``import ntkgap``
without JAX, the names shared with library modules still reaching those
modules, the facade wired to the library (Gram eigenvalues against the
exact eigensystem), and the README's Python example executed."""

import os
import re
import subprocess
import sys

import numpy as np
from conftest import ROOT, RTOL

import ntkgap

NAMES = ["target", "arch", "spectrum", "gram", "eigensystem", "learning_curve",
         "sample_complexity", "train", "compare"]  # fmt: skip
WITH_FORMULA = ["spectrum", "gram", "eigensystem", "learning_curve", "sample_complexity"]


def test_every_api_function_has_args_and_returns():
    for name in NAMES:
        fn = getattr(ntkgap, name)
        assert callable(fn), name
        doc = fn.__doc__ or ""
        assert "Args:" in doc and "Returns:" in doc, name
        if name in WITH_FORMULA:
            assert "References:" in doc, name
    assert set(NAMES) <= set(ntkgap.API) and set(NAMES) <= set(ntkgap.__all__)


def test_import_is_cheap():
    code = (
        "import sys, ntkgap, ntkgap.nets.arch, ntkgap.runs.store; "
        "print(sorted(m for m in ('jax', 'neural_tangents', 'scipy', 'matplotlib') "
        "if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_api_functions_and_modules_have_distinct_names():
    """The API functions are plain functions; the library modules live in
    subpackages, so no name is both (the old module-class swap is gone)."""
    import types

    import ntkgap.nets.arch
    from ntkgap.runs import sample_complexity

    assert isinstance(ntkgap.arch, types.FunctionType)
    assert isinstance(ntkgap.sample_complexity, types.FunctionType)
    assert type(ntkgap) is types.ModuleType
    assert ntkgap.arch("tree:arity=2,L=2").leaves == 4
    assert ntkgap.nets.arch.parse_arch("fc:depth=1").name == "fc"
    assert sample_complexity.evaluation_cell is not None  # the runner's use of the module


def test_gram_eigenvalues_match_eigensystem():
    d = 5
    K = ntkgap.gram("fc:depth=2", f"hypercube:d={d}")
    got = np.sort(np.linalg.eigvalsh(K) / 2**d)  # uniform measure on 2^d points
    es = ntkgap.eigensystem("fc:depth=2", f"hypercube:d={d}", kmax=d)
    want = np.sort(np.repeat(es.eigenvalue, np.asarray(es.multiplicity, int)))
    # eigh's error scales with the largest eigenvalue, not each one
    np.testing.assert_allclose(got, want, rtol=RTOL[np.float64], atol=RTOL[np.float64] * want[-1])


def test_readme_python_session_runs():
    with open(os.path.join(ROOT, "README.md")) as fh:
        text = fh.read()
    section = text[text.index("\n## Python\n") :]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert 8 <= len(block.strip().splitlines()) <= 14
    exec(compile(block, "README.md", "exec"), {})
