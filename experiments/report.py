"""REPORT.md and results/summary.json from the stored results: every claim
declared in an ``experiments/*.toml`` config, evaluated by ``ntkgap.verdicts.claims``
(its statistic, CI and pre-registered rule all come from the config; this
script holds no rule), then the figures with their captions and the
training budgets of the profile as run. ``python experiments/report.py
[PROFILE] [--summary]`` (quick when omitted; ``--summary``: results/summary.json alone)."""

import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from ntkgap._infra import config
from ntkgap._infra.files import atomic_write, dumps
from ntkgap.runs import config as runs_config
from ntkgap.runs import store
from ntkgap.runs.scaling import MIN_SEEDS_FOR_CI
from ntkgap.targets.rhm_pstar import PSTAR_REGIME_FRACTION
from ntkgap.verdicts import claims as claims_mod
from ntkgap.verdicts import rules, selection, tables

CONFIGS = sorted(glob.glob(os.path.join(HERE, "*.toml")))


def stored_config(cfg, profile):
    """The config as last run (saved beside its results), else the repo's."""
    saved = store.load_result(
        os.path.join(config.results_dir(), cfg["name"], f".config-{profile}.json")
    )
    return saved or cfg


def budgets(cfg, profile):
    """One line per network grid of the profile as run (quick's grids too
    where the profile holds them): width, steps, optimiser, rates..."""

    def j(v):
        return ", ".join(map(str, v)) if isinstance(v, list) else str(v)

    if not runs_config.has_profile(cfg, profile):
        return []
    out = []
    for g in runs_config.expand(cfg, profile, validate=False):
        if g["method"] not in ("net", "net_search"):
            continue
        lr = g["lr"]
        out.append(
            f"{g['arch']}: width {g['width']}, at most {g['steps']} steps of "
            f"{g['optimizer']}"
            + (
                f" (early stop: patience {g['patience']} checks of {g['eval_every']})"
                if g.get("patience")
                else ""
            )
            + (f", lr chosen on validation from {j(lr)}" if isinstance(lr, list) else f", lr {lr}")
            + (f", batch {g['batch']}" if g.get("batch") else ", full batch")
            + (f", alpha {g['alpha']}" if g.get("alpha") else "")
            + (f", {len(g['seeds'])} seeds" if isinstance(g.get("seeds"), list) else "")
        )
    return list(dict.fromkeys(out))


#: what each statistic's value is and its unit, for the summary table (the
#: one place; every statistic of ``claims.STATISTICS`` has its row)
STATISTIC_MEANING = {
    "decay_exponent": (
        "largest |fitted eigenvalue decay exponent - the paper's| over the archs",
        "exponent (dimensionless)",
    ),
    "log_ratio_every_n": (
        "worst (target, n) mean over seeds of log10(NTK test MSE / net test MSE)",
        "decades (log10)",
    ),
    "log_ratio_at_n": (
        "mean over seeds of log10(NTK test MSE / net test MSE) at the claim's n",
        "decades (log10)",
    ),
    "theory_growth": (
        "per-level growth factor of the theory quantity (geometric mean)",
        "x per level",
    ),
    "nstar_ratio_growth": ("median seed's per-level growth factor of n*(A) / n*(B)", "x per level"),
    "nstar_ratio": ("median over seeds of log10 n*(A) / n*(B)", "decades (log10)"),
    "nstar_kernel_convexity": (
        "median seed's change per level of the kernel's per-level n* factor",
        "x per level",
    ),
    "nstar_net_power": (
        "median seed's exponent p of n* ~ C^p (C: number of constituents)",
        "exponent (dimensionless)",
    ),
    "nstar_scaling": (
        "median seed's departure from the published law: log(g / base) for n* ~ c g^x, "
        "k - exponent for n* ~ c x^k",
        "0 = the law (ln of a factor, or an exponent)",
    ),
    "pstar_scaling": (
        "median seed's slope of log P* (classification) on log m^L, minus the law's exponent",
        "0 = the law (exponent)",
    ),
    "pstar_ratio": (
        "median seed's mean over (m, L) of log2 P*(n_c) / P*(n_c'), minus the law's log2 ratio",
        "0 = the law (log2)",
    ),
    "after_kernel_share": (
        "median share of the log n* gap (NTK vs net) the after-training kernel closes",
        "fraction (1 = all)",
    ),
    "lazy_control": ("median relative kernel change ||K_T - K_0|| / ||K_0||", "fraction"),
    "e10_kernel": ("median |log10(theory n* / measured kernel n*)|", "decades (log10)"),
    "e10_net": ("median |log10(held-out law n* / measured net n*)|", "decades (log10)"),
    "e10_winner": ("share of (family, depth) winners predicted right", "fraction"),
    "sealed_winner": ("share of units whose sealed predicted winner was right", "fraction"),
    "sealed_nstar": (
        "median |log10(sealed predicted n* / measured n*)|, the worse side",
        "decades (log10)",
    ),
    "universality": (
        "share of the per-activation ratio claims that read supported",
        "fraction (1 = every activation)",
    ),
    "e10_coverage": (
        "prediction-interval coverage minus its nominal 0.95",
        "fraction (0 = nominal)",
    ),
}


