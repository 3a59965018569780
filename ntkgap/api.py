"""The curated Python API of ntkgap: thin wrappers over the library modules
(``ntkgap.targets``, ``ntkgap.nets.arch``, ``ntkgap.targets.spectra``,
``ntkgap.kernels.gram``, ``ntkgap.kernels.eigen``, ``ntkgap.kernels.eigenlearning``,
``ntkgap.nets.training``, ``ntkgap.verdicts.comparison``), each importing its module
when called, so importing the package stays cheap. Targets, architectures and
domains may be given as spec strings or as the objects :func:`target`,
:func:`arch` and :func:`domain` return. The package root re-exports them.
"""

import contextlib as _contextlib

from ntkgap import results as _results
from ntkgap.errors import UsageError
from ntkgap.nets.train_warnings import training_warnings


def target(spec: "str | object") -> object:
    """Parse a target spec into a target object.

    Args:
        spec: a spec such as ``"parity:d=20,k=3"``,
            ``"tree:d=24,L=3,arity=2,node=and"`` or ``"file:PATH.toml"``
            (a target object is returned unchanged).

    Returns:
        The target: callable on its ``domain``'s points, with
        ``architecture()`` and ``moments()``.

    Examples:
        >>> t = ntkgap.target("parity:d=4,k=2")
        >>> str(t.domain), t.spec["k"]
        ('hypercube:d=4', 2)
    """
    if not isinstance(spec, str):
        return spec
    from ntkgap.targets import parse_target

    return parse_target(spec)


def arch(spec: "str | object") -> object:
    """Parse an architecture spec.

    Args:
        spec: e.g. ``"fc:depth=2,act=relu"`` or ``"tree:arity=2,L=3"`` (an
            architecture object is returned unchanged).

    Returns:
        The architecture object (its NTK, network and input map).

    Examples:
        >>> a = ntkgap.arch("tree:arity=2,L=2")
        >>> a.name, a.leaves, a.spec["act"]
        ('tree', 4, 'relu')
    """
    if not isinstance(spec, str):
        return spec
    from ntkgap.nets.arch import parse_arch

    return parse_arch(spec)


def domain(spec: "str | object") -> object:
    """Parse a domain spec.

    Args:
        spec: ``"circle"`` or ``"hypercube:d=D"`` (a domain object is
            returned unchanged).

    Returns:
        The domain object.

    Examples:
        >>> ntkgap.domain("hypercube:d=3").enumerate().shape
        (8, 3)
    """
    if not isinstance(spec, str):
        return spec
    from ntkgap.targets.domains import parse_domain

    return parse_domain(spec)


def _parsed(x, parse):
    """(object, None) when ``parse`` reads ``x``, else (None, its UsageError)."""
    try:
        return parse(x), None
    except (UsageError, AttributeError, TypeError) as exc:
        return None, exc


def _is(x, kind):
    """Whether a parsed object is a target (has a domain) or an architecture."""
    if kind == "arch":
        return hasattr(x, "check_domain")
    return hasattr(x, "domain") and not hasattr(x, "check_domain")


def _pair(where, tgt, arch_spec, **given):
    """The (target, architecture) of an API call, given positionally or as
    the keywords ``target=`` / ``arch=``; a swapped pair is refused in one
    line that says so.

    Args:
        where: the function's name, for the message.
        tgt, arch_spec: the positional target and architecture (or None).
        **given: ``target`` and ``arch`` keywords (None when not given).

    Returns:
        (target object, architecture object).
    """
    for name, pos in (("target", tgt), ("arch", arch_spec)):
        if given.get(name) is not None and pos is not None:
            raise UsageError(f"{where}: {name} given twice (positionally and as {name}=)")
    tgt = tgt if given.get("target") is None else given["target"]
    arch_spec = arch_spec if given.get("arch") is None else given["arch"]
    if tgt is None or arch_spec is None:
        raise UsageError(f"{where}: give both target= and arch= (a spec or a parsed object)")
    t, t_err = _parsed(tgt, target)
    a, a_err = _parsed(arch_spec, arch)
    if t is not None and a is not None and _is(t, "target") and _is(a, "arch"):
        return t, a
    t2, _ = _parsed(arch_spec, target)
    a2, _ = _parsed(tgt, arch)
    if t2 is not None and a2 is not None and _is(t2, "target") and _is(a2, "arch"):
        raise UsageError(
            f"{where}: target and arch are swapped: {str(tgt)!r} is an architecture and "
            f"{str(arch_spec)!r} a target (pass target=..., arch=...)"
        )
    err = t_err or a_err
    if err is not None and isinstance(err, UsageError):
        raise err
    bad = "target" if t is None or not _is(t, "target") else "arch"
    raise UsageError(
        f"{where}: {bad} {str(tgt if bad == 'target' else arch_spec)!r} is not a "
        f"{'target' if bad == 'target' else 'architecture'} spec or object"
    )


