"""The spectrum report of a target: its power per frequency (circle) or
Walsh degree (hypercube), Fourier-complexity and architectural measures.
This is what ``ntkgap spectrum --json`` prints."""

from __future__ import annotations

import numpy as np

from ntkgap._infra.files import save_figure
from ntkgap.spectral import complexity, fourier, walsh
from ntkgap.targets import SCHEMAS, parse_spec, tree_power
from ntkgap.targets.domains import Circle
from ntkgap.targets.variance import target_variance


def default_kmax(target) -> int:
    """Highest frequency of a circle target's spectrum report.

    Args:
        target: a circle target.

    Returns:
        int: 2^(L + 3) for a sawtooth of depth L, else max(16, target.K).
    """
    if hasattr(target, "L") and target.spec.name == "sawtooth":
        return 2 ** (target.L + 3)
    return max(16, getattr(target, "K", 16))


def report(target, *, kmax: int | None = None) -> dict:
    """The spectrum report of a target, as ``ntkgap spectrum --json`` prints it.

    Args:
        target: a parsed target (circle or hypercube).
        kmax: the highest circle frequency (default ``default_kmax``);
            unused on the hypercube.

    Returns:
        JSON-ready dict with ``target``, ``domain``, ``variance``, ``mean``,
        per-frequency ``frequency``/``power`` (circle) or per-degree
        ``degree``/``weight`` and ``support`` (hypercube), ``complexity``
        and ``architecture``; see ``ntkgap spectrum --help``.
    """
    out = {"target": str(target.spec), "domain": str(target.domain)}
    if hasattr(target, "spectrum_report"):  # a token-string target (the RHM)
        out.update(target.spectrum_report())
        out["architecture"] = target.architecture()
        return out
    if isinstance(target.domain, Circle):
        kmax = kmax or default_kmax(target)
        power = fourier.target_power(target, kmax)
        second = target.variance + target.mean**2
        abs_c = np.concatenate([[np.sqrt(power[0])], np.repeat(np.sqrt(power[1:] / 2), 2)])
        out.update(
            variance=target.variance,
            mean=target.mean,
            frequency=list(range(kmax + 1)),
            power=power.tolist(),
            dominant_frequency=complexity.dominant(power),
            truncated_power=float(max(second - power.sum(), 0.0)),
        )
    elif _by_composition(target):
        return _composed_report(out, target)
    else:
        spec = walsh.walsh_spectrum(target)
        power = spec.degree_profile()
        mean = float(spec.coefficients[0])
        out.update(
            variance=target_variance(target),
            mean=mean,
            support=list(target.support),
            degree=list(range(power.size)),
            weight=power.tolist(),
            dominant_degree=complexity.dominant(power),
        )
        abs_c = np.abs(spec.coefficients)
    out["complexity"] = complexity.measures(power, abs_c)
    out["architecture"] = target.architecture()
    return out


def _by_composition(target) -> bool:
    """A ``tree`` target too wide for the exact transform: its spectrum comes
    by composition over the tree (``ntkgap.targets.tree_power``)."""
    spec = getattr(target, "spec", None)
    return spec is not None and spec.name == "tree" and len(target.support) > walsh.MAX_BITS


def _composed_report(out: dict, target) -> dict:
    """The hypercube part of ``report`` for a tree target by composition:
    the same keys; the variance is the weights' sum (exact), and the L1 norm
    and sparsity come only where f_hat is constant per shape (``tanh``)."""
    prof = tree_power.tree_power_profile(target)
    power = prof["weight"]
    out.update(
        variance=float(power[1:].sum()),
        mean=prof["mean"],
        support=list(target.support),
        degree=list(range(power.size)),
        weight=power.tolist(),
        dominant_degree=complexity.dominant(power),
        method="composition over the tree (no 2^s transform)",
    )
    out["complexity"] = complexity.measures(power)
    for key in ("l1_norm", "sparsity"):
        if key in prof:
            out["complexity"][key] = prof[key]
    out["architecture"] = target.architecture()
    return out


def _coordinates(support, runs: int = 6) -> str:
    """0-based coordinates by their 0-based names (as DAG files and the
    target specs number them), runs joined: ``x_0..x_3, x_8``."""
    groups = []
    for j in support:
        if groups and j == groups[-1][1] + 1:
            groups[-1][1] = j
        else:
            groups.append([j, j])
    names = [
        f"x_{a}..x_{b}" if b > a + 1 else ", ".join(f"x_{j}" for j in range(a, b + 1))
        for a, b in groups
    ]
    return ", ".join(names[:runs]) + (", ..." if len(names) > runs else "")


