"""How many CPU cores this process may use, and how many threads training
splits its seeds over (``NTKGAP_TRAIN_WORKERS``, else every core)."""
from __future__ import annotations

import os

from ntkgap.errors import UsageError

ENV = "NTKGAP_TRAIN_WORKERS"


def available() -> int:
    try:
        return len(os.sched_getaffinity(0))   # honours taskset and cgroup cpusets
    except AttributeError:                     # not on Linux
        return os.cpu_count() or 1


def train_workers() -> int:
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return available()
    try:
        w = int(raw)
    except ValueError:
        w = 0
    if w < 1:
        raise UsageError(f"{ENV}={raw!r} must be an integer >= 1")
    return w
