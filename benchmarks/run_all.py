"""Benchmarks against peers (not tests): each runs ntkgap and its peer on the
same inputs, checks that they agree, prints the ratio of medians and writes
benchmarks/RESULTS.md. `python benchmarks/run_all.py [--quick]` (--quick:
KRR at n = 2,000 only; the default also runs 4,000 and 8,000, ~5 min)."""

import json
import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ntkgap._infra.compat  # noqa: E402,F401
from ntkgap import eigen, eigenlearning, kernels, krr, theory, training, walsh  # noqa: E402
from ntkgap._infra import cores  # noqa: E402
from ntkgap._infra.compat import nt  # noqa: E402
from ntkgap.arch import parse_arch  # noqa: E402
from ntkgap.domains import Hypercube  # noqa: E402
from ntkgap.targets import parse_target  # noqa: E402

QUICK = "--quick" in sys.argv
# why a target can be missed: printed under RESULTS.md only for the
# benchmarks (by name prefix) whose target this run missed
NOTES = {
    "KRR n=": "KRR vs nt.predict: both factor the same n x n matrix, and ntkgap's solve runs "
    "near the LAPACK floor (`KRR solve only` vs `scipy cho_factor`); on the hypercube "
    "ntkgap's Gram is a table look-up, so the Cholesky itself is most of its time.",
    "train 8 seeds": "Training, 8 seeds: vmap amortises tracing, compilation and dispatch, which "
    "dominate small networks; beyond that, XLA's CPU backend runs these batched "
    "matmuls on about one core (~100 GFLOP/s for 8 x (320x128)@(128x128) with one "
    "core or two), so the seeds are split into a vmapped group per core. On "
    f"{cores.available()} cores the ceiling is about {cores.available()}x the one-thread "
    "row; a compute-bound network (width 128: ~35 MFLOP a step) gains least.",
}
rows = []


def timed(fn, repeats=3, warmup=True):
    """Median wall time of ``repeats`` calls after one untimed warm-up call
    (first-call costs: op compilation, first touch of fresh memory)."""
    ts, out = [], None
    if warmup:
        fn()
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), out


def target_status(name, ours, ratio):
    """(met, text) for a row whose name states a target ("target 3x" on
    the ratio, "target 1 s" on ntkgap's time), else None."""
    m = re.search(r"target (\d+(?:\.\d+)?) ?(x|s)", name)
    if not m:
        return None
    goal, unit = float(m.group(1)), m.group(2)
    if unit == "x":
        return ratio >= goal, f"{ratio:.2f}x"
    return ours <= goal, f"{ours:.3f} s"


def row(name, ours, peer, peer_name, agree):
    ratio = peer / ours if ours and peer else float("nan")
    rows.append((name, ours, peer_name, peer, ratio, agree))
    print(
        f"{name:42s} ntkgap {ours:8.3f} s | {peer_name:24s} {peer if peer else float('nan'):8.3f} s | "
        f"ratio {ratio:6.2f} | agree: {agree}",
        flush=True,
    )


a = parse_arch("fc:depth=2")
t = parse_target("tree:d=24,L=3,arity=2,node=linear-plus")
for n in (2000,) if QUICK else (2000, 4000, 8000):
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
    row(
        f"KRR n={len(x)} (Gram + solve + predict{'; target 3x' if n == 8000 else ''})",
        to,
        tp,
        "nt.predict (t=None)",
        bool(np.allclose(po, pp, rtol=1e-8, atol=1e-8 * np.abs(pp).max())),
    )
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

