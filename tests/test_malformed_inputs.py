"""Malformed input across every verb, as a user types it: ``ntkgap.cli.main``
with argv, in a scratch folder that is also the results folder. Every case
must exit 2 with exactly one stderr line that names the bad field, print no
traceback, leave the folder as it was (no partial file), and under
``--json`` print exactly one JSON object on stdout, with an ``error`` key.

Each case runs twice, with and without ``--json``. ``{tmp}`` in an argument
is the scratch folder, which holds the few input files the cases read
(``FILES``) and nothing else."""

import json
import os
import pathlib

import pytest

from ntkgap import cli

ROOT = pathlib.Path(__file__).resolve().parents[1]
DAGS = ROOT / "tests" / "data" / "dags"
E1 = str(ROOT / "experiments" / "e1_spectra.toml")
E1_TEXT = (ROOT / "experiments" / "e1_spectra.toml").read_text()

#: input files the cases read, written into the scratch folder before the snapshot
FILES = {
    "bad.toml": 'name = "x"\n[quick\n',
    "typo_top.toml": E1_TEXT.replace('name = "e1_spectra"', 'nmae = "e1_spectra"'),
    "typo_stat.toml": E1_TEXT.replace('"decay_exponent"', '"decay_exponnet"'),
    "typo_claim_key.toml": E1_TEXT.replace('paper = "exponent -2"', 'papr = "exponent -2"'),
    "typo_rule.toml": E1_TEXT.replace('kind = "below"', 'kind = "bellow"'),
    "typo_method.toml": E1_TEXT.replace('method = "eigen"', 'method = "eigne"'),
    "afile": "not a folder\n",
    "empty.toml": "",
}

SC = ["sample-complexity", "--arch", "fc:depth=2"]
LC = ["learning-curve", "--arch", "fc:depth=2", "--target", "parity:d=6,k=2"]
TR = ["train", "--arch", "fc:depth=2", "--target", "parity:d=6,k=2", "--width", "8"]
TRN = [*TR, "--n", "20"]
EV = ["eigenvalues", "--arch", "fc:depth=2"]
KE = ["kernel", "--arch", "fc:depth=2", "--domain", "hypercube:d=4"]
PR = ["predict", "--arch", "fc:depth=2", "--target", "parity:d=8,k=2"]
CMP = ["compare", "--family", "tree:d=16,arity=2,node=and"]
SP = ["spectrum", "--target"]

