"""The command line: ``ntkgap <verb> [options]``.

Every verb takes ``--json`` (exactly one JSON object on stdout). Bad input
prints one line ``ntkgap: error: ...`` on stderr and exits with status 2;
no traceback, no partial output file (files are written atomically, last).
"""

from __future__ import annotations

import argparse
import math
import sys

from ntkgap.errors import UsageError

VERBS = {}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: one line, exit 2
        raise UsageError(message)


def verb(name, help, add_args):
    """Register ``fn`` as verb ``name``: its one-line help and the function
    adding its options to the verb's parser."""

    def deco(fn):
        VERBS[name] = (fn, help, add_args)
        return fn

    return deco


def _emit(args, obj, text=None):
    from ntkgap._infra.files import dumps

    if args.json:
        sys.stdout.write(dumps(obj) + "\n")
    else:
        sys.stdout.write((text if text is not None else dumps(obj, indent=2)) + "\n")


def _positive_float(option):
    def conv(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(v) or v < 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be a finite number >= 0")
        return v

    conv.__name__ = option
    return conv


def _int_at_least(lo):
    def conv(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{v} must be >= {lo}")
        return v

    conv.__name__ = "integer"
    return conv


# ---------------------------------------------------------------- spectrum
def _spectrum_args(p):
    from ntkgap.targets import help_text

    p.add_argument("--target", required=True, help="target spec, e.g. sawtooth:L=3")
    p.add_argument(
        "--kmax",
        type=_int_at_least(1),
        default=None,
        help="highest circle frequency reported (default: 8x the dominant one)",
    )
    p.add_argument("--plot", metavar="FILE", help="also draw the spectrum as a bar chart")
    p.epilog = help_text()


@verb("spectrum", "exact Fourier/Walsh spectrum and complexity of a target", _spectrum_args)
def _spectrum(args):
    from ntkgap import spectra
    from ntkgap.targets import parse_target

    target = parse_target(args.target)
    rep = spectra.report(target, kmax=args.kmax)
    if args.plot:
        _check_out(args.plot, (".png", ".pdf", ".svg"))
        spectra.plot(rep, args.plot)
    _emit(args, rep, spectra.table(rep))


def _check_out(path, suffixes):
    import os

    if not path.endswith(suffixes):
        raise UsageError(f"output file {path!r} must end in one of {', '.join(suffixes)}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"output file {path!r}: folder {folder} does not exist")


# ------------------------------------------------------------- kernel side
def _arch_target_args(p, target=True):
    from ntkgap.arch import help_text as arch_help
    from ntkgap.targets import help_text as target_help

    p.add_argument("--arch", required=True, help="architecture spec, e.g. fc:depth=2,act=relu")
    if target:
        p.add_argument("--target", required=True, help="target spec, e.g. parity:d=20,k=3")
    p.epilog = arch_help() + ("\n" + target_help() if target else "")


def _eigenvalues_args(p):
    _arch_target_args(p, target=False)
    p.add_argument("--domain", required=True, help="circle or hypercube:d=D")
    p.add_argument("--kmax", type=_int_at_least(0), default=16, help="highest frequency/degree")


@verb("eigenvalues", "exact eigenvalues of an architecture's NTK on a domain", _eigenvalues_args)
def _eigenvalues(args):
    from ntkgap import eigen
    from ntkgap.arch import parse_arch
    from ntkgap.domains import parse_domain

    arch, dom = parse_arch(args.arch), parse_domain(args.domain)
    es = eigen.eigensystem(arch, dom, args.kmax)
    out = {
        "arch": str(arch),
        "domain": str(dom),
        "k": es.k.tolist(),
        "eigenvalue": es.eigenvalue.tolist(),
        "multiplicity": [int(round(m)) if m < 2**53 else int(m) for m in es.multiplicity],
        "trace": es.trace,
    }
    if es.error is not None:
        out["error"] = es.error.tolist()
    text = "\n".join(
        [
            f"{arch} on {dom} (trace {es.trace:.6g})",
            f"{'k':>6} {'eigenvalue':>14} {'multiplicity':>14}",
        ]
        + [
            f"{k:>6} {lam:>14.6e} {m:>14.6g}"
            for k, lam, m in zip(out["k"], out["eigenvalue"], es.multiplicity)
        ]
    )
    _emit(args, out, text)


def _kernel_args(p):
    _arch_target_args(p, target=False)
    p.add_argument("--domain", required=True, help="hypercube:d=D (D <= 14)")
    p.add_argument(
        "--all-points",
        action="store_true",
        required=True,
        help="the Gram over all 2^D points (index order of ntkgap.walsh)",
    )
    p.add_argument("--kind", default="ntk", choices=("ntk", "nngp"))
    p.add_argument("--out", required=True, metavar="FILE.npy")


@verb("kernel", "the full NTK/NNGP Gram over all hypercube points, saved as .npy", _kernel_args)
def _kernel(args):
    from ntkgap import kernels
    from ntkgap._infra.files import atomic_save_npy
    from ntkgap.arch import parse_arch
    from ntkgap.domains import Hypercube, parse_domain

    arch, dom = parse_arch(args.arch), parse_domain(args.domain)
    if not isinstance(dom, Hypercube) or dom.d > 14:
        raise UsageError(f"--domain {args.domain}: --all-points needs hypercube:d=D with D <= 14")
    _check_out(args.out, (".npy",))
    K = kernels.gram(arch, arch.inputs(dom, dom.enumerate()), kind=args.kind)
    atomic_save_npy(args.out, K)
    _emit(
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
    p.add_argument("--seeds", type=_int_at_least(1), default=3, help="seeds per n [3]")
    p.add_argument(
        "--ridge", type=_positive_float("ridge"), default=0.0, help="ridge (absolute) [0]"
    )
    p.add_argument(
        "--noise", type=_positive_float("noise"), default=0.0, help="label-noise variance [0]"
    )
    p.add_argument("--n-test", type=_int_at_least(10), default=2000, help="test points [2000]")
    p.add_argument(
        "--kind", default="ntk", choices=("ntk", "nngp"), help="kernel: ntk or nngp [ntk]"
    )
    p.add_argument("--seed", type=_int_at_least(0), default=0, help="base seed [0]")


@verb(
    "learning-curve",
    "NTK regression test error vs n: empirical (seeds) and eigenlearning theory",
    _curve_args,
)
def _learning_curve(args):
    import numpy as np

    from ntkgap import eigenlearning, ntk_predictor, theory
    from ntkgap._infra import progress
    from ntkgap.arch import parse_arch
    from ntkgap.specs import parse_int_list
    from ntkgap.targets import parse_target

    arch, target = parse_arch(args.arch), parse_target(args.target)
    ns = parse_int_list("--n", args.n)
    arch.check_domain(target.domain)
    sp, _ = theory.spectrum(arch, target)
    th = eigenlearning.relative_test_mse(ns, sp, ridge=args.ridge, noise=args.noise)
    emp, std, overlap, notes = [], [], [], []
    with progress.bar(total=len(ns) * args.seeds, desc="learning-curve") as bar:
        for n in ns:
            vals, over = [], []
            for s in range(args.seeds):
                r = ntk_predictor.evaluate(
                    arch,
                    target,
                    n,
                    seed=args.seed + s,
                    n_test=args.n_test,
                    ridge=args.ridge,
                    noise=args.noise,
                    kind=args.kind,
                    variance=sp.variance,
                )
                vals.append(r["test_mse"])
                over.append(r["overlap"])
                if r["jitter"]:
                    notes.append(f"n={n} seed={args.seed + s}: {r['note']} ({r['jitter']:.1e})")
                bar.update()
            emp.append(float(np.mean(vals)))
            std.append(float(np.std(vals)))
            overlap.append(float(np.mean(over)))
    out = {
        "arch": str(arch),
        "target": str(target.spec),
        "kind": args.kind,
        "ridge": args.ridge,
        "noise": args.noise,
        "seeds": args.seeds,
        "n_test": args.n_test,
        "n": ns,
        "test_mse_empirical": emp,
        "test_mse_empirical_std": std,
        "test_mse_theory": th.tolist(),
        "overlap": overlap,
        "jitter_notes": notes,
        "arch_reads": arch.reads(target.domain),
    }
    text = "\n".join(
        [
            f"{arch} on {target.spec} (relative test MSE)",
            f"{'n':>8} {'empirical':>12} {'std':>10} {'theory':>12}",
        ]
        + [f"{n:>8} {e:>12.4e} {s:>10.2e} {t:>12.4e}" for n, e, s, t in zip(ns, emp, std, th)]
    )
    _emit(args, out, text)


def _sc_args(p):
    _arch_target_args(p)
    p.add_argument("--eps", type=float, required=True, help="relative test MSE to reach, in (0, 1)")
    p.add_argument("--ridge", type=_positive_float("ridge"), default=0.0)
    p.add_argument("--noise", type=_positive_float("noise"), default=0.0)
    p.add_argument("--n-max", type=float, default=1e12, help="search limit [1e12]")


@verb("sample-complexity", "n*(eps) of NTK regression from eigenlearning theory", _sc_args)
def _sample_complexity(args):
    from ntkgap import eigenlearning, theory
    from ntkgap.arch import parse_arch
    from ntkgap.targets import parse_target

    if not 0 < args.eps < 1:
        raise UsageError(f"--eps {args.eps}: must lie in (0, 1)")
    if not 1 <= args.n_max <= 1e15:
        raise UsageError(f"--n-max {args.n_max:g}: must lie in [1, 1e15]")
    arch, target = parse_arch(args.arch), parse_target(args.target)
    sp, _ = theory.spectrum(arch, target)
    r = eigenlearning.sample_complexity(
        sp, args.eps, ridge=args.ridge, noise=args.noise, n_max=args.n_max
    )
    out = {
        "arch": str(arch),
        "target": str(target.spec),
        "eps": args.eps,
        "n_star_theory": r["n_star"],
        "censored": r["censored"],
        "n_max": args.n_max,
    }
    txt = (
        f"n*({args.eps:g}) = {r['n_star']}"
        if not r["censored"]
        else f"n*({args.eps:g}) > {args.n_max:g} (not reached)"
    )
    _emit(args, out, f"{arch} on {target.spec}: {txt}")


# ------------------------------------------------------------ network side
def _train_args(p):
    _arch_target_args(p)
    p.add_argument("--width", type=_int_at_least(1), required=True, help="hidden width")
    p.add_argument("--n", type=_int_at_least(2), required=True, help="samples (train + validation)")
    p.add_argument("--seeds", type=_int_at_least(1), default=1, help="seeds, trained vmapped [1]")
    p.add_argument("--seed", type=_int_at_least(0), default=0, help="first seed [0]")
    from ntkgap import train_config

    train_config.add_options(p)
    p.add_argument("--n-test", type=_int_at_least(10), default=2000, help="test points [2000]")
    p.add_argument("--curve", action="store_true", help="include the loss curve in the JSON")
    p.add_argument(
        "--workers",
        type=_int_at_least(1),
        default=None,
        help="threads sharing the seeds [NTKGAP_TRAIN_WORKERS, else the cores]",
    )


@verb(
    "train", "train finite-width networks (vmapped seeds) and report relative test MSE", _train_args
)
def _train(args):
    from ntkgap import train_config, training
    from ntkgap.arch import parse_arch
    from ntkgap.targets import parse_target

    cfg = train_config.from_args(args)
    arch, target = parse_arch(args.arch), parse_target(args.target)
    arch.check_domain(target.domain)
    r = training.train(
        arch,
        args.width,
        target,
        args.n,
        cfg=cfg,
        n_test=args.n_test,
        seeds=range(args.seed, args.seed + args.seeds),
        workers=args.workers,
    )
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
    _emit(
        args,
        r,
        f"{arch} width {args.width} on {target.spec}, n={args.n}: relative test MSE "
        f"{r['test_mse']:.4g} +- {r['test_mse_std']:.2g} (train {r['train_mse']:.3g}), "
        f"{r['steps']} steps, {r['seconds']:.1f} s",
    )


# ------------------------------------------------------------- experiments
def _run_args(p):
    p.add_argument("config", help="experiment config (experiments/*.toml)")
    p.add_argument("--profile", default="quick", help="quick or full [quick]")
    p.add_argument("--jobs", type=_int_at_least(1), default=2, help="local worker processes [2]")
    p.add_argument("--executor", default="local", choices=("local", "dask"))
    p.add_argument(
        "--scheduler", default=None, help="Dask scheduler address (with --executor dask)"
    )


@verb("run", "run an experiment's cells that are not stored yet (resumable)", _run_args)
def _run(args):
    from ntkgap import runner

    r = runner.run(
        args.config, args.profile, jobs=args.jobs, executor=args.executor, scheduler=args.scheduler
    )
    _emit(
        args,
        r,
        f"{r['experiment']} [{r['profile']}]: {r['cells']} cells, {r['computed']} computed, "
        f"{r['reused']} reused, {r['seconds']:.1f} s",
    )
    for f in r["failed"]:
        sys.stderr.write(
            f"ntkgap: warning: cell {f['key']} ({f['cell']['method']}) failed: {f['reason']}\n"
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ntkgap",
        description=(
            "Kernel-versus-network theory verification on compositional targets. "
            "Specs are name:key=value,... strings; see each verb's --help."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from ntkgap import __version__

    parser.add_argument("--version", action="version", version=f"ntkgap {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="<verb>", parser_class=_Parser)
    for name, (fn, help, add_args) in VERBS.items():
        p = sub.add_parser(
            name, help=help, description=help, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        add_args(p)
        p.add_argument("--json", action="store_true", help="print exactly one JSON object")
        p.set_defaults(_fn=fn)
    return parser


def main(argv=None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "verb", None):
            parser.print_help()
            return 2
        args._fn(args)
        return 0
    except UsageError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"ntkgap: error: {msg}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("ntkgap: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
