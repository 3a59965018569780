"""E9: the random hierarchy model. n*(eps) of four predictors on the same
splits (the trained CNN, its NTK, the trained fc net, the fc NTK) against
depth L (left) and the number m of synonyms (right), with the published
scaling P* = n_c m^L of the trained CNN (Cagnetta et al., PRX 2024) and the
number of valid strings. Families and eps are read from the config's
scaling claims (one place)."""

import os

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import numpy as np
from style import plt

from ntkgap.runs import config as runs_config
from ntkgap.targets.rhm import n_valid_formula
from ntkgap.verdicts.nstar_statistics import nstar_by_key
from ntkgap.verdicts.selection import Side

EXP = "e9_rhm"
CFG = runs_config.load_config(os.path.join(style.ROOT, "experiments", f"{EXP}.toml"))
PARAMS = {c["id"]: c["params"] for c in CFG["claim"]}
CNN = PARAMS["E9-cnn-scaling-L"]["a"][1]
SERIES = (  # (method, arch prefix, label, colour, marker)
    ("ntk_search", CNN, "CNN NTK (KRR)", "#1e8449", "s"),
    ("net_search", CNN, "CNN (trained)", "#8e44ad", "o"),
    ("ntk_search", "fc", "fc NTK (KRR)", style.COLORS["ntk"], "D"),
    ("net_search", "fc", "fc net (trained)", style.COLORS["net"], "^"),
)


fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.0))
any_data = False
for ax, cid in zip(axes, ("E9-cnn-scaling-L", "E9-cnn-scaling-m")):
    p = PARAMS[cid]
    key, fam, eps = p["x"], p["family"], p["eps"]
    xs = set()
    for i, (meth, arch, lab, color, mk) in enumerate(SERIES):
        recs = nstar_by_key(EXP, Side(meth, arch, prefix=True), fam, key, eps)
        xs |= set(recs)
        dx = (i - 1.5) * 0.05
        for x, r in recs.items():
            style.nstar_point(ax, x + dx, r["median"], color, mk)
        ax.plot([], [], mk, color=color, label=lab)
    if xs:
        any_data = True
        grid = np.arange(min(xs), max(xs) + 1)
        # m, L and v of each x: the family fixes the other keys (v = m on the m axis)
        mL = [(fam.get("m", x), x) if key == "L" else (x, fam["L"]) for x in grid]
        ax.plot(grid, [2 * m**L for m, L in mL], ":", color="k", lw=1, label="n_c m^L (paper)")
        ax.plot(grid, [n_valid_formula(2, m, 2, L) for m, L in mL], "-", color="grey", lw=1,
                label="valid strings")  # fmt: skip
    fixed = ", ".join(f"{k}={v}" for k, v in fam.items() if k != "name")
    ax.set(
        yscale="log",
        xlabel=key if key == "L" else "m (= v)",
        ylabel=f"n*({eps}) (median seed; bars: min-max of 8 seeds)",
        title=f"RHM s=2, n_c=2, {fixed}",
    )
    style.bound_legend(ax)
    style.integer_x(ax)
if not any_data:
    style.no_data(axes[0], EXP)
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7, bbox_to_anchor=(0.5, -0.02))
fig.tight_layout(rect=(0, 0.12, 1, 1))
style.state_verdicts(fig, EXP)
style.save(fig, EXP)
