"""Importance sampling of one release (dpaudit/statistics/tilted.py) against closed forms.

The exact privacy profile of one release is computed here with SciPy from its closed form
(Gaussian: Balle and Wang 2018, arXiv:1805.06530, Thm. 8; Laplace: the tail event beyond the
larger mean), independently of the module. Seeded; each statistical assertion states its
false-failure probability.
"""
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import laplace, norm

from dpaudit.errors import InputError
from dpaudit.statistics.stats import eps_lower_bound
from dpaudit.statistics.tilted import Tilt, delta_bounds

DELTA = 1e-5
SIGMA = math.sqrt(2 * math.log(1.25 / DELTA))    # classical calibration at ε = 1, Δ = 1


def gaussian_delta(eps, sigma=SIGMA):
    """δ(ε) of N(1, σ²) against N(0, σ²)."""
    mu = 1 / sigma
    return norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu)


EPS_EXACT = brentq(lambda e: gaussian_delta(e) - DELTA, 0, 5)   # ≈ 0.751


def weighted_terms(tilt, n, seed, v=1.0, v_prime=0.0):
    """(y, weights) of n runs on the tilt's base table."""
    vv, vp = np.full(n, v), np.full(n, v_prime)
    y = tilt.draw(np.random.default_rng(seed), vv, vp)
    return y, tilt.weight(y, vv, vp)


def tilts(family, scale, eps, rho=0.9, rho_prime=0.3):
    return (Tilt(family, scale, eps, rho, "numerator"),
            Tilt(family, scale, eps, rho_prime, "denominator"))


@pytest.mark.statistical
@pytest.mark.parametrize("family", ["gaussian", "laplace"])
@pytest.mark.parametrize("base", ["numerator", "denominator"])
def test_the_weights_are_likelihood_ratios(family, base):
    """E_r[w] = 1 and E_r[w·1(y > c)] = P(Y > c) under the base table's law: each within 6
    standard errors (false failure < 2e-9 each, normal approximation of a mean of 4e5 bounded
    terms)."""
    t = Tilt(family, 2.0, 0.5, 0.3, base)
    y, w = weighted_terms(t, 400_000, 5)
    assert w.max() <= t.max_weight
    dist = norm if family == "gaussian" else laplace
    centre = 1.0 if base == "numerator" else 0.0
    for x, want in ((w, 1.0), (w * (y > 4.0), dist.sf(4.0, centre, 2.0))):
        assert abs(x.mean() - want) < 6 * x.std() / math.sqrt(x.size)


def gaussian_event(c, n, seed, alpha, eps=0.5):
    t, tp = tilts("gaussian", SIGMA, EPS_EXACT)
    y, w = weighted_terms(t, n, seed)
    yp, wp = weighted_terms(tp, n, seed + 100)
    return delta_bounds(w * (y > c), wp * (yp > c), eps, DELTA, (t.max_weight, tp.max_weight),
                        alpha)


@pytest.mark.statistical
def test_the_bounds_cover_the_exact_gaussian_delta_and_eps():
    """The classically calibrated Gaussian at δ = 1e-5, on the tail event where the loss exceeds
    the exact ε(δ): at α = 1e-7 the bounds on δ_E(ε), P(E), P′(E) and on the event's δ-loss lie
    on the right side of the exact values (each fails with probability ≤ 1e-7 if the bounds
    hold at their level)."""
    c = 0.5 + EPS_EXACT * SIGMA ** 2                 # the loss reaches EPS_EXACT here
    b = gaussian_event(c, 100_000, 1, 1e-7)
    p, q = norm.sf(c, 1, SIGMA), norm.sf(c, 0, SIGMA)
    assert b.delta_lower <= p - math.exp(0.5) * q
    assert b.p_lower <= p and b.p_prime_upper >= q
    assert b.eps_lower <= EPS_EXACT
    assert abs(b.p_estimate / p - 1) < 0.05 and abs(b.p_prime_estimate / q - 1) < 0.05


def test_tilted_runs_resolve_a_small_delta_that_counting_does_not():
    """At δ = 1e-5, on the event y > 15 (mass 5e-4 on d): 10⁵ tilted runs per side bound its
    δ-loss at 0.7 of the exact ε(δ) or more; counting 10⁵ runs per side (Clopper–Pearson) gets
    0.41. Seeded, deterministic; the event is fixed in advance."""
    tilted = gaussian_event(15.0, 100_000, 1, 0.05, EPS_EXACT).eps_lower
    rng = np.random.default_rng(2)
    hits = [(rng.normal(m, SIGMA, 100_000) > 15.0).sum() for m in (1.0, 0.0)]
    counted = float(eps_lower_bound(hits[0], 100_000, hits[1], 100_000, 0.05, DELTA))
    assert counted < 0.5 * EPS_EXACT < 0.7 * EPS_EXACT < tilted <= EPS_EXACT


@pytest.mark.statistical
def test_the_bounds_cover_a_laplace_release_exactly_at_its_loss():
    """Laplace(1, b) against Laplace(0, b): on y > 1 the loss is exactly 1/b, so δ_E(1/b) = 0
    and the δ-loss at δ = 0 is 1/b; the bounds lie below (α = 1e-7: false failure ≤ 1e-7), and
    5·10⁴ runs per side bring the δ-loss bound within 20 % of it (seeded)."""
    t, tp = tilts("laplace", 2.0, 0.5)
    y, w = weighted_terms(t, 50_000, 2)
    yp, wp = weighted_terms(tp, 50_000, 3)
    got = delta_bounds(w * (y > 1), wp * (yp > 1), 0.5, 0.0, (t.max_weight, tp.max_weight), 1e-7)
    assert got.delta_lower == 0.0 and 0.8 * 0.5 < got.eps_lower <= 0.5


def test_tilt_and_bounds_refuse_bad_input():
    for kw in (dict(family="cauchy"), dict(scale=0.0), dict(eps=-1.0), dict(rho=1.0),
               dict(base="both"), dict(offset=math.inf)):
        with pytest.raises(InputError):
            Tilt(**{**dict(family="gaussian", scale=1.0, eps=1.0), **kw})
    with pytest.raises(ValueError):
        delta_bounds(np.ones(3), np.ones(0), 1.0, 0.0, (2.0, 2.0), 0.05)
    with pytest.raises(ValueError):                 # a term above its side's high
        delta_bounds(np.ones(3), np.full(3, 5.0), 1.0, 0.0, (2.0, 2.0), 0.05)
