"""Censoring as intervals: the building blocks against brute
force, and every statistic on planted data (per-seed n* drawn from a known
law, then censored by bounds the truth is checked to respect), for each
censoring on either side x each verdict. Expected verdicts follow from the
planted law and bounds by the hand arithmetic in each row's comment."""

import itertools
import math

import numpy as np
import pytest

from ntkgap.verdicts import interval_statistics as ist
from ntkgap.verdicts import intervals as iv
from ntkgap.verdicts import rules

INF = math.inf
SEEDS = range(12)
DEPTHS = (2, 3, 4)
S, N, U, T = rules.SUPPORTED, rules.NOT_SUPPORTED, rules.INCONCLUSIVE, rules.TOO_FEW_DEPTHS


# ------------------------------------------------------------ planting
def _law(f, depths=DEPTHS):
    return {L: float(f(L)) for L in depths}


def plant(law, *, noise=0.01, seed=0):
    """{L: {seed: n*}} with log n* = law[L] + noise N(0, 1); a pair of laws
    gives seeds 0..5 the first and 6..11 the second (planted heterogeneity)."""
    rng = np.random.default_rng(seed)
    laws = law if isinstance(law, tuple) else (law, law)
    return {
        L: {s: float(np.exp(laws[s >= 6][L] + noise * rng.standard_normal())) for s in SEEDS}
        for L in laws[0]
    }


def censor(side, L, how, log_bound):
    """Every seed at depth L becomes a search record censored above
    (n* > bound) or below (n* <= bound); the planted truth must agree."""
    bound = math.exp(log_bound)
    out = {k: dict(v) for k, v in side.items()}
    for s, n in side[L].items():
        assert (n > bound) if how == "above" else (n <= bound), "planted bound contradicts truth"
        status = "right" if how == "above" else "left"
        out[L][s] = {"seed": s, "status": status, "bound": bound, "n_star": None}
    return out


def apply(side, cens):
    for L, how, b in cens:
        side = censor(side, L, how, b)
    return side


# ------------------------------------------------------------ building blocks
@pytest.mark.parametrize(
    "a, b, expected, kind",
    [
        (100.0, 10.0, (math.log(10), math.log(10)), "resolved"),
        ({"status": "right", "bound": 100.0}, 10.0, (math.log(10), INF), "lower bound"),
        (10.0, {"status": "right", "bound": 100.0}, (-INF, math.log(0.1)), "upper bound"),
        ({"status": "left", "bound": 10.0}, 100.0, (-INF, math.log(0.1)), "upper bound"),
        (100.0, {"status": "left", "bound": 10.0}, (math.log(10), INF), "lower bound"),
        ({"status": "right", "bound": 1.0}, {"status": "right", "bound": 1.0}, (-INF, INF),
         "unknown"),
        ({"status": "left", "bound": 1.0}, {"status": "left", "bound": 1.0}, (-INF, INF),
         "unknown"),
        ({"status": "right", "bound": 100.0}, {"status": "left", "bound": 10.0},
         (math.log(10), INF), "lower bound"),
        ((20.0, 40.0), (2.0, 4.0), (math.log(5), math.log(20)), "interval"),
    ],
)  # fmt: skip
def test_ratio_interval_table(a, b, expected, kind):
    got = iv.ratio_interval(a, b)
    assert got == pytest.approx(expected)
    assert iv.interval_kind(got) == kind


def test_linear_range_equals_brute_force_over_corners():
    rng = np.random.default_rng(1)
    for _ in range(50):
        k = int(rng.integers(2, 6))
        w = rng.normal(size=k)
        lo = rng.normal(size=k)
        box = list(zip(lo, lo + rng.exponential(size=k)))
        corners = [float(np.dot(w, c)) for c in itertools.product(*box)]
        assert iv.linear_range(w, box) == pytest.approx((min(corners), max(corners)))
        inside = [np.dot(w, [rng.uniform(a, b) for a, b in box]) for _ in range(200)]
        got = iv.linear_range(w, box)
        assert got[0] - 1e-12 <= min(inside) and max(inside) <= got[1] + 1e-12


