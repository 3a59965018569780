# Sourced by benchmarks/gpu_run.sh and benchmarks/gpu_net_check.sh (on the device, repository
# root): the output folder, and `gpu_setup`, which installs the carried wheels (.whl/:
# neural-tangents, frozendict; see gpu_run.sh) into /tmp/site and puts them and the repository
# on PYTHONPATH, over the device image's own jax.
set -o pipefail
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
ROOT=$PWD

gpu_setup() {
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || return 1
    export PYTHONPATH=$ROOT:/tmp/site PYTHONUNBUFFERED=1
}
