"""The results store after cells were keyed filled: cells are filled with
their method's defaults once (``expand``), keyed by the filled cell, an old
store migrates to the new keys without recomputing, and the fixed-n
learning-rate choice is read back as the runner stored it."""

import hashlib
import importlib.util
import json
import os

import pytest

from ntkgap.errors import UsageError
from ntkgap.nets import train_config
from ntkgap.runs import config, lr_choice, registry, store

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T, A = "parity:d=6,k=2", "fc:depth=1"
LR = train_config.BY_NAME["lr"].default

NTK = {"method": "ntk", "target": T, "arch": A, "n": 8, "seed": 0}
NET = {"method": "net", "target": T, "arch": A, "width": 4, "n": 16, "seeds": [0, 1, 2]}
SEARCH = {"method": "net_search", "target": T, "arch": A, "width": 4, "eps": 0.1, "seeds": [0]}
SEARCH.update(n_min=8, n_max=64)

KEY_THEORY = {"method": "theory", "target": T, "arch": A, "n": [8]}
KEY_CASES = [  # (cell a, cell b, same key?)
    (NTK, dict(NTK, ridge=0.0), True),
    (NTK, dict(NTK, ridge=0.1), False),
    (NTK, dict(NTK, n_test=2000), True),  # the README: 2000 test points unless given
    (NET, dict(NET, lr=LR), True),
    (NET, dict(NET, lr=LR * 10), False),
    (NET, dict(NET, alpha=None, optimizer="adam"), True),
    (SEARCH, dict(SEARCH, resolution=1.25), True),  # the README's search grid factor
    ({"method": "theory", "target": T, "arch": A, "n": [8]}, dict(KEY_THEORY, eps=[]), True),
]


@pytest.mark.parametrize("a,b,same", KEY_CASES)
def test_a_written_default_and_an_omitted_one_are_one_cell(a, b, same):
    assert (store.cell_key(a) == store.cell_key(b)) is same
    assert store.cell_key(a) == store.cell_key(registry.fill(a))  # the key of the filled cell


def _old_key(cell):
    """The old key: a hash of the cell as written (independent formula)."""
    return hashlib.sha256(json.dumps(cell, sort_keys=True).encode()).hexdigest()[:20]


def test_expand_fills_every_declared_default_once():
    grid = {"method": "net", "target": T, "arch": A, "width": 4, "n": [8, 16], "seeds": [0]}
    written = dict(grid, lr=LR, n_test=2000, steps=train_config.BY_NAME["steps"].default)
    cells = config.expand({"name": "x", "quick": {"grid": [grid]}}, "quick")
    again = config.expand({"name": "x", "quick": {"grid": [written]}}, "quick")
    assert cells == again and len(cells) == 2
    for c in cells:
        declared = registry.METHODS["net"].params
        # nothing left to default; an ABSENT parameter is written only when given
        assert set(c) == {
            "method",
            *(k for k, p in declared.items() if p.default is not registry.ABSENT),
        }
        assert registry.fill(c) == c
        assert c["lr"] == LR and c["alpha"] is None


def _plant(root, name, raw_cells, cfg):
    """Writes cells as the old code did: named by the hash of the raw cell."""
    folder = os.path.join(root, name)
    os.makedirs(folder, exist_ok=True)
    for cell, rec in raw_cells:
        with open(os.path.join(folder, _old_key(cell) + ".json"), "w") as fh:
            json.dump(dict(rec, cell=cell), fh)
    with open(os.path.join(folder, ".config-quick.json"), "w") as fh:
        json.dump(cfg, fh)


def _net_result(best_val):
    return {"seeds": [0, 1, 2], "best_val_mse": best_val, "test_mse_per_seed": [0.5] * 3}


PLANTED_CFG = {
    "name": "planted",
    "quick": {
        "grid": [
            {"method": "ntk", "target": T, "arch": A, "n": [8, 16], "seed": 0},
            {**NET, "lr": 0.01},  # one grid names the rate,
            NET,  # the other omits it (the default): one group of two rates
        ]
    },
}
NTK_RESULT = {"result": {"test_mse": 0.25}}
PLANTED = [
    (NTK, NTK_RESULT),
    (dict(NTK, ridge=0.0), {"result": {"diverged": True}, "failed": "diverged"}),  # same cell
    (dict(NTK, n=16, ridge=0.0), {"result": {"test_mse": 0.125}}),
    (dict(NET, lr=0.01), {"result": _net_result([0.1, 0.3, 0.2])}),  # median 0.2
    (NET, {"result": _net_result([0.25, 0.15, 0.35])}),  # median 0.25
]