@pytest.mark.parametrize(
    "w, box, expected",
    [
        ([1.0, -1.0], [(0.0, INF), (1.0, 2.0)], (-2.0, INF)),
        ([-1.0, 0.0, 1.0], [(0.0, 1.0), (-INF, INF), (2.0, 3.0)], (1.0, 3.0)),
        ([-1.0, 1.0], [(-INF, 0.0), (-INF, 5.0)], (-INF, INF)),
        ([-1.0, 1.0], [(1.0, INF), (0.0, 5.0)], (-INF, 4.0)),
    ],
)
def test_linear_range_open_ends(w, box, expected):
    assert iv.linear_range(w, box) == expected


def test_slope_and_convexity_weights_against_polyfit():
    rng = np.random.default_rng(2)
    for depths in ([2, 3, 4], [2, 3, 5, 6], [1, 2, 3, 4, 5]):
        y = rng.normal(size=len(depths))
        L = np.array(depths, float)
        assert iv.slope_weights(L) @ y == pytest.approx(np.polyfit(L, y, 1)[0])
        f = np.diff(y) / np.diff(L)
        mid = 0.5 * (L[1:] + L[:-1])
        assert iv.convexity_weights(L) @ y == pytest.approx(np.polyfit(mid, f, 1)[0])
    y = np.array([1.0, 2.5, 7.0])
    assert iv.convexity_weights([2, 3, 4]) @ y == pytest.approx(7.0 - 2 * 2.5 + 1.0)


@pytest.mark.parametrize("m, j", [(8, 1), (12, 3), (20, 6)])
def test_median_ci_order_statistics(m, j):
    rng = np.random.default_rng(m)
    pts = rng.normal(size=m)
    ci = iv.median_ci([(p, p) for p in pts])
    srt = np.sort(pts)
    assert ci["j"] == j
    assert (ci["lo"], ci["hi"]) == (srt[j - 1], srt[m - j])
    assert ci["median"][0] == ci["median"][1] == pytest.approx(np.median(pts))


def test_median_ci_interval_ends_come_from_their_own_sorted_ends():
    data = [(float(k), float(k) + 10.0) for k in range(12)]
    ci = iv.median_ci(data)
    assert (ci["lo"], ci["hi"]) == (2.0, 19.0)
    assert ci["median"] == (5.5, 15.5)
    assert iv.median_ci(data[:7])["lo"] is None  # below MIN_SEEDS_FOR_CI: no CI


# ------------------------------------------------------------ ratio growth
GROWTH_RULE = {"kind": "above", "threshold": 1.5, "min_depths": 3}  # log 1.5 = 0.405
GAP = (_law(lambda L: 2 * L), _law(lambda L: L))  # ratio slope 1: factor e
ALIKE = (_law(lambda L: L + 1), _law(lambda L: L + 1))  # slope 0: factor 1
STRADDLE = (
    (_law(lambda L: (math.log(1.5) + 0.5) * L), _law(lambda L: (math.log(1.5) - 0.5) * L)),
    _law(lambda L: 0.0 * L),
)

