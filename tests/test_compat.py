"""neural-tangents 0.6.5 on the installed JAX: it imports through
ntkgap._infra.compat (and beside a plain ``import ntkgap``), every JAX name it
needs resolves to the object JAX itself keeps, a name JAX no longer has
fails loudly with that name, and each adapter the shim installs where a
signature changed (structured derivatives' linearize, AUTO's FLOPs,
max_learning_rate's eigvalsh) agrees with an independent reference."""

import inspect
import pathlib
import subprocess
import sys
import tomllib
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


# Jacobian contraction, NTK-vector products, structured derivatives
@pytest.mark.parametrize("impl", [1, 2, 3])
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
        "k = nt.empirical_ntk_fn(f, vmap_axes=0, implementation=3)(x, x, p)\n"
        "print(k.shape, nt.predict.max_learning_rate(k) > 0)\n"
        "from ntkgap._infra import ntshim\n"
        "assert ntshim._HOOK not in sys.meta_path\n"
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "(2, 2) True"


def test_structured_derivatives_linearize_is_the_jacobian():
    # neural-tangents' empirical module calls ad.linearize with jax 0.4's
    # signature: on newer JAX the shim's linearize_flat, else JAX's own
    from neural_tangents._src import empirical

    a = np.random.default_rng(2).standard_normal((3, 4))
    x = np.random.default_rng(3).standard_normal(4)
    y = np.random.default_rng(4).standard_normal(2)

    def f(u, v):
        return [jax.numpy.tanh(a @ u), 2.0 * v, jax.numpy.ones(2)]

    wrapped = empirical.lu.wrap_init(f)  # as neural-tangents wraps it
    out, pvals, jaxpr, consts = empirical.ad.linearize(wrapped, x, y)
    ref = f(x, y)
    for o, r in zip(out, ref):
        np.testing.assert_allclose(o, r, rtol=1e-15)
    # the constant output's tangent is zero (known); the linear jaxpr maps
    # tangents to the others: J_u du and 2 dv, J_u = diag(1 - tanh^2) a
    assert [p.is_known() for p in pvals] == [False, False, True]
    du, dv = np.eye(4)[1], np.array([0.5, -1.0])
    t_u, t_v = jax.core.eval_jaxpr(jaxpr, consts, du, dv)
    np.testing.assert_allclose(t_u, (1 - np.tanh(a @ x) ** 2) * (a @ du), rtol=1e-12)
    np.testing.assert_allclose(t_v, 2 * dv, rtol=1e-15)


def test_adapters_stay_inside_neural_tangents():
    # JAX's and scipy's own functions are untouched for every other caller
    import jax.interpreters.ad
    import scipy.linalg
    from neural_tangents._src import empirical, predict

    new_jax = not ntshim.takes_primals_positionally(jax.interpreters.ad.linearize)
    assert (empirical.ad.linearize is ntshim.linearize_flat) == new_jax
    assert "eigvals" not in inspect.signature(scipy.linalg.eigvalsh).parameters
    assert predict.sp.linalg.eigvalsh is ntshim.eigvalsh
    assert scipy.linalg.eigvalsh is not ntshim.eigvalsh
    assert ntshim.resolve("jax.extend.core.Primitive")("p").map_primitive is False


@pytest.mark.parametrize("n, seed", [(1, 0), (6, 1), (17, 2)])
def test_max_learning_rate_is_two_n_over_the_largest_eigenvalue(n, seed):
    # nt's docstring: 2 (1 + momentum) * size / lambda_max(NTK); lambda_max
    # from numpy's eigvalsh
    g = np.random.default_rng(seed).standard_normal((n, n + 2))
    k = g @ g.T
    lam = np.linalg.eigvalsh(k)[-1]
    np.testing.assert_allclose(nt.predict.max_learning_rate(k), 2 * n / (lam + 1e-12), rtol=1e-12)
    lr = nt.predict.max_learning_rate(k, y_train_size=3 * n, momentum=0.5)
    np.testing.assert_allclose(lr, 2 * 1.5 * 3 * n / (lam + 1e-12), rtol=1e-12)
    sub = ntshim.eigvalsh(k, eigvals=(0, n - 1))
    np.testing.assert_allclose(sub, np.linalg.eigvalsh(k), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("m, k, n", [(3, 4, 5), (1, 7, 2)])
@pytest.mark.parametrize("optimize", [False, True])
def test_flops_of_a_matmul_is_2mkn(m, k, n, optimize):
    # the AUTO implementation's FLOPs estimate; a (m, k) @ (k, n) product
    # costs m n multiply-adds of length k
    a, b = np.ones((m, k)), np.ones((k, n))
    assert ntshim.flops(lambda u, v: u @ v, optimize, a, b) == 2 * m * k * n


def test_peer_list_gives_every_exclusion_a_reason():
    # tests/nt_peer/peer.toml: the one list of neural-tangents' own tests
    # that make test-nt runs, leaves out, or deselects
    table = tomllib.loads((pathlib.Path(__file__).parent / "nt_peer" / "peer.toml").read_text())
    for f in table["file"]:
        assert f.get("run") or f.get("reason", "").strip(), f["path"]
    run = {f["path"] for f in table["file"] if f.get("run")}
    for e in table.get("exclude", []):
        assert e["ids"] and all(i.split("::")[0] in run for i in e["ids"]), e
        assert e["reason"].strip() and e["jax"], e["ids"]
