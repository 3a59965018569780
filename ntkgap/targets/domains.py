"""Input domains: the circle S^1 and the Boolean hypercube {-1,+1}^d.

Both carry their uniform probability measure, sample from an explicit seed,
and (when small) enumerate all their points. ``features`` gives what a
network or kernel reads: the embedding (cos t, sin t) on the circle, the
raw +-1 vector on the hypercube (stax's 1/sqrt(fan_in) then makes kernels
functions of <x, y>/d). ``angle`` gives u = t / 2pi, the input of the exact
sawtooth network.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ntkgap.errors import SpecError
from ntkgap.specs import Field, Schema, parse
from ntkgap.spectral.walsh import bit_column_matrix

MAX_ENUMERATE_BITS = 20  # 2^20 points of 20 int8 coordinates: 20 MB

SCHEMAS = {
    "circle": Schema({}, doc="theta uniform on [0, 2pi); models read (cos theta, sin theta)"),
    "hypercube": Schema({"d": Field(int, min=1, max=100_000)}, doc="x uniform on {-1,+1}^d"),
}


@dataclass(frozen=True)
class Circle:
    """theta uniform on [0, 2pi). Points are angles, shape (n,)."""

    name = "circle"
    input_dim = 2

    def __str__(self):
        return "circle"

    def sample(self, n: int, *, seed: int) -> np.ndarray:
        return np.random.default_rng(seed).uniform(0.0, 2 * np.pi, size=n)

    def grid(self, n: int) -> np.ndarray:
        """n equispaced angles 2 pi j / n (exact quadrature for degree < n)."""
        return 2 * np.pi * np.arange(n) / n

    def features(self, theta) -> np.ndarray:
        theta = np.asarray(theta, dtype=np.float64)
        return np.stack([np.cos(theta), np.sin(theta)], axis=-1)

    @staticmethod
    def angle(theta) -> np.ndarray:
        return np.mod(np.asarray(theta, dtype=np.float64), 2 * np.pi) / (2 * np.pi)


@dataclass(frozen=True)
class Hypercube:
    """x uniform on {-1,+1}^d. Points are int8 arrays of shape (n, d)."""

    d: int
    name = "hypercube"

    def __str__(self):
        return f"hypercube:d={self.d}"

    @property
    def input_dim(self):
        return self.d

    @property
    def size(self) -> int:
        return 2**self.d

    def sample(self, n: int, *, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        return (1 - 2 * rng.integers(0, 2, size=(n, self.d), dtype=np.int8)).astype(np.int8)

    def enumerate(self) -> np.ndarray:
        """All 2^d points; row i has x_j = -1 exactly where bit j of i is 1
        (the index convention of :func:`ntkgap.spectral.walsh.fwht`)."""
        if self.d > MAX_ENUMERATE_BITS:
            raise SpecError(
                f"domain 'hypercube': d={self.d} is too large to enumerate "
                f"(allowed: d <= {MAX_ENUMERATE_BITS})"
            )
        return bit_column_matrix(self.d, dtype=np.int8)

    def features(self, x) -> np.ndarray:
        return np.asarray(x, dtype=np.float64)


def parse_domain(text: str):
    """Parses a domain spec string (``circle`` or ``hypercube:d=...``).

    Args:
        text: the domain spec string.

    Returns:
        Circle or Hypercube.
    """
    spec = parse("domain", text, SCHEMAS)
    if spec.name == "circle":
        return Circle()
    return Hypercube(spec["d"])