# weights of the slope on L = 2, 3, 4: (-1/2, 0, 1/2)
RATIO_GROWTH_CASES = [
    # id, (A law, B law), A censoring, B censoring, rule, verdict
    ("none-supported", GAP, [], [], GROWTH_RULE, S),
    ("none-not", ALIKE, [], [], GROWTH_RULE, N),  # the negative control
    ("none-inconclusive", STRADDLE, [], [], GROWTH_RULE, U),
    # A above at L=4, bound 7: slope >= ((7 - 4) - (4 - 2)) / 2 = 0.5 > 0.405
    ("A-above-supported", GAP, [(4, "above", 7.0)], [], GROWTH_RULE, S),
    # bound 5.5: slope >= -0.25, upper end open
    ("A-above-inconclusive", GAP, [(4, "above", 5.5)], [], GROWTH_RULE, U),
    # B above at L=4 (truth 5, bound 4.9): slope <= (5 - 4.9 - 0) / 2 = 0.05
    ("B-above-not", ALIKE, [], [(4, "above", 4.9)], GROWTH_RULE, N),
    # truth A = 8, B = 4, bound 2: slope <= (6 - 2) / 2 = 2, lower end open
    ("B-above-inconclusive", GAP, [], [(4, "above", 2.0)], GROWTH_RULE, U),
    # A below at L=2 (truth 4, bound 4.5): slope >= (4 - 2.5) / 2 = 0.75
    ("A-below-supported", GAP, [(2, "below", 4.5)], [], GROWTH_RULE, S),
    # bound 6: slope >= 0
    ("A-below-inconclusive", GAP, [(2, "below", 6.0)], [], GROWTH_RULE, U),
    # B below at L=2 (truth 3, bound 3.1): slope <= (0 + 0.1) / 2 = 0.05
    ("B-below-not", ALIKE, [], [(2, "below", 3.1)], GROWTH_RULE, N),
    # bound 5: slope <= 1
    ("B-below-inconclusive", ALIKE, [], [(2, "below", 5.0)], GROWTH_RULE, U),
    # both above at L=4: that depth is unknown, 2 usable < 3
    ("both-above-too-few", GAP, [(4, "above", 7.0)], [(4, "above", 3.5)], GROWTH_RULE, T),
    # ... and without min_depths the seeds fit L = 2, 3 alone: slope 1
    ("both-above-dropped", GAP, [(4, "above", 7.0)], [(4, "above", 3.5)],
     {"kind": "above", "threshold": 1.5}, S),
    ("both-below-too-few", GAP, [(2, "below", 4.5)], [(2, "below", 2.5)], GROWTH_RULE, T),
    # the middle depth has weight 0: censoring there changes nothing
    ("A-above-middle", GAP, [(3, "above", 5.0)], [], GROWTH_RULE, S),
]  # fmt: skip


@pytest.mark.parametrize(
    "laws, ca, cb, rule, expected",
    [c[1:] for c in RATIO_GROWTH_CASES],
    ids=[c[0] for c in RATIO_GROWTH_CASES],
)
def test_nstar_ratio_growth_planted(laws, ca, cb, rule, expected):
    a = apply(plant(laws[0], seed=1), ca)
    b = apply(plant(laws[1], seed=2), cb)
    out = ist.nstar_ratio_growth(a, b, rule)
    assert out["verdict"] == expected, out["detail"]
    assert out["seeds"] == 12
    assert out["depths_resolved"] + out["depths_bounded"] == sum(
        k != "unknown" for k in out["depths"].values()
    )


def test_nstar_ratio_growth_value_and_counts_on_resolved_data():
    out = ist.nstar_ratio_growth(plant(GAP[0], noise=0.0), plant(GAP[1], noise=0.0), GROWTH_RULE)
    assert out["value"] == pytest.approx(math.e)
    assert (out["lo"], out["hi"]) == pytest.approx((math.e, math.e))
    assert out["depths_resolved"] == 3 and out["depths_bounded"] == 0
    assert out["seeds_decided"] == {S: 12, N: 0, "undecided": 0}


def test_censored_ends_are_open_and_bounds_reported():
    a = apply(plant(GAP[0], noise=0.0), [(4, "above", 7.0)])
    out = ist.nstar_ratio_growth(a, plant(GAP[1], noise=0.0), GROWTH_RULE)
    assert out["value"] is None and out["hi"] is None and out["hi_censored"]
    assert out["lo"] == pytest.approx(math.exp(0.5)) and not out["lo_censored"]
    assert out["depths"] == {2: "resolved", 3: "resolved", 4: "bounded"}
    assert out["depths_bounded"] == 1