def fmt(v, missing="-"):
    if v is None:
        return missing
    return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.3e}"


def value_text(c):
    """The claim's value, or why it has none."""
    if c["verdict"] == rules.NOT_RUN:
        return "-"
    return fmt(c["value"], "no point value (see detail)")


def ci_text(c):
    """The CI, each missing end said for what it is: "open" where censoring
    left it unbounded, "not estimable" otherwise; a CI with neither end
    names the reason (a deterministic statistic has none)."""
    if c["verdict"] == rules.NOT_RUN:
        return "-"
    lo_open, hi_open = c.get("lo_censored"), c.get("hi_censored")
    if c["lo"] is None and c["hi"] is None and not (lo_open or hi_open):
        if c["rule"].get("deterministic"):
            return "none (deterministic: no sampling error)"
        seeds = c.get("seeds")
        if seeds is not None and seeds < MIN_SEEDS_FOR_CI:
            return f"not estimable ({seeds} seeds < {MIN_SEEDS_FOR_CI})"
        return "not estimable (see detail)"

    def end(v, is_open):
        return "open" if v is None and is_open else fmt(v, "not estimable")

    return f"[{end(c['lo'], lo_open)}, {end(c['hi'], hi_open)}]"


def summary_row(c):
    """The claim's line of the summary table (``SUMMARY_HEAD``'s columns)."""
    what, unit = STATISTIC_MEANING.get(c["statistic"], (c["statistic"], "-"))
    what = what.replace("|", "\\|")  # a bar inside a cell would end it
    return (
        f"| {c['id']} | {c['profile']} | **{c['verdict']}**{stale_mark(c)} | {what} | "
        f"{value_text(c)} | {unit} | {ci_text(c)} | {c['seeds'] or '-'} | {robust_text(c)} |"
    )


STALE_NOTE = (
    "A verdict marked 'stale cells' read stored cells computed by other code than this "
    "report's (kept by `ntkgap run --reuse-stale`): rerun without it to recompute them."
)


def stale_mark(c):
    """The verdict's mark when the claim read cells computed by other code
    (``ntkgap run --reuse-stale`` kept them): empty otherwise."""
    n = c.get("stale_cells") or 0
    return f" (read {n} stale cell{'s' if n != 1 else ''}: other code)" if n else ""


SUMMARY_HEAD = [
    "| claim | profile | verdict | value is | value | unit | CI | seeds | robustness |",
    "|---|---|---|---|---|---|---|---|---|",
]


def robust_text(c):
    r = c.get("robustness")
    if not r:
        return "-"
    label = r.get("label", "2x budget")
    return f"eps {r['eps']}: {r['verdict_eps']}; {label}: {r['verdict_budget']}" + (
        " (**flips**)" if r["flips"] else ""
    )


