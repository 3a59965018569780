"""The after-kernel predictor and kernel diagnostics (ntkgap.kernels.after_kernel,
ntkgap.kernels.diagnostics) against independent references: the alignment's
definition written out with explicit centering matrices, planted kernels
whose alignment, effective rank and Walsh share are known in closed form, a
brute-force Walsh transform, a Gram from jax.jacobian solved by numpy, and
the lazy control (a centred alpha model, Chizat, Oyallon & Bach 2019): its
after kernel equals its initial kernel up to O(1/alpha)."""

import itertools

import jax
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from ntkgap.errors import UsageError
from ntkgap.kernels import after_kernel, diagnostics
from ntkgap.kernels import gram as kernels
from ntkgap.nets import training
from ntkgap.nets.arch import parse_arch
from ntkgap.nets.train_config import TrainConfig, validation_size
from ntkgap.targets import parse_target
from ntkgap.targets.split import split


def _orthogonal(n, seed):
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))[0]


def _planted(eigenvalues, seed=0):
    Q = _orthogonal(len(eigenvalues), seed)
    return (Q * np.asarray(eigenvalues, float)) @ Q.T


def test_centered_alignment_equals_its_definition_with_centering_matrices():
    rng = np.random.default_rng(0)
    n = 12
    A = rng.standard_normal((n, 5))
    K, y = A @ A.T + 0.3, rng.standard_normal(n) + 2.0
    H = np.eye(n) - np.ones((n, n)) / n
    Kc, Yc = H @ K @ H, H @ np.outer(y, y) @ H
    want = np.sum(Kc * Yc) / (np.linalg.norm(Kc) * np.linalg.norm(Yc))
    assert diagnostics.centered_alignment(K, y) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    "case,want",
    [
        ("target", 1.0),  # K = y y^T: perfectly aligned
        ("target+constant", 1.0),  # centering removes a constant kernel
        ("identity", 1 / np.sqrt(9)),  # K_c = H, ||H||_F = sqrt(n - 1)
        ("orthogonal", 0.0),  # K = v v^T with v _|_ y_c and v _|_ 1
    ],
)
def test_centered_alignment_of_planted_kernels(case, want):
    n = 10
    rng = np.random.default_rng(1)
    y = rng.standard_normal(n)
    yc = y - y.mean()
    v = rng.standard_normal(n)
    v -= v.mean()
    v -= (v @ yc) / (yc @ yc) * yc
    K = {
        "target": np.outer(y, y),
        "target+constant": np.outer(yc, yc) + 5.0,
        "identity": np.eye(n),
        "orthogonal": np.outer(v, v),
    }[case]
    assert diagnostics.centered_alignment(K, y) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize(
    "eigenvalues,participation,entropy",
    [
        ([1, 1, 1] + [0] * 7, 3.0, 3.0),  # r equal eigenvalues: both give r
        ([2.0] * 10, 10.0, 10.0),
        # a of multiplicity m, b of multiplicity r: (ma + rb)^2 / (m a^2 + r b^2)
        ([4.0] * 2 + [1.0] * 6, (8 + 6) ** 2 / (32 + 6), None),
        ([1.0] + [0.0] * 5, 1.0, 1.0),
    ],
)
def test_effective_rank_of_planted_spectra(eigenvalues, participation, entropy):
    K = _planted(eigenvalues, seed=2)
    assert diagnostics.effective_rank(K) == pytest.approx(participation, rel=1e-10)
    if entropy is not None:
        got = diagnostics.effective_rank(K, "entropy")
        assert got == pytest.approx(entropy, rel=1e-6)
    # the entropy rank is never below the participation ratio
    assert diagnostics.effective_rank(K, "entropy") >= participation * (1 - 1e-9)


def _brute_walsh(target, s, d=None):
    """f_hat(S) = mean_x f(x) prod_{j in S} x_j over the whole s-cube, by subsets
    (a target on d > s coordinates reading its first s: the rest set to +1)."""
    X = np.array(list(itertools.product([1.0, -1.0], repeat=s)))[:, ::-1]  # bit j: x_j = -1
    f = target(np.pad(X, ((0, 0), (0, (d or s) - s)), constant_values=1.0))
    subsets = list(itertools.chain.from_iterable(itertools.combinations(range(s), k)
                                                 for k in range(s + 1)))  # fmt: skip
    return X, f, {S: float(np.mean(f * np.prod(X[:, list(S)], axis=1))) for S in subsets}


