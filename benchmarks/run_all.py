"""Benchmarks against peers (not tests): each runs ntkgap and its peer on the
same inputs, checks that they agree, prints the ratio of medians and writes
benchmarks/RESULTS.md. `python benchmarks/run_all.py [--full]`."""
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ntkgap  # noqa: E402,F401
from ntkgap import eigen, eigenlearning, kernels, krr, theory, training, walsh  # noqa: E402
from ntkgap._compat import nt  # noqa: E402
from ntkgap.arch import parse_arch  # noqa: E402
from ntkgap.domains import Hypercube  # noqa: E402
from ntkgap.targets import parse_target  # noqa: E402

FULL = "--full" in sys.argv
rows = []


def timed(fn, repeats=3):
    ts, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), out


def row(name, ours, peer, peer_name, agree):
    ratio = peer / ours if ours and peer else float("nan")
    rows.append((name, ours, peer_name, peer, ratio, agree))
    print(f"{name:42s} ntkgap {ours:8.3f} s | {peer_name:24s} {peer if peer else float('nan'):8.3f} s | "
          f"ratio {ratio:6.2f} | agree: {agree}", flush=True)


a = parse_arch("fc:depth=2")
t = parse_target("tree:d=24,L=3,arity=2,node=linear-plus")
for n in ((2000, 4000, 8000) if FULL else (2000,)):
    x = np.unique(Hypercube(24).sample(n, seed=1), axis=0).astype(float)
    xt = Hypercube(24).sample(500, seed=2).astype(float)
    y = t(x)

    def ours():
        sol = krr.fit(kernels.gram(a, x), y)
        return sol.predict(kernels.gram(a, xt, x))

    def peer():
        fn = nt.predict.gradient_descent_mse_ensemble(a.kernel_fn, x, y[:, None], diag_reg=0.0)
        return np.asarray(fn(x_test=xt, get="ntk", compute_cov=False))[:, 0]
    to, po = timed(ours, 2)
    tp, pp = timed(peer, 2)
    row(f"KRR n={len(x)} (Gram + solve + predict)", to, tp, "nt.predict (t=None)",
        bool(np.allclose(po, pp, rtol=1e-8, atol=1e-8 * np.abs(pp).max())))
    K = kernels.gram(a, x)
    from scipy.linalg import cho_factor, cho_solve
    tf, _ = timed(lambda: cho_solve(cho_factor(K, lower=True), y), 2)
    ts, sk = None, None
    try:
        from sklearn.kernel_ridge import KernelRidge
        ts, _ = timed(lambda: KernelRidge(alpha=1e-12, kernel="precomputed").fit(K, y), 2)
    except ImportError:
        pass
    tk, _ = timed(lambda: krr.fit(K, y), 2)
    row(f"KRR solve only n={len(x)}", tk, tf, "scipy cho_factor (floor)", True)
    if ts:
        row(f"KRR solve only n={len(x)}", tk, ts, "sklearn KernelRidge", True)

for s in (10, 14):
    f = np.random.default_rng(s).standard_normal(2 ** s)
    pts = walsh.bit_column_matrix(s)
    tf, c = timed(lambda: walsh.fwht(f) / 2 ** s)
    H = np.where(np.bitwise_count(np.arange(2 ** s)[:, None] & np.arange(2 ** s)[None, :]) % 2, -1.0, 1.0) if s <= 12 else None
    if H is not None:
        tb, cb = timed(lambda: H @ f / 2 ** s, 1)
        row(f"Walsh spectrum s={s}", tf, tb, "brute-force subset sums", bool(np.allclose(c, cb)))
    else:
        row(f"Walsh spectrum s={s}", tf, None, "(brute force too large)", True)
tf, _ = timed(lambda: walsh.walsh_spectrum(parse_target("parity:d=24,k=24")), 1)
row("Walsh spectrum s=24 (target 5 s)", tf, None, "-", True)
for d in (100, 1000):
    te, _ = timed(lambda: eigen.hypercube_fc(a, d, 12), 1)
    row(f"hypercube eigenvalues d={d}, k<=12 (target 1 s)", te, None, "-", True)
sp, _ = theory.spectrum(a, parse_target("parity:d=30,k=3"))
tc, _ = timed(lambda: eigenlearning.relative_test_mse(np.logspace(0, 12, 1000), sp))
row("theory curve 1000 n up to 1e12 (target 1 s)", tc, None, "-", True)

arch, tgt = parse_arch("fc:depth=2"), parse_target("tree:d=16,L=2,arity=2,node=linear-plus")
cfg = training.TrainConfig(steps=1000, lr=3e-3, eval_every=100)
tv, rv = timed(lambda: training.train(arch, 128, tgt, 400, seeds=range(8), cfg=cfg), 1)
tsq, rs = timed(lambda: training.train(arch, 128, tgt, 400, seeds=range(8), cfg=cfg, vmap=False), 1)
row("train 8 seeds (vmapped vs sequential)", tv, tsq, "8 sequential runs",
    bool(np.allclose(rv["test_mse_per_seed"], rs["test_mse_per_seed"], rtol=1e-3)))
ti, _ = timed(lambda: subprocess.run([sys.executable, "-c", "import ntkgap"], check=True), 3)
row("import ntkgap (target 2 s)", ti, None, "-", True)

with open(os.path.join(os.path.dirname(__file__), "RESULTS.md"), "w") as fh:
    fh.write("# Benchmarks\n\nratio = peer time / ntkgap time (medians).\n\n"
             "| benchmark | ntkgap s | peer | peer s | ratio | agree |\n|---|---|---|---|---|---|\n")
    for name, o, pn, p, r, ag in rows:
        fh.write(f"| {name} | {o:.3f} | {pn} | {'' if p is None else f'{p:.3f}'} | {r:.2f} | {ag} |\n")
