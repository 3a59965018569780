"""A new user's trial, rows 16-17 (figures and REPORT.md), one test or a few per
complaint: figure scripts drawn in-process on planted results (nothing is
computed), the figure inspected through matplotlib, and the report's table
helpers on planted claims."""

import importlib.util
import itertools
import json
import math
import os
import runpy

import matplotlib
import numpy as np
import pytest
from conftest import ROOT
from matplotlib import pyplot as plt
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from ntkgap.runs import config as runs_config
from ntkgap.runs import store
from ntkgap.verdicts import claims, nstar_statistics, rules

# ------------------------------------------------------------------ rows 16-17
FIGURES_DIR = os.path.join(ROOT, "experiments", "figures")
EXPERIMENTS_DIR = os.path.join(ROOT, "experiments")


@pytest.fixture
def figure_env(monkeypatch, tmp_path):
    """The figure scripts' module ``style`` reading ``tmp_path/results``
    (every planted cell: no profile filter), with ``save`` collecting the
    figures instead of writing them; rcParams restored afterwards."""
    results = tmp_path / "results"
    results.mkdir()
    monkeypatch.setenv("NTKGAP_RESULTS", str(results))
    monkeypatch.setenv("NTKGAP_PROFILE", "")  # before style's setdefault: stays unset
    monkeypatch.setenv("NTKGAP_FIGURES", str(tmp_path / "figures"))
    monkeypatch.syspath_prepend(EXPERIMENTS_DIR)
    monkeypatch.syspath_prepend(FIGURES_DIR)
    with matplotlib.rc_context():
        import style

        drawn = []
        monkeypatch.setattr(style, "save", lambda fig, name: drawn.append(fig))
        monkeypatch.setattr(style, "drawn", drawn, raising=False)
        yield style
    plt.close("all")


def _draw(style, script):
    """Run one figure script; its (unsaved) figure."""
    style.drawn.clear()
    runpy.run_path(os.path.join(FIGURES_DIR, script), run_name="__main__")
    (fig,) = style.drawn
    fig.canvas.draw()
    return fig


def _plant(exp, cells):
    """Store (cell, result) pairs under the results folder as a run would."""
    from ntkgap._infra import config

    os.makedirs(os.path.join(config.results_dir(), exp), exist_ok=True)
    for cell, res in cells:
        store.save(exp, cell, res)


def _config_claims(exp):
    """The config's claims, its [[claim_family]] tables expanded."""
    return runs_config.load_config(os.path.join(EXPERIMENTS_DIR, f"{exp}.toml"))["claim"]


def _plant_summary(verdicts):
    """results/summary.json (quick) holding {claim id: verdict}, written now."""
    from ntkgap._infra import config

    rows = [{"id": i, "verdict": v} for i, v in verdicts.items()]
    path = os.path.join(config.results_dir(), "summary.json")
    with open(path, "w") as fh:
        json.dump({"profile": "quick", "claims": rows}, fh)
    return path


def _verdict_text(fig):
    (t,) = [t for t in fig.texts if t.get_gid() == "verdicts"]
    return " ".join(t.get_text().split())  # wrapped lines joined


def _box(text, renderer):
    """A text's own extent (an annotation's leader line left out)."""
    if hasattr(text, "update_positions"):
        text.update_positions(renderer)
    return Text.get_window_extent(text, renderer)


def _overlap(a, b):
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w > 0.5 and h > 0.5  # more than half a pixel both ways


def _labels_clear(ax, renderer):
    """Point labels of ``ax``: pairwise disjoint, inside the axes, off the
    legend and off the bound arrows."""
    boxes = [_box(a, renderer) for a in ax.texts if a.get_text()]
    arrows = [a.get_window_extent(renderer) for a in ax.texts if not a.get_text()]
    frame = ax.get_window_extent(renderer)
    for a, b in itertools.combinations(boxes, 2):
        assert not _overlap(a, b), (a, b)
    for b in boxes:
        assert frame.x0 - 1 <= b.x0 and b.x1 <= frame.x1 + 1, b
        assert frame.y0 - 1 <= b.y0 and b.y1 <= frame.y1 + 1, b
        if ax.get_legend() is not None:
            assert not _overlap(b, ax.get_legend().get_window_extent(renderer))
        assert not any(_overlap(b, a) for a in arrows)
    return boxes


