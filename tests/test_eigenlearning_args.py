"""test_mse and internals share one prologue: the same argument checks, and
past the rank (ridgeless, kappa = 0) every listed block learned."""

import numpy as np
import pytest

from ntkgap.errors import UsageError
from ntkgap.kernels import eigenlearning
from ntkgap.kernels.eigenlearning import Spectrum

SP = Spectrum(np.array([1.0, 0.3]), np.array([2, 3]), np.ones(2), tail_power=0.2)


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: eigenlearning.test_mse([4], SP, ridge=-1.0), "ridge"),
        (lambda: eigenlearning.test_mse([4], SP, noise=-0.5), "noise"),
        (lambda: eigenlearning.test_mse([0], SP), "n"),
        (lambda: eigenlearning.internals([4], SP, ridge=-1.0), "ridge"),
        (lambda: eigenlearning.internals([0.5], SP), "n"),
    ],
)  # fmt: skip
def test_a_bad_argument_is_named(call, field):
    with pytest.raises(UsageError, match=rf"^{field}\b"):
        call()


@pytest.mark.parametrize(
    "n, noise, want",
    [
        # rank 5: L = 1 everywhere, E0 = n / (n - 5), unlearned = tail_power
        (9, 0.0, 9 / 4 * 0.2),
        (9, 0.1, 9 / 4 * 0.3 - 0.1),
        (6, 0.1, 6 / 1 * 0.3 - 0.1),
        (5, 0.1, np.inf),  # E0 diverges at n = rank
    ],
)  # fmt: skip
def test_ridgeless_past_rank_closed_form(n, noise, want):
    got = eigenlearning.test_mse([n], SP, noise=noise)[0]
    assert got == pytest.approx(want, rel=1e-12)
    inside = eigenlearning.internals([n], SP)
    assert inside["kappa"][0] == 0.0 and np.all(inside["learnability"][0] == 1.0)


def test_interpolating_a_target_inside_the_span_leaves_no_error():
    """n = rank, no noise, no power outside the blocks: E0 = inf times 0
    unlearned power is read as the exact interpolation it is (0)."""
    sp = Spectrum(np.array([1.0, 0.3]), np.array([2, 3]), np.ones(2))
    assert eigenlearning.test_mse([5], sp)[0] == 0.0
