"""The cost model's held-out check: cells of the full profile that the model
was not calibrated on, each estimated (``ntkgap.runs.cost``, calibrated on
``CALIBRATION``, the held-out keys excluded) and then computed one at a
time in a fresh process with one worker in a scratch results folder; its
process CPU time (user + system, children included: the machine is shared,
so wall time would mislead) is compared with the estimate.

    python benchmarks/cost_check.py [CALIBRATION_DIR] [--scratch DIR] [--only KEY]
    (CALIBRATION_DIR: a stored quick run's results, default NTKGAP_RESULTS;
    --scratch: where the held-out cells are computed [/tmp/costcheck])

Prints one line per cell (experiment, key, method, estimate, measured CPU s,
ratio) and the largest ratio either way.
"""

import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from ntkgap._infra import config  # noqa: E402
from ntkgap.runs import config as runs_config  # noqa: E402
from ntkgap.runs import cost, store  # noqa: E402

#: what the model is calibrated on: a results folder of the quick profile
#: (its stored cells; none of HELD_OUT is among them, and they are excluded
#: should one be)
CALIBRATION = "quick profile's stored cells (NTKGAP_RESULTS or the folder given)"
#: the held-out cells: (experiment config, cell key) of the full profile,
#: spanning the methods, kernels (fc, tree, rhm), networks and sizes
HELD_OUT = (
    ("e3b_parity.toml", "b1f20c8ef540b33a9745"),  # ntk_search fc relu, parity k=2, cap 16,384
    ("e3a_sawtooth.toml", "4c1bbe122cf4fc736be2"),  # ntk_search fc, sawtooth L=4, cap 4,096
    ("e4_trees.toml", "61d4a8114ae28ec955ee"),  # ntk_search tree L=3, tuned ridge
    ("e10_predict.toml", "2d13c1243369b1520a33"),  # ntk_search tree arity 4, censors at 4,096
    ("e9_rhm.toml", "fa7051d68affd6808058"),  # net_search fc on an RHM (classification)
    ("e8_universality.toml", "48a06700b871e10099b4"),  # net_search fc residual, d = 8 tree
    ("e4_trees.toml", "75163c0e258c1f463750"),  # net_search tree L=3, 12 seeds
    ("e3b_parity.toml", "f61a019852177debd5db"),  # net_search fc relu, parity k=2
    ("e11_after_kernel.toml", "5f6bef421bec711f1d64"),  # after_kernel_search, tree L=3
    ("e6_lazy_rich.toml", "00a409d2af4ece123d2d"),  # net (fixed n), parity d=12
)


#: one thread everywhere: the model prices seconds of one core, and on a shared
#: machine idle BLAS/XLA threads spinning would inflate the CPU time measured
ONE_CORE = {
    "NTKGAP_TRAIN_WORKERS": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}


def held_out_keys() -> frozenset:
    """The held-out cells' keys."""
    return frozenset(k for _, k in HELD_OUT)


def _cell(config_name, key):
    """(experiment name, the full profile's cell with this key)."""
    path = os.path.join(ROOT, "experiments", config_name)
    cfg = runs_config.load_config(path, "full")
    for c in runs_config.expand(cfg, "full", where=path):
        if store.cell_key(c) == key:
            return cfg["name"], c
    raise SystemExit(f"cost_check: {config_name} full has no cell {key}")


def estimates(calibration: str) -> list[dict]:
    """Each held-out cell's estimate, the model calibrated on ``calibration``
    without any held-out key."""
    out = []
    for config_name, key in HELD_OUT:
        name, cell = _cell(config_name, key)
        est = cost.estimate({name: [cell]}, calibration, exclude=held_out_keys())
        e = est["experiments"][name]["cells"][0]
        out.append(dict(e, experiment=name, config=config_name, key=key, cell=cell))
    return out


def measure(config_name: str, key: str, scratch: str) -> float:
    """CPU seconds (user + system, the process and its children) of computing
    one cell in a fresh process, from its start to its end (the interpreter's
    and JAX's start-up before it not counted: a worker pays them once)."""
    code = (
        "import resource, sys; sys.path.insert(0, sys.argv[1]); "
        "from benchmarks import cost_check as k; from ntkgap.runs import methods; "
        "name, cell = k._cell(sys.argv[2], sys.argv[3]); import os; "
        "os.makedirs(os.path.join(sys.argv[4], name), exist_ok=True); "
        "cpu = lambda: sum(getattr(resource.getrusage(w), f) for w in "
        "(resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ('ru_utime', 'ru_stime')); "
        "t = cpu(); methods.run_cell(cell, name, results=sys.argv[4]); print(cpu() - t)"
    )
    env = dict(os.environ, NTKGAP_RESULTS=scratch, **ONE_CORE)
    out = subprocess.run(
        [sys.executable, "-c", code, ROOT, config_name, key, os.path.join(scratch, key)],
        check=True, env=env, cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    return float(out.stdout.strip().splitlines()[-1])


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    scratch = argv[argv.index("--scratch") + 1] if "--scratch" in argv else "/tmp/costcheck"
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    args = [a for a in args if a not in (scratch, only)]
    calibration = args[0] if args else config.results_dir()
    rows = []
    for e in estimates(calibration):
        if only and e["key"] != only:
            continue
        t0 = time.perf_counter()
        cpu = measure(e["config"], e["key"], scratch)
        ratio = e["seconds"] / cpu
        reach = f", n ~{e['n_reach']:.0f} from {e['reach_from']}" if "n_reach" in e else ""
        rows.append(ratio)
        print(
            f"{e['experiment']:16s} {e['key']} {e['cell']['method']:19s} "
            f"est {e['seconds']:8.1f} s  cpu {cpu:8.1f} s  ratio {ratio:5.2f}  "
            f"(wall {time.perf_counter() - t0:.0f} s; {e['how']}"
            f"{reach})",
            flush=True,
        )
    if rows:
        print(f"ratios estimate/measured: min {min(rows):.2f}, max {max(rows):.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
