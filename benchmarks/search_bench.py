"""Adaptive n*(eps) search vs a fixed geometric grid at EQUAL resolution of
n* (consecutive grid points within a factor 1.25, the search's stopping
resolution). Prints ratios; not a test. `python benchmarks/search_bench.py
[--synthetic-only]`; `benchmarks/run_all.py` calls both functions and
records their ratios in RESULTS.md.

1. Synthetic curves (free to evaluate): evaluations, steps (batches that
   must run one after another) and the sum of n evaluated (the cost of
   full-batch training grows ~linearly in n) over many planted curves.
2. A real small training (fc:depth=1, width 64, parity:d=10,k=2, 200 steps,
   4 seeds, minibatches of 12): trainings and wall time, the fixed grid
   training all seeds of one n in one call, the search one call per step
   (``training.train_runs``: its seeds at different n in one program). Every
   (seed, n) gives the same error in both (minibatch training is
   deterministic per (seed, n) whatever the grouping and padding), which is
   checked, so the two n* agree wherever the search's bracket is the grid's.
   Both runs start with empty JAX compilation caches. ~40 s on an idle 2-core machine.
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ntkgap.runs import search  # noqa: E402

FACTOR = 1.25


def grid_bracket(grid, errs, eps):
    """The fixed grid's answer for one seed: (status, lo, hi) of the first crossing."""
    first = next((i for i, e in enumerate(errs) if e <= eps), None)
    if first is None:
        return "right", grid[-1], None
    if first == 0:
        return "left", None, grid[0]
    return "resolved", grid[first - 1], grid[first]


def synthetic(n_min=8, n_max=65_536, eps=0.1, curves=400, seed=0):
    rng = np.random.default_rng(seed)
    truth = np.exp(rng.uniform(np.log(4), np.log(2 * n_max), curves))  # some censored
    b = rng.uniform(0.5, 2.0, curves)
    step = rng.random(curves) < 0.3  # 30% step curves: error jumps from 1 to eps/10

    def err(s, n):
        if step[s]:
            return 1.0 if n < truth[s] else eps / 10
        return eps * (truth[s] / n) ** b[s]

    grid = search.geometric_grid(n_min, n_max, FACTOR)
    t0 = time.perf_counter()
    out = search.run_search(
        lambda batch: [err(s, n) for s, n in batch], range(curves), eps, n_min, n_max
    )
    t_search = time.perf_counter() - t0
    agree = sum(
        (r["status"], r["lo"], r["hi"])
        == grid_bracket(grid, [err(r["seed"], n) for n in grid], eps)
        for r in out["seeds"]
    )
    n_adapt = out["evaluations"]
    n_grid = len(grid) * curves
    scan = 0  # a grid scanned upward per seed, stopping at its first pass
    for s in range(curves):
        errs = [err(s, n) for n in grid]
        first = next((i for i, e in enumerate(errs) if e <= eps), len(grid) - 1)
        scan += first + 1
    cost_adapt = sum(n for v in out["state"].evals.values() for n in v)
    cost_grid = sum(grid) * curves
    status = {k: sum(r["status"] == k for r in out["seeds"]) for k in ("resolved", "left", "right")}
    print(
        f"synthetic ({curves} curves, 30% steps, n in [{n_min}, {n_max}], factor {FACTOR}, "
        f"{status}):"
    )
    print(
        f"  adaptive vs fixed grid: {n_adapt} evaluations vs {n_grid} "
        f"(ratio {n_grid / n_adapt:.1f}); {out['steps']} steps vs 1; "
        f"sum of n {cost_grid / cost_adapt:.1f}x smaller; brackets equal to the grid's: "
        f"{agree}/{curves}; search bookkeeping {t_search:.2f} s"
    )
    print(
        f"  adaptive vs grid scanned upward to the first pass: {n_adapt} vs {scan} "
        f"(ratio {scan / n_adapt:.1f}), {out['steps']} steps vs up to {len(grid)}"
    )
    return {"trainings": n_adapt, "grid_trainings": n_grid, "agree": agree, "curves": curves}


def real(n_min=16, n_max=1024, eps=0.05, seeds=(0, 1, 2, 3)):
    from ntkgap._infra.compat import jax
    from ntkgap.nets import training  # imports jax through ntkgap._infra.compat (x64 first)
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import parse_target

    arch, tgt = parse_arch("fc:depth=1"), parse_target("parity:d=10,k=2")
    # minibatches of 12 (n_min = 16 leaves 13 training points): a run's numbers
    # are then exactly the same whichever runs it shares a program with
    cfg = training.TrainConfig(steps=200, lr=1e-2, eval_every=100, batch=12)
    calls = {"grid": 0, "adaptive": 0}

    def train(n, ss, who):
        calls[who] += 1
        r = training.train(arch, 64, tgt, n, seeds=list(ss), cfg=cfg, n_test=500)
        return dict(zip(ss, r["test_mse_per_seed"]))

    grid = search.geometric_grid(n_min, n_max, FACTOR)
    # both runs start cold: the search's n lie on the grid, so a warm
    # compilation cache would hand it the grid's compiled programs
    jax.clear_caches()
    training._PROGRAMS.clear()
    t0 = time.perf_counter()
    table = {}
    for n in grid:  # the fixed grid: every seed at every n, seeds batched per n
        for s, e in train(n, seeds, "grid").items():
            table[(s, n)] = e
    t_grid = time.perf_counter() - t0

    def evaluate(batch):  # a step's runs, whatever their n, as one program
        calls["adaptive"] += 1
        return [
            r["test_mse"] for r in training.train_runs(arch, 64, tgt, batch, cfg=cfg, n_test=500)
        ]

    jax.clear_caches()
    training._PROGRAMS.clear()
    t0 = time.perf_counter()
    out = search.run_search(evaluate, seeds, eps, n_min, n_max)
    t_adapt = time.perf_counter() - t0
    same = all(table[(s, n)] == e for s, v in out["state"].evals.items() for n, e in v.items())
    agree = sum(
        (r["status"], r["lo"], r["hi"])
        == grid_bracket(grid, [table[(r["seed"], n)] for n in grid], eps)
        for r in out["seeds"]
    )
    n_adapt, n_grid = out["evaluations"], len(grid) * len(seeds)
    print(
        f"real: fc:depth=1 w=64 on parity:d=10,k=2, 200 steps, {len(seeds)} seeds, "
        f"eps={eps}, n in [{n_min}, {n_max}] ({len(grid)} grid points, factor {FACTOR})"
    )
    print(
        "  n* per seed (adaptive bracket): "
        + ", ".join(f"{r['status']} [{r['lo']}, {r['hi']}]" for r in out["seeds"])
    )
    print(
        f"  same error at every shared (seed, n): {same}; brackets equal to the grid's: "
        f"{agree}/{len(seeds)}"
    )
    print(
        f"adaptive vs fixed grid: {n_adapt} trainings vs {n_grid} (ratio {n_grid / n_adapt:.1f}); "
        f"wall {t_adapt:.1f} s vs {t_grid:.1f} s (ratio {t_grid / t_adapt:.1f}); "
        f"training calls {calls['adaptive']} vs {calls['grid']} in {out['steps']} steps"
    )
    return {
        "trainings": n_adapt,
        "grid_trainings": n_grid,
        "seconds": t_adapt,
        "grid_seconds": t_grid,
        "same": same,
        "agree": agree,
        "seeds": len(seeds),
    }


if __name__ == "__main__":
    synthetic()
    if "--synthetic-only" not in sys.argv:
        real()