@pytest.mark.parametrize("rule", [GROWTH_RULE, {"kind": "above", "threshold": 1.5}])
def test_zero_usable_depths_never_pass(rule):
    a = {2: {s: 10.0 for s in SEEDS}}
    b = {3: {s: 10.0 for s in SEEDS}}
    assert ist.nstar_ratio_growth(a, b, rule)["verdict"] == T
    assert ist.nstar_ratio(a, b, {"kind": "above", "threshold": 0.0})["verdict"] == T
    assert ist.kernel_convexity({}, rule)["verdict"] == T
    assert ist.net_power({}, {}, {"kind": "below", "threshold": 2.0})["verdict"] == T


# ------------------------------------------------------------ kernel half
KERNEL_RULE = {"kind": "above", "threshold": 1.0, "min_depths": 3}
CONVEX = _law(lambda L: 2.0 ** (L - 1))  # y = 2, 4, 8: second difference 2
POLY = _law(lambda L: 2.0 * math.log(2**L - 1))  # C^2, C = 3, 7, 15: -0.171
MIXED = (_law(lambda L: 0.5 * (L - 3) ** 2), _law(lambda L: -0.5 * (L - 3) ** 2))
# second difference y4 - 2 y3 + y2 (weights 1, -2, 1); POLY: y = 2.197, 3.892, 5.416
KERNEL_CASES = [
    ("none-supported", CONVEX, [], KERNEL_RULE, S),
    ("none-not", POLY, [], KERNEL_RULE, N),
    ("none-inconclusive", MIXED, [], KERNEL_RULE, U),
    ("two-depths", {3: 4.0, 4: 8.0}, [], KERNEL_RULE, T),
    # above at L=4 (truth 8, bound 7): >= 7 - 8 + 2 = 1
    ("above-deepest-supported", CONVEX, [(4, "above", 7.0)], KERNEL_RULE, S),
    # bound 5: >= -1, open above
    ("above-deepest-inconclusive", CONVEX, [(4, "above", 5.0)], KERNEL_RULE, U),
    # above at L=3 (truth 3.892, bound 3.85): <= 5.416 - 7.7 + 2.197 = -0.087
    ("above-middle-not", POLY, [(3, "above", 3.85)], KERNEL_RULE, N),
    # below at L=2 (truth 2.197, bound 2.25): <= -0.171 + 0.053 = -0.118
    ("below-shallowest-not", POLY, [(2, "below", 2.25)], KERNEL_RULE, N),
    # bound 3.5: <= 1.13, open below
    ("below-shallowest-inconclusive", POLY, [(2, "below", 3.5)], KERNEL_RULE, U),
    # below at L=4 (truth 5.416, bound 5.45): <= -0.137
    ("below-deepest-not", POLY, [(4, "below", 5.45)], KERNEL_RULE, N),
]


@pytest.mark.parametrize(
    "law, cens, rule, expected", [c[1:] for c in KERNEL_CASES], ids=[c[0] for c in KERNEL_CASES]
)
def test_kernel_convexity_planted(law, cens, rule, expected):
    out = ist.kernel_convexity(apply(plant(law, seed=3), cens), rule)
    assert out["verdict"] == expected, out["detail"]


def test_kernel_convexity_value_is_the_factor_of_factors():
    # per-level factors e^2 then e^4: the factor grows e^2 per level
    out = ist.kernel_convexity(plant(CONVEX, noise=0.0), KERNEL_RULE)
    assert out["value"] == pytest.approx(math.exp(2.0))


# ------------------------------------------------------------ net half
NET_RULE = {"kind": "below", "threshold": 2.0, "min_depths": 2}
C = {L: 2**L - 1 for L in DEPTHS}  # balanced binary trees: 3, 7, 15


