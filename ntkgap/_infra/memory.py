"""A guard that refuses requests whose arrays would not fit, before they
are allocated. The limit is NTKGAP_MEMORY_LIMIT (bytes, or with a K/M/G
suffix) or else 80% of the memory the OS reports available."""

from __future__ import annotations

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
