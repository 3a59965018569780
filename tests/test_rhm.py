"""The random hierarchy model: counts, unique classes, sampling, and its
degree profile against brute-force references on tiny grammars."""

import itertools
import json

import numpy as np
import pytest

from ntkgap import walsh
from ntkgap.errors import SpecError, UsageError
from ntkgap.targets import parse_target
from ntkgap.targets.rhm import n_valid_formula

TINY = [
    "rhm:v=3,n_c=2,m=2,s=2,L=2,seed=0",
    "rhm:v=3,n_c=2,m=3,s=2,L=2,seed=1",
    "rhm:v=2,n_c=2,m=2,s=2,L=2,seed=3",
    "rhm:v=4,n_c=2,m=2,s=2,L=2,seed=2",
]


def _expand_by_hand(t):
    """{string: class}, by recursive expansion of the rules (itertools)."""

    def strings(level, symbol):
        if level == t.L:
            yield (symbol,)
            return
        for rule in t.rules[level][symbol]:
            for parts in itertools.product(*(list(strings(level + 1, c)) for c in rule)):
                yield tuple(itertools.chain(*parts))

    out, produced = {}, 0
    for c in range(t.n_c):
        for string in strings(0, c):
            produced += 1
            assert string not in out, "a string with two parses"
            out[string] = c
    return out, produced


@pytest.mark.parametrize("spec", TINY + ["rhm:v=3,n_c=2,m=3,s=3,L=2,seed=4"])
def test_valid_strings_count_and_unique_class(spec):
    t = parse_target(spec)
    by_hand, produced = _expand_by_hand(t)
    n = n_valid_formula(t.n_c, t.m, t.s, t.L)
    assert produced == len(by_hand) == n == t.n_valid == t.domain.size
    x, y = t.enumerate()
    assert {tuple(r) for r in x.tolist()} == set(by_hand)
    np.testing.assert_array_equal(y, [1.0 - 2.0 * by_hand[tuple(r)] for r in x.tolist()])
    np.testing.assert_array_equal(t(x), y)


def test_invalid_strings_are_recognised():
    t = parse_target("rhm:v=3,n_c=2,m=2,s=2,L=2,seed=0")
    by_hand, _ = _expand_by_hand(t)
    every = np.array(list(itertools.product(range(3), repeat=4)))
    c = t.classify(every)
    for row, cls in zip(every.tolist(), c.tolist()):
        assert cls == by_hand.get(tuple(row), -1)
    assert np.sum(c >= 0) == 16
    with pytest.raises(ValueError, match="not valid"):
        t(every)


def test_rules_are_distinct_tuples():
    t = parse_target("rhm:v=4,n_c=2,m=3,s=2,L=3,seed=5")
    for k, rules in enumerate(t.rules):
        flat = {tuple(r) for r in rules.reshape(-1, t.s).tolist()}
        assert len(flat) == rules.shape[0] * t.m
        assert rules.shape[0] == (2 if k == 0 else 4)


def test_sampling_is_seeded_valid_and_uniform():
    t = parse_target("rhm:v=3,n_c=2,m=2,s=2,L=2,seed=0")
    x1, y1 = t.sample(20_000, seed=11)
    x2, y2 = t.sample(20_000, seed=11)
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(t.sample(50, seed=12)[0], x1[:50])
    np.testing.assert_array_equal(t(x1), y1)
    _, counts = np.unique(x1, axis=0, return_counts=True)
    assert counts.size == 16
    # each of 16 strings w.p. 1/16: within 5 binomial standard deviations
    sd = np.sqrt(20_000 * (1 / 16) * (15 / 16))
    assert np.all(np.abs(counts - 1250) < 5 * sd)
    d = t.sample(16, seed=3, replace=False)[0]
    assert len({tuple(r) for r in d.tolist()}) == 16
    with pytest.raises(UsageError, match="distinct"):
        t.sample(17, seed=3, replace=False)


def test_one_hot_features():
    t = parse_target("rhm:v=4,n_c=2,m=2,s=2,L=2,seed=2")
    x = t.domain.sample(10, seed=0)
    f = t.domain.features(x)
    assert f.shape == (10, 4 * 4) == (10, t.domain.input_dim)
    blocks = f.reshape(10, 4, 4)
    np.testing.assert_array_equal(blocks.sum(axis=2), 1.0)
    np.testing.assert_array_equal(blocks.argmax(axis=2), x)


def test_architecture():
    a = parse_target("rhm:v=4,n_c=2,m=2,s=3,L=3,seed=0").architecture()
    assert (a["constituents"], a["max_fan_in"], a["depth"], a["support_size"]) == (13, 3, 3, 27)