# crowded scatters: (x, y) on a log y axis, labels as long as E7's
CROWDS = [
    [(2.0 + 0.12 * i, 10 ** (4 + 0.08 * i)) for i in range(8)],
    [(1.0, 60), (1.2, 60), (1.0, 25), (1.4, 300), (8.0, 8e6), (7.9, 6e6), (2.0, 950)],
]


@pytest.mark.parametrize("xy", CROWDS)
def test_row16_point_labels_never_overlap_and_stay_inside(figure_env, xy):
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot(*zip(*xy), "o", label="points")
    ax.set(yscale="log", xlim=(0.5, 8.5))
    ax.legend(loc="upper left")
    pts = [(x, y, f"tree:L={i},a=2,node=linear-plus") for i, (x, y) in enumerate(xy)]
    anns = figure_env.label_points(ax, pts)
    fig.canvas.draw()
    assert [(*a.xy, a.get_text()) for a in anns] == pts  # each label at its own point
    _labels_clear(ax, fig.canvas.get_renderer())


# zoo targets whose kernel points crowd one corner (the first one censored)
ZOO_CROWD = ("parity:d=12,k=4", "staircase:d=12,k=4", "parity:d=12,k=2",
             "tree:d=24,L=2,arity=2,node=and", "circuit:d=12,gates=6,fan_in=2")  # fmt: skip


def _e7_plant():
    """Zoo theory (``ZOO_CROWD``) and E4 searches
    of tree kernels and nets at L = 2, 3, 4 (one net search censored)."""
    theory, spectrum = [], []
    for i, t in enumerate(ZOO_CROWD):
        n = {"n_star": None if i == 0 else 10 ** (4 + 0.1 * i), "censored": i == 0,
             "n_max": 1e7, "theory_valid": True}  # fmt: skip
        theory.append(({"method": "theory", "arch": "fc:depth=2", "target": t, "eps": [0.1]},
                       {"n_star": {"0.1": n}}))  # fmt: skip
        spectrum.append(({"method": "spectrum", "target": t},
                         {"complexity": {"average_degree": 2.0 + 0.15 * i}}))  # fmt: skip
    searches = []
    for L, (method, arch) in itertools.product((2, 3, 4), (("ntk_search", "tree"),
                                                           ("net_search", "tree"))):  # fmt: skip
        t = f"tree:d=16,L={L},arity=2,node=tanh"
        spectrum.append(({"method": "spectrum", "target": t},
                         {"complexity": {"average_degree": 1.0 + 0.05 * L}}))  # fmt: skip
        cens = "right" if (L == 4 and method == "net_search") else None
        med = {"n_star": 40.0 * L, "censored": cens, "lo": 30.0 * L, "hi": 50.0 * L}
        cell = {"method": method, "arch": f"{arch}:arity=2,L={L}", "target": t, "eps": 0.1,
                "seeds": list(range(8)), "n_min": 4, "n_max": 4096}  # fmt: skip
        searches.append((cell, {"eps": 0.1, "median": med, "per_seed": []}))
    _plant("zoo", theory + spectrum)
    _plant("e4_trees", searches)


def test_row16_e7_labels_apart_ylabel_clear_and_verdicts_stated(figure_env):
    _e7_plant()
    planted = {c["id"]: rules.VERDICTS[i % 3] for i, c in enumerate(_config_claims("e4_trees"))}
    _plant_summary(planted)  # fresh: newer than the planted results
    fig = _draw(figure_env, "fig_e7_dichotomy.py")
    a1, a2 = fig.axes
    r = fig.canvas.get_renderer()
    boxes = _labels_clear(a1, r) + _labels_clear(a2, r)
    assert len(boxes) == 5 + 6
    # the right panel's y label clears its own tick labels and the whole left panel
    ylab = a2.yaxis.label.get_window_extent(r)
    assert not _overlap(ylab, a1.get_tightbbox(r))
    for t in a2.get_yticklabels() + a1.get_yticklabels():
        assert not (t.get_text() and _overlap(ylab, t.get_window_extent(r)))
    # censored: an arrow from the bound, no triangle marker anywhere
    arrows = [a for ax in (a1, a2) for a in ax.texts if a.arrow_patch and not a.get_text()]
    assert len(arrows) == 2 and not [ln for ax in (a1, a2) for ln in ax.lines
                                     if ln.get_marker() in ("^", "v")]  # fmt: skip
    text = _verdict_text(fig)
    dichotomy = [c for c in _config_claims("e4_trees")
                 if c["statistic"] in ("nstar_kernel_convexity", "nstar_net_power")]  # fmt: skip
    for c in dichotomy:
        if planted[c["id"]] != rules.NOT_RUN:
            assert f"{c['id']}: {planted[c['id']]}" in text
    assert "E4-Q1-tree-tanh:" not in text  # a claim this figure does not show


