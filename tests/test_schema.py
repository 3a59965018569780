"""The training schema round-trips: every field is a `train` option with
the schema's default, a key the runner's `net` method accepts, and a part of
the report's budget text; a bad value reads the same in CLI and config."""

import pytest
from conftest import ROOT

from ntkgap import cli
from ntkgap.nets import train_config
from ntkgap.runs import config as runs_config

FIELDS = train_config.FIELDS


def _shown(v):
    return format(v, "g") if isinstance(v, float) else str(v)


def _train_parser():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "verb")
    return sub.choices["train"]


def test_every_field_is_a_cli_option_with_the_schema_default():
    p = _train_parser()
    actions = {a.dest: a for a in p._actions}
    for f in FIELDS:
        a = actions[f.name]
        assert a.option_strings == [f.flag]
        assert a.default == f.default
        shown = "unset" if f.default is None else _shown(f.default)
        assert f"default: {shown}" in a.help and "allowed:" in a.help
    for a in p._actions:  # every option of `train` documents itself
        assert a.help, a.dest
    # parsed with no options: exactly the schema's defaults
    args = p.parse_args(["--arch", "fc", "--target", "parity:d=4,k=2", "--width", "4", "--n", "8"])
    assert train_config.from_args(args) == train_config.TrainConfig()
    assert train_config.TrainConfig()._fields == tuple(f.name for f in FIELDS)


# a non-default value of every field, as TOML would give it and as typed
ODD = {
    "steps": 123,
    "lr": 0.0375,
    "optimizer": "sgd",
    "schedule": "cosine",
    "batch": 17,
    "eval_every": 41,
    "patience": 7,
    "val_frac": 0.35,
    "alpha": 12.5,
    "param": "mf",
    "weight_decay": 0.0625,
    "dtype": "float64",
    "checkpoint": "last",
}


def test_odd_values_cover_every_field():
    assert set(ODD) == {f.name for f in FIELDS}
    assert all(ODD[f.name] != f.default for f in FIELDS)


def _net_config(extra):
    lines = [
        "name = 'x'",
        "[quick]",
        "[[quick.grid]]",
        "method = 'net'",
        "target = 'parity:d=4,k=2'",
        "arch = 'fc'",
        "n = 16",
        "width = 8",
        "seeds = [0]",
    ]
    lines += [f"{k} = {v!r}" for k, v in extra.items()]
    return "\n".join(lines + ["[full]", "grid = []", ""])


def test_runner_accepts_every_field_and_cli_parses_the_same_config(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text(_net_config(ODD))
    (cell,) = runs_config.expand(runs_config.load_config(str(p)), "quick", where=str(p))
    from_cell = train_config.from_mapping({k: cell[k] for k in ODD})
    argv = ["--arch", "fc", "--target", "parity:d=4,k=2", "--width", "8", "--n", "16"]
    for k, v in ODD.items():
        argv += [train_config.BY_NAME[k].flag, str(v)]
    from_cli = train_config.from_args(_train_parser().parse_args(argv))
    assert from_cell == from_cli == train_config.TrainConfig(**ODD)


def test_budget_text_shows_every_field():
    text = train_config.budget_text({"width": 33, **ODD})
    assert "width 33" in text
    for k, v in ODD.items():
        assert _shown(v) in text, (k, text)
    assert "full batch" in train_config.budget_text({"width": 3})


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("lr", -0.5, "lr=-0.5 must be a number >= 0"),
        ("steps", 0, "steps=0 must be a positive integer"),
        ("optimizer", "lbfgs", "optimizer='lbfgs' is not allowed (allowed: adam, sgd)"),
        ("val_frac", 1.5, "val_frac=1.5 must lie in (0, 1)"),
        ("alpha", 0.0, "alpha=0 must be a number > 0"),
        ("checkpoint", "first", "checkpoint='first' is not allowed (allowed: best, last)"),
        ("patience", -1, "patience=-1 must be an integer >= 0"),
    ],
)
def test_bad_value_same_message_in_cli_and_config(cli, tmp_path, field, value, message):
    p = tmp_path / "x.toml"
    p.write_text(_net_config({field: value}))
    with pytest.raises(Exception) as cfg_err:
        runs_config.load_config(str(p))
    assert str(cfg_err.value).endswith(message), str(cfg_err.value)
    r = cli(
        "train", "--arch", "fc", "--target", "parity:d=4,k=2", "--width", "8", "--n", "16",
        train_config.BY_NAME[field].flag, str(value), cwd=tmp_path, env={"PYTHONPATH": ROOT},
    )  # fmt: skip
    assert r.returncode == 2
    assert r.stderr.splitlines() == [f"ntkgap: error: training: {message}"]
    with pytest.raises(Exception) as direct:
        train_config.validate(train_config.TrainConfig(**{field: value}))
    assert str(direct.value) == f"training: {message}"
