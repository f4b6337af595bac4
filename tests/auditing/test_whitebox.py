"""White-box privacy loss and gray-box replay (dpaudit.auditing.whitebox).

Every test is deterministic given its seeds (the white-box loss needs no statistics: a run's
loss is an exact function of its release log). The one statistical assertion (the Gaussian
mechanism's mean loss, the KL divergence) has a margin of 6 standard deviations: false-failure
probability < 1e-8.
"""
import math
from types import SimpleNamespace

import mpmath
import numba as nb
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_mechanism as plm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit.algorithms import registry
from dpaudit.algorithms.spec import AlgorithmSpec, Param, Prepared
from dpaudit.auditing import whitebox as wb
from dpaudit.core.request import Claim
from dpaudit.data import neighbours
from dpaudit.data.tables import NeighbourPair, constant_table
from dpaudit.reporting.report import summary
from dpaudit.reporting.text import accountant_text as summary_accountant
from dpaudit.reporting.text import release_log_text as summary_release_log
from dpaudit.simulation.simulate import GAUSSIAN, LAPLACE, RANDOMISED_RESPONSE, STOPPED, TRUNCATED

SETTINGS = settings(derandomize=True, max_examples=300, deadline=None)
# moderate ranges: scipy's logpdf loses accuracy (and returns -inf) once the density
# underflows, |y - v|/b >~ 700; the closed forms are checked on the wide range
moderate = st.floats(-3, 3, allow_nan=False)
finite = st.floats(-50, 50, allow_nan=False)
unit = st.floats(0, 1, allow_nan=False)
scales = st.floats(0.1, 20, allow_nan=False)


# ---------------------------------------------------------------- log-density ratios

@SETTINGS
@given(y=moderate, v=moderate, vp=moderate, b=scales)
def test_laplace_log_ratio_matches_scipy(y, v, vp, b):
    want = stats.laplace.logpdf(y, loc=v, scale=b) - stats.laplace.logpdf(y, loc=vp, scale=b)
    assert wb.log_density_ratio(LAPLACE, y, v, vp, b) == pytest.approx(want, rel=1e-9, abs=1e-9)
    assert wb.log_density(LAPLACE, y, v, b) == pytest.approx(
        stats.laplace.logpdf(y, loc=v, scale=b), rel=1e-9, abs=1e-9)


@SETTINGS
@given(y=moderate, v=moderate, vp=moderate, scale=scales)
def test_laplace_and_gaussian_log_ratios_are_dp_accountings_privacy_loss(y, v, vp, scale):
    # dp-accounting's privacy loss at x (REMOVE adjacency, its default) is ln f(x + Δ) - ln f(x)
    # for noise density f: the release's loss ln f(y - v) - ln f(y - v') is that at x = y - v'
    # when v' = v + Δ, and (f symmetric) at x = v' - y when v' = v - Δ
    if v == vp:
        return
    x = y - vp if vp > v else vp - y
    for dist, loss in ((LAPLACE, plm.LaplacePrivacyLoss), (GAUSSIAN, plm.GaussianPrivacyLoss)):
        want = loss(scale, sensitivity=abs(vp - v)).privacy_loss(x)
        got = wb.log_density_ratio(dist, y, v, vp, scale)
        assert got == pytest.approx(want, rel=1e-9, abs=1e-9)


@SETTINGS
@given(y=moderate, v=moderate, vp=moderate, sd=scales)
def test_gaussian_log_ratio_matches_scipy(y, v, vp, sd):
    want = stats.norm.logpdf(y, loc=v, scale=sd) - stats.norm.logpdf(y, loc=vp, scale=sd)
    got = wb.log_density_ratio(GAUSSIAN, y, v, vp, sd)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-9)
    assert wb.log_density(GAUSSIAN, y, v, sd) == pytest.approx(
        stats.norm.logpdf(y, loc=v, scale=sd), rel=1e-9, abs=1e-9)


@SETTINGS
@given(y=finite, v=finite, vp=finite, s=st.floats(0.001, 20, allow_nan=False))
def test_closed_forms_on_wide_ranges(y, v, vp, s):
    assert wb.log_density_ratio(LAPLACE, y, v, vp, s) == pytest.approx(
        (abs(y - vp) - abs(y - v)) / s, rel=1e-12, abs=1e-12)
    assert wb.log_density_ratio(GAUSSIAN, y, v, vp, s) == pytest.approx(
        ((y - vp) ** 2 - (y - v) ** 2) / (2 * s * s), rel=1e-9, abs=1e-9)
    assert wb.log_density(LAPLACE, y, v, s) == pytest.approx(
        -math.log(2 * s) - abs(y - v) / s, rel=1e-12, abs=1e-12)


@SETTINGS
@given(y=st.sampled_from([0.0, 1.0]), v=unit, vp=unit, s=st.floats(0.001, 30))
def test_randomised_response_log_ratio_matches_closed_form(y, v, vp, s):
    def logpmf(x):   # ln P(y | x), P(y = 1 | x) = (1 + x(e^s − 1))/(1 + e^s), in 50 digits
        with mpmath.workdps(50):    # (scipy's bernoulli.logpmf loses 4e-8 at s = 21: 1 − p)
            e = mpmath.exp(mpmath.mpf(s))
            p = (1 + mpmath.mpf(x) * (e - 1)) / (1 + e)
            return float(mpmath.log(p if y == 1 else 1 - p))
    want = logpmf(v) - logpmf(vp)
    got = wb.log_density_ratio(RANDOMISED_RESPONSE, y, v, vp, s)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-9)
    assert abs(got) <= s * (1 + 1e-12)             # ε-DP with ε = s
    assert wb.log_density(RANDOMISED_RESPONSE, y, v, s) == pytest.approx(
        logpmf(v), rel=1e-9, abs=1e-12)