CAPTIONS = {
    "e1_spectra": "E1. Left: circle eigenvalues of the ReLU NTK for fc depths 1-4 with fitted "
    "log-log slopes (paper: k^-2). Right: hypercube eigenvalue per character vs degree k.",
    "e2_control": "E2. Band-limited circle targets: relative test MSE vs training samples n for "
    "NTK regression and trained fc:depth=2 networks (median over seeds, bars min-max). "
    "Paper: no gap.",
    "e3a_sawtooth": "E3a. Left: eigenlearning n*(eps) of the NTK on the sawtooth vs depth L, "
    "empirical KRR, and the exact network's 6L+1 parameters (a size, not a sample complexity). "
    "Right: n*(0.1) by adaptive search on the same seeds and splits: the trained fc:depth=2 net "
    "on the angle u, the NTK of that architecture and input, and the (cos, sin) NTK; median seed "
    "with its order-statistic CI, arrows from a cap: censored (a bound).",
    "e3b_parity": "E3b. Sparse parity on d = 20: n*(0.1) vs the order k for NTK regression "
    "(ridgeless and validation-tuned ridge) and the trained two-layer net of the same "
    "architecture, per (activation, b_std); median seed with its order-statistic CI, arrows from "
    "a cap: censored (a bound); dashed: eigenlearning.",
    "e4_trees": "E4. Compositional trees (d = 40; one panel per arity and node): n*(0.1) vs "
    "depth L on the same nested pools and test points for the tree NTK (ridgeless; tuned ridge "
    "in paper), the trained tree network (same architecture), and in paper the fc NTK and fc "
    "network; median seed with its order-statistic CI (12 seeds in quick: [X(3), X(10)]); "
    "arrows: not reached by n_max (up) or reached at n_min (down), a bound, not a point; lines: "
    "eigenlearning theory (to L = 6 for the tree NTK), hollow where theory is not valid. Panel "
    "titles: the target's kurtosis E(y - Ey)^4 / Var(y)^2 per depth (see the E4 families table). "
    "Quick: tanh trees at L = 3, 4, 5 and the negative control (linear nodes: a degree-1 target "
    "at every depth). The claims' verdicts are written above the figure.",
    "e5_theory": "E5. Eigenlearning learning curves (lines) against empirical ridgeless NTK "
    "regression (points); relative test MSE vs n. Solid: theory within its validity; dotted: "
    "beyond it; theory below the axis (0 once n covers every distinct input) is not drawn.",
    "e6_lazy_rich": "E6. Centred alpha (f - f0) networks on parity:d=12,k=3 at n = 600, full-batch "
    "gradient descent on the loss / alpha^2: relative test MSE vs alpha; dashed: ridgeless NTK "
    "regression on the same n.",
    "e7_dichotomy": "E7. Left: kernels' n*(0.1) against Fourier complexity (average Walsh degree). "
    "Right: trained networks' n*(0.1) against architectural complexity (number of constituents); "
    "arrows from a cap: censored. Above: the verdicts of E4's kernel and net dichotomy claims.",
    "e9_rhm": "E9. Random hierarchy model. Top (s = 2, n_c = 2, label +-1): n*(0.3), the "
    "regression error relative to the label variance, of the trained CNN (filters = strides = "
    "s, shared weights), its NTK, the trained fc net and the fc NTK; left: vs depth L at fixed "
    "v, m; right: vs m = v at fixed L; median seed with its order-statistic CI, arrows from a "
    "cap: censored; dotted: the published P* = n_c m^L (Cagnetta et al., PRX 2024) with "
    "prefactor 1; grey: the number of valid strings n_c m^(2^L - 1). Bottom: the published "
    "regime (paper profile; claims E9-P-nc2, E9-P-nc4, E9-P-nc-ratio): v = 8, one-hot labels, "
    "P* the fewest training strings at which the test classification error (argmax) is at most "
    "eps_rand / 10 = 0.1 (1 - 1/n_c), i.e. 0.05 for n_c = 2 and 0.075 for n_c = 4 (Cagnetta et "
    "al., PRX 2024), log-log against n_c m^L (each trained-CNN point labelled with its cell m, "
    f"L; the claims read a seed whose P* may lie beyond {100 * PSTAR_REGIME_FRACTION:g}% of "
    "its cell's valid strings as censored there, a bound); "
    "one colour per n_c; filled: the trained CNN (the claims' predictor), open: its NTK "
    "(KRR; where searched), drawn just right of it; median seed with its order-statistic CI, "
    "arrows from a cap: censored (up: not reached by n_max); dotted: P* = n_c m^L. The claims' "
    "verdicts are written above the figure.",
    "e8_universality": "E8. Universality. Heat maps: eigenlearning n*(0.1) (log10; hatched: not "
    "reached by the largest n, blank: not run in this profile, small dot: outside the theory's "
    "validity, n* above 10% of the distinct inputs) of each activation's NTK on sparse "
    "parity d = 12 for b_std = 0, 0.1, 1, on the sawtooth and the E4 trees (b_std = 0.1), and "
    "of fc:depth=2 with residual blocks or LayerNorm. Bottom right: per claim, the ratio "
    "n*(own tree NTK) / n*(trained tree net) of the median seeds against depth L on the "
    "random-node trees (same architecture, activation and splits; arrows: a bound, one side "
    "censored), with the median seed's growth per level and the verdict.",
    "e8_modifications": "E8's modifications (full profile). One panel per modification of the "
    "headline's relu tree net on tanh-node trees (d = 2^L): n*(0.1) against depth L of the "
    "trained net (circles) and of its own NTK (squares), median seed with its order-statistic "
    "CI, arrows from a cap: censored; crosses: the predictions sealed before the cells ran (x: "
    "the NTK's eigenlearning n*; +: the net's from the law fitted on E4 and E10, the same for "
    "every modification at one depth).",
    "e10_predict": "E10. Predicted against measured n*(eps), log-log (eps 0.1 for E4 and E8, 0.3 "
    "for E9's regression cells; each point predicted at its own eps): the kernel's eigenlearning "
    "n* and the trained net's n* from the constituent law fitted on the other families (filled: "
    "held out; hollow: in-sample; bars: 95% prediction intervals; triangles: censored).",
    "e11_after_kernel": "E11. Kernel-target alignment at initialisation and after training, and "
    "the relative weight movement, against depth L on tanh trees (rich nets and the lazy "
    "control).",
    "spectra": "Spectra of the zoo: share of variance per frequency (circle) and per Walsh degree "
    "(hypercube).",
}