def spectrum(tgt, *, kmax=None) -> _results.Spectrum:
    """The exact Fourier (circle) or Walsh (hypercube) spectrum of a target
    and its complexity measures, as ``ntkgap spectrum --json`` prints it.

    Args:
        tgt: a target spec or object.
        kmax: highest circle frequency reported (default: 8x the dominant).

    Returns:
        a read-only :class:`ntkgap.results.Spectrum` (a Mapping): ``target``,
        ``domain``, ``variance``, ``mean``, ``architecture``, ``complexity``;
        on the hypercube ``degree``, ``weight``, ``support``,
        ``dominant_degree``; on the circle ``frequency``, ``power``,
        ``truncated_power``, ``dominant_frequency``; ``note`` when no exact
        spectrum is given.

    References:
        O'Donnell, "Analysis of Boolean Functions" (2014), ch. 1 (the Walsh
        expansion and its degree profile).

    Examples:
        >>> sp = ntkgap.spectrum("parity:d=4,k=2")
        >>> sp["weight"], sp["dominant_degree"]
        ([0.0, 0.0, 1.0], 2)
        >>> sp = ntkgap.spectrum("tree:d=4,L=2,arity=2,node=and")
        >>> abs(sum(sp["weight"]) - sp["variance"] - sp["mean"] ** 2) < 1e-12  # Parseval
        True
    """
    from ntkgap.targets import spectra

    return _results.Spectrum.from_dict(spectra.report(target(tgt), kmax=kmax))


def gram(arch_spec, dom, points=None, points2=None, *, kind: str = "ntk"):
    """The infinite-width NTK (or NNGP) Gram matrix between domain points.

    Args:
        arch_spec: an architecture spec or object.
        dom: a domain spec or object (e.g. ``"hypercube:d=6"``).
        points: the domain's points (hypercube: rows of +-1; circle:
            angles); default every point of a hypercube.
        points2: the second set of points (default: ``points``).
        kind: ``"ntk"`` or ``"nngp"``.

    Returns:
        ``K[i, j] = k(points[i], points2[j])`` as a float64 numpy array.

    References:
        Jacot, Gabriel & Hongler, "Neural tangent kernel" (NeurIPS 2018);
        Lee et al., "Wide neural networks of any depth evolve as linear
        models under gradient descent" (NeurIPS 2019).

    Examples:
        >>> import numpy as np
        >>> K = ntkgap.gram("fc:depth=2", "hypercube:d=3")
        >>> K.shape, bool(np.allclose(K, K.T)), bool(np.linalg.eigvalsh(K).min() > 0)
        ((8, 8), True, True)
    """
    from ntkgap.kernels import gram as kernels

    a, d = arch(arch_spec), domain(dom)
    if points is None:
        if not hasattr(d, "enumerate"):
            raise UsageError(f"gram on {d}: give the points (only a hypercube is enumerated)")
        points = d.enumerate()
    x2 = None if points2 is None else a.inputs(d, points2)
    return kernels.gram(a, a.inputs(d, points), x2, kind=kind)


def eigensystem(arch_spec, dom, kmax: int = 16):
    """The exact eigenvalues of an architecture's NTK on a domain.

    Args:
        arch_spec: an architecture spec or object.
        dom: a domain spec or object.
        kmax: the highest frequency (circle) or degree (hypercube) listed.

    Returns:
        An ``Eigensystem`` with arrays ``k``, ``eigenvalue``,
        ``multiplicity`` and the kernel's ``trace``.

    References:
        Yang & Salman, "A fine-grained spectral perspective on neural
        networks" (arXiv 1907.10599) for dot-product kernels on the
        hypercube.

    Examples:
        >>> import numpy as np
        >>> es = ntkgap.eigensystem("fc:depth=2", "hypercube:d=3", kmax=3)
        >>> es.k.tolist(), es.multiplicity.tolist()
        ([0, 1, 2, 3], [1.0, 3.0, 3.0, 1.0])

        The Gram on all 8 points has eigenvalues 2^d times these:

        >>> K = ntkgap.gram("fc:depth=2", "hypercube:d=3")
        >>> exact = 8 * np.repeat(es.eigenvalue, es.multiplicity.astype(int))
        >>> bool(np.allclose(np.linalg.eigvalsh(K)[::-1], exact))
        True
    """
    from ntkgap.kernels import eigen

    a, d = arch(arch_spec), domain(dom)
    a.check_domain(d)
    return eigen.eigensystem(a, d, kmax)


