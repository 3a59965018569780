"""The zoo's spectra: power per frequency (circle) or Walsh degree."""

import numpy as np
import style
from style import plt

from ntkgap.runs import store
from ntkgap.specs import label
from ntkgap.targets import parse_spec


def short(spec):
    """A legend label: the spec without its seed (a default or a draw)."""
    return label(spec, drop=("seed",))


rows = sorted(store.results("zoo", "spectrum"), key=lambda cr: cr[0]["target"])
circ = [r for _, r in rows if "frequency" in r]
cube = [r for _, r in rows if "frequency" not in r]
fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 6.2), gridspec_kw={"width_ratios": [1, 1.25]})
for r, (c, m, ls) in zip(circ, style.distinct_styles(len(circ))):
    k, p = np.array(r["frequency"]), np.array(r["power"])
    sel = p > 1e-12 * r["variance"]
    a1.semilogy(
        k[sel], p[sel] / r["variance"], ls, marker=m, ms=3, color=c, label=short(r["target"])
    )
for r, (c, m, ls) in zip(cube, style.distinct_styles(len(cube))):
    k, w = np.array(r["degree"]), np.array(r["weight"])
    a2.plot(k[1:], w[1:] / r["variance"], ls, marker=m, ms=3, color=c, label=short(r["target"]))
dims = sorted({str(parse_spec(r["target"])["d"]) for r in cube})
a1.set(xscale="log", xlabel="frequency k", ylabel="share of variance", title="circle targets")
a2.set(
    xlabel="Walsh degree k",
    ylabel="share of variance  W^k / Var f",
    title="hypercube targets" + (f" (d = {', '.join(dims)})" if dims else ""),
)
style.integer_x(a2)
for ax, n in ((a1, len(circ)), (a2, len(cube))):
    if n:  # below the axes, so no series is hidden
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=6.5)
    else:
        style.no_data(ax, "zoo")
fig.tight_layout()
style.save(fig, "spectra")
