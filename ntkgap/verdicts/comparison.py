"""The E4 design on any target family a user names: the verb ``ntkgap
compare`` and the function ``ntkgap.compare`` (this module is not named
``compare`` so that it never shadows that function on the package).

For each depth L the family's member ``with_depth(family, L)`` is learned by
four predictors: the depth-aware architecture's NTK and trained network
(``tree:arity=A,L=L``, from the family's arity, or a DAG file's or a
random hierarchy model's ``tree_arch()``, the latter a CNN; absent when the
target has none) and the fc NTK and trained
fc network (``fc:depth=2``). :func:`plan` builds the experiment config
(the claims Q1/Q2 of E4, statistic ``nstar_ratio_growth``); :func:`compare`
writes it to ``OUT/compare.toml``, runs it through :func:`ntkgap.runs.executors.run`
with the results in ``OUT/results`` (resumable: a rerun reuses every stored
cell) and writes ``OUT/report.md``, ``OUT/compare.png``, ``OUT/compare.pdf``
and ``OUT/results.json``.

With ``predict`` every (member, architecture) pair is predicted before any
search runs (``predictions.prediction``: eigenlearning theory for the own
NTK, the law n* = c C^p fitted on the stored E4/E8/E9 searches of other
families for the trained net), sealed in ``RESULTS/predictions/`` (a rerun
scores what the first run sealed) and scored against the searches after
them; report, figure and results.json show the predictions beside the
measurements.

The stored cells name their targets by spec; the depth of each is the L
this module gave it (a DAG file or a family with ``{L}`` in another key has
no ``L`` key to read back), so claims and figure read depths through
:func:`_depths`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import textwrap
import time

from ntkgap._infra import config
from ntkgap._infra.files import atomic_write, check_writable, dumps, ensure_folder, save_figure
from ntkgap.errors import UsageError
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import config as runs_config
from ntkgap.runs import cost as cost_model
from ntkgap.runs import executors, scaling, store
from ntkgap.specs import comma_items, parse_int_list
from ntkgap.targets import parse_spec, parse_target, with_depth
from ntkgap.verdicts import claims, predictions, selection

NAME = "compare"
FC = "fc:depth=2"
EPS = 0.1
#: the budgets: seeds, the search range, training steps and widths
BUDGETS = {
    # hidden, for tests: finishes in seconds, verdicts inconclusive
    "tiny": dict(seeds=2, n_max=12, steps=20, width=8, lr=[0.01], n_test=32, batch=0,
                 eval_every=10, patience=0, theory_n=[4, 16]),
    "quick": dict(seeds=8, n_max=256, steps=300, width=32, lr=[0.003, 0.01], n_test=256,
                  batch=128, eval_every=50, patience=3, theory_n=[4, 16, 64, 256]),
    "paper": dict(seeds=12, n_max=1024, steps=1000, width=64, lr=[0.003, 0.01], n_test=1024,
                  batch=128, eval_every=100, patience=5, theory_n=[4, 16, 64, 256, 1024]),
    "full": dict(seeds=12, n_max=4096, steps=3000, width=64, lr=[0.003, 0.01], n_test=2048,
                 batch=128, eval_every=100, patience=10,
                 theory_n=[4, 16, 64, 256, 1024, 4096]),
}  # fmt: skip
#: the sides of ``--n-max kernel=N,net=M``: the methods each caps
SIDES = {"kernel": ("theory", "ntk_search"), "net": ("net_search",)}
#: Q1/Q2 of E4: (id, side a, side b, statement)
CLAIMS = (
    ("Q1-tree", ("ntk_search", "tree"), ("net_search", "tree"),
     "the depth-aware NTK needs exponentially more samples in L than the trained depth-aware "
     "network (kernel vs features, same architecture)"),
    ("Q1-fc", ("ntk_search", "fc"), ("net_search", "fc"),
     "the fc NTK needs exponentially more samples in L than the trained fc network"),
    ("Q2-kernel", ("ntk_search", "fc"), ("ntk_search", "tree"),
     "the fc NTK needs exponentially more samples than the depth-aware NTK as L grows"),
    ("Q2-net", ("net_search", "fc"), ("net_search", "tree"),
     "the trained fc net needs exponentially more samples than the trained depth-aware net"),
)  # fmt: skip
#: the reason for Q1/Q2's threshold, E4's
Q_REASON = (
    "E4's threshold: a per-level factor of 1.5 exceeds one search bracket per level "
    "(resolutions 1.1-1.25), so bracket error alone cannot produce it; a floor on the growth "
    "of the ratio, not a test of exponential against polynomial form"
)
SERIES = (  # (method, arch prefix, label, colour, marker)
    ("ntk_search", "tree", "depth-aware NTK (KRR)", "#1e8449", "s"),
    ("net_search", "tree", "depth-aware net (trained)", "#8e44ad", "o"),
    ("ntk_search", "fc", "fc NTK (KRR)", "#2471a3", "D"),
    ("net_search", "fc", "fc net (trained)", "#c0392b", "^"),
)
SUMMARY_KEYS = (
    "id", "claim", "predictors", "statistic", "value", "lo", "hi", "seeds", "rule", "verdict",
    "detail",
)  # fmt: skip


def parse_depths(text) -> list[int]:
    """The depths of ``--L``: ``A..B`` (A <= B), one integer, or a comma list.

    Args:
        text: the option's value (or a list of integers).

    Returns:
        The sorted distinct depths, each >= 1.
    """
    if isinstance(text, (list, tuple, range)):
        out = [int(x) for x in text]
    else:
        s = str(text).strip()
        try:
            if ".." in s:
                a, _, b = s.partition("..")
                a, b = int(a), int(b)
                if a > b:
                    raise UsageError(f"--L {s!r}: the range is empty (give A..B with A <= B)")
                out = list(range(a, b + 1))
            else:
                out = parse_int_list("--L", s)
        except ValueError:
            raise UsageError(f"--L {s!r}: not a depth range (give e.g. 1..4 or 2,3)") from None
    if not out or min(out) < 1:
        raise UsageError(f"--L {text!r}: depths must be integers >= 1")
    if len(out) > 12:
        raise UsageError(f"--L {text!r}: at most 12 depths")
    return sorted(set(out))


def family_option(values) -> str | list[str]:
    """``--family``'s values: one target spec, or DAG files given space- or
    comma-separated (``a.toml,b.toml``; a spec's own commas stay, since
    not every piece of it ends in ``.toml``).

    Args:
        values: the option's words.

    Returns:
        the spec (str) or the list of files.
    """
    words = []
    for w in values:
        pieces = comma_items(w)
        files = len(pieces) > 1 and all(x.endswith(".toml") for x in pieces)
        words += pieces if files else [w]
    return words[0] if len(words) == 1 else words


def _members(family, depths):
    """[(L, target spec)] of a family: one spec (``with_depth``) or a list of
    DAG files, one per depth (or one path with ``{L}``)."""
    fam = family_option([family] if isinstance(family, str) else list(family))
    fam = [fam] if isinstance(fam, str) else fam
    fam = [f"file:{f}" if f.endswith(".toml") and not f.startswith("file:") else f for f in fam]
    if not fam or not all(isinstance(f, str) and f.strip() for f in fam):
        raise UsageError("--family: give a target spec or DAG files")
    if len(fam) == 1:
        return [(L, with_depth(fam[0], L)) for L in depths]
    if not all(f.startswith("file:") for f in fam):
        raise UsageError("--family: a list must hold DAG files (PATH.toml), one per depth")
    if len(fam) != len(depths):
        raise UsageError(
            f"--family: {len(fam)} files but --L gives {len(depths)} depths (one file per depth)"
        )
    return list(zip(depths, fam))


def _tree_arch(target, spec: str) -> str | None:
    """The depth-aware architecture of a target, or None."""
    if hasattr(target, "tree_arch"):  # DAG files, the random hierarchy model
        return target.tree_arch()

    p = parse_spec(spec).params
    if "arity" in p and "L" in p:
        return f"tree:arity={p['arity']},L={p['L']}"
    return None


def _distinct_inputs(target, arch) -> int | None:
    """How many inputs ``arch`` can tell apart on the target's domain, when
    that is small (< 2^40): the 2^reads sign patterns of the coordinates it
    reads on the hypercube, the valid strings of a random hierarchy model;
    None otherwise."""
    dom = target.domain
    if getattr(dom, "name", None) == "rhm":
        return dom.size if dom.size < 2**40 else None
    reads = arch.leaves if arch.name == "tree" else getattr(dom, "d", None)
    return 2**reads if reads is not None and reads < 40 else None


def _has_theory(target) -> bool:
    """Whether eigenlearning theory applies: its exact eigensystems are on
    the hypercube and the circle, not on a random hierarchy model's strings."""
    return getattr(target.domain, "name", None) != "rhm"