# Kernel Gram: batched (fixed blocks, one compilation) vs one unbatched
# kernel_fn call vs the empirical NTK of a width-1024 network (n=256: its
# Jacobians are n x 1M parameters)
xg = Hypercube(24).sample(3000, seed=5).astype(float)
tb, Kb = timed(lambda: kernels.gram(a, xg, block=1024, hypercube_lookup=False), 2)
tu, Ku = timed(lambda: np.asarray(a.kernel_fn(xg, xg, "ntk")), 2)
tl, Kl = timed(lambda: kernels.gram(a, xg), 2)
# nt's ReLU kernel carries ~1e-8 relative error near correlation 1
row(
    "NTK Gram n=3000 (batched)", tb, tu, "unbatched kernel_fn", bool(np.allclose(Kb, Ku, rtol=1e-7))
)
row(
    "NTK Gram n=3000 (hypercube look-up)",
    tl,
    tu,
    "unbatched kernel_fn",
    bool(np.allclose(Kl, Ku, rtol=1e-7)),
)
xe = xg[:256]
init_fn, apply_fn, _ = a.stax(1024)
_, params = init_fn(__import__("jax").random.PRNGKey(0), xe.shape)
emp = nt.empirical_ntk_fn(apply_fn, trace_axes=(-1,), vmap_axes=0)
te, Ke = timed(lambda: np.asarray(emp(xe, xe, params)), 1)
ta, Ka = timed(lambda: kernels.gram(a, xe), 2)
rel = float(np.linalg.norm(Ke - Ka) / np.linalg.norm(Ka))
row(
    "NTK Gram n=256 (analytic)",
    ta,
    te,
    "empirical NTK width 1024",
    f"rel. diff {rel:.3f} (finite width)",
)

# Tree-network Gram (ConvLocal kernels) on this JAX stack against the
# reference stack (jax 0.4.38 in .venv-ref, built by `make test-ref`), each
# timed by benchmarks/tree_gram.py in its own interpreter
HERE = os.path.dirname(os.path.abspath(__file__))
REF_PY = os.path.join(os.path.dirname(HERE), ".venv-ref", "bin", "python")


