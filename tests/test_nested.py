"""Nested learning curves against independent references: pools nested in n
with a fixed disjoint test set; the factor's leading blocks against per-n
scipy solves; the nested n* search against a search of independent per-n
fits (each with its own jitter) on the same pools; bit-identical reruns."""

import numpy as np
import pytest
import scipy.linalg as sla

from ntkgap.kernels import gram, krr, ntk_predictor
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import sample_complexity, search
from ntkgap.targets import parse_target
from ntkgap.targets.split import split
from ntkgap.targets.variance import target_variance

CASES = [  # (target, n_test, pool sizes)
    ("tree:d=40,L=3,arity=2,node=tanh", 64, (5, 60, 192, 230)),
    ("tree:d=40,L=5,arity=2,node=parity", 300, (7, 500, 1500)),
    ("parity:d=12,k=3", 200, (9, 300, 2500)),
    ("sawtooth:L=2", 50, (3, 1500)),
    ("rhm:v=8,n_c=2,m=2,s=2,L=2,seed=0", 64, (4, 40, 90)),
]
L3_CELL = dict(method="ntk_search", arch="tree:arity=2,L=3", eps=0.1, n_min=4, n_max=192,
               target="tree:d=40,L=3,arity=2,node=tanh", n_test=64)  # fmt: skip


def _rows(x):
    x = np.asarray(x)
    return {tuple(np.atleast_1d(r)) for r in x.reshape(x.shape[0], -1)}


@pytest.mark.parametrize("spec,n_test,ns", CASES)
def test_pools_are_prefixes_and_the_test_set_is_fixed_and_disjoint(spec, n_test, ns):
    t = parse_target(spec)
    big = split(t, ns[-1], seed=5, n_test=n_test)
    big_pool = np.concatenate([big.x_train, big.x_val])
    for n in ns:
        sp = split(t, n, seed=5, n_val=n // 4, n_test=n_test)
        pool = np.concatenate([sp.x_train, sp.x_val])
        np.testing.assert_array_equal(pool, big_pool[:n])
        np.testing.assert_array_equal(sp.x_test, big.x_test)
        assert not _rows(sp.x_test) & _rows(pool) and sp.overlap == 0.0
        np.testing.assert_array_equal(sp.y_test, t(sp.x_test))
    assert big.x_test.shape[0] <= n_test


def test_test_set_reserves_at_most_half_the_key_cube():
    t = parse_target("tree:d=40,L=3,arity=2,node=tanh")  # 256 leaf configurations
    sp = split(t, 192, seed=0, n_test=64)
    assert sp.duplicates == 0 and sp.exhaustive  # 192 + 64 = the whole cube
    leaves = list(t.support)
    assert len(_rows(np.concatenate([sp.x_train, sp.x_test])[:, leaves])) == 256
    over = split(t, 250, seed=0, n_test=64)  # beyond the cube: repeats, test still unseen
    assert over.duplicates == 250 - 192 and over.support_overlap == 0.0


def _brute(arch, t, n, seed, n_test, ridge=0.0):
    sp = split(t, n, seed=seed, n_test=n_test)
    x = arch.inputs(t.domain, np.concatenate([sp.x_train, sp.x_val]))
    y = np.concatenate([sp.y_train, sp.y_val])
    k = gram.gram(arch, x) + ridge * np.eye(n)
    alpha = sla.solve(k, y, assume_a="pos")
    pred = gram.gram(arch, arch.inputs(t.domain, sp.x_test), x) @ alpha
    return np.mean((pred - sp.y_test) ** 2) / target_variance(t)


@pytest.mark.parametrize(
    "arch,spec,n_test,ns,ridge",
    [
        ("tree:arity=2,L=3", "tree:d=40,L=3,arity=2,node=tanh", 64, (150, 12, 40, 192), 0.0),
        ("fc:depth=1", "parity:d=10,k=2", 100, (30, 300, 100), 0.0),
        ("fc:depth=2", "tree:d=16,L=2,arity=2,node=linear-plus", 100, (20, 90), 0.3),
    ],
)
def test_every_n_from_one_grown_factor_equals_per_n_scipy_solves(arch, spec, n_test, ns, ridge):
    a, t = parse_arch(arch), parse_target(spec)
    curve = ntk_predictor.NestedCurve(a, t, seed=2, n_test=n_test, ridge=ridge)
    for n in ns:  # grows, then reads smaller n from the factor's leading block
        r = curve.at(n)
        np.testing.assert_allclose(r["test_mse"], _brute(a, t, n, 2, n_test, ridge), rtol=1e-8)
    assert curve.factorizations == 1 and curve.size == max(ns)


def test_leading_solve_equals_numpy_on_a_grown_factor():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2600, 3))
    k = np.exp(-np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1)))  # Laplace: well conditioned
    y = rng.standard_normal(2600)
    f = krr.factor(k[:500, :500])
    f = krr.extend(f, k[:500, 500:], k[500:, 500:])
    ref = krr.factor(k)
    assert f.jitter == ref.jitter
    np.testing.assert_allclose(f.rcond, ref.rcond, rtol=1e-6)
    for n in (1, 700, 1500, 2600):  # several substitution blocks
        want = np.linalg.solve(k[:n, :n] + f.jitter * np.eye(n), y[:n])
        got = krr.leading_solve(f, n, y[:n])
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_jitter_from_the_largest_n_changes_no_n_star(seed):
    """Pools past the 192 distinct leaf configurations repeat points: the
    Gram at n = 240 needs a jitter, which then applies to every smaller n;
    the search read from that factor finds the n* of independent per-n fits
    (each with its own jitter, none below 192) and of scipy solves."""
    a, t = parse_arch("tree:arity=2,L=3"), parse_target("tree:d=40,L=3,arity=2,node=tanh")
    ws = krr.Workspace(240)  # the search's way: grown in place, refactored in place
    curve = ntk_predictor.NestedCurve(a, t, seed=seed, n_test=64, workspace=ws)
    curve.at(8), curve.at(60)  # factors first made without a jitter, then grown
    assert curve.at(240)["jitter"] > 0 and curve.at(100)["jitter"] == curve.at(240)["jitter"]
    assert ntk_predictor.evaluate(a, t, 100, seed=seed, n_test=64)["jitter"] == 0.0
    nested = search.run_nested(lambda s, n: curve.at(n)["test_mse"], [seed], 0.1, 4, 240)

    def own(batch):  # independent per-n fits, each with its own jitter
        return [ntk_predictor.evaluate(a, t, n, seed=s, n_test=64)["test_mse"] for s, n in batch]

    def scipy_solves(batch):
        return [_brute(a, t, n, s, 64) for s, n in batch]

    assert curve.factorizations == 2 and curve.generation == 1  # remade at 240, in place
    for ref in (search.run_search(own, [seed], 0.1, 4, 240),
                search.run_search(scipy_solves, [seed], 0.1, 4, 240)):  # fmt: skip
        (got,), (want,) = nested["seeds"], ref["seeds"]
        assert (got["lo"], got["hi"], got["status"]) == (want["lo"], want["hi"], want["status"])
        np.testing.assert_allclose(got["n_star"], want["n_star"], rtol=1e-9)