def learning_curve(
    arch_spec, tgt, n, *, seeds: int = 0, ridge: float = 0.0, noise: float = 0.0,
    n_test: int = 2000, seed: int = 0, kind: str = "ntk", progress: bool = False,
) -> dict:  # fmt: skip
    """Relative test MSE of NTK regression against the sample size n:
    eigenlearning theory, and with ``seeds`` > 0 the empirical mean over
    that many seeds.

    Args:
        arch_spec: an architecture spec or object.
        tgt: a target spec or object.
        n: one sample size or a list of them.
        seeds: empirical seeds per n (0: theory only).
        ridge: the ridge (absolute).
        noise: the label-noise variance.
        n_test: test points per empirical seed.
        seed: the first seed.
        kind: the empirical kernel, ``"ntk"`` or ``"nngp"``.
        progress: show a progress bar over the empirical fits (stderr).

    Returns:
        a read-only :class:`ntkgap.results.LearningCurve` (a Mapping) with
        ``n``, ``theory``, ``kappa`` and ``learnability`` (the theory's
        effective regularisation and learnability per n), ``modes`` (the
        eigenvalue, multiplicity and target power of the modes summed),
        ``empirical``, ``empirical_std``, ``theory_valid``, ``overlap`` and
        ``jitter_notes``: ``theory_valid`` per n; ``empirical``,
        its std and ``overlap`` (the mean fraction of test points also in
        the training set) per n, None without seeds; ``jitter_notes`` the
        fits that needed a jitter.

    References:
        Simon, Dickens, Karkada & DeWeese, "The eigenlearning framework"
        (arXiv 2110.03922); Bordelon, Canatar & Pehlevan, "Spectrum
        dependent learning curves in kernel regression" (ICML 2020).

    Examples:
        >>> lc = ntkgap.learning_curve("fc:depth=2", "parity:d=6,k=1", n=[8, 32])
        >>> [round(e, 3) for e in lc["theory"]]
        [0.423, 0.019]
    """
    import numpy as np  # here, as every import below: `import ntkgap` stays cheap

    from ntkgap._infra import progress as bars
    from ntkgap.kernels import eigenlearning, ntk_predictor, theory

    a, t = arch(arch_spec), target(tgt)
    a.check_domain(t.domain)
    ns = [int(x) for x in (n if isinstance(n, (list, tuple, range, np.ndarray)) else [n])]
    sp, _ = theory.spectrum(a, t)
    th = eigenlearning.relative_test_mse(np.array(ns, float), sp, ridge=ridge, noise=noise)
    inner = eigenlearning.internals(np.array(ns, float), sp, ridge=ridge)
    out = {
        "n": ns,
        "theory": th.tolist(),
        "kappa": inner["kappa"].tolist(),
        "learnability": inner["learnability"].tolist(),
        "modes": {k: inner[k].tolist() for k in ("eigenvalue", "multiplicity", "power")},
        "empirical": None,
        "empirical_std": None,
        "theory_valid": [eigenlearning.theory_valid(x, a, t.domain) for x in ns],
        "overlap": None,
        "jitter_notes": [],
    }
    if not seeds:
        return _results.LearningCurve.from_dict(out)
    runs = {x: [] for x in ns}
    bar = bars.bar(total=len(ns) * seeds, desc="learning-curve") if progress else None
    with bar or _contextlib.nullcontext():
        for x in ns:
            for s in range(seed, seed + seeds):
                r = ntk_predictor.evaluate(
                    a, t, x, seed=s, n_test=n_test, ridge=ridge, noise=noise, kind=kind,
                    variance=sp.variance,
                )  # fmt: skip
                runs[x].append(r)
                if r["jitter"]:
                    out["jitter_notes"].append(f"n={x} seed={s}: {r['note']} ({r['jitter']:.1e})")
                if bar is not None:
                    bar.update()
    out["empirical"] = [float(np.mean([r["test_mse"] for r in runs[x]])) for x in ns]
    out["empirical_std"] = [float(np.std([r["test_mse"] for r in runs[x]])) for x in ns]
    out["overlap"] = [float(np.mean([r["overlap"] for r in runs[x]])) for x in ns]
    return _results.LearningCurve.from_dict(out)