def _power(p):
    return _law(lambda L: p * math.log(C[L]))


# slope weights on log C = (1.099, 1.946, 2.708): (-0.632, 0.022, 0.610)
NET_CASES = [
    ("none-supported", _power(1.0), [], NET_RULE, S),
    ("none-not", _power(3.0), [], NET_RULE, N),
    ("none-inconclusive", (_power(1.5), _power(2.5)), [], NET_RULE, U),
    ("one-depth", {4: 3.0}, [], NET_RULE, T),
    # above at L=4 (truth 8.124, bound 7.5): p >= 3 - 0.610 * 0.624 = 2.62
    ("above-deepest-not", _power(3.0), [(4, "above", 7.5)], NET_RULE, N),
    # truth 2.708, bound 2.0: p >= 0.57, open above
    ("above-deepest-inconclusive", _power(1.0), [(4, "above", 2.0)], NET_RULE, U),
    # below at L=2 (truth 3.296, bound 3.5): p >= 3 - 0.632 * 0.204 = 2.87
    ("below-shallowest-not", _power(3.0), [(2, "below", 3.5)], NET_RULE, N),
    # truth 1.099, bound 3: p >= -0.2, open above
    ("below-shallowest-inconclusive", _power(1.0), [(2, "below", 3.0)], NET_RULE, U),
    # below at L=4 (truth 2.708, bound 3.0): p <= 1 + 0.610 * 0.292 = 1.18
    ("below-deepest-supported", _power(1.0), [(4, "below", 3.0)], NET_RULE, S),
    # above at L=2 (truth 1.099, bound 0.8): p <= 1 + 0.632 * 0.299 = 1.19
    ("above-shallowest-supported", _power(1.0), [(2, "above", 0.8)], NET_RULE, S),
    # bound 5 at L=4: p <= 2.4, open below
    ("below-deepest-inconclusive", _power(1.0), [(4, "below", 5.0)], NET_RULE, U),
]


@pytest.mark.parametrize(
    "law, cens, rule, expected", [c[1:] for c in NET_CASES], ids=[c[0] for c in NET_CASES]
)
def test_net_power_planted(law, cens, rule, expected):
    out = ist.net_power(apply(plant(law, seed=4), cens), C, rule)
    assert out["verdict"] == expected, out["detail"]


def test_net_power_recovers_the_planted_exponent():
    out = ist.net_power(plant(_power(1.7), noise=0.0), C, NET_RULE)
    assert out["value"] == pytest.approx(1.7)


# ------------------------------------------------------------ negative control
def test_negative_control_alike_growth_reads_not_supported():
    """Kernel and net n* growing alike, a fixed power of the constituents:
    the ratio's growth and the kernel half must both read not supported."""
    law = _power(1.5)
    kernel, net = plant(law, noise=0.05, seed=5), plant(law, noise=0.05, seed=6)
    assert ist.nstar_ratio_growth(kernel, net, GROWTH_RULE)["verdict"] == N
    assert ist.kernel_convexity(kernel, KERNEL_RULE)["verdict"] == N