def test_nested_search_cell_matches_independent_fits_and_counts_factorizations():
    cell = dict(L3_CELL, seeds=[0, 1, 2])
    a, t = parse_arch(cell["arch"]), parse_target(cell["target"])
    nested = sample_complexity._ntk_nested(cell)
    assert nested["factorizations"] == len(cell["seeds"])

    def own(batch):
        return [ntk_predictor.evaluate(a, t, n, seed=s, n_test=64)["test_mse"] for s, n in batch]

    # the same search (the nested one brackets with NESTED_GROWTH), read from per-n fits
    ref = search.run_search(own, cell["seeds"], 0.1, 4, 192, growth=search.NESTED_GROWTH)
    for got, want in zip(nested["per_seed"], ref["seeds"]):
        assert (got["lo"], got["hi"], got["evaluations"]) == (
            want["lo"], want["hi"], want["evaluations"])  # fmt: skip
        np.testing.assert_allclose(got["n_star"], want["n_star"], rtol=1e-9)


def test_nested_search_is_bit_identical_across_reruns():
    cell = dict(L3_CELL, seeds=[3, 4])
    a, b = sample_complexity._ntk_nested(cell), sample_complexity._ntk_nested(cell)
    assert a == b
    assert {"median", "per_seed", "evaluations", "factorizations"} <= set(a) and a["nested"]


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("n,m,capacity", [(37, 50, 64), (37, 64, 64), (5, 6, 8), (37, 70, 64)])
def test_grow_square_keeps_the_leading_block_in_place_when_there_is_room(order, n, m, capacity):
    rng = np.random.default_rng(n + m)
    want = rng.standard_normal((n, n))
    buf = krr.Workspace(capacity).take("x", 0)
    a = krr.square(buf, n, order=order)
    a[...] = want
    got_buf, b = krr.grow_square(buf, a, m, order=order)
    assert b.shape == (m, m) and b.flags[order + "_CONTIGUOUS"]
    assert (got_buf is buf) == (m <= capacity)  # in place exactly when it fits
    np.testing.assert_array_equal(b[:n, :n], want)  # overlapping moves copied correctly
    # any other matrix is copied into the buffer when it has room, else into a new one
    other = rng.standard_normal((n, n))
    got_buf, b = krr.grow_square(got_buf, other, m, order=order)
    assert (got_buf is buf) == (m <= capacity)
    np.testing.assert_array_equal(b[:n, :n], other)
    inside = krr.square(buf[n * n :], n, order=order)  # a matrix elsewhere in the buffer
    inside[...] = want
    got_buf, b = krr.grow_square(buf, inside, min(m, capacity), order=order)
    np.testing.assert_array_equal(b[:n, :n], want)


