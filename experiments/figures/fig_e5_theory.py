"""E5: eigenlearning theory (lines) against empirical NTK regression: solid
where the theory is valid, dotted beyond its validity (n above
eigenlearning.VALID_FRACTION of the distinct inputs); theory below the axis
floor (exactly 0 once n covers every distinct input) is not drawn, so no
line drops to the axis."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
import numpy as np
from style import plt

from ntkgap.kernels.eigenlearning import VALID_FRACTION

#: the y axis' lower end: relative MSE below it is drawn nowhere
FLOOR = 1e-5


def theory_line(ax, r, color, label):
    """One theory cell's learning curve: its points at or above FLOOR, solid
    where ``theory_valid_per_n`` holds, dotted where it does not.

    Args:
        ax: the axes.
        r: the stored theory result (``n``, ``test_mse``, ``theory_valid_per_n``).
        color: the line's colour.
        label: the legend label of the solid part.

    Returns:
        None.
    """
    n, y = np.asarray(r["n"], float), np.asarray(r["test_mse"], float)
    valid = np.asarray(r.get("theory_valid_per_n") or [True] * len(n), bool)
    shown = y >= FLOOR
    ax.plot(n[shown], y[shown], ":", color=color, lw=1)
    ax.plot(n[shown & valid], y[shown & valid], "-", color=color, label=label)


fig, ax = plt.subplots(figsize=(5.5, 3.8))
i = 0
for exp in ("e4_trees", "e3b_parity", "e3a_sawtooth"):
    th, emp = analysis.theory(exp), analysis.curves(exp, "ntk")
    for key, curve in sorted(emp.items()):
        if key not in th or i >= 8:
            continue
        c = plt.cm.tab10(i % 10)
        i += 1
        ns, m, s = analysis.curve_stats(curve)
        ax.errorbar(ns, m, yerr=s, fmt="o", color=c, capsize=2, ms=3)
        theory_line(ax, th[key], c, key[0])
ax.plot(
    [],
    [],
    ":",
    color="grey",
    label=f"theory beyond its validity (n > {VALID_FRACTION:.0%} of the distinct inputs)",
)
ax.set(
    xscale="log",
    yscale="log",
    xlabel="training samples n",
    ylabel="relative test MSE",
    ylim=(FLOOR, 3),
    title="theory (lines) vs empirical NTK regression (points)",
)
ax.legend(fontsize=6)
style.save(fig, "e5_theory")
