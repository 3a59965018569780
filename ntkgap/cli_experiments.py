"""The experiment verbs of the command line: ``run`` (compute an experiment's
cells), ``show`` (tabulate stored cells and claims) and ``compare`` (the E4
design on any target family). They register into ``ntkgap.cli_common.VERBS``
when ``ntkgap.cli.build_parser`` imports this module.
"""

from __future__ import annotations

import os
import sys

import ntkgap
from ntkgap._infra.config import PROFILES
from ntkgap.cli_common import check_out, emit, int_at_least, verb
from ntkgap.errors import UsageError


# ------------------------------------------------------------- experiments
def _run_args(p):
    p.add_argument("config", help="experiment config (experiments/*.toml)")
    p.add_argument("--profile", default=PROFILES[0], help=f"{', '.join(PROFILES)} [{PROFILES[0]}]")
    p.add_argument("--jobs", type=int_at_least(1), default=2, help="local worker processes [2]")
    _executor_args(p)
    p.add_argument(
        "--dry-run", action="store_true",
        help="estimate the cells' cost (ntkgap.runs.cost, calibrated on stored cells); run none",
    )  # fmt: skip
    _reuse_stale_arg(p)
    _results_arg(p)


def _scheduler_file_arg(p):
    p.add_argument(
        "--scheduler-file", metavar="PATH", default=None,
        help="the file a Dask scheduler wrote (dask scheduler --scheduler-file), instead of "
        "--scheduler",
    )  # fmt: skip


def _reuse_stale_arg(p):
    p.add_argument(
        "--reuse-stale", action="store_true",
        help="keep stored cells computed by other code (default: recompute them); the "
        "report marks the claims that read one",
    )  # fmt: skip


def _results_arg(p):
    p.add_argument(
        "--results",
        metavar="DIR",
        default=None,
        help="results folder [NTKGAP_RESULTS, else ./results]; created if its parent exists",
    )


@verb("run", "run an experiment's cells that are not stored yet (resumable)", _run_args)
def _run(args):
    from ntkgap._infra import config
    from ntkgap.runs import executors
    from ntkgap.verdicts.claims import validate_config  # scipy: loaded by the verbs that need it
    from ntkgap.verdicts.sealed_statistics import seal_config

    if args.results is not None:
        config.set_results_dir(args.results)
    cfg, _ = validate_config(args.config, args.profile)  # cells and claims, before any cell runs
    if args.dry_run:
        return _run_dry(args)
    seals = seal_config(cfg, args.profile)  # the predictions first, then their cells
    for line in seals:
        sys.stderr.write(f"ntkgap: {line}\n")
    r = executors.run(
        args.config, args.profile, jobs=args.jobs, executor=args.executor,
        scheduler=args.scheduler, reuse_stale=args.reuse_stale,
        scheduler_file=args.scheduler_file,
    )  # fmt: skip
    r["seals"] = seals
    emit(
        args,
        r,
        f"{r['experiment']} [{r['profile']}]: {r['cells']} cells, {r['computed']} computed, "
        f"{r['reused']} reused, {r['seconds']:.1f} s{_stale_text(r)}",
    )
    for f in r["failed"]:
        sys.stderr.write(
            f"ntkgap: warning: cell {f['key']} ({f['cell']['method']}) failed: {f['reason']}\n"
        )
    if r.get("errors"):  # cells whose task raised: the run went on, and says so
        sys.stderr.write(f"ntkgap: {len(r['errors'])} cells failed with an error (listed "
                         "above); a rerun recomputes them\n")  # fmt: skip
        return 1
    return 0


def _stale_text(r):
    """The run line's count of stored cells of other code, when there were any."""
    if not r.get("stale"):
        return ""
    return f"; {r['stale']} stale (other code) {'reused' if r['reuse_stale'] else 'recomputed'}"


def _run_dry(args):
    """``run --dry-run``: the cells a run would compute and their estimated cost."""
    from ntkgap.runs import config as runs_config
    from ntkgap.runs import cost, cost_plan

    cfg = runs_config.load_config(args.config, args.profile)
    cells = runs_config.expand(cfg, args.profile, where=args.config)
    est = cost.estimate({cfg["name"]: cells}, reuse_stale=getattr(args, "reuse_stale", False))
    e = est["experiments"][cfg["name"]]
    stored = sum(c["how"] == "stored" for c in e["cells"])
    pl = cost_plan.plan(cfg["name"], cells, est, args.jobs)
    r = {
        "experiment": cfg["name"], "profile": args.profile, "cells": len(cells),
        "stored": stored, "searches": e["searches"], "core_seconds": e["seconds"],
        "wall_minutes": pl["makespan_s"] / 60, "jobs": args.jobs,
        "calibrated_on": est["calibrated_on"], "results": est["root"],
        "per_cell": pl["per_cell"], "makespan_s": pl["makespan_s"],
        "longest_task_s": pl["longest_task_s"],
    }  # fmt: skip
    how = cost_plan.basis(est)
    lines = [
        f"dry run, {r['experiment']} [{r['profile']}]: {r['cells']} cells ({stored} stored, "
        f"{r['cells'] - stored} to compute, {r['searches']} searches); estimated "
        f"{r['core_seconds'] / 3600:.2f} core-hours, makespan ~{r['wall_minutes']:.1f} min on "
        f"{args.jobs} workers (longest task {pl['longest_task_s'] / 60:.1f} min; {how}; "
        "a guide within ~2x, not a promise)"
    ]  # fmt: skip
    lines += [_cell_line(c) for c in pl["per_cell"]]
    emit(args, r, "\n".join(lines))