def test_log_ratio_edge_cases_and_errors():
    eps = 0.7
    # randomised response attains exactly ±s at the extreme values
    assert wb.log_density_ratio(RANDOMISED_RESPONSE, 0, 0.0, 1.0, eps) == pytest.approx(eps)
    assert wb.log_density_ratio(RANDOMISED_RESPONSE, 1, 0.0, 1.0, eps) == pytest.approx(-eps)
    # equal values give exactly 0 (no rounding residue from the closed forms)
    y = np.linspace(-3, 3, 101)
    for dist in (LAPLACE, GAUSSIAN):
        assert (wb.log_density_ratio(dist, y, 0.3, 0.3, 1 / eps) == 0).all()
    # broadcasting and different scales on the two sides
    got = wb.log_density_ratio(LAPLACE, y, 0.0, 1.0, 2.0, prime=(LAPLACE, 1.0))
    want = stats.laplace.logpdf(y, 0, 2) - stats.laplace.logpdf(y, 1, 1)
    assert got.shape == y.shape and np.allclose(got, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="dist=7"):
        wb.log_density_ratio(7, 0.0, 0.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        wb.log_density_ratio(RANDOMISED_RESPONSE, 0.5, 0.0, 1.0, 1.0)   # non-binary output
    with pytest.raises(ValueError):
        wb.log_density(LAPLACE, 0.0, 0.0, 0.0)


# ------------------------------------------------- single-release mechanisms, end to end

@nb.njit
def mechanism_kernel(rng, table, means, theta, aux, limit, actions, releases, frozen):
    """One release of x = table[0, 0] (theta = (ε, family, scale, honour frozen 0/1)):
    Laplace(scale), Gaussian(sd = scale) or randomised response (s = scale). The action is
    the released value's sign (a post-processing)."""
    x = table[0, 0]
    dist = theta[1]
    if dist == 2.0:
        u = rng.random()
        y = 1.0 if u < (1.0 + x * math.expm1(theta[2])) / (1.0 + math.exp(theta[2])) else 0.0
    elif dist == 1.0:
        y = x + rng.normal(0.0, theta[2])
    else:
        y = x + rng.laplace(0.0, theta[2])
    if frozen.shape[0] > 0 and theta[3] == 1.0:
        y = frozen[0]
    if releases.shape[0] > 0:
        r = releases[0]
        r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7] = 1, 0, 1, 1, x, y, theta[2], dist
    if actions.shape[0] > 0:
        actions[0] = 1 if y > 0.5 else 0
    return 1, -1, STOPPED, 1


def mechanism(dist, scale, honour=True):
    spec = AlgorithmSpec(
        name=f"mech-{dist}", title="one release", paper="test", model="user", private=True,
        kernel=mechanism_kernel, params=(Param("means", (0.5, 0.5), "floats", "K"),),
        prepare=lambda eps, p: Prepared(np.array([eps, dist, scale, float(honour)]),
                                        np.zeros(0), np.asarray(p["means"])),
        structure=lambda p: [(0, "row 0")], audit_horizon=lambda p: 1)
    return spec, spec.prepare(1.0, spec.resolve_params({}))


ROW0 = NeighbourPair.change_row(constant_table(0.5, 1, 2), 0, 0.0, 1.0,
                                {"kind": "constant", "value": 0.5}, "row 0")


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_single_laplace_and_rr_release_reach_eps_exactly(eps):
    for dist, scale in ((LAPLACE, 1 / eps), (RANDOMISED_RESPONSE, eps)):
        spec, prep = mechanism(dist, scale)
        r = wb.whitebox(spec, prep, ROW0, Claim(eps), wb.Replay(2000, 1))
        assert r["releases_exceed_eps"] is False and r["runs_above_eps"] == 0
        # Laplace: loss = ε(|y−1| − |y|) = ε whenever y ≤ 0 (probability 1/2 per run);
        # randomised response: loss = ε when y = 0 under d (probability e^ε/(1+e^ε))
        assert r["max_loss"] == pytest.approx(eps, rel=1e-12)
        assert r["quantiles"]["max"] == r["max_loss"]
        assert r["replay"]["diverged_runs"] == 0
        w = r["worst_run"]["contributions"]
        assert len(w) == 1 and w[0]["loss"] == pytest.approx(eps, rel=1e-12)
        # under-scaled noise is caught deterministically (true loss 2ε)
        spec, prep = mechanism(dist, scale / 2 if dist == LAPLACE else 2 * scale)
        r = wb.whitebox(spec, prep, ROW0, Claim(eps), wb.Replay(2000, 1))
        assert r["releases_exceed_eps"] is True
        assert r["max_loss"] == pytest.approx(2 * eps, rel=1e-12)


def classical_gaussian(eps):
    """One Gaussian release calibrated by σ = √(2 ln(1.25/δ))·Δ/ε, Δ = 1, δ = 1e-5 (Dwork and
    Roth 2014, Thm. A.1, proved for ε < 1): (spec, prep, σ, its exact δ(ε)) (Balle and Wang
    2018, Thm. 8: 1.36e-5 at ε = 9, 1.6e-8 at ε = 0.5)."""
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5)) / eps
    mu = 1.0 / sigma
    exact = stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)
    return (*mechanism(GAUSSIAN, sigma), sigma, exact)


