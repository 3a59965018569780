"""Finite networks: the exact sawtooth network, the lazy limit against the
NTK predictor, the sparse-parity witness, vmap/seed determinism."""

import contextlib
import logging
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntkgap.kernels import gram as kernels
from ntkgap.kernels import krr, ntk_predictor
from ntkgap.nets import sawtooth_net, training
from ntkgap.nets.arch import parse_arch
from ntkgap.targets import parse_target
from ntkgap.targets.domains import Circle


@pytest.mark.parametrize("L", range(1, 11))
def test_exact_sawtooth_network_equals_g_L(L):
    theta = np.linspace(0, 2 * np.pi, 200_001)[:-1]
    target = parse_target(f"sawtooth:L={L}")
    want = target(theta)
    # independent reference: the triangle wave with 2^(L-1) teeth, closed form
    v = np.mod(2 ** (L - 1) * theta / (2 * np.pi), 1.0)
    np.testing.assert_allclose(want, 0.5 - np.abs(2 * v - 1), atol=1e-12)
    got = sawtooth_net.apply(sawtooth_net.exact_params(L), Circle.angle(theta))
    np.testing.assert_allclose(got, want, atol=1e-12, rtol=0)
    assert sawtooth_net.n_params(L) == 6 * L + 1 == target.architecture()["exact_relu_params"]


@pytest.mark.parametrize("L", [1, 4, 9])
def test_exact_network_lives_in_the_depth_L_stax_architecture(L):
    arch = parse_arch(f"fc:depth={L},input=angle,b_std=0.5,W_std=1.3")
    _, apply_fn, _ = arch.stax(2)
    params = sawtooth_net.to_stax(L, W_std=1.3, b_std=0.5)
    theta = Circle().sample(5000, seed=L)
    out = np.asarray(apply_fn(params, jnp.asarray(arch.inputs(Circle(), theta))))[:, 0]
    np.testing.assert_allclose(out, parse_target(f"sawtooth:L={L}")(theta), atol=1e-10)


@pytest.mark.parametrize(
    "spec,width,channels",
    [
        ("tree:arity=2,L=3", 5, 1),
        ("tree:arity=3,L=2,act=erf,W_std=1.5,b_std=0.3", 4, 1),
        ("tree:arity=4,L=2,act=gelu", 7, 1),
        ("tree:arity=2,L=1,b_std=0.0", 3, 1),
        ("tree:arity=3,L=3", 2, 3),  # several input channels (the RHM's one-hot tokens)
    ],
)
@pytest.mark.parametrize("block_diagonal_max", [0, 1 << 18, 1])
def test_fast_tree_apply_equals_stax_conv_local(
    spec, width, channels, block_diagonal_max, monkeypatch
):
    import ntkgap.nets.arch

    # 0: position-major (the default); 1 << 18: block-diagonal GEMMs; 1: per-position einsum
    monkeypatch.setattr(ntkgap.nets.arch, "BLOCK_DIAGONAL_MAX", block_diagonal_max)
    arch = parse_arch(spec)
    init_fn, fast, _ = arch.stax(width)
    _, slow, _ = arch.stax(width, fast=False)  # lax.conv_general_dilated_local
    key = jax.random.PRNGKey(np.random.default_rng().integers(2**31))
    _, params = init_fn(key, (-1, arch.leaves, channels))
    x = jax.random.normal(jax.random.fold_in(key, 1), (13, arch.leaves, channels))
    np.testing.assert_allclose(fast(params, x), slow(params, x), rtol=1e-12, atol=1e-12)


def test_lazy_network_approaches_ntk_predictor_as_width_grows():
    arch = parse_arch("fc:depth=1")
    target = parse_target("bandlimited:K=3,seed=2")
    n, n_val = 25, 5  # the trainer holds out 20% for validation: the NTK fits the same 20
    from ntkgap.targets.split import split

    sp = split(target, n, seed=0, n_val=n_val, n_test=2000)  # the trainer's own split
    xtr = arch.inputs(Circle(), sp.x_train)
    sol = krr.fit(kernels.gram(arch, xtr), sp.y_train)
    ntk_pred = sol.predict(kernels.gram(arch, arch.inputs(Circle(), sp.x_test), xtr))
    dist = []
    for width in (64, 512, 4096):
        cfg = training.TrainConfig(
            steps=6000,
            lr=2.0,
            optimizer="sgd",
            alpha=100.0,
            eval_every=500,
            dtype="float64",
            checkpoint="last",
        )
        r = training.train(arch, width, target, n, seeds=[0], cfg=cfg, return_predictions=True)
        # relative L2 distance between the trained net and the NTK predictor on test points
        net = r["test_predictions"][0]
        dist.append(np.linalg.norm(net - ntk_pred) / np.linalg.norm(ntk_pred))
        assert r["train_mse"] < 1e-3
    assert dist[0] > dist[1] > dist[2]
    assert dist[2] < 0.1


