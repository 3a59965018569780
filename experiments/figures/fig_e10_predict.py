"""E10: predicted vs measured n*(0.1), log-log, one marker per family
(target family with architecture variant). Left: the own-architecture
kernel, eigenlearning theory (filled where valid, hollow where not).
Right: the trained net, the law n* = c C^p; filled: held out (the law fitted
without that family), hollow: the same points under the law fitted on all
families (in sample); bars: the held-out 95% prediction interval. A censored
measurement is drawn at its bound with a triangle pointing the open way."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import math

from style import plt

from ntkgap.errors import UsageError
from ntkgap.verdicts import predictions

EPS = 0.1


def _x(iv):
    """The measured median: its point, or its finite end when censored."""
    lo, hi = iv
    return math.exp(lo if math.isfinite(lo) else hi) if hi != lo else math.exp(lo)


def _marker(iv, default):
    lo, hi = iv
    return ">" if hi == math.inf else "<" if lo == -math.inf else default


def draw(ax_k, ax_n, rows, points):
    """Both panels from the leave-one-out rows (and the in-sample law)."""
    groups = sorted({r["group"] for r in rows})
    styles = dict(zip(groups, style.distinct_styles(len(groups))))
    try:
        law_all = predictions.fit_law(points)
    except UsageError:
        law_all = None
    for r in rows:
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
        ax_n.plot(x, r["net_pred"], _marker(r["net"], mk), color=color, ms=5)
        if law_all is not None:
            y = predictions.law_predict(law_all, r["C"])["n_star"]
            ax_n.plot(x, y, mk, mfc="none", color=color, ms=5)
        if r["kernel"] is not None:
            face = color if r["kernel_valid"] else "none"
            ax_k.plot(
                _x(r["kernel"]),
                r["kernel_pred"],
                _marker(r["kernel"], mk),
                color=color,
                mfc=face,
                ms=5,
                label=r["group"],
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
        ax.set_xlabel("measured n*(0.1)")
        ax.set_ylabel(f"predicted n*(0.1): {what}")


def main():
    fig, (ax_k, ax_n) = plt.subplots(1, 2, figsize=(9, 4.2))
    points = predictions.collect(predictions.SOURCES, EPS)
    rows = predictions.leave_one_out(points, EPS) if points else []
    if not rows:
        style.no_data(ax_k, "E4/E8/E9 searches")
        style.no_data(ax_n, "E4/E8/E9 searches")
    else:
        draw(ax_k, ax_n, rows, points)
        handles, labels = ax_k.get_legend_handles_labels()
        uniq = dict(zip(labels, handles))
        fig.legend(uniq.values(), uniq.keys(), fontsize=5, loc="lower center", ncol=3)
    style.state_verdicts(fig, "e10_predict")
    style.save(fig, "e10_predict")


main()