def resolve_budget(budget: str = "quick", *, eps=None, seeds=None, n_max=None) -> dict:
    """A budget of ``BUDGETS`` with the user's overrides filled in.

    Args:
        budget: a key of ``BUDGETS`` (a run profile, or ``tiny`` for tests).
        eps: the relative test MSE n* is read at (default ``EPS``).
        seeds: seeds per cell (default the budget's).
        n_max: the search cap of both sides (int), or ``{"kernel": N,
            "net": M}`` (default the budget's for both).

    Returns:
        The budget dict with ``eps`` and ``n_max_side`` ({side: cap}).
    """
    if budget not in BUDGETS:
        raise UsageError(
            f"--profile {budget!r} is not allowed (allowed: {', '.join(config.PROFILES)})"
        )
    b = dict(BUDGETS[budget], eps=EPS if eps is None else float(eps))
    if not 0 < b["eps"] < 1:
        raise UsageError(f"--eps {b['eps']:g}: must lie in (0, 1)")
    if seeds is not None:
        if int(seeds) < 2:
            raise UsageError(f"--seeds {seeds}: at least 2 (a CI needs two seeds)")
        b["seeds"] = int(seeds)
    caps = n_max if isinstance(n_max, dict) else dict.fromkeys(SIDES, n_max)
    if set(caps) - set(SIDES):
        raise UsageError(f"--n-max: sides are {', '.join(SIDES)} (got {', '.join(caps)})")
    b["n_max_side"] = {k: int(caps.get(k) or b["n_max"]) for k in SIDES}
    if min(b["n_max_side"].values()) < 4:
        raise UsageError(f"--n-max {n_max}: at least 4")
    return b


