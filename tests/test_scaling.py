"""Scaling fits recover planted exponents; bootstrap intervals cover them."""

import math

import numpy as np
import pytest

from ntkgap.runs import scaling


@pytest.mark.parametrize("a,b,c", [(3.0, 0.5, 0.0), (10.0, 1.2, 1e-3), (0.7, 2.0, 0.02)])
def test_power_law_with_offset_recovers_planted_parameters(a, b, c):
    n = np.logspace(1, 5, 25)
    fit = scaling.power_law_offset_fit(n, a * n**-b + c)
    assert fit["b"] == pytest.approx(b, rel=1e-3)
    assert fit["a"] == pytest.approx(a, rel=1e-3)
    if c > 0:
        assert fit["c"] == pytest.approx(c, rel=1e-2)


def test_n_star_interpolates_and_censors():
    ns = [10, 100, 1000]
    r = scaling.n_star(ns, [1.0, 0.1, 0.01], 0.05)
    assert r["n_star"] == pytest.approx(10**2.30103, rel=1e-4)  # exact on a power law
    assert scaling.n_star(ns, [1.0, 0.5, 0.2], 0.1) == {
        "n_star": None,
        "censored": True,
        "left_censored": False,
        "n_max": 1000.0,
    }
    assert scaling.n_star(ns, [0.01, 0.005, 0.001], 0.1)["left_censored"]


def test_growth_fit_prefers_the_planted_model():
    L = np.arange(1, 8)
    exp = scaling.growth_fit(L, 5 * 4.0**L)
    assert exp["preferred"] == "exponential" and exp["exponential"]["beta"] == pytest.approx(4.0)
    poly = scaling.growth_fit(L, 5 * L**3.0)
    assert poly["preferred"] == "polynomial" and poly["polynomial"]["p"] == pytest.approx(3.0)
    # fewer than 4 resolved depths: no model choice (a censored depth does not count)
    assert scaling.growth_fit([1, 2], [10.0, 40.0])["preferred"] == "too few depths"
    few = scaling.growth_fit([1, 2, 3, 4], [10.0, 40.0, 160.0, None])
    assert few["preferred"] == "too few depths" and few["dropped"] == 1
    assert few["exponential"]["beta"] == pytest.approx(4.0)


def test_bootstrap_counts_dropped_resamples():
    # statistic undefined (NaN) whenever the resample holds sample 0 twice or more
    data = np.arange(4.0)
    out = scaling.bootstrap(
        lambda s: np.nan if np.sum(s == 0) > 1 else float(s.mean()), data, seed=1, B=2000
    )
    # P(count of 0 in 4 draws >= 2) = 1 - (3/4)^4 - 4 (1/4)(3/4)^3 = 0.2617
    assert out["dropped"] / 2000 == pytest.approx(0.2617, abs=0.03)


def test_bootstrap_interval_covers_planted_exponent_at_stated_rate():
    # 8 seeds of noisy power-law curves, planted b = 0.8; 95% intervals
    n = np.logspace(1, 4, 10)
    hits, trials = 0, 60
    for t in range(trials):
        rng = np.random.default_rng(t)
        curves = 2.0 * n**-0.8 * np.exp(0.1 * rng.standard_normal((8, n.size)))
        ci = scaling.bootstrap(
            lambda s: scaling.loglog_fit(n, s.mean(0))["b"], curves, seed=t, B=300
        )
        hits += ci["lo"] <= 0.8 <= ci["hi"]
    # percentile bootstrap with 8 seeds under-covers a little; require >= 80%
    assert hits / trials >= 0.8


def test_growth_fit_reports_residual_spread_not_a_ci():
    # planted noise sd 0.1 on log n*: the residual spread estimates it
    L = np.arange(1, 41)
    noise = 0.1 * np.random.default_rng(0).standard_normal(L.size)
    fit = scaling.growth_fit(L, 7 * 3.0**L * np.exp(noise))
    assert fit["exponential"]["residual_sd"] == pytest.approx(0.1, rel=0.3)
    assert "lo" not in fit["exponential"] and "not a CI" in fit["method"]


# --- median n* over seeds, with censoring ---------------------------------


