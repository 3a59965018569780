"""REPORT.md and results/summary.json from the stored results: every claim
declared in an ``experiments/*.toml`` config, evaluated by ``ntkgap.verdicts.claims``
(its statistic, CI and pre-registered rule all come from the config; this
script holds no rule), then the figures with their captions and the
training budgets of the profile as run."""

import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from ntkgap._infra import config
from ntkgap._infra.files import atomic_write, dumps
from ntkgap.runs import config as runs_config
from ntkgap.runs import store
from ntkgap.verdicts import claims as claims_mod
from ntkgap.verdicts import selection, tables

PROFILE = sys.argv[1] if len(sys.argv) > 1 else "quick"
os.environ["NTKGAP_PROFILE"] = PROFILE  # only this profile's cells (store.results)
CONFIGS = sorted(glob.glob(os.path.join(HERE, "*.toml")))


def stored_config(cfg):
    """The config as last run (saved beside its results), else the repo's."""
    saved = store.load_result(
        os.path.join(config.results_dir(), cfg["name"], f".config-{PROFILE}.json")
    )
    return saved or cfg


def budgets(cfg):
    """One line per network grid of the profile: width, steps, optimiser..."""

    def j(v):
        return ", ".join(map(str, v)) if isinstance(v, list) else str(v)

    out = []
    for g in cfg.get(PROFILE, {}).get("grid", []):
        if g["method"] not in ("net", "net_search"):
            continue
        lr = g.get("lr", 0.001)
        out.append(
            f"{j(g['arch'])}: width {j(g['width'])}, at most {j(g.get('steps', 5000))} steps of "
            f"{g.get('optimizer', 'adam')}"
            + (
                f" (early stop: patience {g['patience']} checks of {g.get('eval_every', 100)})"
                if g.get("patience")
                else ""
            )
            + (f", lr chosen on validation from {j(lr)}" if isinstance(lr, list) else f", lr {lr}")
            + (f", batch {j(g['batch'])}" if g.get("batch") else ", full batch")
            + (f", alpha {j(g['alpha'])}" if g.get("alpha") else "")
            + (f", {len(g['seeds'])} seeds" if isinstance(g.get("seeds"), list) else "")
        )
    return out


def fmt(v):
    if v is None:
        return "-"
    return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.3e}"


claims, budget_lines, names = [], [], []
for path in CONFIGS:
    cfg = runs_config.load_config(path)
    names.append(cfg["name"])
    for c in claims_mod.parse_claims(cfg, path):
        claims.append(claims_mod.evaluate(c, cfg["name"]))
    for b in budgets(stored_config(cfg)):
        budget_lines.append(f"- {cfg['name']}: {b}")