@pytest.mark.parametrize("planted", [[(0,), (1, 2)], [(0,), (1,), (2,), (3,)], [(0, 1, 2, 3)]])
def test_walsh_share_of_a_planted_kernel_on_the_whole_cube(planted):
    target = parse_target("tree:d=4,L=2,arity=2,node=tanh")
    X, _, coef = _brute_walsh(target, 4)
    # K = sum_S w_S chi_S chi_S^T (distinct w_S): its top |A| eigenspace is
    # span{chi_S : S in A} on the whole cube, where the characters are orthogonal
    K = sum((1.0 + i) * np.outer(np.prod(X[:, list(S)], 1), np.prod(X[:, list(S)], 1))
            for i, S in enumerate(planted))  # fmt: skip
    weight = {S: c**2 for S, c in coef.items() if S}
    want = sum(weight.get(S, 0.0) for S in planted) / sum(weight.values())
    got = diagnostics.walsh_share(K, X, target, len(planted))
    assert got["share"] == pytest.approx(want, abs=1e-10)
    assert got["modes"] == sum(w > 1e-24 for w in weight.values())


@pytest.mark.parametrize("n, k, entries", [(40, 3, 2**22), (200, 25, 2**22), (200, 25, 2**10)])
def test_walsh_share_routes_agree_on_a_random_sample(n, k, entries, monkeypatch):
    # the mode-by-mode route and the transform route compute the same
    # captured fractions; each is checked here against the other on a
    # sample with repeated points (the scatter must add them); 2^10 entries
    # transform the 25 columns in chunks of 4
    monkeypatch.setattr(diagnostics, "TRANSFORM_ENTRIES", entries)
    target = parse_target("tree:d=12,L=3,arity=2,node=tanh")
    rng = np.random.default_rng(7)
    x = rng.choice([-1.0, 1.0], size=(n, 12))
    x[n // 2 :] = x[: n - n // 2]
    U = np.linalg.qr(rng.standard_normal((n, k)))[0]
    support, modes, _ = diagnostics.walsh_modes(target)
    idx = ((x[:, support] < 0).astype(np.int64) << np.arange(support.size)).sum(axis=1)
    a = diagnostics._captured_by_modes(U, idx, modes, support.size)
    b = diagnostics._captured_by_transform(U, idx, modes, support.size)
    assert modes.size > 1 and np.all(a > 0)
    np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-13)


def _jacobian_gram(apply_fn, params, x1, x2):
    """Gram J1 J2^T from jax.jacobian of the flattened parameters (no neural-tangents)."""
    flat, unravel = ravel_pytree(params)

    def jac(x):
        return np.asarray(jax.jacobian(lambda v: apply_fn(unravel(v), x)[:, 0])(flat))

    return jac(x1) @ jac(x2).T


def test_run_kernels_init_regression_equals_a_numpy_solve_of_the_jacobian_gram():
    # the hypercube: distinct points keep the ridgeless Gram well conditioned
    arch, target = parse_arch("fc:depth=1,act=tanh"), parse_target("tree:d=6,L=2,arity=2,node=tanh")
    n, width, n_test = 30, 32, 40
    variance = np.var(_brute_walsh(target, 4, d=6)[1])  # f reads 4 bits: the whole cube
    cfg = TrainConfig(steps=40, eval_every=20, lr=1e-2)
    out = training.train(arch, width, target, n, seeds=[3], cfg=cfg, n_test=n_test,
                         return_params=True)  # fmt: skip
    p0, p1 = out["params_init"][0], out["params_final"][0]
    got = after_kernel.run_kernels(arch, width, target, n, seed=3, params_init=p0,
                                   params_final=p1, cfg=cfg, n_test=n_test)  # fmt: skip
    sp = split(target, n, seed=3, n_val=validation_size(n), n_test=n_test)
    dom = target.domain
    xtr, xte = arch.inputs(dom, sp.x_train), arch.inputs(dom, sp.x_test)
    apply_fn = arch.stax(width)[1]
    for which, p in (("init_kernel", p0), ("after_kernel", p1)):
        p = jax.tree_util.tree_map(lambda a: np.asarray(a, np.float64), p)
        K = _jacobian_gram(apply_fn, p, xtr, xtr)
        pred = _jacobian_gram(apply_fn, p, xte, xtr) @ np.linalg.solve(K, sp.y_train)
        want = np.mean((pred - sp.y_test) ** 2) / variance
        assert got[f"{which}_test_mse"] == pytest.approx(want, rel=1e-8)
    assert got["weight_movement"] > 0 and got["kernel_change"] > 0
    assert 0 < got["walsh_share_init"] <= 1 and 0 < got["walsh_share_final"] <= 1


