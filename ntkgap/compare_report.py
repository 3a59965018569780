"""The output of ``ntkgap compare``: the figure ``OUT/compare.png`` /
``OUT/compare.pdf``, the report ``OUT/report.md`` and ``OUT/results.json``,
written after :mod:`ntkgap.verdicts.comparison` has planned the design, run
its cells and evaluated its claims (the function ``ntkgap.compare``).
"""

from __future__ import annotations

import os
import textwrap

from ntkgap._infra.files import atomic_write, dumps, save_figure
from ntkgap.verdicts import comparison
from ntkgap.verdicts.comparison import EPS, SERIES
from ntkgap.verdicts.comparison_predictions import prediction_text


def plot(series: dict, path_stem: str, title: str = "", eps: float = EPS, predicted=None) -> None:
    """n*(eps) vs depth L for the four predictors (median seed, 95% CI;
    censored: an arrow from the cap, up for not reached by n_max, down for
    reached at the smallest n), with eigenlearning theory as dashed lines
    and, with ``predicted``, the sealed predictions beside them; written as
    ``path_stem.png`` and ``path_stem.pdf``.

    Args:
        series: ``{label: {L: record}}`` as ``comparison.series`` returns.
        path_stem: the output path without suffix.
        title: the axes' title (the verdicts are appended by the caller).
        eps: the relative test MSE n* is read at.
        predicted: ``comparison_predictions.seal_members``'s (or ``score_members``'s) list.

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
            if not p["arch"].startswith(arch) or item.get("refused"):  # refused: not drawn
                continue
            n = p["net_n_star"] if meth == "net_search" else p["kernel_n_star"]
            if n is None:  # no exact kernel spectrum: nothing was predicted
                continue
            lo, hi = p["net_interval"] if meth == "net_search" else (n, n)
            err = [[max(0.0, n - lo)], [max(0.0, hi - n)]]
            ax.errorbar(item["L"] + dx, n, yerr=err, fmt=mk, mfc="none",
                        color=color, capsize=2, elinewidth=0.7, alpha=0.8)  # fmt: skip
    label = "sealed prediction (hollow): net by the law, 95% PI; kernel by theory"
    ax.plot([], [], "o", mfc="none", color="k", label=label)


def report(cfg, claims_out, run, series, scored=None, warnings=()) -> str:
    """``OUT/report.md``: the claims' table, their details, n* by depth and,
    with ``scored``, the sealed predictions beside the measurements.

    Args:
        cfg: the config from ``comparison.plan``.
        claims_out: the claims in the summary.json claim format.
        run: the runner's summary.
        series: ``{label: {L: record}}`` (``comparison.series``).
        scored: ``comparison_predictions.score_members``'s list, or None.
        warnings: the design's warnings (``comparison_checks.design_warnings``).

    Returns:
        The Markdown text.
    """
    lines = [f"# {cfg['title']}", "", f"Run: {run['cells']} cells ({run['computed']} computed, "
             f"{run['reused']} reused), profile {run['profile']}.", "",
             "| claim | verdict | value | 95% CI | seeds |", "|---|---|---|---|---|"]  # fmt: skip
    for c in claims_out:
        v = "-" if c["value"] is None else f"{c['value']:.3g}"
        ci = "-" if c["lo"] is None or c["hi"] is None else f"[{c['lo']:.3g}, {c['hi']:.3g}]"
        lines.append(f"| {c['id']} | {c['verdict']} | {v} | {ci} | {c['seeds'] or '-'} |")
    if warnings:
        lines += ["", "Design warnings:", ""] + [f"- {w}" for w in warnings]
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


def compare(
    family, depths, out: str | None, *, profile: str = "quick", jobs: int = 1,
    results: str | None = None, eps: float | None = None, seeds: int | None = None,
    n_max=None, dry_run: bool = False, force: bool = False, budget: str | None = None,
    predict: bool = False, executor: str = "local", scheduler: str | None = None,
    scheduler_file: str | None = None, arch_variant: str | None = None,
) -> dict:  # fmt: skip
    """Run the E4 design on a target family and write the folder ``out``.

    Args:
        family: a target spec or a list of DAG files (see ``comparison.plan``).
        depths: the depths L (``"1..4"``, a list, ...).
        out: the output folder (created if its parent exists; unused and
            may be None with ``dry_run``).
        profile: a run profile of ``config.PROFILES``.
        jobs: local worker processes of the runner.
        results: where the cells are stored (default ``out/results``).
        eps: the relative test MSE n* is read at (default ``comparison.EPS``).
        seeds: seeds per cell (default the profile's budget).
        n_max: the search cap of both sides, or ``{"kernel": N, "net": M}``
            (default sized from the theory's n*, see ``comparison.plan``).
        dry_run: plan only: return the cells, theory n* and cost, write nothing.
        force: run even a design ``comparison_checks.refusals`` says cannot
            reach a verdict.
        budget: the budget of ``comparison.BUDGETS`` (default the profile's;
            ``tiny`` is the tests' budget, run and stored under ``profile``).
        predict: predict every pair before the searches, seal the
            predictions in the comparison's results folder and score them.
        executor: ``local`` or ``dask`` (as ``ntkgap run --executor``).
        scheduler: the Dask scheduler's address (with ``executor="dask"``).
        scheduler_file: or the file the scheduler wrote.
        arch_variant: architecture fields (``KEY=VALUE`` or E8's modification
            names, comma-separated) applied to every compared architecture,
            each trained net still against its own NTK; ``width=N`` sets the
            nets' width (``comparison_variant``).

    Returns:
        ``{"out", "files", "run", "claims", "profile", "budget", "warnings",
        ...}``: the written paths, the runner's summary and the claims in the
        summary.json claim format (with ``dry_run``:
        ``comparison_checks.dry_run_summary``'s dict); with ``predict`` also
        ``predictions`` (with ``dry_run`` unsealed and unscored).
    """
    cfg, run_profile = comparison.profiled_plan(family, depths, profile, budget, eps=eps,
                                                seeds=seeds, n_max=n_max,
                                                variant=arch_variant)  # fmt: skip
    executor_opts = dict(executor=executor, scheduler=scheduler, scheduler_file=scheduler_file)
    if dry_run:
        return comparison.dry_run(cfg, run_profile, jobs, predict=predict, **executor_opts)
    done = comparison.run_design(cfg, out, run_profile, results=results, jobs=jobs,
                                 force=force, predict=predict, **executor_opts)  # fmt: skip
    claims_out, series, scored = done["claims"], done["series"], done["predictions"]
    verdicts = "; ".join(f"{c['id']}: {c['verdict']}" for c in claims_out)
    plot(series, os.path.join(out, "compare"), f"{cfg['title']}\n{verdicts}",
         eps=cfg["_budget"]["eps"], predicted=scored)  # fmt: skip
    atomic_write(
        os.path.join(out, "report.md"),
        report(cfg, claims_out, done["run"], series, scored, done["warnings"]),
    )
    files = [os.path.join(out, f) for f in ("compare.toml", "report.md", "compare.png",
                                             "compare.pdf", "results.json")]  # fmt: skip
    result = {
        "out": out,
        "family": family,
        "depths": sorted(set(cfg["_depths"].values())),
        "targets": cfg["_depths"],
        "profile": run_profile,
        "budget": comparison.public_budget(cfg),
        "forced": done["forced"],
        "warnings": done["warnings"],
        "files": files,
        "run": done["run"],
        "seconds": done["seconds"],
        "n_star": {lab: {str(L): r for L, r in recs.items()} for lab, recs in series.items()},
        "claims": claims_out,
        **({"predictions": scored} if predict else {}),
    }
    atomic_write(files[-1], dumps(result, indent=1))
    return result