@pytest.mark.slow
@pytest.mark.parametrize("eps, refuted", [(0.5, False), (9.0, True)])
def test_the_accountant_proves_a_classically_calibrated_gaussian_release_not_private_at_eps_9(
        eps, refuted):
    spec, prep, sigma, exact = classical_gaussian(eps)
    a = wb.whitebox(spec, prep, ROW0, Claim(eps, 1e-5), wb.Replay(20, 1))["accountant"]
    (rel,) = a["releases"]
    assert rel["mechanism"] == "gaussian" and rel["sensitivity"] == 1.0
    assert rel["noise"] == pytest.approx(sigma, rel=1e-12)
    assert rel["delta_at_eps"]["lower"] <= exact <= rel["delta_at_eps"]["upper"]
    assert a["refuted"] is refuted and a["evidence"] == ("white-box proof" if refuted else None)
    assert a["composed"]["delta_at_eps"] == pytest.approx(exact, rel=1e-3)
    text = summary_accountant(a)
    assert ("white-box proof" in text) is refuted and f"delta({eps:g})" in text


@pytest.mark.parametrize("eps, refuted", [(0.5, False), (9.0, True)])
def test_the_release_log_of_a_classically_calibrated_gaussian_is_refuted_only_at_eps_9(
        eps, refuted):
    # every run reads the entry in its one release (σ, Δ = 1): the bound is the exact δ(ε)
    # with the DKW mass λ = √(ln(2/α)/(2n)) taken off, n = 2000 runs per direction
    spec, prep, _, exact = classical_gaussian(eps)
    r = wb.whitebox(spec, prep, ROW0, Claim(eps, 1e-5), wb.Replay(2000, 1))["release_log"]
    lam = math.sqrt(math.log(2 / 0.05) / 4000)
    assert r["runs"] == 4000 and r["runs_accounted"] == 4000
    assert r["delta_at_eps"]["lower"] == pytest.approx((1 - lam) * exact, rel=1e-6)
    assert r["delta_at_eps"]["estimate"] == pytest.approx(exact, rel=1e-6)
    prof = r["profile"]            # the same bound at 41 values of ε from 0 to 2ε
    assert len(prof["eps"]) == 41 and prof["eps"][20] == pytest.approx(eps)
    assert prof["delta_lower"][20] == pytest.approx(r["delta_at_eps"]["lower"], rel=1e-12)
    assert all(a >= b for a, b in zip(prof["delta_lower"], prof["delta_lower"][1:]))
    assert r["refuted"] is refuted and r["evidence"] == ("white-box accounting" if refuted
                                                         else None)
    text = summary_release_log(r)
    assert ("NOT (9, 1e-05)-DP" in text) is refuted and f"delta({eps:g}) >= " in text


@pytest.mark.parametrize("scale, refuted", [(1.0, False), (0.5, True)])
def test_the_release_log_of_a_laplace_release_is_refuted_under_pure_dp_only_when_underscaled(
        scale, refuted):
    spec, prep = mechanism(LAPLACE, scale)
    r = wb.whitebox(spec, prep, ROW0, Claim(1.0), wb.Replay(500, 2))["release_log"]
    assert r["refuted"] is refuted
    # Δ/b = 2: δ(1) = 1 − e^(−1/2) when under-scaled, 0 at b = Δ/ε
    assert r["delta_at_eps"]["estimate"] == pytest.approx(
        1 - math.exp(-0.5) if refuted else 0.0, rel=1e-8, abs=1e-12)    # Δ rounded down


def test_a_diverged_replay_gives_the_release_log_no_bound():
    spec, p, prep = setup("ttucb", 1.0)
    pair = neighbours.candidates(spec, p, 1)[0]
    w = wb.whitebox(spec, prep, pair, Claim(1.0), wb.Replay(20, 1))
    assert w["replay"]["diverged_runs"] > 0
    r = w["release_log"]
    assert r["refuted"] is False and "diverged" in r["reason"]
    assert summary_release_log(r).startswith("no bound")


def test_randomised_response_on_fractional_values_is_listed_as_not_accounted():
    pair = NeighbourPair.change_row(constant_table(0.5, 1, 2), 0, 0.25, 0.75,
                                    {"kind": "constant", "value": 0.5}, "row 0")
    spec, prep = mechanism(RANDOMISED_RESPONSE, 1.0)
    w = wb.whitebox(spec, prep, pair, Claim(1.0), wb.Replay(20, 1))
    assert w["accountant"] is None and w["worst_run"]["contributions"]
    exact = {"dist": RANDOMISED_RESPONSE, "scale": 1.0, "value_d": 0.0, "value_d_prime": 1.0}
    rr = wb.release_mechanism(exact)        # on 0 and 1: answers at random w.p. 2/(1 + e)
    assert rr.mechanism == "randomised-response" and rr.noise == pytest.approx(2 / (1 + math.e))


@pytest.mark.slow
def test_gaussian_release_loss_is_the_gaussian_plrv():
    # PLRV of N(0, σ²) vs N(1, σ²) at Δ = 1, σ = 1: under d it is N(1/2, 1); mean = KL = 1/2,
    # sd of the mean over 2·10^4 runs (both directions) ≈ 0.0071: margin 0.043 = 6 sd.
    spec, prep = mechanism(GAUSSIAN, 1.0)
    r = wb.whitebox(spec, prep, ROW0, Claim(1.0), wb.Replay(10_000, 2))
    for d in r["directions"].values():
        assert d["mean_loss"] == pytest.approx(0.5, abs=0.06)
    assert r["releases_exceed_eps"] is True   # unbounded loss: not pure DP
    assert r["replay"]["diverged_runs"] == 0