def test_sparse_parity_network_beats_ntk_regression():
    target = parse_target("parity:d=12,k=3")
    arch = parse_arch("fc:depth=1")
    n = 600
    ntk = np.mean(
        [ntk_predictor.evaluate(arch, target, n, seed=s, variance=1.0)["test_mse"] for s in (0, 1)]
    )
    cfg = training.TrainConfig(steps=4000, lr=1e-2, weight_decay=1e-2, batch=64, eval_every=200)
    net = training.train(arch, 256, target, n, seeds=[0, 1], cfg=cfg)
    assert ntk > 0.5
    assert net["test_mse"] < 0.1


@contextlib.contextmanager
def chunk_compilations():
    """The compilations of training's chunk program inside the block, read
    from JAX's compilation log (jax.log_compiles)."""
    seen = []

    class Handler(logging.Handler):
        def emit(self, record):
            if re.match(r"Compiling \S*chunk\b", record.getMessage()):
                seen.append(record.getMessage())

    logger, handler = logging.getLogger("jax"), Handler()
    logger.addHandler(handler)
    try:
        with jax.log_compiles():
            yield seen
    finally:
        logger.removeHandler(handler)


def _cfg(**kw):
    return training.TrainConfig(steps=300, lr=3e-3, batch=32, eval_every=50, dtype="float64", **kw)


def test_vmapped_seeds_equal_sequential_runs():
    arch, target = parse_arch("fc:depth=2"), parse_target("tree:d=16,L=2,arity=2,node=linear-plus")
    together = training.train(arch, 64, target, 200, seeds=[3, 4, 5], cfg=_cfg())
    apart = training.train(arch, 64, target, 200, seeds=[3, 4, 5], cfg=_cfg(), vmap=False)
    np.testing.assert_allclose(together["test_mse_per_seed"], apart["test_mse_per_seed"], rtol=1e-9)
    assert together["best_step"] == apart["best_step"]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_same_seed_gives_identical_numbers_and_compiles_once(dtype):
    arch, target = parse_arch("tree:arity=2,L=2"), parse_target("tree:d=16,L=2,arity=2,node=parity")
    cfg = _cfg()._replace(dtype=dtype)
    training._PROGRAMS.clear()
    with chunk_compilations() as compiled:
        a = training.train(arch, 32, target, 100, seeds=[7, 8, 5, 6], cfg=cfg, workers=1)
    assert len(compiled) == 1  # 6 chunks of steps, one compilation
    with chunk_compilations() as compiled:
        b = training.train(arch, 32, target, 100, seeds=[7, 8, 5, 6], cfg=cfg, workers=2)
    assert not compiled  # the same shapes: the kept program is reused
    assert a["test_mse_per_seed"] == b["test_mse_per_seed"]
    assert a["loss_curve"] == b["loss_curve"]
    c = training.train(arch, 32, target, 100, seeds=[9, 8], cfg=cfg)
    assert c["test_mse_per_seed"][0] != a["test_mse_per_seed"][0]
    assert c["test_mse_per_seed"][1] == a["test_mse_per_seed"][1]


@pytest.mark.parametrize(
    "spec,target",
    [
        ("fc:depth=2", "tree:d=16,L=2,arity=2,node=linear-plus"),
        ("tree:arity=2,L=3", "tree:d=16,L=3,arity=2,node=parity"),
    ],
)
def test_seed_groups_do_not_change_any_number(spec, target):
    # 5 seeds over 1, 2 (3 + 2, padded to 3 + 3) and 4 threads (2+2+1, padded):
    # each seed's numbers, and the shared early-stopping decision, are the same
    arch, target = parse_arch(spec), parse_target(target)
    cfg = training.TrainConfig(steps=2000, lr=1e-2, eval_every=40, patience=3)
    runs = [
        training.train(arch, 16, target, 80, seeds=[0, 1, 2, 3, 4], cfg=cfg, workers=w)
        for w in (1, 2, 4)
    ]
    assert runs[0]["steps"] < 2000  # early stopping did act
    for r in runs[1:]:
        for key in ("test_mse_per_seed", "train_mse", "best_step", "loss_curve", "steps"):
            assert r[key] == runs[0][key], key


