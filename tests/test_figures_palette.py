"""Figures a talk could use: one palette (each predictor and activation its
own colour, the same in every figure), legends inside the canvas, no empty
panel without a word why, short verdict lines, axes fitted to the data.
The figure scripts run in-process on planted results (``figure_env`` of
tests/test_user_rows_figures.py); ``ntkgap show --plot`` runs through
``ntkgap.cli.main``."""

import itertools

import matplotlib
import numpy as np
import pytest
from matplotlib.colors import to_hex
from test_user_rows_figures import (  # noqa: F401  (figure_env is a fixture)
    _config_claims,
    _draw,
    _plant,
    _plant_summary,
    _verdict_text,
    figure_env,
)

from ntkgap import cli
from ntkgap.verdicts import rules


def _series_colours(fig):
    """{legend label: colour} of every labelled Line2D of every axes."""
    out = {}
    for ax in fig.axes:
        for ln in ax.get_lines():
            lab = ln.get_label()
            if lab and not lab.startswith("_"):
                out.setdefault(lab, set()).add(to_hex(ln.get_color()))
    return out


def _inside(fig, artist):
    fig.canvas.draw()
    box = artist.get_window_extent(fig.canvas.get_renderer())
    frame = fig.bbox
    tol = 1.0  # a pixel
    return (box.x0 >= frame.x0 - tol and box.y0 >= frame.y0 - tol
            and box.x1 <= frame.x1 + tol and box.y1 <= frame.y1 + tol)  # fmt: skip


def test_palette_colours_are_all_distinct(figure_env):  # noqa: F811
    """Every predictor and every activation of the palette has its own colour."""
    colours = [to_hex(c) for c in [*figure_env.COLORS.values(), *figure_env.ACT_COLORS.values()]]
    assert len(set(colours)) == len(colours)
    for a, b in itertools.combinations(colours, 2):  # far apart, not only unequal
        ra, rb = (np.array(matplotlib.colors.to_rgb(c)) for c in (a, b))
        assert np.abs(ra - rb).sum() > 0.15, (a, b)


def _e4_wide_plant():
    """E4 tanh trees at L = 4, 5 on d = 64 (support 2^16 and 2^32 points):
    theory, tree NTK and net searches with n* in the hundreds."""
    cells = []
    for L in (4, 5):
        t, a = f"tree:d=64,L={L},arity=2,node=tanh", f"tree:arity=2,L={L}"
        v = {"n_star": 100.0 * L, "censored": False, "n_max": 1e6, "theory_valid": True}
        cells.append(({"method": "theory", "arch": a, "target": t, "eps": [0.1]},
                      {"n_star": {"0.1": v}}))  # fmt: skip
        for method in ("ntk_search", "net_search"):
            med = {"n_star": 60.0 * L, "censored": None, "lo": 40.0 * L, "hi": 80.0 * L}
            cell = {"method": method, "arch": a, "target": t, "eps": 0.1,
                    "seeds": list(range(8)), "n_min": 4, "n_max": 4096}  # fmt: skip
            cells.append((cell, {"eps": 0.1, "median": med, "per_seed": []}))
    _plant("e4_trees", cells)


def test_e4_ntk_and_net_differ_and_keep_their_colours(figure_env):  # noqa: F811
    """E4's figure: the tree NTK (KRR), its theory and the tree net each get
    their palette colour, no two alike; the legend sits inside the canvas
    and the y axis is fitted to the points, not the support line (2^32)."""
    _e4_wide_plant()
    _plant_summary({c["id"]: rules.NOT_RUN for c in _config_claims("e4_trees")})
    fig = _draw(figure_env, "fig_e4_trees.py")
    cols = _series_colours(fig)
    c = figure_env.COLORS
    assert cols["tree NTK (ridgeless KRR)"] == {to_hex(c["tree_ntk"])}
    assert cols["tree net (trained)"] == {to_hex(c["tree"])}
    assert cols["tree NTK theory (hollow: not valid)"] == {to_hex(c["tree_theory"])}
    shown = [next(iter(v)) for v in cols.values()]
    assert len(set(shown)) == len(shown)
    assert fig.legends and all(_inside(fig, leg) for leg in fig.legends)
    (ax,) = [ax for ax in fig.axes if ax.get_title()]
    lo, hi = ax.get_ylim()
    assert 10 < lo < 160 and 500 < hi < 1e4, (lo, hi)


