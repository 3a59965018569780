"""Deterministic derived seeds: one explicit integer seed, split by role."""

from __future__ import annotations

import zlib

import numpy as np


def derive(seed: int, *parts) -> int:
    """A 32-bit seed from ``seed`` and labels such as ("train", n)."""
    words = [int(seed) & 0xFFFFFFFF]
    for p in parts:
        words.append(
            zlib.crc32(str(p).encode())
            if not isinstance(p, (int, np.integer))
            else int(p) & 0xFFFFFFFF
        )
    return int(np.random.SeedSequence(words).generate_state(1)[0])
