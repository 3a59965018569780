"""E6: the alpha sweep from the lazy (NTK) to the rich regime."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
import numpy as np
from style import plt

from ntkgap.runs import store

fig, ax = plt.subplots(figsize=(5, 3.5))
rows = {}
for cell, r in store.results("e6_lazy_rich", "net"):
    e = np.asarray(r["test_mse_per_seed"])
    rows.setdefault(cell["width"], []).append(
        (cell["alpha"], e.mean(), e.mean() - e.min(), e.max() - e.mean())
    )
for w, pts in sorted(rows.items()):
    a, m, lo, hi = map(np.array, zip(*sorted(pts)))
    ax.errorbar(
        a,
        m,
        yerr=[lo, hi],
        fmt="o-",
        capsize=2,
        label=f"centred alpha (f - f0), width {w}, gradient descent",
    )
for (_t, _arch), curve in analysis.curves("e6_lazy_rich", "ntk").items():
    _, m, _ = analysis.curve_stats(curve)
    ax.axhline(m[0], color=style.COLORS["ntk"], ls="--", label="NTK regression, same n")
ax.set(
    xscale="log",
    yscale="log",
    xlabel="output scale alpha (large = lazy)",
    ylabel="relative test MSE",
    title="parity:d=12,k=3, n=600",
)
ax.legend()
style.save(fig, "e6_lazy_rich")
