"""Training finite-width networks from the shared architecture specs, with
optax, vmapped over seeds.

The model is the stax network of ``arch.stax(width)``; with ``alpha`` set it
is the centred, rescaled model alpha (f(theta) - f(theta_0)) of Chizat,
Oyallon & Bach 2019 (loss divided by alpha^2, so large alpha is the lazy,
linearised regime whose GD limit is the NTK predictor; small alpha learns
features). ``param="mf"`` is the mean-field / muP parametrisation instead:
the readout 1/width and learning rates scaled with width (see
:func:`param_scaling`), the rich regime at every width.

One jitted function runs ``eval_every`` steps (a lax.scan) for a group of
seeds at once (jax.vmap), then scores the validation split and keeps, per
seed, the best validation checkpoint (the starting point counts as
checkpoint 0); it is compiled once for full chunks and once for a shorter
last chunk, and reused for every group and, while kept (``PROGRAMS_KEPT``),
by later calls of the same architecture, config and shapes. Early stopping
is per seed: a seed stops after ``patience`` checks without improvement (its
parameters are then frozen by a mask), so its numbers never depend on the
other seeds.

Seeds are split into groups of ``GROUP_SIZE`` (the last padded with copies
of a real seed, whose numbers are discarded), up to ``workers`` threads
sharing the groups. XLA's CPU backend runs a batched matmul of the sizes
trained here on about one core whatever the batch (measured: ~100 GFLOP/s
for 8 x (320x128)@(128x128) with one core or two), so one vmapped group
leaves the other cores idle; a group per core uses them. A seed's numbers
do not depend on the grouping (tests compare 1, 2 and 4 workers); a run of
one seed alone (``vmap=False``) agrees with them to rounding.

Runs of different n train together too (:func:`train_runs`, for the
adaptive search, whose step sends seeds to different n): each run's data is
padded to the largest n and masked, so one compiled program trains seeds x
n-candidates, with minibatch steps whose cost does not grow with n. With
``own_shapes`` each run is padded to a power of two of its own instead (one
program per padded shape), so its numbers do not depend on its companions.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
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
from ntkgap.nets import arch as arch_module
from ntkgap.nets import train_results
from ntkgap.nets.train_config import TrainConfig, validate, validation_size
from ntkgap.targets.split import split
from ntkgap.targets.variance import target_variance

# seeds per vmapped group: every group is padded to this size (see train)
GROUP_SIZE = 4
# model and program builders kept for reuse, with their compiled programs
# (per chunk length and shapes): a later call of the same architecture,
# config and shapes (a search's later steps, a repeated benchmark, a test)
# skips tracing and compiling. Least recently used first out.
PROGRAMS_KEPT = 16
_PROGRAMS: OrderedDict = OrderedDict()
_PROGRAMS_LOCK = threading.Lock()  # a Dask worker may train cells in several threads


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
    active: jnp.ndarray  # the seed still trains (not plateaued, not diverged)
    since: jnp.ndarray  # checks since its best validation score
    nonfinite: jnp.ndarray  # a non-finite loss or validation score was seen


def param_scaling(cfg, arch, width: int, in_shape) -> tuple[float, object]:
    """The readout scale and per-parameter learning-rate multipliers of ``cfg.param``.

    ``ntk``: stax's NTK parametrisation as is (Jacot, Gabriel & Hongler 2018).
    ``mf``: muP, the maximal-update parametrisation (Yang & Hu 2021, "Tensor
    Programs IV", Table 3), written in the NTK parametrisation through their
    abc-symmetry (a + t, b - t, c - 2t for SGD; c - t for Adam, whose steps
    ignore the gradient's scale). The readout gets a further 1/sqrt(width),
    so f = (1/width) sum_i a_i h_i, and: with ``sgd`` every learning rate is
    multiplied by ``width`` (for two layers this is the mean-field limit of
    Mei, Montanari & Nguyen 2018, each neuron moving O(1)); with ``adam`` the
    weights whose fan-in grows with the width, except the readout's, by
    1/sqrt(width), every other parameter by 1. Either way hidden features move
    by O(1) at any width (the rich regime), where under ``ntk`` they move by
    O(1/sqrt(width)).

    Args:
      cfg: the TrainConfig (``param``, ``optimizer``).
      arch: the parsed architecture.
      width: the hidden width.
      in_shape: the input shape the network is initialised with.

    Returns:
      (readout scale, multipliers): the multipliers are a pytree of floats
      shaped like the parameters, or None under ``ntk``.
    """
    if cfg.param != "mf":
        return 1.0, None

    def shapes(w):
        init_fn = arch.stax(w)[0]
        return jax.eval_shape(lambda: init_fn(jax.random.PRNGKey(0), in_shape)[1])

    leaves, tree = jax.tree_util.tree_flatten(shapes(width))
    # a weight's fan-in is its second-to-last axis (Dense (in, out); ConvLocal
    # (positions, in, out)); it grows with the width where the input is hidden
    wide = [
        len(a.shape) >= 2 and a.shape[-2] != b.shape[-2]
        for a, b in zip(leaves, jax.tree_util.tree_leaves(shapes(2 * width)))
    ]
    readout = max(i for i, w in enumerate(wide) if w)
    if cfg.optimizer == "sgd":
        mults = [float(width)] * len(leaves)
    else:
        mults = [1.0 / np.sqrt(width) if w and i != readout else 1.0 for i, w in enumerate(wide)]
    return float(1.0 / np.sqrt(width)), jax.tree_util.tree_unflatten(tree, mults)


def _row_sq(pred, y):
    """Each row's squared error, summed over the outputs of a vector label."""
    r2 = (pred - y) ** 2
    return r2 if r2.ndim == 1 else jnp.sum(r2, axis=-1)


def _make(apply_fn, cfg, width, minibatch, mults=None, scale=1.0, outputs=1):
    """The model and, per chunk length, a jitted program running that many
    steps for a vmapped group of runs (``mults``, ``scale``: see
    :func:`param_scaling`; ``outputs``: the readout's units, one per class
    of a one-hot label, the loss summed over them).

    Every run of a group sees arrays of the same (padded) shape: its
    training and validation sets are padded to the group's largest, and its
    own sizes ``ntr``/``nva`` mask the rest. A padded row never enters a
    loss, a gradient, a validation score or a minibatch (batches are drawn
    from the run's own ``ntr`` rows), so a run's numbers are those of the
    run trained alone, up to the order of the sums over its rows.
    ``minibatch`` is static: runs training on minibatches and full-batch
    runs are different programs."""
    opt = _optimizer(cfg)
    if mults is not None:
        opt = optax.chain(
            opt,
            optax.stateless(lambda u, _: jax.tree_util.tree_map(lambda g, m: g * m, u, mults)),
        )

    cols = 0 if outputs == 1 else slice(None)  # a scalar model keeps its (n,) shape

    def model(params, params0, x):
        out = apply_fn(params, x)[:, cols] * scale
        if cfg.alpha is not None:
            out = cfg.alpha * (out - apply_fn(params0, x)[:, cols] * scale)
        return out

    def loss_fn(params, params0, x, y, mask=None):
        r2 = _row_sq(model(params, params0, x), y)
        # padded rows add exact zeros (where, not a product: 0 * inf is nan)
        loss = jnp.mean(r2) if mask is None else jnp.sum(jnp.where(mask, r2, 0)) / jnp.sum(mask)
        return loss / cfg.alpha**2 if cfg.alpha is not None else loss

    def program(length):
        chunk = _chunk(model, loss_fn, opt, cfg, minibatch, length)
        # the state is rebuilt every chunk: its buffers can be reused in place
        return jax.jit(jax.vmap(chunk), donate_argnums=0)

    return model, opt, program


def _chunk(model, loss_fn, opt, cfg, minibatch, length):
    """One run's chunk of ``length`` steps (vmapped by ``_make``): the steps,
    then a validation check that keeps the best checkpoint and stops a run
    at its plateau or at a non-finite number."""

    def chunk(state, params0, xtr, ytr, ntr, xva, yva, nva):
        mtr = jnp.arange(xtr.shape[0]) < ntr
        mva = jnp.arange(xva.shape[0]) < nva

        def val_of(params):  # in the state's dtype: the next chunk's types match
            err2 = _row_sq(model(params, params0, xva), yva)
            val = jnp.sum(jnp.where(mva, err2, 0)) / jnp.sum(mva)
            return val.astype(state.best_val.dtype)

        # the starting point is checkpoint 0: a run that never beats it keeps it
        val0 = val_of(state.params)
        loss0 = loss_fn(state.params, params0, xtr, ytr, mtr)
        state = state._replace(best_val=jnp.where(state.step == 0, val0, state.best_val))
        live = state.active
        step = _step(loss_fn, opt, cfg, minibatch, live, params0, xtr, ytr, ntr, mtr)
        state, losses = jax.lax.scan(step, state, None, length=length)
        val = val_of(state.params)
        return _checked_state(state, losses, val, live, cfg), jnp.mean(losses), val, val0, loss0

    return chunk


def _step(loss_fn, opt, cfg, minibatch, live, params0, xtr, ytr, ntr, mtr):
    """One optimisation step of a run (the scan's body); a stopped run
    (``live`` false) keeps its state."""

    def step(st, _):
        key, sub = jax.random.split(st.key)
        if minibatch:  # the same draws as the run alone: randint's bound is its own ntr
            idx = jax.random.randint(sub, (cfg.batch,), 0, ntr)
            grad_args = (xtr[idx], ytr[idx])
        else:
            grad_args = (xtr, ytr, mtr)
        loss, g = jax.value_and_grad(loss_fn)(st.params, params0, *grad_args)
        upd, ost = opt.update(g, st.opt_state, st.params)
        new = optax.apply_updates(st.params, upd)

        def keep(a, b):  # a stopped run's state is frozen
            return jnp.where(live, a, b)

        return st._replace(
            params=jax.tree_util.tree_map(keep, new, st.params),
            opt_state=jax.tree_util.tree_map(keep, ost, st.opt_state),
            key=keep(key, st.key),
            step=st.step + live.astype(st.step.dtype),
        ), loss

    return step


def _checked_state(state, losses, val, live, cfg):
    """The state after a chunk's validation check: the best checkpoint kept,
    the run stopped at its plateau (``patience`` checks without improvement)
    or at a non-finite loss or score."""
    finite = jnp.all(jnp.isfinite(losses)) & jnp.isfinite(val)
    better = live & (val < state.best_val)
    best = jax.tree_util.tree_map(lambda b, p: jnp.where(better, p, b), state.best, state.params)
    since = jnp.where(better, 0, state.since + live.astype(state.since.dtype))
    plateau = (cfg.patience > 0) & (since >= cfg.patience)
    return state._replace(
        best=best,
        best_val=jnp.where(better, val, state.best_val),
        best_step=jnp.where(better, state.step, state.best_step),
        since=since,
        active=live & finite & ~plateau,
        nonfinite=state.nonfinite | (live & ~finite),
    )


def _programs(arch, width, cfg, minibatch, in_shape, outputs=1):
    """``_make``'s (model, opt, program) with a jitted ``predict`` and a dict
    of compiled programs, kept in ``_PROGRAMS`` for the same settings."""
    # BLOCK_DIAGONAL_MAX is read per call: the arch's fast path is chosen when traced
    key = (str(arch.spec), arch_module.BLOCK_DIAGONAL_MAX, width, cfg, minibatch, in_shape,
           outputs)  # fmt: skip
    with _PROGRAMS_LOCK:
        if key in _PROGRAMS:
            _PROGRAMS.move_to_end(key)
            return _PROGRAMS[key]
        scale, mults = param_scaling(cfg, arch, width, in_shape)
        apply_fn = arch.stax(width, outputs=outputs)[1]
        model, opt, program = _make(apply_fn, cfg, width, minibatch, mults, scale, outputs)
        entry = (model, opt, program, jax.jit(model), {})
        _PROGRAMS[key] = entry
        while len(_PROGRAMS) > PROGRAMS_KEPT:
            _PROGRAMS.popitem(last=False)
        return entry


def _checked(cfg, seeds, width):
    cfg = TrainConfig() if cfg is None else cfg
    validate(cfg)
    if not seeds:
        raise UsageError("training: give at least one seed")
    if width < 1:
        raise UsageError(f"training: width={width} must be >= 1")
    return cfg


def _n_val(cfg, n):
    """(validation, training) sizes of a pool of n."""
    n_val = validation_size(n, cfg.val_frac)
    if n - n_val < 1:
        raise UsageError(f"training: n={n} leaves no training points after the validation split")
    return n_val, n - n_val


def train(
    arch,
    width: int,
    target,
    n: int,
    *,
    seeds,
    cfg: TrainConfig | None = None,
    n_test: int = 2000,
    vmap: bool = True,
    workers: int | None = None,
    return_predictions: bool = False,
    return_params: bool = False,
) -> dict:
    """Train one network per seed and score each at its checkpoint.

    Each seed draws its data from :func:`ntkgap.targets.split.split` (the pool's
    last ``val_frac`` share validates; the NTK predictor with the same seed
    sees the same pool and test points), its initialisation and batches.
    Training runs exactly ``cfg.steps`` steps, checking validation every
    ``eval_every`` (the last check may come sooner); with ``patience`` each
    seed stops at its own plateau (its parameters frozen) and the run ends
    when every seed has stopped. A seed whose loss turns non-finite, or whose
    best checkpoint is its starting point while its training loss rose, is
    marked ``diverged``.

    Args:
      arch, target: parsed architecture and target; width: hidden width.
      n: pool size (train + validation).
      seeds: one network per seed.
      cfg: the TrainConfig (default: the schema's defaults).
      n_test: test points per seed.
      vmap: False trains the seeds one after another, each a separate run
        (the baseline the benchmarks compare with).
      workers: threads sharing the vmapped groups (default
        ``cores.train_workers()``).
      return_predictions: also return each seed's test predictions and
        test points (``test_predictions``, ``x_test``).
      return_params: also return each seed's initial and scored (the
        ``checkpoint``) parameters, ``params_init`` and ``params_final``:
        lists of stax parameter trees of numpy arrays, in the config's dtype.
        The other numbers are the same with and without.

    Returns:
      A JSON-ready dict: ``test_mse`` (mean over seeds, relative to the
      target's variance) and per seed, ``steps`` (as run), ``diverged``,
      ``overlap`` (see :class:`ntkgap.targets.split.Split`), the loss curve, ...
    """
    seeds = [int(s) for s in seeds]
    cfg = _checked(cfg, seeds, width)
    if not vmap and len(seeds) > 1:
        runs = [
            train(arch, width, target, n, seeds=[s], cfg=cfg, n_test=n_test, workers=1,
                  return_predictions=return_predictions, return_params=return_params)
            for s in seeds
        ]  # fmt: skip
        return train_results.merge(runs)
    recs, info = _fit(arch, width, target, [(s, n) for s in seeds], cfg, n_test, workers)
    out = train_results.result(recs, info, arch, target, width, cfg, return_predictions)
    if return_params:
        out.update(_param_lists(recs))
    return out


def _param_lists(recs) -> dict:
    """``params_init`` and ``params_final``: each record's initial and scored
    parameter trees, as numpy arrays, one list entry per record."""
    trees = [jax.tree_util.tree_map(np.asarray, r["params"]) for r in recs]
    return {"params_init": [t[0] for t in trees], "params_final": [t[1] for t in trees]}


def train_runs(
    arch,
    width: int,
    target,
    runs,
    *,
    cfg: TrainConfig | None = None,
    n_test: int = 2000,
    workers: int | None = None,
    return_params: bool = False,
    own_shapes: bool = False,
) -> list[dict]:
    """Train one network per (seed, n) run, runs of different n together.

    Without ``own_shapes`` all runs train in one compiled program (two when
    some train on minibatches and others on their full training set): each
    run's data is padded to the largest n and masked (see ``_make``); with
    it, one program per padded shape (below). Each run draws its minibatches
    from its own rows and stops at its own validation plateau. A run's result
    is that of ``train(arch, width, target, n, seeds=[seed])`` up to the
    order of sums over its rows (bit for bit when the runs share one n and
    ``own_shapes`` is off), with its loss curve ending where it stopped.

    Args:
      arch, target: parsed architecture and target; width: hidden width.
      runs: (seed, n) pairs, n the pool size (train + validation).
      cfg: the TrainConfig shared by every run (default: the schema's).
      n_test: test points per run.
      workers: threads sharing the vmapped groups (default
        ``cores.train_workers()``).
      return_params: also return each run's ``params_init`` and
        ``params_final`` (as ``train``'s, one-entry lists).
      own_shapes: pad each run's rows to the power of two above its own
        sizes (not to the largest run's) and train runs of different padded
        shapes as different programs, so that a run's numbers, bit for bit,
        never depend on which runs share the call (a second guard beside
        ``executors.tasks``, which runs searches sharing evaluations in order).

    Returns:
      list, one per run in order: the dict ``train`` returns for that one
      seed and n (``seconds`` is the whole call's).
    """
    runs = [(int(s), int(n)) for s, n in runs]
    cfg = _checked(cfg, runs, width)
    recs, info = _fit(arch, width, target, runs, cfg, n_test, workers, own_shapes)
    out = []
    for r in recs:
        r = dict(r, curve=[row for row in r["curve"] if row[0] <= r["steps"]])
        res = train_results.result([r], info, arch, target, width, cfg, False)
        if return_params:
            res.update(_param_lists([r]))
        out.append(res)
    return out


def _fit(arch, width, target, runs, cfg, n_test, workers, own_shapes=False):
    """Per-run records and shared facts of training ``runs`` ((seed, n) pairs):
    one program for the minibatch runs, one for the full-batch runs, or with
    ``own_shapes`` one for each (minibatch, padded sizes) among the runs."""
    mb = [bool(cfg.batch) and cfg.batch < _n_val(cfg, n)[1] for _, n in runs]
    keys = [
        (m, *(train_results.bucket_rows(v) for v in _n_val(cfg, n))) if own_shapes else (m,)
        for m, (_, n) in zip(mb, runs)
    ]
    recs, info = [None] * len(runs), {}
    for key in sorted(set(keys), reverse=True):
        idx = [i for i, k in enumerate(keys) if k == key]
        got, info_f = _fit_family(
            arch, width, target, [runs[i] for i in idx], cfg, n_test, workers, key[0],
            bucketed=own_shapes,
        )  # fmt: skip
        for i, r in zip(idx, got):
            recs[i] = r
        info = {
            "seconds": info.get("seconds", 0.0) + info_f["seconds"],
            "n_params": info_f["n_params"],
            "workers": max(info.get("workers", 0), info_f["workers"]),
            "programs": info.get("programs", 0) + info_f["programs"],
        }
    return recs, info


class _Data(NamedTuple):
    """One family's runs, padded and stacked (see ``_load``)."""

    sizes: list  # (n_val, n_tr) per run
    pad: list  # run index of every row of the groups (padding repeats the last)
    dtype: object
    arrays: tuple  # (Xtr, Ytr, Ntr, Xva, Yva, Nva), stacked over ``pad``
    xts: list  # per run: test inputs, as the network reads them
    yts: list
    x_test: list  # per run: test points, domain format
    splits: list  # per run: the split's facts


def _fit_family(arch, width, target, runs, cfg, n_test, workers, minibatch, bucketed=False):
    """Per-run records and shared facts of runs that all train on minibatches
    or all on their full training set (one compiled program; ``bucketed``:
    rows padded to a power of two in either case)."""
    arch.check_domain(target.domain)
    n_max = max(n for _, n in runs)
    # every size is estimated and refused before the split allocates anything
    memory.check_sizes(
        memory.net_estimates(
            arch, target, width=width, n=n_max, n_test=n_test, seeds=len(runs), batch=cfg.batch,
            steps=cfg.steps, eval_every=cfg.eval_every, optimizer=cfg.optimizer,
        )
    )  # fmt: skip
    workers = cores.train_workers() if workers is None else int(workers)
    if workers < 1:
        raise UsageError(f"training: workers={workers} must be >= 1")
    data = _load(arch, target, runs, cfg, n_test, minibatch, bucketed)
    outputs = getattr(target, "outputs", 1)  # rhm.OneHotLabels: one per class
    params0, n_params = _init_params(arch, width, runs, data, outputs)
    Xtr = data.arrays[0]
    ptr = Xtr.shape[1]
    memory.check(
        len(data.pad)
        * (
            n_params * 8 * (4 if cfg.optimizer == "adam" else 2)
            + (cfg.batch if minibatch else ptr) * width * 8 * 6 * max(1, _depth(arch))
        ),
        f"training {len(runs)} networks of {n_params} parameters",
    )
    in_shape = (-1,) + Xtr.shape[2:]
    model, opt, program, predict, compiled = _programs(
        arch, width, cfg, minibatch, in_shape, outputs
    )
    var = target_variance(target)
    state = _initial_state(runs, data, params0, opt)
    start = time.perf_counter()
    state, curve, threads = _loop(
        state, (params0,) + data.arrays, program, compiled, cfg, len(runs), workers, var,
        f"train w={width} n={n_max}" + (f" ({len(runs)} runs)" if len(set(runs)) > 1 else ""),
    )  # fmt: skip
    seconds = time.perf_counter() - start
    recs = train_results.records(runs, data, params0, state, curve, cfg, predict, var)
    info = {"seconds": seconds, "n_params": n_params, "workers": threads, "programs": 1}
    return recs, info


def _load(arch, target, runs, cfg, n_test, minibatch, bucketed=False) -> _Data:
    """Each run's split, padded to the family's shapes and stacked over the
    groups' rows: every group has the same GROUP_SIZE runs, whatever the
    number of runs and workers (XLA may round a batched matmul differently
    for different batch sizes, and drops a batch dimension of 1), so a run
    always runs in an identically shaped program and its numbers never
    depend on the grouping."""
    dom = target.domain
    sizes = [_n_val(cfg, n) for _, n in runs]  # (n_val, n_tr) per run
    S = len(runs)
    groups = -(-S // GROUP_SIZE)
    pad = list(range(S)) + [S - 1] * (groups * GROUP_SIZE - S)  # padding: numbers discarded
    dtype = jnp.float32 if cfg.dtype == "float32" else jnp.float64
    ptr, pva = max(t for _, t in sizes), max(v for v, _ in sizes)
    # minibatch: rows cost nothing per step, so pad to shapes compiled once for all n;
    # bucketed: every run of the family has these padded sizes of its own (own_shapes)
    if minibatch or bucketed:
        ptr, pva = train_results.bucket_rows(ptr), train_results.bucket_rows(pva)
    xtr, ytr, xva, yva, xts, yts, splits, x_test = [], [], [], [], [], [], [], []
    for (s, n), (n_val, _) in zip(runs, sizes):
        sp = split(target, n, seed=s, n_val=n_val, n_test=n_test)
        xtr.append(train_results.pad_rows(arch.inputs(dom, sp.x_train), ptr))
        ytr.append(train_results.pad_rows(sp.y_train, ptr))
        xva.append(train_results.pad_rows(arch.inputs(dom, sp.x_val), pva))
        yva.append(train_results.pad_rows(sp.y_val, pva))
        xts.append(arch.inputs(dom, sp.x_test))
        yts.append(sp.y_test)
        x_test.append(sp.x_test)
        splits.append(sp.info())

    def stacked(arrays):
        return jnp.asarray(np.stack([arrays[i] for i in pad]), dtype)

    arrays = (
        stacked(xtr), stacked(ytr), jnp.asarray([sizes[i][1] for i in pad]),
        stacked(xva), stacked(yva), jnp.asarray([sizes[i][0] for i in pad]),
    )  # fmt: skip
    return _Data(sizes, pad, dtype, arrays, xts, yts, x_test, splits)


def _init_params(arch, width, runs, data, outputs=1):
    """The initial parameters of every row of the groups (vmapped over their
    seeds' ``init`` keys), and the parameter count of one network."""
    init_fn = arch.stax(width, outputs=outputs)[0]
    in_shape = (-1,) + data.arrays[0].shape[2:]
    keys = jnp.stack([jax.random.PRNGKey(derive(runs[i][0], "init")) for i in data.pad])
    params0 = jax.vmap(lambda k: init_fn(k, in_shape)[1])(keys)
    params0 = jax.tree_util.tree_map(lambda p: p.astype(data.dtype), params0)
    n_params = sum(int(np.prod(p.shape[1:])) for p in jax.tree_util.tree_leaves(params0))
    return params0, n_params


def _initial_state(runs, data, params0, opt) -> _State:
    """The training state at step 0 (its trees are copies: its buffers are
    donated to the program)."""
    R = len(data.pad)
    return _State(
        jax.tree_util.tree_map(jnp.copy, params0),
        jax.vmap(opt.init)(params0),
        jax.tree_util.tree_map(jnp.copy, params0),
        jnp.full(R, jnp.inf, data.dtype),
        jnp.zeros(R, jnp.int32),
        jnp.stack([jax.random.PRNGKey(derive(runs[i][0], "batches")) for i in data.pad]),
        jnp.zeros(R, jnp.int32),
        jnp.ones(R, bool),
        jnp.zeros(R, jnp.int32),
        jnp.zeros(R, bool),
    )


def _loop(state, args, program, compiled, cfg, S, workers, var, desc):
    """Runs exactly ``cfg.steps`` steps (chunks of ``eval_every``, then a
    shorter last one) on the groups, up to ``workers`` threads, until every
    run has stopped.

    Returns:
      (the final state of the S real runs, the curve: (step, training
      losses, validation MSEs / var) per check, the threads used).
    """
    size = GROUP_SIZE
    groups = state.best_val.shape[0] // size

    def part(tree, g):
        return jax.tree_util.tree_map(lambda a: a[g * size : (g + 1) * size], tree)

    gstate = [part(state, g) for g in range(groups)]
    gargs = [part(args, g) for g in range(groups)]
    del state
    full, rest = divmod(cfg.steps, cfg.eval_every)
    lengths = [cfg.eval_every] * full + ([rest] if rest else [])
    threads = min(groups, workers)
    pool = ThreadPoolExecutor(threads) if threads > 1 else None

    def joined(arrays):  # one value per real run, from the groups' outputs
        return np.concatenate([np.asarray(a) for a in arrays])[:S]

    curve, done = [], 0
    try:
        with progress.bar(total=cfg.steps, desc=desc) as bar:
            for length in lengths:
                step_fn = _compiled(program, compiled, length, gstate[0], gargs[0])

                def advance(g, step_fn=step_fn, states=gstate):
                    # wait here: dispatch is asynchronous, and a thread that
                    # returned at once would leave the groups queued one
                    # behind the other
                    return jax.block_until_ready(step_fn(states[g], *gargs[g]))

                outs = pool.map(advance, range(groups)) if pool else map(advance, range(groups))
                outs = list(outs)
                gstate = [o[0] for o in outs]
                if not curve:
                    v0, l0 = joined(o[3] for o in outs), joined(o[4] for o in outs)
                    curve.append((0, l0, v0 / var))
                tl, vl = joined(o[1] for o in outs), joined(o[2] for o in outs)
                done += length
                curve.append((done, tl, vl / var))
                bar.update(length)
                if not joined(st.active for st in gstate).any():
                    break
    finally:
        if pool:
            pool.shutdown()
    return jax.tree_util.tree_map(lambda *a: jnp.concatenate(a)[:S], *gstate), curve, threads


def _compiled(program, compiled, length, state, args):
    """The program for chunks of ``length`` steps on these shapes, compiled
    once (ahead of the threads: one trace) and kept in ``compiled``."""
    shapes = tuple((a.shape, a.dtype) for a in jax.tree_util.tree_leaves((state, args)))
    if (length, shapes) not in compiled:
        compiled[length, shapes] = program(length).lower(state, *args).compile()
    return compiled[length, shapes]


def _depth(arch):
    return arch.spec["depth"] if arch.name == "fc" else arch.spec["L"]
