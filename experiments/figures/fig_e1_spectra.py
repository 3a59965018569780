"""E1: NTK eigenvalues: circle (decay exponent) and hypercube degrees."""

import numpy as np
import style
from style import plt

from ntkgap.runs import store
from ntkgap.nets.arch import parse_arch

fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
rows = sorted(store.results("e1_spectra", "eigen"), key=lambda cr: cr[0]["arch"])
for cell, r in rows:
    lam, k = np.array(r["eigenvalue"]), np.array(r["k"])
    depth = parse_arch(cell["arch"]).spec["depth"]
    if cell["domain"] == "circle":
        sel = k >= 1
        slope = np.polyfit(np.log(k[8:]), np.log(lam[8:]), 1)[0]
        a1.loglog(k[sel], lam[sel], label=f"depth {depth}: slope {slope:.2f}")
    elif cell["domain"] == "hypercube:d=1000":
        a2.semilogy(k, lam, "o-", label=f"depth {depth}, d=1000")
    elif cell["domain"] == "hypercube:d=64":
        a2.semilogy(k, lam, "x--", alpha=0.6, label=f"depth {depth}, d=64")
if rows:
    kk = np.arange(8, 257)
    a1.loglog(kk, 0.5 * kk**-2.0, "k:", label="k^-2 (paper)")
else:
    style.no_data(a1, "e1_spectra")
a1.set(
    xlabel="frequency k", ylabel="NTK eigenvalue lambda_k", title="circle: ReLU NTK (fc, b_std=0.1)"
)
a2.set(
    xlabel="degree k",
    ylabel="eigenvalue mu_k\n(per character)",
    title="hypercube: ReLU NTK per degree",
)
a1.legend()
a2.legend(ncol=2)
# room between the panels: the right y-label must clear the left panel's ticks
fig.tight_layout(w_pad=3.0)
style.state_verdicts(fig, "e1_spectra")
style.save(fig, "e1_spectra")
