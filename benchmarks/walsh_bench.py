"""Walsh-CG kernel regression (ntkgap.kernels.walsh_krr) against n: seconds
per solve, CG iterations with and without the low-degree preconditioner,
peak memory (tracemalloc), the ratio of a preconditioned iteration to the
transform's own floor (two transforms, the matvec), and against dense
Cholesky (scipy) where it fits. relu NTK (fc:depth=1,b_std=0.1), sparse
parity k = 4 labels, ridgeless, RTOL as shipped.

Usage: .venv/bin/python benchmarks/walsh_bench.py [--quick]
"""

from __future__ import annotations

import sys
import time
import tracemalloc

import numpy as np
import scipy.linalg as sla

from ntkgap.kernels import walsh_krr
from ntkgap.nets.arch import parse_arch
from ntkgap.spectral import walsh

ARCH = "fc:depth=1,act=relu,b_std=0.1"


def transform_seconds(D: int, reps: int = 5) -> float:
    v = np.random.default_rng(0).standard_normal(2**D)
    walsh.fwht(v)
    t = time.perf_counter()
    for _ in range(reps):
        walsh.fwht(v)
    return (time.perf_counter() - t) / reps


def solve_row(system, idx, y, precondition: bool) -> dict:
    tracemalloc.start()
    r = system.solve(idx, y, precondition=precondition)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return dict(r, peak=peak)


def cholesky_seconds(system, idx, y) -> float:
    t = time.perf_counter()
    K = system.g[np.bitwise_xor(idx[:, None], idx[None, :])]
    sla.cho_solve(sla.cho_factor(K, lower=True, overwrite_a=True, check_finite=False), y)
    return time.perf_counter() - t


def main(quick: bool = False) -> None:
    plan = {16: [2**10, 2**12, 2**13, 2**14, 2**15], 20: [2**10, 2**14, 2**17, 2**19]}
    plain_at = {16: set(plan[16]), 20: {2**14}}
    dense_at = {16: {2**13, 2**14}, 20: set()}
    if quick:
        plan = {16: [2**10, 2**13]}
    arch = parse_arch(ARCH)
    print("D n precond iterations seconds s/iter floor_ratio peak_MiB residual | "
          "cholesky_s walsh/cholesky")  # fmt: skip
    for D, ns in plan.items():
        system = walsh_krr.WalshSystem.of(arch, D)
        floor = 2 * transform_seconds(D)
        perm = np.random.default_rng(D).permutation(2**D)
        for n in ns:
            idx = perm[:n]
            y = np.prod(walsh.bit_column_matrix(D, idx)[:, :4], axis=1).astype(float)
            for pc in (True, False):
                if not pc and n not in plain_at.get(D, ()):
                    continue
                r = solve_row(system, idx, y, pc)
                per = r["seconds"] / max(1, r["iterations"])
                extra = ""
                if pc and n in dense_at.get(D, ()):
                    ch = cholesky_seconds(system, idx, y)
                    extra = f"{ch:.2f} {r['seconds'] / ch:.3f}"
                print(f"{D} {n} {int(pc)} {r['iterations']} {r['seconds']:.2f} {per:.4f} "
                      f"{per / floor:.2f} {r['peak'] / 2**20:.0f} {r['residual']:.1e} | {extra}",
                      flush=True)  # fmt: skip


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