def test_train_kernels_gives_the_cli_keys_per_seed_and_their_means():
    arch, target = (
        parse_arch("tree:arity=2,L=2,act=tanh"),
        parse_target("tree:d=6,L=2,arity=2,node=tanh"),
    )
    cfg = TrainConfig(steps=30, eval_every=10, lr=1e-2)
    out = training.train(arch, 8, target, 24, seeds=[0, 1], cfg=cfg, n_test=16,
                         return_params=True)  # fmt: skip
    got = after_kernel.train_kernels(out, arch, 8, target, 24, cfg=cfg, n_test=16)
    for key in after_kernel.CLI_KEYS:
        per = got[f"{key}_per_seed"]
        assert len(per) == 2 and got[key] == pytest.approx(np.mean(per))
    share = got["kernels_per_seed"][0]
    assert 0 < share["walsh_share_init"] <= 1 and share["walsh_top_k"] >= 1
    with pytest.raises(UsageError, match="return_params"):
        after_kernel.train_kernels({"seeds": [0]}, arch, 8, target, 24)


def test_lazy_control_after_kernel_equals_initial_kernel_within_order_one_over_alpha():
    # the centred alpha (f - f0) model trained by GD on loss / alpha^2: the
    # parameters move O(1/alpha), so the kernel changes O(1/alpha)
    # on the hypercube: distinct points, a well-conditioned ridgeless Gram
    arch, target = parse_arch("fc:depth=1"), parse_target("tree:d=8,L=2,arity=2,node=tanh")
    n, width, n_test, steps = 40, 256, 100, 100
    sp = split(target, n, seed=0, n_val=validation_size(n), n_test=n_test)
    K = kernels.gram(arch, arch.inputs(target.domain, sp.x_train))
    lr = 0.5 * len(K) / np.linalg.eigvalsh(K)[-1]  # stable kernel GD
    change, mse_gap = {}, {}
    for alpha in (100.0, 1000.0, 10000.0):
        cfg = TrainConfig(steps=steps, lr=float(lr), optimizer="sgd", alpha=alpha,
                          eval_every=steps, checkpoint="last", dtype="float64")  # fmt: skip
        out = training.train(arch, width, target, n, seeds=[0], cfg=cfg, n_test=n_test,
                             return_params=True)  # fmt: skip
        r = after_kernel.run_kernels(
            arch, width, target, n, seed=0, params_init=out["params_init"][0],
            params_final=out["params_final"][0], cfg=cfg, n_test=n_test,
        )  # fmt: skip
        change[alpha] = r["kernel_change"]
        mse_gap[alpha] = abs(r["after_kernel_test_mse"] - r["init_kernel_test_mse"])
        mse_gap[alpha] /= r["init_kernel_test_mse"]
    # the stated tolerance of the lazy control: 1e-3 relative, kernel and test MSE
    assert change[1000.0] < 1e-3 and mse_gap[1000.0] < 1e-3, (change, mse_gap)
    # and it is the O(1/alpha) law once lazy: 10x the alpha, ~1/10 the change
    # (measured 10.0 from 1e3 to 1e4; 46 from 1e2 to 1e3, where the
    # second-order O(1/alpha^2) term still dominates)
    assert 5 < change[1000.0] / change[10000.0] < 20, change
    assert change[100.0] > change[1000.0], change
    # measured: kernel change 1.1e-3, 2.3e-5, 2.3e-6 and relative test-MSE gap
    # 1.7e-3, 2.2e-5, 2.2e-6 at alpha = 1e2, 1e3, 1e4
