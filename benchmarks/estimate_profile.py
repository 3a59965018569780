"""Estimate what a profile will cost before running it, from the cells
already stored (usually the quick profile's): the cost model of
:mod:`ntkgap.runs.cost` (its doc says how each cell is estimated) applied to
every experiment config that has the profile (its own table or one it
includes). Prints core-hours per experiment and in total.

    python benchmarks/estimate_profile.py [quick|paper|full] [--detail] [--largest K]
    (NTKGAP_RESULTS: where the stored cells are, default results/;
    --detail: core-hours per method and arch too; --largest: the K costliest
    cells with the n each search is expected to reach)

Cells already stored (by this code) cost nothing; their stored seconds are
printed beside the total.
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


def _largest(cells, est, k):
    """Prints the k costliest cells of the estimate."""
    rows = [
        (e["seconds"], name, c, e)
        for name, exp in est["experiments"].items()
        for c, e in zip(cells[name], exp["cells"])
    ]
    print(f"the {k} costliest cells:")
    for secs, name, c, e in sorted(rows, key=lambda r: -r[0])[:k]:
        reach = f" n ~{e['n_reach']:.0f} ({e['reach_from']})" if "n_reach" in e else ""
        cap, seeds = c.get("n_max", c.get("n")), len(c.get("seeds", [0]))
        print(f"  {secs / 3600:7.2f} core-h  {name:16s} {c['method']:19s} {c.get('arch', '')} "
              f"{c.get('target', '')} cap {cap} seeds {seeds}{reach}")  # fmt: skip


def main(profile, detail=False, largest=0):
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
    if largest:
        _largest(cells, est, largest)
    total = est["seconds"]
    stored = sum(e["stored_seconds"] for e in est["experiments"].values())
    print(f"(stored cells, not computed again: {stored / 3600:.2f} core-hours)")
    print(
        f"{'total':16s} {'':6s} {'':9s} {total / 3600:22.2f}   (cells run 2 at a time on a "
        f"2-core machine: ~{total / 3600 / 2:.1f} h wall)"
    )
    return total


if __name__ == "__main__":
    argv = sys.argv[1:]
    k = int(argv[argv.index("--largest") + 1]) if "--largest" in argv else 0
    args = [a for a in argv if not a.startswith("--") and a != str(k)]
    main(args[0] if args else "full", detail="--detail" in argv, largest=k)
