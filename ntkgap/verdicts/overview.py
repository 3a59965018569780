"""What ``ntkgap show`` lists: the cells of a config or a results folder
(stored or not yet), their error or n*, and the claims of the summary
beside them, as JSON, a table or a figure of test MSE against n."""

from __future__ import annotations

import os

from ntkgap._infra import config
from ntkgap._infra.files import save_figure
from ntkgap.errors import UsageError
from ntkgap.runs import config as runs_config
from ntkgap.runs import store

SHOW_KEYS = ("target", "arch", "domain", "width", "L", "kmax", "seed", "seeds", "ridge")


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
        dict with ``method``, ``params``, ``n``, ``status`` and what is stored.
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
        cfg = runs_config.load_config(src, profile)
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


def overview(src: str, experiments: list) -> dict:
    """The JSON of ``ntkgap show``: each experiment's rows in series order, and
    the claims of the ``summary.json`` beside the results.

    Args:
        src: the config or folder given.
        experiments: from :func:`experiments`.

    Returns:
        ``{"experiments": [{"name", "folder", "cells"}], "claims"}``.
    """
    summary_dir = src if os.path.isdir(src) else config.results_dir()
    summary = store.load_result(os.path.join(summary_dir, "summary.json"))
    claims = summary.get("claims", []) if isinstance(summary, dict) else []

    def order(row):  # method, then parameters, then n: series read top to bottom
        n = row["n"]
        return (str(row["method"]), fmt_value(row["params"]), n if isinstance(n, int) else -1)

    out = {
        "experiments": [
            {
                "name": n,
                "folder": f,
                "cells": sorted((record(c, r) for c, r in rows), key=order),
            }
            for n, f, rows in experiments
        ],
        "claims": claims,
    }
    if not experiments and not claims:
        raise UsageError(f"show {src}: no stored results there")
    return out


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
        lines.append(f"claims ({len(claims)}):")
        for c in claims:
            lines.append(f"  {c.get('id', '?')}: {c.get('verdict', '?')}: {c.get('claim', '')}")
    return lines


def plot(experiments: list, path: str) -> None:
    """Test MSE against n, one line per (experiment, method, other parameters).

    Args:
        experiments: ``overview(...)["experiments"]``.
        path: the figure file.

    Returns:
        None.
    """
    import matplotlib  # here: the Agg backend is chosen only when a figure is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = {}
    for exp in experiments:
        for r in exp["cells"]:
            mse, n = r.get("test_mse"), r.get("n")
            if mse is None or n is None:
                continue
            label = f"{exp['name']} {r['method']} " + fmt_value(
                {k: v for k, v in r["params"].items() if k not in ("seed", "seeds")}
            )
            ns, ms = (n, mse) if isinstance(n, list) else ([n], [mse])
            for a, b in zip(ns, ms if isinstance(ms, list) else [ms]):
                if b is not None and b > 0:
                    series.setdefault(label, []).append((a, b))
    if not series:
        raise UsageError("show --plot: no stored test MSE against n to plot")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, pts in sorted(series.items()):
        pts.sort()
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=label[:60])
    ax.set_xlabel("n (training samples)")
    ax.set_ylabel("relative test MSE")
    if len(series) <= 20:
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
