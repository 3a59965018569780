"""``[[claim_family]]``: one table expanded into claims when a config loads
(``ntkgap.runs.claim_family``), through ``runs.config.load_config`` and the
config check every verb runs (``ntkgap run CONFIG --dry-run``)."""

import dataclasses
import os

import pytest
from conftest import ROOT

from ntkgap import cli
from ntkgap.errors import UsageError
from ntkgap.runs import config as runs_config
from ntkgap.runs.claim_family import expand_families
from ntkgap.verdicts import claims

E4 = os.path.join(ROOT, "experiments", "e4_trees.toml")
# the config as it was before its repeated claims became one family
E4_BEFORE = os.path.join(ROOT, "tests", "data", "e4_trees_before_families.toml")
E3B = os.path.join(ROOT, "experiments", "e3b_parity.toml")
E3B_BEFORE = os.path.join(ROOT, "tests", "data", "e3b_parity_before_families.toml")

FAMILY = """
name = "fam"
title = "a family"

[[claim_family]]
id = "X-{activation}-{node}"
claim = "{activation} nets on {node} trees: the gap grows"
statistic = "nstar_ratio_growth"
profile = "{profile}"
predictors = ["ntk:fc:depth=2,act={activation}", "net:tree:arity=2,L={L}"]
params = { a = ["ntk_search", "fc"], b = ["net_search", "fc"], eps = "{eps}", \
family = { name = "tree", arity = 2, node = "{node}" } }
rule = { kind = "above", threshold = 1.5, reason = "one bracket per level" }
over = { activation = ["tanh", "relu"] }
each = [{ node = "parity", profile = "full", eps = 0.1 },
        { node = "tanh", profile = "quick", eps = 0.05, paper = "own paper" }]

[[claim]]
id = "Y"
claim = "a plain claim"
statistic = "theory_growth"
profile = "quick"
rule = { kind = "above", threshold = 1.0, reason = "r" }

[quick]
grid = []
"""


def _write(tmp_path, text):
    p = tmp_path / "fam.toml"
    p.write_text(text)
    return str(p)


def test_a_family_expands_over_its_list_and_items(tmp_path):
    """load_config expands ``over`` x ``each`` in order; ``{L}`` is left alone,
    a whole-string variable keeps its type, an item's claim field wins."""
    cfg = runs_config.load_config(_write(tmp_path, FAMILY))
    ids = [c["id"] for c in cfg["claim"]]
    assert ids == ["X-tanh-parity", "X-tanh-tanh", "X-relu-parity", "X-relu-tanh", "Y"]
    c = cfg["claim"][3]
    assert c["claim"] == "relu nets on tanh trees: the gap grows"
    assert c["predictors"] == ["ntk:fc:depth=2,act=relu", "net:tree:arity=2,L={L}"]
    assert c["params"]["eps"] == 0.05 and isinstance(c["params"]["eps"], float)
    assert c["params"]["family"] == {"name": "tree", "arity": 2, "node": "tanh"}
    assert c["profile"] == "quick" and c["paper"] == "own paper"
    assert "paper" not in cfg["claim"][0] and "claim_family" not in cfg
    parsed = claims.parse_claims(cfg, "fam")  # the expanded claims pass the claim check
    assert [p.id for p in parsed] == ids


def test_a_family_with_an_unknown_field_is_refused_by_run(tmp_path, capsys):
    """``ntkgap run CONFIG --dry-run``: a misspelled family field exits 2 with
    one line naming it and the allowed keys."""
    path = _write(tmp_path, FAMILY.replace('statistic = "nstar', 'statistc = "nstar'))
    assert cli.main(["run", path, "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'statistc'" in err and "statistic" in err


def test_over_must_be_lists():
    with pytest.raises(UsageError, match="'over' must be a table of non-empty lists"):
        expand_families({"claim_family": [{"id": "a-{x}", "over": {"x": "tanh"}}]}, "c")


def _but_words(parsed: list) -> list:
    """The claims with their statement and note blanked: what a verdict reads."""
    return [dataclasses.replace(c, claim="", note="") for c in parsed]


@pytest.mark.parametrize("now, before", [(E4, E4_BEFORE), (E3B, E3B_BEFORE)])
def test_claims_are_the_same_before_and_after_the_family(now, before):
    """The parsed claims of e4_trees.toml (twelve ratio claims) and of
    e3b_parity.toml (sixteen rows) equal those of the config before they
    became ``[[claim_family]]`` tables, order included, but for their words:
    each statement now at most 160 characters, the rest of it in ``note``."""
    old = claims.parse_claims(runs_config.load_config(before), "x")
    new = claims.parse_claims(runs_config.load_config(now), "x")
    assert _but_words(new) == _but_words(old) and len(new) == len(old)
    for a, b in zip(old, new):
        assert len(b.claim) <= 160 and (b.claim == a.claim or b.note), b.id


@pytest.mark.parametrize("now, before", [(E4, E4_BEFORE), (E3B, E3B_BEFORE)])
def test_cells_hash_to_the_same_keys(now, before):
    """Expanded cells of every profile keep their keys after the families."""
    from ntkgap.runs import store

    old, new = runs_config.load_config(before), runs_config.load_config(now)
    for prof in ("quick", "full", "paper"):
        a = [store.cell_key(c) for c in runs_config.expand(old, prof, where="e4")]
        b = [store.cell_key(c) for c in runs_config.expand(new, prof, where="e4")]
        assert a == b and a
