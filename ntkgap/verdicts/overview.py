"""What ``ntkgap show`` lists: the cells of a config or a results folder
(stored or not yet), their error or n*, and the claims of the summary
beside them (a config's: its own), as JSON, a table or a figure of test MSE
against n and of each n* search's per-seed brackets."""

from __future__ import annotations

import csv
import os
import shlex

from ntkgap._infra import config
from ntkgap._infra.files import save_figure
from ntkgap._infra.version import PACKAGE
from ntkgap.errors import UsageError
from ntkgap.runs import config as runs_config
from ntkgap.runs import store
from ntkgap.verdicts import claims as claims_mod

#: the config ``ntkgap compare`` writes into its output folder (its cells
#: in ``OUT/results``, its claims in ``OUT/results.json``)
COMPARE_CONFIG, COMPARE_RESULTS = "compare.toml", "results.json"
SHOW_KEYS = ("target", "arch", "domain", "width", "L", "kmax", "seed", "seeds", "ridge")
#: what a search's row keeps of each seed: n* between the bracket [lo, hi], or
#: censored ("right": above the bound, "left": at or below it)
SEED_KEYS = ("seed", "lo", "hi", "n_star", "censored", "bound")


def _path(folder, cell):
    return store.cell_path(os.path.basename(folder), cell)


def stored_rows(folder, cells=None):
    """(cell, result or None) pairs of one experiment's folder.

    Args:
        folder: the experiment's results folder.
        cells: the cells to look up (None: every stored cell).

    Returns:
        list of (cell, result), the result None when not stored yet.
    """
    if cells is not None:
        return [
            (
                c,
                (store.load_result(store.cell_path(os.path.basename(folder), c)) or {}).get(
                    "result"
                ),
            )
            for c in cells
        ]
    out = []
    for fn in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if fn.endswith(".json") and not fn.startswith("."):
            rec = store.load_result(os.path.join(folder, fn))
            if isinstance(rec, dict) and "cell" in rec and "result" in rec:
                out.append((rec["cell"], rec["result"]))
    return out


def record(cell, res) -> dict:
    """One row of the overview: method, parameters, n, status, error or n*.

    Args:
        cell: a cell.
        res: its stored result, or None.

    Returns:
        dict with ``method``, ``params``, ``n``, ``status`` and what is stored
        (a search: also ``eps`` and ``per_seed``, each seed's ``SEED_KEYS``).
    """
    params = {k: cell[k] for k in SHOW_KEYS if k in cell}
    row = {"method": cell.get("method"), "params": params, "n": cell.get("n")}
    if res is None:
        row["status"] = "not run"
        return row
    row["status"] = "stored"
    if "test_mse" in res:
        row["test_mse"] = res["test_mse"]
    if res.get("n_star"):
        row["n_star"] = {
            e: (v.get("n_star") if isinstance(v, dict) else v) for e, v in res["n_star"].items()
        }
    if isinstance(res.get("median"), dict):  # a search: the median seed's n*, censoring marked
        med = res["median"]
        mark = {"right": ">", "left": "<="}.get(med.get("censored"), "")
        row["n_star"] = {cell.get("eps"): f"{mark}{fmt_value(med.get('n_star'))}"}
        row["eps"] = res.get("eps", cell.get("eps"))
        row["per_seed"] = [{k: p.get(k) for k in SEED_KEYS} for p in res.get("per_seed", [])]
    if "theory_valid" in res:
        row["theory_valid"] = res["theory_valid"]
    row["seconds"] = res.get("cell_seconds", res.get("seconds"))
    return row


def fmt_value(v) -> str:
    """A value, short: floats to 4 digits, lists to 4 items, dicts as k:v.

    Args:
        v: the value.

    Returns:
        str.
    """
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        return "[" + ",".join(fmt_value(x) for x in v[:4]) + (",..." if len(v) > 4 else "") + "]"
    if isinstance(v, dict):
        return " ".join(f"{k}:{fmt_value(x)}" for k, x in v.items())
    return "-" if v is None else str(v)


