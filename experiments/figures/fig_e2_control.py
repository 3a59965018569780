"""E2: band-limited control on the circle: NTK regression vs trained nets."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
from style import plt

ntk = analysis.curves("e2_control", "ntk")
net = analysis.curves("e2_control", "net", key=("target", "arch", "width"))
targets = sorted({k[0] for k in ntk})
fig, axes = plt.subplots(
    1, max(len(targets), 1), figsize=(4.2 * max(len(targets), 1), 3.3), squeeze=False
)
for ax, t in zip(axes[0], targets):
    for src, c in ((ntk, "ntk"), (net, "net")):
        for k, curve in src.items():
            if k[0] != t:
                continue
            name = (
                f"NTK regression, {k[1]} (infinite width)"
                if c == "ntk"
                else f"trained {k[1]}, width {k[2]}"
            )
            ns, m, s = analysis.curve_stats(curve)
            ax.errorbar(ns, m, yerr=s, fmt="o-", color=style.COLORS[c], label=name, capsize=2)
    ax.set(
        xscale="log", yscale="log", xlabel="training samples n", ylabel="relative test MSE", title=t
    )
    style.major_log_labels_only(ax)
    ax.legend()
if not targets:
    style.no_data(axes[0][0], "e2_control")
fig.tight_layout(w_pad=2.0)
style.state_verdicts(fig, "e2_control")
style.save(fig, "e2_control")
