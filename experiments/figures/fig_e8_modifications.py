"""E8's modifications: per modification of the headline's relu net, n*(0.1)
against tree depth L of the trained net and of its own NTK (median seed,
order-statistic CI; a censored search an arrow from its bound), beside the
predictions sealed before the cells ran (the NTK's n* from eigenlearning
theory, the net's from the law fitted on E4 and E10). The verdicts stand
above."""

import os

import style  # noqa: I001  (first: puts experiments/ on sys.path)
from style import plt

from ntkgap.runs import config as runs_config, store
from ntkgap.verdicts import claims, sealed_statistics, sealing, selection

EXP = "e8_modifications"
CONFIG = os.path.join(style.ROOT, "experiments", f"{EXP}.toml")
EPS = 0.1
FAMILY = {"name": "tree", "arity": 2, "node": "tanh"}
#: the depths the design holds
DEPTHS = (3, 4, 5)


def modifications(cfg):
    """[(name, kernel Side, net Side)] of the config's E8-mod-* claims, in order."""
    out = []
    for c in claims.parse_claims(cfg, CONFIG):
        if c.id.startswith("E8-mod-"):
            sides = (selection.Side.parse(c.params[k]) for k in ("a", "b"))
            out.append((c.id[len("E8-mod-") :], *sides))
    return out


def sealed(cfg, net):
    """{L: sealed prediction} of a net side's units ([[seal]] tables)."""
    out = {}
    for table in cfg.get("seal", []):
        for target, arch, _, _ in sealed_statistics.units(table):
            if net.has_arch(arch):
                path = sealing.prediction_path(target, arch, EPS)
                rec = store.load_result(path) if os.path.exists(path) else None
                if rec is not None:
                    out[selection.depth_of(target)] = rec["prediction"]
    return out


def draw(ax, name, kernel, net, preds):
    """One modification's panel; False when nothing of it is stored."""
    fc = kernel.arch.startswith("fc")
    series = ((kernel, "ntk" if fc else "tree_ntk", "s", "own NTK (KRR)", -0.06),
              (net, "net" if fc else "tree", "o", "trained net", 0.06))  # fmt: skip
    drawn = False
    for side, colour, marker, label, dx in series:
        for L, rec in selection.nstar_by_depth(EXP, side, FAMILY, EPS).items():
            style.nstar_point(ax, L + dx, rec["median"], style.COLORS[colour], marker)
            drawn = True
        ax.plot([], [], marker, color=style.COLORS[colour], label=label)
    for key, colour, marker, label in (("kernel_n_star", "tree_theory", "x", "sealed: theory"),
                                       ("net_n_star", "ridge", "+", "sealed: law")):  # fmt: skip
        pts = [(L, p[key]) for L, p in sorted(preds.items()) if p.get(key)]
        if pts:
            ax.plot(*zip(*pts), marker, color=style.COLORS[colour], ms=7, ls="none", label=label)
    ax.set(title=name, xlabel="depth L", yscale="log", xticks=DEPTHS,
           xlim=(DEPTHS[0] - 0.4, DEPTHS[-1] + 0.4))  # fmt: skip
    if not drawn:
        style.no_data(ax, f"E8-mod-{name}")
    return drawn


def main():
    cfg = runs_config.load_config(CONFIG)
    mods = modifications(cfg)
    cols = 4
    rows = -(-len(mods) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3 * cols, 2.6 * rows), squeeze=False)
    for ax, (name, kernel, net) in zip(axes.flat, mods):
        draw(ax, name, kernel, net, sealed(cfg, net))
    for ax in axes.flat[len(mods) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"n*({EPS}), median seed")
    style.bound_legend(axes.flat[0])
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, bbox_to_anchor=(0.5, -0.04))
    fig.tight_layout()
    style.state_verdicts(fig, EXP)
    style.save(fig, EXP)


main()