# ------------------------------------------------------------ per-depth ratio
RATIO_RULE = {"kind": "above", "threshold": 0.0, "min_depths": 2}
RULE3 = dict(RATIO_RULE, min_depths=3)
LN = math.log
TEN = (_law(lambda L: LN(1000)), _law(lambda L: LN(100)))  # log10 ratio 1 at L = 2, 3, 4
TENTH = (_law(lambda L: LN(10)), _law(lambda L: LN(100)))  # -1
SPLIT = ((TEN[0], TENTH[0]), TEN[1])
RATIO_CASES = [
    ("none-supported", TEN, [], [], RATIO_RULE, S),
    ("none-not", TENTH, [], [], RATIO_RULE, N),
    ("none-inconclusive", SPLIT, [], [], RATIO_RULE, U),
    ("one-depth", ({4: LN(1000)}, {4: LN(100)}), [], [], RATIO_RULE, T),
    # A above at L=4 (truth 1000, bound 500): ratio >= log10 5 > 0
    ("A-above-supported", TEN, [(4, "above", LN(500))], [], RATIO_RULE, S),
    # bound 20: ratio >= -0.7, an undecided bound beside two supported depths
    ("A-above-inconclusive", TEN, [(4, "above", LN(20))], [], RATIO_RULE, U),
    # ... and 2 usable depths < 3
    ("A-above-too-few", TEN, [(4, "above", LN(20))], [], RULE3, T),
    # B above at L=4 (truth 100, bound 50): ratio <= log10(10 / 50) < 0
    ("B-above-not", TENTH, [], [(4, "above", LN(50))], RATIO_RULE, N),
    # truth A = 1000: ratio <= log10(1000 / 50) = 1.3, undecided
    ("B-above-inconclusive", TEN, [], [(4, "above", LN(50))], RATIO_RULE, U),
    # A below at L=2 (truth 10, bound 20): ratio <= log10(20 / 100) < 0
    ("A-below-not", TENTH, [(2, "below", LN(20))], [], RATIO_RULE, N),
    # truth 1000, bound 2000: ratio <= 1.3, undecided
    ("A-below-inconclusive", TEN, [(2, "below", LN(2000))], [], RATIO_RULE, U),
    # B below at L=2 (truth 100, bound 200): ratio >= log10(1000 / 200) > 0
    ("B-below-supported", TEN, [], [(2, "below", LN(200))], RATIO_RULE, S),
    # bound 5000: ratio >= -0.7, undecided
    ("B-below-inconclusive", TEN, [], [(2, "below", LN(5000))], RATIO_RULE, U),
    # both above at L=4: unknown, left out like a depth not searched
    ("both-above-left-out", TEN, [(4, "above", LN(500))], [(4, "above", LN(50))], RATIO_RULE, S),
    ("both-above-too-few", TEN, [(4, "above", LN(500))], [(4, "above", LN(50))], RULE3, T),
    # a depth decided against refutes "at every depth" whatever the count
    ("one-depth-not", ({4: LN(10)}, {4: LN(100)}), [], [], RULE3, N),
]  # fmt: skip


@pytest.mark.parametrize(
    "laws, ca, cb, rule, expected", [c[1:] for c in RATIO_CASES], ids=[c[0] for c in RATIO_CASES]
)
def test_nstar_ratio_planted(laws, ca, cb, rule, expected):
    a = apply(plant(laws[0], seed=7), ca)
    b = apply(plant(laws[1], seed=8), cb)
    out = ist.nstar_ratio(a, b, rule)
    assert out["verdict"] == expected, out["detail"]


def test_nstar_ratio_inconclusive_with_an_undecided_bound():
    """Two supported depths and an undecided bound at a third: inconclusive."""
    laws = (_law(lambda L: LN(1000), DEPTHS), _law(lambda L: LN(100), DEPTHS))
    a = censor(plant(laws[0], seed=9), 4, "above", LN(20))  # ratio >= -0.7
    out = ist.nstar_ratio(a, plant(laws[1], seed=10), RATIO_RULE)
    assert out["verdict"] == U
    assert [r["kind"] for r in out["rows"]] == ["resolved", "resolved", "undecided bound"]


