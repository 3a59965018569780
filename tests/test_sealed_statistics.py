"""Sealed predictions scored as claims (``ntkgap.verdicts.sealed_statistics``):
``ntkgap run`` seals a config's ``[[seal]]`` units before their cells run;
planted right and wrong predictions read supported and not supported; a
prediction sealed after its cells, or edited, is refused and not scored."""

import json
import os

import pytest

from ntkgap import cli
from ntkgap.runs import store
from ntkgap.verdicts import claims, rules, seal_order, sealed_statistics, sealing

EXP = "mods"
WINNER_RULE = {"kind": "above", "threshold": 0.5, "reason": "better than a coin"}
NSTAR_RULE = {"kind": "below", "threshold": 0.477, "reason": "within a factor 3"}


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path))
    monkeypatch.delenv("NTKGAP_PROFILE", raising=False)
    return tmp_path


def _target(i):
    return f"tree:d=40,L={2 + i % 4},arity=2,node={('tanh', 'parity', 'and')[i % 3]}"


def _arch(i):
    return f"tree:arity=2,L={2 + i % 4},b_std={i}"


def _per_seed(value):
    vals = [value * f for f in (0.9, 0.95, 1.0, 1.0, 1.0, 1.05, 1.1, 1.2)]
    return [{"seed": s, "status": "resolved", "n_star": v} for s, v in enumerate(vals)]


def _cell(method, i):
    return {"method": method, "target": _target(i), "arch": _arch(i), "eps": 0.1,
            "seeds": list(range(8)), "n_min": 4, "n_max": 4096}  # fmt: skip


def _seal(i, net, kernel):
    pred = {"target": _target(i), "arch": _arch(i), "eps": 0.1, "net_n_star": net,
            "net_interval": [net / 2, net * 2], "kernel_n_star": kernel,
            "winner": "net" if kernel > net else "kernel"}  # fmt: skip
    return sealing.seal_prediction(pred, ["planted"])


def _measure(root, i, net, kernel):
    (root / EXP).mkdir(exist_ok=True)
    store.save(EXP, _cell("net_search", i), {"per_seed": _per_seed(net)}, str(root))
    store.save(EXP, _cell("ntk_search", i), {"per_seed": _per_seed(kernel)}, str(root))


def _params(m):
    return {"units": [[_target(i), _arch(i)] for i in range(m)], "eps": 0.1}


def _plant(root, m, predicted, measured, late=()):
    """m units: each sealed with ``predicted`` (net, kernel) n*, then
    measured at ``measured``; the units in ``late`` measured first."""
    for i in range(m):
        if i in late:
            _measure(root, i, *measured)
        _seal(i, *predicted)
    for i in range(m):
        if i not in late:
            _measure(root, i, *measured)


def test_right_predictions_read_supported(root):
    _plant(root, 10, predicted=(20.0, 2000.0), measured=(25.0, 1500.0))
    w = sealed_statistics.sealed_winner(dict(_params(10), rule=WINNER_RULE), EXP)
    assert w.verdict == rules.SUPPORTED and w.value == 1.0 and w.seeds == 10
    n = sealed_statistics.sealed_nstar(dict(_params(10), rule=NSTAR_RULE), EXP)
    assert n.verdict == rules.SUPPORTED and n.value == pytest.approx(0.125, abs=0.01)


def test_planted_wrong_predictions_read_not_supported(root):
    """Predicted: the kernel wins, by two decades off on each side; measured:
    the net wins by far. Both claims must say no."""
    _plant(root, 10, predicted=(2000.0, 20.0), measured=(20.0, 2000.0))
    w = sealed_statistics.sealed_winner(dict(_params(10), rule=WINNER_RULE), EXP)
    assert w.verdict == rules.NOT_SUPPORTED and w.value == 0.0
    n = sealed_statistics.sealed_nstar(dict(_params(10), rule=NSTAR_RULE), EXP)
    assert n.verdict == rules.NOT_SUPPORTED and n.value == pytest.approx(2.0, abs=0.05)


def test_one_side_wrong_is_enough_to_refute_the_nstar_claim(root):
    _plant(root, 10, predicted=(20.0, 20000.0), measured=(20.0, 200.0))
    n = sealed_statistics.sealed_nstar(dict(_params(10), rule=NSTAR_RULE), EXP)
    assert n.verdict == rules.NOT_SUPPORTED and "kernel |log10" in n.detail


