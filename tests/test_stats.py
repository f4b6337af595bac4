"""Clopper–Pearson bounds and the privacy-loss bound built on them."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.stats import (cp_lower, cp_upper, detectable_eps, eps_lower_bound,
                           log_ratio_interval)


@pytest.mark.parametrize("k,n,want", [   # one-sided 95 % upper bounds, digest 004 §6.5
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
