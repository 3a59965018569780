"""pytest plugin for neural-tangents' own tests (run by ``run.py``, loaded
with ``-p plugin``): neural-tangents goes through ntkgap's shim, and the
tests that ``peer.toml`` excludes on this stack are deselected by id.

``import ntkgap`` installs the shim's import hook
(:func:`ntkgap._infra.ntshim.install_hook`) before any test module imports
neural-tangents, so the peer tests exercise the library exactly as ntkgap
loads it. An exclusion whose id no longer matches a collected test fails the
full run of its file, so the list cannot go stale.

The tests' own helpers (``tests/test_utils.py``) and ``predict_test.py``
call ``jax.tree_map``, which jax 0.6 removed (``jax.tree_util.tree_map`` is
the same function). Only in this test process, the plugin puts it back
where missing: the library does not use it, so ntkgap's shim does not.
"""

import pathlib
import tomllib
import warnings

import pytest

import ntkgap  # noqa: F401  (installs the neural-tangents shim's import hook)

PEER_TOML = pathlib.Path(__file__).with_name("peer.toml")


def pytest_configure(config):
    """Give the tests' helpers ``jax.tree_map`` where JAX dropped it."""
    import jax  # after ntkgap (import cost: only in the peer test process)

    with warnings.catch_warnings():  # jax 0.4.x warns that it is deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        if not hasattr(jax, "tree_map"):
            jax.tree_map = jax.tree_util.tree_map


def exclusions(jax_version: str) -> dict[str, str]:
    """The peer tests ``peer.toml`` excludes on a JAX version.

    Args:
        jax_version: ``jax.__version__`` of the stack under test.

    Returns:
        Test id -> reason, for every id of each ``[[exclude]]`` entry whose
        ``jax`` list names ``jax_version`` (or ``"all"``).
    """
    table = tomllib.loads(PEER_TOML.read_text())
    return {
        test_id: e["reason"]
        for e in table.get("exclude", [])
        if jax_version in e["jax"] or "all" in e["jax"]
        for test_id in e["ids"]
    }


def pytest_collection_modifyitems(config, items):
    import jax  # after ntkgap: the shim decides what neural-tangents sees

    excluded = exclusions(jax.__version__)
    keep = [item for item in items if item.nodeid not in excluded]
    dropped = [item for item in items if item.nodeid in excluded]
    # only for the files collected, and not under -k/-m (a partial run)
    files = {item.nodeid.split("::")[0] for item in items}
    stale = {i for i in excluded if i.split("::")[0] in files} - {i.nodeid for i in items}
    if stale and not (config.option.keyword or config.option.markexpr):
        raise pytest.UsageError(
            f"peer.toml excludes tests that were not collected on jax {jax.__version__}: "
            + ", ".join(sorted(stale))
        )
    config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_report_header(config):
    import jax

    n = len(exclusions(jax.__version__))
    return f"neural-tangents peer tests on jax {jax.__version__}: {n} excluded (peer.toml)"
