"""neural-tangents 0.6.5 on the installed JAX: it imports through
ntkgap._infra.compat (and beside a plain ``import ntkgap``), every JAX name it
needs resolves to the object JAX itself keeps, and a name JAX no longer has
fails loudly with that name."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

from ntkgap._infra import ntshim
from ntkgap._infra.compat import jax, nt, stax


def _run(code):
    return subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_neural_tangents_imports_through_compat():
    assert callable(nt.empirical_ntk_fn) and callable(stax.serial)
    assert callable(nt.predict.gradient_descent_mse_ensemble)
    assert jax.config.jax_enable_x64


def test_every_name_neural_tangents_needs_resolves():
    for dotted in ntshim.NEEDED:
        assert ntshim.resolve(dotted) is not None, dotted


def test_moved_names_are_the_objects_jax_keeps_elsewhere():
    # where each name lives on jax 0.4.38 and on the newest jax, read from
    # JAX's own modules rather than from the shim's table
    import jax._src.ad_util
    import jax._src.util
    import jax.extend.core
    import jax.interpreters.ad
    import jax.util

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in ("Jaxpr", "JaxprEqn", "Literal", "Primitive", "Var"):
            assert getattr(jax.core, name) is getattr(jax.extend.core, name), name
        assert jax.util.safe_map is jax._src.util.safe_map
        assert jax.util.safe_zip is jax._src.util.safe_zip
        assert jax.interpreters.ad.zeros_like_p is jax._src.ad_util.zeros_like_p
    # neural-tangents keys its rule tables by this primitive
    from neural_tangents._src.utils import rules

    assert jax._src.ad_util.zeros_like_p in rules.JACOBIAN_RULES


def test_a_name_jax_lacks_fails_naming_it(monkeypatch):
    with pytest.raises(ImportError, match=r"jax\.core\.NoSuchName"):
        ntshim.resolve("jax.core.NoSuchName")
    with pytest.raises(ImportError, match=r"jax\.no_such_module\.f"):
        ntshim.resolve("jax.no_such_module.f")
    monkeypatch.setattr(ntshim, "_MOVED", (("jax.core", "NoSuchName", "jax.extend.core"),))
    with pytest.raises(ImportError, match=r"jax\.core\.NoSuchName.*jax\.extend\.core"):
        ntshim._restore_moved_names()


@pytest.mark.parametrize("impl", [1, 2])  # Jacobian contraction, NTK-vector products
def test_empirical_ntk_matches_explicit_jacobians_without_deprecations(impl):
    init_fn, apply_fn, _ = stax.serial(stax.Dense(16), stax.Erf(), stax.Dense(2))
    x = np.random.default_rng(0).standard_normal((5, 3))
    _, params = init_fn(jax.random.PRNGKey(1), x.shape)
    # reference: J J^T from the flattened Jacobian of every output, averaged
    # over the traced output axis (neural-tangents' trace is a mean)
    jac = jax.jacobian(lambda p: apply_fn(p, x))(params)
    J = np.concatenate(
        [np.asarray(j).reshape(5, 2, -1) for j in jax.tree_util.tree_leaves(jac)], axis=2
    )
    ref = np.einsum("iap,jap->ij", J, J) / 2
    fn = nt.empirical_ntk_fn(apply_fn, trace_axes=(-1,), vmap_axes=0, implementation=impl)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        k = np.asarray(fn(x, x, params))
    np.testing.assert_allclose(k, ref, rtol=1e-12, atol=1e-14)


def test_import_ntkgap_then_neural_tangents_works_and_loads_no_jax_early():
    r = _run(
        "import sys, ntkgap\n"
        "assert 'jax' not in sys.modules, 'import ntkgap loaded jax'\n"
        "import neural_tangents as nt, numpy as np, jax\n"
        "from neural_tangents import stax\n"
        "i, f, _ = stax.serial(stax.Dense(4), stax.Relu(), stax.Dense(1))\n"
        "x = np.ones((2, 3), np.float32)\n"
        "_, p = i(jax.random.PRNGKey(0), x.shape)\n"
        "k = nt.empirical_ntk_fn(f, vmap_axes=0, implementation=2)(x, x, p)\n"
        "print(k.shape)\n"
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "(2, 2)"
