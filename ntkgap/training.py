"""Training finite-width networks from the shared architecture specs, with
optax, vmapped over seeds.

The model is the stax network of ``arch.stax(width)``; with ``alpha`` set it
is the centred, rescaled model alpha (f(theta) - f(theta_0)) of Chizat,
Oyallon & Bach 2019 (loss divided by alpha^2, so large alpha is the lazy,
linearised regime whose GD limit is the NTK predictor; small alpha learns
features). ``param="mf"`` instead multiplies the output by 1/sqrt(width)
(the mean-field / muP-style scaling of the readout; Mei, Montanari & Nguyen
2018), the rich regime.

One jitted function runs ``eval_every`` steps (a lax.scan) for a group of
seeds at once (jax.vmap), then scores the validation split and keeps, per
seed, the best validation checkpoint; it is compiled once and reused for
every chunk and every group. Early stopping ends the run when no seed
improved for ``patience`` checks.

Seeds are split into up to ``workers`` equal groups of at least two (the
last padded with copies of a real seed, whose numbers are discarded), one
thread per group. XLA's CPU backend runs a batched matmul of the sizes
trained here on about one core whatever the batch (measured: ~100 GFLOP/s
for 8 x (320x128)@(128x128) with one core or two), so one vmapped group
leaves the other cores idle; a group per core uses them. A seed's numbers do not depend on the grouping
(tests compare 1, 2 and 4 workers); a run of one seed alone (``vmap=False``)
agrees with them to rounding.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ntkgap._infra import (
    compat,  # noqa: F401  (x64 and no TensorFlow, before jax)
    cores,
    memory,
    progress,
)
from ntkgap._infra.seeds import derive
from ntkgap.errors import UsageError
from ntkgap.train_config import TrainConfig, validate  # noqa: F401  (the public names)

TRACE_COUNT = {"chunk": 0}  # incremented at trace time: tests assert one compilation


# seeds per vmapped group: every group is padded to this size (see train)
GROUP_SIZE = 4


def _optimizer(cfg):
    lr = optax.cosine_decay_schedule(cfg.lr, cfg.steps) if cfg.schedule == "cosine" else cfg.lr
    if cfg.optimizer == "adam":
        opt = optax.adamw(lr, weight_decay=cfg.weight_decay) if cfg.weight_decay else optax.adam(lr)
    else:
        opt = optax.sgd(lr)
        if cfg.weight_decay:
            opt = optax.chain(optax.add_decayed_weights(cfg.weight_decay), opt)
    return opt


class _State(NamedTuple):
    params: object
    opt_state: object
    best: object
    best_val: jnp.ndarray
    best_step: jnp.ndarray
    key: jnp.ndarray
    step: jnp.ndarray


def _make(apply_fn, cfg, width, params0_template):
    scale = 1.0 / np.sqrt(width) if cfg.param == "mf" else 1.0
    opt = _optimizer(cfg)

    def model(params, params0, x):
        out = apply_fn(params, x)[:, 0] * scale
        if cfg.alpha is not None:
            out = cfg.alpha * (out - apply_fn(params0, x)[:, 0] * scale)
        return out

    def loss_fn(params, params0, x, y):
        r = model(params, params0, x) - y
        loss = jnp.mean(r**2)
        return loss / cfg.alpha**2 if cfg.alpha is not None else loss

    def chunk(state, params0, xtr, ytr, xva, yva):
        TRACE_COUNT["chunk"] += 1
        n = xtr.shape[0]

        def step(st, _):
            key, sub = jax.random.split(st.key)
            if cfg.batch and cfg.batch < n:
                idx = jax.random.randint(sub, (cfg.batch,), 0, n)
                xb, yb = xtr[idx], ytr[idx]
            else:
                xb, yb = xtr, ytr
            loss, g = jax.value_and_grad(loss_fn)(st.params, params0, xb, yb)
            upd, ost = opt.update(g, st.opt_state, st.params)
            return st._replace(
                params=optax.apply_updates(st.params, upd), opt_state=ost, key=key, step=st.step + 1
            ), loss

        state, losses = jax.lax.scan(step, state, None, length=cfg.eval_every)
        # in the state's dtype, so the next chunk's inputs have this chunk's types
        val = jnp.mean((model(state.params, params0, xva) - yva) ** 2).astype(state.best_val.dtype)
        better = val < state.best_val
        best = jax.tree_util.tree_map(
            lambda b, p: jnp.where(better, p, b), state.best, state.params
        )
        state = state._replace(
            best=best,
            best_val=jnp.where(better, val, state.best_val),
            best_step=jnp.where(better, state.step, state.best_step),
        )
        return state, jnp.mean(losses), val

    return model, opt, jax.jit(jax.vmap(chunk, in_axes=(0, 0, 0, 0, 0, 0)))


def train(
    arch,
    width: int,
    target,
    n: int,
    *,
    seeds,
    cfg: TrainConfig = TrainConfig(),
    n_test: int = 2000,
    vmap: bool = True,
    workers: int | None = None,
    return_predictions: bool = False,
) -> dict:
    """Train ``len(seeds)`` networks (one per seed: data, init, batches) and
    score each at its best validation checkpoint. Errors are relative to
    the target's variance ``target_variance`` (exact) when available.

    ``vmap=False`` trains the seeds one after another, each a separate run
    with its own compilation (the baseline the benchmarks compare with);
    ``workers`` (default ``cores.train_workers()``) threads share the vmapped
    seeds in equal groups."""
    validate(cfg)
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise UsageError("training: give at least one seed")
    if width < 1:
        raise UsageError(f"training: width={width} must be >= 1")
    if not vmap and len(seeds) > 1:
        runs = [
            train(
                arch,
                width,
                target,
                n,
                seeds=[s],
                cfg=cfg,
                n_test=n_test,
                workers=1,
                return_predictions=return_predictions,
            )
            for s in seeds
        ]
        return _merge(runs)
    dom = target.domain
    arch.check_domain(dom)
    n_val = max(1, int(round(cfg.val_frac * n)))
    n_tr = n - n_val
    if n_tr < 1:
        raise UsageError(f"training: n={n} leaves no training points after the validation split")
    workers = cores.train_workers() if workers is None else int(workers)
    if workers < 1:
        raise UsageError(f"training: workers={workers} must be >= 1")
    S = len(seeds)
    # every group has the same GROUP_SIZE seeds, whatever S and workers are:
    # XLA may round a batched matmul differently for different batch sizes
    # (and drops a batch dimension of 1), so a seed always runs in an
    # identically shaped program and its numbers never depend on the grouping
    size = GROUP_SIZE
    groups = -(-S // size)
    pad = list(range(S)) + [S - 1] * (groups * size - S)  # padding: numbers discarded
    run_seeds = [seeds[i] for i in pad]
    R = len(run_seeds)
    dtype = jnp.float32 if cfg.dtype == "float32" else jnp.float64
    init_fn, apply_fn, _ = arch.stax(width)
    xs, ys, xts, yts = [], [], [], []
    for s in seeds:
        x = dom.sample(n, seed=derive(s, "train", n))
        xt = dom.sample(n_test, seed=derive(s, "test", n))
        xs.append(arch.inputs(dom, x))
        ys.append(target(x))
        xts.append(arch.inputs(dom, xt))
        yts.append(target(xt))
    X = jnp.asarray(np.stack([xs[i] for i in pad]), dtype)
    Y = jnp.asarray(np.stack([ys[i] for i in pad]), dtype)
    in_shape = (-1,) + X.shape[2:]
    keys = jnp.stack([jax.random.PRNGKey(derive(s, "init")) for s in run_seeds])
    params0 = jax.vmap(lambda k: init_fn(k, in_shape)[1])(keys)
    params0 = jax.tree_util.tree_map(lambda p: p.astype(dtype), params0)
    n_params = sum(int(np.prod(p.shape[1:])) for p in jax.tree_util.tree_leaves(params0))
    memory.check(
        R
        * (
            n_params * 8 * (4 if cfg.optimizer == "adam" else 2)
            + (cfg.batch or n_tr) * width * 8 * 6 * max(1, _depth(arch))
        ),
        f"training {S} networks of {n_params} parameters",
    )
    model, opt, chunk = _make(apply_fn, cfg, width, params0)
    from ntkgap.spectra import target_variance

    var = target_variance(target)
    state = _State(
        params0,
        jax.vmap(opt.init)(params0),
        params0,
        jnp.full(R, jnp.inf, dtype),
        jnp.zeros(R, jnp.int32),
        jnp.stack([jax.random.PRNGKey(derive(s, "batches")) for s in run_seeds]),
        jnp.zeros(R, jnp.int32),
    )
    xtr, ytr, xva, yva = X[:, :n_tr], Y[:, :n_tr], X[:, n_tr:], Y[:, n_tr:]

    def part(tree, g):
        return jax.tree_util.tree_map(lambda a: a[g * size : (g + 1) * size], tree)

    gstate = [part(state, g) for g in range(groups)]
    gargs = [part((params0, xtr, ytr, xva, yva), g) for g in range(groups)]
    start = time.perf_counter()
    # compiled once, ahead of the threads (two threads must not both trace)
    step_fn = chunk.lower(gstate[0], *gargs[0]).compile()
    threads = min(groups, workers)
    pool = ThreadPoolExecutor(threads) if threads > 1 else None

    def advance(g):
        # wait here: dispatch is asynchronous, and a thread that returned at
        # once would leave the groups queued one behind the other
        return jax.block_until_ready(step_fn(gstate[g], *gargs[g]))

    def joined(arrays):  # one value per real seed, from the groups' outputs
        return np.concatenate([np.asarray(a) for a in arrays])[:S]

    curve, since_best, last_best = [], 0, None
    n_chunks = -(-cfg.steps // cfg.eval_every)
    try:
        with progress.bar(total=n_chunks * cfg.eval_every, desc=f"train w={width} n={n}") as bar:
            for c in range(n_chunks):
                outs = (
                    list(pool.map(advance, range(groups)))
                    if pool
                    else [advance(g) for g in range(groups)]
                )
                gstate = [o[0] for o in outs]
                tl, vl = joined(o[1] for o in outs), joined(o[2] for o in outs)
                curve.append(
                    {
                        "step": (c + 1) * cfg.eval_every,
                        "train_loss": tl.tolist(),
                        "val_mse": (vl / var).tolist(),
                    }
                )
                bar.update(cfg.eval_every)
                bv = joined(st.best_val for st in gstate)
                since_best = 0 if last_best is None or np.any(bv < last_best) else since_best + 1
                last_best = bv
                if cfg.patience and since_best >= cfg.patience:
                    break
    finally:
        if pool:
            pool.shutdown()
    state = jax.tree_util.tree_map(lambda *a: jnp.concatenate(a)[:S], *gstate)
    params0 = jax.tree_util.tree_map(lambda a: a[:S], params0)
    xtr, ytr = xtr[:S], ytr[:S]
    seconds = time.perf_counter() - start
    test, train_err, preds = [], [], []
    final = state.best if cfg.checkpoint == "best" else state.params
    for i in range(len(seeds)):
        best_i = jax.tree_util.tree_map(lambda p: p[i], final)
        p0_i = jax.tree_util.tree_map(lambda p: p[i], params0)
        pred = np.asarray(model(best_i, p0_i, jnp.asarray(xts[i], dtype)), np.float64)
        test.append(float(np.mean((pred - yts[i]) ** 2) / var))
        preds.append(pred)
        ptr = np.asarray(model(best_i, p0_i, xtr[i]), np.float64)
        train_err.append(float(np.mean((ptr - np.asarray(ytr[i], np.float64)) ** 2) / var))
    out = {
        "test_mse": float(np.mean(test)),
        "test_mse_std": float(np.std(test)),
        "test_mse_per_seed": test,
        "train_mse": float(np.mean(train_err)),
        "steps": int(np.asarray(state.step)[0]),
        "best_step": np.asarray(state.best_step).tolist(),
        "seconds": seconds,
        "n_params": n_params,
        "seeds": seeds,
        "width": width,
        "n_train": n_tr,
        "n_val": n_val,
        "workers": threads,
        "loss_curve": curve,
        "config": cfg._asdict(),
        "arch_reads": arch.reads(dom),
    }
    if return_predictions:
        out["test_predictions"] = preds
    return out


def _depth(arch):
    return arch.spec["depth"] if arch.name == "fc" else arch.spec["L"]


def _merge(runs):
    test = [t for r in runs for t in r["test_mse_per_seed"]]
    out = dict(runs[0])
    out.update(
        test_mse=float(np.mean(test)),
        test_mse_std=float(np.std(test)),
        test_mse_per_seed=test,
        train_mse=float(np.mean([r["train_mse"] for r in runs])),
        seconds=float(sum(r["seconds"] for r in runs)),
        seeds=[s for r in runs for s in r["seeds"]],
        best_step=[b for r in runs for b in r["best_step"]],
        steps=max(r["steps"] for r in runs),
    )
    if "test_predictions" in runs[0]:
        out["test_predictions"] = [p for r in runs for p in r["test_predictions"]]
    return out
