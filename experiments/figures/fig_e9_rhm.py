"""E9: the random hierarchy model. Top: n*(eps) of four predictors on the
same splits (the trained CNN, its NTK, the trained fc net, the fc NTK)
against depth L (left) and the number m of synonyms (right), with the
published scaling P* = n_c m^L of the trained CNN (Cagnetta et al., PRX 2024)
and the number of valid strings. Bottom: the published regime, the
classification P* (test error <= eps_rand / 10) of the trained CNN and of its
NTK against the law n_c m^L, one colour per n_c (claims E9-P-*). Families,
eps and predictors are read from the config's claims (one place)."""

import os

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import numpy as np
from matplotlib.ticker import LogLocator, ScalarFormatter
from style import plt

from ntkgap.runs import config as runs_config
from ntkgap.targets.rhm_pstar import n_valid_formula, paper_pstar, threshold_of
from ntkgap.verdicts import selection
from ntkgap.verdicts.nstar_statistics import nstar_by_key
from ntkgap.verdicts.selection import Side

EXP = "e9_rhm"
CFG = runs_config.load_config(os.path.join(style.ROOT, "experiments", f"{EXP}.toml"))
PARAMS = {c["id"]: c["params"] for c in CFG["claim"]}
CNN = PARAMS["E9-cnn-scaling-L"]["a"][1]
SERIES = (  # (method, arch prefix, label, colour, marker)
    ("ntk_search", CNN, "CNN NTK (KRR)", style.COLORS["tree_ntk"], "s"),
    ("net_search", CNN, "CNN (trained)", style.COLORS["tree"], "o"),
    ("ntk_search", "fc", "fc NTK (KRR)", style.COLORS["ntk"], "D"),
    ("net_search", "fc", "fc net (trained)", style.COLORS["net"], "^"),
)
#: the published-regime claims (classification P*) and the params they share:
#: the trained CNN's side, the family (v), eps ("pstar"), target_error, the n_c pair
PSTAR_IDS = [c["id"] for c in CFG["claim"] if c["statistic"].startswith("pstar_")]
PSTAR = PARAMS["E9-P-nc-ratio"]
PSTAR_NET = Side.parse(PSTAR["a"])
PSTAR_KERNEL = Side("ntk_search", PSTAR_NET.arch, prefix=True)  # the CNN's NTK
NC_COLORS = dict(zip(PSTAR["n_c"], ("#d35400", "#2874a6")))
#: the points of one x (the CNN, then its NTK, at each n_c in turn) spread by
#: this factor apart on the log x axis
SPREAD = 1.06


def regression_panel(ax, cid):
    """One top panel: n*(eps) of the four predictors on claim ``cid``'s
    family against its key (L or m), with n_c m^L and the valid strings.

    Returns:
        bool, whether any search was drawn.
    """
    p = PARAMS[cid]
    key, fam, eps = p["x"], p["family"], p["eps"]
    xs = set()
    for i, (meth, arch, lab, color, mk) in enumerate(SERIES):
        recs = nstar_by_key(EXP, Side(meth, arch, prefix=True), fam, key, eps)
        xs |= set(recs)
        dx = (i - 1.5) * 0.05
        for x, r in recs.items():
            style.nstar_point(ax, x + dx, r["median"], color, mk)
        ax.plot([], [], mk, color=color, label=lab)
    if xs:
        grid = np.arange(min(xs), max(xs) + 1)
        # m, L and v of each x: the family fixes the other keys (v = m on the m axis)
        mL = [(fam.get("m", x), x) if key == "L" else (x, fam["L"]) for x in grid]
        ax.plot(grid, [2 * m**L for m, L in mL], ":", color="k", lw=1, label="n_c m^L (paper)")
        ax.plot(grid, [n_valid_formula(2, m, 2, L) for m, L in mL], "-", color="grey", lw=1,
                label="valid strings")  # fmt: skip
    fixed = ", ".join(f"{k}={v}" for k, v in fam.items() if k != "name")
    ax.set(
        yscale="log",
        xlabel=key if key == "L" else "m (= v)",
        ylabel=f"n*({eps}) (median seed; bars: min-max of 8 seeds)",
        title=f"RHM s=2, n_c=2, {fixed}",
    )
    style.bound_legend(ax)
    style.integer_x(ax)
    return bool(xs)


