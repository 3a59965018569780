"""E11: the trained tree net's kernel against depth: centered kernel-target
alignment at initialisation and at the end, and the relative weight
movement, rich nets (E4's settings) beside the lazy control (alpha 100)."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import os

import numpy as np
from style import plt

from ntkgap import specs
from ntkgap.runs import config as runs_config
from ntkgap.runs import store
from ntkgap.verdicts import mechanism

NAME = "e11_after_kernel"
CONFIG = os.path.join(style.ROOT, "experiments", f"{NAME}.toml")
# the lazy control's alpha_min, as its claim (E11-lazy-control) declares it
ALPHA_MIN = next(c["params"]["alpha_min"] for c in runs_config.load_config(CONFIG)["claim"]
                 if c["statistic"] == "lazy_control")  # fmt: skip


def _depth(cell):
    return int(dict(specs.raw_items(cell["arch"])[1])["L"])


def _rows():
    """{regime: {L: [run_kernels dict per (seed, n)]}} of the fixed-n cells."""
    out = {}
    for cell, r in store.results(NAME, "after_kernel"):
        lazy = mechanism.is_lazy(cell, ALPHA_MIN)
        regime = "lazy (alpha 100, sgd)" if lazy else "rich (E4's tree net)"
        out.setdefault(regime, {}).setdefault(_depth(cell), []).extend(r["kernels_per_seed"])
    return out


def _median_band(ax, L, vals, color, marker, ls, label):
    """Median over runs with the 25-75% band."""
    med = [np.median(v) for v in vals]
    q1, q3 = [np.percentile(v, 25) for v in vals], [np.percentile(v, 75) for v in vals]
    ax.errorbar(L, med, yerr=[np.subtract(med, q1), np.subtract(q3, med)], fmt=marker,
                ls=ls, color=color, capsize=2, ms=5, label=label)  # fmt: skip


fig, (ax_a, ax_w) = plt.subplots(1, 2, figsize=(8, 3.2))
styles = style.distinct_styles(4)
rows = _rows()
depths = sorted({L for by_L in rows.values() for L in by_L})  # the depths this profile ran
for i, (regime, by_L) in enumerate(sorted(rows.items())):
    Ls = sorted(by_L)
    for j, when in enumerate(("init", "final")):
        color, marker, _ = styles[2 * i + j]
        vals = [[k[f"alignment_{when}"] for k in by_L[L] if k[f"alignment_{when}"] is not None]
                for L in Ls]  # fmt: skip
        _median_band(ax_a, Ls, vals, color, marker, "-" if when == "final" else ":",
                     f"{regime}, {when}")  # fmt: skip
    color, marker, _ = styles[2 * i + 1]
    _median_band(ax_w, Ls, [[k["weight_movement"] for k in by_L[L]] for L in Ls],
                 color, marker, "-", regime)  # fmt: skip
ax_a.set(xlabel="tree depth L", ylabel="centered kernel-target alignment (train Gram)",
         title="alignment of the empirical NTK with the target")  # fmt: skip
ax_w.set(xlabel="tree depth L", ylabel="||theta_T - theta_0|| / ||theta_0||", yscale="log",
         title="relative weight movement")  # fmt: skip
for ax in (ax_a, ax_w):
    ax.set_xticks(depths)
    if depths:
        ax.set_xlim(depths[0] - 0.3, depths[-1] + 0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
fig.tight_layout(w_pad=2.0)  # the right panel's y label clear of the left panel
style.state_verdicts(fig, NAME)
style.save(fig, NAME)