GLOSSARY = [
    "- **relative MSE**: test mean squared error divided by the target's exact variance "
    "(1 = predicting the mean).",
    "- **n\\*(eps)**: the sample complexity, the smallest number of training samples at which the "
    "relative test MSE reaches eps; measured by an adaptive search over n per seed (geometric "
    "bracketing, then bisection to a factor 1.25) and read from the median seed; *censored* when "
    "not reached by the largest n searched (> n_max) or already reached at the smallest "
    "(<= n_min).",
    "- **Fourier complexity**: how a target's Walsh/Fourier weight spreads over degrees or "
    "frequencies (here the average degree); governs kernel methods.",
    "- **architectural complexity**: the number of small constituents a target is built from; "
    "the theory says it governs trained networks.",
    "- **CI**: 95% unless stated; each states its method. Below 8 seeds no CI is given. "
    "Deterministic theory has no CI.",
    "- **too few depths**: the rule asks for more resolved depths than the profile gives.",
]


def evaluate_all(profile):
    """Every config's claims evaluated, and its budget lines as run.

    Args:
        profile: the profile read.

    Returns:
        (claims, budget lines, experiment names).
    """
    claims, budget_lines, names = [], [], []
    for path in CONFIGS:
        cfg = runs_config.load_config(path)
        names.append(cfg["name"])
        for c in claims_mod.parse_claims(cfg, path):
            claims.append(claims_mod.evaluate(c, cfg["name"]))
        for b in budgets(stored_config(cfg, profile), profile):
            budget_lines.append(f"- {cfg['name']}: {b}")
    return claims, budget_lines, names


