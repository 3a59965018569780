"""Times the NTK Gram of ``tree:arity=2,L=3`` (d = 24 hypercube points) on
this interpreter's JAX stack and prints one JSON line: the jax version and,
for each n, the median of 3 timed calls after one warm-up (compilation).
`python benchmarks/tree_gram.py 500 2000`; run_all.py runs it under .venv
and under the reference stack's .venv-ref to compare the two."""

import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ntkgap._infra.compat import jax  # noqa: E402
from ntkgap.kernels import gram as kernels  # noqa: E402
from ntkgap.nets.arch import parse_arch  # noqa: E402
from ntkgap.targets.domains import Hypercube  # noqa: E402

arch = parse_arch("tree:arity=2,L=3")
out = {"jax": jax.__version__}
for n in map(int, sys.argv[1:]):
    x = arch.inputs(Hypercube(24), Hypercube(24).sample(n, seed=5))
    kernels.gram(arch, x)
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        K = kernels.gram(arch, x)
        ts.append(time.perf_counter() - t)
    out[str(n)] = float(np.median(ts))
    out[f"{n}_trace"] = float(np.trace(K))
print(json.dumps(out))