def test_a_prediction_sealed_after_its_cells_is_refused_not_scored(root):
    """Three units measured before their predictions were sealed: not scored
    (counted as refused, with the reason), the seven others scored."""
    _plant(root, 10, predicted=(20.0, 2000.0), measured=(25.0, 1500.0), late=(0, 4, 7))
    for i in (0, 4, 7):  # the order the refusal reads: a file's time against the seal's
        path = sealing.prediction_path(_target(i), _arch(i), 0.1)
        stamp = seal_order.check_hash(store.load_result(path), path)
        first = seal_order.first_measured(os.path.join(root, EXP), _target(i), _arch(i))
        assert first is not None and stamp > first
    w = sealed_statistics.sealed_winner(dict(_params(10), rule=WINNER_RULE), EXP)
    assert w.seeds == 7 and "3 refused" in w.detail and "after the first measured" in w.detail


def test_an_edited_prediction_is_refused(root):
    _plant(root, 10, predicted=(2000.0, 20.0), measured=(20.0, 2000.0))
    for i in range(10):  # every file edited to the right answer after the fact
        path = sealing.prediction_path(_target(i), _arch(i), 0.1)
        body = json.loads(open(path).read())
        body["prediction"]["winner"] = "net"
        open(path, "w").write(json.dumps(body))
    w = sealed_statistics.sealed_winner(dict(_params(10), rule=WINNER_RULE), EXP)
    assert w.verdict == rules.INCONCLUSIVE and "10 refused" in w.detail and "edited" in w.detail


def test_units_without_a_prediction_or_a_measurement_are_counted(root):
    _plant(root, 8, predicted=(20.0, 2000.0), measured=(25.0, 1500.0))
    params = _params(10)  # units 8, 9: neither sealed nor measured
    _seal(9, 20.0, 2000.0)
    w = sealed_statistics.sealed_winner(dict(params, rule=WINNER_RULE), EXP)
    assert "1 not sealed" in w.detail and "1 not measured" in w.detail and w.seeds == 8


CONFIG = """name = "{name}"
title = "sealed before measured"

[[seal]]
profile = "quick"
target = "tree:d=8,L=2,arity=2,node=and"
arch = "tree:arity=2,L=2"
eps = 0.1
sources = ["e4_trees"]
{extra}

[[claim]]
id = "W"
claim = "the sealed winner is right"
statistic = "sealed_winner"
profile = "quick"
params = {{ target = "tree:d=8,L=2,arity=2,node=and", arch = "tree:arity=2,L=2", eps = 0.1 }}
rule = {{ kind = "above", threshold = 0.5, reason = "better than a coin" }}

[quick]
[[quick.grid]]
method = "ntk_search"
arch = "tree:arity=2,L=2"
target = "tree:d=8,L=2,arity=2,node=and"
eps = 0.1
seeds = [0, 1]
n_min = 2
n_max = 16
n_test = 16
"""


def _plant_law(root):
    """Net searches of three other families in e4_trees, for the law to fit."""
    (root / "e4_trees").mkdir(exist_ok=True)
    for k, node in enumerate(("tanh", "parity", "linear")):
        for L in (2, 3, 4):
            cell = {"method": "net_search", "target": f"tree:d=40,L={L},arity=2,node={node}",
                    "arch": f"tree:arity=2,L={L}", "eps": 0.1, "seeds": list(range(8)),
                    "n_min": 4, "n_max": 4096, "width": 32}  # fmt: skip
            rec = {"per_seed": _per_seed(5.0 * (2**L - 1) ** (0.8 + 0.05 * k))}
            store.save("e4_trees", cell, rec, str(root))


