"""``ntkgap compare`` refuses designs that cannot decide and reads the
documented ``--family`` syntax."""

import json

from ntkgap import cli
from ntkgap.verdicts import comparison


def test_compare_family_takes_comma_separated_files():
    """`ntkgap compare --family my_L3.toml,my_L4.toml,my_L5.toml` (README's
    syntax) gives the same files as space-separated ones; a spec keeps its commas."""
    files = comparison.family_option(["my_L3.toml,my_L4.toml,my_L5.toml"])
    assert files == ["my_L3.toml", "my_L4.toml", "my_L5.toml"]
    assert comparison.family_option(["my_L3.toml", "my_L4.toml"]) == ["my_L3.toml", "my_L4.toml"]
    assert (
        comparison.family_option(["tree:d=40,arity=2,node=tanh"]) == "tree:d=40,arity=2,node=tanh"
    )


def test_compare_refuses_too_few_seeds_up_front(tmp_path, capsys):
    """`ntkgap compare --family tree:... --L 1..3 --seeds 4 --out cmp`: refused in
    one line before any cell runs (a CI needs 8 seeds), nothing written."""
    out = tmp_path / "cmp"
    rc = cli.main(["compare", "--family", "tree:d=8,arity=2,node=parity", "--L", "1..3",
                   "--seeds", "4", "--out", str(out), "--json"])  # fmt: skip
    err = json.loads(capsys.readouterr().out)["error"]
    assert rc == 2 and "--seeds 4" in err and ">= 8 seeds" in err and "--force" in err
    assert not out.exists()
