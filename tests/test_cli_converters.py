"""The CLI's number options: one converter reads floats >= 0 and integers
>= a bound, refusing bad text or values in one line."""

import argparse

import pytest

from ntkgap.cli_common import int_at_least, positive_float


@pytest.mark.parametrize(
    "conv, text, want",
    [
        (positive_float("ridge"), "0", 0.0),
        (positive_float("ridge"), "1e-3", 0.001),
        (int_at_least(1), "1", 1),
        (int_at_least(0), "0", 0),
        (int_at_least(10), "2000", 2000),
    ],
)  # fmt: skip
def test_accepted(conv, text, want):
    got = conv(text)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize(
    "conv, text, message",
    [
        (positive_float("ridge"), "-1", "'-1' must be a finite number >= 0"),
        (positive_float("ridge"), "nan", "'nan' must be a finite number >= 0"),
        (positive_float("ridge"), "inf", "'inf' must be a finite number >= 0"),
        (positive_float("ridge"), "abc", "'abc' is not a number"),
        (int_at_least(1), "0", "'0' must be >= 1"),
        (int_at_least(10), "9", "'9' must be >= 10"),
        (int_at_least(1), "2.5", "'2.5' is not an integer"),
        (int_at_least(1), "x", "'x' is not an integer"),
    ],
)  # fmt: skip
def test_refused_in_one_line(conv, text, message):
    with pytest.raises(argparse.ArgumentTypeError) as info:
        conv(text)
    assert str(info.value) == message


def test_argparse_names_the_type():
    assert positive_float("noise").__name__ == "noise"
    assert int_at_least(3).__name__ == "integer"
