"""The experiment verbs read a config through one check: ``ntkgap run
cfg.toml`` (and ``--dry-run``) and ``ntkgap show cfg.toml`` refuse a bad
claim before any cell runs; ``ntkgap show OUT`` reads a compare folder."""

import json
import os

import pytest

from ntkgap import cli
from ntkgap.runs import config as runs_config
from ntkgap.runs import store
from ntkgap.verdicts import claims

CONFIG = """name = "mine"
title = "t"

[[claim]]
id = "C1"
claim = "c"
paper = "p"
statistic = "{statistic}"
profile = "{profile}"
predictors = ["ntk:fc:depth=2"]
params = {{ a = {side}, eps = 0.1, target = "parity:d=6,k=2" }}
rule = {rule}
{extra}

[quick]
[[quick.grid]]
method = "ntk"
arch = "fc:depth=1"
target = "parity:d=6,k=2"
n = [8]
seed = [0]
n_test = 16
"""
GOOD = dict(statistic="nstar_ratio", profile="quick", side='["ntk_search", "fc"]',
            rule='{ kind = "above", threshold = 1.0, reason = "an order of magnitude" }',
            extra="")  # fmt: skip
BAD = [
    (dict(statistic="nstar_ratoi"), "statistic 'nstar_ratoi' is unknown (allowed: "),
    (dict(profile="quik"), "profile 'quik' is unknown (allowed: quick, paper, full)"),
    (dict(rule='{ kind = "abov", threshold = 1.0, reason = "r" }'),
     "rule.kind must be one of above, below, equivalence"),
    (dict(extra='colour = "red"'), "unknown key 'colour' (allowed: "),
    (dict(side='["ntk_serch", "fc"]'), "params.a: method 'ntk_serch' is not allowed (allowed: "),
    (dict(rule='{ kind = "above", threshold = 1.0 }'), "claim 'C1': rule.reason must be"),
    (dict(extra="note = 3"), "claim 'C1': 'note' must be a string"),
]  # fmt: skip


def _write(tmp_path, **change):
    path = tmp_path / "cfg.toml"
    path.write_text(CONFIG.format(**dict(GOOD, **change)))
    return str(path)


@pytest.mark.parametrize("change, message", BAD)
@pytest.mark.parametrize("verb", [["run"], ["run", "--dry-run"], ["show"]])
def test_run_and_show_refuse_a_bad_claim_before_any_cell(tmp_path, capsys, verb, change, message):
    """`ntkgap run cfg.toml` / `run --dry-run` / `show cfg.toml` with a misspelled
    statistic, profile, rule kind, predictor side, an unknown claim field or a
    rule without its reason: exit 2, one line naming it, no cell computed."""
    path, results = _write(tmp_path, **change), tmp_path / "results"
    rc = cli.main([*verb, path, "--results", str(results), "--json"])
    err = json.loads(capsys.readouterr().out)["error"]
    assert rc == 2 and message in err and "\n" not in err
    assert not (results / "mine").exists()  # nothing ran, nothing written


def test_a_good_config_runs(tmp_path, capsys):
    """`ntkgap run cfg.toml` with valid claims computes its cell (the check is
    not a refusal of everything)."""
    path, results = _write(tmp_path), tmp_path / "results"
    assert cli.main(["run", path, "--results", str(results), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["computed"] == 1


def test_every_shipped_config_passes_the_whole_check():
    """`ntkgap run experiments/*.toml`: every shipped config passes
    validate_config, every rule with its reason."""
    root = os.path.join(os.path.dirname(__file__), "..", "experiments")
    for name in sorted(os.listdir(root)):
        if name.endswith(".toml"):
            cfg, parsed = claims.validate_config(os.path.join(root, name))
            assert all(c.rule["reason"].strip() for c in parsed), name


def test_every_shipped_claim_states_itself_in_at_most_160_characters():
    """Each shipped claim's statement (after its family's expansion) is short
    enough for a table row; the longer explanation is its ``note``, shown in
    REPORT.md's detail."""
    root = os.path.join(os.path.dirname(__file__), "..", "experiments")
    long = [
        (c.id, len(c.claim))
        for name in sorted(os.listdir(root)) if name.endswith(".toml")
        for c in claims.validate_config(os.path.join(root, name))[1]
        if len(c.claim) > 160
    ]  # fmt: skip
    assert not long, long


def _compare_folder(tmp_path):
    """A compare output folder as `ntkgap compare` leaves it: compare.toml,
    results/compare/<cells> and results.json with the claims."""
    from ntkgap.verdicts import comparison

    cfg = comparison.plan("tree:d=8,arity=2,node=parity", "1..3", "tiny")
    out = tmp_path / "cmp1"
    out.mkdir()
    (out / "compare.toml").write_text(comparison.to_toml(cfg))
    cell = runs_config.expand(cfg, "quick", where="compare")[0]
    (out / "results" / "compare").mkdir(parents=True)
    store.save("compare", cell, {"n_star": {"0.1": {"n_star": 9}}}, str(out / "results"))
    (out / "results.json").write_text(
        json.dumps(
            {
                "claims": [
                    {"id": "Q1-fc", "verdict": "inconclusive at this profile's scale", "claim": "q"}
                ]
            }
        )
    )
    return out


@pytest.mark.parametrize("which", ["folder", "toml"])
def test_show_reads_a_compare_folder(tmp_path, capsys, which, monkeypatch):
    """`ntkgap show cmp1` and `ntkgap show cmp1/compare.toml` after a compare:
    its cells from cmp1/results and its claims from cmp1/results.json (not
    ./results: 'no stored results there' before)."""
    monkeypatch.chdir(tmp_path)
    out = _compare_folder(tmp_path)
    src = str(out if which == "folder" else out / "compare.toml")
    assert cli.main(["show", src, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    stored = [c for e in r["experiments"] for c in e["cells"] if c["status"] == "stored"]
    assert len(stored) == 1 and [c["id"] for c in r["claims"]] == ["Q1-fc"]


def test_show_csv_writes_the_cells_and_claims_tables(tmp_path, capsys):
    """`ntkgap show cfg.toml --csv DIR` after `ntkgap run`: DIR/cells.csv has
    one row per cell with the stored test MSE (the same as `show --json`),
    DIR/claims.csv its header; a file or a missing parent is refused."""
    import csv

    path, results = _write(tmp_path), tmp_path / "results"
    assert cli.main(["run", path, "--results", str(results), "--json"]) == 0
    capsys.readouterr()
    out = tmp_path / "tables"
    assert cli.main(["show", path, "--results", str(results), "--csv", str(out), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    with open(out / "cells.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    (cell,) = shown["experiments"][0]["cells"]
    assert len(rows) == 1 and rows[0]["method"] == "ntk" and rows[0]["n"] == "8"
    assert float(rows[0]["test_mse"]) == cell["test_mse"]  # the stored value, unrounded
    with open(out / "claims.csv", newline="") as fh:
        assert next(csv.reader(fh))[:3] == ["id", "profile", "verdict"]
    (tmp_path / "afile").write_text("x")
    for bad, says in ((tmp_path / "afile", "a file, not a folder"),
                      (tmp_path / "no" / "sub", "does not exist")):  # fmt: skip
        rc = cli.main(["show", path, "--results", str(results), "--csv", str(bad), "--json"])
        assert rc == 2 and says in json.loads(capsys.readouterr().out)["error"]
