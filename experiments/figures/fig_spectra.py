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


def group(r):
    """The small multiple a hypercube target's spectrum is drawn in."""
    sp = parse_spec(r["target"])
    if sp.name != "tree":
        return "circuits" if sp.name == "circuit" else "parities and staircases"
    if sp["node"] in ("parity", "tanh"):
        return f"trees, node = {sp['node']}"
    return "trees, other nodes"


rows = sorted(store.results("zoo", "spectrum"), key=lambda cr: cr[0]["target"])
circ = [r for _, r in rows if "frequency" in r]
cube = [r for _, r in rows if "frequency" not in r]
groups = {}
for r in cube:
    groups.setdefault(group(r), []).append(r)
n_panels = 1 + max(len(groups), 1)
cols = min(3, n_panels)
nrows = -(-n_panels // cols)
fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.4 * nrows), squeeze=False)
flat = list(axes.ravel())
a1 = flat[0]
for r, (c, m, ls) in zip(circ, style.distinct_styles(len(circ))):
    k, p = np.array(r["frequency"]), np.array(r["power"])
    sel = p > 1e-12 * r["variance"]
    a1.semilogy(
        k[sel], p[sel] / r["variance"], ls, marker=m, ms=3, color=c, label=short(r["target"])
    )
a1.set(xscale="log", xlabel="frequency k", ylabel="share of variance", title="circle targets")
if circ:
    a1.legend(fontsize=6, loc="upper right")
else:
    style.no_data(a1, "zoo")
for ax, (name, members) in zip(flat[1:], sorted(groups.items())):
    for i, (r, (c, m, ls)) in enumerate(zip(members, style.distinct_styles(len(members)))):
        k, w = np.array(r["degree"][1:]), np.array(r["weight"][1:]) / r["variance"]
        keep = w > 1e-4  # the degrees holding weight; equal spectra side by side
        dx = (i - (len(members) - 1) / 2) * 0.1
        ax.plot(k[keep] + dx, w[keep], ls, marker=m, ms=4, lw=1, color=c,
                label=short(r["target"]))  # fmt: skip
    dims = sorted({str(parse_spec(r["target"])["d"]) for r in members})
    ax.set(xlabel="Walsh degree k", ylabel="share of variance  W^k / Var f", ylim=(-0.03, 1.05),
           title=f"{name} (d = {', '.join(dims)})")  # fmt: skip
    style.integer_x(ax)
    ax.legend(fontsize=6, loc="best")
if not groups:
    style.no_data(flat[1], "zoo")
for ax in flat[1 + max(len(groups), 1) :]:
    ax.axis("off")
fig.tight_layout()
style.save(fig, "spectra")