def _e1_plant(exponent):
    k = np.arange(0, 300, dtype=float)
    lam = np.where(k > 0, np.maximum(k, 1.0) ** exponent, 1.0)
    cell = {"method": "eigen", "arch": "fc:depth=1", "domain": "circle"}
    _plant("e1_spectra", [(cell, {"k": k.tolist(), "eigenvalue": lam.tolist()})])


def test_row16_verdicts_from_a_fresh_summary_else_from_the_results(figure_env):
    # eigenvalues k^-3: |(-3) - (-2)| = 1 is far above E1's threshold
    (e1,) = _config_claims("e1_spectra")
    assert e1["rule"]["kind"] == "below" and e1["rule"]["threshold"] < 1
    _e1_plant(-3.0)
    summary = _plant_summary({"E1": rules.SUPPORTED})
    assert "E1: supported" in _verdict_text(_draw(figure_env, "fig_e1_spectra.py"))
    # results written after the summary: it is stale, the verdict is read from the data
    folder = os.path.join(os.path.dirname(summary), "e1_spectra")
    later = os.path.getmtime(summary) + 60
    os.utime(folder, (later, later))
    assert "E1: not supported" in _verdict_text(_draw(figure_env, "fig_e1_spectra.py"))


def test_row16_e5_draws_no_theory_below_the_axis(figure_env):
    t, a = "tree:d=16,L=3,arity=2,node=tanh", "tree:arity=2,L=3"
    ns, mse = [4, 16, 64, 256, 1024], [0.9, 0.3, 0.07, 1e-9, 0.0]
    valid = [True, True, False, False, False]
    th = {"n": ns, "test_mse": mse, "theory_valid_per_n": valid, "theory_valid": False}
    ntk = [({"method": "ntk", "arch": a, "target": t, "n": n, "seed": s}, {"test_mse": 0.5 / n})
           for n in (4, 16) for s in (0, 1)]  # fmt: skip
    _plant("e4_trees", [({"method": "theory", "arch": a, "target": t, "eps": [0.1]}, th), *ntk])
    fig = _draw(figure_env, "fig_e5_theory.py")
    (ax,) = fig.axes
    floor = ax.get_ylim()[0]
    drawn = [ln for ln in ax.lines if len(ln.get_ydata())]
    for ln in drawn:  # a value at 0 or below the axis would draw a drop to it
        assert np.all(np.asarray(ln.get_ydata(), float) >= floor), ln.get_ydata()
    by_style = {ln.get_linestyle(): list(ln.get_xdata()) for ln in drawn if ln.get_marker() in
                ("None", "", None)}  # fmt: skip
    assert by_style["-"] == [4, 16]  # valid theory: solid
    assert by_style[":"] == [4, 16, 64]  # beyond validity: dotted, down to the floor only


def _e4_plant():
    """E4 tanh trees at L = 2, 3: theory (censored at L = 3), tree NTK and
    net searches (the net censored at L = 3)."""
    cells = []
    for L in (2, 3):
        t, a = f"tree:d=16,L={L},arity=2,node=tanh", f"tree:arity=2,L={L}"
        v = {"n_star": None if L == 3 else 50, "censored": L == 3, "n_max": 1e6,
             "theory_valid": True}  # fmt: skip
        cells.append(({"method": "theory", "arch": a, "target": t, "eps": [0.1]},
                      {"n_star": {"0.1": v}}))  # fmt: skip
        for method in ("ntk_search", "net_search"):
            cens = "right" if (L == 3 and method == "net_search") else None
            med = {"n_star": 30.0 * L, "censored": cens, "lo": 20.0 * L, "hi": 40.0 * L}
            cell = {"method": method, "arch": a, "target": t, "eps": 0.1,
                    "seeds": list(range(8)), "n_min": 4, "n_max": 4096}  # fmt: skip
            cells.append((cell, {"eps": 0.1, "median": med, "per_seed": []}))
    _plant("e4_trees", cells)


