"""Clopper–Pearson bounds and the privacy-loss bound built on them."""
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scipy.stats import binom, norm

from dpaudit.statistics import stats
from dpaudit.statistics.measure import design
from dpaudit.statistics.stats import (P_FLOOR_LOG10, PowerCurve, cp_lower, cp_upper, detectable_eps,
                                      detectable_loss, eps_lower_bound, eps_upper_bound,
                                      log_ratio_interval, p_value)


@pytest.mark.parametrize("k,n,want", [   # one-sided 95 % upper bounds (exact Clopper–Pearson, independent values)
    (0, 100, 0.0295), (1, 100, 0.0466), (2, 100, 0.0616), (3, 100, 0.0757),
    (0, 300, 0.0099), (1, 300, 0.0157), (0, 1000, 0.0030), (5, 1000, 0.0105)])
def test_cp_upper_known_values(k, n, want):
    assert float(cp_upper(k, n, 0.05)) == pytest.approx(want, abs=6e-5)


def test_cp_closed_forms():
    # k = 0: upper = 1 − α^(1/n); k = n: lower = α^(1/n)
    for n in (1, 7, 50, 1000):
        assert float(cp_upper(0, n, 0.05)) == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-9)
        assert float(cp_lower(n, n, 0.05)) == pytest.approx(0.05 ** (1 / n), rel=1e-9)
    assert float(cp_lower(0, 10, 0.05)) == 0.0 and float(cp_upper(10, 10, 0.05)) == 1.0


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 10**7), share=st.floats(1e-6, 1), alpha=st.floats(1e-12, 0.5))
def test_cp_bounds_are_statsmodels_one_sided_clopper_pearson_bit_for_bit(n, share, alpha):
    from statsmodels.stats.proportion import proportion_confint
    k = np.array([0, round(share * n), share * n, n], dtype=float)   # integers and a fraction
    lo, hi = proportion_confint(k, n, alpha=2 * alpha, method="beta")
    assert cp_lower(k, n, alpha).tobytes() == np.nan_to_num(lo, nan=0.0).tobytes()
    assert cp_upper(k, n, alpha).tobytes() == np.nan_to_num(hi, nan=1.0).tobytes()


counts = st.integers(0, 400)


@settings(max_examples=200, deadline=None)
@given(k=counts, extra=st.integers(1, 400), alpha=st.floats(1e-6, 0.5))
def test_bounds_monotone_in_counts(k, extra, alpha):
    n = 400 + extra
    assert cp_lower(k, n, alpha) <= cp_lower(k + 1, n, alpha)
    assert cp_upper(k, n, alpha) <= cp_upper(k + 1, n, alpha)
    assert cp_lower(k, n, alpha) <= k / n <= cp_upper(k, n, alpha)
    # ε_lb grows with numerator hits and shrinks with denominator hits
    assert eps_lower_bound(k + 1, n, 50, n, alpha) >= eps_lower_bound(k, n, 50, n, alpha)
    assert eps_lower_bound(200, n, k + 1, n, alpha) <= eps_lower_bound(200, n, k, n, alpha)


@settings(max_examples=200, deadline=None)
@given(a=counts, b=counts, alpha=st.floats(1e-4, 0.5))
def test_swapping_sides_mirrors_the_interval(a, b, alpha):
    lo, hi = log_ratio_interval(a, 400, b, 400, alpha)
    lo2, hi2 = log_ratio_interval(b, 400, a, 400, alpha)
    assert lo == pytest.approx(-hi2) and hi == pytest.approx(-lo2)


@pytest.mark.statistical
def test_eps_lower_bound_coverage():
    # events with a true log-ratio of exactly 0.5: the bound at α = 0.05 must exceed 0.5 in at
    # most 5 % of 20 000 replications; binomial(20 000, 0.05) exceeds 1 200 with prob < 1e-8
    rng = np.random.default_rng(7)
    p_den = 0.05
    p_num = p_den * math.exp(0.5)
    n = 2000
    k_num = rng.binomial(n, p_num, 20_000)
    k_den = rng.binomial(n, p_den, 20_000)
    lb = eps_lower_bound(k_num, n, k_den, n, 0.05)
    assert np.sum(lb > 0.5) <= 1200
    assert np.all(lb >= 0)


