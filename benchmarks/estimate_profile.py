"""Estimate what a profile will cost before running it, from the cells
already stored (usually the quick profile's): each method's seconds per unit
of work are fitted on the stored cells, then applied to the target
profile's cells. Work per cell: seeds x steps x batch x weights per example
for networks, n^3 / 3 (Cholesky) plus the test Gram for KRR; other methods
take their stored median time. A rough guide (within a factor ~2-3), not a
promise: it assumes this machine and cell sizes it can extrapolate to.

    python benchmarks/estimate_profile.py [full]
"""

import glob
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from ntkgap import runner  # noqa: E402
from ntkgap.arch import parse_arch  # noqa: E402
from ntkgap.targets import parse_target  # noqa: E402


def work(cell):
    m = cell["method"]
    if m == "net":
        a, t = parse_arch(cell["arch"]), parse_target(cell["target"])
        d = 2 if t.domain.name == "circle" else t.domain.d
        w = cell["width"]
        batch = cell.get("batch") or int(0.8 * cell["n"])
        if a.name == "fc":
            weights = d * w + (a.spec["depth"] - 1) * w * w + w
        else:
            weights = 2 * a.leaves * w
        return len(cell["seeds"]) * cell["steps"] * batch * weights
    if m == "ntk":
        return cell["n"] ** 3 / 3 + 50 * cell["n"] * cell.get("n_test", 2000)
    return None


def main(profile):
    stored = {}
    for path in glob.glob(os.path.join(runner.RESULTS, "*", "*.json")):
        if os.path.basename(path).startswith("."):
            continue
        rec = runner.load_result(path)
        if rec:
            stored.setdefault(rec["cell"]["method"], []).append(
                (work(rec["cell"]), rec["result"]["cell_seconds"])
            )
    if not stored:
        sys.exit("estimate_profile: no stored results to calibrate on (run `make figures` first)")
    rate, floor = {}, {}
    for m, pts in stored.items():
        secs = np.array([s for _, s in pts])
        floor[m] = float(np.median(secs))
        if pts[0][0] is not None:
            w = np.array([x for x, _ in pts], float)
            big = w >= np.median(w)  # big cells: time ~ work; small ones are overhead
            rate[m] = float(np.median(secs[big] / w[big]))
    total = 0.0
    print(f"{'experiment':16s} {'cells':>6s} {'estimated core-hours':>22s}")
    for path in sorted(glob.glob(os.path.join(ROOT, "experiments", "*.toml"))):
        cfg = runner.load_config(path)
        cells = runner.expand(cfg, profile, validate=False)
        secs = 0.0
        for c in cells:
            w = work(c)
            base = floor.get(c["method"], 1.0)
            secs += (
                max(base, rate[c["method"]] * w) if w is not None and c["method"] in rate else base
            )
        total += secs
        print(f"{cfg['name']:16s} {len(cells):6d} {secs / 3600:22.2f}")
    print(
        f"{'total':16s} {'':6s} {total / 3600:22.2f}   (cells run 2 at a time on a 2-core machine: "
        f"~{total / 3600 / 2:.1f} h wall)"
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "full")
