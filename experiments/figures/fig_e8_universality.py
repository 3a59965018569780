"""E8: is the gap a fact about ReLU? Kernel side (eigenlearning n*(0.1) of
each activation's NTK, by theory) as heat maps: sparse parity per b_std,
the sawtooth and the E4 trees, and the fc modifications; trained side: the
ratio n*(own NTK) / n*(trained net) against tree depth L, one line per
claim of the config, its verdict in the legend. In the heat maps a cell not
reached by theory is hatched, one outside theory's validity carries a small
dot, one not run is blank (one legend below); the verdicts stand above."""

import math
import os

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from style import plt

from ntkgap import specs
from ntkgap.verdicts import claims, intervals, selection
from ntkgap.runs import config as runs_config, store
from ntkgap.nets.arch import ACTS
from ntkgap.kernels.eigenlearning import VALID_FRACTION

EXP = "e8_universality"
CONFIG = os.path.join(style.ROOT, "experiments", f"{EXP}.toml")
EPS = "0.1"


def theory_cells():
    """{(arch spec, target): (n*, censored, valid)} of the stored theory cells
    (valid: n* within eigenlearning's validity, see runner's theory method)."""
    out = {}
    for cell, res in store.results(EXP, "theory"):
        v = res.get("n_star", {}).get(EPS)
        if v is not None:
            out[(cell["arch"], cell["target"])] = (
                v["n_star"],
                v["censored"] or v.get("n_max"),
                v.get("theory_valid", True),
            )
    return out


#: how a heat-map cell that is not a plain value is drawn (one legend for all maps)
NOT_REACHED = dict(hatch="////", fill=False, edgecolor="white", lw=0)
INVALID = dict(marker="o", ms=2.5, color="white", mec="black", mew=0.3, ls="none")


def heat(ax, rows, cols, value, title, col_labels):
    """A log10 n* heat map. A cell whose n* theory did not reach by its
    largest n is drawn at the top of the scale and hatched; a cell outside
    the theory's validity carries a small dot; a cell not run is left blank
    (the axes' grey background).

    Args:
        ax: the axes.
        rows, cols: the row and column keys.
        value: (row, col) -> (n*, censored, valid) or None (not run).
        title: the axes' title.
        col_labels: the column tick labels.

    Returns:
        the image (for a colour bar).
    """
    m = np.full((len(rows), len(cols)), np.nan)
    invalid = np.zeros(m.shape, bool)
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            v = value(r, c)
            if v is None:
                continue
            n, cens, valid = v
            invalid[i, j] = not valid
            if n is None and cens:  # not reached: drawn at the top of the scale
                m[i, j] = np.inf
            elif n is not None:
                m[i, j] = math.log10(n)
    finite = m[np.isfinite(m)]
    top = finite.max() if finite.size else 1.0
    shown = np.ma.masked_invalid(np.where(np.isinf(m), top, m))
    im = ax.imshow(shown, aspect="auto", cmap="viridis", vmin=0, vmax=max(top, 1.0))
    ax.set_facecolor("0.85")
    for i, j in zip(*np.nonzero(np.isinf(m))):
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, **NOT_REACHED))
    iy, ix = np.nonzero(invalid & ~np.isnan(m))
    ax.plot(ix + 0.3, iy - 0.3, **INVALID)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xticks(range(len(cols)), col_labels, rotation=60, fontsize=6)
    ax.grid(False)
    ax.set_title(title)
    return im


def heat_legend(fig):
    """What the heat maps' marks mean, once for the figure."""
    handles = [
        Patch(facecolor="0.5", label="hatched: n* not reached by theory's largest n", **{
            k: v for k, v in NOT_REACHED.items() if k != "fill"}),
        Line2D([], [], label="dot: n* outside eigenlearning's validity (n* > "
               f"{VALID_FRACTION:.0%} of the distinct inputs)", **INVALID),
        Patch(facecolor="0.85", label="blank: not run in this profile"),
    ]  # fmt: skip
    fig.legend(handles=handles, loc="lower left", ncol=3, fontsize=7, bbox_to_anchor=(0, 0))


th = theory_cells()
fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
acts = list(ACTS)

# (a) sparse parity d = 12, k = 2..5, per b_std
par = [(b, k) for b in (0, 0.1, 1) for k in range(2, 6)]
im = heat(
    axes[0, 0],
    acts,
    par,
    lambda a, c: th.get((f"fc:act={a},b_std={c[0]:g},depth=1", f"parity:d=12,k={c[1]}")),
    "fc:depth=1 NTK, parity:d=12: log10 n*(0.1) (theory)",
    [f"b={b:g} k={k}" for b, k in par],
)
fig.colorbar(im, ax=axes[0, 0], fraction=0.04)