def test_detectable_eps_is_where_the_expected_bound_meets_the_claim():
    d = detectable_eps(0.1, 10 ** 6, 0.5, 0.05)
    assert 0.5 < d < 0.53
    assert float(eps_lower_bound(1e6 * 0.1 * math.exp(d), 10 ** 6, 1e5, 10 ** 6, 0.05)) == \
        pytest.approx(0.5, abs=1e-5)
    assert detectable_eps(1e-7, 100, 10.0, 0.05) == math.inf   # 100 runs cannot certify 10


@settings(max_examples=200, deadline=None)
@given(k=counts, j=counts, alpha=st.floats(1e-6, 0.5), delta=st.floats(0, 0.2))
def test_delta_bounds_are_monotone_and_bracket_the_estimate(k, j, alpha, delta):
    n = 500
    lb = float(eps_lower_bound(k, n, j, n, alpha, delta))
    ub = float(eps_upper_bound(k, n, j, n, alpha, delta))
    assert lb <= float(eps_lower_bound(k, n, j, n, alpha, 0.0))   # δ only weakens the bound
    assert lb <= float(eps_lower_bound(k + 1, n, j, n, alpha, delta))
    assert ub >= float(eps_upper_bound(k, n, j + 1, n, alpha, delta))
    if k / n > delta and j > 0:
        est = math.log((k / n - delta) / (j / n))
        assert lb <= max(est, 0.0) + 1e-12 and est <= ub + 1e-12


@settings(max_examples=50, deadline=None)
@given(k=st.integers(1, 400), j=st.integers(0, 400), eps=st.floats(0.01, 3))
@example(k=314, j=0, eps=0.5)       # the p-value floor
def test_p_value_is_where_the_bound_crosses_eps(k, j, eps):
    n = 400
    p = p_value(k, n, j, n, eps)
    if p == 10.0 ** -P_FLOOR_LOG10:   # floored: the bound exceeds eps even there
        assert eps_lower_bound(k, n, j, n, p) > eps
    elif p < 1.0:   # just above p the bound exceeds eps, just below it does not
        assert eps_lower_bound(k, n, j, n, min(p * 1.001, 0.999)) > eps
        assert eps_lower_bound(k, n, j, n, p * 0.999) <= eps
    else:
        assert eps_lower_bound(k, n, j, n, 0.999) <= eps


@pytest.mark.statistical
@pytest.mark.slow
@pytest.mark.parametrize("delta", [0.0, 0.02])
def test_lower_and_upper_bounds_cover_the_true_delta_loss(delta):
    # true δ-loss exactly 0.4 on an event: each one-sided bound may miss with probability
    # ≤ α = 0.05; misses ~ Binomial(20 000, ≤ 0.05) exceed 1 200 with probability < 1e-8
    rng = np.random.default_rng(11)
    p_den = 0.1
    p_num = p_den * math.exp(0.4) + delta
    n = 3000
    k_num = rng.binomial(n, p_num, 20_000)
    k_den = rng.binomial(n, p_den, 20_000)
    assert np.sum(eps_lower_bound(k_num, n, k_den, n, 0.05, delta) > 0.4) <= 1200
    assert np.sum(eps_upper_bound(k_num, n, k_den, n, 0.05, delta) < 0.4) <= 1200
    lo = [log_ratio_interval(a, n, b, n, 0.05)[0] for a, b in zip(k_num[:4000], k_den[:4000])]
    if delta == 0:   # two-sided interval: lower end misses with probability ≤ α/2
        assert np.sum(np.array(lo) > 0.4) <= 200      # Binomial(4000, 0.025) > 200: < 1e-15


def _power_by_enumeration(p_den, sizes, eps, levels, delta, loss):
    """P(last look flags) − Σ earlier P(upper bound ≤ ε), summed over every pair of counts;
    look k's tests at level ``levels[k]``."""
    q = min(1.0, math.exp(loss) * p_den + delta)

    def mass(n, region):
        j = np.arange(n + 1)
        pmf = np.outer(binom.pmf(j, n, q), binom.pmf(j, n, p_den))
        return float(pmf[region(j[:, None], j[None, :], n)].sum())

    p = mass(sizes[-1], lambda a, b, n: eps_lower_bound(a, n, b, n, levels[-1], delta) > eps)
    for m, lv in zip(sizes[:-1], levels[:-1]):
        p -= mass(m, lambda a, b, n: eps_upper_bound(a, n, b, n, lv, delta) <= eps)
    return max(p, 0.0)