def test_median_n_star_of_planted_values_with_censoring():
    vals = [50.0, 10.0, 400.0, 30.0, 20.0, 300.0, 90.0, 70.0, 60.0]  # sorted middle: 60
    med = scaling.median_n_star(vals)
    assert med["status"] == "resolved" and med["value"] == 60.0
    # two right-censored seeds (> 1000) and one left-censored (<= 8) move no middle value
    cens = [{"status": "right", "bound": 1000}] * 2 + [{"status": "left", "bound": 8}]
    res = [{"status": "resolved", "n_star": v} for v in (50.0, 30.0, 20.0, 90.0, 70.0, 60.0)]
    med = scaling.median_n_star(res + cens)
    assert med["value"] == 60.0 and med["censored"] == {"left": 1, "right": 2}
    # five of nine right-censored: the middle one is censored, so is the median
    med = scaling.median_n_star(vals[:4] + [math.inf] * 0 + [{"status": "right", "bound": 500}] * 5)
    assert med["status"] == "right" and med["value"] is None and med["bound_lo"] == 500
    # five of nine left-censored (<= 8): the median is <= 8
    med = scaling.median_n_star([{"status": "left", "bound": 8}] * 5 + vals[:4])
    assert med["status"] == "left" and med["bound_hi"] == 8
    # even count: geometric mean of the middle pair (n* on a log scale)
    med = scaling.median_n_star([1.0, 10.0, 1000.0, 10.0**5])
    assert med["value"] == pytest.approx(100.0)
    # n_star dicts of per-seed curves are accepted as they are
    curves = np.array([[1.0, 0.1, 0.01], [1.0, 0.5, 0.2], [1.0, 0.1, 0.01]])
    med = scaling.median_n_star(scaling.n_star_per_seed([10, 100, 1000], curves, 0.05))
    assert med["value"] == pytest.approx(10**2.30103, rel=1e-4) and med["censored"]["right"] == 1


def test_order_statistic_ci_index_and_exact_coverage_by_enumeration():
    for m in (8, 9, 12, 20, 31):
        j, cov = scaling.order_statistic_ci(m, 0.95)

        # brute force: P(j <= #below median <= m - j) over all 2^m sign patterns
        def coverage(j, m=m):
            return sum(math.comb(m, i) for i in range(j, m - j + 1)) / 2**m

        assert cov == pytest.approx(coverage(j), abs=1e-12) and cov >= 0.95
        assert coverage(j + 1) < 0.95
    assert scaling.order_statistic_ci(8, 0.95) == (1, pytest.approx(1 - 2 / 256))
    assert scaling.order_statistic_ci(5, 0.95)[0] is None  # [min, max] covers 30/32 only


def _mixture_median():
    # bimodal seeds: 60% near n* = 100, 40% near 3000 (log-normal, sd 0.3)
    from scipy import optimize, stats

    def cdf(x):
        return 0.6 * stats.norm.cdf(np.log(x / 100) / 0.3) + 0.4 * stats.norm.cdf(
            np.log(x / 3000) / 0.3
        )

    return optimize.brentq(lambda x: cdf(x) - 0.5, 10, 10**5)


def _mixture_draw(rng, shape):
    hi = rng.random(shape) < 0.4
    return np.where(hi, 3000.0, 100.0) * np.exp(0.3 * rng.standard_normal(shape))


@pytest.mark.parametrize("level,j", [(0.95, 1), (0.90, 2)])
def test_order_statistic_median_ci_coverage_at_8_seeds(level, j):
    # 2000 simulated experiments of 8 bimodal seeds with a known median;
    # some seeds right-censored at n_max = 2000 (censoring may only add coverage)
    true = _mixture_median()
    rng = np.random.default_rng(11)
    draws = _mixture_draw(rng, (2000, 8))
    hits = cens_hits = 0
    for row in draws:
        ci = scaling.median_n_star(row, level=level)
        hits += ci["lo"] <= true <= ci["hi"]
        cr = [{"status": "right", "bound": 2000} if v > 2000 else v for v in row]
        ci = scaling.median_n_star(cr, level=level)
        lo = ci["lo"] if ci["lo"] is not None else 0
        hi = ci["hi"] if ci["hi"] is not None else math.inf
        cens_hits += lo <= true <= hi
    exact = scaling.order_statistic_ci(8, level)[1]  # 0.9922 (j = 1) and 0.9297 (j = 2)
    assert scaling.order_statistic_ci(8, level)[0] == j
    se = math.sqrt(exact * (1 - exact) / 2000)
    assert abs(hits / 2000 - exact) < 4 * se + 1e-3  # band: exact coverage +- 4 SE
    assert cens_hits / 2000 >= exact - 4 * se


def test_median_ci_is_refused_below_8_seeds():
    assert scaling.MIN_SEEDS_FOR_CI == 8
    med = scaling.median_n_star([10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0])
    assert med["value"] == 40.0 and med["lo"] is None and med["hi"] is None
    assert "7 seeds, no CI" in med["reason"]
    med = scaling.median_n_star([10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0])
    assert (med["lo"], med["hi"]) == (10.0, 80.0) and med["reason"] is None


# --- bootstrap -------------------------------------------------------------