def sample_complexity(
    arch_spec=None, tgt=None, eps: float | None = None, *, ridge: float = 0.0,
    noise: float = 0.0, n_max: float = 1e12, arch=None, target=None,
) -> dict:  # fmt: skip
    """n*(eps): the fewest samples at which eigenlearning theory predicts
    a relative test MSE <= eps for NTK regression.

    Args:
        arch_spec: an architecture spec or object (or ``arch=``).
        tgt: a target spec or object (or ``target=``); a swapped pair is
            refused in one line.
        eps: the relative test MSE to reach, in (0, 1).
        ridge: the ridge (absolute).
        noise: the label-noise variance.
        n_max: the search limit.
        arch, target: the same two as keywords.

    Returns:
        a read-only :class:`ntkgap.results.SampleComplexity` (a Mapping) with
        ``n_star``, ``n_star_theory``, ``censored``, ``n_max``, ``theory_valid``;
        ``n_star_theory`` is ``n_star`` under the command line's name; both
        are None and ``censored`` True when eps is not reached by ``n_max``.

    References:
        Simon, Dickens, Karkada & DeWeese, "The eigenlearning framework"
        (arXiv 2110.03922).

    Examples:
        >>> r = ntkgap.sample_complexity("fc:depth=2", "parity:d=6,k=1", eps=0.1)
        >>> r["n_star"], r["censored"]
        (19, False)
    """
    from ntkgap.kernels import theory  # here: JAX loads only when called

    t, a = _pair("sample_complexity", tgt, arch_spec, target=target, arch=arch)
    if eps is None:
        raise UsageError("sample_complexity: eps is required (a relative test MSE in (0, 1))")
    a.check_domain(t.domain)
    sp, _ = theory.spectrum(a, t)
    r = theory.nstar(sp, eps, a, t.domain, ridge=ridge, noise=noise, n_max=n_max)
    # n_star_theory: the CLI's name for the same number
    return _results.SampleComplexity.from_dict(dict(r, n_star_theory=r["n_star"]))


def train(arch_spec, tgt, n: int, *, width: int, seeds=(0,), n_test: int = 2000, **options):
    """Train finite-width networks (one per seed, vmapped) and score them.

    Args:
        arch_spec: an architecture spec or object.
        tgt: a target spec or object.
        n: samples (train + validation).
        width: the hidden width.
        seeds: the seeds (each draws its data, initialisation and batches),
            or an int count: ``seeds=2`` is seeds 0 and 1, as ``--seeds 2``.
        n_test: test points.
        **options: training hyperparameters of ``ntkgap.nets.train_config``
            (``steps``, ``lr``, ``optimizer``, ``batch``, ...).

    Returns:
        a read-only :class:`ntkgap.results.Training` (a Mapping):
        ``test_mse`` (relative, mean over seeds), ``test_mse_per_seed``,
        ``test_mse_std``, ``train_mse``, ``best_val_mse``, ``best_step``,
        ``steps``, ``steps_per_seed``, ``steps_requested``, ``diverged``,
        ``diverged_per_seed``, ``overlap``, ``overlap_per_seed``,
        ``train_duplicates``, ``n_train``, ``n_val``, ``n_test_points``,
        ``n_params``, ``width``, ``arch_reads``, ``seeds``, ``config``,
        ``workers``, ``seconds``, ``loss_curve``, ``warnings`` (and for
        classification targets ``test_class_error``,
        ``test_class_error_per_seed``, ``classification``).
    """
    from ntkgap.nets import train_config, training

    a, t = arch(arch_spec), target(tgt)
    a.check_domain(t.domain)
    cfg = train_config.from_mapping(options)
    r = training.train(a, width, t, n, seeds=_seed_list(seeds), cfg=cfg, n_test=n_test)
    r["warnings"] = training_warnings(r)
    return _results.Training.from_dict(r)


def _seed_list(seeds) -> list:
    """Seeds as a list: an int is a count (0..seeds-1), as the CLI's --seeds."""
    if isinstance(seeds, bool) or not isinstance(seeds, int):
        return [int(s) for s in seeds]
    if seeds < 1:
        raise UsageError(f"train: seeds={seeds} (allowed: a count >= 1 or a list of seeds)")
    return list(range(seeds))


