"""Known mechanisms: samplers against exact distributions, exact privacy losses, input checks.

Statistical tests are seeded. Each compares counts of n = 10⁶ samples with exact binomial tails
(scipy.stats.binom) at a Bonferroni-split level: its false-failure probability is stated in its
docstring and is ≤ 1e-7 per test function (all parametrisations together).
"""
import math
import pickle

import mpmath
import numpy as np
import pytest
from scipy import optimize, stats

from dpaudit.calibrate.mechanisms import (FAMILIES, KnownMechanism, RNM_PAIRS,
                                          analytic_gaussian_sigma, exact_cdf, exact_probabilities,
                                          gaussian_delta, gaussian_eps, known_mechanism,
                                          output_support, rnm_candidate_losses, rnm_probabilities)
from dpaudit.errors import InputError

N = 1_000_000
DISCRETE = ("randomised-response", "geometric", "rnm-laplace", "rnm-exponential")
PURE_TIGHT = ("laplace", "randomised-response", "geometric", "rnm-exponential")
CASES = [(f, e, c) for f in FAMILIES for e, c in ((1.0, 1.0), (0.5, 0.5))]


def _binom_ok(k, n, p, alpha):
    """Exact two-sided binomial check at level alpha: false rejection probability ≤ alpha."""
    k, p = np.asarray(k), np.asarray(p)
    return (stats.binom.cdf(k, n, p) > alpha / 2) & (stats.binom.sf(k - 1, n, p) > alpha / 2)


# ----------------------------------------------------------------------------- samplers

@pytest.mark.statistical
@pytest.mark.parametrize("family", DISCRETE)
@pytest.mark.parametrize("eps,factor", [(1.0, 1.0), (0.5, 0.5)])
def test_discrete_frequencies_match_exact_probabilities(family, eps, factor):
    """Counts of every output with mass ≥ 1e-6 (and of the rest lumped) on d and d′ lie within
    exact binomial tails at level 1e-8/(2·cells) per cell: false failure ≤ 1e-8 per case, 8
    cases, ≤ 1e-7 in all. An error of 0.004 in any cell's probability is caught."""
    km = known_mechanism(family, eps, factor)
    support = output_support(km)
    for seed, data, p in zip((11, 12), (km.d, km.d_prime), exact_probabilities(km)):
        out = km.mechanism(np.random.default_rng(seed), data, N)
        assert out.shape == (N,) and out.dtype == np.int64
        main = p >= 1e-6
        counts = np.array([np.count_nonzero(out == v) for v in support[main]])
        rest = N - counts.sum()
        k = np.append(counts, rest)
        q = np.append(p[main], max(0.0, 1.0 - p[main].sum()))
        assert np.all(_binom_ok(k, N, q, 1e-8 / (2 * len(k)))), (family, k, N * q)


@pytest.mark.statistical
@pytest.mark.parametrize("family", ("laplace", "gaussian"))
@pytest.mark.parametrize("eps,factor", [(1.0, 1.0), (0.5, 0.5)])
def test_continuous_empirical_cdf_matches(family, eps, factor):
    """#{x ≤ t} at 7 points per side ~ Binomial(n, F(t)); level 1e-8/14 each: false failure
    ≤ 1e-8 per case, ≤ 4e-8 in all. A 3 % error in the noise scale is caught."""
    km = known_mechanism(family, eps, factor)
    s = km.noise_scale
    for seed, data, side in ((21, km.d, 0), (22, km.d_prime, 1)):
        out = km.mechanism(np.random.default_rng(seed), data, N)
        assert out.shape == (N,) and out.dtype == np.float64
        t = float(data[0]) + s * np.array([-2.5, -1.0, -0.3, 0.0, 0.3, 1.0, 2.5])
        k = np.array([np.count_nonzero(out <= x) for x in t])
        assert np.all(_binom_ok(k, N, exact_cdf(km, t)[side], 1e-8 / 14)), (family, k)


@pytest.mark.statistical
def test_geometric_sampler_shape_of_distribution():
    """Exact check of the parametrisation without the module's own probabilities:
    P(Z=0) = tanh(ε/2) and P(Z=k)/P(Z=k+1) = e^ε. Counts of Z ∈ {−2..2} at level 1e-8/5 each
    (false failure ≤ 1e-8)."""
    eps = 0.7
    km = known_mechanism("geometric", eps)
    z = km.mechanism(np.random.default_rng(5), km.d, N)
    ks = np.arange(-2, 3)
    p = math.tanh(eps / 2) * np.exp(-eps * np.abs(ks))
    k = np.array([np.count_nonzero(z == v) for v in ks])
    assert np.all(_binom_ok(k, N, p, 1e-8 / 5)), k


