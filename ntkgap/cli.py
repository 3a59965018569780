"""The command line: ``ntkgap <verb> [options]``.

Every verb takes ``--json`` (exactly one JSON object on stdout). Bad input
prints one line ``ntkgap: error: ...`` on stderr and exits with status 2;
no traceback, no partial output file (files are written atomically, last).
The theory and network verbs live here, the experiment verbs in
``ntkgap.cli_experiments``; the registry and shared helpers in
``ntkgap.cli_common``.
"""

from __future__ import annotations

import argparse
import json
import sys

import ntkgap
from ntkgap.cli_common import VERBS, Parser, check_out, emit, int_at_least, positive_float, verb
from ntkgap.errors import UsageError
from ntkgap.specs import raw_items


# ---------------------------------------------------------------- spectrum
def _spectrum_args(p):
    from ntkgap.targets import help_text

    p.add_argument("--target", required=True, help="target spec, e.g. sawtooth:L=3")
    p.add_argument(
        "--kmax",
        type=int_at_least(1),
        default=None,
        help="highest circle frequency reported (default: 8x the dominant one)",
    )
    p.add_argument("--plot", metavar="FILE", help="also draw the spectrum as a bar chart")
    p.epilog = help_text()


@verb("spectrum", "exact Fourier/Walsh spectrum and complexity of a target", _spectrum_args)
def _spectrum(args):
    from ntkgap._infra import memory
    from ntkgap.targets import parse_target, spectra

    target = parse_target(args.target)
    kmax = spectra.default_kmax(target) if args.kmax is None else args.kmax
    memory.check_sizes(memory.spectrum_estimates(target, kmax))
    if args.plot:
        check_out(args.plot, (".png", ".pdf", ".svg"))
    rep = ntkgap.spectrum(target, kmax=args.kmax)
    if args.plot:
        spectra.plot(rep, args.plot)
    emit(args, rep, spectra.table(rep))


def _fit_warnings(arch, target):
    """Warnings that the architecture does not match a DAG target's tree:
    the DAG is not a balanced tree, or its tree differs from ``arch``."""
    if arch.name != "tree" or not hasattr(target, "tree_arch"):
        return []
    want = target.tree_arch()
    if want is None:
        return [f"{target.spec} is not a balanced tree: {arch} does not follow its structure"]
    from ntkgap.nets.arch import parse_arch

    w = parse_arch(want).spec
    if (w["arity"], w["L"]) != (arch.spec["arity"], arch.spec["L"]):
        return [f"{target.spec} is the tree {want}, not {arch} (arity or depth differ)"]
    return []


def _warn(warnings):
    for w in warnings:
        sys.stderr.write(f"ntkgap: warning: {w}\n")


def _sizes(estimates, fix):
    """memory.check_sizes, its refusal naming what this verb can change."""
    from ntkgap._infra import memory
    from ntkgap.errors import MemoryLimitError

    try:
        memory.check_sizes(estimates)
    except MemoryLimitError as exc:
        msg = str(exc).replace("(lower the sizes)", f"({fix})")
        msg = msg.replace("kmax=", "degrees to ")  # the theory's own cap, not an option here
        raise UsageError(msg) from None


# ------------------------------------------------------------- kernel side
def _arch_target_args(p, target=True):
    from ntkgap.nets.arch import help_text as arch_help
    from ntkgap.targets import help_text as target_help

    p.add_argument("--arch", required=True, help="architecture spec, e.g. fc:depth=2,act=relu")
    if target:
        p.add_argument("--target", required=True, help="target spec, e.g. parity:d=20,k=3")
    p.epilog = arch_help() + ("\n" + target_help() if target else "")


def _eigenvalues_args(p):
    _arch_target_args(p, target=False)
    p.add_argument("--domain", required=True, help="circle or hypercube:d=D")
    p.add_argument(
        "--kmax",
        type=int_at_least(0),
        default=None,
        help="highest frequency/degree listed [16; tree archs: every degree, so the "
        "multiplicities sum to 2^leaves]",
    )