def test_stored_e3a_net_case_reads_not_supported():
    """E3a-net: NTK / net log10 n* ratio -0.39 [-0.78, -0.13] at
    L = 3 (8 seeds: CI [X_(1), X_(8)]) and the net censored at 512 at L = 4
    (NTK median 83: ratio <= -0.79); rule above 0 with min_depths 3."""
    r3 = [-0.78, -0.6, -0.5, -0.42, -0.36, -0.3, -0.2, -0.13]
    net3 = [100.0, 120.0, 90.0, 110.0, 130.0, 95.0, 105.0, 115.0]
    ntk4 = [60.0, 70.0, 75.0, 80.0, 86.0, 90.0, 100.0, 110.0]
    a = {3: [n * 10**r for n, r in zip(net3, r3)], 4: ntk4}
    right = {"status": "right", "bound": 512.0, "n_star": None}
    b = {3: net3, 4: [dict(right, seed=s) for s in range(8)]}
    out = ist.nstar_ratio(a, b, {"kind": "above", "threshold": 0.0, "min_depths": 3})
    assert out["verdict"] == N
    row3, row4 = out["rows"]
    assert (row3["value"], row3["lo"], row3["hi"]) == pytest.approx((-0.39, -0.78, -0.13))
    assert row4["kind"] == "bounded" and row4["lo_censored"]
    assert row4["bound_hi"] == pytest.approx(math.log10(83.0 / 512.0), abs=1e-3)
    assert out["depths_resolved"] == 1 and out["depths_bounded"] == 1


# ------------------------------------------------------------ Fourier fit
def test_fourier_fit_recovers_a_planted_power_law():
    F = {2: 4.0, 3: 8.0, 4: 16.0}
    kernel = plant(_law(lambda L: LN(3.0) + 1.3 * LN(F[L])), noise=0.0)
    out = ist.fourier_fit(kernel, F)
    assert out["verdict"] is None
    assert out["value"] == pytest.approx(1.3)
    assert out["fit_of_medians"]["k"] == pytest.approx(1.3)
    assert out["fit_of_medians"]["c"] == pytest.approx(3.0)
    assert out["fit_of_medians"]["r2"] == pytest.approx(1.0)
    censored = censor(kernel, 4, "above", LN(3.0) + 1.3 * LN(16.0) - 0.5)
    assert ist.fourier_fit(censored, F)["fit_of_medians"] is None


# ------------------------------------------------------------ coverage
@pytest.mark.parametrize("censoring", [0.0, 0.4])
def test_ci_covers_at_its_nominal_rate_on_interval_data(censoring):
    """Monte Carlo (seeded): 12 seeds' true values t ~ N(mu, 1); a fraction
    ``censoring`` of them reported as intervals containing t (widened down,
    up, or open on one side). The CI [lo_(3), hi_(10)] must cover mu at about
    its nominal 0.9614 without censoring and at least that with it."""
    rng = np.random.default_rng(11)
    reps, mu, hits = 4000, 0.7, 0
    nominal = None
    for _ in range(reps):
        t = mu + rng.standard_normal(12)
        data = []
        for x in t:
            if rng.uniform() < censoring:
                kind = rng.integers(4)
                a, b = x - rng.exponential(), x + rng.exponential()
                data.append([(a, b), (-INF, b), (a, INF), (a, x)][kind])
            else:
                data.append((x, x))
        ci = iv.median_ci(data)
        nominal = ci["coverage"]
        hits += ci["lo"] <= mu <= ci["hi"]
    cov, se = hits / reps, math.sqrt(nominal * (1 - nominal) / reps)
    assert nominal == pytest.approx(1 - 2 * (1 + 12 + 66) / 4096)
    if censoring == 0.0:
        assert abs(cov - nominal) < 4 * se
    else:
        assert cov >= nominal - 4 * se


def test_a_resolved_seed_is_known_to_its_search_bracket():
    """n* of a resolved seed lies in (lo, hi]: the error was above eps at lo
    and at most eps at hi; the interpolated n_star inside is not exact."""
    rec = {"seed": 0, "status": "resolved", "lo": 100, "hi": 125, "n_star": 110.0}
    assert iv.log_interval(rec) == (math.log(100), math.log(125))
    bare = {"seed": 0, "status": "resolved", "n_star": 110.0}
    assert iv.log_interval(bare) == (math.log(110.0), math.log(110.0))
