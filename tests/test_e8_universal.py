"""E8-universal: the activation falsifier's three-way rule, on planted member
verdicts, and the config that declares it (``ntkgap show`` parses it)."""

import pytest

from ntkgap.errors import UsageError
from ntkgap.runs.config import load_config
from ntkgap.verdicts import claims, universality
from ntkgap.verdicts.rules import INCONCLUSIVE, NOT_SUPPORTED, SUPPORTED

CFG = "experiments/e8_universality.toml"


def _members(verdicts):
    return [
        {"id": i, "value": 2.0, "lo": 1.6, "hi": 2.5, "verdict": v} for i, v in verdicts.items()
    ]


def test_planted_activation_specific_reads_not_supported():
    """relu's gap supported, gelu's refuted: the paper's activation-specific outcome."""
    m = universality.universal(
        {"reference": "E8-relu"},
        _members({"E8-relu": SUPPORTED, "E8-gelu": NOT_SUPPORTED, "E8-erf": SUPPORTED}),
    )
    assert m.verdict == NOT_SUPPORTED
    assert "E8-gelu" in m.detail and "[1.6, 2.5]" in m.detail


def test_all_supported_reads_supported_and_mixed_inconclusive():
    """Every member supported -> supported; an undecided member -> inconclusive;
    relu itself refuted -> inconclusive (not the activation-specific outcome)."""
    p = {"reference": "E8-relu"}
    assert (
        universality.universal(p, _members({"E8-relu": SUPPORTED, "E8-tanh": SUPPORTED})).verdict
        == SUPPORTED
    )  # noqa: E501
    mixed = _members({"E8-relu": SUPPORTED, "E8-tanh": INCONCLUSIVE})
    assert universality.universal(p, mixed).verdict == INCONCLUSIVE
    relu_out = _members({"E8-relu": NOT_SUPPORTED, "E8-tanh": NOT_SUPPORTED})
    assert universality.universal(p, relu_out).verdict == INCONCLUSIVE


def test_config_declares_six_paper_members():
    """The E8 config (as `ntkgap show experiments/e8_universality.toml` reads it)."""
    cfg = load_config(CFG, "paper")
    parsed = {c.id: c for c in claims.parse_claims(cfg, CFG)}
    u = parsed["E8-universal"]
    assert u.profile == "paper" and len(u.params["members"]) == 6
    for cid in u.params["members"]:
        assert parsed[cid].profile == "paper"
        assert parsed[cid].params["family"]["node"] == "tanh"


def test_unknown_member_is_a_usage_error():
    """A member id the config lacks is refused in one line."""
    with pytest.raises(UsageError, match="unknown claims: E8-nope"):
        universality.check_params(
            {"members": ["E8-relu", "E8-nope"], "reference": "E8-relu"}, {"E8-relu"}, "claim 'x'"
        )


def test_members_read_at_the_profile_the_claim_is_evaluated_at(tmp_path, monkeypatch):
    """``evaluate(..., profile="paper")`` reads the members at paper too,
    whatever NTKGAP_PROFILE says (``show CONFIG`` passes the profile)."""
    monkeypatch.delenv("NTKGAP_PROFILE", raising=False)
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path))  # nothing stored: members unmeasured
    cfg = load_config("experiments/e8_universality.toml")
    parsed = {c.id: c for c in claims.parse_claims(cfg, "e8_universality")}
    out = claims.evaluate(parsed["E8-universal"], "e8_universality", profile="paper")
    assert "not run" not in out["detail"]
    assert "E8-relu" in out["detail"] and out["verdict"] != SUPPORTED
