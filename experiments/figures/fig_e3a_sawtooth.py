"""E3a: sawtooth: NTK n*(eps) vs L, the exact network's 6L+1 parameters,
and what trained depth-L networks reached."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
import numpy as np
from style import plt

from ntkgap import runner
from ntkgap.arch import parse_arch

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
        label="NTK n*(0.1), empirical KRR (95% CI)",
    )
ex = sorted((c["L"], r["n_params"]) for c, r in runner.results("e3a_sawtooth", "exact_sawtooth"))
if ex:
    a1.semilogy(*zip(*ex), "k--", label="exact ReLU net: 6L+1 parameters")
a1.set(
    xlabel="depth L of the sawtooth",
    ylabel="samples n* / parameters",
    title="kernel vs architecture",
)
a1.legend()
nets = analysis.curves("e3a_sawtooth", "net", key=("target", "arch"))
arch_color = {a: plt.cm.viridis(i / 4) for i, a in enumerate(sorted({a for _, a in nets}))}
for (t, a), curve in sorted(nets.items()):
    _, m, s = analysis.curve_stats(curve)
    L_ = analysis.depth_of(t)
    spec = parse_arch(a).spec
    lab = f"fc:depth={spec['depth']}" + (
        " on angle u" if spec["input"] == "angle" else " on (cos, sin)"
    )
    a2.errorbar([L_], m, yerr=s, fmt="o", label=lab, capsize=2, color=arch_color[a])
# the exact network's error is 0, which a log axis cannot show: said in the legend
a2.plot([], [], " ", label="exact depth-L network: error 0\n(not drawable on a log axis)")
sizes = sorted({n for curve in nets.values() for n in curve})
a2.set(
    yscale="log",
    xlabel="depth L of the sawtooth",
    ylabel="relative test MSE at n=" + "/".join(map(str, sizes)),
    title="trained networks, from random init",
)
handles, labels = a2.get_legend_handles_labels()
uniq = dict(zip(labels, handles))
if uniq:  # right of the axes: the points sit at every height
    a2.legend(uniq.values(), uniq.keys(), loc="upper left", bbox_to_anchor=(1.02, 1.0))
style.integer_x(a1, a2)
fig.tight_layout()
style.save(fig, "e3a_sawtooth")