def test_runs_of_different_n_in_one_program_equal_separate_runs():
    # a search step: seeds x n-candidates; with batch = 24, n = 40 and 96 train
    # on minibatches, n = 24 and 30 (19 and 24 training points) on full batches
    runs = [(0, 40), (1, 96), (2, 24), (3, 96), (4, 30)]
    arch, target = parse_arch("fc:depth=1"), parse_target("parity:d=8,k=2")
    cfg = training.TrainConfig(steps=120, lr=3e-2, eval_every=20, batch=24, patience=1)
    training._PROGRAMS.clear()
    with chunk_compilations() as compiled:
        together = training.train_runs(arch, 8, target, runs, cfg=cfg, n_test=50, workers=1)
    assert len(compiled) == 2  # one program per kind of step (minibatch, full), 6 chunks each
    stopped = set()
    for (seed, n), got in zip(runs, together):
        # the reference: each (seed, n) trained alone, in its own unpadded program
        alone = training.train(arch, 8, target, n, seeds=[seed], cfg=cfg, n_test=50)
        assert got["seeds"] == [seed] and got["n_train"] + got["n_val"] == n
        assert got["steps_per_seed"] == alone["steps_per_seed"]
        assert got["best_step"] == alone["best_step"]
        assert len(got["loss_curve"]) == len(alone["loss_curve"])  # ends where it stopped
        stopped.add(got["steps"])
        if n > 30:  # same minibatches and updates: only the validation sums see the padding
            assert got["test_mse_per_seed"] == alone["test_mse_per_seed"]
        for key in ("test_mse", "train_mse", "best_val_mse"):
            np.testing.assert_allclose(got[key], alone[key], rtol=1e-5, err_msg=key)
        for a, b in zip(got["loss_curve"], alone["loss_curve"]):
            np.testing.assert_allclose(a["val_mse"], b["val_mse"], rtol=1e-5)
            np.testing.assert_allclose(a["train_loss"], b["train_loss"], rtol=1e-5)
    assert len(stopped) > 1  # the runs stopped at their own plateaus


@pytest.mark.parametrize(
    "spec",
    [
        "fc:depth=2",
        "fc:depth=1,act=erf",
        "fc:depth=1,act=gelu",
        "tree:arity=2,L=2",
        "tree:arity=3,L=2,act=erf",
        "tree:arity=2,L=1,act=gelu",
    ],
)
def test_float32_networks_compute_in_float32(spec):
    # a float64 constant inside apply would silently run float32 training in
    # float64 (this happened: ~9x slower tree nets)
    arch = parse_arch(spec)
    init_fn, apply_fn, _ = arch.stax(8)
    shape = (-1, arch.leaves, 1) if arch.name == "tree" else (-1, 6)
    _, params = init_fn(jax.random.PRNGKey(0), shape)
    params = jax.tree_util.tree_map(lambda p: p.astype(jnp.float32), params)
    x = jnp.ones((3,) + shape[1:], jnp.float32)
    assert apply_fn(params, x).dtype == jnp.float32
    grads = jax.grad(lambda p: jnp.sum(apply_fn(p, x)))(params)
    assert {g.dtype for g in jax.tree_util.tree_leaves(grads)} == {jnp.dtype(jnp.float32)}


def test_early_stopping_keeps_best_checkpoint():
    arch, target = parse_arch("fc:depth=1"), parse_target("parity:d=10,k=2")
    cfg = training.TrainConfig(steps=5000, lr=1e-2, eval_every=50, patience=3, dtype="float64")
    r = training.train(arch, 64, target, 60, seeds=[0], cfg=cfg)
    vals = [c["val_mse"][0] for c in r["loss_curve"]]
    assert r["steps"] < 5000
    best = int(np.argmin(vals))
    assert r["best_step"][0] == r["loss_curve"][best]["step"]


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"steps": 0}, "steps"),
        ({"lr": -1.0}, "lr"),
        ({"optimizer": "lbfgs"}, "optimizer"),
        ({"val_frac": 1.5}, "val_frac"),
    ],
)
def test_bad_training_config(kw, msg):
    from ntkgap.errors import UsageError

    with pytest.raises(UsageError, match=msg):
        training.validate(training.TrainConfig(**kw))


@pytest.mark.parametrize("vmap", [True, False])
def test_return_params_changes_no_number_and_returns_init_and_scored_checkpoint(vmap):
    from ntkgap._infra.seeds import derive

    arch, target = parse_arch("tree:arity=2,L=2"), parse_target("tree:d=8,L=2,arity=2,node=tanh")
    cfg = training.TrainConfig(steps=60, lr=3e-3, eval_every=20)
    kw = dict(seeds=[1, 2], cfg=cfg, n_test=32, vmap=vmap, return_predictions=True)
    plain = training.train(arch, 8, target, 40, **kw)
    got = training.train(arch, 8, target, 40, return_params=True, **kw)
    extra = {"params_init", "params_final"}
    assert set(got) - set(plain) == extra
    for key in ("test_mse_per_seed", "best_step", "train_mse", "test_predictions"):
        np.testing.assert_array_equal(np.asarray(plain[key]), np.asarray(got[key]))
    init_fn, apply_fn, _ = arch.stax(8)
    for i, s in enumerate([1, 2]):
        # the initial parameters: stax's init at the seed's own key, in float32
        ref = init_fn(jax.random.PRNGKey(derive(s, "init")), (-1, 4, 1))[1]
        for a, b in zip(
            jax.tree_util.tree_leaves(ref), jax.tree_util.tree_leaves(got["params_init"][i])
        ):
            np.testing.assert_array_equal(np.asarray(a, np.float32), b)
        # the scored parameters give the scored test predictions
        x = arch.inputs(target.domain, got["x_test"][i]).astype(np.float32)
        pred = np.asarray(apply_fn(got["params_final"][i], x))[:, 0]
        np.testing.assert_allclose(pred, got["test_predictions"][i], rtol=1e-5, atol=1e-6)
