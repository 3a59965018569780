"""E4: n*(0.1) vs tree depth L for four predictors on the same splits: the
tree NTK and the trained tree network (same architecture), the fc NTK and
the trained fc network, with eigenlearning theory and the leaf-cube size."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
import numpy as np
from style import plt

from ntkgap import claims, runner

EXP = "e4_trees"
SERIES = (  # (method, arch prefix, label, colour key, marker)
    ("ntk_search", "tree", "tree NTK (KRR)", "tree_ntk", "s"),
    ("net_search", "tree", "tree net (trained)", "tree", "o"),
    ("ntk_search", "fc", "fc NTK (KRR)", "ntk", "D"),
    ("net_search", "fc", "fc net (trained)", "net", "^"),
)
COLORS = dict(style.COLORS, tree_ntk="#1e8449")
nodes = sorted(
    {analysis.node_of(c["target"]) for c, _ in runner.results(EXP)} - {None},
    key=lambda s: (
        ("parity", "linear-plus", "tanh").index(s) if s in ("parity", "linear-plus", "tanh") else 9
    ),
)
cols = max(len(nodes), 1)
fig, axes = plt.subplots(1, cols, figsize=(4.4 * cols, 4.0), squeeze=False)
eps = analysis.EPS
for ax, node in zip(axes[0], nodes):
    fam = {"name": "tree", "arity": 2, "node": node}
    Ls = set()
    for arch, lab, ck in (
        ("fc", "fc NTK theory", "theory"),
        ("tree", "tree NTK theory", "tree_ntk"),
    ):
        th = claims.theory_nstar_by_depth(EXP, fam, arch, eps)
        L = [x for x, v in th.items() if not v.get("censored")]
        if not L:
            continue
        n = np.array([th[x]["n_star"] for x in L], float)
        valid = np.array([th[x].get("theory_valid", True) for x in L])
        ax.plot(L, n, "--", color=COLORS[ck], lw=1, label=f"{lab} (hollow: not valid)")
        ax.plot(np.array(L)[valid], n[valid], "x", color=COLORS[ck], ms=5)
        ax.plot(np.array(L)[~valid], n[~valid], "o", mfc="none", color=COLORS[ck], ms=5)
        Ls |= set(L)
    for i, (meth, arch, lab, ck, mk) in enumerate(SERIES):
        recs = claims.nstar_by_depth(EXP, meth, fam, arch, eps)
        if not recs:
            continue
        dx = (i - 1.5) * 0.06
        for L, r in recs.items():
            med = r["median"]
            x = L + dx
            if med["censored"] == "right":
                ax.plot(x, med["n_star"], "^", color=COLORS[ck], ms=7, mfc="none")
            elif med["censored"] == "left":
                ax.plot(x, med["n_star"], "v", color=COLORS[ck], ms=7, mfc="none")
            elif med["n_star"] is not None:
                lo, hi = med["lo"] or med["n_star"], med["hi"] or med["n_star"]
                ax.errorbar(
                    x,
                    med["n_star"],
                    yerr=[[med["n_star"] - lo], [hi - med["n_star"]]],
                    fmt=mk,
                    color=COLORS[ck],
                    capsize=2,
                    ms=5,
                )
        ax.plot([], [], mk, color=COLORS[ck], label=lab)
        Ls |= set(recs)
    if Ls:
        L = np.arange(min(Ls), max(Ls) + 1)
        ax.plot(L, 2.0 ** (2.0**L), ":", color="grey", lw=1, label="leaf configurations 2^(2^L)")
    ax.set(
        yscale="log",
        xlabel="tree depth L",
        ylabel=f"n*({eps}) (median seed, 95% CI)",
        title=f"node = {node}",
    )
    ax.plot([], [], "^", mfc="none", color="k", label="not reached by n_max")
    style.integer_x(ax)
if not nodes:
    style.no_data(axes[0][0], EXP)
handles, labels = axes[0][0].get_legend_handles_labels()
fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7, bbox_to_anchor=(0.5, -0.02))
fig.tight_layout(rect=(0, 0.12, 1, 1))
style.save(fig, "e4_trees")