def test_kernel_ignoring_frozen_is_an_error(monkeypatch):
    spec, prep = mechanism(LAPLACE, 1.0, honour=False)
    with pytest.raises(RuntimeError, match="frozen"):
        wb.whitebox(spec, prep, ROW0, Claim(1.0), wb.Replay(5, 0))
    spec, prep = mechanism(LAPLACE, 1.0)
    monkeypatch.setattr(wb, "RELEASE_ROWS", 0)
    monkeypatch.setattr(wb, "MAX_RELEASE_ROWS", 0)        # the buffer may not grow
    with pytest.raises(RuntimeError, match="releases"):
        wb.whitebox(spec, prep, ROW0, Claim(1.0), wb.Replay(5, 0))


def test_release_buffer_grows_to_fit_a_run(monkeypatch):
    # a run with more releases than the initial buffer is simulated again with room for all
    # of them: the results are those of a large enough buffer, bit for bit
    spec, prep = mechanism(LAPLACE, 1.0)
    want = wb.whitebox(spec, prep, ROW0, Claim(1.0), wb.Replay(50, 3))
    monkeypatch.setattr(wb, "RELEASE_ROWS", 0)
    got = wb.whitebox(spec, prep, ROW0, Claim(1.0), wb.Replay(50, 3))
    for key in ("max_loss", "quantiles", "directions", "worst_run", "replay"):
        assert got[key] == want[key]
    assert want["max_loss"] > 0


# ------------------------------------------------------------------------- AdaP-TT

def setup(name, eps, **params):
    spec = registry.get(name)
    p = spec.resolve_params(params)
    return spec, p, spec.prepare(eps, p)


@pytest.fixture(scope="module")
def adap_tt_results():
    """White-box results of adap-tt on every candidate pair, ε ∈ {0.5, 1}, 2000 runs/side."""
    out = {}
    for eps in (0.5, 1.0):
        spec, p, prep = setup("adap-tt", eps)
        for i, pair in enumerate(neighbours.candidates(spec, p, 1)):
            out[eps, i] = (pair,
                           wb.whitebox(spec, prep, pair, Claim(eps), wb.Replay(2000, 100 + i)))
    return out


@pytest.mark.slow
def test_adap_tt_loss_never_exceeds_eps_and_reaches_it(adap_tt_results):
    # measured: max loss = ε (up to 4e-16) on every one of the 12 candidate pairs at ε = 0.5
    # and 1, at 2000 runs as at 10^4; the assertion needs it on one pair
    for eps in (0.5, 1.0):
        maxima = []
        for (e, i), (pair, r) in adap_tt_results.items():
            if e != eps:
                continue
            assert r["runs"] == 2000 and r["limit"] == 16 * pair.d.shape[0]
            assert r["releases_exceed_eps"] is False, (i, r["max_loss"])
            assert r["runs_above_eps"] == 0
            assert r["max_loss"] <= eps * (1 + 1e-9) + 1e-12
            for d in r["directions"].values():
                assert d["status"]["truncated"] + d["status"]["stopped"] == 2000
                assert d["releases_per_run"]["mean"] > 6      # K phase-1 releases and more
            maxima.append(r["max_loss"])
        assert max(maxima) >= eps * (1 - 1e-9)


@pytest.mark.slow
def test_adap_tt_row0_loss_is_the_phase1_laplace_release(adap_tt_results):
    # row 0 is read only by arm 0's phase-1 release (Ñ = 1, scale 1/ε, values 0 vs 1)
    for (eps, i), (pair, r) in adap_tt_results.items():
        if pair.row != 0:
            continue
        w = r["worst_run"]
        assert w["nonzero_contributions"] == 1
        (c,) = w["contributions"]
        assert (c["t"], c["arm"], c["phase"], c["count"]) == (6, 0, 1, 1)
        assert (c["value_d"], c["value_d_prime"], c["scale"]) == (0.0, 1.0, 1 / eps)
        sign = 1 if w["direction"] == "d->d'" else -1
        y = c["noisy"]
        assert c["loss"] == pytest.approx(sign * eps * (abs(y - 1) - abs(y)), abs=1e-12)


@pytest.mark.slow
def test_adap_tt_replay_never_diverges(adap_tt_results):
    for (eps, i), (pair, r) in adap_tt_results.items():
        assert r["replay"] == {"diverged_runs": 0, "first_divergent_step": None,
                               "example": None}, (eps, i)


def test_no_forgetting_mutant_exceeds_eps():
    eps = 0.5
    spec, p, prep = setup("adap-tt-no-forgetting", eps)
    found = []
    for pair in neighbours.candidates(spec, p, 1):
        r = wb.whitebox(spec, prep, pair, Claim(eps), wb.Replay(2000, 3))
        if r["releases_exceed_eps"] is True:
            found.append(r)
            break
    assert found, "no candidate pair exceeds eps"
    r = found[0]
    assert r["max_loss"] > 2 * eps          # measured 2.25 at ε = 0.5 (row 0, tied-high)
    # the changed row re-enters several later releases of the same arm
    w = r["worst_run"]
    assert w["nonzero_contributions"] >= 3
    assert len({c["arm"] for c in w["contributions"]}) == 1
    assert r["replay"]["diverged_runs"] == 0   # its decisions still read only releases


