"""The E4 design on any target family a user names, planned and run: the
verb ``ntkgap compare`` and the function ``ntkgap.compare`` (whose figure,
report and results.json ``ntkgap.compare_report`` writes).

For each depth L the family's member ``with_depth(family, L)`` is learned by
four predictors: the depth-aware architecture's NTK and trained network
(``tree:arity=A,L=L``, from the family's arity, or a DAG file's or a
random hierarchy model's ``tree_arch()``, the latter a CNN; absent when the
target has none) and the fc NTK and trained fc network (``fc:depth=2``).
:func:`plan` builds the experiment config (the claims Q1/Q2 of E4,
statistic ``nstar_ratio_growth``), its search caps sized from
eigenlearning's n* of the kernel sides; ``comparison_checks`` says what the
design will censor and whether it can reach a verdict; :func:`run_design`
writes ``OUT/compare.toml`` (``tomli_w``), runs it through
:func:`ntkgap.runs.executors.run` with the results in ``OUT/results``
(resumable: a rerun reuses every stored cell) and evaluates the claims.

With ``predict`` every (member, architecture) pair is predicted before any
search runs (``predictions.prediction``: eigenlearning theory for the own
NTK, the law n* = c C^p fitted on the stored E4/E8/E9 searches of other
families for the trained net), sealed in ``RESULTS/predictions/`` (a rerun
scores what the first run sealed) and scored against the searches after
them.

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
import time

import tomli_w

from ntkgap._infra import config
from ntkgap._infra.files import atomic_write, check_writable, ensure_folder
from ntkgap.errors import UsageError
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import config as runs_config
from ntkgap.runs import executors
from ntkgap.specs import comma_items, parse_int_list
from ntkgap.targets import parse_spec, parse_target, with_depth
from ntkgap.verdicts import (
    claims,
    comparison_checks,
    comparison_variant,
    selection,
)
from ntkgap.verdicts.comparison_checks import NAME, has_theory, theory_label, theory_point
from ntkgap.verdicts.comparison_predictions import (
    predict_members,
    score_members,
    seal_members,
)

EPS = 0.1
#: E4's net design (experiments/e4_trees.toml, quick): steps, learning rates, evaluation
E4_NET = dict(steps=1500, lr=[0.01, 0.03, 0.1], eval_every=100, patience=5)
#: the learning rates of a mean-field (``param=mf``) net: E8's mf grid
#: (experiments/e8_modifications.toml), reaching 1.0 because muP scales the
#: readout by 1/width and its nets train slower at E4's rates
MF_LR = [0.01, 0.03, 0.1, 0.3, 1.0]
#: the budgets: seeds, the search range, training steps and widths. ``n_max`` is
#: the least default cap; ``n_cap`` the most a cap sized from the theory's n*
#: may reach (E4's quick design searches to 16,384 at L = 5; None: not sized)
BUDGETS = {
    # hidden, for tests: finishes in seconds, verdicts inconclusive
    "tiny": dict(seeds=2, n_max=12, n_cap=None, steps=20, width=8, lr=[0.01], n_test=32,
                 batch=0, eval_every=10, patience=0, theory_n=[4, 16]),
    "quick": dict(seeds=8, n_max=256, n_cap=16384, width=32, n_test=2048, batch=128,
                  theory_n=[4, 16, 64, 256], **E4_NET),
    "paper": dict(seeds=12, n_max=1024, n_cap=32768, width=64, n_test=2048, batch=128,
                  theory_n=[4, 16, 64, 256, 1024], **E4_NET),
    "full": dict(seeds=12, n_max=4096, n_cap=65536, width=64, n_test=2048, batch=128,
                 theory_n=[4, 16, 64, 256, 1024, 4096],
                 **dict(E4_NET, steps=3000, patience=10)),
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


def resolve_budget(budget: str = "quick", *, eps=None, seeds=None, n_max=None) -> dict:
    """A budget of ``BUDGETS`` with the user's overrides filled in.

    Args:
        budget: a key of ``BUDGETS`` (a run profile, or ``tiny`` for tests).
        eps: the relative test MSE n* is read at (default ``EPS``).
        seeds: seeds per cell (default the budget's).
        n_max: the search cap of both sides (int), or ``{"kernel": N,
            "net": M}`` (default: sized from the theory's n*, see :func:`plan`).

    Returns:
        The budget dict with ``eps``, ``n_max_side`` ({side: cap}) and
        ``n_max_given`` (the sides whose cap the user gave).
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
    b["n_max_given"] = sorted(k for k in SIDES if caps.get(k))
    if min(b["n_max_side"].values()) < 4:
        raise UsageError(f"--n-max {n_max}: at least 4")
    return b


def sized_cap(b: dict, points: list[dict]) -> int | None:
    """The default search cap at one depth: the next power of two at or above
    twice the largest theory n* of the depth's kernel sides (a side beyond
    1e12 asks for the most), at least the budget's ``n_max`` and at most its
    ``n_cap`` (the memory guard may lower it per cell).

    Args:
        b: a budget from :func:`resolve_budget`.
        points: the depth's ``theory_point`` dicts.

    Returns:
        int, or None where the budget is not sized (``tiny``) or no theory
        point was computed.
    """
    vals = [math.inf if p["n_star"] is None else p["n_star"] for p in points if not p["reason"]]
    if b["n_cap"] is None or not vals:
        return None
    want = comparison_checks.next_power_of_two(2 * max(vals))
    return int(min(b["n_cap"], max(b["n_max"], want)))


def _guarded(cell: dict) -> dict:
    """A sized search cell with its cap halved until the memory guard passes."""
    while True:
        try:
            runs_config.check_cell_sizes(dict(cell), "compare")
            return cell
        except UsageError:
            if cell["n_max"] <= 16:
                raise
            cell = dict(cell, n_max=cell["n_max"] // 2)


def _member_grids(target, spec: str, b: dict, sized: int | None = None) -> list[dict]:
    """The cells of one member target: theory (where it applies), the NTK
    search and the network search, on its depth-aware arch and on fc; a
    side whose cap the user did not give takes ``sized`` (memory-guarded)."""
    grids, seeds, eps = [], list(range(b["seeds"])), b["eps"]
    for arch in comparison_variant.compared(_tree_arch(target, spec), b["variant"]):
        parse_arch(arch).check_domain(target.domain)
        distinct = _distinct_inputs(target, parse_arch(arch))
        small = distinct is not None  # far fewer samples than the inputs the arch tells apart
        n_test = min(b["n_test"], max(16, distinct // 4)) if small else b["n_test"]
        cap, cells = {}, []
        for side, side_max in b["n_max_side"].items():
            side_max = side_max if sized is None or side in b["n_max_given"] else sized
            cap[side] = max(2, min(side_max, distinct * 3 // 4 if small else side_max))
        for meth, side in (("ntk_search", "kernel"), ("net_search", "net")):
            cell = dict(method=meth, arch=arch, target=spec, eps=eps, seeds=seeds,
                        n_min=min(4, cap[side] - 1), n_max=cap[side], n_test=n_test)  # fmt: skip
            if meth == "net_search":
                cell.update({k: b[k] for k in ("width", "lr", "steps", "batch", "eval_every",
                                                "patience")})  # fmt: skip
                if b["variant"].get("param"):
                    cell["param"] = b["variant"]["param"]
                if b["variant"].get("param") == "mf":
                    cell["lr"] = MF_LR
            guard = sized is not None and side not in b["n_max_given"]
            cells.append(_guarded(cell) if guard else cell)
        if has_theory(target):
            top = cells[0]["n_max"]
            fixed = b["theory_n"] if sized is None else [4**k for k in range(1, 12)]
            theory_n = sorted({n for n in fixed if n <= top} | {top})
            grids.append(dict(method="theory", arch=arch, target=spec, eps=[eps], n=theory_n))
        grids += cells
    return grids


def _plan_members(family, depths, b: dict):
    """[(L, target, spec)] of the family, the depth-aware arch of each spec
    and, where the budget is sized from theory, every kernel side's point."""
    members, by_depth, trees, theory = [], {}, {}, {}
    for L, spec in _members(family, depths):
        target = parse_target(spec)
        spec = str(target.spec)
        if spec in by_depth:
            raise UsageError(f"--family: depths {by_depth[spec]} and {L} give the same target")
        by_depth[spec], trees[spec] = L, _tree_arch(target, spec)
        members.append((L, target, spec))
        if b["n_cap"] is None or not has_theory(target):
            continue
        for arch in comparison_variant.compared(trees[spec], b["variant"]):
            theory.setdefault(theory_label(arch), {})[L] = theory_point(target, arch, b["eps"])
    return members, by_depth, trees, theory


def plan(family, depths, budget: str = "quick", *, variant: str | None = None, **overrides) -> dict:
    """The experiment config of a comparison, validated (nothing written).

    Each depth's search caps default to :func:`sized_cap` of eigenlearning's
    n* of its kernel sides (tree and fc NTK), each cell's lowered by the
    memory guard where it must be; ``n_max`` overrides them per side.

    Args:
        family: a target spec (``{L}`` or a missing ``L=`` takes the depth)
            or a list of DAG files, one per depth.
        depths: the depths L (see :func:`parse_depths`).
        budget: a run profile of ``config.PROFILES`` (``tiny``: the test
            budget; see ``BUDGETS``).
        variant: ``--arch-variant``'s fields, applied to every compared
            architecture (``comparison_variant``); None: the plain ones.
        **overrides: ``eps``, ``seeds``, ``n_max`` (see :func:`resolve_budget`).

    Returns:
        The config as a dict (``name``, ``title``, ``claim``, the profile's
        table) plus ``_depths`` ({target spec: L}), ``_budget``, ``_tree``
        ({target spec: depth-aware arch or None}) and ``_theory`` ({label:
        {L: theory point}}, the points the caps were sized from).
    """
    b = resolve_budget(budget, **overrides)
    b["variant"] = comparison_variant.parse_variant(variant)
    b["width"] = b["variant"].get("width") or b["width"]
    eps = b["eps"]
    members, by_depth, trees, theory = _plan_members(family, parse_depths(depths), b)
    grids = []
    for L, target, spec in members:
        points = [by_L[L] for by_L in theory.values() if L in by_L]
        grids += _member_grids(target, spec, b, sized_cap(b, points))
    fam_text = family if isinstance(family, str) else ", ".join(family)
    if variant is not None:
        fam_text += f" (arch variant {variant})"
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
    cfg.update(
        _depths=by_depth,
        _budget=b,
        _tree=trees,
        _theory=theory,
        _variant_notes=comparison_variant.notes(trees.values(), b["variant"]),
    )
    return cfg


# ------------------------------------------------------------------- TOML
def to_toml(cfg: dict) -> str:
    """A config dict (as :func:`plan` makes it) as TOML text (``tomli_w``).

    Args:
        cfg: the config.

    Returns:
        The TOML text; ``tomllib.loads`` of it gives ``cfg`` back without its
        private keys (``_depths`` and the others, written as a comment line
        naming each target's depth).
    """
    public = {k: v for k, v in cfg.items() if not k.startswith("_")}
    head = "# depth of each target: " + json.dumps(cfg.get("_depths", {})) + "\n"
    return head + tomli_w.dumps(public)


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


def series(eps: float = EPS) -> dict:
    """The stored n* of this comparison's four predictors and its theory, by
    depth (read inside :func:`_depths`).

    Args:
        eps: the relative test MSE n* is read at.

    Returns:
        ``{label: {L: median record}}``.
    """
    out = {}
    for meth, arch, label, _c, _m in SERIES:
        side = selection.Side(meth, arch, prefix=True)
        recs = selection.nstar_by_depth(NAME, side, {"name": NAME}, eps)
        out[label] = {L: r["median"] for L, r in recs.items()}
    for arch, label in (("fc", "fc NTK theory"), ("tree", "depth-aware NTK theory")):
        out[label] = selection.theory_nstar_by_depth(NAME, {"name": NAME}, arch, eps)
    return out


def public_budget(cfg: dict) -> dict:
    """The budget a comparison ran with, as results.json records it.

    Args:
        cfg: a config from :func:`plan`.

    Returns:
        ``{"eps", "seeds", "n_max_side", "steps", "width", "n_test",
        "n_max_by_depth", "arch_variant", "param"}``: ``n_max_by_depth`` is ``{L:
        {"kernel": cap, "net": cap}}``, the largest search cap of each side at
        each depth; ``arch_variant`` the ``--arch-variant`` text (or None).
    """
    b = cfg["_budget"]
    out = {k: b[k] for k in ("eps", "seeds", "n_max_side", "steps", "width", "n_test")}
    by_depth = {}
    for g in comparison_checks.cells(cfg):
        side = {"ntk_search": "kernel", "net_search": "net"}.get(g["method"])
        if side:
            at = by_depth.setdefault(str(cfg["_depths"][g["target"]]), {})
            at[side] = max(at.get(side, 0), g["n_max"])
    variant = b["variant"]
    return dict(
        out, n_max_by_depth=by_depth, arch_variant=variant.get("text"), param=variant.get("param")
    )


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


def profiled_plan(family, depths, profile: str, budget: str | None, **overrides):
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


def dry_run(cfg: dict, run_profile: str, jobs: int = 1, *, predict: bool = False,
            **executor_opts) -> dict:  # fmt: skip
    """What ``compare --dry-run`` returns: the plan, its theory, warnings,
    refusals and cost; nothing written.

    Args:
        cfg: a config from :func:`profiled_plan`.
        run_profile: the profile it runs under.
        jobs: the workers the makespan is for.
        predict: add every pair's prediction (unsealed).
        **executor_opts: ``executor``, ``scheduler``, ``scheduler_file``
            (checked as the run would check them).

    Returns:
        ``comparison_checks.dry_run_summary``'s dict with ``dry_run``,
        ``profile``, ``budget``, ``targets`` (and ``predictions``).
    """
    executors.check_executor(**executor_opts)
    nstar = comparison_checks.theory_nstar(cfg)
    out = comparison_checks.dry_run_summary(cfg, nstar, jobs)
    if predict:
        out["predictions"] = [{k: i[k] for k in ("L", "prediction")} for i in predict_members(cfg)]
    return dict(out, dry_run=True, profile=run_profile, budget=public_budget(cfg),
                targets=cfg["_depths"])  # fmt: skip


def run_design(cfg: dict, out: str, run_profile: str, *, results: str | None = None,
               jobs: int = 1, force: bool = False, predict: bool = False,
               **executor_opts) -> dict:  # fmt: skip
    """Refuses a design that cannot reach a verdict (unless ``force``), writes
    ``OUT/compare.toml``, runs its cells (``executors.run``; resumable) and
    evaluates its claims.

    Args:
        cfg: a config from :func:`profiled_plan`.
        out: the output folder (checked before anything is written).
        run_profile: the profile it runs under.
        results: where the cells are stored (default ``out/results``).
        jobs: local worker processes.
        force: run a design :func:`comparison_checks.refusals` refuses.
        predict: predict, seal and score every pair (see :func:`predict_members`).
        **executor_opts: ``executor``, ``scheduler``, ``scheduler_file`` of
            ``executors.run``.

    Returns:
        ``{"run", "claims" (evaluated), "series", "predictions" (scored, or
        None), "warnings", "forced", "seconds"}``.
    """
    nstar = comparison_checks.theory_nstar(cfg)
    predicted = predict_members(cfg) if predict else None  # before anything is written
    reasons = comparison_checks.refusals(cfg, nstar)
    if reasons and not force:
        raise UsageError(reasons[0] + " (--force runs it anyway)")
    executors.check_executor(**executor_opts)
    check_out(out)  # every check first: bad input writes nothing
    ensure_folder(out)
    toml_path = os.path.join(out, "compare.toml")
    atomic_write(toml_path, to_toml(cfg))
    eps = cfg["_budget"]["eps"]
    with config.override(results=results or os.path.join(out, "results")):
        sealed = seal_members(predicted) if predict else None
        start = time.perf_counter()
        run = executors.run(toml_path, run_profile, jobs=jobs, **executor_opts)
        with _depths(cfg["_depths"], run_profile):
            evaluated = [claims.evaluate(c, NAME) for c in claims.parse_claims(cfg, toml_path)]
            found = series(eps)
        scored = score_members(sealed, eps, run_profile) if predict else None
    return {
        "run": run,
        "claims": [{k: c[k] for k in SUMMARY_KEYS} for c in evaluated],
        "series": found,
        "predictions": scored,
        "warnings": comparison_checks.design_warnings(cfg, nstar),
        "forced": reasons if force else [],
        "seconds": time.perf_counter() - start,
    }
