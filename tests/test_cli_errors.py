"""Malformed specs and options: one line on stderr naming the field, exit 2,
no traceback, no output file; under --json stdout holds exactly the error
as one JSON object."""

import json
import os

import pytest

from ntkgap.errors import SpecError
from ntkgap.nets.arch import parse_arch
from ntkgap.targets import parse_target
from ntkgap.targets.domains import parse_domain

BAD_TARGETS = [
    ("parity:d=20,k=30", "k=30 exceeds d=20"),
    ("parity:d=20", "missing required key 'k'"),
    ("parity:d=twenty,k=3", "d=twenty is not an integer"),
    ("parity:d=20,k=3,q=1", "unknown key 'q'"),
    ("parity:d=20,k=3,k=4", "given twice"),
    ("parity:d=20;k=3", "is not an integer"),
    ("parity:", "nothing after ':'"),
    ("", "empty spec"),
    ("pairty:d=3,k=1", "is unknown"),
    ("sawtooth:L=0", "L=0 must be >= 1"),
    ("sawtooth:L=-2", "L=-2 must be >= 1"),
    ("sawtooth:L=2.5", "L=2.5 is not an integer"),
    ("tree:d=16,L=2,arity=2,node=xor", "node=xor is not allowed"),
    ("tree:d=16,L=2,arity=1,node=and", "arity=1 must be >= 2"),
    ("tree:d=8,L=4,arity=2,node=and", "exceeds d=8"),
    ("tree:d=16,L=2,arity=2,node=majority", "odd arity"),
    ("circuit:d=4,gates=3,fan_in=5", "fan_in=5 exceeds d=4"),
    ("bandlimited:K=0", "K=0 must be >= 1"),
    ("staircase:d=5,k=6", "k=6 exceeds d=5"),
    ("parity:d=20,k", "is not key=value"),
]


@pytest.mark.parametrize("spec,message", BAD_TARGETS)
def test_bad_target_spec_raises_one_line(spec, message):
    with pytest.raises(SpecError) as exc:
        parse_target(spec)
    text = str(exc.value)
    assert message in text
    assert "\n" not in text


@pytest.mark.parametrize(
    "spec,message",
    [
        ("fc:depth=0", "depth=0 must be >= 1"),
        (
            "fc:act=swish",
            "act=swish is not allowed (allowed: relu, leaky_relu, abs, gelu, erf, tanh, silu, "
            "softplus, sin)",
        ),
        ("fc:W_std=nan", "not a finite number"),
        ("fc:b_std=-1", "must be >= 0"),
        ("tree:arity=2", "missing required key 'L'"),
        ("conv:depth=2", "is unknown"),
    ],
)
def test_bad_arch_spec(spec, message):
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_arch(spec)


@pytest.mark.parametrize("spec", ["hypercube", "hypercube:d=0", "sphere:d=3", "circle:d=2"])
def test_bad_domain_spec(spec):
    with pytest.raises(SpecError):
        parse_domain(spec)


def test_canonical_spec_round_trips():
    t = parse_target("tree:d=24,L=3,arity=2,node=and")
    assert str(parse_target(str(t.spec)).spec) == str(t.spec)


CLI_CASES = [
    (["spectrum", "--target", "parity:d=20,k=30"], "target 'parity': k=30 exceeds d=20"),
    (["spectrum", "--target", "tree:d=16,L=2,arity=2,node=xor"], "node=xor"),
    (["spectrum"], "--target"),
    (["spectrum", "--target", "sawtooth:L=2", "--kmax", "0"], "--kmax"),
    (["frobnicate"], "invalid choice"),
    (["eigenvalues", "--arch", "fc:depth=x", "--domain", "circle"], "depth=x is not an integer"),
    (["eigenvalues", "--arch", "fc", "--domain", "torus"], "domain 'torus' is unknown"),
    (["eigenvalues", "--arch", "tree:arity=2,L=2", "--domain", "circle"], "needs a hypercube"),
    (["learning-curve", "--arch", "fc", "--target", "sawtooth:L=2", "--n", ""], "empty list"),
    (
        ["learning-curve", "--arch", "fc", "--target", "sawtooth:L=2", "--n", "10,-3"],
        "must be >= 1",
    ),
    (
        [
            "learning-curve",
            "--arch",
            "fc",
            "--target",
            "sawtooth:L=2",
            "--n",
            "10",
            "--ridge",
            "-1",
        ],
        "--ridge",
    ),
    (
        ["learning-curve", "--arch", "fc", "--target", "sawtooth:L=2", "--n", "10", "--seeds", "0"],
        "--seeds",
    ),
    (["sample-complexity", "--arch", "fc", "--target", "sawtooth:L=2", "--eps", "1.5"], "--eps"),
    (
        ["kernel", "--arch", "fc", "--domain", "hypercube:d=15", "--all-points", "--out", "K.npy"],
        "D <= 14",
    ),
    (
        [
            "train",
            "--arch",
            "fc",
            "--width",
            "8",
            "--target",
            "parity:d=6,k=2",
            "--n",
            "20",
            "--workers",
            "0",
        ],
        "--workers",
    ),
]


@pytest.mark.parametrize("argv,message", CLI_CASES)
def test_cli_bad_input_one_line_exit_2(cli, argv, message, tmp_path):
    r = cli(*argv, "--json", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("ntkgap: error: ")
    assert message in lines[0]
    assert "Traceback" not in r.stderr
    assert json.loads(r.stdout) == {"error": lines[0][len("ntkgap: error: ") :], "status": 2}
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("value", ["two", "0", "-1"])
def test_bad_train_workers_variable_one_line(cli, value, tmp_path):
    r = cli(
        "train",
        "--arch",
        "fc",
        "--width",
        "8",
        "--target",
        "parity:d=6,k=2",
        "--n",
        "20",
        "--steps",
        "10",
        "--json",
        cwd=tmp_path,
        env={"NTKGAP_TRAIN_WORKERS": value},
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"ntkgap: error: NTKGAP_TRAIN_WORKERS={value!r} must be an integer >= 1"
    ]
    assert json.loads(r.stdout)["status"] == 2 and os.listdir(tmp_path) == []


def test_cli_help_lists_verbs(cli):
    r = cli("--help")
    assert r.returncode == 0
    for v in ("spectrum", "eigenvalues", "kernel", "learning-curve", "sample-complexity"):
        assert v in r.stdout


def test_json_is_exactly_one_object(cli):
    r = cli("spectrum", "--target", "parity:d=8,k=2", "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert isinstance(obj, dict) and r.stdout.count("\n") == 1
    assert r.stderr == ""


def test_memory_guard_refuses_before_allocating(cli, tmp_path):
    r = cli(
        "kernel",
        "--arch",
        "fc",
        "--domain",
        "hypercube:d=14",
        "--all-points",
        "--out",
        str(tmp_path / "K.npy"),
        env={"NTKGAP_MEMORY_LIMIT": "64M"},
    )
    assert r.returncode == 2
    assert "needs about" in r.stderr and "memory limit of 64.0 MiB" in r.stderr
    assert not os.path.exists(tmp_path / "K.npy")


def test_kernel_cli_writes_the_full_gram(cli, tmp_path):
    import numpy as np

    out = tmp_path / "K.npy"
    r = cli(
        "kernel",
        "--arch",
        "fc:depth=2",
        "--domain",
        "hypercube:d=6",
        "--all-points",
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    K = np.load(out)
    assert K.shape == (64, 64) and np.allclose(K, K.T)