@pytest.mark.parametrize("p_den,delta", [(0.2, 0.0), (0.05, 0.0), (0.3, 0.02)])
@pytest.mark.parametrize("levels", [[0.05 / 8] * 4, [0.05 / 32, 0.05 / 32, 0.05 / 16, 0.05 * 3 / 8]])
def test_power_equals_the_sum_over_every_outcome(p_den, delta, levels):
    sizes = [30, 60, 120, 240]
    curve = PowerCurve(p_den, sizes, 0.5, levels, delta)
    for loss in (0.0, 0.5, 1.0, 1.5, 2.5):
        want = _power_by_enumeration(p_den, sizes, 0.5, levels, delta, loss)
        assert curve.power(loss) == pytest.approx(want, abs=1e-10)


def test_weighting_alpha_toward_the_last_look_lowers_the_detectable_loss():
    # same total α for one finalist (0.05), spread evenly or by the measurement's weights
    for p_den, n in ((0.1, 100_000), (0.3, 2000), (0.05, 20_000)):
        sizes, levels = design(n, 0.05)
        assert sum(levels) == pytest.approx(0.05)
        even = PowerCurve(p_den, sizes, 0.5, 0.05 / len(sizes)).detectable_loss(0.05)
        weighted = PowerCurve(p_den, sizes, 0.5, levels).detectable_loss(0.05)
        assert 0.5 < weighted < even


def test_power_on_a_grid_is_conservative_and_close(monkeypatch):
    sizes = [5_000, 10_000, 20_000, 40_000]
    coarse = PowerCurve(0.1, sizes, 0.5, 0.05 / 8)
    monkeypatch.setattr(stats, "GRID", 10 ** 6)                 # every denominator count
    exact = PowerCurve(0.1, sizes, 0.5, 0.05 / 8)
    for loss in np.linspace(0.5, 0.6, 21):
        assert coarse.power(loss) <= exact.power(loss) + 1e-12
    assert coarse.detectable_loss(0.05) == pytest.approx(exact.detectable_loss(0.05), abs=1e-3)


def test_detectable_loss_is_where_the_power_reaches_one_minus_beta():
    sizes = [25_000, 50_000, 100_000, 200_000]
    curve = PowerCurve(0.1, sizes, 0.5, 0.05 / 8)
    for beta in (0.05, 0.2, 0.5):
        x = curve.detectable_loss(beta)
        assert curve.power(x) >= 1 - beta - 1e-6
        assert curve.power(x - 1e-4) < 1 - beta
    # the 95 % figure lies above the median one, and the median one near the expected-count one
    assert curve.detectable_loss(0.05) > curve.detectable_loss(0.5)
    assert curve.detectable_loss(0.5) == pytest.approx(
        detectable_eps(0.1, 200_000, 0.5, 0.05 / 8), abs=3e-3)
    # from the counts: fewer runs, a larger detectable loss; 100 runs cannot certify ε = 10
    assert detectable_loss(2_000, 20_000, ([20_000], 0.05), 0.5) > curve.detectable_loss(0.05)
    assert detectable_loss(1, 100, ([100], 0.05), 10.0) == math.inf
    assert detectable_loss(0, 100, ([100], 0.05), 10.0) == math.inf
    # never seen on the denominator side: its probability may be 0, where nothing is
    # detectable (it used to be taken as 1/n, which gave a finite figure)
    assert detectable_loss(0, 10 ** 6, ([10 ** 6], 0.05), 0.5) == math.inf
    assert detectable_loss(1, 10 ** 6, ([10 ** 6], 0.05), 0.5) < math.inf


@pytest.mark.parametrize("old, new", [((0.3, 0.1), (0.3, 0.1)), ((0.5, 0.5), (0.5, 0.5)),
                                      ((0.9, 0.5), (0.9, 0.5)), ((0.2, 0.1), (0.6, 0.3)),
                                      ((0.05, 0.02), (0.9, 0.36)), ((0.6, 0.3), (0.3, 0.3)),
                                      ((0.02, 0.02), (0.02, 0.02))])
