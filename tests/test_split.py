"""The shared split: pool points distinct on the target's support, test
points outside the pool (asserted inside, measured here independently),
the same test points for the NTK predictor and the trained net, and an
honest overlap where n exceeds the support cube."""

import itertools

import numpy as np

from ntkgap.kernels import ntk_predictor
from ntkgap.nets import training
from ntkgap.nets.arch import parse_arch
from ntkgap.targets import parse_target
from ntkgap.targets.split import split


def _configs(x, support):
    return [tuple(row) for row in np.asarray(x)[:, list(support)]]


def test_small_support_cube_exact_and_disjoint():
    t = parse_target("tree:d=24,L=3,arity=2,node=parity")  # 8 leaves: 256 configurations
    sp = split(t, 100, seed=3, n_val=20, n_test=100)
    pool = _configs(np.concatenate([sp.x_train, sp.x_val]), t.support)
    assert len(set(pool)) == 100 and sp.duplicates == 0
    test = _configs(sp.x_test, t.support)
    assert not set(test) & set(pool) and sp.overlap == 0.0
    assert len(set(test)) == 100 and not sp.exhaustive
    cube = set(itertools.product([-1, 1], repeat=8))
    assert set(test) | set(pool) < cube
    np.testing.assert_array_equal(sp.y_test, t(sp.x_test))
    assert sp.x_train.shape == (80, 24) and sp.x_val.shape == (20, 24)


def test_large_support_cube_disjoint_and_pool_independent_of_n_val():
    t = parse_target("tree:d=40,L=5,arity=2,node=parity")  # 32 leaves: rejection sampling
    a = split(t, 300, seed=1, n_val=0, n_test=400)
    b = split(t, 300, seed=1, n_val=60, n_test=400)
    np.testing.assert_array_equal(a.x_train, np.concatenate([b.x_train, b.x_val]))
    np.testing.assert_array_equal(a.x_test, b.x_test)
    pool = _configs(a.x_train, t.support)
    assert len(set(pool)) == 300
    assert not set(_configs(a.x_test, t.support)) & set(pool) and a.overlap == 0.0


def test_circle_is_continuous_overlap_zero():
    t = parse_target("sawtooth:L=2")
    sp = split(t, 50, seed=0, n_val=10, n_test=100)
    assert sp.overlap == 0.0 and sp.x_train.shape == (40,) and sp.x_test.shape == (100,)


def test_n_beyond_the_support_cube_stays_disjoint_in_the_whole_input():
    t = parse_target("parity:d=10,k=3")  # 8 support configurations, 1024 points
    sp = split(t, 50, seed=0, n_test=200)
    # the support is covered, so points are distinct (and test points new) in all 10 inputs
    pool = _configs(sp.x_train, range(10)) + _configs(sp.x_val, range(10))
    test = _configs(sp.x_test, range(10))
    assert len(set(pool)) == 50 and not set(test) & set(pool)
    assert sp.duplicates == 0 and sp.overlap == 0.0
    assert sp.support_overlap == 1.0 and sp.support_duplicates == 50 - 8
    r = ntk_predictor.evaluate(parse_arch("fc:depth=1"), t, 50, seed=0, n_test=200)
    assert r["overlap"] == 0.0 and r["support_overlap"] == 1.0


def test_ntk_predictor_and_net_see_the_same_test_points():
    arch, t = parse_arch("fc:depth=1"), parse_target("tree:d=12,L=2,arity=2,node=linear-plus")
    cfg = training.TrainConfig(steps=20, eval_every=10, dtype="float64")
    net = training.train(arch, 8, t, 12, seeds=[4, 5], cfg=cfg, n_test=64, return_predictions=True)
    for i, seed in enumerate((4, 5)):
        ntk = ntk_predictor.evaluate(arch, t, 12, seed=seed, n_test=64, return_predictions=True)
        np.testing.assert_array_equal(ntk["x_test"], net["x_test"][i])
        assert ntk["overlap"] == net["overlap_per_seed"][i] == 0.0
    assert net["overlap"] == 0.0
