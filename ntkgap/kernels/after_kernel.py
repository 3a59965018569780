"""The after-kernel predictor and per-run kernel diagnostics of a trained network.

The after kernel is the trained network's own empirical NTK at its scored
checkpoint (Long 2021; Atanasov, Bordelon & Pehlevan 2022; Fort et al.
2020). Kernel regression with it, on the same split the network trained on,
shows how much of the network's advantage over its infinite-width NTK the
learned kernel alone carries; the same regression with the initial
empirical NTK separates finite-width effects from training. Both fit the
net's training points (the pool less its validation share, as the net's
gradients saw them), ridgeless by default (:func:`ntkgap.kernels.krr.fit`,
jitter reported), and score the same test points as the net, relative to
the target's variance.

Per run, with each kernel's Gram on the training sample: the centered
kernel-target alignment at initialisation and at the end, the effective
rank, the share of the target's Walsh weight in the top eigenspace (on the
hypercube) (:mod:`ntkgap.kernels.diagnostics`), the relative weight
movement, and the kernel's relative change ||K_T - K_0||_F / ||K_0||_F.
"""

from __future__ import annotations

import numpy as np

from ntkgap.errors import UsageError
from ntkgap.kernels import diagnostics, krr
from ntkgap.nets.empirical import empirical_grams, weight_movement
from ntkgap.nets.train_config import TrainConfig, validation_size
from ntkgap.spectral import walsh
from ntkgap.targets.domains import Hypercube
from ntkgap.targets.split import split
from ntkgap.targets.variance import target_variance

#: the keys ``ntkgap train ... --kernels`` adds (means over seeds)
CLI_KEYS = (
    "alignment_init",
    "alignment_final",
    "weight_movement",
    "after_kernel_test_mse",
    "init_kernel_test_mse",
)


def _alignment(K, y) -> float | None:
    """The centered alignment, None where it is undefined (constant training
    labels, as a search's smallest pools can draw)."""
    if np.ptp(y) == 0:
        return None
    return diagnostics.centered_alignment(K, y)


def _mean(values) -> float | None:
    """The mean of the defined values (None: none is)."""
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def run_kernels(
    arch,
    width: int,
    target,
    n: int,
    *,
    seed: int,
    params_init,
    params_final,
    cfg: TrainConfig | None = None,
    n_test: int = 2000,
    ridge: float = 0.0,
    top_k: int | None = None,
) -> dict:
    """After-kernel and initial-kernel regression, and diagnostics, of one run.

    Args:
      arch, target: the parsed architecture and target the net trained on.
      width: its hidden width.
      n: its pool size (train + validation).
      seed: its seed (the split's: the same points as the net).
      params_init, params_final: its initial and scored parameters
        (``train(..., return_params=True)``, one seed's entries).
      cfg: its TrainConfig (the validation share; default: the schema's).
      n_test: its test points.
      ridge: the regression's ridge (absolute; 0: ridgeless).
      top_k: the Walsh share's eigenspace dimension (default: see
        :func:`ntkgap.kernels.diagnostics.walsh_share`).

    Returns:
      ``after_kernel_test_mse``, ``init_kernel_test_mse`` (relative to the
      target's variance), ``alignment_init``/``_final`` (None with constant
      training labels),
      ``effective_rank_init``/``_final`` (participation ratio),
      ``walsh_share_init``/``_final`` and ``walsh_top_k`` (None off the
      hypercube), ``weight_movement``, ``kernel_change``, and the solvers'
      ``jitter_init``/``_final``.

    References:
      Long, "Properties of the After Kernel", 2021; Fort et al., "Deep
      learning versus kernel learning", NeurIPS 2020.
    """
    cfg = TrainConfig() if cfg is None else cfg
    dom = target.domain
    sp = split(target, n, seed=seed, n_val=validation_size(n, cfg.val_frac), n_test=n_test)
    xtr, xte = arch.inputs(dom, sp.x_train), arch.inputs(dom, sp.x_test)
    var = target_variance(target)
    out, grams = {}, {}
    for which, params in (("init", params_init), ("final", params_final)):
        K, K_test = empirical_grams(arch, width, params, xtr, xte)
        sol = krr.fit(K, sp.y_train, ridge=ridge)
        pred = sol.predict(K_test)
        name = "after_kernel" if which == "final" else "init_kernel"
        out[f"{name}_test_mse"] = float(np.mean((pred - sp.y_test) ** 2)) / var
        out[f"jitter_{which}"] = sol.jitter
        out[f"alignment_{which}"] = _alignment(K, sp.y_train)
        out[f"effective_rank_{which}"] = diagnostics.effective_rank(K)
        share = None
        if isinstance(dom, Hypercube) and len(target.support) <= walsh.MAX_BITS:
            share = diagnostics.walsh_share(K, sp.x_train, target, top_k)  # exact transform
            out["walsh_top_k"] = share["k"]
        out[f"walsh_share_{which}"] = None if share is None else share["share"]
        grams[which] = K
    out.setdefault("walsh_top_k", None)
    out["weight_movement"] = weight_movement(params_init, params_final)
    out["kernel_change"] = float(
        np.linalg.norm(grams["final"] - grams["init"]) / np.linalg.norm(grams["init"])
    )
    return out


def train_kernels(
    result: dict,
    arch,
    width: int,
    target,
    n: int,
    *,
    cfg=None,
    n_test: int = 2000,
    ridge: float = 0.0,
) -> dict:
    """The kernel diagnostics of every seed of a ``train`` result.

    Args:
      result: ``ntkgap.nets.training.train(..., return_params=True)``'s dict.
      arch, width, target, n, cfg, n_test: the arguments it was trained with.
      ridge: the regressions' ridge (as :func:`run_kernels`).

    Returns:
      The ``CLI_KEYS`` (means over seeds), each also per seed
      (``<key>_per_seed``), and ``kernels_per_seed``: :func:`run_kernels`'s
      dict per seed.
    """
    if "params_final" not in result:
        raise UsageError("kernel diagnostics need train(..., return_params=True)")
    runs = [
        run_kernels(
            arch, width, target, n, seed=s, params_init=p0, params_final=p1, cfg=cfg,
            n_test=n_test, ridge=ridge,
        )
        for s, p0, p1 in zip(result["seeds"], result["params_init"], result["params_final"])
    ]  # fmt: skip
    out = {key: _mean([r[key] for r in runs]) for key in CLI_KEYS}
    out.update({f"{key}_per_seed": [r[key] for r in runs] for key in CLI_KEYS})
    out["kernels_per_seed"] = runs
    return out