@pytest.mark.parametrize("alpha", [1e-2, 1e-3])
def test_rise_test_real_size_over_every_outcome(old, new, alpha):
    """Real size, computed exactly: every outcome of four binomials (40 runs each, 41^4
    outcomes) is enumerated and the rejection probability under H0 (the log ratio did not
    rise: unchanged, moved at the same ratio, or fell) is at most α at the tail levels the
    gate uses. (An asymptotic test: at α = 0.05 some of these laws reach 1.06 α.)"""
    n = 40
    k = np.arange(n + 1)
    grid = np.meshgrid(k, k, k, k, indexing="ij", sparse=True)
    weight = np.ones(())
    for g, p in zip(grid, (*old, *new)):
        weight = weight * binom.pmf(g, n, p)
    z = stats.rise_z((grid[0], n, grid[1], n), (grid[2], n, grid[3], n))
    size = float(weight[z >= norm.isf(alpha)].sum())
    assert size <= alpha
    if old == new and old[1] >= 0.5:
        assert size >= alpha / 5          # not an empty test either: it can reject


def test_rise_p_value_grows_with_the_rise_and_sees_what_the_interval_test_missed():
    old = (70333, 200000, 44732, 200000)            # the gate's adap-tt event, log ratio 0.453
    assert stats.rise_p_value(old, old) == pytest.approx(0.5, abs=1e-3)   # no rise: z = 0
    assert stats.rise_p_value(old, (44732, 200000, 70333, 200000)) > 0.999   # a fall
    ps = [stats.rise_p_value(old, (round(70333 * math.exp(r)), 200000, 44732, 200000))
          for r in (0.01, 0.03, 0.05, 0.1)]
    assert ps == sorted(ps, reverse=True) and ps[0] > 0.05
    # a rise of 0.05 in the log ratio: rejected at the gate's 1.25e-5 (z ≈ 4.9); the union of
    # four Clopper-Pearson bounds at 1.25e-5/4 each did not reject it (its lower bound on the
    # new ratio stays below the upper bound on the old one)
    a = 1.25e-5 / 4
    new = (round(70333 * math.exp(0.05)), 200000, 44732, 200000)
    assert ps[2] < 1.25e-5
    assert (math.log(stats.cp_lower(new[0], 200000, a) / stats.cp_upper(44732, 200000, a))
            < math.log(stats.cp_upper(70333, 200000, a) / stats.cp_lower(44732, 200000, a)))
    assert stats.rise_p_value((5, 200000, 5, 200000), (30, 200000, 1, 200000)) < 1e-2
    assert stats.rise_p_value(old, (200000, 200000, 0, 200000)) < 1e-15   # no den hit: finite


# ---------------------------------------------------------------- mean_lower_bound (DKW)

def test_mean_lower_bound_of_equal_draws_takes_the_dkw_mass_from_them():
    lam = math.sqrt(math.log(1 / 0.05) / (2 * 400))
    assert stats.mean_lower_bound(np.full(400, 2.5e-5), 0.05) == pytest.approx(
        (1 - lam) * 2.5e-5, rel=1e-12)
    # mass λ comes off the largest draws first: 1 draw of 10 and 99 of 1, λ = 0.083 > 1/100
    # takes the 10 down to 1 and λ − 1/100 more off the ones: 1 − λ
    lam = math.sqrt(math.log(1 / 0.25) / 200)
    got = stats.mean_lower_bound(np.r_[10.0, np.ones(99)], 0.25)
    assert got == pytest.approx(1 - lam, rel=1e-12)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1e3, allow_nan=False), min_size=1, max_size=50),
       st.floats(1e-6, 0.5))
def test_mean_lower_bound_lies_between_zero_and_the_empirical_mean(xs, alpha):
    lo = stats.mean_lower_bound(xs, alpha)
    assert 0.0 <= lo <= np.mean(xs) * (1 + 1e-12) + 1e-300
    assert stats.mean_lower_bound(xs, min(0.5, 2 * alpha)) >= lo - 1e-12 * max(xs)