@verb("eigenvalues", "exact eigenvalues of an architecture's NTK on a domain", _eigenvalues_args)
def _eigenvalues(args):
    import numpy as np

    from ntkgap._infra import memory
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets.domains import Hypercube, parse_domain

    if raw_items(args.domain)[0] in ("rhm-strings", "rhm"):
        raise UsageError(
            f"--domain {args.domain}: an RHM's valid strings are fixed by its grammar, not by "
            "a domain spec, and have no closed-form NTK eigenvalues (allowed: circle, "
            "hypercube:d=D); sample-complexity and learning-curve --target rhm:... "
            "diagonalise the kernel on the enumerated strings"
        )
    arch, dom = parse_arch(args.arch), parse_domain(args.domain)
    arch.check_domain(dom)
    tree = arch.name == "tree"
    kmax = args.kmax if args.kmax is not None else (arch.leaves if tree else 16)
    memory.check_sizes(memory.eigen_estimates(arch, dom, kmax))
    es = ntkgap.eigensystem(arch, dom, kmax)
    keep = np.flatnonzero(np.asarray(es.k) <= kmax)  # tree kernels list blocks up to their cap
    if tree:  # by degree, then largest first: a block's class is its rank at its degree
        keep = keep[np.lexsort((-np.asarray(es.eigenvalue)[keep], np.asarray(es.k)[keep]))]
    lam = np.asarray(es.eigenvalue, dtype=np.float64)[keep]
    mult = np.asarray(es.multiplicity, dtype=np.float64)[keep]
    # fc on the hypercube is summed in mpmath (exact to far below 1e-15); the
    # circle's FFT and the tree's Walsh transform carry float64 rounding
    floor = _float_floor(lam, es.trace, exact=isinstance(dom, Hypercube) and arch.name == "fc")
    out = {
        "arch": str(arch),
        "domain": str(dom),
        "k": np.asarray(es.k)[keep].tolist(),
        "eigenvalue": np.where(floor, 0.0, lam).tolist(),
        "multiplicity": [int(round(m)) if m < 2**53 else int(m) for m in mult],
        "trace": es.trace,
        "at_float64_floor": floor.tolist(),
        # the kernel mass of the blocks not listed (degree > kmax, or beyond a
        # recursion's cap): trace - sum(multiplicity x eigenvalue)
        "capped_at": getattr(es, "capped_at", None) if tree else None,
        "tail_trace": max(es.trace - float(np.dot(mult, lam)), 0.0),
    }
    if es.error is not None:
        out["error"] = np.asarray(es.error)[keep].tolist()
    note = "  (0 to float64 precision)"
    cls = _tree_classes(out["k"]) if tree else [""] * len(lam)
    rows = [
        f"{k:>6} {(0.0 if f else v):>14.6e} {m:>14.6g}  {c}" + (note if f else "")
        for k, v, m, f, c in zip(out["k"], lam, mult, floor, cls)
    ]
    head = f"{'k':>6} {'eigenvalue':>14} {'multiplicity':>14}" + ("  class" if tree else "")
    if tree:
        out["class"] = cls
        out["unread"] = _unread_row(arch, dom)
        if out["unread"]:
            u = out["unread"]
            rows.append(f"{'any':>6} {0.0:>14.6e} {u['multiplicity_text']:>14}  {u['class']}")
    text = "\n".join([f"{arch} on {dom} (trace {es.trace:.6g})", head] + rows)
    if floor.any():
        text += (
            f"\n{int(floor.sum())} eigenvalue(s) at the float64 floor (below 1e-300, or "
            f"below {FLOAT_FLOOR_RTOL:g} x trace where float64 sums made them) printed as 0"
        )
    emit(args, out, text)


