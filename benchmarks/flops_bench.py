"""Training FLOP/s of representative E4 cells against this machine's
batched-matmul peak, both measured by XLA in one run. Not a test.

    python benchmarks/flops_bench.py [--quick]

FLOPs per training step come from XLA's cost analysis of one compiled step
(forward, backward and the Adam update, vmapped over the seeds, on a
minibatch): ``jax.jit(...).lower(...).compile().cost_analysis()``. The
training time is the marginal time of :func:`ntkgap.training.train` between
two step counts (same cell otherwise), each timed after a first call that
compiled its program (training keeps compiled programs), so data generation
and the final test evaluation cancel out and compilation is not timed. The peak is the rate of
a large batched float32 matmul (8 x 1024x1024 @ 1024x1024), the best case for
XLA's CPU (or GPU) backend.
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
    from ntkgap.arch import parse_arch
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
    from ntkgap import training
    from ntkgap.arch import parse_arch
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


if __name__ == "__main__":
    q = "--quick" in sys.argv
    peak = matmul_peak()
    print(f"batched float32 matmul peak: {peak / 1e9:.1f} GFLOP/s")
    for spec, width, target in CELLS:
        r = achieved(spec, width, target, q)
        print(
            f"{spec} w={width}: {r['seconds_per_step'] * 1e3:.3f} ms/step; XLA count "
            f"{r['xla_flops_per_step'] / 1e6:.1f} MFLOP/step = {r['xla_flops_per_s'] / 1e9:.1f} "
            f"GFLOP/s ({100 * r['xla_flops_per_s'] / peak:.0f}% of peak); useful "
            f"{r['useful_flops_per_step'] / 1e6:.1f} MFLOP/step = "
            f"{r['useful_flops_per_s'] / 1e9:.1f} GFLOP/s "
            f"({100 * r['useful_flops_per_s'] / peak:.0f}% of peak)"
        )
