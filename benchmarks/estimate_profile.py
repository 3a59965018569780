"""Estimate what a profile will cost before running it, from the cells
already stored (usually the quick profile's): the cost model of
:mod:`ntkgap.runs.cost` (its doc says how each cell is estimated) applied to
every experiment config that has the profile (its own table or one it
includes). Prints core-hours per experiment and in total.

    python benchmarks/estimate_profile.py [quick|paper|full] [--detail]
    (NTKGAP_RESULTS: where the stored cells are, default results/;
    --detail: core-hours per method and arch too)
"""

import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from ntkgap._infra import config  # noqa: E402
from ntkgap.runs import config as runs_config  # noqa: E402
from ntkgap.runs import cost  # noqa: E402


def profile_cells(profile):
    """experiment name -> its expanded cells, for every config of
    experiments/ that has ``profile``."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "experiments", "*.toml"))):
        cfg = runs_config.load_config(path)
        if runs_config.has_profile(cfg, profile):
            out[cfg["name"]] = runs_config.expand(cfg, profile, validate=False)
    return out


def _line(name, exp, calibrated):
    """The table row of one experiment."""
    hows = [c["how"] for c in exp["cells"]]
    note = []
    if (k := hows.count("floor")) > 0:
        note.append(f"{k} searches without a stored one to scale")
    if (k := hows.count("other experiment's search")) > 0:
        note.append(f"{k} searches scaled from another experiment's")
    if calibrated and not exp["own_cells"]:
        note.append("no stored cells of its own: rates of other experiments")
    note = f"   ({'; '.join(note)})" if note else ""
    n = len(exp["cells"])
    return f"{name:16s} {n:6d} {exp['searches']:9d} {exp['seconds'] / 3600:22.2f}{note}"


def main(profile, detail=False):
    if profile not in config.PROFILES:
        sys.exit(f"estimate_profile: profile {profile!r} (allowed: {', '.join(config.PROFILES)})")
    cells = profile_cells(profile)
    est = cost.estimate(cells, config.results_dir())
    if est["calibrated_on"]:
        print(f"calibrated on {est['calibrated_on']} stored cells in {est['root']}")
    else:
        print(f"uncalibrated: nothing stored in {est['root']} (rates of ntkgap.runs.cost)")
    print(f"{'experiment':16s} {'cells':>6s} {'searches':>9s} {'estimated core-hours':>22s}")
    for name, exp in est["experiments"].items():
        print(_line(name, exp, est["calibrated_on"] > 0))
        if detail:
            parts = {}
            for c, e in zip(cells[name], exp["cells"]):
                part = f"{c['method']} {c.get('arch', '')}".strip()
                parts[part] = parts.get(part, 0.0) + e["seconds"]
            for part, v in sorted(parts.items(), key=lambda kv: -kv[1]):
                print(f"    {part:40s} {v / 3600:10.2f}")
    total = est["seconds"]
    print(
        f"{'total':16s} {'':6s} {'':9s} {total / 3600:22.2f}   (cells run 2 at a time on a "
        f"2-core machine: ~{total / 3600 / 2:.1f} h wall)"
    )
    return total


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(args[0] if args else "full", detail="--detail" in sys.argv)