def pstar_medians(side, n_c):
    """The median-seed P* of one predictor on the P* claims' family at
    ``n_c``: classification searches at that n_c's threshold (as the claims
    read them, ``selection.searches`` with the claims' ``target_error``).

    Returns:
        dict {(m, L): the search's ``median`` record}.
    """
    fam = dict(PSTAR["family"], n_c=n_c)
    recs = selection.searches(EXP, side, PSTAR["eps"], lambda t: selection.matches(t, fam),
                              error=PSTAR["target_error"])  # fmt: skip
    return {(selection.param_of(t, "m"), selection.depth_of(t)): r["median"]
            for t, r in recs.items()}  # fmt: skip


def pstar_panel(ax):
    """The bottom panel: P* of the trained CNN (filled) and of its NTK (open,
    just right of it) against n_c m^L, log-log, one colour per n_c, with the
    line P* = n_c m^L; each CNN point labelled with its (m, L) in its colour.

    Returns:
        bool, whether any search was drawn.
    """
    xs, labels, colors = [], [], []
    sides = ((PSTAR_NET, "o", {}), (PSTAR_KERNEL, "s", {"mfc": "none"}))
    for i, (n_c, color) in enumerate(NC_COLORS.items()):
        for j, (side, mk, kw) in enumerate(sides):
            shift = SPREAD ** (2 * i + j - 1.5)
            for (m, L), med in pstar_medians(side, n_c).items():
                x = paper_pstar(n_c, m, L)
                style.nstar_point(ax, x * shift, med, color, mk, **kw)
                xs.append(x)
                if side is PSTAR_NET and med["n_star"] is not None:
                    labels.append((x * shift, med["n_star"], f"m={m},L={L}"))
                    colors.append(color)
        eps = threshold_of(PSTAR["eps"], n_c)
        ax.plot([], [], "o", color=color, label=f"n_c = {n_c}: CNN (trained), eps = {eps:.3g}")
        ax.plot([], [], "s", mfc="none", color=color, label=f"n_c = {n_c}: CNN NTK (KRR)")
    ax.set(xlabel="n_c m^L (the published law, prefactor 1)",
           ylabel="P* (median seed; bars: order-statistic CI)",
           title=f"RHM v={PSTAR['family']['v']}, s=2: classification P* "
           f"(test error <= eps_rand/10; {', '.join(PSTAR_IDS)})")  # fmt: skip
    if xs:  # log axes need data (an empty panel keeps linear ones)
        ax.set(xscale="log", yscale="log")
        ax.xaxis.set_major_locator(LogLocator(base=2))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        style.major_log_labels_only(ax)
        line = np.geomspace(min(xs) / 1.3, max(xs) * 1.3, 20)
        ax.plot(line, line, ":", color="k", lw=1, label="P* = n_c m^L (paper)")
    style.bound_legend(ax)
    for ann, color in zip(style.label_points(ax, labels) if labels else (), colors):
        ann.set_color(color)
    return bool(xs)


def main():
    fig = plt.figure(figsize=(9.0, 8.4))
    grid = fig.add_gridspec(3, 2, height_ratios=(1.0, 0.17, 1.2))  # flat: tight_layout fits it
    top = [fig.add_subplot(grid[0, i]) for i in (0, 1)]
    drawn = [regression_panel(ax, cid) for ax, cid in zip(top, ("E9-cnn-scaling-L",
                                                                 "E9-cnn-scaling-m"))]  # fmt: skip
    if not any(drawn):
        style.no_data(top[0], EXP)
    keys = fig.add_subplot(grid[1, :])
    keys.axis("off")
    keys.legend(*top[0].get_legend_handles_labels(), loc="center", ncol=4, fontsize=7)
    bottom, side = fig.add_subplot(grid[2, 0]), fig.add_subplot(grid[2, 1])
    if not pstar_panel(bottom):
        style.no_data(bottom, f"{EXP}'s classification P*")
        bottom.set(xticks=[], yticks=[])
    side.axis("off")
    side.legend(*bottom.get_legend_handles_labels(), loc="center left", fontsize=7,
                title="bottom: the points of one x spread slightly:\n"
                "n_c = 2 then 4, each the CNN then its NTK;\n"
                "labels: each CNN point's cell (m, L)", title_fontsize=7)  # fmt: skip
    fig.tight_layout()
    style.state_verdicts(fig, EXP)
    style.save(fig, EXP)


main()