def compare(
    family, depths, out: str | None, *, profile: str = "quick", jobs: int = 1,
    results: str | None = None, eps: float | None = None, seeds: int | None = None,
    n_max=None, dry_run: bool = False, force: bool = False, predict: bool = False,
    executor: str = "local", scheduler: str | None = None, scheduler_file: str | None = None,
    arch_variant: str | None = None,
) -> dict:  # fmt: skip
    """Run the E4 design (four predictors' n*(eps) against depth L) on a
    target family and write ``out/report.md``, ``out/compare.png``,
    ``out/compare.pdf`` and ``out/results.json`` (``ntkgap compare``).

    Args:
        family: a target spec (``{L}`` or a missing ``L=`` takes the depth)
            or a list of DAG files, one per depth.
        depths: the depths, e.g. ``"1..4"`` or ``[2, 3, 4]``.
        out: the output folder (created if its parent exists; None with
            ``dry_run``).
        profile: a run profile (``"quick"``, ``"paper"``, ``"full"``).
        jobs: local worker processes.
        results: where the cells are stored (default ``out/results``).
        eps: the relative test MSE n* is read at.
        seeds: seeds per cell.
        n_max: the search cap of both sides, or ``{"kernel": N, "net": M}``.
        dry_run: return the cells, theory n* and cost; run and write nothing.
        force: run a design that cannot reach a verdict (too few seeds or
            depths, a member without a depth-aware arch, every cap below
            theory n*, a claim its censored sides leave open both ways).
        predict: predict each member's n* before the searches (as
            :func:`predict`), seal the predictions and score them after.
        executor: ``"local"`` processes or a ``"dask"`` cluster.
        scheduler: the Dask scheduler's address (with ``executor="dask"``).
        scheduler_file: or the file the scheduler wrote.
        arch_variant: fields for every compared architecture, each trained
            net still against its own NTK: ``KEY=VALUE`` (``b_std=0``,
            ``residual=1``, ``norm=layer``; ``width=N`` the nets' width) or
            E8's modification names (``residual``, ``layernorm``, ``b0``,
            ``b1``, ``width16``, ...), comma-separated; a field an
            architecture lacks leaves it unmodified, with a warning.

    Returns:
        ``{"out", "files", "run", "claims", ...}`` with the claims Q1/Q2 in
        the summary.json claim format (and ``predictions`` with ``predict``).
    """
    from ntkgap import compare_report  # loads the verdicts and matplotlib only when called

    return compare_report.compare(
        family,
        depths,
        out,
        profile=profile,
        jobs=jobs,
        results=results,
        eps=eps,
        seeds=seeds,
        n_max=n_max,
        dry_run=dry_run,
        force=force,
        predict=predict,
        executor=executor,
        scheduler=scheduler,
        scheduler_file=scheduler_file,
        arch_variant=arch_variant,
    )


def predict(
    tgt=None, arch_spec=None, eps: float = 0.1, *, seal: bool = True, target=None, arch=None
) -> dict:
    """n*(eps) of the own-architecture NTK (eigenlearning theory) and of the
    trained net (the law n* = c C^p in the number of constituents C, fitted
    on the stored n* of other families), before anything is trained.

    Args:
        tgt: a target spec or object (or ``target=``); a swapped pair is
            refused in one line.
        arch_spec: an architecture spec or object (or ``arch=``).
        eps: the relative test MSE to reach.
        seal: for a family with no stored measurement, write the prediction
            to ``results/predictions/<hash>.json`` (refusing to overwrite).
        target, arch: the same two as keywords.

    Returns:
        a read-only :class:`ntkgap.results.Prediction` (a Mapping):
        ``target``, ``arch``, ``eps``, ``C``, ``kernel_n_star``,
        ``kernel_censored``, ``kernel_theory_valid``, ``kernel_reason``,
        ``net_n_star``, ``net_interval``, ``winner``, ``winner_decided``,
        ``ratio``, ``ratio_interval``, ``law`` (its form, parameters and the
        families fitted on), ``measured``, and ``extrapolation`` and
        ``sealed`` when they apply.

    References:
        Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework",
        2021 (arXiv 2110.03922); arXiv 2607.06382 (the dichotomy).
    """
    from ntkgap.verdicts import predictions  # scipy and the store load only when called

    t, a = _pair("predict", tgt, arch_spec, target=target, arch=arch)
    if not 0 < eps < 1:
        raise UsageError(f"predict: eps {eps:g} (allowed: a relative test MSE in (0, 1))")
    return _results.Prediction.from_dict(predictions.predict(str(t.spec), str(a), eps, seal=seal))


#: the API functions, by name (each has a docstring with Args and Returns)
API = {
    name: globals()[name]
    for name in (
        "target", "arch", "domain", "spectrum", "gram", "eigensystem", "learning_curve",
        "sample_complexity", "train", "compare", "predict",
    )
}  # fmt: skip