# (id, argv, text the one stderr line must contain: the field it names)
CASES = [
    # ---------------------------------------------------------- spectrum
    ("spec-bad-value", [*SP, "parity:d=twenty,k=3"], "d=twenty"),
    ("spec-unknown-key", [*SP, "parity:d=20,k=3,q=1"], "'q'"),
    ("spec-missing-key", [*SP, "parity:d=20"], "'k'"),
    ("spec-key-twice", [*SP, "parity:d=20,k=3,k=4"], "given twice"),
    ("spec-unknown-name", [*SP, "pairty:d=3,k=1"], "pairty"),
    ("spec-k-above-d", [*SP, "parity:d=20,k=30"], "k=30"),
    ("spec-empty", [*SP, ""], "empty spec"),
    ("spec-not-kv", [*SP, "parity:d=20,k"], "key=value"),
    ("spec-node", [*SP, "tree:d=16,L=2,arity=2,node=xor"], "node=xor"),
    ("spec-arity", [*SP, "tree:d=16,L=2,arity=1,node=and"], "arity=1"),
    ("spec-tree-too-wide", [*SP, "tree:d=8,L=4,arity=2,node=and"], "d=8"),
    ("spec-sawtooth-L", [*SP, "sawtooth:L=0"], "L=0"),
    ("spec-float-L", [*SP, "sawtooth:L=2.5"], "L=2.5"),
    ("spec-nan", [*SP, "bandlimited:K=nan"], "K=nan"),
    ("spec-arch-as-target", [*SP, "fc:depth=2"], "fc"),
    ("spec-missing-target", ["spectrum"], "--target"),
    ("spec-kmax-0", [*SP, "sawtooth:L=2", "--kmax", "0"], "--kmax"),
    ("spec-kmax-word", [*SP, "sawtooth:L=2", "--kmax", "many"], "--kmax"),
    (
        "spec-plot-no-dir",
        [*SP, "parity:d=6,k=2", "--plot", "{tmp}/no/such/f.png"],
        "does not exist",
    ),
    ("spec-plot-suffix", [*SP, "parity:d=6,k=2", "--plot", "{tmp}/f.xyz"], ".png, .pdf, .svg"),
    ("spec-plot-in-file", [*SP, "parity:d=6,k=2", "--plot", "{tmp}/afile/f.png"], "afile"),
    ("spec-unknown-option", ["spectrum", "--targt", "parity:d=6,k=2"], "--targt"),
    ("spec-extra-arg", [*SP, "parity:d=6,k=2", "stray"], "stray"),
    ("spec-too-wide", [*SP, "parity:d=30,k=27"], "27 bits"),
    ("file-missing", [*SP, "file:{tmp}/nope.toml"], "nope.toml"),
    ("file-bad-toml", [*SP, "file:{tmp}/bad.toml"], "bad.toml"),
    ("file-empty", [*SP, "file:{tmp}/empty.toml"], "domain"),
    ("file-dir", [*SP, "file:{tmp}"], "file"),
    *[(f"dag-{p.stem}", [*SP, f"file:{p}"], p.name) for p in sorted(DAGS.glob("bad_*.toml"))],
    # ------------------------------------------------------- eigenvalues
    ("eig-arch-key", ["eigenvalues", "--arch", "fc:depth=x", "--domain", "circle"], "depth=x"),
    ("eig-act", ["eigenvalues", "--arch", "fc:act=swish", "--domain", "circle"], "act=swish"),
    ("eig-domain", [*EV, "--domain", "torus"], "torus"),
    ("eig-domain-d0", [*EV, "--domain", "hypercube:d=0"], "d=0"),
    (
        "eig-tree-circle",
        ["eigenvalues", "--arch", "tree:arity=2,L=2", "--domain", "circle"],
        "hypercube",
    ),  # fmt: skip
    ("eig-kmax", [*EV, "--domain", "circle", "--kmax", "-1"], "--kmax"),
    (
        "eig-target-as-arch",
        ["eigenvalues", "--arch", "parity:d=8,k=2", "--domain", "circle"],
        "parity",
    ),  # fmt: skip
    ("eig-missing-domain", EV, "--domain"),
    ("eig-W-nan", ["eigenvalues", "--arch", "fc:W_std=nan", "--domain", "circle"], "W_std"),
    # ------------------------------------------------------------ kernel
    (
        "ker-d15",
        ["kernel", "--arch", "fc", "--domain", "hypercube:d=15", "--out", "{tmp}/K.npy"],
        "D <= 14",
    ),  # fmt: skip
    ("ker-no-dir", [*KE, "--out", "{tmp}/no/K.npy"], "does not exist"),
    ("ker-out-dir", [*KE, "--out", "{tmp}"], ".npy"),
    ("ker-out-in-file", [*KE, "--out", "{tmp}/afile/K.npy"], "afile"),
    ("ker-kind", [*KE, "--kind", "cntk", "--out", "{tmp}/K.npy"], "--kind"),
    (
        "ker-circle",
        ["kernel", "--arch", "fc", "--domain", "circle", "--out", "{tmp}/K.npy"],
        "hypercube",
    ),  # fmt: skip
    ("ker-missing-out", KE, "--out"),
    # ---------------------------------------------------- learning-curve
    ("lc-n-empty", [*LC, "--n", ""], "--n"),
    ("lc-n-negative", [*LC, "--n", "10,-3"], "--n"),
    ("lc-n-word", [*LC, "--n", "ten"], "--n"),
    ("lc-n-above-support", [*LC, "--n", "100"], "--n 100"),
    ("lc-ridge", [*LC, "--n", "10", "--ridge", "-1"], "--ridge"),
    ("lc-noise", [*LC, "--n", "10", "--noise", "-1"], "--noise"),
    ("lc-seeds", [*LC, "--n", "10", "--seeds", "0"], "--seeds"),
    ("lc-n-test", [*LC, "--n", "10", "--n-test", "0"], "--n-test"),
    ("lc-kind", [*LC, "--n", "10", "--kind", "cntk"], "--kind"),
    (
        "lc-swapped",
        ["learning-curve", "--arch", "parity:d=6,k=2", "--target", "fc:depth=2", "--n", "10"],
        "--arch and --target are swapped",
    ),  # fmt: skip
    # ------------------------------------------------- sample-complexity
    ("sc-eps-big", [*SC, "--target", "parity:d=8,k=2", "--eps", "1.5"], "--eps"),
    ("sc-eps-zero", [*SC, "--target", "parity:d=8,k=2", "--eps", "0"], "--eps"),
    ("sc-eps-negative", [*SC, "--target", "parity:d=8,k=2", "--eps", "-0.1"], "--eps"),
    ("sc-eps-nan", [*SC, "--target", "parity:d=8,k=2", "--eps", "nan"], "--eps"),
    ("sc-eps-word", [*SC, "--target", "parity:d=8,k=2", "--eps", "tenth"], "--eps"),
    ("sc-ridge", [*SC, "--target", "parity:d=8,k=2", "--ridge", "-1"], "--ridge"),
    ("sc-noise", [*SC, "--target", "parity:d=8,k=2", "--noise", "-2"], "--noise"),
    ("sc-n-max", [*SC, "--target", "parity:d=8,k=2", "--n-max", "0"], "--n-max"),
    (
        "sc-swapped",
        ["sample-complexity", "--arch", "parity:d=8,k=2", "--target", "fc:depth=2"],
        "--arch and --target are swapped",
    ),  # fmt: skip
    ("sc-bad-target", [*SC, "--target", "parity:d=8,k=9"], "k=9"),
    ("sc-missing-target", SC, "--target"),
    # ------------------------------------------------------------- train
    ("tr-workers", [*TRN, "--workers", "0"], "--workers"),
    (
        "tr-width",
        ["train", "--arch", "fc", "--target", "parity:d=6,k=2", "--width", "0", "--n", "20"],
        "--width",
    ),  # fmt: skip
    ("tr-n-zero", [*TR, "--n", "0"], "--n"),
    ("tr-n-above-support", [*TR, "--n", "100"], "--n 100"),
    ("tr-steps", [*TRN, "--steps", "0"], "steps=0"),
    ("tr-lr", [*TRN, "--lr", "-1"], "lr=-1"),
    ("tr-lr-word", [*TRN, "--lr", "fast"], "lr='fast'"),
    ("tr-optimizer", [*TRN, "--optimizer", "lbfgs"], "optimizer='lbfgs'"),
    ("tr-schedule", [*TRN, "--schedule", "linear"], "schedule='linear'"),
    ("tr-batch", [*TRN, "--batch", "-1"], "batch=-1"),
    ("tr-val-frac-0", [*TRN, "--val-frac", "0"], "val_frac=0"),
    ("tr-val-frac-1", [*TRN, "--val-frac", "1"], "val_frac=1"),
    ("tr-alpha", [*TRN, "--alpha", "0"], "alpha=0"),
    ("tr-weight-decay", [*TRN, "--weight-decay", "-1"], "weight_decay=-1"),
    ("tr-dtype", [*TRN, "--dtype", "float16"], "dtype='float16'"),
    ("tr-checkpoint", [*TRN, "--checkpoint", "first"], "checkpoint='first'"),
    ("tr-n-test", [*TRN, "--n-test", "0"], "--n-test"),
    ("tr-seeds", [*TRN, "--seeds", "0"], "--seeds"),
    ("tr-eval-every", [*TRN, "--eval-every", "0"], "eval_every=0"),
    ("tr-patience", [*TRN, "--patience", "-1"], "patience=-1"),
    (
        "tr-swapped",
        [
            "train",
            "--arch",
            "parity:d=6,k=2",
            "--target",
            "fc:depth=2",
            "--width",
            "8",
            "--n",
            "20",
        ],
        "--arch and --target are swapped",
    ),  # fmt: skip
    (
        "tr-missing-width",
        ["train", "--arch", "fc", "--target", "parity:d=6,k=2", "--n", "20"],
        "--width",
    ),  # fmt: skip
    ("tr-unknown-option", [*TRN, "--step", "10", "--stepz", "3"], "--stepz"),
    # ----------------------------------------------------------- predict
    ("pr-eps-2", [*PR, "--eps", "2"], "eps 2"),
    ("pr-eps-0", [*PR, "--eps", "0"], "eps 0"),
    ("pr-results-missing", [*PR, "--results", "{tmp}/nowhere"], "--results"),
    ("pr-results-file", [*PR, "--results", "{tmp}/afile"], "--results"),
    ("pr-swapped", ["predict", "--arch", "parity:d=8,k=2", "--target", "fc:depth=2"], "swapped"),
    ("pr-bad-arch", ["predict", "--arch", "fc:depht=2", "--target", "parity:d=8,k=2"], "depht"),
    ("pr-unknown-option", [*PR, "--sael"], "--sael"),
    # --------------------------------------------------------------- run
    ("run-missing", ["run", "{tmp}/nope.toml"], "nope.toml"),
    ("run-bad-toml", ["run", "{tmp}/bad.toml"], "bad.toml"),
    ("run-empty-toml", ["run", "{tmp}/empty.toml"], "empty.toml"),
    ("run-dir", ["run", "{tmp}"], "config"),
    ("run-typo-top", ["run", "{tmp}/typo_top.toml", "--dry-run"], "nmae"),
    ("run-typo-statistic", ["run", "{tmp}/typo_stat.toml", "--dry-run"], "decay_exponnet"),
    ("run-typo-claim-key", ["run", "{tmp}/typo_claim_key.toml", "--dry-run"], "papr"),
    ("run-typo-rule", ["run", "{tmp}/typo_rule.toml", "--dry-run"], "rule.kind"),
    ("run-typo-method", ["run", "{tmp}/typo_method.toml", "--dry-run"], "eigne"),
    ("run-profile", ["run", E1, "--profile", "huge", "--dry-run"], "huge"),
    ("run-jobs", ["run", E1, "--jobs", "0", "--dry-run"], "--jobs"),
    ("run-executor", ["run", E1, "--executor", "mpi", "--dry-run"], "--executor"),
    ("run-results-file", ["run", E1, "--results", "{tmp}/afile"], "afile"),
    (
        "run-scheduler-file",
        ["run", E1, "--executor", "dask", "--scheduler-file", "{tmp}/none.json"],
        "none.json",
    ),  # fmt: skip
    ("run-missing-config", ["run"], "config"),
    # -------------------------------------------------------------- show
    ("show-missing", ["show", "{tmp}/nope.toml"], "nope.toml"),
    ("show-missing-dir", ["show", "{tmp}/nowhere"], "nowhere"),
    ("show-bad-toml", ["show", "{tmp}/bad.toml"], "bad.toml"),
    ("show-profile", ["show", E1, "--profile", "huge"], "huge"),
    ("show-results-missing", ["show", E1, "--results", "{tmp}/nowhere"], "nowhere"),
    ("show-plot-no-dir", ["show", E1, "--plot", "{tmp}/no/x.png"], "does not exist"),
    ("show-typo-top", ["show", "{tmp}/typo_top.toml"], "nmae"),
    # ----------------------------------------------------------- compare
    ("cmp-L-empty", [*CMP, "--L", "", "--dry-run"], "--L"),
    ("cmp-L-reversed", [*CMP, "--L", "5..2", "--dry-run"], "--L"),
    ("cmp-L-word", [*CMP, "--L", "deep", "--dry-run"], "--L"),
    ("cmp-L-zero", [*CMP, "--L", "0..2", "--dry-run"], "--L"),
    ("cmp-eps", [*CMP, "--L", "2..4", "--eps", "2", "--dry-run"], "--eps"),
    ("cmp-seeds", [*CMP, "--L", "2..4", "--seeds", "1", "--dry-run"], "--seeds"),
    ("cmp-n-max", [*CMP, "--L", "2..4", "--n-max", "2", "--dry-run"], "--n-max"),
    ("cmp-n-max-side", [*CMP, "--L", "2..4", "--n-max", "kernal=64", "--dry-run"], "--n-max"),
    ("cmp-n-max-word", [*CMP, "--L", "2..4", "--n-max", "kernel=big", "--dry-run"], "--n-max"),
    (
        "cmp-family",
        ["compare", "--family", "tree:d=16,arity=2,node=xor", "--L", "2..4", "--dry-run"],
        "node=xor",
    ),  # fmt: skip
    (
        "cmp-family-files",
        ["compare", "--family", "{tmp}/a.toml,{tmp}/b.toml", "--L", "2..3", "--dry-run"],
        "a.toml",
    ),  # fmt: skip
    ("cmp-out-in-file", [*CMP, "--L", "2..4", "--out", "{tmp}/afile/sub", "--force"], "afile"),
    ("cmp-out-file", [*CMP, "--L", "2..4", "--out", "{tmp}/afile", "--force"], "--out"),
    ("cmp-profile", [*CMP, "--L", "2..4", "--profile", "huge", "--dry-run"], "--profile"),
    ("cmp-jobs", [*CMP, "--L", "2..4", "--jobs", "0", "--dry-run"], "--jobs"),
    ("cmp-missing-L", [*CMP, "--dry-run"], "--L"),
    # -------------------------------------------------------------- misc
    ("verb-unknown", ["frobnicate"], "frobnicate"),
    ("verb-none", [], "verb"),
]


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A scratch folder holding ``FILES``, the working and results folder."""
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path / "results"))
    return tmp_path


def _snapshot(folder: pathlib.Path) -> dict:
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
    }


@pytest.mark.parametrize("argv,field", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_input_is_refused_in_one_line(scratch, capsys, argv, field):
    """``ntkgap <verb> <malformed input> [--json]``: exit 2, one stderr line
    naming the field, no traceback, nothing written; under ``--json`` stdout
    is one JSON object with ``error``."""
    argv = [a.replace("{tmp}", str(scratch)) for a in argv]
    field = field.replace("{tmp}", str(scratch))
    before = _snapshot(scratch)
    for json_flag in ([], ["--json"]):
        try:
            rc = cli.main([*argv, *json_flag])
        except SystemExit as exc:  # argparse's own exit, if main lets it through
            rc = exc.code
        out, err = capsys.readouterr()
        assert rc == 2, (rc, out, err)
        assert "Traceback" not in err and "Traceback" not in out
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("ntkgap: error: "), err
        assert field in lines[0], lines[0]
        if json_flag:
            obj = json.loads(out)
            assert isinstance(obj, dict) and "error" in obj and out.count("\n") == 1, out
        else:
            assert out == "", out
        assert _snapshot(scratch) == before, "a file was written"


def test_the_harness_is_large():
    """At least 90 malformed inputs, each with its own id."""
    ids = [c[0] for c in CASES]
    assert len(ids) >= 90 and len(set(ids)) == len(ids)
    assert os.path.isdir(DAGS)
