"""The random hierarchy model: counts, unique classes, sampling, and its
degree profile against brute-force references on tiny grammars."""

import itertools
import json

import numpy as np
import pytest

from ntkgap.errors import SpecError, UsageError
from ntkgap.spectral import walsh
from ntkgap.targets import parse_target, rhm, rhm_pstar
from ntkgap.targets.rhm_pstar import n_valid_formula

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
        ("rhm:v=2,n_c=5,m=1,s=2,L=2", "n_c*m = 5 distinct class rules exceed v^s = 4"),
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


MULTI = [
    "rhm:v=3,n_c=3,m=2,s=2,L=2,seed=0",
    "rhm:v=4,n_c=4,m=2,s=2,L=2,seed=1",
    "rhm:v=3,n_c=4,m=2,s=3,L=1,seed=2",
]


@pytest.mark.parametrize("spec", MULTI)
def test_many_classes_enumerated_balanced_and_injective(spec):
    t = parse_target(spec)
    by_hand, produced = _expand_by_hand(t)
    assert produced == len(by_hand) == n_valid_formula(t.n_c, t.m, t.s, t.L) == t.n_valid
    # class balance: n_valid / n_c strings per class, counted from the expansion
    counts = np.bincount(list(by_hand.values()), minlength=t.n_c)
    np.testing.assert_array_equal(counts, t.n_valid // t.n_c)
    # each class's (and symbol's) productions: distinct s-tuples, none shared
    for rules in t.rules:
        flat = [tuple(r) for r in rules.reshape(-1, t.s).tolist()]
        assert len(set(flat)) == len(flat)
    x, y = t.enumerate()
    truth = np.array([by_hand[tuple(r)] for r in x.tolist()])
    np.testing.assert_array_equal(t.classes(x), truth)
    assert y.shape == (t.n_valid, t.n_c)
    np.testing.assert_allclose(y, np.eye(t.n_c)[truth] - 1 / t.n_c)
    assert np.mean(np.sum(y**2, axis=1)) == pytest.approx(t.variance)
    assert t.variance == pytest.approx(1 - 1 / t.n_c)


def test_many_classes_refuse_the_scalar_pipeline_in_one_line():
    t = parse_target("rhm:v=3,n_c=3,m=2,s=2,L=2,seed=0")
    with pytest.raises(UsageError, match="one-hot") as err:
        t(t.enumerate()[0])
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "outputs,classes,expected",
    [
        ([[0.9, 0.1, 0.0], [0.2, 0.3, 0.1], [0.0, 0.0, 1.0], [1.0, 0.0, 0.5]], [0, 1, 1, 2], 0.5),
        ([[0.0, 1.0], [2.0, -1.0]], [1, 0], 0.0),
        ([0.3, -0.2, 0.1, -4.0], [0, 1, 1, 1], 0.25),  # scalar +-1 read by sign
        ([0.0], [0], 1.0),  # a tie at 0 is not class 0
    ],
)
def test_classification_error_planted(outputs, classes, expected):
    assert rhm.classification_error(outputs, classes) == pytest.approx(expected)


def test_regression_error_is_summed_mse_over_variance():
    y = np.array([[0.5, -0.5], [-0.5, 0.5]])
    pred = np.array([[0.5, 0.5], [-0.5, 0.5]])  # one entry off by 1 among 4
    assert rhm.regression_error(pred, y, 0.5) == pytest.approx(0.5 / 0.5)
    assert rhm.regression_error(np.zeros(2), np.array([1.0, -1.0]), 1.0) == 1.0


@pytest.mark.parametrize(
    "n_c,m,L,guess,threshold,pstar",
    [(2, 3, 3, 0.5, 0.05, 54), (4, 2, 4, 0.75, 0.075, 64), (10, 4, 2, 0.9, 0.09, 160)],
)
def test_published_threshold_and_scaling(n_c, m, L, guess, threshold, pstar):
    assert rhm_pstar.random_guess_error(n_c) == pytest.approx(guess)
    assert rhm_pstar.pstar_threshold(n_c) == pytest.approx(threshold)
    assert rhm_pstar.paper_pstar(n_c, m, L) == pstar