def _member_grids(target, spec: str, b: dict) -> list[dict]:
    """The cells of one member target: theory (where it applies), the NTK
    search and the network search, on its depth-aware arch and on fc."""
    tree = _tree_arch(target, spec)
    grids, seeds, eps = [], list(range(b["seeds"])), b["eps"]
    for arch in [FC] if tree is None else [tree, FC]:
        parse_arch(arch).check_domain(target.domain)
        distinct = _distinct_inputs(target, parse_arch(arch))
        small = distinct is not None  # far fewer samples than the inputs the arch tells apart
        n_test = min(b["n_test"], max(16, distinct // 4)) if small else b["n_test"]
        cap = {}
        for side, side_max in b["n_max_side"].items():
            cap[side] = max(2, min(side_max, distinct * 3 // 4 if small else side_max))
        if _has_theory(target):
            theory_n = sorted({n for n in b["theory_n"] if n <= cap["kernel"]} | {cap["kernel"]})
            grids.append(dict(method="theory", arch=arch, target=spec, eps=[eps], n=theory_n))
        for meth, side in (("ntk_search", "kernel"), ("net_search", "net")):
            cell = dict(method=meth, arch=arch, target=spec, eps=eps, seeds=seeds,
                        n_min=min(4, cap[side] - 1), n_max=cap[side], n_test=n_test)  # fmt: skip
            if meth == "net_search":
                cell.update({k: b[k] for k in ("width", "lr", "steps", "batch", "eval_every",
                                                "patience")})  # fmt: skip
            grids.append(cell)
    return grids


def plan(family, depths, budget: str = "quick", **overrides) -> dict:
    """The experiment config of a comparison, validated (nothing written).

    Args:
        family: a target spec (``{L}`` or a missing ``L=`` takes the depth)
            or a list of DAG files, one per depth.
        depths: the depths L (see :func:`parse_depths`).
        budget: a run profile of ``config.PROFILES`` (``tiny``: the test
            budget; see ``BUDGETS``).
        **overrides: ``eps``, ``seeds``, ``n_max`` (see :func:`resolve_budget`).

    Returns:
        The config as a dict (``name``, ``title``, ``claim``, the profile's
        table) plus ``_depths`` ({target spec: L}), ``_budget`` and
        ``_tree`` ({target spec: depth-aware arch or None}).
    """
    b = resolve_budget(budget, **overrides)
    eps = b["eps"]
    depths = parse_depths(depths)
    grids, by_depth, trees = [], {}, {}
    for L, spec in _members(family, depths):
        target = parse_target(spec)
        spec = str(target.spec)
        if spec in by_depth:
            raise UsageError(f"--family: depths {by_depth[spec]} and {L} give the same target")
        by_depth[spec], trees[spec] = L, _tree_arch(target, spec)
        grids += _member_grids(target, spec, b)
    fam_text = family if isinstance(family, str) else ", ".join(family)
    profile = budget if budget in config.PROFILES else "quick"
    claim_list = [
        dict(id=cid, claim=f"{fam_text}: {text}",
             paper="kernel n* exponential in L, network n* polynomial (E4)",
             statistic="nstar_ratio_growth",
             predictors=[f"{a[0].replace('_search', '')}:{a[1]}",
                         f"{b_[0].replace('_search', '')}:{b_[1]}"],
             params=dict(a=list(a), b=list(b_), eps=eps, family={"name": NAME}),
             # the depth rule is the statistic's, shared with E4 (claims.MIN_DEPTHS)
             rule=dict(kind="above", threshold=1.5, reason=Q_REASON), profile=profile)
        for cid, a, b_, text in CLAIMS
    ]  # fmt: skip
    cfg = {
        "name": NAME,
        "title": f"compare: four predictors' n*({eps:g}) vs depth L on {fam_text}",
        "claim": claim_list,
        profile: {"grid": grids},
    }
    for cell in runs_config.expand(cfg, profile, where="compare"):
        runs_config.check_cell_sizes(cell, "compare")
    claims.parse_claims(cfg, "compare")
    cfg.update(_depths=by_depth, _budget=b, _tree=trees)
    return cfg


# ------------------------------------------------------------------- TOML
def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML for {type(v).__name__}")


def to_toml(cfg: dict) -> str:
    """A config dict (as :func:`plan` makes it) as TOML text.

    Args:
        cfg: the config.

    Returns:
        The TOML text; ``tomllib.loads`` of it gives ``cfg`` back (without
        the private ``_depths`` key, which is written as a comment table).
    """
    lines = [f"name = {_toml_value(cfg['name'])}", f"title = {_toml_value(cfg['title'])}"]
    lines.append("# depth of each target: " + json.dumps(cfg.get("_depths", {})))
    for c in cfg.get("claim", []):
        lines += ["", "[[claim]]"] + [f"{k} = {_toml_value(v)}" for k, v in c.items()]
    for prof in config.PROFILES:
        for g in cfg.get(prof, {}).get("grid", []):
            lines += ["", f"[[{prof}.grid]]"] + [f"{k} = {_toml_value(v)}" for k, v in g.items()]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------- reading
@contextlib.contextmanager
def _depths(by_depth: dict, profile: str):
    """Claims and collectors read this comparison's cells, with their depths
    from ``by_depth`` and only the cells of the profile last run."""
    saved = selection.depth_of, selection.matches
    selection.depth_of = lambda target: by_depth.get(target)
    selection.matches = lambda spec, family: spec in by_depth
    try:
        with config.override(profile=profile):
            yield
    finally:
        selection.depth_of, selection.matches = saved


def _series(eps: float = EPS):
    """{label: {L: median record}} of the four predictors, and theory."""
    out = {}
    for meth, arch, label, _c, _m in SERIES:
        side = selection.Side(meth, arch, prefix=True)
        recs = selection.nstar_by_depth(NAME, side, {"name": NAME}, eps)
        out[label] = {L: r["median"] for L, r in recs.items()}
    for arch, label in (("fc", "fc NTK theory"), ("tree", "depth-aware NTK theory")):
        out[label] = selection.theory_nstar_by_depth(NAME, {"name": NAME}, arch, eps)
    return out


def plot(series: dict, path_stem: str, title: str = "", eps: float = EPS, predicted=None) -> None:
    """n*(eps) vs depth L for the four predictors (median seed, 95% CI;
    censored: an arrow from the cap, up for not reached by n_max, down for
    reached at the smallest n), with eigenlearning theory as dashed lines
    and, with ``predicted``, the sealed predictions beside them; written as
    ``path_stem.png`` and ``path_stem.pdf``.

    Args:
        series: ``{label: {L: record}}`` as :func:`_series` returns.
        path_stem: the output path without suffix.
        title: the axes' title (the verdicts are appended by the caller).
        eps: the relative test MSE n* is read at.
        predicted: :func:`seal_members`'s (or :func:`score_members`'s) list.

    Returns:
        None.
    """
    import matplotlib  # here: the Agg backend is chosen only when a figure is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    for i, (_meth, _arch, label, color, mk) in enumerate(SERIES):
        recs = series.get(label, {})
        dx = (i - 1.5) * 0.06
        for L, med in recs.items():
            n, x = med.get("n_star"), L + dx
            if n is None:
                continue
            if med.get("censored") in ("right", "left"):  # a bound: an arrow from the cap
                up = med["censored"] == "right"
                ax.annotate("", xy=(x, n * (2.0 if up else 0.5)), xytext=(x, n),
                            arrowprops=dict(arrowstyle="->", color=color, lw=1.2))  # fmt: skip
                ax.plot(x, n, "_", color=color, ms=9)
            else:
                lo, hi = med.get("lo") or n, med.get("hi") or n
                ax.errorbar(x, n, yerr=[[n - lo], [hi - n]], fmt=mk, color=color, capsize=2)
        ax.plot([], [], mk, color=color, label=label)
    for label, color in (("fc NTK theory", "#2471a3"), ("depth-aware NTK theory", "#1e8449")):
        th = {L: v for L, v in series.get(label, {}).items() if not v.get("censored")}
        if th:
            ax.plot(list(th), [v["n_star"] for v in th.values()], "--", color=color, lw=1,
                    label=label)  # fmt: skip
    if predicted:
        _draw_predictions(ax, predicted)
    ax.plot([], [], "_", color="k", ms=9, label="cap; arrow: n* beyond it (censored)")
    ax.set(yscale="log", xlabel="depth L", ylabel=f"n*({eps:g}) (median seed, 95% CI)")
    ax.set_title(textwrap.fill(title, 70), fontsize=8)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=6)
    fig.tight_layout()
    save_figure(fig, path_stem + ".png", dpi=130)
    save_figure(fig, path_stem + ".pdf")
    plt.close(fig)


def _draw_predictions(ax, predicted) -> None:
    """Hollow markers right of each measurement: the sealed kernel n*
    (theory) and net n* (law, with its 95% prediction interval)."""
    for i, (meth, arch, _label, color, mk) in enumerate(SERIES):
        dx = (i - 1.5) * 0.06 + 0.03
        for item in predicted:
            p = item["prediction"]
            if not p["arch"].startswith(arch):
                continue
            n = p["net_n_star"] if meth == "net_search" else p["kernel_n_star"]
            if n is None:  # no exact kernel spectrum: nothing was predicted
                continue
            lo, hi = p["net_interval"] if meth == "net_search" else (n, n)
            ax.errorbar(item["L"] + dx, n, yerr=[[n - lo], [hi - n]], fmt=mk, mfc="none",
                        color=color, capsize=2, elinewidth=0.7, alpha=0.8)  # fmt: skip
    label = "sealed prediction (hollow): net by the law, 95% PI; kernel by theory"
    ax.plot([], [], "o", mfc="none", color="k", label=label)


def _n_text(lo: float, hi: float) -> str:
    """A measured n* interval in words: a value, a bracket or a bound."""
    if hi == math.inf:
        return f"> {lo:.3g}"
    if lo == 0.0:
        return f"<= {hi:.3g}"
    return f"{lo:.3g}" if lo == hi else f"[{lo:.3g}, {hi:.3g}]"


#: the sealed score's ``coverage`` in ``compare --predict``'s words
_COVERAGE_TEXT = {
    "covered": "covered by the interval",
    "missed": "outside the interval",
    "undetermined": "undetermined: a bound across the interval's end",
}


def _coverage_text(sc: dict) -> str:
    """A score's coverage in words (a score stored before ``coverage`` existed
    says only whether the interval meets the measurement)."""
    if "coverage" in sc:
        return _COVERAGE_TEXT[sc["coverage"]]
    return "consistent with the interval" if sc["covered"] else "outside the interval"


def prediction_text(item: dict) -> str:
    """One prediction in one line, with its score where it has one (the
    verb and the report print it).

    Args:
        item: an item of :func:`score_members`'s (or, dry run,
            :func:`predict_members`'s) list.

    Returns:
        str.
    """
    p, sc = item["prediction"], item.get("score")
    lo, hi = p["net_interval"]
    k = "absent (no exact spectrum)" if p["kernel_n_star"] is None else f"{p['kernel_n_star']:.3g}"
    text = (f"L={item['L']} {p['arch']}: net predicted {p['net_n_star']:.3g} [{lo:.3g}, {hi:.3g}]"
            f", kernel predicted {k}, winner predicted {p['winner'] or '-'}")  # fmt: skip
    if "score" not in item:  # a dry run: nothing measured yet
        return text
    if sc is None:
        return text + "; not measured"
    text += (f"; net measured {_n_text(*sc['measured'])} "
             f"({_coverage_text(sc)})")  # fmt: skip
    if "kernel_measured" in sc:
        text += f", kernel measured {_n_text(*sc['kernel_measured'])}"
        text += f", winner measured {sc['winner_measured'] or 'undecided'}"
    return text


def _report(cfg, claims_out, run, series, scored=None) -> str:
    lines = [f"# {cfg['title']}", "", f"Run: {run['cells']} cells ({run['computed']} computed, "
             f"{run['reused']} reused), profile {run['profile']}.", "",
             "| claim | verdict | value | 95% CI | seeds |", "|---|---|---|---|---|"]  # fmt: skip
    for c in claims_out:
        v = "-" if c["value"] is None else f"{c['value']:.3g}"
        ci = "-" if c["lo"] is None or c["hi"] is None else f"[{c['lo']:.3g}, {c['hi']:.3g}]"
        lines.append(f"| {c['id']} | {c['verdict']} | {v} | {ci} | {c['seeds'] or '-'} |")
    lines += ["", "## Details", ""]
    for c in claims_out:
        lines += [f"**{c['id']}**: {c['claim']}", "", f"- rule: {c['rule']['text']}",
                  f"- {c['detail']}", ""]  # fmt: skip
    lines += ["## n*(eps) by depth", "", "| predictor | " + " | ".join(
        f"L={L}" for L in sorted(set(cfg["_depths"].values()))) + " |"]  # fmt: skip
    lines.append("|---" * (1 + len(set(cfg["_depths"].values()))) + "|")
    for label, recs in series.items():
        cells = []
        for L in sorted(set(cfg["_depths"].values())):
            r = recs.get(L)
            if r is None or r.get("n_star") is None:
                cells.append("-")
            elif r.get("censored") == "right":
                cells.append(f"> {r['n_star']:.0f}")
            elif r.get("censored") == "left":
                cells.append(f"<= {r['n_star']:.0f}")
            else:
                cells.append(f"{r['n_star']:.0f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if scored:
        law = scored[0]["prediction"]["law"]
        lines += ["", "## Predictions, sealed before the searches", "",
                  f"Law {law['form']} fitted on the stored searches of: "
                  + "; ".join(law["families"]) + " (each pair's own family left out). "
                  "Sealed files: results/predictions/.", ""]  # fmt: skip
        lines += [f"- {prediction_text(item)}" for item in scored]
    lines += ["", "Figure: compare.png / compare.pdf. Config: compare.toml. Cells: results/."]
    return "\n".join(lines) + "\n"


def theory_nstar(cfg: dict, missing: dict | None = None) -> dict:
    """Eigenlearning's n*(eps) of every kernel cell the plan has theory for.

    Args:
        cfg: a config from :func:`plan`.
        missing: where given, filled with ``{label: {L: reason}}`` for every
            theory cell theory cannot compute (the one-line reason).

    Returns:
        ``{"fc NTK theory" | "depth-aware NTK theory": {L: n* or None}}``
        (None: not reached by 1e12); absent where theory does not apply.

    References:
        Simon, Dickens, Karkada & DeWeese, "The eigenlearning framework"
        (arXiv 2110.03922).
    """
    from ntkgap.kernels import theory  # here: JAX loads only when theory is asked for

    out = {}
    for g in _cells(cfg):
        if g["method"] != "theory":
            continue
        a, t = parse_arch(g["arch"]), parse_target(g["target"])
        label = "fc NTK theory" if g["arch"] == FC else "depth-aware NTK theory"
        try:
            sp, _ = theory.spectrum(a, t)
        except UsageError as err:  # beyond the exact transforms and the compositions
            if missing is not None:  # absent, with the reason the dry run prints
                missing.setdefault(label, {})[cfg["_depths"][g["target"]]] = str(err)
            continue
        r = theory.nstar(sp, cfg["_budget"]["eps"], a, t.domain)
        out.setdefault(label, {})[cfg["_depths"][g["target"]]] = r["n_star"]
    return out


def predict_members(cfg: dict) -> list[dict]:
    """Every (member, architecture) pair's prediction, before any search:
    the own NTK's n* from eigenlearning theory and the trained net's from
    the law fitted on the stored searches of other families
    (``predictions.prediction``); refused in one line where nothing is
    stored to fit on.

    Args:
        cfg: a config from :func:`plan`.

    Returns:
        list of ``{"L", "prediction", "fitted_on"}`` (the prediction
        unsealed; ``fitted_on`` the storage keys of the law's cells), in
        depth order, the depth-aware architecture first.
    """
    eps = cfg["_budget"]["eps"]
    points = predictions.collect(predictions.SOURCES, eps)  # read once for every pair
    out = []
    for spec, L in sorted(cfg["_depths"].items(), key=lambda kv: kv[1]):
        tree = cfg["_tree"][spec]
        for arch in [FC] if tree is None else [tree, FC]:
            pred, law = predictions.prediction(spec, arch, eps, points=points)
            out.append({"L": L, "prediction": pred, "fitted_on": law["keys"]})
    return out


def seal_members(predicted: list[dict]) -> list[dict]:
    """Seals each prediction in the results folder in force, or reads the one
    a previous run of the comparison sealed (``predictions.sealed_or_seal``).

    Args:
        predicted: :func:`predict_members`'s list.

    Returns:
        list of ``{"L", "prediction", "sealed"}`` (the prediction as sealed).
    """
    out = []
    for item in predicted:
        path, pred = predictions.sealed_or_seal(item["prediction"], item["fitted_on"])
        out.append({"L": item["L"], "prediction": pred, "sealed": path})
    return out


def score_members(sealed: list[dict], eps: float, profile: str) -> list[dict]:
    """Each sealed prediction scored against the searches run after it
    (``predictions.score_against``; None where its net search is not stored).

    Args:
        sealed: :func:`seal_members`'s list.
        eps: the error level of the searches.
        profile: the profile the comparison ran under.

    Returns:
        the list with ``score`` added to each item.
    """
    recs = {}
    for meth in ("net_search", "ntk_search"):
        for cell, res in store.results(NAME, meth, profile=profile):
            if selection.at(cell, eps):
                recs[(meth, cell["target"], cell["arch"])] = res
    out = []
    for item in sealed:
        key = (item["prediction"]["target"], item["prediction"]["arch"])
        net, kern = recs.get(("net_search", *key)), recs.get(("ntk_search", *key))
        scored = None if net is None else predictions.score_against(item["prediction"], net, kern)
        out.append(dict(item, score=scored))
    return out


def _public(cfg: dict) -> dict:
    """The budget a comparison ran with, as results.json records it."""
    b = cfg["_budget"]
    return {k: b[k] for k in ("eps", "seeds", "n_max_side", "steps", "width", "n_test")}


def _cells(cfg: dict) -> list[dict]:
    return [g for p in config.PROFILES for g in cfg.get(p, {}).get("grid", [])]


def refusals(cfg: dict, nstar: dict) -> list[str]:
    """Why a planned comparison cannot reach a verdict, even with censored
    sides counted as bounds (empty: it can).

    Args:
        cfg: a config from :func:`plan`.
        nstar: :func:`theory_nstar` of it.

    Returns:
        One-line reasons: too few depths for the statistic's depth rule
        (``claims.MIN_DEPTHS``), a member without a depth-aware
        architecture, every kernel cell capped below the theory's n*.
    """
    depths = sorted(set(cfg["_depths"].values()))
    need = claims.MIN_DEPTHS["nstar_ratio_growth"]
    flat = [s for s, tree in cfg["_tree"].items() if tree is None]
    out = [] if not flat else [
        f"--family: {flat[0]} is not a balanced tree of arity >= 2 on aligned coordinate "
        "blocks, so it has no depth-aware architecture: Q1-tree, Q2-kernel and Q2-net "
        "cannot be evaluated"
    ]  # fmt: skip
    seeds = cfg["_budget"]["seeds"]
    if seeds < scaling.MIN_SEEDS_FOR_CI:
        out.append(f"--seeds {seeds}: the claims' CI needs >= {scaling.MIN_SEEDS_FOR_CI} seeds "
                   "(runs.scaling.MIN_SEEDS_FOR_CI): every verdict would read inconclusive; "
                   "give more seeds")  # fmt: skip
    if len(depths) < need:
        out.append(f"--L gives {len(depths)} depth(s) {depths}; the claims' statistic "
                   f"nstar_ratio_growth needs >= {need} (claims.MIN_DEPTHS): no verdict "
                   "is possible; give more depths")  # fmt: skip
    caps = {(g["arch"] == FC, cfg["_depths"][g["target"]]): g["n_max"]
            for g in _cells(cfg) if g["method"] == "ntk_search"}  # fmt: skip
    pairs = [(lab, L, n, caps[(lab.startswith("fc"), L)])
             for lab, by_L in nstar.items() for L, n in by_L.items()]  # fmt: skip
    if pairs and all(n is None or n > cap for _lab, _L, n, cap in pairs):
        lab, L, n, cap = pairs[0]
        out.append(
            f"every kernel cell's cap is below the theory's n* (e.g. {lab} at L={L}: "
            f"n_max {cap} < n* {n}): every search would be censored; raise --n-max"
        )
    return out


def dry_run_summary(cfg: dict, nstar: dict, jobs: int = 1) -> dict:
    """What a comparison would run: its cells, the theory's n* per predictor
    and its estimated cost (``ntkgap.runs.cost``, calibrated on the project's
    stored cells; uncalibrated reference rates when there are none).

    Args:
        cfg: a config from :func:`plan`.
        nstar: :func:`theory_nstar` of it.
        jobs: the workers the makespan is for.

    Returns:
        ``{"cells", "n_star_theory", "cost", "cost_unit", "refusals",
        "per_cell", "makespan_s"}`` (``cost_model.plan``'s per-cell estimates
        of the cells to compute and makespan on ``jobs`` workers).
    """
    profile = next(p for p in config.PROFILES if p in cfg)
    cells = [dict(g, L=cfg["_depths"][g["target"]]) for g in _cells(cfg)]
    expanded = runs_config.expand(cfg, profile, where="compare")
    est = cost_model.estimate({NAME: expanded}, config.results_dir())
    how = cost_model.basis(est)
    pl = cost_model.plan(NAME, expanded, est, jobs)
    return {
        "per_cell": pl["per_cell"],
        "makespan_s": pl["makespan_s"],
        "jobs": jobs,
        "cells": cells,
        "n_star_theory": {lab: {str(L): n for L, n in v.items()} for lab, v in nstar.items()},
        "cost": est["seconds"],
        "cost_unit": f"core-seconds (ntkgap.runs.cost, {how}; a guide within ~2-3x)",
        "refusals": refusals(cfg, nstar),
    }


def check_out(out: str) -> None:
    """Raises the one-line UsageError unless folder ``out`` can be used.

    It must exist as a writable folder, or its parent must exist and be
    writable.

    Args:
        out: the output folder's path.

    Returns:
        None.
    """
    out = os.fspath(out)
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"--out {out}: a file has that name (give a folder)")
    if os.path.isdir(out):
        check_writable(os.path.join(out, "report.md"))
    else:
        check_writable(out)


def _profiled_plan(family, depths, profile: str, budget: str | None, **overrides):
    """:func:`plan` with the budget's cells stored under ``profile``.

    Args:
        family: as :func:`plan`.
        depths: as :func:`plan`.
        profile: a run profile of ``config.PROFILES``.
        budget: a key of ``BUDGETS`` (None: the profile's).
        **overrides: as :func:`plan`.

    Returns:
        (config, the profile it runs under).
    """
    if profile not in config.PROFILES:
        raise UsageError(
            f"--profile {profile!r} is not allowed (allowed: {', '.join(config.PROFILES)})"
        )
    if budget is not None and budget not in BUDGETS:
        raise UsageError(f"budget {budget!r} is not one of {', '.join(BUDGETS)}")
    cfg = plan(family, depths, budget or profile, **overrides)
    run_profile = next(p for p in config.PROFILES if p in cfg)
    if run_profile != profile:  # the tests' budget, stored under the profile asked for
        cfg[profile] = cfg.pop(run_profile)
        for c in cfg["claim"]:
            c["profile"] = profile
    return cfg, profile


def compare(
    family, depths, out: str | None, *, profile: str = "quick", jobs: int = 1,
    results: str | None = None, eps: float | None = None, seeds: int | None = None,
    n_max=None, dry_run: bool = False, force: bool = False, budget: str | None = None,
    predict: bool = False,
) -> dict:  # fmt: skip
    """Run the E4 design on a target family and write the folder ``out``.

    Args:
        family: a target spec or a list of DAG files (see :func:`plan`).
        depths: the depths L (``"1..4"``, a list, ...).
        out: the output folder (created if its parent exists; unused and
            may be None with ``dry_run``).
        profile: a run profile of ``config.PROFILES``.
        jobs: local worker processes of the runner.
        results: where the cells are stored (default ``out/results``).
        eps: the relative test MSE n* is read at (default ``EPS``).
        seeds: seeds per cell (default the profile's budget).
        n_max: the search cap of both sides, or ``{"kernel": N, "net": M}``.
        dry_run: plan only: return the cells, theory n* and cost, write nothing.
        force: run even a design :func:`refusals` says cannot reach a verdict.
        budget: the budget of ``BUDGETS`` (default the profile's; ``tiny``
            is the tests' budget, run and stored under ``profile``).
        predict: predict every pair before the searches (fitted on the
            stored results of ``config.results_dir()`` as called), seal the
            predictions in the comparison's results folder and score them.

    Returns:
        ``{"out", "files", "run", "claims", "profile", "budget", ...}``: the
        written paths, the runner's summary and the claims in the
        summary.json claim format (with ``dry_run``: :func:`dry_run`'s dict);
        with ``predict`` also ``predictions`` (:func:`score_members`'s list;
        with ``dry_run`` unsealed and unscored).
    """
    cfg, run_profile = _profiled_plan(family, depths, profile, budget, eps=eps, seeds=seeds,
                                      n_max=n_max)  # fmt: skip
    missing = {}
    nstar = theory_nstar(cfg, missing)
    predicted = predict_members(cfg) if predict else None  # before anything is written
    if dry_run:
        plan_out = dry_run_summary(cfg, nstar, jobs)
        plan_out["n_star_theory_missing"] = {
            lab: {str(L): why for L, why in v.items()} for lab, v in missing.items()
        }
        if predicted is not None:
            plan_out["predictions"] = [{k: i[k] for k in ("L", "prediction")} for i in predicted]
        return dict(plan_out, dry_run=True, profile=run_profile, budget=_public(cfg),
                    targets=cfg["_depths"])  # fmt: skip
    reasons = refusals(cfg, nstar)
    if reasons and not force:
        raise UsageError(reasons[0] + " (--force runs it anyway)")
    check_out(out)  # every check first: bad input writes nothing
    ensure_folder(out)
    toml_path = os.path.join(out, "compare.toml")
    atomic_write(toml_path, to_toml(cfg))
    with config.override(results=results or os.path.join(out, "results")):
        sealed = seal_members(predicted) if predict else None
        start = time.perf_counter()
        run = executors.run(toml_path, run_profile, jobs=jobs)
        with _depths(cfg["_depths"], run_profile):
            evaluated = [claims.evaluate(c, NAME) for c in claims.parse_claims(cfg, toml_path)]
            series = _series(cfg["_budget"]["eps"])
        scored = score_members(sealed, cfg["_budget"]["eps"], run_profile) if predict else None
    claims_out = [{k: c[k] for k in SUMMARY_KEYS} for c in evaluated]
    verdicts = "; ".join(f"{c['id']}: {c['verdict']}" for c in claims_out)
    plot(series, os.path.join(out, "compare"), f"{cfg['title']}\n{verdicts}",
         eps=cfg["_budget"]["eps"], predicted=scored)  # fmt: skip
    atomic_write(os.path.join(out, "report.md"), _report(cfg, claims_out, run, series, scored))
    files = [os.path.join(out, f) for f in ("compare.toml", "report.md", "compare.png",
                                             "compare.pdf", "results.json")]  # fmt: skip
    result = {
        "out": out,
        "family": family,
        "depths": sorted(set(cfg["_depths"].values())),
        "targets": cfg["_depths"],
        "profile": run_profile,
        "budget": _public(cfg),
        "forced": reasons if force else [],
        "files": files,
        "run": run,
        "seconds": time.perf_counter() - start,
        "n_star": {lab: {str(L): r for L, r in recs.items()} for lab, recs in series.items()},
        "claims": claims_out,
        **({"predictions": scored} if predict else {}),
    }
    atomic_write(files[-1], dumps(result, indent=1))
    return result
