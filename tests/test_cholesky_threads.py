"""A large Gram's Cholesky runs on NTKGAP_CHOLESKY_THREADS BLAS threads (default 1),
a small one on whatever the process has; the factors equal numpy's either way, and a
bad value of the variable stops ``ntkgap run`` before any work, in one line."""

import json
import os

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from ntkgap.kernels import krr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _blas_threads():
    return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})


def _spd(n, seed=0):
    x = np.random.default_rng(seed).standard_normal((n, 8))
    return x @ x.T / 8 + np.eye(n)


@pytest.fixture
def seen(monkeypatch):
    """Records the BLAS thread counts in effect inside each Cholesky call."""
    calls = []
    for name in ("cho_factor", "cholesky"):
        real = getattr(krr.sla, name)

        def spy(*a, _real=real, **kw):
            calls.append(_blas_threads())
            return _real(*a, **kw)

        monkeypatch.setattr(krr.sla, name, spy)
    monkeypatch.setattr(krr, "SERIAL_FROM", 64)  # small matrices stand for large ones
    return calls


@pytest.mark.parametrize("value,expected", [(None, 1), ("2", 2)])
def test_a_large_factor_and_its_extension_run_on_the_configured_threads(
    seen, monkeypatch, value, expected
):
    if value is None:
        monkeypatch.delenv("NTKGAP_CHOLESKY_THREADS", raising=False)
    else:
        monkeypatch.setenv("NTKGAP_CHOLESKY_THREADS", value)
    K = _spd(200)
    with threadpool_limits(3, user_api="blas"):
        f = krr.factor(K[:120, :120])
        g = krr.extend(f, K[:120, 120:], K[120:, 120:])
        outside = _blas_threads()
    assert seen == [[expected], [expected]]
    assert outside == [3]  # the limit ends with the call
    np.testing.assert_allclose(np.tril(g.c), np.linalg.cholesky(K), rtol=0, atol=1e-12)


def test_a_small_factor_keeps_the_threads_it_is_called_with(seen):
    K = _spd(40)
    with threadpool_limits(3, user_api="blas"):
        f = krr.factor(K)
    assert seen == [[3]]
    np.testing.assert_allclose(np.tril(f.c), np.linalg.cholesky(K), rtol=0, atol=1e-12)


@pytest.mark.parametrize("value", ["one", "0", "-2"])
def test_a_bad_thread_count_stops_run_in_one_line(cli, value, tmp_path):
    config = os.path.join(ROOT, "experiments", "e1_spectra.toml")
    r = cli("run", config, "--json", cwd=tmp_path, env={"NTKGAP_CHOLESKY_THREADS": value})
    assert r.returncode == 2, r.stderr
    line = f"NTKGAP_CHOLESKY_THREADS={value!r} must be an integer >= 1"
    assert r.stderr.strip().splitlines() == [f"ntkgap: error: {line}"]
    assert json.loads(r.stdout) == {"error": line, "status": 2}
    assert os.listdir(tmp_path) == []
