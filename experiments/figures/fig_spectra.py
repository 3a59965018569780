"""The zoo's spectra: power per frequency (circle) or Walsh degree."""

import numpy as np
import style
from style import plt

from ntkgap import runner

rows = sorted(runner.results("zoo", "spectrum"), key=lambda cr: cr[0]["target"])
fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
for _cell, r in rows:
    var = r["variance"]
    if "frequency" in r:
        k, p = np.array(r["frequency"]), np.array(r["power"])
        sel = p > 1e-12 * var
        a1.semilogy(k[sel], p[sel] / var, "o-", ms=3, label=r["target"])
    else:
        k, w = np.array(r["degree"]), np.array(r["weight"])
        a2.plot(k[1:], w[1:] / var, "o-", ms=3, label=r["target"].replace("d=16,", ""))
a1.set(xscale="log", xlabel="frequency k", ylabel="share of variance", title="circle targets")
a2.set(xlabel="Walsh degree k", ylabel="share of variance W^k / Var f", title="hypercube targets")
a1.legend()
a2.legend(fontsize=5, ncol=2)
style.save(fig, "spectra")
