"""The command line's verbs as a new user drives them (``ntkgap.cli.main``
with argv, in-process): RHM classification through ``train``, the warning
of a net that learned nothing, pools larger than the target's distinct
points, the one-line messages of bad options and paths, 0-based coordinate
names, and help text for every option of every verb."""

import argparse
import json

import numpy as np
import pytest

from ntkgap import cli
from ntkgap.nets import training
from ntkgap.nets.arch import parse_arch
from ntkgap.targets import parse_target, rhm

RHM3 = "rhm:v=4,n_c=3,m=2,s=2,L=2"  # 24 valid strings
RHM2 = "rhm:v=4,n_c=2,m=2,s=2,L=2"  # 16 valid strings


def _main(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _refused(rc, out, err, *says):
    assert rc == 2 and err.startswith("ntkgap: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for s in says:
        assert s in err, err
    return err


# ------------------------------------------------------- RHM through train
def test_train_rhm_three_classes_reports_the_class_error(capsys):
    """``ntkgap train --target rhm:...,n_c=3 --json``: trains on one-hot
    labels and reports ``test_class_error``, the argmax error over the test
    strings, checked against the strings' true classes by parsing."""
    argv = ["train", "--arch", "fc:depth=2,act=relu", "--target", RHM3, "--width", "32",
            "--n", "12", "--n-test", "12", "--steps", "150", "--seeds", "2"]  # fmt: skip
    rc, out, _ = _main(capsys, *argv, "--json")
    r = json.loads(out)
    assert rc == 0 and len(r["test_class_error_per_seed"]) == 2
    assert r["test_class_error"] == pytest.approx(np.mean(r["test_class_error_per_seed"]))
    assert r["random_guess_class_error"] == pytest.approx(2 / 3)
    # reference: the same training through the library, its outputs read by argmax
    t = rhm.OneHotLabels(parse_target(RHM3))
    from ntkgap.nets import train_config

    cfg = train_config.from_mapping({"steps": 150})
    ref = training.train(parse_arch("fc:depth=2,act=relu"), 32, t, 12, seeds=[0, 1], cfg=cfg,
                         n_test=12, return_predictions=True)  # fmt: skip
    want = [np.mean(np.argmax(p, axis=1) != t.rhm.classify(x))
            for p, x in zip(ref["test_predictions"], ref["x_test"])]  # fmt: skip
    assert r["test_class_error_per_seed"] == pytest.approx(want)
    rc, text, _ = _main(capsys, *argv)
    assert rc == 0 and "test classification error" in text


def test_train_rhm_two_classes_reads_the_sign(capsys):
    """``ntkgap train --target rhm:...,n_c=2 --json``: the scalar +-1 label
    keeps its test MSE and gains ``test_class_error`` (sign misread)."""
    rc, out, _ = _main(capsys, "train", "--arch", "fc:depth=2", "--target", RHM2, "--width",
                       "16", "--n", "8", "--steps", "50", "--json")  # fmt: skip
    r = json.loads(out)
    assert rc == 0 and 0 <= r["test_class_error"] <= 1 and r["random_guess_class_error"] == 0.5
    assert "test_mse" in r and "test_predictions" not in r and "x_test" not in r


def test_eigenvalues_on_rhm_strings_says_why_in_one_line(capsys):
    """``ntkgap eigenvalues --domain rhm-strings:tokens=4,v=4`` (the domain
    ``spectrum`` prints) refuses in one line naming the verbs that work."""
    rc, out, err = _main(capsys, "eigenvalues", "--arch", "fc:depth=2", "--domain",
                         "rhm-strings:tokens=4,v=4", "--json")  # fmt: skip
    _refused(rc, out, err, "rhm-strings", "allowed: circle, hypercube", "sample-complexity")
    assert json.loads(out)["status"] == 2


def test_rhm_spectrum_text_says_what_a_degree_is(capsys):
    """``ntkgap spectrum --target rhm:...``: the text explains the degree on
    valid strings and prints the Efron-Stein weights its JSON carries."""
    rc, text, _ = _main(capsys, "spectrum", "--target", RHM3)
    rc2, js, _ = _main(capsys, "spectrum", "--target", RHM3, "--json")
    r = json.loads(js)
    assert rc == rc2 == 0 and "token positions a function reads" in text
    (line,) = [ln for ln in text.splitlines() if ln.startswith("Efron-Stein")]
    for k, w in zip(r["degree"], r["weight_es_squared"]):
        if k and w > 1e-12:
            assert f"{k}: {w / r['variance']:.1%}" in line


# ------------------------------------------------------- learned nothing
def test_train_that_learned_nothing_warns_per_seed(capsys):
    """``ntkgap train --target parity:d=12,k=4 --n 48``: a net worse than
    predicting zero (relative test MSE > 1) warns for each such seed, in the
    JSON ``warnings`` and in the text."""
    argv = ["train", "--arch", "fc:depth=2,act=relu", "--target", "parity:d=12,k=4", "--width",
            "32", "--n", "48", "--steps", "200", "--seeds", "2"]  # fmt: skip
    rc, out, _ = _main(capsys, *argv, "--json")
    r = json.loads(out)
    bad = [s for s, t in zip(r["seeds"], r["test_mse_per_seed"]) if t > 1]
    assert rc == 0 and bad, r["test_mse_per_seed"]  # a degree-4 parity at n = 48: nothing learned
    said = [w for w in r["warnings"] if "learned nothing" in w]
    assert [int(w.split()[1].rstrip(":")) for w in said] == bad
    rc, text, _ = _main(capsys, *argv)
    assert text.count("learned nothing") == len(bad)


# -------------------------------------------------- pool beyond the support
def test_train_pool_larger_than_the_cube_is_refused(capsys):
    """``ntkgap train --target parity:d=4,k=2 --n 100``: the 16-point cube
    keeps 8 points for the test set, so 100 is refused with the numbers."""
    rc, out, err = _main(capsys, "train", "--arch", "fc:depth=2", "--target", "parity:d=4,k=2",
                         "--width", "8", "--n", "100", "--json")  # fmt: skip
    _refused(rc, out, err, "--n 100", "16 distinct", "8 of them kept", "--n <= 8")
    assert list(json.loads(out)) == ["error", "status"]


# ------------------------------------------------- one-line messages
def test_mistyped_option_is_named(capsys):
    """``ntkgap spectrum --targt parity:d=6,k=2``: the unknown option is
    named with the closest one, not "required: --target"."""
    for argv in (["--targt", "parity:d=6,k=2"], ["--targt=parity:d=6,k=2"]):
        rc, out, err = _main(capsys, "spectrum", *argv)
        _refused(rc, out, err, "unknown option --targt", "did you mean --target?")
    rc, out, _ = _main(capsys, "spectrum", "--tar", "parity:d=6,k=2")  # a unique abbreviation
    assert rc == 0


def test_predict_eps_out_of_range_gives_the_range(capsys):
    """``ntkgap predict --eps 2``: the allowed range, not "nothing to fit on"."""
    rc, out, err = _main(capsys, "predict", "--arch", "fc:depth=2", "--target",
                         "parity:d=6,k=2", "--eps", "2")  # fmt: skip
    _refused(rc, out, err, "eps 2", "(0, 1)")


def test_output_under_a_file_names_the_file(capsys, tmp_path):
    """``ntkgap kernel --out afile/x.npy`` and ``compare --out afile/sub``
    with ``afile`` a file: the message says it is a file."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    rc, out, err = _main(capsys, "kernel", "--arch", "fc:depth=2", "--domain", "hypercube:d=3",
                         "--out", str(afile / "x.npy"))  # fmt: skip
    _refused(rc, out, err, f"{afile} is a file, not a folder")
    from ntkgap._infra.files import ensure_folder
    from ntkgap.errors import UsageError

    with pytest.raises(UsageError, match="is a file, not a folder"):
        ensure_folder(str(afile / "sub"))


def test_output_in_proc_names_the_real_cause(capsys):
    """``ntkgap kernel --out /proc/x.npy``: /proc exists; the message says
    it takes no new files, not "No such file or directory"."""
    rc, out, err = _main(capsys, "kernel", "--arch", "fc:depth=2", "--domain", "hypercube:d=3",
                         "--out", "/proc/x.npy")  # fmt: skip
    err = _refused(rc, out, err, "/proc")
    assert "No such file or directory" not in err and "does not accept new files" in err


# -------------------------------------------------------- one numbering
def test_coordinates_are_printed_0_based(capsys):
    """``ntkgap spectrum --target parity:d=6,k=2`` and ``eigenvalues --arch
    tree:arity=2,L=2 --domain hypercube:d=7``: coordinates as DAG files
    number them, from 0."""
    rc, out, _ = _main(capsys, "spectrum", "--target", "parity:d=6,k=2")
    assert rc == 0 and "support: x_0, x_1 " in out
    rc, out, _ = _main(capsys, "eigenvalues", "--arch", "tree:arity=2,L=2", "--domain",
                       "hypercube:d=7")  # fmt: skip
    assert rc == 0 and "unread coordinates 4..6 (0-based)" in out


# ---------------------------------------------------------- help text
def test_every_option_of_every_verb_has_help():
    """``ntkgap <verb> --help`` for every verb: each option says what it is."""
    parser = cli.build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    missing = [
        f"{verb} {a.option_strings[0]}"
        for verb, p in sub.choices.items()
        for a in p._actions
        if a.option_strings and not (a.help and a.help.strip())
    ]
    assert missing == []
