#!/usr/bin/env bash
# One timed run of the two L = 5 tanh-tree E4 cells of the quick profile
# (benchmarks/e4_gpu.toml: experiments/e4_trees.toml's [[quick.grid]] tables, verbatim; the
# same cell keys as a CPU run's results/e4_trees/) on a machine with a GPU.
#
# Written for this workplace's H200 machine (Python 3.12, jax 0.11.2 + jax-cuda13-plugin in
# the image, no network), not for CI: nothing in ntkgap needs a GPU. The locked stack
# (jax/jaxlib 0.10.2) does not travel there: jaxlib 0.10.2 (85 MB) with jax-cuda13-pjrt
# 0.10.2 (124 MB) is over the 64 MiB a call may carry, so this runs on the image's jax
# 0.11.2 and brings only what ntkgap needs that the image lacks, as wheels in .whl/:
#   neural_tangents-0.6.5-py2.py3-none-any.whl, frozendict-2.5.1-py3-none-any.whl
# (get them with `pip download --no-deps`). Everything else ntkgap imports (numpy, scipy,
# mpmath, optax, chex, matplotlib, tqdm) is in the image, in its own versions.
#
# Steps (each bounded, so that the summary and the results always come back):
#   1. versions, devices, a float64 Cholesky on the GPU;
#   2. `ntkgap run benchmarks/e4_gpu.toml --jobs 1` (both cells, the whole machine);
#   3. the kernel cell again pinned to 2 cores (taskset), the CPU machine's core count:
#      ntkgap's Cholesky and solves are scipy on the host, the Grams and training JAX on
#      the GPU, so this separates the GPU's share from the 16 host cores';
#   4. tests/test_compat.py and tests/test_tree_gram.py (the shim and the tree Gram on
#      this jax);
#   5. $OUT/summary.json (per cell: seconds, median n*, per-seed n*) and
#      $OUT/results.tgz (the stored result files).
# Usage (on the device, repository root): bash benchmarks/gpu_run.sh   [OUT=folder]
source "$(dirname "$0")/gpu_setup.sh"  # OUT, ROOT, gpu_setup
R1=/tmp/gpu_results
R2=/tmp/gpu_results_2core

main() {
    SECONDS=0
    gpu_setup || return 1
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    echo "nproc: $(nproc)"
    python3 - <<'EOF' || return 1
import time, importlib.metadata as md
import ntkgap._infra.compat  # the shim, x64 on
import jax, jax.numpy as jnp, numpy, scipy
def version(p):
    try:
        return md.version(p)
    except md.PackageNotFoundError:
        return None
print("python packages:", {p: version(p) for p in (
    "jax", "jaxlib", "jax-cuda13-plugin", "jax-cuda13-pjrt", "neural-tangents", "numpy",
    "scipy", "optax", "chex")})
print("devices:", jax.devices(), "default backend:", jax.default_backend())
print("x64:", jax.config.jax_enable_x64)
a = jax.random.normal(jax.random.PRNGKey(0), (8192, 8192), dtype=jnp.float64)
a = a @ a.T / 8192 + jnp.eye(8192)
jnp.linalg.cholesky(a).block_until_ready()
t = time.perf_counter(); c = jnp.linalg.cholesky(a).block_until_ready()
print(f"float64 Cholesky 8192 on {c.devices()}: {time.perf_counter() - t:.3f} s")
EOF
    echo "== step 2: both cells, whole machine (elapsed ${SECONDS}s)"
    local t0=$SECONDS
    timeout 330 python3 -m ntkgap run benchmarks/e4_gpu.toml --results "$R1" --jobs 1 --json
    echo "rc=$? wall=$((SECONDS - t0))s"
    if [ $SECONDS -lt 300 ] && [ -f "$R1/e4_gpu/5c9dd41bcd5c98dff466.json" ]; then
        echo "== step 3: kernel cell again on 2 host cores (elapsed ${SECONDS}s)"
        mkdir -p "$R2/e4_gpu"
        cp "$R1/e4_gpu/5c9dd41bcd5c98dff466.json" "$R2/e4_gpu/"  # the net cell: stored, skipped
        t0=$SECONDS
        timeout $((400 - SECONDS)) taskset -c 0,1 \
            python3 -m ntkgap run benchmarks/e4_gpu.toml --results "$R2" --jobs 1 --json
        echo "rc=$? wall=$((SECONDS - t0))s"
    fi
    if [ $SECONDS -lt 410 ]; then
        echo "== step 4: shim and tree-Gram tests (elapsed ${SECONDS}s)"
        timeout $((445 - SECONDS)) python3 -m pytest -q -x -p no:cacheprovider \
            tests/test_compat.py tests/test_tree_gram.py
        echo "rc=$?"
    fi
    echo "== step 5: summary (elapsed ${SECONDS}s)"
    python3 - "$OUT/summary.json" "$R1" "$R2" <<'EOF'
import glob, json, os, sys
out = {}
for label, root in (("gpu_16core", sys.argv[2]), ("gpu_2core", sys.argv[3])):
    for f in sorted(glob.glob(os.path.join(root, "e4_gpu", "*.json"))):
        if os.path.basename(f).startswith("."):
            continue
        d = json.load(open(f))
        r, c = d.get("result", {}), d.get("cell", {})
        key = os.path.basename(f)[:-5]
        out.setdefault(label, {})[key] = {
            "method": c.get("method"), "failed": d.get("failed") or r.get("failed"),
            "cell_seconds": r.get("cell_seconds"), "median": r.get("median"),
            "per_seed_n_star": [s.get("n_star") for s in r.get("per_seed", [])],
            "factorizations": r.get("factorizations"), "evaluations": len(r.get("evaluations", [])),
            "lr_chosen": r.get("lr_chosen"),
        }
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps({k: {kk: (vv["method"], vv["cell_seconds"], (vv["median"] or {}).get("n_star"))
                      for kk, vv in v.items()} for k, v in out.items()}))
EOF
    tar czf "$OUT/results.tgz" -C /tmp $(cd /tmp && ls -d gpu_results gpu_results_2core 2>/dev/null)
    echo "done, elapsed ${SECONDS}s"
}

main 2>&1 | tee "$OUT/log"
