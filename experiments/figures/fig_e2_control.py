"""E2: band-limited control on the circle: NTK regression vs trained nets."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
from style import plt

ntk, net = analysis.curves("e2_control", "ntk"), analysis.curves("e2_control", "net")
targets = sorted({k[0] for k in ntk})
fig, axes = plt.subplots(
    1, max(len(targets), 1), figsize=(4.2 * max(len(targets), 1), 3.3), squeeze=False
)
for ax, t in zip(axes[0], targets):
    for src, name, c in (
        (ntk, "NTK regression (infinite width)", "ntk"),
        (net, "trained fc:depth=2, width 256", "net"),
    ):
        for k, curve in src.items():
            if k[0] == t:
                ns, m, s = analysis.curve_stats(curve)
                ax.errorbar(ns, m, yerr=s, fmt="o-", color=style.COLORS[c], label=name, capsize=2)
    ax.set(
        xscale="log", yscale="log", xlabel="training samples n", ylabel="relative test MSE", title=t
    )
    ax.legend()
if not targets:
    style.no_data(axes[0][0], "e2_control")
style.save(fig, "e2_control")