def test_run_seals_before_the_cells_and_says_so(root, tmp_path, capsys):
    """`ntkgap run cfg.toml`: the [[seal]] unit is sealed, then its cell runs;
    the sealed time precedes the stored cell's; a second run seals nothing."""
    _plant_law(root)
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(CONFIG.format(name="sealrun", extra=""))
    assert cli.main(["run", str(cfg), "--results", str(root), "--json"]) == 0
    captured = capsys.readouterr()
    assert "sealrun: 1 predictions sealed, 0 sealed before" in captured.err
    out = json.loads(captured.out)
    assert out["computed"] == 1 and out["seals"][0].startswith("sealrun: 1 predictions sealed")
    path = sealing.prediction_path("tree:d=8,L=2,arity=2,node=and", "tree:arity=2,L=2", 0.1)
    sealed = store.load_result(path)
    first = seal_order.first_measured(
        os.path.join(root, "sealrun"), "tree:d=8,L=2,arity=2,node=and", "tree:arity=2,L=2"
    )
    assert seal_order.check_hash(sealed, path) < first
    assert sealed["prediction"]["winner"] in ("net", "kernel", None)
    assert len(sealed["fitted_on"]) == 9  # the law's nine planted searches
    assert cli.main(["run", str(cfg), "--results", str(root), "--json"]) == 0
    assert "0 predictions sealed, 1 sealed before" in capsys.readouterr().err
    # `ntkgap show` evaluates a user's own config's claims from the stored results
    assert cli.main(["show", str(cfg), "--results", str(root), "--json"]) == 0
    (w,) = json.loads(capsys.readouterr().out)["claims"]  # no net search in the grid
    assert w["id"] == "W" and w["verdict"] == rules.INCONCLUSIVE and "1 not measured" in w["detail"]


def test_run_does_not_seal_a_unit_measured_already(root, tmp_path, capsys):
    _plant_law(root)
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(CONFIG.format(name="late", extra=""))
    (root / "late").mkdir()
    cell = dict(_cell("ntk_search", 0), target="tree:d=8,L=2,arity=2,node=and")
    store.save("late", dict(cell, arch="tree:arity=2,L=2"), {"per_seed": _per_seed(9.0)}, str(root))
    assert cli.main(["run", str(cfg), "--results", str(root)]) == 0
    assert "not sealed: tree:d=8,L=2,arity=2,node=and" in capsys.readouterr().err
    path = sealing.prediction_path("tree:d=8,L=2,arity=2,node=and", "tree:arity=2,L=2", 0.1)
    assert not os.path.exists(path)


SEAL_HEAD = 'profile = "quick"\ntarget = "tree:d=8,L=2,arity=2,node=and"\narch'


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("{extra}", 'colour = "red"', "seal 0: unknown key 'colour' (allowed: profile, target"),
        ("eps = 0.1\nsources", "eps = 2.0\nsources", "seal 0: eps must be a number in (0, 1)"),
        ('sources = ["e4_trees"]', "", "seal 0: 'sources' is missing (a seal needs profile,"),
        (SEAL_HEAD, SEAL_HEAD.replace("quick", "quik"),
         "seal 0: profile 'quik' is unknown (allowed: quick, paper, full)"),
        ("node=and\"\narch", "node=andd\"\narch",
         "seal 0: target 'tree:d=8,L=2,arity=2,node=andd': "),
        ('arch = "tree:arity=2,L=2"\neps', 'arch = "tree:arity=2,L=2,foo=1"\neps',
         "seal 0: arch 'tree:arity=2,L=2,foo=1': "),
        ('sources = ["e4_trees"]', "sources = []", "seal 0: sources must be a non-empty list"),
        ('sources = ["e4_trees"]', 'sources = "e4_trees"', "seal 0: sources must be a non-empty"),
    ],
)  # fmt: skip
def test_a_bad_seal_table_is_refused_before_anything(root, tmp_path, capsys, old, new, message):
    """`ntkgap run cfg.toml --json` with a malformed [[seal]]: exit 2, one line
    naming the field, nothing sealed, no cell run."""
    cfg = tmp_path / "cfg.toml"
    text = CONFIG.replace(old, new, 1)
    assert text != CONFIG
    cfg.write_text(text.format(name="bad", extra=""))
    assert cli.main(["run", str(cfg), "--results", str(root), "--json"]) == 2
    err = json.loads(capsys.readouterr().out)["error"]
    assert "\n" not in err and message in err
    assert not os.path.exists(os.path.join(root, "bad"))
    assert not os.path.exists(os.path.join(root, sealing.PREDICTIONS))


