"""E4: n*(0.1) vs tree depth L for the predictors on the same splits: the
tree NTK (ridgeless, and with its ridge tuned on the nets' validation split)
and the trained tree network (same architecture), the fc NTK and the trained
fc network, with eigenlearning theory and the support-cube size; one panel per
depth-indexed target family (trees per arity and node; random layered
circuits, for which the tree architecture is misspecified), its target
kurtosis per depth in the title (defined above the figure, beside the
claims' verdicts); censored n* are arrows from their bound. A last panel sets
the lazy tree network (centred alpha model, gradient descent) beside the
tree NTK's regression at the same n, seeds and test points."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
import numpy as np
from style import plt

from ntkgap.verdicts import selection, tables
from ntkgap.runs import store
from ntkgap.targets import parse_target

EXP = "e4_trees"
SERIES = (  # (method, arch prefix, ridge, label, colour key, marker)
    ("ntk_search", "tree", selection.RIDGELESS, "tree NTK (ridgeless KRR)", "tree_ntk", "s"),
    ("ntk_search", "tree", "tuned", "tree NTK (ridge tuned on validation)", "tree_ridge", "P"),
    ("net_search", "tree", selection.RIDGELESS, "tree net (trained)", "tree", "o"),
    ("ntk_search", "fc", selection.RIDGELESS, "fc NTK (KRR)", "ntk", "D"),
    ("net_search", "fc", selection.RIDGELESS, "fc net (trained)", "net", "^"),
)
COLORS = style.COLORS
NODES = ("parity", "linear-plus", "tanh", "and", "random")
KURTOSIS = (
    "kurtosis (titles): E(y - Ey)^4 / Var(y)^2 at each L (1: +-1 values, 3: Gaussian; "
    "~: Monte Carlo)"
)
eps = analysis.EPS


def families():
    """The depth-indexed target families of the stored cells (selection.depth_families):
    trees first (arity 2 first, then by node), then the others (layered circuits)."""

    def order(item):
        fam = item[1][0]
        node = fam.get("node")
        return (fam["name"] != "tree", fam.get("arity", 0), NODES.index(node) if node in NODES
                else 9, item[0])  # fmt: skip

    return [v for _, v in sorted(selection.depth_families(EXP).items(), key=order)]


def kurtosis_text(fam_targets):
    """'kurtosis by L 2: 1.0, 3: ...' (~ marks a Monte Carlo estimate)."""
    parts = []
    for L, spec in sorted(fam_targets.items()):
        m = tables.target_moments(spec)
        if m["kurtosis"] is not None:
            parts.append(f"{L}: {'' if m['exact'] else '~'}{m['kurtosis']:.3g}")
    return "target kurtosis by L " + ", ".join(parts) if parts else ""


def title(fam):
    """Panel title: trees by arity and node, other families by their label."""
    if fam["name"] == "tree":
        return f"arity {fam['arity']}, node = {fam['node']}"
    if fam["name"] == "layered":
        return f"layered circuits, fan-in {fam['fan_in']} (DAG), seed {fam['seed']}"
    return selection.family_label(fam)


def draw_family(ax, fam, targets):
    Ls = set()
    for arch, lab, ck in (
        ("fc", "fc NTK theory", "theory"),
        ("tree", "tree NTK theory", "tree_theory"),
    ):
        th = selection.theory_nstar_by_depth(EXP, fam, arch, eps)
        # censored theory (n* beyond its n_max): a bound, an arrow up from n_max
        L = [x for x, v in th.items() if v.get("n_star") is not None or v.get("censored")]
        if not L:
            continue
        n = np.array([th[x]["n_star"] if not th[x]["censored"] else th[x]["n_max"] for x in L])
        valid = np.array([th[x].get("theory_valid", True) for x in L])
        cens = np.array([bool(th[x]["censored"]) for x in L])
        La = np.array(L)
        ax.plot(La[~cens], n[~cens], "--", color=COLORS[ck], lw=1,
                label=f"{lab} (hollow: not valid)")  # fmt: skip
        ax.plot(La[valid & ~cens], n[valid & ~cens], "x", color=COLORS[ck], ms=5)
        ax.plot(La[~valid & ~cens], n[~valid & ~cens], "o", mfc="none", color=COLORS[ck], ms=5)
        for x, bound in zip(La[cens], n[cens]):
            style.bound_arrow(ax, x, bound, "right", COLORS[ck])
        Ls |= set(L)
    for i, (meth, arch, ridge, lab, ck, mk) in enumerate(SERIES):
        recs = selection.nstar_by_depth(
            EXP, selection.Side(meth, arch, ridge, prefix=True), fam, eps
        )
        if not recs:
            continue
        dx = (i - 2) * 0.06
        for L, r in recs.items():
            med = r["median"]
            x = L + dx
            style.nstar_point(ax, x, med, COLORS[ck], mk)
        ax.plot([], [], mk, color=COLORS[ck], label=lab)
        Ls |= set(recs)
    if Ls:
        # the support cube: 2^(arity^L) leaf configurations of a tree, 2^(2^L) of a circuit
        L = sorted(targets)
        conf = [2.0 ** len(parse_target(targets[x]).support) for x in L]
        # the axis fits the measured and theory points; the support line is context
        lo, hi = ax.dataLim.y0, ax.dataLim.y1
        ax.plot(L, conf, ":", color="grey", lw=1, label="support configurations 2^(inputs read)",
                scaley=False)  # fmt: skip
        ax.set_yscale("log")
        ax.set_ylim(max(lo, 1) / 3, hi * 3)
        ax.set_xlim(min(Ls) - 0.4, max(Ls) + 0.4)
        ax.set_xticks(range(min(Ls), max(Ls) + 1))
    ax.set(
        yscale="log",
        xlabel="depth L",
        ylabel=f"n*({eps}) (median seed; bars: order-statistic CI)",
        title=f"{title(fam)}\n{kurtosis_text(targets)}",
    )
    style.bound_legend(ax)


def draw_lazy(ax):
    """Test error against n: lazy tree net and the tree NTK's KRR (same cells' splits)."""
    nets = [(c, r) for c, r in store.results(EXP, "net") if c.get("alpha")]
    if not nets:
        style.no_data(ax, "lazy tree net")
        return
    target, arch = nets[0][0]["target"], nets[0][0]["arch"]
    lazy = {
        k: v
        for k, v in analysis.curves(EXP, "net", ("target", "arch", "alpha")).items()
        if k[0] == target and k[1] == arch and k[2]
    }
    kernel = analysis.curves(EXP, "ntk").get((target, arch), {})
    alpha = nets[0][0]["alpha"]
    for curve, lab, ck, mk, dx in (
        (kernel, "tree NTK (ridgeless KRR, all n)", "tree_ntk", "s", 0.97),
        (
            next(iter(lazy.values()), {}),
            f"lazy tree net (alpha={alpha:g}, GD, width {nets[0][0]['width']})",
            "lazy",
            "o",
            1.03,
        ),
    ):
        if not curve:
            continue
        n, m, bars = analysis.curve_stats(curve)
        ax.errorbar(n * dx, m, yerr=bars, fmt=mk + "-", color=COLORS[ck], capsize=2, ms=5,
                    label=lab)  # fmt: skip
    ax.axhline(eps, color="grey", lw=0.8, ls=":", label=f"eps = {eps}")
    spec = selection.param_of(target, "node")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="n (pool; the lazy net holds 2% out)",
        ylabel="relative test MSE (median, min..max over seeds)",
        title=f"lazy limit at L={selection.depth_of(target)}, node = {spec}\n{arch}",
    )
    ax.legend(fontsize=6, loc="lower left")


fams = families()
has_lazy = any(c.get("alpha") for c, _ in store.results(EXP, "net"))  # paper and full
cols = min(4, len(fams) + has_lazy) or 1
rows = max(1, -(-(len(fams) + has_lazy) // cols))
fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.9 * rows), squeeze=False)
flat = list(axes.ravel())
for ax, (fam, targets) in zip(flat, fams):
    draw_family(ax, fam, targets)
if not fams:
    style.no_data(flat[0], EXP)
if has_lazy:
    draw_lazy(flat[len(fams)] if len(fams) < len(flat) else flat[-1])
for ax in flat[len(fams) + has_lazy :]:
    ax.axis("off")
handles, labels = flat[0].get_legend_handles_labels()
ncol = 4 if cols > 1 else 1  # a one-panel figure stacks its legend
fig.tight_layout(rect=(0, 0.1 if cols > 1 else 0.3, 1, 1))
fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=7, bbox_to_anchor=(0.5, 0.0))
style.state_verdicts(fig, EXP, notes=(KURTOSIS,))
style.save(fig, "e4_trees")
