"""Typed results of the public API (``ntkgap.results``) and the JSON-key
contract of ``ntkgap <verb> --json``: the key sets below are literals, the
sets the verbs printed before the results were typed, and each verb's keys
must still contain them (``before <= now``); keys added since are listed as
literals too."""

import dataclasses
import json

import pytest

import ntkgap
from ntkgap import cli, results
from ntkgap._infra.files import dumps
from ntkgap.runs import store

SPEC_COMMON = {"architecture", "complexity", "domain", "mean", "target", "variance"}
# ``ntkgap <verb> --json`` keys before the results were typed
CLI_BEFORE = {
    "eigenvalues": {"arch", "at_float64_floor", "capped_at", "domain", "eigenvalue", "k",
                    "multiplicity", "tail_trace", "trace"},
    "learning-curve": {"arch", "arch_reads", "jitter_notes", "kappa", "kind", "learnability",
                       "modes", "n", "n_test", "noise", "overlap", "ridge", "seeds", "target",
                       "test_mse_empirical", "test_mse_empirical_std", "test_mse_theory",
                       "theory_valid", "theory_valid_fraction", "theory_valid_per_n"},
    "predict": {"C", "arch", "eps", "kernel_censored", "kernel_n_star", "kernel_reason",
                "kernel_theory_valid", "law", "measured", "net_interval", "net_n_star", "ratio",
                "ratio_interval", "sealed", "target", "winner", "winner_decided"},
    "sample-complexity": {"arch", "censored", "eps", "n_max", "n_star_theory", "target",
                          "theory_valid", "theory_valid_fraction", "warnings"},
    "spectrum-hypercube": SPEC_COMMON | {"degree", "dominant_degree", "support", "weight"},
    "spectrum-circle": SPEC_COMMON
    | {"dominant_frequency", "frequency", "power", "truncated_power"},
    "train": {"arch", "arch_reads", "best_step", "best_val_mse", "config", "diverged",
              "diverged_per_seed", "n", "n_params", "n_test_points", "n_train", "n_val",
              "overlap", "overlap_per_seed", "seconds", "seeds", "steps", "steps_per_seed",
              "steps_requested", "target", "test_mse", "test_mse_per_seed", "test_mse_std",
              "train_duplicates", "train_mse", "warnings", "width", "workers"},
}  # fmt: skip
# keys added since, allowed beside the ones above
CLI_ADDED = {"predict": {"extrapolation"}}
# ``ntkgap.api`` result keys before the results were typed
API_BEFORE = {
    "spectrum-hypercube": CLI_BEFORE["spectrum-hypercube"],
    "spectrum-circle": CLI_BEFORE["spectrum-circle"],
    "sample_complexity": {"censored", "n_max", "n_star", "n_star_theory", "theory_valid"},
    "learning_curve": {"empirical", "empirical_std", "jitter_notes", "kappa", "learnability",
                       "modes", "n", "overlap", "theory", "theory_valid"},
    "train": (CLI_BEFORE["train"] - {"arch", "n", "target"}) | {"loss_curve"},
    "predict": CLI_BEFORE["predict"],
}  # fmt: skip

PRED_T, PRED_A = "tree:d=40,L=3,arity=2,node=and", "tree:arity=2,L=3"
HC, CIRCLE = "parity:d=4,k=2", "sawtooth:L=2"
TINY_TRAIN = ["--arch", "fc:depth=2", "--target", "parity:d=8,k=1", "--width", "8",
              "--n", "12", "--n-test", "16", "--steps", "20"]  # fmt: skip
CLI_ARGV = {
    "eigenvalues": ["eigenvalues", "--arch", "fc:depth=2", "--domain", "hypercube:d=4"],
    "learning-curve": ["learning-curve", "--arch", "fc:depth=2", "--target", HC,
                       "--n", "8", "--seeds", "1", "--n-test", "16"],
    "predict": ["predict", "--target", PRED_T, "--arch", PRED_A, "--eps", "0.1", "--no-seal"],
    "sample-complexity": ["sample-complexity", "--arch", "fc:depth=2", "--target", HC,
                          "--eps", "0.1"],
    "spectrum-hypercube": ["spectrum", "--target", HC],
    "spectrum-circle": ["spectrum", "--target", CIRCLE],
    "train": ["train", *TINY_TRAIN],
}  # fmt: skip