def compare_folder(src: str) -> str | None:
    """The output folder of ``ntkgap compare`` that ``src`` names: the folder
    (holding ``compare.toml``) or its ``compare.toml``; None otherwise.

    Args:
        src: the config or folder given to ``show``.

    Returns:
        str or None.
    """
    if os.path.isdir(src) and os.path.isfile(os.path.join(src, COMPARE_CONFIG)):
        return src
    if os.path.isfile(src) and os.path.basename(src) == COMPARE_CONFIG:
        return os.path.dirname(src) or "."
    return None


def experiments(src: str, profile: str | None = None) -> list:
    """The experiments ``ntkgap show`` lists: a config's cells (of ``profile``,
    else of every profile it ran, else has), or every stored cell of a folder
    of results and of its subfolders.

    Args:
        src: an experiment config or a results folder.
        profile: with a config, only the cells of this profile.

    Returns:
        list of (name, folder, [(cell, result or None)]).
    """
    found = []  # (name, folder, rows)
    if os.path.isfile(src):
        cfg, _ = claims_mod.validate_config(src, profile)  # cells and claims, one-line errors
        folder = os.path.join(config.results_dir(), cfg["name"])
        have = [p for p in runs_config.PROFILES if p in cfg]
        ran = [p for p in have if os.path.exists(os.path.join(folder, f".config-{p}.json"))]
        profiles = [profile] if profile else (ran or have)  # the profiles run
        cells, seen = [], set()
        for prof in profiles:
            for c in runs_config.expand(cfg, prof, where=src, validate=False):
                if store.cell_key(c) not in seen:
                    seen.add(store.cell_key(c))
                    cells.append(c)
        found.append((cfg["name"], folder, stored_rows(folder, cells)))
    elif os.path.isdir(src):
        rows = stored_rows(src)
        if rows:
            found.append((os.path.basename(os.path.abspath(src)), src, rows))
        for sub in sorted(os.listdir(src)):
            sub_rows = stored_rows(os.path.join(src, sub))
            if sub_rows:
                found.append((sub, os.path.join(src, sub), sub_rows))
    else:
        raise UsageError(f"show {src}: no such config file or folder")
    return found


def _own_claims(src: str) -> dict:
    """Where the claims of ``src`` are, and which are its own.

    Args:
        src: the config or folder given to ``show``.

    Returns:
        dict: ``folder`` (of the summary.json), ``name`` (the experiment, or
        None), ``ids`` (its claim ids, or None for every claim of the
        summary) and ``profiles`` (those it can run): a config's own claims;
        a folder of results, every claim of its summary; one experiment's
        folder, the claims of the config it last ran with, from its parent's.
    """
    if os.path.isfile(src):
        cfg = runs_config.load_config(src)
        ids = [c.get("id") for c in cfg.get("claim", [])]
        have = [p for p in runs_config.PROFILES if p in cfg]
        return dict(folder=config.results_dir(), name=cfg["name"], ids=ids, profiles=have)
    own = dict(folder=src, name=None, ids=None, profiles=list(runs_config.PROFILES))
    if os.path.exists(os.path.join(src, "summary.json")) or not stored_rows(src):
        return own
    ids = []
    for prof in runs_config.PROFILES:
        saved = store.load_result(os.path.join(src, f".config-{prof}.json")) or {}
        ids += [c.get("id") for c in saved.get("claim", []) if c.get("id") not in ids]
    parent = os.path.dirname(os.path.abspath(src))
    return dict(own, folder=parent, name=os.path.basename(os.path.abspath(src)), ids=ids)


def _shipped(path: str) -> bool:
    """Whether a config is one of the shipped ``experiments/*.toml`` that
    ``experiments/report.py`` evaluates into ``summary.json``."""
    shipped = PACKAGE.parent / "experiments"
    return os.path.dirname(os.path.abspath(path)) == os.path.abspath(shipped)


def _own_evaluated(src: str, profile: str) -> list:
    """A user's own config's claims, evaluated now from the stored results
    at ``profile`` (``data`` left out, as in ``summary.json``)."""
    cfg, parsed = claims_mod.validate_config(src)
    evaluated = [_evaluated_or_why(c, cfg["name"], profile) for c in parsed]
    return [{k: v for k, v in c.items() if k != "data"} for c in evaluated]