@pytest.mark.parametrize("family", FAMILIES)
def test_samplers_vectorised_deterministic_and_private_to_the_generator(family):
    km = known_mechanism(family, 1.0)
    state = np.random.get_state()[1].copy()
    big = km.mechanism(np.random.default_rng(3), km.d, 2 ** 20)
    assert big.shape == (2 ** 20,)
    assert big.dtype == (np.float64 if family in ("laplace", "gaussian") else np.int64)
    a = km.mechanism(np.random.default_rng(4), km.d_prime, 1000)
    b = km.mechanism(np.random.default_rng(4), km.d_prime, 1000)
    c = km.mechanism(np.random.default_rng(5), km.d_prime, 1000)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.array_equal(np.random.get_state()[1], state)      # global state untouched
    assert km.mechanism(np.random.default_rng(0), km.d, 0).shape == (0,)


@pytest.mark.parametrize("family", FAMILIES)
def test_mechanisms_pickle(family):
    km = known_mechanism(family, 0.8, 0.9)
    again = pickle.loads(pickle.dumps(km.mechanism))
    x = km.mechanism(np.random.default_rng(9), km.d, 500)
    assert np.array_equal(x, again(np.random.default_rng(9), km.d, 500))
    km2 = pickle.loads(pickle.dumps(km))
    assert km2.true_eps == km.true_eps and np.array_equal(km2.d_prime, km.d_prime)


# ----------------------------------------------------------------------------- exact losses

@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0])
def test_correct_mechanisms_meet_their_claim(family, eps):
    km = known_mechanism(family, eps)
    assert km.correct and km.true_eps <= eps + 1e-9
    assert km.factor == 1.0 and km.name == family
    if family in PURE_TIGHT or family == "gaussian":
        assert km.true_eps == pytest.approx(eps, rel=1e-9)      # tight
    else:   # rnm-laplace: just below the claim, closer for larger ε (module docstring table)
        assert 0.9 * eps < km.true_eps < eps
    assert km.delta == (1e-5 if family == "gaussian" else 0.0)


@pytest.mark.parametrize("eps,ratio", [(0.1, 0.92587), (0.5, 0.98988), (1.0, 0.99907)])
def test_rnm_laplace_documented_ratios(eps, ratio):
    assert known_mechanism("rnm-laplace", eps).true_eps / eps == pytest.approx(ratio, abs=5e-6)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_mutants_lose_more_as_noise_shrinks(family, eps):
    factors = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5]
    kms = [known_mechanism(family, eps, f) for f in factors]
    losses = [k.true_eps for k in kms]
    assert all(b > a for a, b in zip(losses, losses[1:]))
    assert all(not k.correct for k in kms[1:])
    assert kms[2].name == f"{family} x0.8"
    if family in PURE_TIGHT:
        for f, loss in zip(factors, losses):
            assert loss == pytest.approx(eps / f, rel=1e-9)


def test_discrete_distributions_are_probability_vectors_with_the_stated_loss():
    for family in DISCRETE:
        for eps, factor in ((0.3, 1.0), (1.0, 0.8), (3.0, 1.0), (60.0, 1.0)):
            km = known_mechanism(family, eps, factor)
            p, pp = exact_probabilities(km)
            assert p.shape == pp.shape == output_support(km).shape
            assert p.sum() == pytest.approx(1, abs=1e-12) and pp.sum() == pytest.approx(1, abs=1e-12)
            assert np.all(p > 0) and np.all(pp > 0)
            loss = np.max(np.abs(np.log(p) - np.log(pp)))
            assert loss == pytest.approx(km.true_eps, rel=1e-10)
    g = known_mechanism("geometric", 0.5)
    p, _ = exact_probabilities(g)
    assert p[0] < 1e-15 * math.exp(0.5) and p[-1] < 1e-15        # truncated at mass 1e-15


def test_rnm_probabilities_against_closed_forms():
    # K = 2: P(q0 + Z0 > q1 + Z1) = 1 − e^{−g/b}(2 + g/b)/4 (Laplace; difference of two Laplaces)
    #                             = 1 − e^{−g/b}/2            (exponential)
    for b in (0.5, 1.0, 3.0):
        for g in (0.0, 1.0, 2.5):
            lap = rnm_probabilities([g, 0.0], b, "laplace")
            ex = rnm_probabilities([g, 0.0], b, "exponential")
            assert lap[0] == pytest.approx(1 - math.exp(-g / b) * (2 + g / b) / 4, rel=1e-12)
            assert ex[0] == pytest.approx(1 - math.exp(-g / b) / 2, rel=1e-12)
            assert lap.sum() == pytest.approx(1, abs=1e-13) and ex.sum() == pytest.approx(1, abs=1e-13)
    # exchangeable arms: 1/K each
    assert np.allclose(rnm_probabilities([0, 0, 0, 0], 1.0, "laplace"), 0.25, rtol=1e-12)
    # memorylessness on the chosen exponential pair: P_d(2) = e^{−ε} P_d′(2) exactly
    for eps in (0.3, 1.0, 2.0):
        d, dp = RNM_PAIRS["rnm-exponential"]
        p, pp = (rnm_probabilities(x, 1 / eps, "exponential") for x in (d, dp))
        assert p[2] == pytest.approx(math.exp(-eps) * pp[2], rel=1e-12)