def test_a_unit_may_name_its_kernel_by_another_spelling(root):
    """A mean-field net's arch is spelt apart (W_std=1) for its own cells; its
    unit's third entry names the NTK's cells."""
    for i in range(8):
        _seal(i, 20.0, 2000.0)
        _measure(root, i, 25.0, 1500.0)
        kernel = dict(_cell("ntk_search", i), arch=_arch(i) + ",W_std=2")
        store.save(EXP, kernel, {"per_seed": _per_seed(10.0)}, str(root))  # the kernel wins
    params = {"units": [[_target(i), _arch(i), _arch(i) + ",W_std=2"] for i in range(8)]}
    w = sealed_statistics.sealed_winner(dict(params, eps=0.1, rule=WINNER_RULE), EXP)
    assert w.value == 0.0 and w.verdict == rules.NOT_SUPPORTED  # read the named kernel cells
    same = sealed_statistics.sealed_winner(dict(_params(8), rule=WINNER_RULE), EXP)
    assert same.value == 1.0


E8M = os.path.join(os.path.dirname(__file__), "..", "experiments", "e8_modifications.toml")


def test_the_shipped_design_seals_every_unit_its_claims_score_and_runs_each():
    """e8_modifications.toml: the units of E8-predicted-* are exactly those its
    [[seal]] tables seal (full), each unit's net and kernel cells are in the
    full grids (one net search per unit, its fields telling widths apart), and
    the winner claim can read supported (the rule's reason)."""
    from ntkgap.runs import config as runs_config

    cfg, parsed = claims.validate_config(E8M, "full")
    by = {c.id: c for c in parsed}
    sealed = {(u[0], u[1]) for tab in cfg["seal"] for u in sealed_statistics.units(tab)}
    cells = runs_config.expand(cfg, "full", where=E8M)
    have = {(c["method"], c["target"], c["arch"]) for c in cells}
    for cid in ("E8-predicted-winner", "E8-predicted-nstar"):
        us = sealed_statistics.units(by[cid].params)
        assert len(us) == 24 and {(u[0], u[1]) for u in us} == sealed
        for t, a, k, fields in us:
            assert ("net_search", t, a) in have and ("ntk_search", t, k) in have
            nets = [
                c for c in cells if (c["method"], c["target"], c["arch"]) == ("net_search", t, a)
            ]
            assert sum(all(c.get(f) == v for f, v in fields.items()) for c in nets) == 1
    mods = ("b0", "b1", "mf", "residual", "layernorm", "width16", "width32", "width128")
    assert {f"E8-mod-{m}" for m in mods} <= set(by)
    from ntkgap.verdicts.proportions import fewest_to_support

    assert fewest_to_support(by["E8-predicted-winner"].rule, 0.0) <= 15


def _plant_mixed(root, m, kernel_wins, says):
    """m units, the kernel measured the winner in ``kernel_wins`` of them (by
    two decades), the net in the rest; ``says(i, kernel_won)`` the sealed
    winner of unit i."""
    for i in range(m):
        won = i in kernel_wins
        pred_net, pred_kernel = (2000.0, 20.0) if says(i, won) == "kernel" else (20.0, 2000.0)
        _seal(i, pred_net, pred_kernel)
    for i in range(m):
        _measure(root, i, *((2000.0, 20.0) if i in kernel_wins else (20.0, 2000.0)))


BASE = dict(rule=WINNER_RULE, baseline="net")


def test_always_calling_the_net_is_no_evidence_against_the_baseline(root):
    """Predictions that always say net score 16 of 20 plainly (supported), but
    never depart from the baseline: inconclusive against it."""
    _plant_mixed(root, 20, kernel_wins={0, 5, 9, 13}, says=lambda i, won: "net")
    plain = sealed_statistics.sealed_winner(dict(_params(20), rule=WINNER_RULE), EXP)
    assert plain.verdict == rules.SUPPORTED and plain.value == 0.8
    paired = sealed_statistics.sealed_winner(dict(_params(20), **BASE), EXP)
    assert paired.verdict == rules.INCONCLUSIVE and "always 'net' 16 of 20" in paired.detail