def _evaluated_or_why(claim, name: str, profile: str) -> dict:
    """``claims.evaluate``'s dict, or where the stored results cannot be read
    as the claim asks, its id with the reason (``verdict`` "not evaluated")."""
    try:
        return claims_mod.evaluate(claim, name, profile)
    except UsageError as exc:
        return {"id": claim.id, "claim": claim.claim, "profile": claim.profile,
                "statistic": claim.statistic, "verdict": "not evaluated",
                "detail": str(exc)}  # fmt: skip


def _largest_ran(experiments: list, profiles: list, default: str | None = None) -> str:
    """The largest of ``profiles`` any listed experiment ran (its stored
    ``.config-<profile>.json``), else ``default`` (None: the smallest of them)."""
    ran = [
        p
        for p in profiles
        for _, f, _ in experiments
        if os.path.exists(os.path.join(f, f".config-{p}.json"))
    ]
    return max(ran, key=profiles.index) if ran else default or profiles[0]


def _make_summary(folder: str, experiments: list, profiles: list) -> str:
    """The command that evaluates the claims into ``folder/summary.json``, at
    the largest profile any listed experiment ran (else the smallest it has)."""
    profile = _largest_ran(experiments, profiles)
    if os.path.abspath(folder) == os.path.abspath("results"):
        return f"make figures PROFILE={profile}"
    report = shlex.quote(os.path.join(folder, "REPORT.md"))
    return (
        f"NTKGAP_RESULTS={shlex.quote(folder)} NTKGAP_REPORT={report} "
        f"python experiments/report.py {profile}"
    )


def overview(src: str, experiments: list) -> dict:
    """The JSON of ``ntkgap show``: each experiment's rows in series order, and
    the claims of the ``summary.json`` beside the results (a config's or one
    experiment's folder: only its own claims).

    Args:
        src: the config or folder given.
        experiments: from :func:`experiments`.

    Returns:
        ``{"experiments": [{"name", "folder", "cells"}], "claims", "summary",
        "claims_of"}`` and, where claims are missing, ``"note"``: one line
        saying so and what to run to evaluate them.
    """
    where = _own_claims(src)
    folder, name, own = where["folder"], where["name"], where["ids"]
    path = os.path.join(folder, "summary.json")
    if compare_folder(src) is not None:  # compare evaluates its claims into results.json
        path, own = os.path.join(compare_folder(src), COMPARE_RESULTS), None
    mine = os.path.isfile(src) and not _shipped(src) and compare_folder(src) is None
    if mine:  # a user's own config, which report.py never evaluates: evaluated here
        profile = _largest_ran(experiments, where["profiles"], runs_config.PROFILES[0])
        summary, claims = f"evaluated now ({profile} profile)", _own_evaluated(src, profile)
    else:
        summary = store.load_result(path)
        claims = summary.get("claims", []) if isinstance(summary, dict) else []
    if own is not None:
        claims = [c for c in claims if c.get("id") in own]
    out = {
        "experiments": [
            {"name": n, "folder": f, "cells": sorted((record(c, r) for c, r in rows), key=_order)}
            for n, f, rows in experiments
        ],
        "claims": claims,
        "summary": summary if mine else path if isinstance(summary, dict) else None,
        "claims_of": name,
    }
    if not experiments and not claims:
        raise UsageError(f"show {src}: no stored results there")
    if mine:  # every claim of the config evaluated: nothing missing, nothing to run
        return out
    make = _make_summary(folder, experiments, where["profiles"])
    if not isinstance(summary, dict):
        out["note"] = f"no claims: {folder} has no summary.json; evaluate them with {make}"
        if compare_folder(src) is not None:
            out["note"] = f"no claims: {path} is not written yet (the compare run did not finish)"
    elif own and len(claims) < len(own):
        missing = [i for i in own if i not in {c.get("id") for c in claims}]
        out["note"] = (
            f"{len(missing)} of {name}'s {len(own)} claims ({', '.join(missing[:3])}"
            f"{', ...' if len(missing) > 3 else ''}) are not in {path}; re-evaluate with {make}"
        )
    return out


def _order(row):
    """Method, then parameters, then n: series read top to bottom."""
    n = row["n"]
    return (str(row["method"]), fmt_value(row["params"]), n if isinstance(n, int) else -1)