def test_e4_verdicts_are_short_lines_with_value_and_ci(figure_env):  # noqa: F811
    """The verdict legend of E4: 'id: verdict, value [lo, hi]', one line per
    claim or two claims a line, never a wrapped paragraph."""
    import json

    _e4_wide_plant()
    planted = {c["id"]: rules.SUPPORTED if c["profile"] == "quick" else rules.NOT_RUN
               for c in _config_claims("e4_trees")}  # fmt: skip
    path = _plant_summary(planted)
    with open(path) as fh:
        summary = json.load(fh)
    for row in summary["claims"]:
        if row["id"] == "E4-Q1-tree-tanh":
            row.update(value=3.4753, lo=2.92, hi=4.73)
    with open(path, "w") as fh:
        json.dump(summary, fh)
    fig = _draw(figure_env, "fig_e4_trees.py")
    (t,) = [t for t in fig.texts if t.get_gid() == "verdicts"]
    lines = t.get_text().splitlines()
    quick = [i for i, v in planted.items() if v == rules.SUPPORTED]
    claim_lines = [x for x in lines if "E4-" in x or "more decided" in x]
    assert len(claim_lines) == lines.index(claim_lines[-1]) + 1  # claims first, then notes
    assert len(claim_lines) <= len(quick) + 1 and all(len(x) <= 200 for x in lines)
    assert "E4-Q1-tree-tanh: supported, 3.48 [2.92, 4.73]" in _verdict_text(fig)


def test_e3b_panels_say_why_they_hold_theory_only(figure_env):  # noqa: F811
    """E3b: a panel with theory but no searches, or searches at one order k
    only, says so in its title (no silent empty or one-point panel)."""
    th = {"n_star": {"0.1": {"n_star": 500.0, "censored": None, "theory_valid": True}}}
    cells = []
    for k in (2, 3, 4):
        for arch in ("fc:depth=1,act=relu,b_std=0.1", "fc:depth=1,act=erf,b_std=1.0"):
            cells.append(({"method": "theory", "target": f"parity:d=20,k={k}", "arch": arch,
                           "eps": [0.1]}, th))  # fmt: skip
    _plant("e3b_parity", cells)
    fig = _draw(figure_env, "fig_e3b_parity.py")
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()]
    assert titles and all("theory only: no searches" in t for t in titles), titles
    for ax in fig.axes:
        if ax.get_visible():
            assert ax.get_lines(), "an empty panel"


def test_show_plot_legend_inside_the_canvas(tmp_path, monkeypatch):
    """``ntkgap show CONFIG --results DIR --plot FILE``: the curves' legend
    lies inside the figure canvas and its labels are distinct."""
    import matplotlib.pyplot as plt

    from ntkgap.runs import store
    from ntkgap.verdicts import overview

    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path / "results"))
    cfg = tmp_path / "x.toml"
    cfg.write_text(
        "name = 'x'\n[quick]\n[[quick.grid]]\nmethod = 'theory'\narch = 'fc'\n"
        "target = ['parity:d=6,k=1', 'parity:d=6,k=2']\nn = [4, 8, 16]\neps = [0.5]\n"
    )
    assert cli.main(["run", str(cfg), "--jobs", "1"]) == 0
    assert store.results("x", "theory")
    captured = {}
    real = overview.save_figure

    def keep(fig, path):
        captured["fig"] = fig
        real(fig, path)

    monkeypatch.setattr(overview, "save_figure", keep)
    monkeypatch.setattr(plt, "close", lambda fig=None: None)
    png = tmp_path / "show.png"
    assert cli.main(["show", str(cfg), "--plot", str(png)]) == 0 and png.exists()
    fig = captured["fig"]
    (leg,) = fig.legends
    assert _inside(fig, leg)
    labels = [t.get_text() for t in leg.get_texts()]
    assert len(labels) == 2 and len(set(labels)) == 2


@pytest.mark.parametrize("script", ["fig_e4_trees.py", "fig_e3b_parity.py", "fig_spectra.py"])
def test_no_hard_coded_colours(script):
    """The figure scripts take colours from style's palette, not literals."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).parents[1] / "experiments" / "figures" / script).read_text()
    assert not re.findall(r"#[0-9a-fA-F]{6}", text)
