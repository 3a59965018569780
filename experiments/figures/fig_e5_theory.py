"""E5: eigenlearning theory (lines) against empirical NTK regression."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
from style import plt

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
        r = th[key]
        ax.plot(r["n"], r["test_mse"], "-", color=c, label=key[0])
ax.set(
    xscale="log",
    yscale="log",
    xlabel="training samples n",
    ylabel="relative test MSE",
    ylim=(1e-5, 3),
    title="theory (lines) vs empirical NTK regression (points)",
)
ax.legend(fontsize=6)
style.save(fig, "e5_theory")
