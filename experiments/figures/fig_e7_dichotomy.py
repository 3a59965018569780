"""E7: the dichotomy: kernels' n* against Fourier complexity (average Walsh
degree), trained networks' n* against architectural complexity (number of
constituents); both kernels and both trained networks of E4, and the zoo's
fc-NTK theory. Labels never overlap (style.label_points); censored n* are
arrows from their bound; the dichotomy claims' verdicts stand above."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter
from style import plt

from ntkgap.runs import store
from ntkgap.targets import spectra
from ntkgap.nets.arch import parse_arch
from ntkgap.specs import label
from ntkgap.errors import UsageError
from ntkgap.targets import constituents, parse_target
from ntkgap.verdicts import selection

spec = {c["target"]: r for c, r in store.results("zoo", "spectrum")}


def complexities(t):
    """(average Walsh degree, constituents) of a target: the zoo's stored
    report, else computed here (E4's targets need not be in the zoo); the
    degree is None beyond the exact Walsh transform (its point is left out
    of the kernel panel, the constituents still place it in the net panel)."""
    target = parse_target(t)
    if t not in spec:
        try:
            spec[t] = spectra.report(target)
        except UsageError:
            spec[t] = None
    degree = None if spec[t] is None else spec[t]["complexity"]["average_degree"]
    return degree, constituents.of_target(target)


fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.0))
eps = analysis.EPS
colors = style.COLORS


def short(t):
    # arity stays: E4 has arity-2 and arity-3 trees of the same depth
    return label(t, drop=("d", "seed")).replace("arity=", "a=")


pts1, pts2 = [], []
for (t, _a), r in analysis.theory("zoo").items():
    v = r["n_star"].get(str(eps))
    if t in spec and v:
        n = v["n_star"] if not v["censored"] else v["n_max"]
        deg = spec[t]["complexity"]["average_degree"]
        if v["censored"]:  # beyond the largest n theory was evaluated at: a bound
            style.bound_arrow(a1, deg, n, "right", colors["theory"])
        else:
            a1.plot(deg, n, "o", color=colors["theory"], alpha=0.6)
        pts1.append((deg, n, short(t)))
a1.plot([], [], "o", color=colors["theory"], label="fc NTK, eigenlearning (zoo)")
for method, ax, pts, kinds in (
    ("ntk_search", a1, pts1, {"tree": "tree_ntk", "fc": "ntk"}),
    ("net_search", a2, pts2, {"tree": "tree", "fc": "net"}),
):
    seen = set()
    for cell, r in store.results("e4_trees", method):
        t, arch = cell["target"], parse_arch(cell["arch"]).name
        # the ridgeless kernels (E4 also has validation-tuned ridges)
        if not selection.at(cell, eps):
            continue
        med = r["median"]
        degree, count = complexities(t)
        x = degree if method == "ntk_search" else count
        if x is None or med["n_star"] is None:
            continue
        lab = f"{arch} {'NTK (KRR)' if method == 'ntk_search' else 'net (trained)'}"
        style.nstar_point(ax, x, med, colors[kinds[arch]], "o")
        if lab not in seen:
            ax.plot([], [], "o", color=colors[kinds[arch]], label=lab)
        seen.add(lab)
        pts.append((x, med["n_star"], short(t)))
a1.set(
    yscale="log",
    xlabel="Fourier complexity: average Walsh degree",
    ylabel=f"kernel n*({eps})",
    title="kernels against Fourier complexity",
)
a2.set(
    xscale="log",
    yscale="log",
    xlabel="architectural complexity: number of constituents",
    ylabel=f"trained-network n*({eps}) (median seed)",
    title="trained networks against architectural complexity",
)
if not pts2:
    style.no_data(a2, "e4_trees networks")
for axis in (a2.xaxis, a2.yaxis):  # plain 1-2-5 numbers: 3x10^1-style minor labels crowd
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(ScalarFormatter())
    axis.set_minor_formatter(NullFormatter())
for ax, where in ((a1, "upper left"), (a2, "lower right")):
    style.bound_legend(ax)
    ax.legend(fontsize=6, loc=where)
fig.tight_layout(w_pad=3.0)  # before the labels: they are placed inside the final axes
style.label_points(a1, pts1)
style.label_points(a2, pts2)
style.state_verdicts(
    fig, "e4_trees", keep=lambda c: c.statistic in ("nstar_kernel_convexity", "nstar_net_power")
)
style.save(fig, "e7_dichotomy")