@pytest.mark.parametrize(
    "spec,message",
    [
        ("rhm:v=3,n_c=3,m=2,s=2,L=2", "only n_c = 2"),
        ("rhm:v=3,n_c=2,m=4,s=2,L=2", "m*v = 12 distinct rules per level exceed v^s = 9"),
        ("rhm:v=2,n_c=2,m=3,s=2,L=2", "exceed"),
        ("rhm:v=3,n_c=2,m=2,s=2", "missing required key 'L'"),
    ],
)
def test_bad_specs(spec, message):
    with pytest.raises(SpecError, match=message.replace("*", r"\*").replace("^", r"\^")):
        parse_target(spec)


def _brute_es(x, y):
    """Inclusion-exclusion written out with dictionaries, subset by subset."""
    n, P = x.shape
    rows = [tuple(r) for r in x.tolist()]

    def cond(T):
        groups = {}
        for r, v in zip(rows, y):
            groups.setdefault(tuple(r[j] for j in T), []).append(v)
        return np.array([np.mean(groups[tuple(r[j] for j in T)]) for r in rows])

    sq, cov = np.zeros(P + 1), np.zeros(P + 1)
    for k in range(P + 1):
        for S in itertools.combinations(range(P), k):
            f = sum(
                (-1) ** (k - len(T)) * cond(T)
                for r in range(k + 1)
                for T in itertools.combinations(S, r)
            )
            sq[k] += np.mean(f**2)
            cov[k] += np.mean(f * (y - y.mean()))
    return sq, cov


def _brute_projection(x, y):
    """Var of the least-squares fit on all indicators of x_S, |S| <= k."""
    n, P = x.shape
    explained = []
    for k in range(P + 1):
        cols = [np.ones(n)]
        for S in itertools.combinations(range(P), k):
            for pattern in {tuple(r) for r in x[:, S].tolist()}:
                cols.append(np.all(x[:, S] == pattern, axis=1).astype(float))
        A = np.stack(cols, axis=1)
        fit = A @ np.linalg.lstsq(A, y, rcond=None)[0]
        explained.append(np.mean(fit**2))
    return np.diff(explained, prepend=0.0)


@pytest.mark.parametrize("spec", TINY)
def test_degree_profiles_match_brute_force(spec):
    t = parse_target(spec)
    x, y = t.enumerate()
    es = t.efron_stein()
    sq, cov = _brute_es(x, y)
    np.testing.assert_allclose(es["weight_es_squared"], sq, atol=1e-12)
    np.testing.assert_allclose(es["weight_es_covariance"], cov, atol=1e-12)
    np.testing.assert_allclose(es["weight"], _brute_projection(x, y), atol=1e-9)
    assert sum(es["weight"]) == pytest.approx(es["variance"] + es["mean"] ** 2)
    assert sum(es["weight_es_covariance"]) == pytest.approx(es["variance"])
    assert es["variance"] == pytest.approx(1.0) and es["mean"] == pytest.approx(0.0)
    assert min(es["weight"]) >= -1e-12


def test_independent_positions_give_the_walsh_profile():
    # v=2, s=2, L=1, m=2, n_c=2: all four 2-tuples are rules, so the two
    # tokens are independent uniform bits and every profile is Walsh's
    t = parse_target("rhm:v=2,n_c=2,m=2,s=2,L=1,seed=6")
    x, y = t.enumerate()
    index = x[:, 0] + 2 * x[:, 1]  # token 1 <-> x_j = -1 <-> bit j set
    table = np.empty(4)
    table[index] = y
    coef = walsh.fwht(table) / 4
    walsh_profile = np.bincount([0, 1, 1, 2], weights=coef**2)
    es = t.efron_stein()
    for key in ("weight", "weight_es_squared"):
        np.testing.assert_allclose(es[key], walsh_profile, atol=1e-12)
    np.testing.assert_allclose(es["weight_es_covariance"][1:], walsh_profile[1:], atol=1e-12)


def test_spectrum_report_fields():
    rep = parse_target("rhm:v=3,n_c=2,m=2,s=2,L=2,seed=0").spectrum_report()
    assert rep["positions"] == 4 and len(rep["weight"]) == 5
    assert rep["moments"]["kurtosis"] == 1.0
    assert rep["complexity"]["dominant"] == rep["dominant_degree"]


def test_spectrum_reports_or_refuses_with_one_line(cli):
    # until `spectrum` reads RHM.spectrum_report, the FWHT path refuses cleanly
    r = cli("spectrum", "--target", "rhm:v=3,n_c=2,m=2,s=2,L=2", "--json")
    assert "Traceback" not in r.stderr
    if r.returncode == 0:
        rep = json.loads(r.stdout)
        assert sum(rep["weight"]) == pytest.approx(1.0)
    else:
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