@pytest.mark.parametrize("spec", MULTI[:2])
def test_one_hot_profile_is_the_sum_of_per_class_profiles(spec):
    # the one-hot profile against each class indicator's brute-force projection
    t = parse_target(spec)
    x, y = t.enumerate()
    cls = t.classes(x)
    expect = sum(_brute_projection(x, (cls == c) - 1 / t.n_c) for c in range(t.n_c))
    rep = t.spectrum_report()
    np.testing.assert_allclose(rep["weight"], expect, atol=1e-9)
    assert sum(rep["weight"]) == pytest.approx(t.variance)


@pytest.mark.parametrize("spec", ["rhm:v=3,n_c=2,m=2,s=2,L=2", "rhm:v=3,n_c=3,m=2,s=2,L=2"])
def test_spectrum_cli_reports_or_refuses_without_code_names(cli, spec):
    r = cli("spectrum", "--target", spec, "--json")
    assert "Traceback" not in r.stderr and "RHM." not in r.stderr and "()" not in r.stderr
    if r.returncode == 0:  # once spectra.report reads the RHM's own profile
        rep = json.loads(r.stdout)
        assert sum(rep["weight"]) == pytest.approx(parse_target(spec).variance)
    else:
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


# ------------------------------------------- the depth-aware CNN and its NTK
def _one_hot_by_hand(x, v):
    """(n, positions, v) one-hot tokens, built with np.eye (not the domain's code)."""
    return np.eye(v)[np.asarray(x, dtype=np.int64)]


@pytest.mark.parametrize(
    "arch", ["tree:arity=2,L=3", "tree:arity=2,L=3,share=1,act=erf", "fc:depth=2"]
)
def test_rhm_gram_equals_kernel_fn_on_reshaped_one_hot(arch):
    import jax

    from ntkgap.kernels import gram as kernels
    from ntkgap.nets.arch import parse_arch

    t = parse_target("rhm:v=4,n_c=2,m=2,s=2,L=3,seed=1")
    a = parse_arch(arch)
    x1, x2 = t.domain.sample(130, seed=0), t.domain.sample(9, seed=1)  # 130: two blocks
    h1, h2 = _one_hot_by_hand(x1, 4), _one_hot_by_hand(x2, 4)
    if a.name == "fc":
        h1, h2 = h1.reshape(130, -1), h2.reshape(9, -1)
    kfn = jax.jit(a.kernel_fn, static_argnums=2)  # one call, no blocks
    # ~1e-9 relative: the Gram is compiled with other XLA fusion options
    got = kernels.gram(a, a.inputs(t.domain, x1), a.inputs(t.domain, x2))
    np.testing.assert_allclose(got, np.asarray(kfn(h1, h2, "ntk")), rtol=1e-8)
    sym = kernels.gram(a, a.inputs(t.domain, x1))
    np.testing.assert_allclose(sym, np.asarray(kfn(h1, h1, "ntk")), rtol=1e-8)


@pytest.mark.parametrize("kind", ["ntk", "nngp"])
def test_shared_filters_do_not_change_the_infinite_width_kernel(kind):
    # a Flatten readout (no pooling) never sees the cross-position covariances
    # that weight sharing adds: stax.Conv's kernel_fn = stax.ConvLocal's
    import jax

    from ntkgap.nets.arch import parse_arch

    t = parse_target("rhm:v=3,n_c=2,m=3,s=2,L=2,seed=0")
    x = _one_hot_by_hand(t.domain.sample(6, seed=2), 3)
    k_cnn = jax.jit(parse_arch("tree:arity=2,L=2,share=1,act=gelu").kernel_fn, static_argnums=2)
    k_lcn = jax.jit(parse_arch("tree:arity=2,L=2,act=gelu").kernel_fn, static_argnums=2)
    k_cnn, k_lcn = k_cnn(x, x, kind), k_lcn(x, x, kind)
    np.testing.assert_allclose(k_cnn, k_lcn, rtol=1e-10, atol=1e-12)