def test_a_factor_grown_in_its_buffer_equals_numpy_cholesky():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((300, 3))
    k = np.exp(-np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1)))
    buf = krr.Workspace(300).take("f", 0)
    f = krr.factor(k[:40, :40], out=buf)
    for a, b in ((40, 41), (41, 160), (160, 300)):  # one point, then blocks
        f = krr.extend(f, k[:a, a:b], k[a:b, a:b])
        assert f.buf is buf and f.c.shape == (b, b)
    want = np.linalg.cholesky(k)
    np.testing.assert_allclose(np.tril(f.c), want, rtol=1e-10, atol=1e-12)


def test_a_reused_workspace_gives_each_seed_the_curve_it_gets_alone():
    a, t = parse_arch("tree:arity=2,L=3"), parse_target("tree:d=40,L=3,arity=2,node=tanh")
    ws = krr.Workspace(192)
    first = ntk_predictor.NestedCurve(a, t, seed=0, n_test=64, workspace=ws)
    first.at(192), first.at(30)
    shared = ntk_predictor.NestedCurve(a, t, seed=1, n_test=64, workspace=ws)
    alone = ntk_predictor.NestedCurve(a, t, seed=1, n_test=64)
    for n in (12, 100, 150, 40):
        assert shared.at(n) == alone.at(n)


def test_the_gram_and_factor_grow_in_the_workspace_and_a_taken_workspace_is_refused():
    a, t = parse_arch("tree:arity=2,L=3"), parse_target("tree:d=40,L=3,arity=2,node=tanh")
    ws = krr.Workspace(160)
    curve = ntk_predictor.NestedCurve(a, t, seed=0, n_test=64, workspace=ws)
    curve.at(20), curve.at(40)  # the second growth moves the Gram into the workspace
    k_at, f_at = curve.K.ctypes.data, curve.factors[0.0].c.ctypes.data
    curve.at(160)  # then grows it in place, beyond the test cross Gram's first columns
    assert np.shares_memory(curve.K, ws.take("K", 0)) and curve.K.ctypes.data == k_at
    assert curve.factors[0.0].c.ctypes.data == f_at
    assert curve.factors[0.0].buf is ws.take("factor 0.0", 0)
    np.testing.assert_array_equal(curve.K, _gram_of(a, t, 160, seed=0))
    ntk_predictor.NestedCurve(a, t, seed=1, n_test=64, workspace=ws).at(10)
    with pytest.raises(RuntimeError, match="another curve"):
        curve.at(30)


def test_the_test_cross_gram_past_its_capacity_keeps_its_columns():
    a, t = parse_arch("tree:arity=2,L=3"), parse_target("tree:d=40,L=3,arity=2,node=tanh")
    curve = ntk_predictor.NestedCurve(a, t, seed=3, n_test=64, workspace=krr.Workspace(50))
    curve.at(30), curve.at(50), curve.at(120)  # 120 > capacity: re-laid out in one buffer
    alone = ntk_predictor.NestedCurve(a, t, seed=3, n_test=64)  # grown the same way, alone
    alone.at(30), alone.at(50), alone.at(120)
    for n in (30, 50, 120, 77):
        assert curve.at(n) == alone.at(n)
    sp = split(t, 120, seed=3, n_test=64)
    want = gram.gram(a, a.inputs(t.domain, sp.x_test), _pool(a, t, sp))
    np.testing.assert_array_equal(curve.kt[:, :120], want)


def _pool(arch, t, sp):
    return arch.inputs(t.domain, np.concatenate([sp.x_train, sp.x_val]))


def _gram_of(arch, t, n, seed):
    return gram.gram(arch, _pool(arch, t, split(t, n, seed=seed, n_test=64)))