def test_a_prediction_that_finds_the_kernels_wins_beats_the_baseline(root):
    wins = {0, 2, 4, 6, 8, 10, 12}
    _plant_mixed(root, 16, kernel_wins=wins, says=lambda i, won: "kernel" if won else "net")
    paired = sealed_statistics.sealed_winner(dict(_params(16), **BASE), EXP)
    assert paired.verdict == rules.SUPPORTED and paired.value == 1.0 and paired.seeds == 7


def test_a_prediction_that_calls_the_kernel_wrongly_loses_to_the_baseline(root):
    """Predicted kernel on eight units the net wins: not supported against
    always-net (every departure wrong)."""
    _plant_mixed(root, 16, kernel_wins=set(), says=lambda i, won: "kernel" if i < 8 else "net")
    paired = sealed_statistics.sealed_winner(dict(_params(16), **BASE), EXP)
    assert paired.verdict == rules.NOT_SUPPORTED and paired.value == 0.0


def test_a_kernel_spelt_apart_measured_before_the_seal_is_refused(root):
    for i in range(8):
        kernel = dict(_cell("ntk_search", i), arch=_arch(i) + ",W_std=2")
        (root / EXP).mkdir(exist_ok=True)
        store.save(EXP, kernel, {"per_seed": _per_seed(10.0)}, str(root))  # before the seal
        _seal(i, 20.0, 2000.0)
        store.save(EXP, _cell("net_search", i), {"per_seed": _per_seed(25.0)}, str(root))
    params = {"units": [[_target(i), _arch(i), _arch(i) + ",W_std=2"] for i in range(8)]}
    w = sealed_statistics.sealed_winner(dict(params, eps=0.1, rule=WINNER_RULE), EXP)
    assert "8 refused" in w.detail and "(its kernel)" in w.detail


def test_run_refuses_to_start_when_a_unit_cannot_be_predicted(root, tmp_path, capsys):
    """Nothing stored to fit the law on: `ntkgap run` stops before any cell,
    one line naming the unit (its cells would otherwise run unpredicted)."""
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(CONFIG.format(name="nolaw", extra=""))
    assert cli.main(["run", str(cfg), "--results", str(root), "--json"]) == 2
    err = json.loads(capsys.readouterr().out)["error"]
    assert err.startswith("seal: no prediction of tree:d=8,L=2,arity=2,node=and on tree:")
    assert "no stored net search of e4_trees at eps" in err  # its own sources, named
    assert "no cell was run" in err and not os.path.exists(os.path.join(root, "nolaw"))


def test_with_too_few_units_for_a_ci_the_worse_side_is_still_the_one_read(root):
    """Five units (no CI below 8): the kernel's median distance (log10 2000/1500)
    exceeds the net's (log10 25/20); the claim reports the kernel's."""
    _plant(root, 5, predicted=(20.0, 2000.0), measured=(25.0, 1500.0))
    n = sealed_statistics.sealed_nstar(dict(_params(5), rule=NSTAR_RULE), EXP)
    assert n.value == pytest.approx(0.125, abs=0.01) and n.verdict == rules.INCONCLUSIVE


def test_units_of_one_arch_are_told_apart_by_their_fields(root):
    """Nets of widths 16 and 32 share an arch spec and one sealed prediction;
    a unit naming its width reads its own net, one naming none is ambiguous."""
    for i in range(8):
        _seal(i, 20.0, 2000.0)
        _measure(root, i, 25.0, 1500.0)  # no width field: neither 16 nor 32
        for width, net in ((16, 3000.0), (32, 25.0)):  # width 16: the kernel wins
            cell = dict(_cell("net_search", i), width=width)
            store.save(EXP, cell, {"per_seed": _per_seed(net)}, str(root))
    unit = lambda i, f: [_target(i), _arch(i), _arch(i), f]  # noqa: E731
    w16 = {"units": [unit(i, {"width": 16}) for i in range(8)], "eps": 0.1}
    w32 = {"units": [unit(i, {"width": 32}) for i in range(8)], "eps": 0.1}
    assert sealed_statistics.sealed_winner(dict(w16, rule=WINNER_RULE), EXP).value == 0.0
    assert sealed_statistics.sealed_winner(dict(w32, rule=WINNER_RULE), EXP).value == 1.0
    bare = sealed_statistics.sealed_winner(dict(_params(8), rule=WINNER_RULE), EXP)
    assert "8 ambiguous" in bare.detail and bare.value is None