# (b) sawtooth L and the E4 trees at b_std = 0.1
cols = [("fc", f"sawtooth:L={L}") for L in range(1, 9)] + [
    ("tree", f"tree:d=40,L={L},arity=2,node={nd}")
    for nd in ("parity", "random")
    for L in (2, 3, 4, 5)
]


def saw_tree(a, c):
    kind, target = c
    if kind == "fc":
        return th.get((f"fc:act={a},b_std=0.1,depth=1", target))
    L = selection.depth_of(target)
    return th.get((f"tree:act={a},b_std=0.1,arity=2,L={L}", target))


present = [c for c in cols if any(saw_tree(a, c) for a in acts)]
im = heat(
    axes[0, 1],
    acts,
    present,
    saw_tree,
    "b_std=0.1: sawtooth (fc:depth=1) and trees (own tree NTK): log10 n*(0.1)",
    [t.replace("tree:d=40,", "").replace(",arity=2,node=", " ") for _, t in present],
)
fig.colorbar(im, ax=axes[0, 1], fraction=0.04)


def short(t):
    """'parity k=3' for 'parity:d=12,k=3': the name and the last key."""
    name, items = specs.raw_items(t)
    return f"{name} {'='.join(items[-1])}" if items else name


# (c) fc:depth=2 and its modifications
mods = (("", "plain"), ("residual=1,", "residual"), ("norm=layer,", "layernorm"))
targets = sorted({t for (a, t) in th if "depth=2" in a and a.startswith("fc:")})
mcols = [(m, t) for m, _ in mods for t in targets]
im = heat(
    axes[1, 0],
    acts,
    mcols,
    lambda a, c: th.get((f"fc:act={a},b_std=0.1,{c[0]}depth=2", c[1])),
    "fc:depth=2 NTK and its modifications: log10 n*(0.1) (theory)",
    [f"{dict(mods)[m]} {short(t)}" for m, t in mcols],
)
fig.colorbar(im, ax=axes[1, 0], fraction=0.04)


# (d) trained side: each ratio claim's n*(own NTK) / n*(trained net) per L; a censored side
# makes the ratio a bound (drawn as one), never a dropped depth
def ratio_points(d):
    """[(L, ratio, side)] of a ratio claim's data: side None (both resolved), "right" (a
    lower bound) or "left" (an upper bound), by the verdicts' own interval rule
    (``intervals.ratio_interval``); a depth whose ratio is unbounded both ways is left out."""
    out = []
    for L, a, b, ca, cb in zip(d.get("L", []), d.get("a", []), d.get("b", []),
                               d.get("a_censored", []), d.get("b_censored", [])):  # fmt: skip
        if not (a and b):
            continue
        lo, hi = intervals.ratio_interval(_bounds(a, ca), _bounds(b, cb))
        kind = intervals.interval_kind((lo, hi))
        if kind != "unknown":
            side = {"lower bound": "right", "upper bound": "left"}.get(kind)
            out.append((L, math.exp(hi if side == "left" else lo), side))
    return out


def _bounds(v, censored):
    """(low, high) of a median n*: censored "right" lies above v, "left" at or below it."""
    return (v, math.inf) if censored == "right" else (0.0, v) if censored else (v, v)


ax = axes[1, 1]
cfg = runs_config.load_config(CONFIG)
drawn = 0
for (col, mk, ls), c in zip(
    style.distinct_styles(len(cfg.get("claim", []))), claims.parse_claims(cfg, CONFIG)
):
    e = claims.evaluate(c, EXP)
    pts = ratio_points(e["data"] or {})  # a claim of a larger profile (not run) has no data
    if not pts:
        continue
    val = "-" if e["value"] is None else f"{e['value']:.2f}x/level"
    L, r, sides = zip(*pts)
    ax.plot(L, r, ls=ls, color=col, label=f"{c.id}: {val}, {e['verdict']}")
    for x, y, side in pts:
        if side is None:
            ax.plot(x, y, marker=mk, color=col)
        else:
            style.bound_arrow(ax, x, y, side, col)
    drawn += 1
if drawn:
    ax.axhline(1, color="grey", lw=0.8)
    style.bound_legend(ax)
    ax.set(
        yscale="log",
        xlabel="tree depth L (random-node trees, seed 0)",
        ylabel="n*(own NTK) / n*(trained net), median seeds",
        title="trained side: kernel / net ratio per depth (arrows: bounds, a side censored)",
    )
    style.integer_x(ax)
    ax.legend(fontsize=6)
else:
    style.no_data(ax, EXP + " (trained searches)")
if not th:
    style.no_data(axes[0, 0], EXP)
fig.tight_layout(rect=(0, 0.06, 1, 1))
heat_legend(fig)
style.state_verdicts(fig, EXP)
style.save(fig, "e8_universality")