def text(out: dict) -> list[str]:
    """The lines of ``ntkgap show``'s table.

    Args:
        out: from :func:`overview`.

    Returns:
        list of str.
    """
    lines = []
    for exp in out["experiments"]:
        lines.append(f"{exp['name']} ({exp['folder']}): {len(exp['cells'])} cells")
        lines.append(f"  {'method':<14} {'n':>10} {'test_mse / n*':>22} {'seconds':>8}  parameters")
        for r in exp["cells"]:
            if r["status"] != "stored":
                err = r["status"]
            elif r.get("n_star"):  # theory cells: n*(eps) says more than a curve
                err = " ".join(f"n*({e})={fmt_value(v)}" for e, v in r["n_star"].items())
            else:
                err = r.get("test_mse")
            flag = "" if r.get("theory_valid", True) else " (theory not valid)"
            lines.append(
                f"  {r['method']:<14} {fmt_value(r['n']):>10} {fmt_value(err):>22} "
                f"{fmt_value(r.get('seconds')):>8}  {fmt_value(r['params'])}{flag}"
            )
    claims = out["claims"]
    if claims:
        of = f" of {out['claims_of']}" if out.get("claims_of") else ""
        lines.append(f"claims{of} ({len(claims)}, from {out['summary']}):")
        for c in claims:
            lines.append(f"  {c.get('id', '?')}: {c.get('verdict', '?')}: {c.get('claim', '')}")
    if out.get("note"):
        lines.append(out["note"])
    return lines


def _label(exp: dict, row: dict) -> str:
    """A series' label: experiment, method and the parameters but the seeds."""
    rest = {k: v for k, v in row["params"].items() if k not in ("seed", "seeds")}
    return f"{exp['name']} {row['method']} {fmt_value(rest)}"


def _curves(experiments: list) -> dict:
    """{label: [(n, test MSE)]} of the stored cells with a positive test MSE."""
    series = {}
    for exp in experiments:
        for r in exp["cells"]:
            mse, n = r.get("test_mse"), r.get("n")
            if mse is None or n is None:
                continue
            ns, ms = (n, mse) if isinstance(n, list) else ([n], [mse])
            for a, b in zip(ns, ms if isinstance(ms, list) else [ms]):
                if b is not None and b > 0:
                    series.setdefault(_label(exp, r), []).append((a, b))
    return series


def _searches(experiments: list) -> list:
    """[(label with eps, per-seed brackets)] of the stored n* searches."""
    return [
        (f"{_label(exp, r)} n*({fmt_value(r.get('eps'))})", r["per_seed"])
        for exp in experiments
        for r in exp["cells"]
        if r.get("per_seed")
    ]


def _draw_searches(ax, searches: list) -> None:
    """One row per search, its seeds spread across the row: a bracket
    [lo, hi] with a dot at n*, or an arrow from the bound of a censored seed
    (right: n* above it, left: at or below it)."""
    xs = []  # every x drawn: annotations do not widen the limits themselves
    for i, (label, seeds) in enumerate(searches):
        ax.text(0.005, i - 0.32, label, transform=ax.get_yaxis_transform(), fontsize=6,
                va="bottom")  # fmt: skip
        for j, p in enumerate(seeds):
            y = i + (0.5 * j / (len(seeds) - 1) - 0.2 if len(seeds) > 1 else 0.05)
            if p.get("censored") in ("right", "left") and p.get("bound"):
                b, end = p["bound"], p["bound"] * (2.0 if p["censored"] == "right" else 0.5)
                ax.plot([b], [y], "|", color="C3", ms=5)
                xs += [b, end]
                ax.annotate("", xy=(end, y), xytext=(b, y),
                            arrowprops=dict(arrowstyle="->", color="C3", lw=0.8))  # fmt: skip
            elif p.get("lo") is not None and p.get("hi") is not None:
                ax.plot([p["lo"], p["hi"]], [y, y], "-", color="C0", lw=1.2)
                xs += [p["lo"], p["hi"]]
                if p.get("n_star") is not None:
                    ax.plot([p["n_star"]], [y], "o", color="C0", ms=2.5)
    ax.set_xscale("log")
    if xs:
        ax.set_xlim(min(xs) / 1.5, max(xs) * 1.5)
    ax.set_yticks([])
    ax.set_ylim(len(searches) - 0.6, -0.6)
    ax.set_xlabel("n* per seed: bracket [lo, hi], dot = n*; red arrow = censored at its bound")