def test_mean_lower_bound_covers_the_mean_at_its_level():
    # X = 1e-5 with probability 0.9, else 0 (a run that reads the changed entry or not):
    # 400 bounds at alpha = 0.05 from 300 draws each; misses ~ Binomial(400, <= 0.05), and
    # the assertion fails with probability < 1e-6 if the bound holds at its level
    rng = np.random.default_rng(11)
    draws = 1e-5 * (rng.random((400, 300)) < 0.9)
    bounds = np.array([stats.mean_lower_bound(x, 0.05) for x in draws])
    assert (bounds > 0.9e-5).sum() <= binom.isf(1e-6, 400, 0.05)
    assert bounds.mean() > 0.8e-5      # and not vacuous: λ = 0.07 of the mass 0.9 taken off


@pytest.mark.parametrize("xs, alpha", [([], 0.05), ([-1.0, 2.0], 0.05), ([np.inf], 0.05),
                                       ([1.0], 0.0), ([1.0], 0.6)])
def test_mean_lower_bound_refuses_bad_input(xs, alpha):
    with pytest.raises(ValueError, match="values|alpha"):
        stats.mean_lower_bound(xs, alpha)


# ---------------------------------------------------------------- betting_bounds

@pytest.mark.statistical
@pytest.mark.parametrize("law", ["bernoulli", "rare-small"])
def test_betting_bounds_cover_the_mean_at_their_level(law):
    """400 samples of 500 draws, each bound at α = 0.05: a side's misses ~ Binomial(400, ≤ 0.05)
    if the bound holds at its level; each assertion fails with probability < 1e-6 then."""
    rng = np.random.default_rng(7)
    if law == "bernoulli":           # p = 0.3 on [0, 1]
        draws, mean, high = (rng.random((400, 500)) < 0.3).astype(float), 0.3, 1.0
    else:                            # 0.02 w.p. 0.01, else 0, on [0, 2] (an importance weight)
        draws, mean, high = 0.02 * (rng.random((400, 500)) < 0.01), 2e-4, 2.0
    b = np.array([stats.betting_bounds(x, 0.0, high, 0.05) for x in draws])
    assert (b[:, 0] > mean).sum() <= binom.isf(1e-6, 400, 0.05)
    assert (b[:, 1] < mean).sum() <= binom.isf(1e-6, 400, 0.05)
    assert np.all(b[:, 0] <= draws.mean(axis=1) + 1e-12)
    assert np.all(draws.mean(axis=1) <= b[:, 1] + 1e-12)


def test_betting_bounds_follow_the_variance_not_the_range():
    """Draws that are 0 or small on a range of 2: the upper bound sits far inside a range-only
    (Hoeffding) bound and inside the empirical Bernstein bound of Maurer and Pontil (2009,
    Thm. 4), computed here from its formula."""
    x = 0.01 * (np.random.default_rng(3).random(10**5) < 0.02)
    lo, hi = stats.betting_bounds(x, 0.0, 2.0, 0.025)
    n, log = x.size, math.log(2 / 0.025)
    hoeffding = 2.0 * math.sqrt(math.log(1 / 0.025) / (2 * n))
    bernstein = math.sqrt(2 * x.var(ddof=1) * log / n) + 7 * 2.0 * log / (3 * (n - 1))
    assert hi - x.mean() < bernstein < hoeffding
    assert 0 <= lo < x.mean() < hi


def test_betting_bounds_of_constant_draws_and_bad_input():
    lo, hi = stats.betting_bounds(np.full(50, 0.25), 0.0, 1.0, 0.05)
    assert lo < 0.25 < hi and hi - lo < 0.5
    assert stats.betting_bounds([1.0], 0.0, 1.0, 0.05) == (pytest.approx(0.0, abs=1e-9), 1.0)
    for args in (([], 0, 1, 0.05), ([2.0], 0, 1, 0.05), ([0.5], 1, 1, 0.05),
                 ([0.5], 0, 1, 0.0), ([np.nan], 0, 1, 0.05)):
        with pytest.raises(ValueError):
            stats.betting_bounds(*args)


def test_betting_bounds_of_a_mean_below_the_search_floor():
    """Draws whose mean is below ~1e-311 (subnormal: a far-tail event's weighted terms): the lower bound is
    0 (it cannot be resolved) and the upper bound still covers the mean, without a division by
    zero in the search."""
    lo, hi = stats.betting_bounds(np.full(1000, 1e-315), 0.0, 1.0, 0.05)
    assert lo == 0.0 and 1e-315 <= hi <= 1.0
