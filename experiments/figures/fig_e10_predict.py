"""E10: predicted vs measured n*(eps), log-log, one marker per group
(target family with architecture variant), each point at its own eps (the
config's levels). Left: the own-architecture kernel, eigenlearning theory
(filled where valid, hollow where not; absent where no exact spectrum
exists), at every stored kernel search (E10's own cells included). Right:
the trained net, the law n* = c C^p; filled: held out (the
law fitted without that family), hollow: the same points under the law
fitted on all families at their eps (in sample); bars: the held-out 95%
prediction interval. A censored measurement is drawn at its bound with a
triangle pointing the open way, a resolved one at its final bracket's
log-scale midpoint. Below the verdicts: the counts of the claims a larger
profile decides, as measured here, undecided (none in paper: it decides all
four)."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import math
import os

from style import plt

from ntkgap._infra import config
from ntkgap.errors import UsageError
from ntkgap.runs import config as runs_config
from ntkgap.verdicts import claims, e10_statistics, predictions

CONFIG = os.path.join(style.ROOT, "experiments", "e10_predict.toml")
CLAIMS = claims.parse_claims(runs_config.load_config(CONFIG), CONFIG)
#: the levels and sources the claims read (every E10 claim has the same)
PARAMS = CLAIMS[0].params


def _x(iv):
    """The measured median: its bracket's log midpoint, or its finite end
    when censored."""
    lo, hi = iv
    if math.isfinite(lo) and math.isfinite(hi):
        return math.exp((lo + hi) / 2.0)
    return math.exp(lo if math.isfinite(lo) else hi)


def _marker(iv, default):
    lo, hi = iv
    return ">" if hi == math.inf else "<" if lo == -math.inf else default


def draw(ax_k, ax_n, rows, krows, points):
    """Both panels from the leave-one-out rows (and the in-sample law) and
    the kernel rows."""
    groups = sorted({r["group"] for r in [*rows, *krows]})
    styles = dict(zip(groups, style.distinct_styles(len(groups))))
    laws = {}
    for level in {r["eps"] for r in rows}:
        try:
            laws[level] = predictions.fit_law([pt for pt in points if pt.eps == level])
        except UsageError:
            laws[level] = None
    for r in rows:
        law_all = laws[r["eps"]]
        color, mk, _ = styles[r["group"]]
        x = _x(r["net"])
        lo, hi = r["net_interval"]
        ax_n.errorbar(
            x,
            r["net_pred"],
            yerr=[[r["net_pred"] - lo], [hi - r["net_pred"]]],
            color=color,
            alpha=0.4,
            lw=0.8,
        )
        ax_n.plot(x, r["net_pred"], _marker(r["net"], mk), color=color, ms=5, label=r["group"])
        if law_all is not None:
            y = predictions.law_predict(law_all, r["C"])["n_star"]
            ax_n.plot(x, y, mk, mfc="none", color=color, ms=5)
    for r in krows:
        if r["kernel_pred"] is None:
            continue
        color, mk, _ = styles[r["group"]]
        face = color if r["kernel_valid"] else "none"
        k_mark = _marker(r["kernel"], mk)
        ax_k.plot(
            _x(r["kernel"]), r["kernel_pred"], k_mark, color=color, mfc=face, ms=5, label=r["group"]
        )
    for ax, what in ((ax_k, "kernel (theory)"), (ax_n, "trained net (law, held out)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        lims = [*ax.get_xlim(), *ax.get_ylim()]
        span = [min(lims), max(lims)]
        ax.plot(span, span, "k-", lw=0.6)
        for f in (2, 3):
            ax.plot(span, [s * f for s in span], "k:", lw=0.4)
            ax.plot(span, [s / f for s in span], "k:", lw=0.4)
        ax.set_xlabel("measured n*(eps)")
        ax.set_ylabel(f"predicted n*(eps): {what}")


def undecided_notes() -> list[str]:
    """The claims a larger profile decides, as measured in this one (their
    statistics as ``claims.evaluate`` calls them)."""
    notes = []
    for c in CLAIMS:
        if not claims.decided_here(c):
            m = claims.STATISTICS[c.statistic](dict(c.params, rule=c.rule), "e10_predict")
            notes.append(f"{c.id} (decided by {c.profile}; here undecided): {m.detail}")
    return notes


def main():
    fig, (ax_k, ax_n) = plt.subplots(1, 2, figsize=(9, 4.2))
    # the claims' own cached rows: the theory is computed once for the figure and the notes
    points, rows, krows = e10_statistics.e10_rows(
        tuple(PARAMS["sources"]), predictions.eps_levels(PARAMS["eps"]), config.profile()
    )
    if not rows and not krows:
        style.no_data(ax_k, "E4/E8/E9/E10 searches")
        style.no_data(ax_n, "E4/E8/E9 searches")
    else:
        draw(ax_k, ax_n, rows, krows, points)
        handles, labels = [], []
        for ax in (ax_n, ax_k):
            h, lab = ax.get_legend_handles_labels()
            handles, labels = handles + h, labels + lab
        uniq = dict(zip(labels, handles))
        fig.subplots_adjust(bottom=0.15 + 0.03 * math.ceil(len(uniq) / 3), wspace=0.3)
        fig.legend(uniq.values(), uniq.keys(), fontsize=5, loc="lower center", ncol=3)
    style.state_verdicts(fig, "e10_predict", notes=undecided_notes() if points else ())
    style.save(fig, "e10_predict")


main()
