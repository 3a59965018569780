"""Shared look of every figure, and saving as PDF + PNG into figures/."""

import os
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
# NTKGAP_FIGURES: another folder (the end-to-end test draws into a temporary one)
sys.path.insert(0, ROOT)
from ntkgap._infra import config  # noqa: E402
from ntkgap.runs import config as runs_config  # noqa: E402
from ntkgap.runs import store  # noqa: E402
from ntkgap.verdicts import claims, rules  # noqa: E402

OUT = config.figures_dir(os.path.join(ROOT, "figures"))
# figures read only the cells of one profile's config (ntkgap.runs.store.results)
os.environ.setdefault("NTKGAP_PROFILE", "quick")
#: the one palette: each predictor keeps its colour in every figure, no two alike
#: (Okabe & Ito's colour-blind-safe set, then further distinct hues)
COLORS = {
    "ntk": "#D55E00",  # fc NTK regression (ridgeless KRR)
    "theory": "#E69F00",  # fc NTK, eigenlearning theory
    "net": "#0072B2",  # fc net, trained
    "ridge": "#CC79A7",  # NTK regression with a ridge tuned on validation
    "tree_ntk": "#009E73",  # tree / CNN NTK regression (ridgeless KRR)
    "tree_theory": "#8C9A00",  # tree NTK, eigenlearning theory
    "tree": "#6A3D9A",  # tree / CNN net, trained
    "tree_ridge": "#17BECF",  # tree NTK regression, tuned ridge
    "lazy": "#8C564B",  # lazy (large alpha) training
    "exact": "#000000",  # exact values (closed forms, brute force)
}
#: one colour per activation, distinct from the predictors' and from each other
ACT_COLORS = {
    "relu": "#393B79",
    "leaky_relu": "#637939",
    "abs": "#B8860B",
    "gelu": "#843C39",
    "erf": "#7B4173",
    "tanh": "#E7969C",
    "silu": "#9C9EDE",
    "softplus": "#A5C26B",
    "sin": "#636363",
}
#: a bound's arrow spans this factor on a log axis (up: x ARROW, down: / ARROW)
ARROW = 2.0
#: the legend text of a bound drawn by :func:`bound_arrow` (one wording everywhere)
BOUND_LABEL = "censored: n* beyond the cap n_max (arrow up) or <= n_min (down)"

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


def bound_arrow(ax, x, y, side, color):
    """A censored value on a log y axis: a cap at its bound ``y`` and an arrow
    from the cap towards where the value lies (a bound, not a measurement).

    Args:
        ax: the axes.
        x, y: where the bound is (data coordinates).
        side: "right" (the value lies above y: not reached by n_max) or
            "left" (at or below y: reached at the smallest n).
        color: the predictor's colour.

    Returns:
        None.
    """
    end = y * (ARROW if side == "right" else 1 / ARROW)
    ax.update_datalim([(x, end)])  # the arrow's tip stays inside the axes
    ax.plot(x, y, "_", color=color, ms=9, mew=1.5)
    ax.annotate("", xy=(x, end), xytext=(x, y),
                arrowprops=dict(arrowstyle="->", color=color, lw=1.2))  # fmt: skip


def bound_legend(ax):
    """The legend entry explaining :func:`bound_arrow` (an arrow marker)."""
    ax.plot([], [], marker=r"$\uparrow$", ls="none", color="k", ms=8, label=BOUND_LABEL)