def test_row16_e4_explains_kurtosis_states_verdicts_and_draws_bounds_as_arrows(figure_env):
    _e4_plant()
    planted = {c["id"]: rules.SUPPORTED if c["profile"] == "quick" else rules.NOT_RUN
               for c in _config_claims("e4_trees")}  # fmt: skip
    _plant_summary(planted)
    fig = _draw(figure_env, "fig_e4_trees.py")
    text = _verdict_text(fig)
    assert "E(y - Ey)^4 / Var(y)^2" in text and "kurtosis" in text.lower()
    quick = [i for i, v in planted.items() if v == rules.SUPPORTED]
    assert quick and all(f"{i}: supported" in text for i in quick)
    later = len(planted) - len(quick)
    assert f"{later} more decided by a larger profile" in text
    (ax,) = [ax for ax in fig.axes if ax.get_title()]
    assert "kurtosis" in ax.get_title()
    # two bounds (theory at L = 3 and the net at L = 3): arrows up from n_max / the bound
    arrows = [a for a in ax.texts if a.arrow_patch]
    tails_heads = sorted((a.xyann[1], a.xy[1]) for a in arrows)
    assert len(arrows) == 2 and all(head > tail for tail, head in tails_heads)
    assert 1e6 in [tail for tail, _ in tails_heads]
    assert not [ln for ln in ax.lines if ln.get_marker() in ("^", "v")]


def test_row16_e8_marks_censored_cells_lightly_with_a_legend(figure_env):
    from ntkgap.nets.arch import ACTS

    cells, censored, invalid = [], set(), set()
    for (i, act), b, k in itertools.product(enumerate(ACTS), (0, 0.1, 1), range(2, 6)):
        if act == "sin" and b == 1:
            continue  # not run
        cens, ok = (k == 5 and i % 2 == 0), k <= 3
        if cens:
            censored.add((act, b, k))
        if not ok:
            invalid.add((act, b, k))
        v = {"n_star": None if cens else 10.0 ** k, "censored": cens, "n_max": 1e12,
             "theory_valid": ok}  # fmt: skip
        cell = {"method": "theory", "arch": f"fc:act={act},b_std={b:g},depth=1",
                "target": f"parity:d=12,k={k}", "eps": [0.1]}  # fmt: skip
        cells.append((cell, {"n_star": {"0.1": v}}))
    _plant("e8_universality", cells)
    fig = _draw(figure_env, "fig_e8_universality.py")
    ax = fig.axes[0]  # parity: activations x (b_std, k)
    assert len(ax.texts) == 0  # no character drawn over any cell
    hatched = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch()]
    assert len(hatched) == len(censored)
    dots = sum(len(ln.get_xdata()) for ln in ax.lines)
    assert dots == len(invalid)
    # a dot is small: a few points across, against a cell of many
    (ln,) = [ln for ln in ax.lines if len(ln.get_xdata())]
    cell_pts = ax.get_window_extent().width / len(ax.get_xticks()) * 72 / fig.dpi
    assert ln.get_markersize() < cell_pts / 5
    legend = " ".join(t.get_text() for lg in fig.legends for t in lg.get_texts())
    assert all(w in legend for w in ("hatched", "dot", "blank"))
    assert "Verdicts" in _verdict_text(fig)