def _cell_line(c):
    """One cell of a dry run: key, method, estimate and, for a search, the n
    it is expected to reach and from what."""
    reach = f"  n ~{c['n_reach']:.0f} ({c['reach_from']})" if "n_reach" in c else ""
    return (f"  {c['key']} {c['method']:<12} {c['estimate_s']:9.1f} s  "
            f"{c.get('arch') or ''} {c.get('target') or ''}{reach}")  # fmt: skip


# -------------------------------------------------------------------- show
def _show_args(p):
    p.add_argument(
        "source",
        metavar="CONFIG|DIR",
        help="an experiment config (its results folder is read) or a folder of results",
    )
    p.add_argument(
        "--profile",
        default=None,
        help="with a CONFIG: only the cells of this profile [every profile it has]",
    )
    p.add_argument(
        "--plot", metavar="FILE",
        help="also plot test MSE against n per series, and n* searches (per-seed brackets, "
        "censored seeds as arrows from their bound)",
    )  # fmt: skip
    p.add_argument(
        "--csv", metavar="DIR",
        help="also write DIR/cells.csv (one row per cell) and DIR/claims.csv (one per claim)",
    )  # fmt: skip
    _results_arg(p)


@verb(
    "show",
    "a table of a run's cells (method, parameters, n, error or n*, seconds) and claims",
    _show_args,
)
def _show(args):
    from ntkgap._infra import config
    from ntkgap.verdicts import overview

    source = args.source
    out_dir = overview.compare_folder(source)
    if out_dir is not None:  # a compare folder: its config, its cells in OUT/results
        source = os.path.join(out_dir, overview.COMPARE_CONFIG)
        if args.results is None:
            config.set_results_dir(os.path.join(out_dir, "results"))
    if args.results is not None:
        config.set_results_dir(args.results)
    experiments = overview.experiments(source, args.profile)  # the config is checked first
    if args.results is not None and not os.path.isdir(args.results):  # an absent folder: a typo
        raise UsageError(f"--results {args.results}: no such folder (give a results folder)")
    if args.plot:
        check_out(args.plot, (".png", ".pdf", ".svg"))
    if args.csv:  # a folder, created in an existing, writable parent
        if os.path.exists(args.csv) and not os.path.isdir(args.csv):
            raise UsageError(f"--csv {args.csv}: a file, not a folder (give a folder)")
        parent = os.path.dirname(os.path.abspath(args.csv))
        if not os.path.isdir(parent):
            raise UsageError(f"--csv {args.csv}: its parent {parent} does not exist")
        check_out(os.path.join(parent, "cells.csv"), (".csv",))
    out = overview.overview(source, experiments)
    lines = overview.text(out)
    if args.plot:
        overview.plot(out["experiments"], args.plot)
        lines.append(f"wrote {args.plot}")
    if args.csv:
        written = overview.write_csv(out, args.csv)
        out["csv"] = written
        lines.append(f"wrote {', '.join(written)}")
    emit(args, out, "\n".join(lines))


# ----------------------------------------------------------------- compare
def _compare_args(p):
    from ntkgap._infra.config import PROFILES
    from ntkgap.targets import help_text

    p.add_argument(
        "--family",
        required=True,
        nargs="+",
        metavar="SPEC|FILES",
        help="a target family ({L} or a missing L= takes the depth), or DAG files, one per depth",
    )
    p.add_argument("--L", required=True, dest="depths", help="depths, e.g. 1..4")
    p.add_argument("--out", metavar="DIR", help="output folder (created; not with --dry-run)")
    p.add_argument("--profile", default=PROFILES[0], choices=PROFILES, help="budget")
    p.add_argument("--eps", type=float, default=None, help="relative test MSE of n* [0.1]")
    p.add_argument("--seeds", type=int_at_least(2), default=None, help="seeds per cell")
    p.add_argument(
        "--n-max", default=None, metavar="N|kernel=N,net=M", help="search cap of both sides"
    )
    p.add_argument("--dry-run", action="store_true", help="print cells, theory n*, cost; run none")
    p.add_argument(
        "--predict",
        action="store_true",
        help="predict each pair's n* before the searches (ntkgap predict; its law fitted on "
        "the searches in NTKGAP_RESULTS, else ./results, not on --results), seal and score it",
    )
    p.add_argument(
        "--arch-variant", metavar="FIELDS", default=None, action="append",
        help="architecture fields for every compared net and its own NTK (KEY=VALUE, e.g. "
        "b_std=0, residual=1, width=128; or residual, layernorm, b0, b1, width16, ...)",
    )  # fmt: skip
    p.add_argument("--force", action="store_true", help="run a design that cannot reach a verdict")
    p.add_argument("--jobs", type=int_at_least(1), default=1, help="local worker processes [1]")
    _executor_args(p)
    p.add_argument(
        "--results", metavar="DIR", default=None, help="where the cells are stored [DIR/results]"
    )
    p.epilog = help_text()


