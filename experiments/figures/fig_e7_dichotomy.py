"""E7: the dichotomy: NTK n* against Fourier complexity, networks' n*
against architectural complexity."""
import numpy as np
import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
from style import plt

from ntkgap import runner

spec = {c["target"]: r for c, r in runner.results("zoo", "spectrum")}
fig, (a1, a2) = plt.subplots(1, 2, figsize=(9.5, 3.6))
pts = []
for (t, a), r in analysis.theory("zoo").items():
    v = r["n_star"].get(str(analysis.EPS))
    if t in spec and v:
        n = v["n_star"] if not v["censored"] else v["n_max"]
        pts.append((spec[t]["complexity"]["average_degree"], n, v["censored"], t))
for x, y, cens, t in pts:
    a1.plot(x, y, "^" if cens else "o", color=style.COLORS["ntk"], alpha=0.5 if cens else 1)
    a1.annotate(t.split(",seed")[0].replace(":d=16", ""), (x, y), fontsize=5)
a1.set(yscale="log", xlabel="Fourier complexity: average Walsh degree", ylabel="NTK n*(0.1) (theory; ^ censored)",
       title="kernel: governed by Fourier complexity")
pts = []
for (t, a), curve in analysis.curves("e4_trees", "net").items():
    if a.startswith("tree") and t in spec:
        r = analysis.n_star_with_ci(curve)
        arch = spec[t]["architecture"]
        pts.append((arch["constituents"], r["n_star"] or max(curve), r["censored"], t))
for x, y, cens, t in pts:
    a2.plot(x, y, "^" if cens else "o", color=style.COLORS["tree"])
    a2.annotate(t.replace("tree:d=16,", ""), (x, y), fontsize=5)
if not pts:
    style.no_data(a2, "e4_trees tree nets on zoo targets")
a2.set(xscale="log", yscale="log", xlabel="architectural complexity: number of constituents",
       ylabel="tree-net n*(0.1) (empirical)", title="network: governed by architecture")
style.save(fig, "e7_dichotomy")
