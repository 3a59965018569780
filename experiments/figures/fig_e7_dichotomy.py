"""E7: the dichotomy: NTK n* against Fourier complexity, networks' n*
against architectural complexity."""

import re

import analysis
import style  # noqa: I001  (first: puts experiments/ on sys.path)
from matplotlib.ticker import FixedLocator, LogLocator, NullFormatter, ScalarFormatter
from style import plt

from ntkgap import runner

spec = {c["target"]: r for c, r in runner.results("zoo", "spectrum")}
fig, (a1, a2) = plt.subplots(1, 2, figsize=(9.5, 3.6))
pts1 = []
for (t, a), r in analysis.theory("zoo").items():
    v = r["n_star"].get(str(analysis.EPS))
    if t in spec and v:
        n = v["n_star"] if not v["censored"] else v["n_max"]
        pts1.append((spec[t]["complexity"]["average_degree"], n, v["censored"], t))
for x, y, cens, t in pts1:
    a1.plot(x, y, "^" if cens else "o", color=style.COLORS["ntk"], alpha=0.5 if cens else 1)
a1.set(
    yscale="log",
    xlabel="Fourier complexity: average Walsh degree",
    ylabel="NTK n*(0.1) (theory; ^ censored)",
    title="kernel: governed by Fourier complexity",
)
pts = []
for (t, a), curve in analysis.curves("e4_trees", "net").items():
    if a.startswith("tree") and t in spec:
        r = analysis.n_star_with_ci(curve)
        arch = spec[t]["architecture"]
        mark = "^" if r["censored"] else "v" if r["left_censored"] else "o"
        pts.append((arch["constituents"], r["n_star"] or max(curve), mark, t))
for x, y, mark, t in pts:
    a2.plot(x, y, mark, color=style.COLORS["tree"])
if not pts:
    style.no_data(a2, "e4_trees tree nets on zoo targets")
a2.set(
    xscale="log",
    yscale="log",
    xlabel="architectural complexity: number of constituents",
    ylabel="tree-net n*(0.1) (empirical; v: <= smallest n)",
    title="network: governed by architecture",
)
# plain numbers at the data's own constituent counts and at 1-2-5 steps:
# matplotlib's log minor labels crowd these short axes
if pts:
    a2.xaxis.set_major_locator(FixedLocator(sorted({p[0] for p in pts})))
a2.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
for axis in (a2.xaxis, a2.yaxis):
    axis.set_major_formatter(ScalarFormatter())
    axis.set_minor_formatter(NullFormatter())
fig.subplots_adjust(wspace=0.35)
style.label_points(a1, [(x, y, re.sub(r"d=\d+,", "", t.split(",seed")[0])) for x, y, _, t in pts1])
style.label_points(a2, [(x, y, re.sub(r"d=\d+,", "", t)) for x, y, _, t in pts])
style.save(fig, "e7_dichotomy")