def _support_line(rep: dict) -> list[str]:
    """The coordinates a hypercube target reads, and what its seed chose
    (the seed field's own doc, where its schema documents one)."""
    if "support" not in rep:
        return []
    spec = parse_spec(rep["target"]) if not rep["target"].startswith("file:") else None
    seed = SCHEMAS[spec.name].fields.get("seed") if spec is not None else None
    why = f" (seed={spec['seed']} chose it; seed {seed.doc})" if seed and seed.doc else ""
    return [f"support: {_coordinates(rep['support'])}{why}"]


def table(rep: dict) -> str:
    """A readable table of a spectrum report (the CLI's output without --json).

    The constant term (frequency or degree 0) is the squared mean: it gets a
    line of its own, and the share column is each term's share of the
    variance, so the non-constant shares sum to 100% (less any power beyond
    a circle report's kmax).

    Args:
        rep: a dict from ``report``.

    Returns:
        str: the header, the support (hypercube), the constant term, lines of
        power (or weight) and share of the variance per frequency/degree, then
        the complexity and architecture measures.
    """
    key, val = ("frequency", "power") if "frequency" in rep else ("degree", "weight")
    var = rep["variance"] + rep["mean"] ** 2
    # a mean below float64 rounding of E f^2 is an exact zero computed inexactly
    mean = rep["mean"] if abs(rep["mean"]) > 1e-14 * max(var, 1e-300) ** 0.5 else 0.0
    const = sum(p for k, p in zip(rep[key], rep[val]) if k == 0)
    lines = [
        f"target {rep['target']} on {rep['domain']}: mean {mean:.6g}, "
        f"variance {rep['variance']:.6g}",
        *_support_line(rep),
        *([f"computed by {rep['method']}"] if "method" in rep else []),
        f"constant term ({key} 0) = mean^2 = {const:.6e}, "
        f"{const / var if var > 0 else 0.0:.2%} of E f^2 (not in the share column)",
        f"{key:>10} {val:>14} {'share of variance':>18}",
    ]
    for k, p in zip(rep[key], rep[val]):
        if k != 0 and p > 1e-14 * var:
            share = f"{p / rep['variance']:.2%}" if rep["variance"] > 0 else "-"
            lines.append(f"{k:>10} {p:>14.6e} {share:>18}")
    lines += _degree_note(rep)
    lines.append(
        "complexity: "
        + ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in rep["complexity"].items()
        )
    )
    lines.append(
        "architecture: "
        + ", ".join(f"{k}={v}" for k, v in rep["architecture"].items() if v is not None)
    )
    return "\n".join(lines)


def plot(rep: dict, path: str) -> None:
    """Bar plot of a spectrum report's power per frequency/degree, saved to a file.

    Args:
        rep: a dict from ``report``.
        path: the figure file to write.

    Returns:
        None.
    """
    # import-cost: matplotlib (most of a second) loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    key, val = ("frequency", "power") if "frequency" in rep else ("degree", "weight")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(rep[key], rep[val], width=0.8)
    if key == "frequency":
        ax.set_yscale("log")
    ax.set_xlabel(f"{key} k")
    ax.set_ylabel(f"{val} (sums to E f^2)")
    ax.set_title(rep["target"])
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def _degree_note(rep: dict) -> list:
    """On RHM strings: what a degree is there, and the Efron-Stein weights
    the JSON also carries (they spread over more degrees)."""
    if "weight_es_squared" not in rep:
        return []
    es = ", ".join(
        f"{k}: {w / rep['variance']:.1%}"
        for k, w in zip(rep["degree"], rep["weight_es_squared"])
        if k and w > 1e-14 * rep["variance"]
    )
    return [
        "degree k on valid strings = the number of token positions a function reads; the "
        "positions are dependent under the law of valid strings, so 'weight' is the "
        "orthogonal profile Var(P_k y) - Var(P_(k-1) y), P_k the projection onto functions "
        "of at most k positions (sums to the variance)",
        f"Efron-Stein weights sum_(|S|=k) E f_S^2 (JSON weight_es_squared, not orthogonal, "
        f"need not sum to 100%): {es}",
    ]
