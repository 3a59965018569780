"""Shared look of every figure, and saving as PDF + PNG into figures/."""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
# NTKGAP_FIGURES: another folder (the end-to-end test draws into a temporary one)
sys.path.insert(0, ROOT)
from ntkgap._infra import config  # noqa: E402

OUT = config.figures_dir(os.path.join(ROOT, "figures"))
# figures read only the cells of one profile's config (ntkgap.runs.store.results)
os.environ.setdefault("NTKGAP_PROFILE", "quick")
COLORS = {
    "ntk": "#c0392b",
    "theory": "#e67e22",
    "net": "#2471a3",
    "tree": "#27ae60",
    "exact": "#000000",
}

plt.rcParams.update(
    {
        "figure.dpi": 110,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "font.size": 9,
        "legend.fontsize": 7,
        "axes.titlesize": 9,
        "savefig.bbox": "tight",
    }
)


def nstar_point(ax, x, med, color, marker):
    """One search's median n*: a hollow triangle when censored (up: beyond
    n_max, down: at the smallest n), else the point with its CI bars; nothing
    when the median has no n*."""
    if med["n_star"] is None:
        return
    if med["censored"] == "right":
        ax.plot(x, med["n_star"], "^", color=color, ms=7, mfc="none")
    elif med["censored"] == "left":
        ax.plot(x, med["n_star"], "v", color=color, ms=7, mfc="none")
    else:
        lo, hi = med["lo"] or med["n_star"], med["hi"] or med["n_star"]
        yerr = [[med["n_star"] - lo], [hi - med["n_star"]]]
        ax.errorbar(x, med["n_star"], yerr=yerr, fmt=marker, color=color, capsize=2, ms=5)


def save(fig, name):
    """Write figures/<name>.pdf and .png through ntkgap's one file writer
    (the figures folder is created only if its parent exists)."""
    from ntkgap._infra.files import ensure_folder, save_figure

    ensure_folder(OUT)
    for ext in ("pdf", "png"):
        save_figure(fig, os.path.join(OUT, f"{name}.{ext}"))
    plt.close(fig)


def distinct_styles(n):
    """n (colour, marker, linestyle) triples no two alike: 10 colours of
    tab10, then the same colours again with another marker and dashes."""
    cmap = plt.get_cmap("tab10")
    markers, dashes = ("o", "s", "^", "D"), ("-", "--", ":", "-.")
    return [(cmap(i % 10), markers[(i // 10) % 4], dashes[(i // 10) % 4]) for i in range(n)]


def major_log_labels_only(*axes, which="x"):
    """Label only the decades of a log axis: minor labels such as 2x10^1,
    3x10^1 collide on short axes."""
    from matplotlib.ticker import NullFormatter

    for ax in axes:
        for axis in ((ax.xaxis,) if which == "x" else ()) + ((ax.yaxis,) if which == "y" else ()):
            axis.set_minor_formatter(NullFormatter())


def integer_x(*axes):
    """Whole-number ticks on the x axis (depths, levels)."""
    from matplotlib.ticker import MaxNLocator

    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def label_points(ax, points, fontsize=5):
    """Annotate (x, y, text) points, each label at the nearby offset that
    overlaps least with labels already placed (crowded scatters stay legible)."""
    fig = ax.figure
    fig.canvas.draw()  # fixes the axes limits, so data -> points is final
    to_pts = ax.transData + fig.dpi_scale_trans.inverted()
    placed = []
    offsets = [(3, 2), (3, -7), (-3, 6), (-3, -9), (3, 9), (3, -14), (-3, 13), (3, 16)]
    for x, y, text in points:
        px, py = to_pts.transform((x, y)) * 72
        w, h = 0.55 * fontsize * len(text), fontsize

        def overlap(off, px=px, py=py, w=w, h=h):
            x0 = px + off[0] - (w if off[0] < 0 else 0)
            y0 = py + off[1]
            return sum(
                max(0, min(x0 + w, b[0] + b[2]) - max(x0, b[0]))
                * max(0, min(y0 + h, b[1] + b[3]) - max(y0, b[1]))
                for b in placed
            )

        off = min(offsets, key=overlap)
        placed.append((px + off[0] - (w if off[0] < 0 else 0), py + off[1], w, h))
        ax.annotate(
            text,
            (x, y),
            xytext=off,
            textcoords="offset points",
            fontsize=fontsize,
            ha="right" if off[0] < 0 else "left",
        )


def no_data(ax, what):
    ax.text(
        0.5,
        0.5,
        f"no results for {what}\n(run make figures)",
        ha="center",
        va="center",
        transform=ax.transAxes,
    )