def _migrate_module():
    spec = importlib.util.spec_from_file_location(
        "migrate_results", os.path.join(ROOT, "benchmarks", "migrate_results.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def planted(tmp_path, monkeypatch):
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path))
    monkeypatch.delenv("NTKGAP_PROFILE", raising=False)
    _plant(str(tmp_path), "planted", PLANTED, PLANTED_CFG)
    return tmp_path


def test_migration_finds_every_cell_under_its_new_key(planted):
    before = store.results("planted", profile="quick")
    assert before == []  # every old key hashed a cell without its defaults
    counts = _migrate_module().migrate(str(planted))
    assert counts["merged"] == 1 and counts["skipped"] == 0 and counts["lr_choices"] == 1
    got = store.results("planted", profile="quick")
    assert len(got) == 4
    by_key = {store.cell_key(c): r for c, r in got}
    assert by_key[store.cell_key(NTK)] == {"test_mse": 0.25}  # the result, not the failure
    assert by_key[store.cell_key(dict(NTK, n=16))] == {"test_mse": 0.125}
    assert by_key[store.cell_key(dict(NET, lr=0.01))]["best_val_mse"] == [0.1, 0.3, 0.2]
    files = [f for f in os.listdir(planted / "planted") if not f.startswith(".")]
    assert sorted(files) == sorted(store.cell_key(c) + ".json" for c, _ in got)
    for c, _ in got:
        assert c == registry.fill(c)
    # lr 0.01: median best validation 0.2 < 0.25
    assert store.lr_choices("planted", profile="quick") == {
        (T, A, 16): {"lr": 0.01, "median_best_val_mse": {"0.01": 0.2, "0.001": 0.25}},
    }
    (choice,) = [f for f in os.listdir(planted / "planted") if f.startswith(".lr-")]
    os.remove(planted / "planted" / choice)
    with pytest.raises(UsageError, match="no learning-rate choice stored"):
        store.lr_choices("planted", profile="quick")
    again = _migrate_module().migrate(str(planted))
    assert again["moved"] == again["merged"] == 0 and again["unchanged"] == 4
    assert again["lr_choices"] == 1  # stored again: the reader finds it
    assert store.lr_choices("planted", profile="quick")[(T, A, 16)]["lr"] == 0.01


def test_lr_choice_reader_refuses_a_key_that_merges_groups(planted):
    _migrate_module().migrate(str(planted))
    # with lr in the key every rate is its own curve: nothing chosen
    each = store.lr_choices("planted", ("target", "arch", "lr"), profile="quick")
    assert each[(T, A, 0.01, 16)] == {"lr": 0.01, "median_best_val_mse": {}}
    assert each[(T, A, LR, 16)] == {"lr": LR, "median_best_val_mse": {}}
    # a second width: two groups at (target, arch, n), each chosen on its own
    wide = dict(NET, width=8, lr=[0.01, LR])
    cfg = dict(PLANTED_CFG, quick={"grid": PLANTED_CFG["quick"]["grid"] + [wide]})
    with open(planted / "planted" / ".config-quick.json", "w") as fh:
        json.dump(cfg, fh)
    store.save("planted", dict(wide, lr=0.01), _net_result([0.4, 0.4, 0.4]))
    store.save("planted", dict(wide, lr=LR), _net_result([0.3, 0.3, 0.3]))
    assert lr_choice.decide("planted", config.expand(cfg, "quick")) == 2
    with pytest.raises(UsageError, match="form 2 groups"):
        store.lr_choices("planted", profile="quick")
    by_width = store.lr_choices("planted", ("target", "arch", "width"), profile="quick")
    assert by_width[(T, A, 4, 16)]["lr"] == 0.01 and by_width[(T, A, 8, 16)]["lr"] == LR
