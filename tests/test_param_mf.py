"""param=mf (muP / mean-field) against references computed here: one SGD step
of a two-layer mean-field network derived by hand in numpy (Mei, Montanari &
Nguyen 2018), the width scaling theory predicts for the hidden weights'
movement (O(1) under mf, O(1/sqrt(width)) under ntk), and the Adam
learning-rate table of muP (Yang & Hu 2021) for a tree and a residual net."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntkgap.errors import UsageError
from ntkgap.nets import train_config, training
from ntkgap.nets.arch import parse_arch
from ntkgap.targets import parse_target

D, N_PTS = 5, 12


def _one_sgd_step(param, width, lr=0.1, seed=0):
    """(W1, W2, W1', W2', x, y) of one full-batch SGD step through training's
    model and optimiser, for fc:depth=1, relu, no bias."""
    arch = parse_arch("fc:depth=1,act=relu,b_std=0")
    cfg = train_config.from_mapping(dict(param=param, optimizer="sgd", lr=lr))
    init_fn, apply_fn, _ = arch.stax(width)
    params = init_fn(jax.random.PRNGKey(seed), (-1, D))[1]
    params = jax.tree_util.tree_map(lambda p: p.astype(jnp.float64), params)
    scale, mults = training.param_scaling(cfg, arch, width, (-1, D))
    model, opt, _ = training._make(apply_fn, cfg, width, False, mults, scale)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N_PTS, D))
    y = rng.standard_normal(N_PTS)

    def loss(p):
        return jnp.mean((model(p, params, x) - y) ** 2)

    upd, _ = opt.update(jax.grad(loss)(params), opt.init(params), params)
    new = jax.tree_util.tree_map(lambda p, u: p + u, params, upd)
    W1, W2 = np.asarray(params[0][0]), np.asarray(params[2][0])
    return W1, W2, np.asarray(new[0][0]), np.asarray(new[2][0]), x, y


def test_mf_sgd_step_is_the_mean_field_step():
    # f(x) = (1/N) sum_i a_i relu(w_i . x / sqrt(d)); the mean-field SGD step
    # moves each neuron by lr * (its own gradient term), free of N
    width, lr = 64, 0.1
    W1, W2, W1n, W2n, x, y = _one_sgd_step("mf", width, lr)
    h = x @ W1 / np.sqrt(D)
    f = np.maximum(h, 0) @ W2[:, 0] / width
    r = f - y
    dW2 = 2 / N_PTS * np.maximum(h, 0).T @ r
    dW1 = 2 / N_PTS * x.T @ ((r[:, None] * W2[:, 0][None, :]) * (h > 0)) / np.sqrt(D)
    np.testing.assert_allclose(W2n[:, 0], W2[:, 0] - lr * dW2, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(W1n, W1 - lr * dW1, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("param, expected", [("mf", 1.0), ("ntk", 4.0)])
def test_hidden_weights_move_as_theory_says(param, expected):
    # mean movement per first-layer weight, width 256 against 4096: O(1) under
    # mf (ratio 1), O(1/sqrt(width)) under ntk (ratio sqrt(16) = 4)
    move = {}
    for width in (256, 4096):
        W1, _, W1n, _, _, _ = _one_sgd_step(param, width, lr=0.05)
        move[width] = np.mean(np.abs(W1n - W1))
    assert move[256] / move[4096] == pytest.approx(expected, rel=0.25)


@pytest.mark.parametrize(
    "spec, in_shape, hidden",
    [
        # ConvLocal W, b per level, then the readout: level 1 reads the inputs
        ("tree:arity=2,L=3", (-1, 8, 1), [2, 4]),
        # Dense stem, two residual blocks' Dense, readout
        ("fc:depth=2,residual=1,norm=layer", (-1, 5), [2, 4]),
    ],
)
def test_mf_adam_multipliers_are_mup(spec, in_shape, hidden):
    width = 16
    arch = parse_arch(spec)
    cfg = train_config.from_mapping(dict(param="mf"))
    scale, mults = training.param_scaling(cfg, arch, width, in_shape)
    leaves = jax.tree_util.tree_leaves(mults)
    want = [1 / np.sqrt(width) if i in hidden else 1.0 for i in range(8)]
    assert scale == pytest.approx(1 / np.sqrt(width))
    np.testing.assert_allclose(leaves, want)
    assert training.param_scaling(train_config.TrainConfig(), arch, width, in_shape) == (1.0, None)


def test_mf_trains_and_refuses_alpha():
    t = parse_target("tree:d=8,L=2,arity=2,node=tanh")
    cfg = train_config.from_mapping(dict(param="mf", steps=20, eval_every=10, lr=0.01))
    out = training.train(parse_arch("tree:arity=2,L=2"), 8, t, 12, seeds=[0], cfg=cfg, n_test=16)
    assert np.isfinite(out["test_mse"]) and out["config"]["param"] == "mf"
    with pytest.raises(UsageError, match="alpha=2 needs param=ntk"):
        train_config.validate(train_config.TrainConfig(param="mf", alpha=2.0, optimizer="sgd"))