def _tree_classes(ks):
    """The subset class of each listed tree-kernel block: its degree |S| and
    its rank among the blocks of that degree (largest eigenvalue first);
    the blocks of one degree differ in how S sits in the tree."""
    out, seen = [], {}
    total = {k: list(ks).count(k) for k in set(ks)}
    for k in ks:
        seen[k] = seen.get(k, 0) + 1
        out.append(f"|S|={k} shape {seen[k]}/{total[k]}")
    return out


def _unread_row(arch, dom):
    """The block the tree never sees: every subset holding a coordinate the
    arch does not read gets eigenvalue 0 (None when it reads every one)."""
    d = getattr(dom, "d", None)
    if d is None or d <= arch.leaves:
        return None
    return {
        "class": f"S holds one of the {d - arch.leaves} unread coordinates "
        f"{arch.leaves}..{d - 1} (0-based): eigenvalue 0",
        "eigenvalue": 0.0,
        "multiplicity": 2**d - 2**arch.leaves if d <= 64 else None,
        "multiplicity_text": f"2^{d}-2^{arch.leaves}",
    }


#: eigenvalues below this fraction of the trace are float64 rounding noise
FLOAT_FLOOR_RTOL = 1e-15


def _float_floor(lam, trace, *, exact=False):
    """Which eigenvalues sit at the float64 floor: below 1e-300 (no longer
    normal float64 numbers), or, unless they were computed ``exact``ly,
    below FLOAT_FLOOR_RTOL x trace (the FFTs and sums in float64 that
    produce them carry that much rounding error)."""
    import numpy as np

    lam = np.asarray(lam, dtype=np.float64)
    tiny = np.abs(lam) < 1e-300
    if exact:
        return tiny
    return tiny | (np.abs(lam) < FLOAT_FLOOR_RTOL * abs(float(trace)))


def _kernel_args(p):
    _arch_target_args(p, target=False)
    p.add_argument("--domain", required=True, help="hypercube:d=D (D <= 14)")
    p.add_argument(
        "--all-points",
        action="store_true",
        help="accepted for clarity; the Gram is always over all 2^D points, "
        "in the index order of ntkgap.spectral.walsh",
    )
    p.add_argument("--kind", default="ntk", choices=("ntk", "nngp"), help="kernel [ntk]")
    p.add_argument("--out", required=True, metavar="FILE.npy", help="where the Gram is saved")


@verb("kernel", "the full NTK/NNGP Gram over all hypercube points, saved as .npy", _kernel_args)
def _kernel(args):
    from ntkgap._infra.files import atomic_save_npy
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets.domains import Hypercube, parse_domain

    arch, dom = parse_arch(args.arch), parse_domain(args.domain)
    if not isinstance(dom, Hypercube) or dom.d > 14:
        raise UsageError(f"--domain {args.domain}: the kernel verb needs hypercube:d=D, D <= 14")
    check_out(args.out, (".npy",))
    K = ntkgap.gram(arch, dom, kind=args.kind)  # JAX loads here: after the checks
    atomic_save_npy(args.out, K)
    emit(
        args,
        {
            "arch": str(arch),
            "domain": str(dom),
            "kind": args.kind,
            "out": args.out,
            "shape": list(K.shape),
        },
        f"wrote {args.out} ({K.shape[0]} x {K.shape[1]})",
    )


def _curve_args(p):
    _arch_target_args(p)
    p.add_argument("--n", required=True, help="comma-separated sample sizes, e.g. 100,200,400")
    p.add_argument("--seeds", type=int_at_least(1), default=3, help="seeds per n [3]")
    p.add_argument(
        "--ridge", type=positive_float("ridge"), default=0.0, help="ridge (absolute) [0]"
    )
    p.add_argument(
        "--noise", type=positive_float("noise"), default=0.0, help="label-noise variance [0]"
    )
    p.add_argument("--n-test", type=int_at_least(10), default=2000, help="test points [2000]")
    p.add_argument(
        "--kind", default="ntk", choices=("ntk", "nngp"), help="kernel: ntk or nngp [ntk]"
    )
    p.add_argument("--seed", type=int_at_least(0), default=0, help="base seed [0]")