def _e9_plant():
    """E9 classification searches (v = 8) at n_c = 2, 4: the trained CNN at
    P* = 3 n_c m^L + L (no two alike); its NTK at two cells, censored above n_max at (3, 3);
    a regression decoy at P* = 7777 the panel must not read. Returns the
    CNN's {(n_c, m, L): P*}."""
    from ntkgap.targets import rhm_pstar

    cells, net = [], {}
    for n_c, (m, L) in itertools.product((2, 4), ((2, 3), (2, 4), (3, 3))):
        t, a = f"rhm:v=8,n_c={n_c},m={m},s=2,L={L},seed=0", f"tree:share=1,arity=2,L={L}"
        base = {"arch": a, "target": t, "eps": rhm_pstar.pstar_threshold(n_c),
                "seeds": list(range(8)), "n_min": 8, "n_max": 512,
                "target_error": "classification"}  # fmt: skip
        net[n_c, m, L] = v = 3.0 * rhm_pstar.paper_pstar(n_c, m, L) + L
        med = {"n_star": v, "censored": None, "lo": v / 2, "hi": 2 * v}
        cells.append((dict(base, method="net_search"), {"median": med, "per_seed": []}))
        if L == 3:
            cens = "right" if m == 3 else None
            med = {"n_star": 512.0 if cens else 200.0, "censored": cens, "lo": None, "hi": None}
            cells.append((dict(base, method="ntk_search"), {"median": med, "per_seed": []}))
    decoy = {k: v for k, v in cells[0][0].items() if k != "target_error"}
    cells.append((decoy, {"median": {"n_star": 7777.0, "censored": None}, "per_seed": []}))
    _plant("e9_rhm", cells)
    return net


def test_e9_draws_the_classification_pstar_against_n_c_m_L(figure_env):
    net = _e9_plant()
    fig = _draw(figure_env, "fig_e9_rhm.py")
    (ax,) = [ax for ax in fig.axes if ax.get_xlabel().startswith("n_c m^L")]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    points = [ln for ln in ax.lines if ln.get_marker() in ("o", "s") and len(ln.get_xdata())]
    filled = {ln.get_ydata()[0]: ln for ln in points if ln.get_markerfacecolor() != "none"}
    opened = [ln.get_ydata()[0] for ln in points if ln.get_markerfacecolor() == "none"]
    assert sorted(filled) == sorted(net.values()) and opened == [200.0, 200.0]
    for (n_c, m, L), v in net.items():  # at its x = n_c m^L, one colour per n_c
        x = filled[v].get_xdata()[0] / (n_c * m**L)
        assert 0.8 < x < 1.25
    colours = {n_c: {str(filled[v].get_color()) for (c, _, _), v in net.items() if c == n_c}
               for n_c in (2, 4)}  # fmt: skip
    assert all(len(c) == 1 for c in colours.values()) and colours[2] != colours[4]
    arrows = [a for a in ax.texts if a.arrow_patch and not a.get_text()]
    assert sorted((a.xyann[1], a.xy[1] > a.xyann[1]) for a in arrows) == [(512, True)] * 2
    assert not any(7777.0 in ln.get_ydata() for a in fig.axes for ln in a.lines)
    assert sum(t.get_text() == "m=2,L=3" for t in ax.texts) == 2
    _labels_clear(ax, fig.canvas.get_renderer())
    assert "E9-P-nc2" in ax.get_title() and "Verdicts" in _verdict_text(fig)


def test_e9_draws_without_classification_cells(figure_env):
    fig = _draw(figure_env, "fig_e9_rhm.py")
    (ax,) = [ax for ax in fig.axes if ax.get_xlabel().startswith("n_c m^L")]
    assert any("no results" in t.get_text() for t in ax.texts)