def test_raw_leader_mutant_diverges_in_replay():
    eps = 0.5
    spec, p, prep = setup("adap-tt-raw-leader", eps)
    K = len(p["means"])
    assert spec.mutant_of == "adap-tt" and spec.kernel is registry.get("adap-tt").kernel
    pair = neighbours.candidates(spec, p, 1)[0]       # tied-high, row 0: 0 in d, 1 in d'
    assert pair.row == 0 and pair.base["name"] == "tied-high"
    r = wb.whitebox(spec, prep, pair, Claim(eps), wb.Replay(2000, 4))
    rep = r["replay"]
    assert rep["diverged_runs"] == 4000               # every run, both directions
    # the first leader (step K) reads arm 0's raw phase-1 mean: 0 on d (leader: arm 1, the
    # lowest of the tied others), 1 on d' (leader: arm 0)
    assert rep["first_divergent_step"] == K
    ex = rep["example"]
    assert ex["step"] == K and ex["common_prefix"] == list(range(K))
    assert (ex["action_d"], ex["action_d_prime"]) == (1, 0)
    # its releases are still the correct Laplace releases: loss within ε before divergence
    assert r["releases_exceed_eps"] is False


def test_raw_leader_flag_is_the_only_theta_difference():
    # one shared kernel: the mutant differs from adap-tt by the RAW_LEADER flag only, which is
    # off in the other registered variants
    eps = 0.5
    theta_ok = setup("adap-tt", eps)[2].theta
    theta_mut = setup("adap-tt-raw-leader", eps)[2].theta
    from dpaudit.algorithms.adap_tt.algorithm import RAW_LEADER
    assert theta_ok[RAW_LEADER] == 0 and theta_mut[RAW_LEADER] == 1
    assert setup("adap-tt-no-forgetting", eps)[2].theta[RAW_LEADER] == 0
    assert np.array_equal(np.delete(theta_ok, RAW_LEADER), np.delete(theta_mut, RAW_LEADER))


def test_ttucb_replay_diverges_where_it_must():
    spec, p, prep = setup("ttucb", 0.5)
    K = len(p["means"])
    pair = neighbours.candidates(spec, p, 1)[0]
    assert pair.row == 0 and pair.base["name"] == "tied-high"
    r = wb.whitebox(spec, prep, pair, Claim(0.5), wb.Replay(500, 5))
    assert r["max_loss"] == 0.0 and r["worst_run"]["releases"] == 0
    assert r["replay"]["diverged_runs"] == 1000
    assert r["replay"]["first_divergent_step"] == K
    assert "claims no privacy" in r["note"]
    # an entry TTUCB never reads cannot make it diverge: arm 1's entry of row 0 (row 0 is
    # read for arm 0 only)
    d = constant_table(1.0, 32, K)
    dp = d.copy()
    dp[0, 1] = 0.0
    quiet = NeighbourPair.from_tables(d, dp, {"kind": "constant"}, "unread entry")
    r = wb.whitebox(spec, prep, quiet, Claim(0.5), wb.Replay(200, 5))
    assert r["replay"]["diverged_runs"] == 0


# ------------------------------------------------------------------------ coverage

def test_coverage_counts_the_runs_whose_releases_read_the_entry():
    # AdaP-TT pulls every arm once, then releases each arm's phase-1 mean after the K initial
    # samples (t = K): row 0 (arm 0's first sample) is read by that one release in every run;
    # it can shape a transcript cut at K samples (its recommendation), not one cut at K − 1
    spec, p, prep = setup("adap-tt", 0.5)
    K = len(p["means"])
    pair = neighbours.candidates(spec, p, 1)[0]
    assert pair.row == 0
    before = wb.whitebox(spec, prep, pair, Claim(0.5), wb.Replay(100, 3, horizon=K - 1))["coverage"]
    assert before["measured"] and before["runs"] == 200
    assert before["runs_read"] == 0 and before["releases_read"] == []
    assert before["runs_read_any_time"] == 200            # read later, within the limit
    after = wb.whitebox(spec, prep, pair, Claim(0.5), wb.Replay(100, 3, horizon=K))["coverage"]
    assert after["fraction_read"] == 1.0
    assert after["releases_read"] == [{"phase": 1, "releases": 200, "runs": 200}]
    for side in ("d", "d_prime"):            # runs are cut at the white-box limit, 16 × T
        assert K < after["stopping_time"][side]["min"] <= after["stopping_time"][side]["max"]


def test_coverage_counts_decisions_that_read_the_entry_without_noise():
    # TTUCB has no releases: its runs read row 0 through a raw decision (the replay diverges);
    # an entry it never reads is read by no run
    spec, p, prep = setup("ttucb", 0.5)
    K = len(p["means"])
    pair = neighbours.candidates(spec, p, 1)[0]
    c = wb.whitebox(spec, prep, pair, Claim(0.5), wb.Replay(100, 5))["coverage"]
    assert c["fraction_read"] == 1.0 and c["releases_read"] == []
    d = constant_table(1.0, 32, K)
    dp = d.copy()
    dp[0, 1] = 0.0
    quiet = NeighbourPair.from_tables(d, dp, {"kind": "constant"}, "unread entry")
    quiet_report = wb.whitebox(spec, prep, quiet, Claim(0.5), wb.Replay(100, 5))
    assert quiet_report["coverage"]["runs_read"] == 0


# ----------------------------------------------------------- frozen noise round trip

def kernel_call(spec, prep, table, seed, frozen, limit):
    actions = np.full(limit, -1, np.int16)
    releases = np.full((4096, 8), np.nan)
    tau, rec, status, nr = spec.kernel(np.random.default_rng(seed), table, prep.means,
                                       prep.theta, prep.aux, limit, actions, releases,
                                       np.ascontiguousarray(frozen, dtype=np.float64))
    return (int(tau), int(rec), int(status), int(nr)), actions, releases[:nr]