@verb(
    "learning-curve",
    "NTK regression test error vs n: empirical (seeds) and eigenlearning theory",
    _curve_args,
)
def _learning_curve(args):
    from ntkgap._infra import memory
    from ntkgap.kernels.eigenlearning import VALID_FRACTION
    from ntkgap.specs import parse_int_list

    arch, target = _arch_target(args)
    ns = parse_int_list("--n", args.n)
    arch.check_domain(target.domain)
    memory.check_sizes(
        memory.theory_estimates(arch, target) + memory.regression_estimates(target, ns, args.n_test)
    )
    _check_pool(target, max(ns), args.n_test)  # the empirical curve draws pools this large
    r = ntkgap.learning_curve(
        arch, target, ns, seeds=args.seeds, ridge=args.ridge, noise=args.noise,
        n_test=args.n_test, seed=args.seed, kind=args.kind, progress=True,
    )  # fmt: skip
    out = {
        "arch": str(arch),
        "target": str(target.spec),
        "kind": args.kind,
        "ridge": args.ridge,
        "noise": args.noise,
        "seeds": args.seeds,
        "n_test": args.n_test,
        "n": ns,
        "test_mse_empirical": r["empirical"],
        "test_mse_empirical_std": r["empirical_std"],
        "test_mse_theory": r["theory"],
        "overlap": r["overlap"],
        "theory_valid": all(r["theory_valid"]),
        "theory_valid_per_n": r["theory_valid"],
        "theory_valid_fraction": VALID_FRACTION,
        "jitter_notes": r["jitter_notes"],
        "arch_reads": arch.reads(target.domain),
        "kappa": r["kappa"],
        "learnability": r["learnability"],
        "modes": r["modes"],
    }
    rows = zip(ns, r["empirical"], r["empirical_std"], r["theory"], r["theory_valid"])
    text = "\n".join(
        [
            f"{arch} on {target.spec} (relative test MSE)",
            f"{'n':>8} {'empirical':>12} {'std':>10} {'theory':>12}",
        ]
        + [
            f"{n:>8} {e:>12.4e} {s:>10.2e} {t:>12.4e}" + ("" if ok else "  (theory not valid)")
            for n, e, s, t, ok in rows
        ]
    )
    if not out["theory_valid"]:
        text += "\n" + _invalid_note()
    emit(args, out, text)


def _invalid_note():
    from ntkgap.kernels.eigenlearning import VALID_FRACTION

    return (
        f"theory not valid: n exceeds {VALID_FRACTION:.0%} of the distinct inputs the "
        "kernel reads (eigenlearning assumes far fewer samples than points)"
    )


def _sc_args(p):
    _arch_target_args(p)
    p.add_argument(
        "--eps", type=float, default=0.1, help="relative test MSE to reach, in (0, 1) (default 0.1)"
    )
    p.add_argument("--ridge", type=positive_float("ridge"), default=0.0, help="ridge [0]")
    p.add_argument(
        "--noise", type=positive_float("noise"), default=0.0, help="label-noise variance [0]"
    )
    p.add_argument("--n-max", type=float, default=1e12, help="search limit [1e12]")


