"""Targets on the circle: the iterated sawtooth and band-limited controls.

Angles theta in [0, 2pi); u = theta / 2pi. Spectra use the real series
f = a_0 + sum_k a_k cos(k theta) + b_k sin(k theta), exact (closed form).
"""

from __future__ import annotations

import numpy as np

from ntkgap.specs import Field, Schema
from ntkgap.targets.boolean import SpecPrinted, moments_of
from ntkgap.targets.domains import Circle

SCHEMAS = {
    "sawtooth": Schema(
        {"L": Field(int, min=1, max=40, doc="number of tent maps composed")},
        doc="g_L = t o ... o t (L times), t(u) = 1 - |2u - 1|, u = theta/2pi; centred",
    ),
    "bandlimited": Schema(
        {
            "K": Field(int, min=1, max=100_000, doc="highest frequency"),
            "seed": Field(int, default=0, min=0),
        },
        doc="random trigonometric polynomial of degree K, mean 0, unit variance",
    ),
}


class Sawtooth(SpecPrinted):
    """The iterated tent map g_L(u) - 1/2 (arXiv 2607.06382's witness).

    g_L(u) = t(frac(2^{L-1} u)) is a triangle wave with 2^{L-1} teeth, so
    g_L - 1/2 = -(4/pi^2) sum_{m odd} cos(m 2^{L-1} theta) / m^2:
    frequencies m 2^{L-1} (m odd) with power 8 / (pi^4 m^4), variance 1/12,
    and 96/pi^4 = 98.55% of the variance at the dominant frequency 2^{L-1}.
    It is piecewise linear in the angle u, not in the embedding
    (cos theta, sin theta).
    """

    domain = Circle()

    def __init__(self, spec):
        self.spec = spec
        self.L = spec["L"]

    def __call__(self, theta):
        u = Circle.angle(theta)
        for _ in range(self.L):
            u = 1.0 - np.abs(2.0 * u - 1.0)
        return u - 0.5

    variance = 1.0 / 12.0
    mean = 0.0

    def series(self, kmax: int):
        k = np.arange(kmax + 1)
        base = 2 ** (self.L - 1)
        m = k // base
        on = (k % base == 0) & (m % 2 == 1)
        a = np.where(on, -4.0 / (np.pi**2 * np.maximum(m, 1) ** 2), 0.0)
        return a, np.zeros(kmax + 1)

    def moments(self) -> dict:
        """Exact: g_L(u) - 1/2 is uniform on [-1/2, 1/2] for u uniform (each
        tent map preserves the uniform law), so the variance is 1/12, the
        fourth moment 1/80 and the kurtosis 9/5."""
        return {
            "mean": 0.0,
            "variance": 1.0 / 12.0,
            "fourth_moment": 1.0 / 80.0,
            "kurtosis": 1.8,
            "max_abs": 0.5,
            "points": None,
            "exact": True,
        }

    def architecture(self):
        L = self.L
        return {
            "constituents": L,
            "max_fan_in": 1,
            "depth": L,
            "support_size": 1,
            "input": "angle u = theta/2pi",
            "exact_relu_params": 6 * L + 1,
            "exact_relu_params_formula": "6L+1 (L hidden layers of width 2: "
            "4 + 6(L-1) + 3; see ntkgap.nets.sawtooth_net)",
        }


class Bandlimited(SpecPrinted):
    """sum_{k=1..K} a_k cos(k theta) + b_k sin(k theta), a, b iid N(0,1) from
    ``seed``, rescaled to unit variance (the no-gap control of arXiv
    2607.06382)."""

    domain = Circle()
    mean = 0.0
    variance = 1.0

    def __init__(self, spec):
        self.spec = spec
        self.K = spec["K"]
        rng = np.random.default_rng(spec["seed"])
        ab = rng.standard_normal((2, self.K))
        scale = np.sqrt(0.5 * np.sum(ab**2))
        self._a, self._b = ab / scale

    def __call__(self, theta):
        theta = np.asarray(theta, dtype=np.float64)
        k = np.arange(1, self.K + 1)
        ph = np.multiply.outer(theta, k)
        return np.cos(ph) @ self._a + np.sin(ph) @ self._b

    def series(self, kmax: int):
        a = np.zeros(kmax + 1)
        b = np.zeros(kmax + 1)
        top = min(kmax, self.K)
        a[1 : top + 1] = self._a[:top]
        b[1 : top + 1] = self._b[:top]
        return a, b

    def moments(self) -> dict:
        """Exact: f^2 and f^4 are trigonometric polynomials of degree <= 4K,
        so the mean over 8K + 8 equispaced angles is their exact average;
        max |f| is a maximum over a 64x finer grid (within 1e-3 relative)."""
        out = moments_of(self(Circle().grid(8 * self.K + 8)), exact=True)
        out["max_abs"] = float(np.max(np.abs(self(Circle().grid(512 * self.K + 512)))))
        out["points"] = None
        return out

    def architecture(self):
        return {
            "constituents": 1,
            "max_fan_in": 1,
            "depth": 1,
            "support_size": 1,
            "input": "embedding (cos theta, sin theta)",
            "exact_relu_params": None,
            "exact_relu_params_formula": None,
        }


BUILDERS = {"sawtooth": Sawtooth, "bandlimited": Bandlimited}