def _executor_args(p):
    p.add_argument(
        "--executor", default="local", choices=("local", "dask"),
        help="where cells run: local processes or a Dask cluster [local]",
    )  # fmt: skip
    p.add_argument(
        "--scheduler", default=None, help="Dask scheduler address (with --executor dask)"
    )
    _scheduler_file_arg(p)


def _n_max_option(text):
    """``--n-max N`` or ``--n-max kernel=N,net=M`` as an int or a dict."""
    if text is None:
        return None
    try:
        if "=" not in text:
            return int(text)
        from ntkgap.specs import raw_items  # the one splitter of key=value lists

        return {k: int(v) for k, v in raw_items(f"n-max:{text}")[1]}
    except ValueError:
        raise UsageError(f"--n-max {text!r}: give N or kernel=N,net=M (integers)") from None


@verb(
    "compare",
    "the E4 design on any target family: four predictors' n* vs L, Q1/Q2 verdicts, figure",
    _compare_args,
)
def _compare(args):
    from ntkgap.verdicts import comparison, comparison_predictions  # loaded with compare only

    if args.out is None and not args.dry_run:
        raise UsageError("--out is required (except with --dry-run)")
    fam = comparison.family_option(args.family)
    r = ntkgap.compare(
        fam, args.depths, args.out, profile=args.profile, jobs=args.jobs, results=args.results,
        eps=args.eps, seeds=args.seeds, n_max=_n_max_option(args.n_max), dry_run=args.dry_run,
        force=args.force, predict=args.predict, executor=args.executor,
        scheduler=args.scheduler, scheduler_file=args.scheduler_file,
        arch_variant=None if args.arch_variant is None else ",".join(args.arch_variant),
    )  # fmt: skip
    if args.dry_run:
        return emit(args, r, "\n".join(_dry_run_text(r)))
    for w in r["warnings"]:
        sys.stderr.write(f"ntkgap: warning: {w}\n")
    text = [f"wrote {', '.join(r['files'])}"] + [
        f"  {c['id']}: {c['verdict']}" for c in r["claims"]
    ]
    text += [
        f"  predicted: {comparison_predictions.prediction_text(i)}"
        for i in r.get("predictions", [])
    ]
    emit(args, r, "\n".join(text))


def _dry_run_text(r):
    from ntkgap.verdicts import comparison_predictions  # loaded with compare only

    b = r["budget"]
    lines = [f"dry run, profile {r['profile']}, eps {b['eps']:g}: {len(r['cells'])} cells"]
    if b.get("arch_variant"):
        param = f", param {b['param']}" if b.get("param") else ""
        lines.append(f"arch variant {b['arch_variant']}: nets of width {b['width']}{param}")
    for c in r["cells"]:
        cap = f" n_max {c['n_max']}" if "n_max" in c else f" n {c['n']}"
        lines.append(f"  L={c['L']} {c['method']:<10} {c['arch']:<22} {c['target']}{cap}")
    for lab, by_L in r["n_star_theory"].items():
        vals = ", ".join(f"L={L}: {'> 1e12' if n is None else n}" for L, n in by_L.items())
        lines.append(f"theory n*: {lab}: {vals}")
    for lab, by_L in r.get("theory_missing", {}).items():
        lines += [f"theory n*: {lab}: L={L}: not computed ({why})" for L, why in by_L.items()]
    for lab, by_L in r.get("n_star_theory_missing", {}).items():
        lines += [f"theory n*: {lab}: L={L}: none ({why})" for L, why in by_L.items()]
    lines.append(f"estimated cost: {r['cost']:.3g} ({r['cost_unit']})")
    if "makespan_s" in r:
        lines.append(f"makespan ~{r['makespan_s'] / 60:.1f} min on {r['jobs']} workers")
        lines += [_cell_line(c) for c in r["per_cell"]]
    lines += [f"warning: {x}" for x in r.get("warnings", [])]
    lines += [f"would refuse: {x}" for x in r["refusals"]]
    lines += [
        f"predicted: {comparison_predictions.prediction_text(i)}" for i in r.get("predictions", [])
    ]
    return lines