def nstar_point(ax, x, med, color, marker, **kw):
    """One search's median n*: the point with its CI bars, or where censored
    an arrow from its bound (:func:`bound_arrow`); nothing when the median
    has no n*.

    Args:
        ax: the axes.
        x: the x position.
        med: the search's ``median`` record (n_star, censored, lo, hi).
        color: the predictor's colour.
        marker: its marker.
        **kw: further keywords of the point's ``errorbar`` (e.g.
            ``mfc="none"``: an open marker).

    Returns:
        None.
    """
    if med["n_star"] is None:
        return
    if med["censored"] in ("right", "left"):
        bound_arrow(ax, x, med["n_star"], med["censored"], color)
    else:
        lo, hi = med["lo"] or med["n_star"], med["hi"] or med["n_star"]
        yerr = [[med["n_star"] - lo], [hi - med["n_star"]]]
        ax.errorbar(x, med["n_star"], yerr=yerr, fmt=marker, color=color, capsize=2, ms=5, **kw)


def _summary_is_fresh(path, exp, config_path):
    """Whether ``path`` (summary.json) is of the profile drawn and newer than
    the experiment's config and stored results (a folder's mtime moves with
    every file written into it: the store writes by rename)."""
    summary = store.load_result(path)
    if not isinstance(summary, dict) or summary.get("profile") != (config.profile() or "quick"):
        return None
    folder = os.path.join(config.results_dir(), exp)
    inputs = [config_path] + ([folder] if os.path.isdir(folder) else [])
    return summary if os.path.getmtime(path) >= max(map(os.path.getmtime, inputs)) else None


def claim_verdicts(exp, keep=None):
    """The claims of one experiment with their verdicts as REPORT.md states
    them: from ``results/summary.json`` when it is of this profile and newer
    than the config and the results (``make figures`` draws the figures
    before report.py rewrites it), else evaluated now by
    ``claims.evaluate``, the function report.py writes it with.

    Args:
        exp: the experiment's name (``experiments/<exp>.toml``).
        keep: a predicate on a parsed claim (``rules.Claim``) choosing the
            claims (None: all).

    Returns:
        list of claim dicts (``id``, ``verdict``, optional ``control``), in
        the config's order.
    """
    path = os.path.join(ROOT, "experiments", f"{exp}.toml")
    parsed = [c for c in claims.parse_claims(runs_config.load_config(path), path)
              if keep is None or keep(c)]  # fmt: skip
    summary_path = os.path.join(config.results_dir(), "summary.json")
    summary = _summary_is_fresh(summary_path, exp, path) if os.path.exists(summary_path) else None
    stored = {c.get("id"): c for c in (summary or {}).get("claims", [])}
    if all(c.id in stored for c in parsed):
        return [stored[c.id] for c in parsed]
    return [claims.evaluate(c, exp) for c in parsed]


def _verdict_text(c):
    """'id: verdict, value [lo, hi]' (the CI where there is one; a control
    says whether it came out as expected)."""
    text = f"{c['id']}: {c['verdict']}"
    if c.get("value") is not None:
        text += f", {c['value']:.3g}"
        if c.get("lo") is not None and c.get("hi") is not None:
            text += f" [{c['lo']:.3g}, {c['hi']:.3g}]"
    control = c.get("control")
    if control:
        text += " (control: as expected)" if control["held"] else " (control: NOT as expected)"
    return text


