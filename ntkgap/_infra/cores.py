"""How many CPU cores this process may use, and how many threads training
splits its seeds over (``NTKGAP_TRAIN_WORKERS``, else every core)."""

from __future__ import annotations

import os

from ntkgap._infra import config

ENV = config.TRAIN_WORKERS


def available() -> int:
    try:
        return len(os.sched_getaffinity(0))  # honours taskset and cgroup cpusets
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def train_workers() -> int:
    return config.train_workers() or available()