def _distinct_labels(labels: list, width: int = 90) -> list:
    """Legend labels without the words every label shares (said once in the
    first), each cut to ``width`` characters."""
    words = [lab.split() for lab in labels]
    common = set.intersection(*map(set, words)) if len(words) > 1 else set()
    out = [" ".join(w for w in ws if w not in common) or " ".join(ws) for ws in words]
    if common and out:
        out[0] = f"{out[0]}  (all: {' '.join(w for w in words[0] if w in common)})"
    return [x if len(x) <= width else x[: width - 3] + "..." for x in out]


def plot(experiments: list, path: str) -> None:
    """Test MSE against n, one line per (experiment, method, other parameters),
    and below it the n* searches, one row per search with its seeds.

    Args:
        experiments: ``overview(...)["experiments"]``.
        path: the figure file.

    Returns:
        None.
    """
    import matplotlib  # here: the Agg backend is chosen only when a figure is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series, searches = _curves(experiments), _searches(experiments)
    if not series and not searches:
        raise UsageError("show --plot: no stored test MSE against n, nor n* searches, to plot")
    heights = ([4.5] if series else []) + ([1.0 + 0.45 * len(searches)] if searches else [])
    legend = bool(series) and len(series) <= 20
    fig, axes = plt.subplots(len(heights), 1, figsize=(13 if legend else 9, sum(heights)),
                             squeeze=False, gridspec_kw=dict(height_ratios=heights))  # fmt: skip
    if series:
        ax = axes[0, 0]
        names = _distinct_labels(sorted(series))
        for (_label, pts), name in zip(sorted(series.items()), names):
            pts.sort()
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=name)
        ax.set_xlabel("n (training samples)")
        ax.set_ylabel("relative test MSE")
    if searches:
        _draw_searches(axes[-1, 0], searches)
    # the legend in a right margin of the canvas kept free for it (never past its edge)
    fig.tight_layout(rect=(0, 0, 0.66, 1) if legend else (0, 0, 1, 1))
    if legend:
        fig.legend(*axes[0, 0].get_legend_handles_labels(), fontsize=6, loc="upper left",
                   bbox_to_anchor=(0.67, 0.99), borderaxespad=0)  # fmt: skip
    save_figure(fig, path)
    plt.close(fig)


#: ``show --csv``'s columns: one row per cell, one per claim
CELL_COLUMNS = ("experiment", "method", "status", "n", "eps", "n_star", "test_mse", "seconds",
                "theory_valid", "params")  # fmt: skip
CLAIM_COLUMNS = ("id", "profile", "verdict", "statistic", "value", "lo", "hi", "seeds",
                 "ci_method", "rule", "claim")  # fmt: skip


def _csv_value(v):
    """A value as one CSV field: numbers and text as they are, a dict as k=v;..."""
    if isinstance(v, dict):
        return ";".join(f"{k}={_csv_value(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ";".join(str(_csv_value(x)) for x in v)
    return "" if v is None else v


def write_csv(out: dict, folder: str) -> list[str]:
    """``show --csv DIR``: ``cells.csv`` (one row per cell: ``CELL_COLUMNS``)
    and ``claims.csv`` (one row per claim: ``CLAIM_COLUMNS``; ``rule`` its
    text), for pandas or a spreadsheet.

    Args:
        out: from :func:`overview`.
        folder: the folder written (created; its parent must exist).

    Returns:
        the two paths written.
    """
    os.makedirs(folder, exist_ok=True)
    cells = [
        {"experiment": exp["name"], **row,
         "n_star": next(iter(row["n_star"].values()), None) if row.get("n_star") else None}
        for exp in out["experiments"] for row in exp["cells"]
    ]  # fmt: skip
    claims = [dict(c, rule=(c.get("rule") or {}).get("text")) for c in out["claims"]]
    paths = []
    for name, columns, rows in (("cells.csv", CELL_COLUMNS, cells),
                                ("claims.csv", CLAIM_COLUMNS, claims)):  # fmt: skip
        path = os.path.join(folder, name)
        tmp = path + ".tmp"
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(columns)
            for r in rows:
                w.writerow([_csv_value(r.get(c)) for c in columns])
        os.replace(tmp, path)
        paths.append(path)
    return paths