def test_rhm_cnn_ntk_matches_wide_networks_empirical_ntk():
    import jax

    from ntkgap._infra.compat import nt
    from ntkgap.kernels import gram as kernels
    from ntkgap.nets.arch import parse_arch

    t = parse_target("rhm:v=3,n_c=2,m=2,s=2,L=2,seed=0")
    a = parse_arch("tree:arity=2,L=2,share=1")
    x = a.inputs(t.domain, t.domain.sample(5, seed=3))
    exact = kernels.gram(a, x)
    errs = []
    for width in (16, 512):
        init_fn, apply_fn, _ = a.stax(width)
        efn = nt.empirical_ntk_fn(apply_fn, trace_axes=(-1,), vmap_axes=0)
        mc = np.mean(
            [
                np.asarray(efn(x, None, init_fn(jax.random.PRNGKey(s), x.shape)[1]))
                for s in range(4)
            ],
            axis=0,
        )
        errs.append(np.linalg.norm(mc - exact) / np.linalg.norm(exact))
    # Monte Carlo over 4 nets: ~ width^-1/2 fluctuations around the limit
    assert errs[1] < 0.08 and errs[1] < errs[0]


def test_shared_fast_apply_equals_stax_conv():
    import jax

    from ntkgap.nets.arch import parse_arch

    a = parse_arch("tree:arity=3,L=2,share=1,act=erf,W_std=1.3,b_std=0.2")
    init_fn, fast, _ = a.stax(4)
    _, slow, _ = a.stax(4, fast=False)
    _, params = init_fn(jax.random.PRNGKey(4), (-1, 9, 3))
    x = jax.random.normal(jax.random.PRNGKey(5), (5, 9, 3))
    np.testing.assert_allclose(fast(params, x), slow(params, x), rtol=1e-6, atol=1e-6)


def test_rhm_inputs_and_domain_checks():
    from ntkgap.nets.arch import parse_arch

    t = parse_target("rhm:v=3,n_c=2,m=2,s=2,L=2,seed=0")
    x = t.domain.sample(6, seed=0)
    tree = parse_arch(t.tree_arch()).inputs(t.domain, x)
    np.testing.assert_array_equal(tree, _one_hot_by_hand(x, 3))
    fc = parse_arch("fc:depth=2").inputs(t.domain, x)
    np.testing.assert_array_equal(fc, _one_hot_by_hand(x, 3).reshape(6, 12))
    with pytest.raises(UsageError, match="exceeds the 4 token positions"):
        parse_arch("tree:arity=2,L=3").check_domain(t.domain)


def test_rhm_split_is_distinct_disjoint_and_seeded():
    """The nested split on the valid strings: a fixed test set of at most half
    of them, pools that are prefixes of one seeded order of the rest (distinct
    while they fit, then repeating with ``duplicates`` counted), never a test
    string in a pool."""
    from ntkgap.targets.split import split

    t = parse_target("rhm:v=3,n_c=2,m=3,s=2,L=2,seed=0")  # 54 valid strings
    every = {tuple(r) for r in t.enumerate()[0].tolist()}
    pools = {}
    for n in (24, 27, 30):
        sp = split(t, n, seed=5, n_val=6, n_test=100)
        pool = np.concatenate([sp.x_train, sp.x_val])
        rows = {tuple(r) for r in pool.tolist()}
        test = {tuple(r) for r in sp.x_test.tolist()}
        assert len(test) == 27 and not rows & test and rows | test <= every
        assert len(rows) == min(n, 27) and sp.duplicates == max(0, n - 27)
        assert sp.overlap == 0.0
        np.testing.assert_array_equal(np.concatenate([sp.y_train, sp.y_val]), t(pool))
        pools[n] = pool
    np.testing.assert_array_equal(pools[27][:24], pools[24])  # nested
    again = split(t, 30, seed=5, n_val=0, n_test=100)
    np.testing.assert_array_equal(again.x_train, pools[30])  # n_val-free pool
    big = parse_target("rhm:v=4,n_c=2,m=4,s=2,L=3,seed=0")  # 32,768 strings
    sp = split(big, 200, seed=1, n_test=300)
    assert (
        len({tuple(r) for r in sp.x_test.tolist()} & {tuple(r) for r in sp.x_train.tolist()}) == 0
    )