@verb("sample-complexity", "n*(eps) of NTK regression from eigenlearning theory", _sc_args)
def _sample_complexity(args):
    from ntkgap._infra import memory
    from ntkgap.kernels.eigenlearning import VALID_FRACTION

    if not 0 < args.eps < 1:
        raise UsageError(f"--eps {args.eps}: must lie in (0, 1)")
    if not 1 <= args.n_max <= 1e15:
        raise UsageError(f"--n-max {args.n_max:g}: must lie in [1, 1e15]")
    arch, target = _arch_target(args)
    arch.check_domain(target.domain)
    _sizes(memory.theory_estimates(arch, target), "use a target with fewer coordinates d")
    warnings = _fit_warnings(arch, target)
    _warn(warnings)
    r = ntkgap.sample_complexity(
        arch, target, args.eps, ridge=args.ridge, noise=args.noise, n_max=args.n_max
    )
    valid = r["theory_valid"]
    out = {
        "arch": str(arch),
        "target": str(target.spec),
        "eps": args.eps,
        "n_star_theory": r["n_star"],
        "censored": r["censored"],
        "n_max": args.n_max,
        "theory_valid": valid,
        "theory_valid_fraction": VALID_FRACTION,
        "warnings": warnings,
    }
    txt = (
        f"n*({args.eps:g}) = {r['n_star']}"
        if not r["censored"]
        else f"n*({args.eps:g}) > {args.n_max:g} (not reached)"
    )
    if not valid:
        txt += "\n" + _invalid_note()
    emit(args, out, f"{arch} on {target.spec}: {txt}")


# ------------------------------------------------------------ network side
def _train_args(p):
    _arch_target_args(p)
    p.add_argument("--width", type=int_at_least(1), required=True, help="hidden width")
    p.add_argument("--n", type=int_at_least(2), required=True, help="samples (train + validation)")
    p.add_argument("--seeds", type=int_at_least(1), default=1, help="seeds, trained vmapped [1]")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="first seed [0]")
    from ntkgap.nets import train_config

    train_config.add_options(p)
    p.add_argument("--n-test", type=int_at_least(10), default=2000, help="test points [2000]")
    p.add_argument("--curve", action="store_true", help="include the loss curve in the JSON")
    p.add_argument(
        "--kernels",
        action="store_true",
        help="also the after-kernel and initial empirical-NTK regressions and kernel diagnostics",
    )
    p.add_argument(
        "--workers",
        type=int_at_least(1),
        default=None,
        help="threads sharing the seeds [NTKGAP_TRAIN_WORKERS, else the cores]",
    )


@verb(
    "train", "train finite-width networks (vmapped seeds) and report relative test MSE", _train_args
)
def _train(args):
    from ntkgap._infra import memory
    from ntkgap.nets import train_config

    cfg = train_config.from_args(args)
    arch, target = _arch_target(args)
    target = _classes_as_outputs(target)
    arch.check_domain(target.domain)
    _check_pool(target, args.n, args.n_test)
    # refused before JAX loads (training.train checks again for library callers)
    memory.check_sizes(
        memory.net_estimates(
            arch, target, width=args.width, n=args.n, n_test=args.n_test, seeds=args.seeds,
            batch=cfg.batch, steps=cfg.steps, eval_every=cfg.eval_every, optimizer=cfg.optimizer,
        )
    )  # fmt: skip
    from ntkgap.nets import training

    r = training.train(
        arch,
        args.width,
        target,
        args.n,
        cfg=cfg,
        n_test=args.n_test,
        seeds=range(args.seed, args.seed + args.seeds),
        workers=args.workers,
        return_params=args.kernels,
        return_predictions=_is_rhm(target),
    )
    _class_error(r, target)
    if args.kernels:
        from ntkgap.kernels import after_kernel  # JAX is loaded by now

        r.update(
            after_kernel.train_kernels(
                r, arch, args.width, target, args.n, cfg=cfg, n_test=args.n_test
            )
        )
        r.pop("params_init"), r.pop("params_final")  # parameters are not JSON
    r["warnings"] = ntkgap.training_warnings(r)  # before the curve it reads is dropped
    if not args.curve:
        r.pop("loss_curve")
    r.update(arch=str(arch), target=str(target.spec), n=args.n)
    if r["diverged"]:
        bad = [s for s, d in zip(r["seeds"], r["diverged_per_seed"]) if d]
        sys.stderr.write(
            f"ntkgap: warning: training diverged for seed(s) {', '.join(map(str, bad))} "
            "(non-finite loss, or no checkpoint better than the start while the loss rose); "
            "their test MSE is not a trained result\n"
        )
    cls = r.get("test_class_error")
    emit(
        args,
        r,
        f"{arch} width {args.width} on {target.spec}, n={args.n}: relative test MSE "
        f"{r['test_mse']:.4g} +- {r['test_mse_std']:.2g} (train {r['train_mse']:.3g})"
        + ("" if cls is None else f", test classification error {cls:.4g}")
        + f", {r['steps']} steps, {r['seconds']:.1f} s"
        + "".join(f"\nwarning: {w}" for w in r["warnings"]),
    )


