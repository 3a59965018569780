"""E3a: sawtooth: NTK n*(eps) vs L, the exact network's 6L+1 parameters;
and n*(0.1) by adaptive search of the trained net and the NTK of the same
architecture and input (the embed NTK beside them)."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
import numpy as np
from style import plt

from ntkgap.verdicts.selection import Side, searches
from ntkgap.runs import store

fig, (a1, a2) = plt.subplots(1, 2, figsize=(9.5, 3.6))
th = analysis.theory("e3a_sawtooth")
for eps, mk in (("0.1", "o-"), ("0.01", "s-")):
    L, ns = [], []
    for (t, _a), r in sorted(th.items(), key=lambda kv: analysis.depth_of(kv[0][0])):
        v = r["n_star"].get(eps)
        if v and not v["censored"]:
            L.append(analysis.depth_of(t))
            ns.append(v["n_star"])
    if L:
        a1.semilogy(L, ns, mk, color=style.COLORS["theory"], label=f"NTK n*({eps}), eigenlearning")
emp = analysis.curves("e3a_sawtooth", "ntk")
L, ns, lo, hi = [], [], [], []
for (t, _a), curve in sorted(emp.items(), key=lambda kv: analysis.depth_of(kv[0][0])):
    r = analysis.n_star_with_ci(curve, 0.1)
    if r["n_star"] and not r["censored"]:
        L.append(analysis.depth_of(t))
        ns.append(r["n_star"])
        lo.append(r["lo"] or r["n_star"])
        hi.append(r["hi"] or r["n_star"])
if L:
    ns, lo, hi = map(np.array, (ns, lo, hi))
    a1.errorbar(
        L,
        ns,
        yerr=[ns - lo, hi - ns],
        fmt="D",
        color=style.COLORS["ntk"],
        capsize=2,
        label="NTK n*(0.1), empirical KRR (median seed; CI only with >= 8 seeds)",
    )
ex = sorted((c["L"], r["n_params"]) for c, r in store.results("e3a_sawtooth", "exact_sawtooth"))
if ex:
    a1.semilogy(*zip(*ex), "k--", label="exact ReLU net: 6L+1 parameters")
a1.set(
    xlabel="depth L of the sawtooth",
    ylabel="samples n* / parameters",
    title="kernel vs architecture",
)
a1.legend()
SERIES = (  # E3a-net: (side, label, colour, marker), searched on the same seeds and splits
    (
        Side("ntk_search", "fc:depth=2,input=angle"),
        "NTK, fc:depth=2 on u",
        "ntk",
        "D",
    ),
    (
        Side("ntk_search", "fc:depth=2"),
        "NTK, fc:depth=2 on (cos, sin)",
        "tree",
        "s",
    ),
    (
        Side("net_search", "fc:depth=2,input=angle"),
        "trained fc:depth=2 on u",
        "net",
        "o",
    ),
)
for i, (side, lab, ck, mk) in enumerate(SERIES):
    recs = searches("e3a_sawtooth", side, 0.1)
    for t, r in recs.items():
        med, x = r["median"], analysis.depth_of(t) + (i - 1) * 0.08
        style.nstar_point(a2, x, med, style.COLORS[ck], mk)
    a2.plot([], [], mk, color=style.COLORS[ck], label=lab)
style.bound_legend(a2)
a2.set(
    yscale="log",
    xlabel="depth L of the sawtooth",
    ylabel="n*(0.1) (median seed; bars: min-max of 8 seeds)",
    title="searched n*: trained net vs NTK, same arch and input",
)
a2.legend(loc="upper left", fontsize=6)
style.integer_x(a1, a2)
fig.tight_layout()
style.state_verdicts(fig, "e3a_sawtooth")
style.save(fig, "e3a_sawtooth")
