"""E3b: sparse parity on d = 20: n*(0.1) vs the parity's order k for NTK
regression (ridgeless and with a validation-tuned ridge) and the trained
two-layer network, one panel per (activation, b_std), with eigenlearning;
below them the paper's own plot at k = 3: relative test MSE against n for
the NTK and the trained net, read from the searches' evaluations (kernel and
net start at the same n_min, so their bracketing n coincide, on the same
nested pools of the same seeds): median over the seeds evaluated at each n,
bars min to max."""

import style  # noqa: I001  (first: puts experiments/ on sys.path)
import analysis
import numpy as np
from style import plt

from ntkgap._infra import config
from ntkgap.verdicts import selection
from ntkgap.runs import store
from ntkgap.nets.arch import parse_arch

EXP = "e3b_parity"
PROFILE = config.profile() or "quick"
eps = analysis.EPS
SERIES = (  # (method, ridge, label, colour, marker)
    ("ntk_search", selection.RIDGELESS, "NTK regression, ridgeless", "ntk", "D"),
    ("ntk_search", "tuned", "NTK regression, tuned ridge", "ridge", "s"),
    ("net_search", selection.RIDGELESS, "trained 2-layer net", "net", "o"),
)
theory = {(c["target"], c["arch"]): r for c, r in store.results(EXP, "theory")}
archs = sorted({a for _, a in theory} | {c["arch"] for c, _ in store.results(EXP, "net_search")})
K3 = "parity:d=20,k=3"
k3_archs = sorted({c["arch"] for c, _ in store.results(EXP, "net_search") if c["target"] == K3})
cols = 2
rows = max(1, -(-len(archs) // cols))
k3_rows = -(-len(k3_archs) // cols)
fig, axes = plt.subplots(
    rows + k3_rows, cols, figsize=(4.4 * cols, 3.3 * (rows + k3_rows)), squeeze=False
)
k3_axes, axes = axes[rows:], axes[:rows]


def order(t):
    return selection.param_of(t, "k")


for ax, arch in zip(axes.ravel(), archs):
    th = sorted((order(t), r["n_star"][str(eps)]) for (t, a), r in theory.items() if a == arch)
    ks = [k for k, v in th if not v["censored"]]
    if ks:
        n = [v["n_star"] for _, v in th if not v["censored"]]
        valid = [v.get("theory_valid", True) for _, v in th if not v["censored"]]
        ax.plot(ks, n, "--", color=style.COLORS["theory"], lw=1, label="eigenlearning (NTK)")
        ax.plot(
            [k for k, ok in zip(ks, valid) if not ok],
            [x for x, ok in zip(n, valid) if not ok],
            "o",
            mfc="none",
            color=style.COLORS["theory"],
            label="theory not valid (n > 10% of inputs)",
        )
    searched = set()
    for i, (method, ridge, lab, ck, mk) in enumerate(SERIES):
        recs = selection.searches(EXP, selection.Side(method, arch, ridge), eps)
        for t, r in recs.items():
            med, x = r["median"], order(t) + (i - 1) * 0.08
            style.nstar_point(ax, x, med, style.COLORS[ck], mk)
            searched.add(order(t))
        ax.plot([], [], mk, color=style.COLORS[ck], label=lab)
    why = ""
    if len(searched) <= 1:  # say why a panel shows theory only, or one order
        what = f"searched at k = {min(searched)} only" if searched else "theory only: no searches"
        why = f"\n({what} at the {PROFILE} profile)"
    spec = parse_arch(arch).spec
    style.bound_legend(ax)
    ax.set(
        yscale="log",
        xlabel="parity order k (d = 20)",
        ylabel=f"n*({eps}) (median seed; bars: min-max over seeds)",
        title=f"act = {spec['act']}, b_std = {spec['b_std']:g}{why}",
        xticks=np.arange(2, 6),
    )
    style.major_log_labels_only(ax, which="y")


def error_curve(method, ridge, arch):
    """{n: [relative test MSE of each seed evaluated at n]} of the stored k = 3
    search of one predictor (its evaluations, pooled over the search's seeds).

    Args:
        method: ntk_search or net_search.
        ridge: the ridge side (selection.RIDGELESS or "tuned").
        arch: the architecture spec.

    Returns:
        dict, n ascending.
    """
    rec = selection.searches(EXP, selection.Side(method, arch, ridge), eps, lambda t: t == K3)
    out = {}
    for ev in rec.get(K3, {}).get("evaluations", []):
        out.setdefault(int(ev["n"]), []).append(float(ev["test_mse"]))
    return dict(sorted(out.items()))


for ax, arch in zip(k3_axes.ravel(), k3_archs):
    for method, ridge, lab, ck, mk in SERIES:
        curve = {n: v for n, v in error_curve(method, ridge, arch).items() if len(v) > 1}
        if not curve:
            continue
        n = np.array(list(curve))
        med = np.array([np.median(v) for v in curve.values()])
        lo = med - np.array([min(v) for v in curve.values()])
        hi = np.array([max(v) for v in curve.values()]) - med
        ax.errorbar(n, med, yerr=[lo, hi], fmt=mk + "-", color=style.COLORS[ck], ms=3,
                    lw=1, capsize=2, label=lab)  # fmt: skip
    ax.axhline(eps, color="grey", lw=0.8, ls=":", label=f"eps = {eps}")
    spec = parse_arch(arch).spec
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="n (train + validation), d = 20, k = 3",
        ylabel="relative test MSE (median seed)",
        title=f"k = 3, act = {spec['act']}, b_std = {spec['b_std']:g}",
    )
    ax.legend(fontsize=6)
for ax in k3_axes.ravel()[len(k3_archs) :]:
    ax.set_visible(False)
for ax in axes.ravel()[len(archs) :]:
    ax.set_visible(False)
if not archs:
    ax = axes[0][0]
    ax.set_visible(True)
    style.no_data(ax, EXP)
else:
    axes[0][0].legend(fontsize=6)
fig.tight_layout()
style.state_verdicts(fig, EXP)
style.save(fig, "e3b_parity")
