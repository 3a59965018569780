#!/usr/bin/env bash
# Follow-up to benchmarks/gpu_run.sh: the trained tree-net cell (L = 5 tanh,
# quick profile) gave a different median n* on the H200 (jax 0.11.2) than on the 2-core CPU
# machine (jax 0.10.2), with a different learning rate chosen, while the kernel cell agreed to
# 1e-13. This reruns only that cell, twice and side by side on one device machine, to tell the
# GPU's float32 matmuls (TF32 by default) from the jax version:
#   A. on the GPU with JAX_DEFAULT_MATMUL_PRECISION=highest (full float32 dots), cores 0-3;
#   B. on the device's CPU (JAX_PLATFORMS=cpu, jax 0.11.2), cores 4-15.
# A then runs tests/test_tree_gram.py on the GPU if time is left. The kernel cell's stored
# result (from gpu_run.sh) is put in each results folder first (prefill/), so `run` skips it.
# Same setup as gpu_run.sh (.whl/ wheels, image's jax 0.11.2). Usage (device, repo root):
#   bash benchmarks/gpu_net_check.sh   [OUT=folder]
source "$(dirname "$0")/gpu_setup.sh"  # OUT, ROOT, gpu_setup
NET=5c9dd41bcd5c98dff466

cell() {  # label, results folder, cores, env...
    local label=$1 res=$2 cores=$3; shift 3
    mkdir -p "$res/e4_gpu"
    cp prefill/*.json "$res/e4_gpu/" 2>/dev/null
    local t0=$SECONDS
    env "$@" timeout 270 taskset -c "$cores" \
        python3 -m ntkgap run benchmarks/e4_gpu.toml --results "$res" --jobs 1 --json
    echo "[$label] rc=$? wall=$((SECONDS - t0))s"
}

main() {
    SECONDS=0
    gpu_setup || return 1
    date -u
    (cell gpu_highest /tmp/r_gpu_highest 0-3 JAX_DEFAULT_MATMUL_PRECISION=highest
     if [ $SECONDS -lt 200 ]; then
         timeout $((270 - SECONDS)) taskset -c 0-3 python3 -m pytest -q -p no:cacheprovider \
             tests/test_tree_gram.py
         echo "[tree_gram tests] rc=$?"
     fi) &
    (cell cpu_jax011 /tmp/r_cpu 4-15 JAX_PLATFORMS=cpu) &
    wait
    python3 - "$OUT/summary.json" "$NET" /tmp/r_gpu_highest /tmp/r_cpu <<'EOF'
import json, sys
out = {}
for root in sys.argv[3:]:
    try:
        r = json.load(open(f"{root}/e4_gpu/{sys.argv[2]}.json"))["result"]
    except (OSError, KeyError, ValueError) as e:
        out[root] = repr(e)
        continue
    out[root] = {"cell_seconds": r.get("cell_seconds"), "median": r.get("median"),
                 "lr_chosen": r.get("lr_chosen"), "lr_sweep": r.get("lr_sweep"),
                 "per_seed_n_star": [s.get("n_star") for s in r.get("per_seed", [])]}
json.dump(out, open(sys.argv[1], "w"), indent=1)
for k, v in out.items():
    print(k, v if isinstance(v, str) else (v["cell_seconds"], v["median"]["n_star"], v["lr_chosen"]))
EOF
    tar czf "$OUT/results.tgz" -C /tmp $(cd /tmp && ls -d r_gpu_highest r_cpu 2>/dev/null)
    echo "done, elapsed ${SECONDS}s"
}

main 2>&1 | tee "$OUT/log"
