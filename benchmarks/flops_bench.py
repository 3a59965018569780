"""Training FLOP/s of representative E4 cells against this machine's
batched-matmul peak, both measured by XLA in one run. Not a test.

    python benchmarks/flops_bench.py [--quick]

FLOPs per training step come from XLA's cost analysis of one compiled step
(forward, backward and the Adam update, vmapped over the seeds, on a
minibatch): ``jax.jit(...).lower(...).compile().cost_analysis()``. The
training time is the marginal time of :func:`ntkgap.nets.training.train` between
two step counts (same cell otherwise), each timed after a first call that
compiled its program (training keeps compiled programs), so data generation
and the final test evaluation cancel out and compilation is not timed.

Two ceilings, measured in the same run (the machine is shared: compare
ratios, not absolutes):

* the large-square peak: the best rate of XLA's batched float32 matmul over
  ``PEAK_SHAPES`` (up to 2 x 2048^3), the best case for XLA's CPU (or GPU)
  backend;
* the cell's own ceiling: the rate of exactly the batched GEMMs one training
  step of the cell needs, at their shapes and nothing else (per layer, for
  the seeds x positions batch: the forward product X W, the input gradient
  G W^T and the weight gradient X^T G; see :func:`cell_gemms`), run back to
  back in one compiled loop, in groups of seeds and threads as training
  runs them (``training.GROUP_SIZE`` seeds per group, one group per core).
  A width-32 tree layer multiplies 128 x 64 by 64 x 32 per seed and
  position: this is what such shapes reach on this machine, whatever the
  network code around them does.

FLOPs are counted by XLA's cost analysis of the compiled programs for both
the step and the GEMMs. ``python benchmarks/flops_bench.py`` prints every
figure, with the tree cell also measured on the previous (block-diagonal
GEMM) path for a before/after ratio in the same run; :func:`rows` gives them
as rows for benchmarks/run_all.py.
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: the cells measured: E4's tree and fc networks (arch, width, target)
CELLS = (
    ("tree:arity=2,L=4", 32, "tree:d=40,L=4,arity=2,node=parity"),
    ("fc:depth=2", 64, "tree:d=40,L=4,arity=2,node=parity"),
)
SEEDS, BATCH, N = 8, 128, 1024


def _flops(compiled) -> float:
    ca = compiled.cost_analysis()
    if isinstance(ca, (list, tuple)):  # older JAX: one dict per computation
        ca = ca[0]
    return float(ca["flops"])


#: (batch, size) of the batched float32 matmuls whose best rate is the peak
PEAK_SHAPES = ((64, 256), (8, 1024), (2, 2048))


def matmul_peak(repeats=5, shapes=PEAK_SHAPES):
    """The best FLOP/s of XLA's batched float32 matmul over ``shapes``, each
    timed ``repeats`` times after a warm-up (compilation); the best call, not
    the median, since other processes sharing the cores only slow calls down."""
    from jax import numpy as jnp

    from ntkgap._infra.compat import jax

    best = 0.0
    for batch, size in shapes:
        k1, k2 = jax.random.split(jax.random.PRNGKey(0))
        a = jax.random.normal(k1, (batch, size, size), jnp.float32)
        b = jax.random.normal(k2, (batch, size, size), jnp.float32)
        f = jax.jit(lambda a, b: a @ b)
        f(a, b).block_until_ready()
        ts = []
        for _ in range(repeats):
            t = time.perf_counter()
            f(a, b).block_until_ready()
            ts.append(time.perf_counter() - t)
        best = max(best, 2.0 * batch * size**3 / min(ts))
    return best


def step_flops(spec, width, target, lr=3e-3):
    """FLOPs of one training step for ``SEEDS`` seeds (vmapped) on a
    minibatch of ``BATCH``: (XLA's count of forward, backward and Adam;
    the useful count 6 x parameters x batch x seeds). They differ where the
    program multiplies zeros (a tree net's block-diagonal patch GEMM) and by
    the optimizer's elementwise work."""
    import optax
    from jax import numpy as jnp

    from ntkgap._infra.compat import jax
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import parse_target

    arch, dom = parse_arch(spec), parse_target(target).domain
    init_fn, apply_fn, _ = arch.stax(width)
    xb = np.asarray(arch.inputs(dom, dom.sample(BATCH, seed=0)), np.float32)
    keys = jax.random.split(jax.random.PRNGKey(0), SEEDS)
    params = jax.vmap(lambda k: init_fn(k, (-1,) + xb.shape[1:])[1])(keys)
    params = jax.tree_util.tree_map(lambda p: p.astype(jnp.float32), params)
    opt = optax.adam(lr)
    ost = jax.vmap(opt.init)(params)
    x = jnp.broadcast_to(jnp.asarray(xb), (SEEDS,) + xb.shape)
    y = jnp.zeros((SEEDS, BATCH), jnp.float32)

    def step(p, s, x, y):
        g = jax.grad(lambda p: jnp.mean((apply_fn(p, x)[:, 0] - y) ** 2))(p)
        upd, s = opt.update(g, s, p)
        return optax.apply_updates(p, upd), s

    n_params = sum(int(np.prod(p.shape[1:])) for p in jax.tree_util.tree_leaves(params))
    xla = _flops(jax.jit(jax.vmap(step)).lower(params, ost, x, y).compile())
    return xla, 6.0 * n_params * BATCH * SEEDS


def train_seconds(spec, width, target, steps, chunk):
    """Wall time of one ``training.train`` call of the cell at ``steps``."""
    from ntkgap.nets import training
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import parse_target

    cfg = training.TrainConfig(steps=steps, lr=3e-3, eval_every=chunk, batch=BATCH, patience=0)
    arch, tgt = parse_arch(spec), parse_target(target)
    t = time.perf_counter()
    training.train(arch, width, tgt, N, seeds=range(SEEDS), cfg=cfg, n_test=64)
    return time.perf_counter() - t


def achieved(spec, width, target, quick=False):
    """dict: FLOPs per step (XLA's count and the useful count), the marginal
    seconds per step (best of the repeats) and both FLOP/s."""
    chunk = 250
    s1, s2 = (chunk, 3 * chunk) if quick else (chunk, 5 * chunk)
    reps = 2 if quick else 3
    # a first call at each step count compiles its program, which training
    # keeps: the timed calls then differ only by the steps they run
    train_seconds(spec, width, target, s1, chunk)
    train_seconds(spec, width, target, s2, chunk)
    t1 = min(train_seconds(spec, width, target, s1, chunk) for _ in range(reps))
    t2 = min(train_seconds(spec, width, target, s2, chunk) for _ in range(reps))
    xla, useful = step_flops(spec, width, target)
    per_step = max(t2 - t1, 1e-9) / (s2 - s1)
    return {
        "xla_flops_per_step": xla,
        "useful_flops_per_step": useful,
        "seconds_per_step": per_step,
        "xla_flops_per_s": xla / per_step,
        "useful_flops_per_s": useful / per_step,
    }


def cell_gemms(spec, width, target, seeds=SEEDS):
    """The batched GEMMs of one training step of the cell, as (batch, M, K, N)
    products: per layer the forward product, the input gradient (skipped at
    the first layer, which has no trainable input) and the weight gradient,
    for ``seeds`` seeds on a minibatch of ``BATCH`` (a tree layer: one GEMM
    per layer with the seeds x positions as batch and K = arity x channels,
    the layout of the position-major path without its split into arity
    products)."""
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import parse_target

    arch, dom = parse_arch(spec), parse_target(target).domain
    x = arch.inputs(dom, dom.sample(2, seed=0))
    if arch.name == "tree":
        a, c, P = arch.spec["arity"], x.shape[2], x.shape[1]
        layers = []
        for _ in range(arch.spec["L"]):
            P //= a
            layers.append((seeds * P, a * c, width))
            c = width
        layers.append((seeds, P * width, 1))  # the Dense readout
    else:
        dims = [x.shape[1]] + [width] * arch.spec["depth"] + [1]
        layers = [(seeds, k, m) for k, m in zip(dims[:-1], dims[1:])]
    out = []
    for i, (b, k, m) in enumerate(layers):
        out.append((b, BATCH, k, m))  # forward: X (B x K) W (K x M)
        if i:
            out.append((b, BATCH, m, k))  # input gradient: G (B x M) W^T
        out.append((b, k, BATCH, m))  # weight gradient: X^T (K x B) G (B x M)
    return out


def gemm_rate(shapes, loops=50, repeats=5, threads=1):
    """(FLOP/s, FLOPs per pass) of the batched float32 GEMMs ``shapes``
    ((batch, M, K, N) each), ``loops`` passes in one compiled loop run by
    each of ``threads`` threads at once (as training runs its vmapped groups
    of seeds), best of ``repeats`` timed calls after a warm-up; FLOPs from
    XLA's cost analysis of one pass. An optimization barrier on the loop's
    carry keeps XLA from hoisting the products out of the loop."""
    from concurrent.futures import ThreadPoolExecutor

    from jax import numpy as jnp

    from ntkgap._infra.compat import jax

    key = jax.random.PRNGKey(0)
    ops = []
    for i, (b, m, k, n) in enumerate(shapes):
        k1, k2 = jax.random.split(jax.random.fold_in(key, i))
        ops.append(
            (
                jax.random.normal(k1, (b, m, k), jnp.float32),
                jax.random.normal(k2, (b, k, n), jnp.float32),
            )
        )

    def one(ops):
        return [a @ b for a, b in ops]

    def many(ops):
        outs = one(ops)

        def body(_, carry):
            ops, _ = jax.lax.optimization_barrier(carry)
            return ops, one(ops)

        return jax.lax.fori_loop(0, loops, body, (ops, outs))[1]

    flops = _flops(jax.jit(one).lower(ops).compile())
    f = jax.jit(many)
    jax.block_until_ready(f(ops))
    ts = []
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeats):
            t = time.perf_counter()
            for r in [pool.submit(f, ops) for _ in range(threads)]:
                jax.block_until_ready(r.result())
            ts.append(time.perf_counter() - t)
    return flops * loops * threads / min(ts), flops * threads


