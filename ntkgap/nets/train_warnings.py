"""The warnings a training result carries: what its numbers do not say by
themselves (an untrained scored checkpoint, no progress, train/test overlap).

Read by :func:`ntkgap.train` and ``ntkgap train``; pure bookkeeping over the
result dict, so it imports nothing heavy.
"""

from __future__ import annotations

#: training that lowers the training loss by less than this fraction made no progress
NO_PROGRESS = 0.05
#: a relative test MSE above this is worse than predicting the target's mean
WORSE_THAN_ZERO = 1.0


def training_warnings(r: dict) -> list[str]:
    """What a training result does not say by itself, one sentence each: a
    scored checkpoint that is the initial net, a seed whose relative test
    MSE is >= 1 (no better than predicting the mean: it learned nothing), no
    progress (final training loss within ``NO_PROGRESS`` of the initial),
    train/test overlap or
    duplicate training points.

    Args:
        r: a result of :func:`train` (``best_step``, ``steps_per_seed``,
            ``seeds``, ``test_mse_per_seed``, ``overlap``, ``train_duplicates``, ``loss_curve``).

    Returns:
        list of str, empty when there is nothing to warn about.
    """
    out, seeds = [], r["seeds"]
    untrained = [s for s, b, st in zip(seeds, r["best_step"], r["steps_per_seed"]) if b == 0 < st]
    if untrained:
        out.append(
            f"seed(s) {', '.join(map(str, untrained))}: the scored checkpoint is the "
            "initial (untrained) net (best_step 0); its test MSE is the untrained baseline"
        )
    for s, t in zip(seeds, r.get("test_mse_per_seed") or []):
        if t >= WORSE_THAN_ZERO:
            out.append(
                f"seed {s}: learned nothing: relative test MSE {t:.3g} >= 1, no better than "
                "predicting the mean (zero for a centred target)"
            )
    curve = r.get("loss_curve") or []
    if len(curve) >= 2:
        first, last = curve[0]["train_loss"], curve[-1]["train_loss"]
        stuck = [s for s, a, b in zip(seeds, first, last) if b > (1 - NO_PROGRESS) * a]
        if stuck:
            out.append(
                f"seed(s) {', '.join(map(str, stuck))}: no progress: the final training "
                f"loss is within {NO_PROGRESS:.0%} of the initial (try another --lr, "
                "--optimizer or --steps)"
            )
    dups = sum(r.get("train_duplicates") or [0])
    if r.get("overlap") or dups:
        out.append(
            f"train/test overlap {r.get('overlap') or 0:.3g} (mean fraction of test "
            f"points also in the training set) and {dups} duplicate training point(s) "
            "over the seeds: the domain is small, the test MSE is not out-of-sample"
        )
    return out