def test_fc_and_cnn_train_on_rhm_strings():
    from ntkgap.nets import training
    from ntkgap.nets.arch import parse_arch
    from ntkgap.nets.train_config import TrainConfig

    t = parse_target("rhm:v=3,n_c=2,m=2,s=2,L=3,seed=0")  # 256 strings
    cfg = TrainConfig(steps=200, lr=0.02, batch=0, eval_every=100)
    for arch in ("fc:depth=2", t.tree_arch()):
        r = training.train(parse_arch(arch), 16, t, 120, seeds=[0], cfg=cfg, n_test=32)
        # a planted answer: the label is learnable; a constant predictor scores 1
        assert r["test_mse"] < 0.6, arch


@pytest.mark.parametrize("spec", ["rhm:v=3,n_c=2,m=2,s=2,L=2,seed=0", MULTI[1]])
def test_enumerated_kernel_theory_blocks(spec):
    from ntkgap.kernels import gram, rhm_theory  # here: JAX loads only in kernel tests
    from ntkgap.nets.arch import parse_arch

    t = parse_target(spec)
    a = parse_arch(t.tree_arch())
    sp, _ = rhm_theory.spectrum(a, t)
    x, y = t.enumerate()
    K = gram.gram(a, a.inputs(t.domain, x))
    # numpy eigh reference: the operator's eigenvalues are those of K / n_valid
    lam = np.linalg.eigvalsh(K / t.n_valid)
    np.testing.assert_allclose(np.sort(sp.eigenvalue), lam[lam > 1e-12 * lam[-1]], rtol=1e-9)
    # Parseval under the uniform law: the power sums to E||y||^2
    assert sp.power.sum() + sp.tail_power == pytest.approx(np.mean(np.sum(np.reshape(
        y, (t.n_valid, -1)) ** 2, axis=1)))  # fmt: skip


def test_kernel_classifier_against_a_direct_solve():
    from ntkgap.kernels import gram, rhm_theory  # here: JAX loads only in kernel tests
    from ntkgap.nets.arch import parse_arch

    t = parse_target(MULTI[1])
    a = parse_arch(t.tree_arch())
    r = rhm_theory.kernel_classifier(a, t, 20, seed=3, n_test=100)
    xtr, xte, exhaustive = t.domain.draw_split(20, 100, pool_seed=3, test_seed=4)
    assert exhaustive and r["n_test"] == t.n_valid - 20
    ftr, fte = a.inputs(t.domain, xtr), a.inputs(t.domain, xte)
    ctr, cte = t.classes(xtr), t.classes(xte)
    Y = np.eye(t.n_c)[ctr] - 1 / t.n_c
    pred = gram.gram(a, fte, ftr) @ np.linalg.solve(gram.gram(a, ftr), Y)
    wrong = sum(int(np.argmax(p) != c) for p, c in zip(pred, cte))
    assert r["classification_error"] == pytest.approx(wrong / len(cte))
    truth = np.eye(t.n_c)[cte] - 1 / t.n_c
    mse = np.mean(np.sum((pred - truth) ** 2, axis=1)) / (1 - 1 / t.n_c)
    assert r["regression_error"] == pytest.approx(mse, rel=1e-6)