captions = {
    "e1_spectra": "E1. Left: circle eigenvalues of the ReLU NTK for fc depths 1-4 with fitted "
    "log-log slopes (paper: k^-2). Right: hypercube eigenvalue per character vs degree k.",
    "e2_control": "E2. Band-limited circle targets: relative test MSE vs training samples n for "
    "NTK regression and trained fc:depth=2 networks (median over seeds, bars min-max). "
    "Paper: no gap.",
    "e3a_sawtooth": "E3a. Left: eigenlearning n*(eps) of the NTK on the sawtooth vs depth L, "
    "empirical KRR, and the exact network's 6L+1 parameters (a size, not a sample complexity). "
    "Right: n*(0.1) by adaptive search on the same seeds and splits: the trained fc:depth=2 net "
    "on the angle u, the NTK of that architecture and input, and the (cos, sin) NTK; median seed "
    "with its order-statistic CI, triangles: censored.",
    "e3b_parity": "E3b. Sparse parity on d = 20: n*(0.1) vs the order k for NTK regression "
    "(ridgeless and validation-tuned ridge) and the trained two-layer net of the same "
    "architecture, per (activation, b_std); median seed with its order-statistic CI, triangles: "
    "censored; dashed: eigenlearning.",
    "e4_trees": "E4. Compositional trees (d = 40; one panel per arity and node, its kurtosis per "
    "depth in the title; their kurtosis, max |y| and Walsh degree in the table above) and random "
    "layered circuits (fan-in 3, a DAG over 2^L inputs, seed 1; the tree predictors are a "
    "misspecified control there, theory only, and the grey line counts its 2^(2^L) support "
    "configurations): "
    "n*(0.1) vs depth L on the same splits for the tree NTK (ridgeless, and "
    "with its ridge tuned on the nets' validation split), the trained tree network (same "
    "architecture), the fc NTK and the trained fc network; median seed with its order-statistic "
    "CI; triangles: not reached by n_max (up) or reached at n_min (down); lines: eigenlearning "
    "theory, hollow where n* exceeds 10% of the distinct inputs (theory not valid there); grey: "
    "the number of leaf configurations 2^(arity^L), which bounds the tree predictors' n*. Test "
    "points: every leaf configuration outside the pool at L <= 3 for the tree predictors "
    "(exact), the same points for the fc ones on trees; on layered circuits fresh cube points, "
    "whose support configurations every fc pool of n >= 16 (L = 2) or > 256 (L = 3) has seen; "
    "2,048 random ones at L = 4 (quick). Last panel: the lazy tree network "
    "(centred alpha = 100, gradient descent) beside the tree NTK's regression at the same n, "
    "seeds and test points.",
    "e5_theory": "E5. Eigenlearning learning curves (lines) against empirical ridgeless NTK "
    "regression (points); relative test MSE vs n.",
    "e6_lazy_rich": "E6. Centred alpha (f - f0) networks on parity:d=12,k=3 at n = 600, full-batch "
    "gradient descent on the loss / alpha^2: relative test MSE vs alpha; dashed: ridgeless NTK "
    "regression on the same n.",
    "e7_dichotomy": "E7. Left: kernels' n*(0.1) against Fourier complexity (average Walsh degree). "
    "Right: trained networks' n*(0.1) against architectural complexity (number of constituents).",
    "e9_rhm": "E9. Random hierarchy model (s = 2, n_c = 2, label +-1): n*(0.3), the regression "
    "error relative to the label variance (the paper's P* is for classification error), of the "
    "trained CNN (filters = strides = s, shared weights), its NTK, the trained fc net and the fc "
    "NTK; left: vs depth L at fixed v, m; right: vs m = v at fixed L; median seed with its "
    "order-statistic CI, triangles not reached by n_max; dotted: the published P* = n_c m^L "
    "(Cagnetta et al., PRX 2024) with prefactor 1; grey: the number of valid strings "
    "n_c m^(2^L - 1).",
    "e8_universality": "E8. Universality. Heat maps: eigenlearning n*(0.1) (log10; '>': not "
    "reached by the largest n, '-': not run in this profile, '*': outside the theory's validity, "
    "n* above 10% of the distinct inputs) of each activation's NTK on sparse "
    "parity d = 12 for b_std = 0, 0.1, 1, on the sawtooth and the E4 trees (b_std = 0.1), and "
    "of fc:depth=2 with residual blocks or LayerNorm. Bottom right: per claim, the ratio "
    "n*(own tree NTK) / n*(trained tree net) of the median seeds against depth L on tanh trees "
    "(same architecture, activation and splits), with the median seed's growth per level and "
    "the verdict.",
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

lines = [
    f"# ntkgap report ({PROFILE} profile)",
    "",
    "Generated by `experiments/report.py` from `results/`: every claim, its statistic and its "
    "decision rule are declared in `experiments/*.toml` and evaluated by `ntkgap.verdicts.claims`.",
    "",
    "| claim | verdict | value | CI | seeds |",
    "|---|---|---|---|---|",
]
for c in claims:
    ci = f"[{fmt(c['lo'])}, {fmt(c['hi'])}]" if c["lo"] is not None or c["hi"] is not None else "-"
    lines.append(
        f"| {c['id']} | **{c['verdict']}** | {fmt(c['value'])} | {ci} | {c['seeds'] or '-'} |"
    )
lines += ["", "## Claims in detail", ""]
for c in claims:
    lines += [
        f"### {c['id']}",
        "",
        f"- claim: {c['claim']} (paper: {c['paper']})",
        f"- predictors: {', '.join(c['predictors']) or '-'}; statistic: `{c['statistic']}`",
        f"- rule: {c['rule']['text']}",
        f"- measured: {c['detail']}",
    ]
    if c.get("ci_method"):
        lines.append(f"- CI method: {c['ci_method']}")
    lines += [f"- verdict: **{c['verdict']}**", ""]
lines += ["## E4 target families: tails and spectrum", ""]
lines += [
    "Kurtosis E(f - Ef)^4 / Var(f)^2 (~: a fixed-seed Monte Carlo estimate over 2^20 points, "
    "else exact on the support cube) and max |f| per family and depth (`tables.family_moments`); "
    "average Walsh degree from the experiment's stored spectrum cells (-: none stored).",
    "",
    "| family | L | kurtosis | max abs y | average Walsh degree |",
    "|---|---|---|---|---|",
]
for r in tables.family_moments("e4_trees"):
    k = "-" if r["kurtosis"] is None else ("" if r["exact"] else "~") + fmt(r["kurtosis"])
    lines.append(
        f"| {r['family']} | {r['L']} | {k} | {fmt(r['max_abs'])} | {fmt(r['average_degree'])} |"
    )
lines += ["", "## Glossary", "", *GLOSSARY, "", "## Figures", ""]
for name, cap in captions.items():
    lines += [f"![{name}](figures/{name}.png)", "", f"*{cap}*", ""]
lines += [
    "## Network training budgets",
    "",
    f"From the [{PROFILE}] tables of `experiments/*.toml` as last run (each network keeps its best "
    "validation checkpoint):",
    "",
    *budget_lines,
]
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
lines += [
    "",
    "Learning rates chosen at an end of their grid (the best rate may lie outside it; "
    "`selection.lr_edges`):",
    "",
    *(edge_lines or ["- none"]),
    f"- and {two_rate} choices between two rates only (each is an end of its grid)",
]
atomic_write(config.report_path(), "\n".join(lines) + "\n")
public = [{k: v for k, v in c.items() if k != "data"} for c in claims]
atomic_write(
    os.path.join(config.results_dir(), "summary.json"),
    dumps({"profile": PROFILE, "claims": public}, indent=1),
)
print(f"REPORT.md: {len(claims)} claims: " + ", ".join(f"{c['id']} {c['verdict']}" for c in claims))