def _is_rhm(target):
    from ntkgap.targets import rhm

    return isinstance(target, (rhm.RHM, rhm.OneHotLabels))


def _classes_as_outputs(target):
    """An RHM of n_c > 2 classes trains on one-hot labels (one output per
    class, ``rhm.OneHotLabels``); n_c = 2 keeps its scalar +-1 label."""
    from ntkgap.targets import rhm

    if isinstance(target, rhm.RHM) and target.n_c > 2:
        return rhm.OneHotLabels(target)
    return target


def _class_error(r, target):
    """Adds ``test_class_error`` (mean and per seed: the argmax, or for a
    scalar label the sign, misread as a class) to an RHM's training result
    and drops the test predictions it was computed from."""
    from ntkgap.targets import rhm, rhm_pstar

    preds, xs = r.pop("test_predictions", None), r.pop("x_test", None)
    if not _is_rhm(target) or preds is None:
        return
    base = target.rhm if isinstance(target, rhm.OneHotLabels) else target
    per_seed = [rhm.classification_error(p, base.classes(x)) for p, x in zip(preds, xs)]
    r["test_class_error"] = float(sum(per_seed) / len(per_seed))
    r["test_class_error_per_seed"] = per_seed
    r["random_guess_class_error"] = rhm_pstar.random_guess_error(base.n_c)


def _arch_target(args):
    """The parsed ``--arch`` and ``--target``; when both fail to parse but
    parse the other way round, one line saying they are swapped."""
    from ntkgap.errors import SpecError
    from ntkgap.nets.arch import parse_arch
    from ntkgap.targets import parse_target

    try:
        return parse_arch(args.arch), parse_target(args.target)
    except SpecError as err:
        try:
            parse_arch(args.target), parse_target(args.arch)
        except SpecError:
            raise err from None
        raise UsageError(
            f"--arch and --target are swapped: {args.arch!r} is a target spec and "
            f"{args.target!r} an architecture (give --arch {args.target} --target {args.arch})"
        ) from None


def _check_pool(target, n, n_test):
    """Refuses a training pool larger than the distinct points the target's
    split can draw (every further point repeats one: not more data)."""
    from ntkgap.targets.split import pool_capacity

    cap = pool_capacity(target, n_test)
    if cap is not None and n > cap["pool"]:
        raise UsageError(
            f"--n {n}: {target.spec} has {cap['configurations']} distinct "
            f"{cap['what']}, {cap['test']} of them kept for the test set, so a training "
            f"pool holds at most {cap['pool']} distinct points (allowed: --n <= {cap['pool']}; "
            "a smaller --n-test or a larger target leaves more)"
        )


def _predict_args(p):
    _arch_target_args(p)
    p.add_argument("--eps", type=float, default=0.1, help="relative test MSE [0.1]")
    p.add_argument(
        "--seal", action="store_true",
        help="seal the prediction in RESULTS/predictions/ (refused if sealed already) [off]",
    )  # fmt: skip
    p.add_argument("--no-seal", action="store_true", help="do not seal (the default)")
    p.add_argument(
        "--results", metavar="DIR", default=None,
        help="the stored searches the law is fitted on [NTKGAP_RESULTS, else ./results]",
    )  # fmt: skip


@verb("predict", "n* of the own-architecture NTK and of the trained net, before training",
      _predict_args)  # fmt: skip