def state_verdicts(fig, exp, keep=None, notes=()):
    """Write above the figure the verdicts of the claims it shows
    ("claim id: verdict", :func:`claim_verdicts`), then ``notes``.

    Args:
        fig: the figure.
        exp: the experiment whose claims it shows.
        keep: a predicate on a parsed claim (``rules.Claim``) choosing the
            claims shown (None: all).
        notes: further lines (what a quantity in the titles is).

    Returns:
        str, the text written (the figure's Text with gid "verdicts").
    """
    shown = claim_verdicts(exp, keep)
    decided = [c for c in shown if c["verdict"] != rules.NOT_RUN]
    profile = config.profile() or "quick"
    later = len(shown) - len(decided)
    items = [_verdict_text(c) for c in decided] or ["none decided at this profile"]
    if later:
        items.append(f"{later} more decided by a larger profile (not run)")
    width = max(60, int(fig.get_figwidth() * 72 / (0.5 * 7)))
    # the verdicts as a short legend: two per line, each whole
    per_line = 2 if max(map(len, items)) * 2 + 3 <= width else 1
    rows = [" | ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    lines = [f"Verdicts ({profile} profile): {rows[0]}", *rows[1:]]
    lines += [textwrap.fill(x, width, break_on_hyphens=False) for x in notes]
    text = "\n".join(lines)
    fig.text(0.5, 1.0, text, ha="center", va="bottom", fontsize=7, gid="verdicts")
    return text


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


#: where a point's label may go: directions (dx, dy, ha, va) at growing
#: distances in points; beyond LEADER points a thin line joins label and point
_DIRECTIONS = (
    (1, 0, "left", "center"), (1, 1, "left", "bottom"), (1, -1, "left", "top"),
    (-1, 0, "right", "center"), (-1, 1, "right", "bottom"), (-1, -1, "right", "top"),
    (0, 1, "center", "bottom"), (0, -1, "center", "top"),
)  # fmt: skip
_RADII, LEADER = (4, 9, 15, 24, 36, 50), 8


def _overlap(a, b):
    """Area shared by two matplotlib Bboxes (display units)."""
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(w, 0) * max(h, 0)


def _outside(box, frame):
    """Area of ``box`` outside ``frame``."""
    return box.width * box.height - _overlap(box, frame)


def _text_box(ann, renderer):
    """An annotation's text extent (display units), without its leader line."""
    ann.update_positions(renderer)
    return Text.get_window_extent(ann, renderer)


def label_points(ax, points, fontsize=5):
    """Annotate (x, y, text) points so that no label overlaps another label,
    a labelled point, a text or arrow already drawn or the legend, and every
    label stays inside the axes:
    each label takes the first free place of ``_DIRECTIONS`` x ``_RADII``
    (a leader line beyond ``LEADER`` points), else the place of least overlap.

    Args:
        ax: the axes, with its limits and legend final.
        points: (x, y, text) in data coordinates.
        fontsize: the labels' font size.

    Returns:
        list of the Annotations.
    """
    fig = ax.figure
    fig.canvas.draw()  # fixes the axes limits, so data -> display is final
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    r = 3 * fig.dpi / 72  # a marker's half size (about 6 points across)
    taken = [Bbox.from_extents(px - r, py - r, px + r, py + r)
             for px, py in (ax.transData.transform((x, y)) for x, y, _ in points)]  # fmt: skip
    if ax.get_legend() is not None:
        taken.append(ax.get_legend().get_window_extent(renderer))
    taken += [a.get_window_extent(renderer) for a in ax.texts]  # bound arrows, other text
    out = []
    for x, y, text in points:
        ann = ax.annotate(text, (x, y), (0, 0), textcoords="offset points", fontsize=fontsize)
        best = None
        for rad in _RADII:
            for dx, dy, ha, va in _DIRECTIONS:
                ann.set(position=(dx * rad, dy * rad), ha=ha, va=va)
                box = _text_box(ann, renderer)
                cost = sum(_overlap(box, t) for t in taken) + 10 * _outside(box, frame)
                if best is None or cost < best[0]:
                    best = (cost, rad, dx, dy, ha, va, box)
            if best[0] == 0:
                break
        ann.remove()
        _, rad, dx, dy, ha, va, box = best
        leader = dict(arrowstyle="-", color="grey", lw=0.4, shrinkA=0, shrinkB=3)
        out.append(ax.annotate(text, (x, y), xytext=(dx * rad, dy * rad),
                               textcoords="offset points", fontsize=fontsize, ha=ha, va=va,
                               arrowprops=leader if rad > LEADER else None))  # fmt: skip
        taken.append(box)
    return out


def no_data(ax, what):
    ax.text(
        0.5,
        0.5,
        f"no results for {what}\n(run make figures)",
        ha="center",
        va="center",
        transform=ax.transAxes,
    )
