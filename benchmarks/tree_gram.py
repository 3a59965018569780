"""Seconds per tree-NTK Gram at L = 5 (32 leaves), before (neural-tangents'
kernel_fn in blocks, ``hypercube_lookup=False``) and after (the node-type
recursion of ``ntkgap.kernels.tree_gram``), one run, ratios printed.

Usage: ``python benchmarks/tree_gram.py [n ...]`` (default 1024 4096 8192).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from ntkgap.kernels import gram
from ntkgap.nets.arch import parse_arch

SEED = 0


def main(ns) -> None:
    """Times both paths at each n and prints one line per n.

    Args:
        ns: the Gram sizes.
    """
    arch = parse_arch("tree:arity=2,L=5")
    rng = np.random.default_rng(SEED)
    for n in ns:
        x = rng.choice([-1.0, 1.0], size=(n, arch.leaves, 1))
        t0 = time.perf_counter()
        new = gram.gram(arch, x)
        t1 = time.perf_counter()
        old = gram.gram(arch, x, hypercube_lookup=False)
        t2 = time.perf_counter()
        err = float(np.max(np.abs(new - old) / np.abs(old)))
        print(
            f"n={n}: kernel_fn {t2 - t1:.2f} s, node recursion {t1 - t0:.3f} s, "
            f"ratio {(t2 - t1) / (t1 - t0):.1f}x, max rel diff {err:.1e}",
            flush=True,
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1024, 4096, 8192])