def _report():
    """experiments/report.py as a module (its main() not run)."""
    spec = importlib.util.spec_from_file_location(
        "report_rows17", os.path.join(EXPERIMENTS_DIR, "report.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _claim(**kw):
    base = {"id": "X", "profile": "quick", "verdict": rules.INCONCLUSIVE, "statistic":
            "nstar_scaling", "value": None, "lo": None, "hi": None, "lo_censored": False,
            "hi_censored": False, "seeds": 12, "rule": {"kind": "equivalence"}}  # fmt: skip
    return dict(base, **kw)


def _cells(row):
    """A markdown table row's cells (an escaped bar stays inside its cell)."""
    return [c.strip() for c in row.replace("\\|", "\0").strip().strip("|").split("|")]


def test_row17_value_column_says_what_the_value_is_and_its_unit():
    report = _report()
    assert set(report.STATISTIC_MEANING) == set(claims.STATISTICS)
    head = _cells(report.SUMMARY_HEAD[0])
    # E1: the largest |fitted exponent - (-2)| over the archs, e.g. a fit of -2.00838
    e1 = _claim(id="E1", verdict=rules.SUPPORTED, statistic="decay_exponent",
                value=abs(-2.00838 + 2), seeds=None, rule={"deterministic": True})  # fmt: skip
    row = dict(zip(head, _cells(report.summary_row(e1))))
    assert len(_cells(report.summary_row(e1))) == len(head)
    assert row["value"] == "0.00838"
    assert "exponent" in row["value is"] and row["unit"] not in ("", "-")
    for stat in claims.STATISTICS:  # every statistic's row keeps the table's columns
        assert len(_cells(report.summary_row(_claim(statistic=stat, value=1.0)))) == len(head)


@pytest.mark.parametrize(
    "kw, says",
    [
        (dict(lo=0.823, hi=None, hi_censored=True), "[0.823, open]"),
        (dict(lo=0.823, hi=None), "[0.823, not estimable]"),
        (dict(lo=None, hi=2.5, lo_censored=True), "[open, 2.5]"),
        (dict(lo=None, hi=None, seeds=4), "not estimable (4 seeds < 8)"),
        (dict(lo=None, hi=None, seeds=None, rule={"deterministic": True}), "none (deterministic"),
        (dict(verdict=rules.NOT_RUN, lo=None, hi=None, seeds=None), "-"),
    ],
)
def test_row17_missing_ci_ends_are_said_for_what_they_are(kw, says):
    text = _report().ci_text(_claim(**kw))
    assert text.startswith(says) and "None" not in text and not text.endswith(", -]")


def _scaling_recs(seeds, censored_seed=None):
    """n* = 3 m^2 (1 + seed / 100) at m = 2, 3, 4 (slope 2 in log m: the law
    itself); ``censored_seed`` not reached by n_max at m = 4."""
    recs = {}
    for m in (2, 3, 4):
        per = []
        for s in range(seeds):
            n = 3 * m**2 * (1 + s / 100)
            if s == censored_seed and m == 4:
                per.append({"seed": s, "status": "right", "n_star": None, "bound": 2 * n})
            else:
                per.append({"seed": s, "status": "resolved", "n_star": n, "bound": None})
        recs[m] = {"median": {"n_star": 3 * m**2, "censored": None}, "per_seed": per}
    return recs


@pytest.mark.parametrize(
    "seeds, censored, says",
    [(4, None, "no CI (a CI needs >= 8"), (8, 7, "prefactor c = 3 of the line")],
)
def test_row17_scaling_prefactor_ci_prints_no_none(monkeypatch, seeds, censored, says):
    monkeypatch.setattr(nstar_statistics, "nstar_by_key",
                        lambda *a: _scaling_recs(seeds, censored))  # fmt: skip
    p = {"a": ["net_search", "tree:share=1,arity=2"], "eps": 0.3, "family": {"name": "rhm"},
         "x": "m", "law": "power", "exponent": 2,
         "rule": {"kind": "equivalence", "margin": 0.5}}  # fmt: skip
    m = nstar_statistics.nstar_scaling(p, "e9_rhm")
    assert says in m.detail and "None" not in m.detail
    if m.value is not None:  # slope 2 exactly: the law, value k - 2 = 0
        assert math.isclose(m.value, 0.0, abs_tol=1e-9)


def test_report_detail_shows_a_claims_note_beside_its_short_statement():
    """REPORT.md's detail of a shipped claim gives its statement and, on the
    next line, its note (the explanation kept out of the summary table)."""
    path = os.path.join(EXPERIMENTS_DIR, "e3b_parity.toml")
    (c,) = [c for c in claims.validate_config(path)[1] if c.id == "E3b-k3-relu-b0.1"]
    row = dict(claims._not_run(c), verdict=rules.INCONCLUSIVE, detail="d")
    lines = _report().detail_lines([row])
    at = lines.index(f"- claim: {c.claim} (paper: {c.paper})")
    assert lines[at + 1] == f"- note: {c.note}" and "ridge" in c.note