def _predict(args):
    from ntkgap._infra import config

    if args.seal and args.no_seal:
        raise UsageError("predict: give --seal or --no-seal, not both")
    if args.results is not None:
        config.set_results_dir(args.results)
    out = ntkgap.predict(args.target, args.arch, args.eps, seal=args.seal)
    emit(args, out, "\n".join(_predict_text(out)))


def _predict_text(out):
    """The lines of ``predict``'s text output."""
    eps, law, (lo, hi) = out["eps"], out["law"], out["net_interval"]
    if out["kernel_n_star"] is None:
        kernel = f"kernel n*({eps:g}): no exact spectrum ({out['kernel_reason']})"
    else:
        bound = "> " if out["kernel_censored"] else ""
        valid = "" if out["kernel_theory_valid"] else " (theory not valid here)"
        kernel = f"kernel n*({eps:g}): {bound}{out['kernel_n_star']:.4g}{valid}"
    lines = [
        kernel,
        f"net n*({eps:g}): {out['net_n_star']:.4g}, 95% prediction interval "
        f"[{lo:.4g}, {hi:.4g}] (law {law['form']}, c = {law['c']:.3g}, p = {law['p']:.3g}, "
        f"C = {out['C']}, fitted on {len(law['families'])} other families)",
    ]
    if "extrapolation" in out:
        lines.append(out["extrapolation"]["text"])
    if out["winner"] is None:
        lines.append("winner: not predicted (no kernel n*)")
    else:
        rlo, rhi = out["ratio_interval"]
        decided = "" if out["winner_decided"] else ", undecided: the interval holds 1"
        lines.append(
            f"winner: {out['winner']} (kernel/net ratio {out['ratio']:.3g}, "
            f"interval [{rlo:.3g}, {rhi:.3g}]{decided})"
        )
    if out.get("sealed"):
        lines.append(f"sealed in {out['sealed']}")
    return lines


def build_parser() -> argparse.ArgumentParser:
    """The ``ntkgap`` argument parser with one subparser per registered verb.

    Returns:
        argparse.ArgumentParser whose errors raise UsageError (one line).
    """
    # imported here, not at the top: its verbs register after this module's own,
    # so --help keeps listing run/show/compare last
    import ntkgap.cli_experiments  # noqa: F401  (imported for its registrations)

    parser = Parser(
        prog="ntkgap",
        description=(
            "Kernel-versus-network theory verification on compositional targets. "
            "Specs are name:key=value,... strings; see each verb's --help."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ntkgap {ntkgap.__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="<verb>", parser_class=Parser)
    for name, (fn, help, add_args) in VERBS.items():
        p = sub.add_parser(
            name, help=help, description=help, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        add_args(p)
        p.add_argument("--json", action="store_true", help="print exactly one JSON object")
        p.set_defaults(_fn=fn)
    return parser


def main(argv=None) -> int:
    """Runs the ``ntkgap`` command line; user errors print one line, no traceback.

    Args:
        argv: the arguments (None: ``sys.argv[1:]``).

    Returns:
        int exit status: 0 on success (or the verb's own status: ``run`` gives 1
        when a cell failed with an error), 2 on a usage error or no verb, 130 on
        interrupt.
    """
    try:
        parser = build_parser()
        given = sys.argv[1:] if argv is None else list(argv)
        if not [a for a in given if a != "--json"]:
            args = argparse.Namespace(verb=None)  # no verb: the one-line error below
        else:
            args = parser.parse_args(argv)
        if not getattr(args, "verb", None):
            verbs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            raise UsageError(
                f"no verb given (allowed: {', '.join(verbs.choices)}; ntkgap --help says more)"
            )
        rc = args._fn(args)
        return rc if isinstance(rc, int) else 0  # a verb may return its own status
    except UsageError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"ntkgap: error: {msg}\n")
        if "--json" in (sys.argv[1:] if argv is None else argv):  # one JSON object, as promised
            sys.stdout.write(json.dumps({"error": msg, "status": 2}) + "\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("ntkgap: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
