"""A sealed prediction's hash and timestamp, and the check that it was
sealed before the cells it predicts.

A prediction counts only if it was fixed before its measurement. Sealing
(``sealing.seal_prediction``) writes, beside the prediction and the
keys of the results its law was fitted on, ``sealed_at`` (UTC, ISO 8601 to
the microsecond) and ``sha256``, the hash of the canonical JSON of the
other three fields. Scoring then refuses, in one line:

- a file whose content no longer matches its hash (edited after sealing),
  or that carries no hash or timestamp;
- a prediction sealed after the first stored measurement of its
  (target, architecture): the earliest modification time of any stored
  file of that pair in the experiment's folder, a search's evaluations
  and a kernel search's per-seed progress included (a file's mtime is the
  store's own clock: records carry no time, so that the same config and
  code store bit-identical files).
"""

from __future__ import annotations

import datetime as dt
import glob
import hashlib
import json
import os

from ntkgap._infra.files import dumps
from ntkgap.errors import UsageError

__all__ = ["stamp", "check_hash", "first_measured", "check_sealed_before"]

#: methods whose stored cells measure a predictor (not theory or spectra)
MEASURING = ("net", "net_search", "ntk", "ntk_search")


def _digest(body: dict) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def stamp(body: dict, now: dt.datetime | None = None) -> dict:
    """The sealed file's content: ``body`` with ``sealed_at`` and ``sha256``.

    Args:
        body: ``{"prediction": ..., "fitted_on": [...]}``.
        now: the time of sealing (default: now, UTC).

    Returns:
        a new dict with ``sealed_at`` and ``sha256`` added.
    """
    when = (now or dt.datetime.now(dt.UTC)).isoformat(timespec="microseconds")
    out = dict(json.loads(dumps(body)), sealed_at=when)  # as the file will read back
    out["sha256"] = _digest(out)
    return out


def check_hash(sealed: dict, path: str) -> float:
    """Refuses a sealed file without its hash and time or edited since.

    Args:
        sealed: the file's content.
        path: the file, for the message.

    Returns:
        float: the sealing time (POSIX seconds).
    """
    if "sha256" not in sealed or "sealed_at" not in sealed:
        raise UsageError(f"sealed prediction {path}: no hash or time of sealing (seal it again)")
    body = {k: v for k, v in sealed.items() if k != "sha256"}
    if _digest(body) != sealed["sha256"]:
        raise UsageError(
            f"sealed prediction {path}: its content does not match its sha256 "
            "(edited after sealing): not scored"
        )
    return dt.datetime.fromisoformat(sealed["sealed_at"]).timestamp()


def _stored_cells(folder: str):
    """(path, cell) of every stored file in an experiment folder."""
    for path in glob.glob(os.path.join(folder, "*.json")) + glob.glob(
        os.path.join(folder, ".nested-*.json")
    ):
        try:
            with open(path) as fh:
                cell = json.load(fh).get("cell")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(cell, dict):
            yield path, cell


def first_measured(folder: str, target: str, arch: str) -> float | None:
    """The earliest stored measurement of (target, arch) in ``folder``.

    Args:
        folder: an experiment's results folder.
        target, arch: the specs, as the cells store them.

    Returns:
        float POSIX seconds (a file's modification time), or None when
        nothing of the pair is stored.
    """
    times = [
        os.path.getmtime(p)
        for p, c in _stored_cells(folder)
        if c.get("method") in MEASURING and c.get("target") == target and c.get("arch") == arch
    ]
    return min(times, default=None)


def check_sealed_before(sealed: dict, path: str, folder: str) -> None:
    """Refuses to score a prediction not sealed before its measurement.

    Args:
        sealed: the sealed file's content (``stamp``'s dict).
        path: the sealed file, for messages.
        folder: the experiment folder holding the measured cells.

    Returns:
        None; raises UsageError (one line) when the hash fails or the
        prediction is newer than the first measured cell of its pair.
    """
    at = check_hash(sealed, path)
    pred = sealed["prediction"]
    first = first_measured(folder, pred["target"], pred["arch"])
    if first is not None and at > first:
        when = dt.datetime.fromtimestamp(first, dt.UTC).isoformat(timespec="seconds")
        raise UsageError(
            f"sealed prediction {path}: sealed at {sealed['sealed_at']}, after the first "
            f"measured cell of {pred['target']} on {pred['arch']} ({when}): not scored"
        )
