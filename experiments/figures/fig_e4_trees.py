"""E4: compositional trees: n*(eps) vs depth for NTK, FC net and tree net."""

import analysis
import numpy as np
import style  # noqa: I001  (first: puts experiments/ on sys.path)
from style import plt

# one row per accuracy the report judges (eps = 0.1 and 0.01)
EPSS = (analysis.EPS, 0.01)
fig, axes = plt.subplots(len(EPSS), 2, figsize=(9.5, 3.4 * len(EPSS)))
nodes = ("linear-plus", "parity")
th = analysis.theory("e4_trees")
ntk = analysis.curves("e4_trees", "ntk")
net = analysis.curves("e4_trees", "net")
for ax, (eps, node) in zip(axes.flat, [(e, nd) for e in EPSS for nd in nodes]):
    series = {
        "NTK (eigenlearning)": ([], [], "theory"),
        "NTK (empirical KRR)": ([], [], "ntk"),
        "fc:depth=2 net": ([], [], "net"),
        "depth-aware tree net": ([], [], "tree"),
    }
    for (t, a), r in th.items():
        v = r["n_star"].get(str(eps))
        if analysis.node_of(t) == node and v and not v["censored"]:
            series["NTK (eigenlearning)"][0].append(analysis.depth_of(t))
            series["NTK (eigenlearning)"][1].append(v["n_star"])
    for src, label in ((ntk, "NTK (empirical KRR)"), (net, None)):
        for (t, a), curve in src.items():
            if analysis.node_of(t) != node:
                continue
            lab = label or ("depth-aware tree net" if a.startswith("tree") else "fc:depth=2 net")
            r = analysis.n_star_with_ci(curve, eps)
            L = analysis.depth_of(t)
            ns = max(curve)
            series[lab][0].append(L)
            series[lab][1].append(r["n_star"] if not r["censored"] else np.nan)
            if r["censored"]:
                ax.plot(
                    [L], [ns], marker="^", color=style.COLORS[series[lab][2]], ls="none", alpha=0.5
                )
    for lab, (L, v, c) in series.items():
        if L:
            o = np.argsort(L)
            ax.plot(np.array(L)[o], np.array(v, float)[o], "o-", color=style.COLORS[c], label=lab)
    ax.set(
        yscale="log",
        xlabel="tree depth L",
        ylabel=f"samples n*(eps={eps})",
        title=f"node = {node}, eps = {eps} (^: not reached by the largest n)",
    )
    ax.legend()
    style.integer_x(ax)
fig.tight_layout()
style.save(fig, "e4_trees")