def _with_block_diagonal(value, fn, *args):
    """``fn(*args)`` with ``arch.BLOCK_DIAGONAL_MAX`` set to ``value``."""
    from ntkgap.nets import arch as arch_module

    old = arch_module.BLOCK_DIAGONAL_MAX
    arch_module.BLOCK_DIAGONAL_MAX = value
    try:
        return fn(*args)
    finally:
        arch_module.BLOCK_DIAGONAL_MAX = old


def measure(quick=False, before=True):
    """Every figure of this benchmark, from one run: dict with ``peak`` (the
    large-square FLOP/s) and ``cells``, per cell a dict of :func:`achieved`'s
    figures plus ``ceiling`` (FLOP/s of the cell's own GEMMs), and for the
    tree cell with ``before`` also ``before``: :func:`achieved` on the
    block-diagonal GEMM path (``BLOCK_DIAGONAL_MAX = 1 << 18``, the default
    before the position-major path)."""
    # other processes only slow a measurement down: each ceiling is the best
    # of a measurement before and one after the trainings it is compared with
    from ntkgap._infra import cores
    from ntkgap.nets.training import GROUP_SIZE

    # training runs the seeds as vmapped groups of GROUP_SIZE, several groups
    # at once in threads: the GEMM ceiling is measured the same way
    group = min(GROUP_SIZE, SEEDS)
    threads = max(1, min(SEEDS // group, cores.train_workers()))
    peak = matmul_peak()
    cells = []
    for spec, width, target in CELLS:
        r = dict(spec=spec, width=width)
        gemms = cell_gemms(spec, width, target, group)
        r["ceiling"], r["ceiling_flops"] = gemm_rate(gemms, threads=threads)
        r.update(achieved(spec, width, target, quick))
        if before and spec.startswith("tree"):
            r["before"] = _with_block_diagonal(1 << 18, achieved, spec, width, target, quick)
        r["ceiling"] = max(r["ceiling"], gemm_rate(gemms, threads=threads)[0])
        cells.append(r)
    return {"peak": max(peak, matmul_peak()), "cells": cells}


def rows(quick=False):
    """benchmarks/run_all.py's rows: (name, ours, peer, peer_name, agree,
    unit, ratio), FLOP/s in GFLOP/s, ratios against the large-square peak
    and the cell's own GEMM ceiling, all measured in this one call."""
    m = measure(quick)
    peak, out = m["peak"] / 1e9, []
    for r in m["cells"]:
        name = f"training FLOP/s {r['spec']} w={r['width']}, {SEEDS} seeds, batch {BATCH}"
        ceil = r["ceiling"] / 1e9
        out.append(
            (
                f"GEMM ceiling at the shapes of {r['spec']} w={r['width']} (vs large-square)",
                ceil,
                peak,
                "batched matmul peak",
                f"{r['ceiling_flops'] / 1e6:.1f} MFLOP/pass",
                "GFLOP/s",
                ceil / peak,
            )
        )
        for key, what in (
            ("useful", "useful 6 x params x batch; target 70%"),
            ("xla", "XLA cost_analysis count"),
        ):
            got = r[f"{key}_flops_per_s"] / 1e9
            note = f"{r['seconds_per_step'] * 1e3:.2f} ms/step; {got / ceil:.0%} of own ceiling"
            out.append(
                (
                    f"{name} ({what})",
                    got,
                    peak,
                    "batched matmul peak",
                    note,
                    "GFLOP/s",
                    got / peak,
                )
            )
        if "before" in r:
            b = r["before"]
            out.append(
                (
                    f"training step {r['spec']} w={r['width']}: position-major vs block-diagonal",
                    r["seconds_per_step"],
                    b["seconds_per_step"],
                    "block-diagonal GEMM path",
                    "same function (tests/test_networks.py)",
                    "s",
                    None,
                )
            )
    return out


def _report(m):
    peak = m["peak"]
    print(f"batched float32 matmul peak (large square): {peak / 1e9:.1f} GFLOP/s")
    for r in m["cells"]:
        c = r["ceiling"]
        print(
            f"{r['spec']} w={r['width']}: its own GEMMs {c / 1e9:.1f} GFLOP/s "
            f"({100 * c / peak:.0f}% of the large-square peak)"
        )
        runs = [("", r)] + ([("  before (block-diagonal): ", r["before"])] if "before" in r else [])
        for label, x in runs:
            print(
                f"  {label}{x['seconds_per_step'] * 1e3:.3f} ms/step; XLA count "
                f"{x['xla_flops_per_step'] / 1e6:.1f} MFLOP/step = "
                f"{x['xla_flops_per_s'] / 1e9:.1f} GFLOP/s "
                f"({100 * x['xla_flops_per_s'] / peak:.0f}% of peak, "
                f"{100 * x['xla_flops_per_s'] / c:.0f}% of own ceiling); useful "
                f"{x['useful_flops_per_step'] / 1e6:.1f} MFLOP/step = "
                f"{x['useful_flops_per_s'] / 1e9:.1f} GFLOP/s "
                f"({100 * x['useful_flops_per_s'] / peak:.0f}% of peak, "
                f"{100 * x['useful_flops_per_s'] / c:.0f}% of own ceiling)"
            )
        if "before" in r:
            print(f"  speed-up: {r['before']['seconds_per_step'] / r['seconds_per_step']:.2f}x")


if __name__ == "__main__":
    _report(measure("--quick" in sys.argv))