@pytest.fixture(autouse=True)
def planted_store(tmp_path, monkeypatch):
    """A results folder with net n* = 5 C^0.8 planted for nine tree families
    (three node functions, depths 2-4), so that ``predict`` has a law."""
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path))
    monkeypatch.delenv("NTKGAP_PROFILE", raising=False)
    (tmp_path / "e4_trees").mkdir()
    for node in ("parity", "tanh", "random"):
        for L, C in ((2, 3), (3, 7), (4, 15)):
            value = 5.0 * C**0.8
            seeds = [{"seed": s, "status": "resolved", "n_star": value * f}
                     for s, f in enumerate((0.9, 0.95, 1.0, 1.0, 1.05, 1.1, 1.0, 1.0))]  # fmt: skip
            cell = {"method": "net_search", "target": f"tree:d=40,L={L},arity=2,node={node}",
                    "arch": f"tree:arity=2,L={L}", "eps": 0.1, "seeds": list(range(8)),
                    "n_min": 8, "n_max": 4096, "width": 64}  # fmt: skip
            store.save("e4_trees", cell, {"per_seed": seeds}, str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("name", sorted(CLI_ARGV))
def test_cli_json_keys_keep_the_reference_sets(name, capsys):
    """``ntkgap <verb> ... --json`` (eigenvalues, learning-curve, predict,
    sample-complexity, spectrum on the hypercube and the circle, train):
    the printed object holds every key it held before, and beyond them only
    the listed additions."""
    rc = cli.main([*CLI_ARGV[name], "--json"])
    out = capsys.readouterr().out
    assert rc == 0, out
    keys = set(json.loads(out))
    before = CLI_BEFORE[name]
    assert before <= keys, sorted(before - keys)
    extra = keys - before
    assert extra <= CLI_ADDED.get(name, set()) | {"random_guess_class_error"}, sorted(extra)


def _api_results():
    """Each typed API call of this module, by the name of its key set."""
    return {
        "spectrum-hypercube": lambda: ntkgap.spectrum(HC),
        "spectrum-circle": lambda: ntkgap.spectrum(CIRCLE),
        "sample_complexity": lambda: ntkgap.sample_complexity("fc:depth=2", HC, eps=0.1),
        "learning_curve": lambda: ntkgap.learning_curve(
            "fc:depth=2", HC, n=[8], seeds=1, n_test=16
        ),
        "train": lambda: ntkgap.train(
            "fc:depth=2", "parity:d=8,k=1", 12, width=8, n_test=16, steps=20
        ),
        "predict": lambda: ntkgap.predict(PRED_T, PRED_A, 0.1, seal=False),
    }


TYPES = {
    "spectrum-hypercube": results.Spectrum,
    "spectrum-circle": results.Spectrum,
    "sample_complexity": results.SampleComplexity,
    "learning_curve": results.LearningCurve,
    "train": results.Training,
    "predict": results.Prediction,
}


@pytest.mark.parametrize("name", sorted(TYPES))
def test_api_returns_frozen_typed_results_with_the_same_keys(name):
    """``ntkgap.spectrum/sample_complexity/learning_curve/train/predict``:
    a typed, frozen result whose keys hold the reference set; assignment
    raises, attribute and key access agree, ``as_dict()`` round-trips and
    the JSON of the result is the JSON of its dict."""
    r = _api_results()[name]()
    assert isinstance(r, TYPES[name])
    keys = set(r)
    assert API_BEFORE[name] <= keys, sorted(API_BEFORE[name] - keys)
    assert keys - API_BEFORE[name] <= CLI_ADDED.get(name, set()), sorted(keys)
    first = next(iter(r))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(r, first, 0)
    d = r.as_dict()
    assert type(d) is dict and set(d) == keys and len(r) == len(d)
    for k in d:
        assert r[k] is getattr(r, k) is d[k]
    again = TYPES[name].from_dict(d)
    assert again == r and again.as_dict() == d
    assert dumps(r) == dumps(d)


def test_absent_fields_are_not_keys():
    """``ntkgap.spectrum("sawtooth:L=2")`` (a circle target): the hypercube's
    fields are absent: not keys, KeyError on indexing, ABSENT as attributes;
    an unknown key is refused by ``from_dict``."""
    r = ntkgap.spectrum(CIRCLE)
    assert "degree" not in r and r.degree is results.ABSENT and not r.degree
    with pytest.raises(KeyError):
        r["degree"]
    with pytest.raises(TypeError, match="no field"):
        results.SampleComplexity.from_dict({"n_star": 1, "bogus": 2})