def test_bootstrap_counts_distinct_resamples_and_refuses_below_8_seeds():
    import itertools

    for m in (1, 2, 3, 5, 8):
        multisets = set(itertools.combinations_with_replacement(range(m), m))
        assert scaling.distinct_resamples(m) == len(multisets)
    data = np.arange(7.0)
    out = scaling.seed_bootstrap(lambda s: float(s.mean()), data, seed=0)
    assert out["lo"] is None and out["hi"] is None and out["value"] == 3.0
    assert "7 seeds, no CI" in out["reason"] and out["distinct_resamples"] == 1716
    out = scaling.seed_bootstrap(lambda s: float(s.mean()), np.arange(8.0), seed=0)
    assert out["lo"] < 3.5 < out["hi"] and out["distinct_resamples"] == 6435


def test_percentile_bootstrap_coverage_at_8_seeds_matches_its_known_undercoverage():
    # 2000 experiments of 8 normal seeds, CI of the mean. The percentile
    # bootstrap's interval is about mean +- 1.96 s sqrt(7/8) / sqrt(8), so
    # its coverage is close to P(|T_7| < 1.96 sqrt(7/8)) ~ 0.89 for a nominal
    # 0.95 (stated band: that value +- 0.03)
    from scipy import stats

    rng = np.random.default_rng(5)
    expected = 2 * stats.t.cdf(1.96 * math.sqrt(7 / 8), 7) - 1
    hits = 0
    for t in range(2000):
        x = rng.standard_normal(8) + 3.0
        ci = scaling.seed_bootstrap(lambda s: s.mean(axis=1), x, seed=t, B=400, vectorized=True)
        hits += ci["lo"] <= 3.0 <= ci["hi"]
    assert abs(hits / 2000 - expected) < 0.03
    assert 0.86 <= hits / 2000 <= 0.95


# --- equivalence test and growth factor ------------------------------------


def test_equivalence_test_on_planted_data():
    rng = np.random.default_rng(3)
    z = rng.standard_normal(10)
    z = (z - z.mean()) / z.std(ddof=1)  # exactly mean 0, sd 1
    eq = scaling.equivalence_test(0.1 * z, 0.5)
    assert eq["verdict"] == "equivalent" and eq["p"] < 0.05
    assert scaling.equivalence_test(1.5 + 0.1 * z, 0.5)["verdict"] == "different"
    assert scaling.equivalence_test(-1.5 + 0.1 * z, 0.5)["verdict"] == "different"
    assert scaling.equivalence_test(0.45 + 0.5 * z, 0.5)["verdict"] == "inconclusive"
    # the 90% t interval, recomputed here: mean +- t_{0.95, 9} sd / sqrt(10)
    half = 1.8331129326536335 * 0.5 / math.sqrt(10)
    inc = scaling.equivalence_test(0.45 + 0.5 * z, 0.5)
    assert (inc["lo"], inc["hi"]) == (pytest.approx(0.45 - half), pytest.approx(0.45 + half))
    few = scaling.equivalence_test(0.1 * z[:7], 0.5)
    assert few["verdict"] == "no CI" and "7 seeds" in few["reason"]


def test_equivalence_test_size_at_the_margin():
    # true mean exactly at the margin: "equivalent" must come out at most
    # alpha = 5% of the time (TOST is a level-alpha test); 2000 experiments
    rng = np.random.default_rng(8)
    wrong = sum(
        scaling.equivalence_test(0.5 + 0.3 * rng.standard_normal(8), 0.5)["verdict"] == "equivalent"
        for _ in range(2000)
    )
    assert wrong / 2000 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)


def test_growth_factor_per_level_from_planted_seeds():
    rng = np.random.default_rng(2)
    c = np.exp(rng.standard_normal(9))  # seed-specific constant: cancels in ratios
    per = {L: list(c * 40 * 3.0**L) for L in (1, 2, 3, 4)}
    g = scaling.growth_factor_per_level(per)
    assert g["overall"]["value"] == pytest.approx(3.0)
    assert g["overall"]["lo"] == pytest.approx(3.0) and g["overall"]["hi"] == pytest.approx(3.0)
    assert [s["L"] for s in g["steps"]] == [[1, 2], [2, 3], [3, 4]]
    # one seed right-censored at L = 4: its ratios are censored above; with 9
    # seeds the CI is [X_(2), X_(8)], so the median and both CI ends hold
    per[4][0] = {"status": "right", "bound": 1e9}
    g = scaling.growth_factor_per_level(per)
    assert g["overall"]["value"] == pytest.approx(3.0) and not g["overall"]["hi_censored"]
    assert g["overall"]["hi"] == pytest.approx(3.0) and g["overall"]["censored"]["right"] == 1
    assert g["steps"][-1]["censored"]["right"] == 1


def test_median_of_mostly_unbounded_right_censored_values_is_right_censored():
    med = scaling.median_n_star([10.0, math.inf, math.inf])
    assert med["status"] == "right" and med["value"] is None and med["bound_lo"] is None
    med = scaling.median_n_star([{"status": "left", "bound": 8}, math.inf])
    assert med["status"] == "undetermined" and med["value"] is None