def tree_gram_times(python):
    r = subprocess.run(
        [python, os.path.join(HERE, "tree_gram.py"), "500", "2000"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(r.stdout.strip().splitlines()[-1])


new = tree_gram_times(sys.executable)
ref = tree_gram_times(REF_PY) if os.path.exists(REF_PY) else None
for n in ("500", "2000"):
    row(
        f"NTK Gram tree:arity=2,L=3 n={n} (jax {new['jax']})",
        new[n],
        ref[n] if ref else None,
        f"jax {ref['jax']} (.venv-ref)" if ref else "- (no .venv-ref)",
        bool(np.isclose(new[f"{n}_trace"], ref[f"{n}_trace"], rtol=1e-12)) if ref else "-",
    )

for s in (10, 14):
    f = np.random.default_rng(s).standard_normal(2**s)
    tf, c = timed(lambda: walsh.fwht(f) / 2**s)
    idx = np.arange(2**s)

    def brute():
        # f_hat(S) = 2^-s sum_x f(x) chi_S(x), rows of S in chunks of 1024
        out = np.empty(2**s)
        for lo in range(0, 2**s, 1024):
            H = np.where(np.bitwise_count(idx[lo : lo + 1024, None] & idx[None, :]) % 2, -1.0, 1.0)
            out[lo : lo + 1024] = H @ f / 2**s
        return out

    tb, cb = timed(brute, 1)
    row(
        f"Walsh spectrum s={s}",
        tf,
        tb,
        "brute-force subset sums",
        bool(np.allclose(c, cb, atol=1e-12)),
    )
tf, _ = timed(lambda: walsh.walsh_spectrum(parse_target("parity:d=24,k=24")), 1)
row("Walsh spectrum s=24 (target 5 s)", tf, None, "-", True)
for d in (100, 1000):
    te, _ = timed(lambda: eigen.hypercube_fc(a, d, 12), 1)
    row(f"hypercube eigenvalues d={d}, k<=12 (target 1 s)", te, None, "-", True)
sp, _ = theory.spectrum(a, parse_target("parity:d=30,k=3"))
tc, _ = timed(lambda: eigenlearning.relative_test_mse(np.logspace(0, 12, 1000), sp))
row("theory curve 1000 n up to 1e12 (target 1 s)", tc, None, "-", True)

# Training: one call for 8 seeds, vmapped in groups, a thread per core,
# vs 8 separate calls (each traces and compiles its own step function, as 8
# separate runs would); the middle row is vmap alone (one thread), to show
# what each part buys. Both sides use the same XLA settings.
for spec, target, width, n in (
    ("fc:depth=2", "tree:d=16,L=2,arity=2,node=linear-plus", 32, 200),
    ("fc:depth=2", "tree:d=16,L=2,arity=2,node=linear-plus", 128, 400),
    ("tree:arity=2,L=3", "tree:d=16,L=3,arity=2,node=linear-plus", 16, 256),
):
    arch, tgt = parse_arch(spec), parse_target(target)
    cfg = training.TrainConfig(steps=1000, lr=3e-3, eval_every=100)
    tv, rv = timed(lambda: training.train(arch, width, tgt, n, seeds=range(8), cfg=cfg), 2)
    t1, r1 = timed(
        lambda: training.train(arch, width, tgt, n, seeds=range(8), cfg=cfg, workers=1), 2
    )
    tsq, rs = timed(
        lambda: training.train(arch, width, tgt, n, seeds=range(8), cfg=cfg, vmap=False), 2
    )
    agree = bool(
        np.allclose(rv["test_mse_per_seed"], rs["test_mse_per_seed"], rtol=1e-3)
        and rv["test_mse_per_seed"] == r1["test_mse_per_seed"]
    )
    name = f"train 8 seeds {spec} w={width} n={n}, 1000 steps"
    row(f"{name} ({rv['workers']} threads; target 3x)", tv, tsq, "8 sequential runs", agree)
    row(f"{name} (1 thread: vmap alone)", t1, tsq, "8 sequential runs", agree)
ti, _ = timed(lambda: subprocess.run([sys.executable, "-c", "import ntkgap"], check=True), 3)
row("import ntkgap (target 2 s)", ti, None, "-", True)
ti, _ = timed(
    lambda: subprocess.run([sys.executable, "-c", "import ntkgap.kernels"], check=True), 3
)
row("import ntkgap.kernels (JAX + neural-tangents, no TensorFlow)", ti, None, "-", True)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if all(
    os.path.exists(os.path.join(ROOT, "results", f".done-quick-{e}"))
    for e in (
        "e1_spectra",
        "zoo",
        "e3b_parity",
        "e6_lazy_rich",
        "e2_control",
        "e3a_sawtooth",
        "e4_trees",
    )
):
    # warm: every result stored; -W style.py makes every figure and REPORT.md stale
    tw, _ = timed(
        lambda: subprocess.run(
            ["make", "-s", "-W", "experiments/figures/style.py", "figures"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ),
        1,
        warmup=False,
    )
    row("make figures, warm (redraw all from stored results; target 15 s)", tw, None, "-", True)
else:
    print("make figures warm time: skipped (run `make figures` first)")

with open(os.path.join(os.path.dirname(__file__), "RESULTS.md"), "w") as fh:
    fh.write(
        "# Benchmarks\n\nratio = peer time / ntkgap time (medians of 2-3 repeats), "
        "measured on the 2-core CPU machine by `make bench`.\n\n"
        "| benchmark | ntkgap s | peer | peer s | ratio | agree |\n|---|---|---|---|---|---|\n"
    )
    for name, o, pn, p, r, ag in rows:
        fh.write(
            f"| {name} | {o:.3f} | {pn} | {'' if p is None else f'{p:.3f}'} | {r:.2f} | {ag} |\n"
        )
    fh.write("\n## Targets\n\n")
    missed = set()
    for name, o, pn, p, r, ag in rows:
        st = target_status(name, o, r)
        if st is None:
            continue
        met, got = st
        fh.write(f"- {name}: {'met' if met else 'missed'} ({got})\n")
        if not met:
            missed |= {pre for pre in NOTES if name.startswith(pre)}
    if missed:
        fh.write("\n## Why targets are missed (measured on the 2-core machine)\n\n")
        for pre in sorted(missed):
            fh.write(f"- {NOTES[pre]}\n")