CASES = [("adap-tt", 0.5, {}, 32, 512),                       # rows beyond the table too
         ("adap-tt-no-forgetting", 1.0, {}, 32, 512),
         ("adap-tt-raw-leader", 1.0, {}, 32, 512),
         ("dp-se", 1.0, {"means": (0.9, 0.1), "risk": 0.1}, 20_000, 20_000)]


@pytest.mark.parametrize("name,eps,params,T,limit", CASES)
def test_frozen_round_trip_reproduces_the_run(name, eps, params, T, limit):
    spec, p, prep = setup(name, eps, **params)
    for seed in range(5):
        table = (np.random.default_rng(seed).random((T, len(p["means"])))
                 < np.asarray(p["means"])).astype(float)
        orig, acts, rel = kernel_call(spec, prep, table, seed, np.empty(0), limit)
        assert orig[3] >= len(p["means"])
        # all releases frozen to their own values, or only the first few: the rest must still
        # draw the same noise (the noise is drawn even when a release is frozen)
        for m in (orig[3], len(p["means"]) // 2 + 1):
            again, acts2, rel2 = kernel_call(spec, prep, table, seed, rel[:m, 5].copy(), limit)
            assert again == orig
            assert np.array_equal(acts2, acts)
            assert np.array_equal(rel2, rel)
        if name == "dp-se":
            assert orig[2] == STOPPED
        # frozen values are released verbatim; the exact statistic is still logged
        frozen = rel[:, 5] + 0.125
        _, _, rel3 = kernel_call(spec, prep, table, seed, frozen, limit)
        k = min(len(rel3), len(frozen))
        assert np.array_equal(rel3[:k, 5], frozen[:k])
        assert np.array_equal(rel3[:len(p["means"]), 4], rel[:len(p["means"]), 4])


def test_frozen_value_steers_the_decisions():
    # freezing arm 2's phase-1 release above the others makes arm 2 the first leader (5 vs 0:
    # GLR statistic 12.5, far below the eq. 4 threshold at Ñ = 1, so the run goes on)
    spec, p, prep = setup("adap-tt", 0.5)
    K = len(p["means"])
    table = constant_table(1.0, 32, K)
    frozen = np.zeros(K)
    frozen[2] = 5.0
    for seed in range(3):
        (tau, _, status, _), acts, rel = kernel_call(spec, prep, table, seed, frozen, 32)
        assert status == TRUNCATED and acts[K] == 2
        assert np.array_equal(rel[:K, 5], frozen)


# ------------------------------------------------------------------------ determinism

def test_whitebox_is_deterministic_for_a_seed():
    spec, p, prep = setup("adap-tt-no-forgetting", 0.5)
    pair = neighbours.candidates(spec, p, 1)[2]

    def strip(r):
        return {k: v for k, v in r.items() if k != "runtime_s"}
    a = wb.whitebox(spec, prep, pair, Claim(0.5), wb.Replay(300, 9))
    b = wb.whitebox(spec, prep, pair, Claim(0.5), wb.Replay(300, 9))
    assert strip(a) == strip(b)
    ss = np.random.SeedSequence(9)
    c = wb.whitebox(spec, prep, pair, Claim(0.5), wb.Replay(300, ss))
    d = wb.whitebox(spec, prep, pair, Claim(0.5), wb.Replay(300, ss))   # ss is not consumed
    assert strip(c) == strip(d) == strip(a)
    e = wb.whitebox(spec, prep, pair, Claim(0.5), wb.Replay(300, 10))
    assert e["directions"]["d->d'"]["mean_loss"] != a["directions"]["d->d'"]["mean_loss"]


def test_result_is_json_ready():
    import json
    spec, p, prep = setup("adap-tt-raw-leader", 1.0)
    pair = neighbours.candidates(spec, p, 1)[0]
    r = wb.whitebox(spec, prep, pair, Claim(1.0), wb.Replay(50, 0, limit=40))
    assert r["limit"] == 40
    back = json.loads(json.dumps(r, allow_nan=False))
    assert back["replay"]["example"]["step"] == r["replay"]["first_divergent_step"]
    assert set(back["quantiles"]) == {"50", "90", "99", "99.9", "max"}
    with pytest.raises(ValueError):
        wb.whitebox(spec, prep, pair, Claim(1.0), wb.Replay(0, 0))


@pytest.mark.slow
def test_report_noisy_max_releases_above_eps_are_not_called_a_violation():
    """rnm-ftnl at its corrected scale is ε-DP as released (report-noisy-max), while its
    internal noisy scores exceed ε: the white-box line states the fact without the word
    violation, and the verdict is decided black-box."""
    from dpaudit.auditing.audit import audit_algorithm
    r = audit_algorithm("rnm-ftnl", 1.0, params={"rnm_scale": "corrected"}, runs=20000,
                        seed=1, workers=1, instances="fixed")
    assert r.whitebox["releases_exceed_eps"] is True and r.whitebox["max_loss"] > 1.0
    line = next(x for x in summary(r.to_dict()).splitlines() if x.startswith("  white-box:"))
    assert "above eps in" in line and "violation" not in line
    assert "the black-box verdict decides" in line and r.verdict != "violation"


def test_coupled_screen_proves_a_pair_silent_and_finds_the_instances_that_diverge():
    """GDP-NCB at the registry's instance (C_I = 1600): Phase I never ends within 128 rows, play
    is uniform whatever the rewards, so coupled runs on d and d' never differ (p_div = 0:
    exact, every run compared). At C_I = 0.01, T = 16, Phase I ends and the changed row moves
    the runs apart: p_div ≈ 0.1–0.35 per pair (design study); seeded, and P(0 of 256 | p ≥
    0.1) < 1e-11, so the check cannot fail by chance."""
    spec = registry.get("gdp-ncb")
    for extra, silent in (({}, True), ({"phase1_constant": "0.01", "horizon": "16"}, False)):
        p = spec.resolve_params(extra)
        prep = spec.prepare(1.0, p)
        for pair in neighbours.candidates(spec, {**p, "means": tuple(prep.means)}, 1)[:2]:
            r = wb.coupled_divergence(spec, prep, pair, wb.Replay(256, 1))
            assert r["runs"] == 256 and (r["p_div"] == 0) == silent, (extra, r)
            assert (r["first"] is None) == silent and r["diverged"] == r["p_div"] * 256
            # the coupling itself: a table against itself never diverges, even where the
            # runs are random (independent draws for d and d' would diverge here)
            same = SimpleNamespace(d=pair.d, d_prime=pair.d, model=pair.model)
            assert wb.coupled_divergence(spec, prep, same, wb.Replay(64, 1))["p_div"] == 0


def _without_runtime(r: dict) -> dict:
    return {k: v for k, v in r.items() if k != "runtime_s"}


def test_the_white_box_in_chunks_gives_the_result_of_one_loop(monkeypatch):
    """The runs are cut in chunks a mapper may spread over processes; each run has its own
    seed, so any chunking gives the same report, the coverage's per-phase run counts too."""
    eps = 0.5
    spec, p, prep = setup("adap-tt-no-forgetting", eps)
    pair = neighbours.candidates(spec, p, 1)[0]
    one = wb.whitebox(spec, prep, pair, Claim(eps), wb.Replay(150, 3))
    monkeypatch.setattr(wb, "WHITEBOX_CHUNK", 7)
    calls = []

    def mapper(job, spec_, common, items):
        calls.append(len(items))
        return [job(spec_, *common, x) for x in reversed(items)][::-1]
    chunked = wb.whitebox(spec, prep, pair, Claim(eps), wb.Replay(150, 3), mapper)
    assert calls == [22, 22]
    assert one["max_loss"] > eps and one["coverage"]["releases_read"][1]["runs"] > 7
    assert _without_runtime(chunked) == _without_runtime(one)


@pytest.mark.slow    # starts the worker processes
def test_the_white_box_on_the_worker_processes_gives_the_result_of_this_one():
    from functools import partial

    from dpaudit.auditing.search import spec_map
    eps = 0.5
    spec, p, prep = setup("adap-tt", eps)
    pair = neighbours.candidates(spec, p, 1)[0]
    here = wb.whitebox(spec, prep, pair, Claim(eps), wb.Replay(2500, 4))
    there = wb.whitebox(spec, prep, pair, Claim(eps), wb.Replay(2500, 4),
                        partial(spec_map, workers=2))
    assert _without_runtime(there) == _without_runtime(here)


# ---------------------------------------------------------------- compiled run/replay loops

def _runner(name, eps=1.0):
    spec, p, prep = setup(name, eps)
    pair = neighbours.candidates(spec, p, 1)[0]
    d, dp = (np.ascontiguousarray(t, dtype=np.float64) for t in (pair.d, pair.d_prime))
    return wb._Runner(spec, prep, d, dp, spec.audit_horizon(p))


@pytest.mark.parametrize("name", ["rnm-ftnl", "ttucb", "adap-tt-raw-leader", "dp-se"])
def test_a_sweep_records_each_pair_as_a_run_and_replay_from_its_own_seed(name, monkeypatch):
    """The compiled loop records, pair by pair, what this module's Python run and replay give
    from a fresh generator of the pair's seed (child (3, i) of the seed): a private kernel, a
    non-private one (every replay diverges) and a mutant; with one-row release buffers too
    (every run overflows them: they grow and the pair runs again), bit for bit."""
    runner = _runner(name)
    seed = np.random.SeedSequence(11)
    rec, loss, _, first = runner.sweep(seed, (3,), 40, wb.REPLAY)
    for j in range(40):
        o, r, (step, lo, counted) = runner.pair(wb._start(wb.child_seed(seed, 3, j)))
        assert list(rec[j, :11]) == [*o, *r, step, counted, -1] and loss[j] == lo, j
        r1, r2 = runner.r1[:counted], runner.r2[:counted]
        read = np.flatnonzero(r1[:, 4] != r2[:, 4])     # the first release that read the entry
        fixed = read.size and (r1[read[0], 6:8] == r2[read[0], 6:8]).all()
        want = [*r1[read[0], [7, 6, 4]], r2[read[0], 4]] if fixed else [-1.0]
        assert list(first[j, :len(want)]) == want, j
    monkeypatch.setattr(wb, "RELEASE_ROWS", 1)
    got = _runner(name).sweep(seed, (3,), 40, wb.REPLAY)
    assert np.array_equal(got[0], rec) and np.array_equal(got[1], loss)
    assert np.array_equal(got[3][:, 0], first[:, 0]) and (first[:, 0] >= 0).any() != (
        name == "ttucb")
    if name == "ttucb":
        assert (rec[:, wb.STEP] >= 0).all()
    elif name != "adap-tt-raw-leader":
        assert (rec[:, wb.STEP] == -1).all() and loss.max() > 0


@pytest.mark.parametrize("name", ["gdp-ncb", "ttucb"])
def test_coupled_pairs_diverge_exactly_when_the_two_runs_differ(name):
    """In mode COUPLED both runs release their own values; a pair diverges iff the runs on d
    and on d′ from its seed differ in actions, τ, recommendation or status."""
    runner = _runner(name)
    seed = np.random.SeedSequence(5)
    rec = runner.sweep(seed, (), 30, wb.COUPLED)[0]
    for j in range(30):
        state = wb._start(wb.child_seed(seed, j))
        o = runner._call(state, runner.src, runner.a1, "r1", runner.empty)
        r = runner._call(state, runner.dst, runner.a2, "r2", runner.empty)
        differ = o[:3] != r[:3] or not np.array_equal(runner.a1[:o[0]], runner.a2[:o[0]])
        assert (rec[j, wb.STEP] >= 0) == differ and list(rec[j, :8]) == [*o, *r], j
    assert (rec[:, wb.STEP] >= 0).any() == (name == "ttucb")


@pytest.mark.slow      # compiles the generic loop (a few seconds)
def test_the_generic_pair_loop_gives_the_declared_loops_records():
    runner = _runner("adap-tt")
    want = runner.sweep(np.random.SeedSequence(2), (0,), 50, wb.REPLAY)
    runner.loop = (wb.pair_body, (runner.kernel,))
    got = runner.sweep(np.random.SeedSequence(2), (0,), 50, wb.REPLAY)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert got[2] == want[2] and want[2]
    read = want[3][:, 0] >= 0
    assert read.any() and np.array_equal(got[3][read], want[3][read])


def test_the_phase_histogram_widens_to_any_phase_with_the_same_coverage(monkeypatch):
    """A sweep counts the releases that read the changed position per phase in a histogram
    that widens (the pair runs again) when a phase falls outside it: from one slot, the
    coverage of phases 0, 1, 2, ... is that of the default width, bit for bit."""
    eps = 0.5
    spec, p, prep = setup("adap-tt-no-forgetting", eps)
    pair = neighbours.candidates(spec, p, 1)[0]
    want = wb.whitebox(spec, prep, pair, Claim(eps), wb.Replay(300, 3))
    monkeypatch.setattr(wb, "PHASE_SLOTS", 1)
    got = wb.whitebox(spec, prep, pair, Claim(eps), wb.Replay(300, 3))
    assert len(want["coverage"]["releases_read"]) >= 2
    assert _without_runtime(got) == _without_runtime(want)


def test_a_release_without_noise_is_a_point_mass():
    """A Laplace or Gaussian release logged with scale 0 (a mutant's raw value): loss 0 where the
    exact values agree, +∞ at y = v where they differ, −∞ at y = v′; anything else is no
    output of it (error)."""
    from dpaudit.auditing.whitebox import log_density_ratio
    from dpaudit.simulation.simulate import GAUSSIAN, LAPLACE
    for fam in (LAPLACE, GAUSSIAN):
        out = log_density_ratio(np.full(3, fam), np.array([0.3, 0.3, 0.5]),
                                np.array([0.3, 0.3, 0.3]), np.array([0.3, 0.5, 0.5]),
                                np.zeros(3))
        np.testing.assert_array_equal(out, [0.0, np.inf, -np.inf])
        with pytest.raises(ValueError, match="no finite log density"):
            log_density_ratio(np.array([fam]), np.array([0.4]), np.array([0.3]),
                              np.array([0.5]), np.zeros(1))


def test_a_report_that_loses_more_than_eps_refutes_a_pure_local_claim_only():
    assert wb.reports_proof(0.5 * (1 + 1e-12), 0.5, 0.0)["refuted"] is False   # rounding
    assert wb.reports_proof(0.50001, 0.5, 0.0)["refuted"] is True
    proof = wb.reports_proof(math.inf, 0.5, 0.0)
    assert proof["refuted"] is True and "loses inf > eps = 0.5" in proof["text"]
    refused = wb.reports_proof(math.inf, 0.5, 1e-6)
    assert refused["refuted"] is False and "delta = 1e-06 > 0" in refused["text"]


@pytest.mark.parametrize("name, factor", [("ldp-ncb", 1.0), ("ldp-ncb~scale=0.5@0", 2.0),
                                          ("ldp-ucb~count@0", 2.0)])
def test_the_white_box_runs_of_an_ldp_algorithm_judge_its_reports(name, factor):
    """A faithful ε-LDP report loses at most ε, reached on half the runs (Laplace with y on the
    far side of both values: P = 1/2 per run, so 200 runs miss it with probability 2^-200);
    half the noise, or noise for a mean of 2 samples at one sample, loses exactly 2ε."""
    eps = 0.5
    spec, p, prep = setup(name, eps)
    assert spec.reports
    pair = next(iter(neighbours.candidates(spec, p, 1)))
    r = wb.whitebox(spec, prep, pair, Claim(eps), wb.Replay(200, 1))
    assert r["max_loss"] == pytest.approx(factor * eps, rel=1e-9)
    assert r["reports"]["refuted"] is (factor > 1)


def test_only_local_claims_have_their_releases_judged_as_reports():
    local = {s.name for s in registry.all_specs() if s.reports}
    assert {"ldp-ncb", "ldp-ncb-anytime", "ldp-ucb", "ldp-tb-budget",
            "ldp-tb-confidence"} <= local
    assert all("local DP" in registry.get(n).theorem for n in local)
    assert not {"gdp-ncb", "adap-tt", "dp-se", "lazy-dp-ts"} & local
