"""Profiles: one tuple declares them; paper holds quick's cells and its own."""

import pytest

from ntkgap._infra import config as env_config
from ntkgap.errors import UsageError
from ntkgap.runs import config

QUICK = {"method": "spectrum", "target": "parity:d=6,k=2"}
PAPER = {"method": "spectrum", "target": "parity:d=6,k=3"}


@pytest.mark.parametrize(
    "tables, profile, want",
    [
        ({"quick": [QUICK]}, "quick", ["parity:d=6,k=2"]),
        ({"quick": [QUICK]}, "paper", ["parity:d=6,k=2"]),
        ({"quick": [QUICK], "paper": [PAPER]}, "paper", ["parity:d=6,k=2", "parity:d=6,k=3"]),
        ({"quick": [QUICK], "paper": [PAPER, QUICK]}, "paper",
         ["parity:d=6,k=2", "parity:d=6,k=3"]),
        ({"paper": [PAPER]}, "paper", ["parity:d=6,k=3"]),
        ({"quick": [QUICK], "full": [PAPER]}, "full", ["parity:d=6,k=3"]),
    ],
)  # fmt: skip
def test_paper_holds_quick_cells_once(tables, profile, want):
    cfg = {"name": "x", **{p: {"grid": grids} for p, grids in tables.items()}}
    assert [c["target"] for c in config.expand(cfg, profile)] == want


def test_a_profile_without_cells_is_refused():
    cfg = {"name": "x", "quick": {"grid": [QUICK]}}
    with pytest.raises(UsageError, match="no \\[full\\] table"):
        config.expand(cfg, "full")
    with pytest.raises(UsageError, match="allowed: quick, paper, full"):
        config.expand(cfg, "tiny")


def test_profiles_are_declared_once():
    assert config.PROFILES is env_config.PROFILES
    assert env_config.PROFILES == ("quick", "paper", "full")
