"""E3b: sparse parity: NTK regression vs the SGD-trained two-layer net."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
from style import plt

fig, ax = plt.subplots(figsize=(5, 3.6))
for method, name, c in (
    ("ntk", "NTK regression", "ntk"),
    ("net", "2-layer ReLU, minibatch Adam", "net"),
):
    for (t, _a), curve in analysis.curves("e3b_parity", method).items():
        ns, m, s = analysis.curve_stats(curve)
        ax.errorbar(
            ns, m, yerr=s, fmt="o-", color=style.COLORS[c], label=f"{name} ({t})", capsize=2
        )
for (t, _a), r in analysis.theory("e3b_parity").items():
    ax.plot(r["n"], r["test_mse"], "--", color=style.COLORS["theory"], label=f"eigenlearning ({t})")
# beyond n = 2^d every point is seen and the theory's error falls to rounding noise
ax.set(
    xscale="log",
    yscale="log",
    xlabel="training samples n",
    ylabel="relative test MSE",
    title="sparse parity: kernel vs trained network",
    ylim=(1e-8, 10),
)
ax.legend()
style.save(fig, "e3b_parity")
