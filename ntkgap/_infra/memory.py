"""A guard that refuses requests whose arrays would not fit, before they
are allocated. The limit is NTKGAP_MEMORY_LIMIT (bytes, or with a K/M/G
suffix) or else 80% of the memory the OS reports available."""

from __future__ import annotations

import math
import os

from ntkgap._infra import config
from ntkgap.errors import MemoryLimitError


def _available() -> int:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))


def limit() -> int:
    return config.memory_limit() or int(0.8 * _available())


def fmt(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if nbytes < 1024 or unit == "TiB":
            return f"{nbytes:.1f} {unit}"
        nbytes /= 1024


def check(nbytes: float, what: str) -> None:
    """Raise MemoryLimitError if ``nbytes`` exceeds the limit."""
    lim = limit()
    if nbytes > lim:
        raise MemoryLimitError(
            f"{what} needs about {fmt(nbytes)}, over the memory limit of "
            f"{fmt(lim)} (set NTKGAP_MEMORY_LIMIT to change it)"
        )


# ------------------------------------------------------------ estimates
# Each returns bytes (or seconds) from sizes alone, so a command checks
# them before it builds or allocates anything. They over- rather than
# under-estimate: a refusal names the estimate and the limit.

#: exact arithmetic a request may spend before it is refused (seconds)
MAX_SECONDS = 60.0


def check_seconds(seconds: float, what: str) -> None:
    """Raise MemoryLimitError if the estimated run time exceeds MAX_SECONDS."""
    if seconds > MAX_SECONDS:
        raise MemoryLimitError(
            f"{what} needs about {seconds:.3g} s of exact arithmetic, over the limit of "
            f"{MAX_SECONDS:g} s (lower the sizes)"
        )


def check_sizes(estimates) -> None:
    """Check ``(kind, amount, what)`` triples, kind ``"bytes"`` or ``"seconds"``:
    the one estimate-then-check path of every command."""
    for kind, amount, what in estimates:
        (check if kind == "bytes" else check_seconds)(amount, what)


def sample_bytes(n: float, input_dim: int, eval_width: int = 4) -> float:
    """n domain points (int8 or float64), their float64 network inputs and the
    target's evaluation, which holds ``eval_width`` float64 columns at once."""
    return float(n) * (16.0 * input_dim + 8.0 * (eval_width + 2))


#: test-Gram entries the NTK predictor computes at once (test rows in blocks of this / n)
PREDICT_BLOCK_ENTRIES = 2**25


def predict_block_rows(n: int) -> int:
    """Test rows per block of the NTK predictor's cross Gram against n samples.

    Args:
        n: the number of fitted samples.

    Returns:
        int: at least 256 rows, else PREDICT_BLOCK_ENTRIES / n.
    """
    return max(256, PREDICT_BLOCK_ENTRIES // max(1, int(n)))


def regression_bytes(
    n: float, n_test: float, input_dim: int, eval_width: int = 4, factors: int = 1
) -> float:
    """Kernel regression on n samples scored on n_test: the n x n Gram, its
    Cholesky factors (a tuned ridge keeps one per ridge value), one block of
    the n_test x n cross Gram, and the samples."""
    n, n_test = float(n), float(n_test)
    return (
        8.0 * (1 + max(1, int(factors))) * n * n
        + 8.0 * min(n_test, predict_block_rows(int(n))) * n
        + sample_bytes(n, input_dim, eval_width)
        + sample_bytes(n_test, input_dim, eval_width)
    )


def circle_power_bytes(kmax: float) -> float:
    """Closed-form Fourier series to frequency kmax (a few float64 arrays)."""
    return 64.0 * (float(kmax) + 1)


def circle_eigen_bytes(kmax: float) -> float:
    """The FFT of a kernel row on N >= 64 (kmax + 1) angles, then on 2N:
    angles, features, row and its transform, about 80 bytes per point."""
    n = 2.0 ** math.ceil(math.log2(max(64.0 * (float(kmax) + 1), 4096.0)))
    return 80.0 * 3 * n


def hypercube_eigen_seconds(d: int, kmax: int) -> float:
    """Exact hypercube eigenvalues: d + 1 kernel values and (kmax + 1)(d + 1)
    conversions in mpmath at ``digits`` digits, plus Krawtchouk rows of
    d-bit integers (about d^2 (kmax + 1) digit operations). Calibrated to
    over-estimate measured runs (0.22 s at d = 1000, kmax = 16; 1.8 s at
    d = 1000, kmax = 200; 9.7 s at d = 10^4, kmax = 12) by 1.3-2x."""
    k = min(int(kmax), int(d))
    digits = 30 + min(math.ceil(k * math.log10(max(d, 2))), d)
    d = float(d)
    return 2e-4 * d * max(1.0, digits / 50) + 1e-7 * d * d + 1.5e-9 * d * d * (k + 1)


def train_bytes(
    *,
    n_params: float,
    seeds: int,
    n: float,
    n_test: float,
    width: int,
    depth: int,
    input_dim: int,
    batch: int = 0,
    steps: int = 1,
    eval_every: int = 1,
    optimizer: str = "adam",
) -> float:
    """Training ``seeds`` networks of ``n_params`` parameters each: the
    parameters with optimizer state (and the best checkpoint), one step's
    activations on a batch (0: all n), the float64 samples and the loss
    curve (steps / eval_every points per seed)."""
    per_param = 8.0 * ((4 if optimizer == "adam" else 2) + 1)
    rows = float(batch or n)
    return float(seeds) * (
        float(n_params) * per_param
        + rows * width * 8.0 * 6 * max(1, depth)
        + 8.0 * (float(n) + float(n_test)) * (input_dim + 1)
        + 8.0 * 3 * (float(steps) / max(1, eval_every) + 1)
    )


def fc_params(width: int, depth: int, input_dim: int) -> float:
    """Parameters of a fully connected net: depth hidden layers of ``width``."""
    w = float(width)
    return (input_dim + 1) * w + max(0, depth - 1) * (w + 1) * w + w + 1


# ------------------------------------------- estimates of whole requests
# These read parsed specs (duck-typed, nothing imported) and return the
# ``(kind, amount, what)`` triples that :func:`check_sizes` checks.


def _eval_width(target) -> int:
    live = getattr(target, "_live_gates", None)  # a circuit keeps every gate's values
    if live is not None:
        return len(live) + 2
    spec = getattr(target, "spec", None)
    if spec is not None and spec.name == "tree":
        return spec["L"] * spec["arity"] + 2
    return 4


def _input_dim(target) -> int:
    return int(getattr(target.domain, "input_dim", 2))


def spectrum_estimates(target, kmax) -> list:
    """``ntkgap spectrum``: the series to kmax on the circle (the hypercube's
    Walsh transform refuses a support over its limit itself). The caller
    resolves a default kmax (``targets.spectra.default_kmax``): this module
    imports no science."""
    if getattr(target.domain, "name", "") != "circle":
        return []
    return [("bytes", circle_power_bytes(kmax), f"the Fourier series to kmax={kmax}")]


def eigen_estimates(arch, domain, kmax) -> list:
    """``ntkgap eigenvalues``: FFT size on the circle, exact arithmetic on the
    hypercube (fc archs; tree archs without a closed-form dual take the
    transform over all 2^leaves patterns)."""
    if getattr(domain, "name", "") == "circle":
        return [("bytes", circle_eigen_bytes(kmax), f"circle eigenvalues to kmax={kmax}")]
    if arch.name == "fc":
        k = min(kmax, domain.d)
        return [
            (
                "seconds",
                hypercube_eigen_seconds(domain.d, k),
                f"hypercube eigenvalues at d={domain.d}, kmax={k}",
            )
        ]
    if arch.spec["act"] in ("relu", "erf"):
        return []  # the recursion over the tree refuses beyond its own budget, at once
    return [
        (
            "bytes",
            tree_eigen_bytes(arch.leaves, domain.d),
            f"tree-kernel eigenvalues over 2^{arch.leaves} leaf patterns at d={domain.d}",
        )
    ]


def tree_eigen_bytes(leaves: int, d: int) -> float:
    """The kernel row over all 2^leaves leaf patterns: the pattern matrix
    and the network inputs, 2^leaves x d float64 each, and the row."""
    return 2.0**leaves * (16.0 * d + 32.0)


def theory_estimates(arch, target) -> list:
    """Eigenlearning's spectrum (the degrees ``ntkgap.kernels.theory`` asks for)."""
    dom = target.domain
    if getattr(dom, "name", "") != "hypercube":
        return []
    if arch.name != "fc":
        return eigen_estimates(arch, dom, 0)
    d = dom.d
    kmax = d if d <= 40 else min(d, len(target.support) + 8)
    return eigen_estimates(arch, dom, kmax)


def regression_estimates(target, n, n_test, factors: int = 1) -> list:
    """NTK regression at each sample size (the largest decides); ``factors``
    Cholesky factors held at once (a tuned ridge: one per ridge value)."""
    top = max(n) if isinstance(n, (list, tuple)) else n
    held = f", {factors} factors" if factors > 1 else ""
    return [
        (
            "bytes",
            regression_bytes(top, n_test, _input_dim(target), _eval_width(target), factors),
            f"kernel regression with n={top}, n_test={n_test}{held}",
        )
    ]


def net_estimates(
    arch,
    target,
    *,
    width,
    n,
    n_test,
    seeds=1,
    batch=0,
    steps=1,
    eval_every=1,
    optimizer="adam",
) -> list:
    """Training ``seeds`` networks: what :func:`train_bytes` counts, with the
    parameter count of the arch (fc: dense layers; tree: one dense block of
    ``width`` units per internal node)."""
    dim = _input_dim(target)
    if arch.name == "tree":
        a, L = arch.spec["arity"], arch.spec["L"]
        nodes = (a**L - 1) // (a - 1)
        n_params = nodes * (a * width + 1) * width + width + 1
        depth = L
    else:
        depth = arch.spec["depth"]
        n_params = fc_params(width, depth, dim)
    total = train_bytes(
        n_params=n_params,
        seeds=seeds,
        n=n,
        n_test=n_test,
        width=width,
        depth=depth,
        input_dim=dim,
        batch=batch,
        steps=steps,
        eval_every=eval_every,
        optimizer=optimizer,
    )
    return [
        ("bytes", total, f"training {seeds} networks of width {width} on n={n}, n_test={n_test}")
    ] + regression_like_samples(target, n, n_test)


def regression_like_samples(target, n, n_test) -> list:
    """Drawing and labelling n + n_test points."""
    return [
        (
            "bytes",
            sample_bytes(float(n) + float(n_test), _input_dim(target), _eval_width(target)),
            f"sampling n={n} and n_test={n_test} points",
        )
    ]