#: the claims the answer box leads with: the headline, then the activation falsifier
ANSWER_IDS = ("E4-Q1-tree-tanh", "E8-universal")


def answer_lines(claims):
    """The answer first: a short table of the headline claims this profile
    decided (claim, value, CI, verdict, caveat: robustness or the detail's
    first clause)."""
    rows = [c for i in ANSWER_IDS for c in claims if c["id"] == i and c["verdict"] != rules.NOT_RUN]
    if not rows:
        return []
    out = [
        "## The answer",
        "",
        "| claim | value | CI | verdict | caveat |",
        "|---|---|---|---|---|",
    ]
    for c in rows:
        caveat = robust_text(c) if c.get("robustness") else str(c.get("detail", "-")).split(";")[0]
        text = c["claim"] if len(c["claim"]) <= 160 else c["claim"][:157] + "..."
        out.append(f"| {c['id']}: {text.replace('|', '/')} | {value_text(c)} | {ci_text(c)} | "
                   f"**{c['verdict']}** | {caveat.replace('|', '/')} |")  # fmt: skip
    return out + [""]


def folded_lines(claims):
    """One line per larger profile: the claims it decides, not run here."""
    by = {}
    for c in claims:
        if c["verdict"] == rules.NOT_RUN:
            by.setdefault(c["profile"], []).append(c["id"])
    return [f"- {prof} profile ({len(ids)} claims, not run here): {', '.join(ids)}"
            for prof, ids in by.items()]  # fmt: skip


def summary_lines(claims, profile):
    """The report's head, the answer, the summary table of the claims this
    profile decides, the others folded by profile, then the family-wise line."""
    run = [c for c in claims if c["verdict"] != rules.NOT_RUN]
    folded = folded_lines(claims)
    lines = [
        f"# ntkgap report ({profile} profile)",
        "",
        *answer_lines(claims),
        "Generated by `experiments/report.py` from `results/`: every claim, its statistic and "
        "its decision rule are declared in `experiments/*.toml` and evaluated by "
        "`ntkgap.verdicts.claims`.",
        "",
        "Each claim names the profile that decides it; the claims of a larger profile than this "
        "one are listed after the table, one line per profile. Value: the claim's "
        "statistic, described in 'value is' with its unit in 'unit'; CI: its confidence "
        "interval ('open': censoring left that end unbounded; 'not estimable': the data give no "
        "such end); robustness: the verdict again at eps = 0.05 and with twice the net's step "
        "budget at the deepest depth ('not run' when this profile holds no such reruns; E10's "
        "claims: with each net pair's largest stored budget, 'not applicable' to E10-kernel, "
        "whose rows read no net, and no eps recheck).",
        *(["", STALE_NOTE] if any(c.get("stale_cells") for c in claims) else []),
        "",
        *SUMMARY_HEAD,
        *map(summary_row, run),
        *(["", "Claims of larger profiles, each decided when its profile runs:", *folded]
          if folded else []),
    ]  # fmt: skip
    return lines + ["", claims_mod.family_wise(claims)["text"]]


def detail_lines(claims):
    """One section per claim: its statement, rule, measurement and verdict."""
    lines = ["## Claims in detail", ""]
    for c in (c for c in claims if c["verdict"] != rules.NOT_RUN):  # the others: folded above
        lines += [
            f"### {c['id']}",
            "",
            f"- claim: {c['claim']} (paper: {c['paper']})",
            *([f"- note: {c['note']}"] if c.get("note") else []),
            f"- predictors: {', '.join(c['predictors']) or '-'}; statistic: `{c['statistic']}`",
            f"- rule: {c['rule']['text']}",
            f"- why this threshold: {c['rule'].get('reason', '-')}",
            f"- measured: {c['detail']}",
        ]
        if c.get("ci_method"):
            lines.append(f"- CI method: {c['ci_method']}")
        if "depths_resolved" in c:
            lines.append(
                f"- depths: {c['depths_resolved']} resolved, {c['depths_bounded']} bounded "
                "(a bound counts when it already places the depth on one side of the rule)"
            )
        if c.get("robustness"):
            lines.append(f"- robustness: {robust_text(c)}")
        lines += [f"- verdict: **{c['verdict']}**", ""]
    return lines


