"""Per-run records and the JSON-ready results of :mod:`ntkgap.nets.training`,
and the row padding its programs share: the part of training that runs after
the optimisation, reading its final state.

A run's data is padded to a bucket of rows (:func:`bucket_rows`,
:func:`pad_rows`) so one compiled program serves every n in the bucket; the
padded rows are masked out of every loss and score.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntkgap.targets import rhm


def bucket_rows(rows: int) -> int:
    """The power-of-two row count a batch is padded to (one compiled program
    serves every size of its bucket).

    Args:
        rows: the rows needed.

    Returns:
        int: the smallest power of two >= rows.
    """
    return 1 << max(0, int(rows) - 1).bit_length()


def pad_rows(a, rows):
    """``a`` padded with zero rows to ``rows`` rows.

    Args:
        a: an array.
        rows: the rows wanted (>= len(a)).

    Returns:
        the padded array.
    """
    a = np.asarray(a)
    return np.concatenate([a, np.zeros((rows - len(a),) + a.shape[1:], a.dtype)])


def records(runs, data, params0, state, curve, cfg, predict, var):
    """Per-run records of a trained family: test MSE, validation curve,
    checkpoint and flags of each seed, from the final training states.

    Args:
        runs: the (seed, n) runs of the family.
        data: their padded training, validation and test arrays.
        params0: the initial parameters.
        state: the final training states (checkpoints, flags).
        curve: the recorded loss / validation curve.
        cfg: the training config.
        predict: the compiled forward pass.
        var: the target's variance (errors are relative to it).

    Returns:
        the per-run records.
    """
    final = state.best if cfg.checkpoint == "best" else state.params
    best_step = np.asarray(state.best_step).tolist()
    best_val = (np.asarray(state.best_val, np.float64) / var).tolist()
    steps = np.asarray(state.step).tolist()
    nonfinite = np.asarray(state.nonfinite).tolist()
    Xtr, Ytr = data.arrays[:2]
    recs = []
    for i, ((s, _n), (n_val, n_tr)) in enumerate(zip(runs, data.sizes)):
        p0_i = jax.tree_util.tree_map(lambda p, i=i: p[i], params0)
        xtr_i, ytr_i = Xtr[i, :n_tr], np.asarray(Ytr[i, :n_tr], np.float64)

        def mse(params, x, y, p0_i=p0_i):
            # rows are independent: padded to a bucket, so one compiled
            # forward pass serves every n up to it
            m = x.shape[0]
            pred = np.asarray(predict(params, p0_i, pad_rows(x, bucket_rows(m))), np.float64)[:m]
            d = (pred - y) ** 2  # summed over the outputs of a vector label
            return float(np.mean(d if d.ndim == 1 else np.sum(d, axis=1))), pred

        fin_i = jax.tree_util.tree_map(lambda p, i=i: p[i], final)
        t, pred = mse(fin_i, jnp.asarray(data.xts[i], data.dtype), data.yts[i])
        # one output per class: the argmax error too (rhm.classification_error)
        cls = (rhm.classification_error(pred, rhm.predicted_classes(data.yts[i]))
               if pred.ndim == 2 else None)  # fmt: skip
        # the loss rose: the last parameters fit the training set worse than the start
        last_i = jax.tree_util.tree_map(lambda p, i=i: p[i], state.params)
        rose = not mse(last_i, xtr_i, ytr_i)[0] <= mse(p0_i, xtr_i, ytr_i)[0]
        recs.append(
            {
                "seed": s,
                "n_train": n_tr,
                "n_val": n_val,
                "test": t / var,
                "classification": cls,
                "pred": pred,
                "x_test": data.x_test[i],
                "train": mse(fin_i, xtr_i, ytr_i)[0] / var,
                "best_step": best_step[i],
                "best_val": best_val[i],
                "steps": steps[i],
                "diverged": bool(nonfinite[i] or (best_step[i] == 0 and steps[i] > 0 and rose)),
                "split": data.splits[i],
                "curve": [(st, float(tl[i]), float(vl[i])) for st, tl, vl in curve],
                "params": (p0_i, fin_i),
            }
        )
    return recs


def result(recs, info, arch, target, width, cfg, return_predictions):
    """The result dict of ``training.train`` from the per-seed records.

    Args:
        recs: the per-seed records.
        info: the run's facts (seconds, steps, workers).
        arch: the architecture.
        target: the target.
        width: the hidden width.
        cfg: the training config.
        return_predictions: whether to keep each seed's test predictions.

    Returns:
        dict: means over seeds, per-seed lists, the loss curve and flags.
    """
    test = [r["test"] for r in recs]
    steps = [r["steps"] for r in recs]
    rows = zip(*(r["curve"] for r in recs))
    out = {
        "test_mse": float(np.mean(test)),
        "test_mse_std": float(np.std(test)),
        "test_mse_per_seed": test,
        "train_mse": float(np.mean([r["train"] for r in recs])),
        "steps": int(max(steps)),
        "steps_requested": cfg.steps,
        "steps_per_seed": steps,
        "best_step": [r["best_step"] for r in recs],
        "best_val_mse": [r["best_val"] for r in recs],
        "diverged": any(r["diverged"] for r in recs),
        "diverged_per_seed": [r["diverged"] for r in recs],
        "overlap": float(np.mean([r["split"]["overlap"] for r in recs])),
        "overlap_per_seed": [r["split"]["overlap"] for r in recs],
        "train_duplicates": [r["split"]["train_duplicates"] for r in recs],
        "n_test_points": [r["split"]["n_test_points"] for r in recs],
        "seconds": info["seconds"],
        "n_params": info["n_params"],
        "seeds": [r["seed"] for r in recs],
        "width": width,
        "n_train": recs[0]["n_train"],
        "n_val": recs[0]["n_val"],
        "workers": info["workers"],
        "loss_curve": [
            {
                "step": row[0][0],
                "train_loss": [c[1] for c in row],
                "val_mse": [c[2] for c in row],
            }
            for row in rows
        ],
        "config": cfg._asdict(),
        "arch_reads": arch.reads(target.domain),
    }
    if recs[0]["classification"] is not None:  # one output per class (one-hot labels)
        cls = [r["classification"] for r in recs]
        out.update(_classification(cls))
    if return_predictions:
        out["test_predictions"] = [r["pred"] for r in recs]
        out["x_test"] = [r["x_test"] for r in recs]
    return out


def _classification(per_seed: list) -> dict:
    """The classification error fields of a result: mean and per seed."""
    key = rhm.CLASSIFICATION_RESULT
    return {key: float(np.mean(per_seed)), f"{key}_per_seed": per_seed}


def merge(runs):
    """Merges the results of runs trained apart (``vmap=False``) into one.

    Args:
        runs: the per-run results.

    Returns:
        dict: one result with per-seed lists concatenated.
    """

    def cat(key):
        return [v for r in runs for v in r[key]]

    test = cat("test_mse_per_seed")
    out = dict(runs[0])
    out.update(
        test_mse=float(np.mean(test)),
        test_mse_std=float(np.std(test)),
        test_mse_per_seed=test,
        train_mse=float(np.mean([r["train_mse"] for r in runs])),
        seconds=float(sum(r["seconds"] for r in runs)),
        seeds=cat("seeds"),
        best_step=cat("best_step"),
        best_val_mse=cat("best_val_mse"),
        steps=max(r["steps"] for r in runs),
        steps_per_seed=cat("steps_per_seed"),
        diverged=any(r["diverged"] for r in runs),
        diverged_per_seed=cat("diverged_per_seed"),
        overlap=float(np.mean(cat("overlap_per_seed"))),
        overlap_per_seed=cat("overlap_per_seed"),
        train_duplicates=cat("train_duplicates"),
        n_test_points=cat("n_test_points"),
    )
    for key in ("test_predictions", "x_test", "params_init", "params_final"):
        if key in runs[0]:
            out[key] = cat(key)
    if f"{rhm.CLASSIFICATION_RESULT}_per_seed" in runs[0]:
        out.update(_classification(cat(f"{rhm.CLASSIFICATION_RESULT}_per_seed")))
    return out
