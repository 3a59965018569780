"""Tree Grams by the node-type recursion (ntkgap.kernels.tree_gram) against
neural-tangents' kernel_fn (ntkgap.kernels.gram with hypercube_lookup=False)
at every depth 1..6, and the library's routing to it."""

import numpy as np
import pytest

from ntkgap.kernels import gram as kernels
from ntkgap.kernels import tree_gram
from ntkgap.nets.arch import NUMERICAL, parse_arch

# neural-tangents' ReLU-family NTK with b_std > 0 is off by ~5e-10..7e-9
# relative where a node sees rho = 1 (tests/test_tree_eigen.py); its
# Gauss-Hermite duals (arch.QUAD_DEG) by up to ~1e-9 (tanh, silu)
TOL = {
    "relu": 2e-8,
    "abs": 5e-8,  # measured 2.4e-8 (L = 5), 3.1e-8 (L = 6) at rho = 1
    "leaky_relu": 2e-8,
    "tanh": 1e-8,
    "silu": 1e-8,
    "softplus": 1e-10,
    "gelu": 1e-10,
}
EXACT = 1e-12

CASES = [
    (f"tree:arity=2,L={L},act={act}{extra}", kind)
    for L in range(1, 7)
    for act, extra in (("relu", ""), ("relu", ",b_std=0.0"), ("erf", ""), ("abs", ""), ("sin", ""))
    for kind in ("ntk", "nngp")
] + [
    (f"tree:arity={a},L={L},act={act}", "ntk")
    for a, L in ((2, 4), (3, 2))
    for act in ("leaky_relu", "gelu", "tanh", "silu", "softplus")
]


@pytest.mark.parametrize("spec,kind", CASES)
def test_node_recursion_gram_equals_kernel_fn(spec, kind):
    arch = parse_arch(spec)
    if not tree_gram.supported(arch):
        pytest.skip("root needs a per-entry dual and the activation has no closed form")
    rng = np.random.default_rng(3)
    x = rng.choice([-1.0, 1.0], size=(9, arch.leaves, 1))
    y = rng.choice([-1.0, 1.0], size=(6, arch.leaves, 1))
    x[1] = x[0]  # an entry at rho = 1 everywhere
    y[0] = x[0]
    ref = kernels.gram(arch, x, y, kind=kind, hypercube_lookup=False)
    ours = tree_gram.gram(arch, x, y, kind=kind)
    act = arch.spec["act"]
    tol = TOL.get(act, EXACT) if kind == "ntk" or act in NUMERICAL else EXACT
    # relative to the largest entry (b_std = 0 makes some entries ~0)
    assert np.max(np.abs(ours - ref)) <= tol * np.max(np.abs(ref))
    sym = tree_gram.gram(arch, x, kind=kind)
    assert np.array_equal(sym, sym.T)


@pytest.mark.parametrize("L", [5, 6])
def test_gram_routes_large_trees_to_the_recursion(L, monkeypatch):
    arch = parse_arch(f"tree:arity=2,L={L}")
    x = np.random.default_rng(1).choice([-1.0, 1.0], size=(5, arch.leaves, 1))
    calls = []
    real = tree_gram.gram
    monkeypatch.setattr(tree_gram, "gram", lambda *a, **k: calls.append(1) or real(*a, **k))
    K = kernels.gram(arch, x)
    assert calls and K.shape == (5, 5)


def test_per_entry_root_equals_table_root(monkeypatch):
    # L = 5 fits the root table; forcing the per-entry readout must not change a bit beyond rounding
    arch = parse_arch("tree:arity=2,L=5,act=erf")
    x = np.random.default_rng(2).choice([-1.0, 1.0], size=(20, 32, 1))
    table = tree_gram.gram(arch, x)
    monkeypatch.setattr(tree_gram, "ROOT_TABLE_MAX", 0)
    tree_gram._plan.cache_clear()
    try:
        per_entry = tree_gram.gram(arch, x)
    finally:
        tree_gram._plan.cache_clear()
    np.testing.assert_allclose(per_entry, table, rtol=1e-14, atol=0)