def family_lines():
    """E4's target families: kurtosis, max |y| and average Walsh degree."""
    lines = [
        "## E4 target families: tails and spectrum",
        "",
        "Kurtosis E(f - Ef)^4 / Var(f)^2 (~: a fixed-seed Monte Carlo estimate over 2^20 points, "
        "else exact on the support cube) and max |f| per family and depth "
        "(`tables.family_moments`); average Walsh degree from the experiment's stored spectrum "
        "cells (-: none stored).",
        "",
        "| family | L | kurtosis | max abs y | average Walsh degree |",
        "|---|---|---|---|---|",
    ]
    for r in tables.family_moments("e4_trees"):
        k = "-" if r["kurtosis"] is None else ("" if r["exact"] else "~") + fmt(r["kurtosis"])
        lines.append(
            f"| {r['family']} | {r['L']} | {k} | {fmt(r['max_abs'])} | {fmt(r['average_degree'])} |"
        )
    return lines


def figure_lines():
    """The glossary, then every figure drawn by this profile with its caption."""
    lines = ["", "## Glossary", "", *GLOSSARY, "", "## Figures", ""]
    lines += ["Each figure writes above it the verdicts of the claims it shows.", ""]
    folder = config.figures_dir(os.path.join(os.path.dirname(HERE), "figures"))
    for name, cap in CAPTIONS.items():
        if os.path.exists(os.path.join(folder, f"{name}.png")):  # drawn by this profile
            lines += [f"![{name}](figures/{name}.png)", "", f"*{cap}*", ""]
    return lines


def budget_section(budget_lines, names, profile):
    """The networks' training budgets and the learning rates chosen at a grid's end."""
    edge_lines, two_rate = [], 0
    for name in names:
        for r in selection.lr_edges(name):
            if len(r["grid"]) == 2:  # every choice is an end
                two_rate += r["choices"]
            elif r["at_low"] or r["at_high"]:
                edge_lines.append(
                    f"- {name}, {r['method']} {r['arch']}, grid {', '.join(map(fmt, r['grid']))}: "
                    f"largest rate chosen {r['at_high']} of {r['choices']} times, "
                    f"smallest {r['at_low']}"
                )
    return [
        "## Network training budgets",
        "",
        f"From the [{profile}] tables of `experiments/*.toml` as last run (each network keeps its "
        "best validation checkpoint):",
        "",
        *budget_lines,
        "",
        "Learning rates chosen at an end of their grid (the best rate may lie outside it; "
        "`selection.lr_edges`):",
        "",
        *(edge_lines or ["- none"]),
        f"- and {two_rate} choices between two rates only (each is an end of its grid)",
    ]


def main(profile, summary_only=False):
    """Write REPORT.md and results/summary.json for ``profile``.

    Args:
        profile: the profile whose cells are read.
        summary_only: write results/summary.json alone (``make`` does so before it draws the
            figures, which read their verdicts from it instead of deciding them again).

    Returns:
        None.
    """
    os.environ["NTKGAP_PROFILE"] = profile  # only this profile's cells (store.results)
    claims, budget_lines, names = evaluate_all(profile)
    public = [{k: v for k, v in c.items() if k != "data"} for c in claims]
    atomic_write(
        os.path.join(config.results_dir(), "summary.json"),
        dumps({"profile": profile, "claims": public}, indent=1),
    )
    if summary_only:
        print(f"results/summary.json: {len(claims)} claims")
        return
    lines = summary_lines(claims, profile) + [""] + detail_lines(claims) + family_lines()
    lines += figure_lines() + budget_section(budget_lines, names, profile)
    atomic_write(config.report_path(), "\n".join(lines) + "\n")
    print(f"REPORT.md: {len(claims)} claims: " + ", ".join(f"{c['id']} {c['verdict']}"
                                                          for c in claims))  # fmt: skip


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--summary"]
    main(args[0] if args else "quick", summary_only="--summary" in sys.argv[1:])