@pytest.mark.parametrize("family", ("rnm-laplace", "rnm-exponential"))
def test_rnm_pairs_are_monotone_neighbours_and_maximise_the_loss(family):
    d, dp = (np.array(x) for x in RNM_PAIRS[family])
    assert set((dp - d).tolist()) == {0, 1}
    for eps in (0.25, 1.0, 3.0):
        table = rnm_candidate_losses(family, eps)
        assert len(table) == 96
        best = table[0][0]
        assert best <= eps * (1 + 1e-12)            # the scale 1/ε is ε-DP on every candidate
        km = known_mechanism(family, eps)
        assert km.true_eps >= best - 1e-12 * eps
        assert np.array_equal(km.d, d) and np.array_equal(km.d_prime, dp)


# ----------------------------------------------------------------------------- Gaussian

def _mp_delta(sigma, eps):
    mpmath.mp.dps = 60
    s, e = mpmath.mpf(sigma), mpmath.mpf(eps)
    return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s)


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-8])
@pytest.mark.parametrize("eps", [0.01, 0.05, 0.3, 1.0, 2.0, 5.0])
def test_analytic_gaussian_sigma_solves_the_delta_equation(eps, delta):
    sigma = analytic_gaussian_sigma(eps, delta)
    exact = _mp_delta(sigma, eps)                               # 60-digit reference
    assert abs(float(exact / delta) - 1) < 1e-12
    assert abs(gaussian_delta(sigma, eps) / float(exact) - 1) < 1e-12
    # strictly better than the classical calibration where that applies (ε < 1)
    if eps < 1:
        assert sigma < math.sqrt(2 * math.log(1.25 / delta)) / eps
    # true_eps of a mutant solves the same equation at its own σ
    km = known_mechanism("gaussian", eps, 0.7, delta)
    assert km.noise_scale == pytest.approx(0.7 * sigma, rel=1e-15)
    assert abs(float(_mp_delta(km.noise_scale, km.true_eps) / delta) - 1) < 1e-9


@pytest.mark.parametrize("factor", [1.0, 0.8, 0.5])
def test_gaussian_true_eps_is_the_sup_over_events(factor):
    """Independent of the δ(ε) formula: by Neyman–Pearson the worst events are half-lines, so
    sup_t ln((P(N(1,σ²) > t) − δ)/P(N(0,σ²) > t)) must equal true_eps."""
    eps, delta = 1.0, 1e-5
    km = known_mechanism("gaussian", eps, factor, delta)
    s = km.noise_scale

    def loss(t):                        # −inf where P(S) ≤ δ (the event is useless there)
        num = stats.norm.sf((np.asarray(t) - 1) / s) - delta
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(num > 0, np.log(num) - stats.norm.logsf(np.asarray(t) / s), -np.inf)

    grid = np.linspace(0.0, 1 + s * stats.norm.isf(delta), 20_001)
    t0 = grid[np.argmax(loss(grid))]
    step = grid[1] - grid[0]
    res = optimize.minimize_scalar(lambda t: -float(loss(t)), bounds=(t0 - step, t0 + step),
                                   method="bounded", options={"xatol": 1e-10})
    assert -res.fun == pytest.approx(km.true_eps, rel=1e-8)
    assert -res.fun <= km.true_eps * (1 + 1e-12)
    assert gaussian_eps(s, delta) == km.true_eps


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("kwargs,needle", [
    (dict(family="lapalce", eps=1.0), "'lapalce'"),
    (dict(family="laplace", eps=0.0), "eps=0.0"),
    (dict(family="laplace", eps=-1.0), "eps=-1.0"),
    (dict(family="geometric", eps=math.inf), "eps=inf"),
    (dict(family="rnm-laplace", eps=math.nan), "eps=nan"),
    (dict(family="laplace", eps=1.0, factor=0.0), "factor=0.0"),
    (dict(family="randomised-response", eps=1.0, factor=-0.5), "factor=-0.5"),
    (dict(family="gaussian", eps=1.0, delta=0.0), "delta=0.0"),
    (dict(family="gaussian", eps=1.0, delta=1.0), "delta=1.0"),
    (dict(family="gaussian", eps=1.0, delta=math.nan), "delta=nan"),
])
def test_bad_input_raises_one_line_input_error(kwargs, needle):
    with pytest.raises(InputError) as err:
        known_mechanism(**kwargs)
    msg = str(err.value)
    assert needle in msg and "\n" not in msg


def test_exact_helpers_reject_the_wrong_kind_of_family():
    with pytest.raises(InputError):
        exact_probabilities(known_mechanism("laplace", 1.0))
    with pytest.raises(InputError):
        exact_cdf(known_mechanism("geometric", 1.0), 0.0)


def test_correct_property_uses_the_tolerance():
    km = known_mechanism("laplace", 1.0)
    fields = {f: getattr(km, f) for f in KnownMechanism.__dataclass_fields__}
    assert KnownMechanism(**{**fields, "true_eps": 1.0 + 5e-10}).correct
    assert not KnownMechanism(**{**fields, "true_eps": 1.0 + 5e-9}).correct
