"""Exact transcript laws on small instances (dpaudit.auditing.exact).

Deterministic: the laws are finite sums, checked against closed forms and against each other;
the one comparison with simulation allows 6 standard deviations (false-failure rate < 1e-8).
"""
import math

import numba as nb
import numpy as np
import pytest

from dpaudit.algorithms import registry
from dpaudit.algorithms.spec import AlgorithmSpec, Param, Prepared
from dpaudit.auditing import exact
from dpaudit.data import neighbours
from dpaudit.data.tables import NeighbourPair, constant_table
from dpaudit.simulation.simulate import COIN, LAPLACE, RANDOMISED_RESPONSE, STOPPED


@nb.njit(cache=True)
def bits_kernel(rng, table, means, theta, aux, limit, actions, releases, frozen):
    """Randomised response (ε = theta[0]) of each of the table's first `limit` rows, then
    (theta[1] = 1) a fair coin as the last action (theta[1] = 2: the coin logged as a COIN
    release), or (theta[2] = 1) Laplace releases."""
    n = min(limit, table.shape[0])
    for t in range(n):
        x = table[t, 0]
        if theta[2] == 1.0:
            y = x + rng.laplace(0.0, 1.0)
            dist, scale = float(LAPLACE), 1.0
        else:
            keep = (1.0 + x * math.expm1(theta[0])) / (1.0 + math.exp(theta[0]))
            y = 1.0 if rng.random() < keep else 0.0
            dist, scale = float(RANDOMISED_RESPONSE), theta[0]
        if t < frozen.shape[0]:
            y = frozen[t]
        if t < releases.shape[0]:
            r = releases[t]
            r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7] = t + 1, 0, 1, 1, x, y, scale, dist
        actions[t] = 1 if y > 0.5 else 0
    if theta[1] == 1.0 and n > 0:
        actions[n - 1] = 1 if rng.random() < 0.5 else 0
    if theta[1] == 2.0 and n > 0:
        c = 1.0 if rng.random() < 0.5 else 0.0
        if n < frozen.shape[0]:
            c = frozen[n]
        if n < releases.shape[0]:
            r = releases[n]
            r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7] = n, -1, 0, 0, 0.0, c, 2.0, COIN
        actions[n - 1] = int(c)
        return n, -1, STOPPED, n + 1
    return n, -1, STOPPED, n


def bits(s, rows=1, coin=False, laplace=False):
    spec = AlgorithmSpec(
        name="bits", title="randomised response per row", paper="test", model="user",
        private=True, kernel=bits_kernel, params=(Param("means", (0.5, 0.5), "floats", "K"),),
        prepare=lambda eps, p: Prepared(np.array([s, float(coin), float(laplace)]),
                                        np.zeros(0), np.asarray(p["means"])),
        structure=lambda p: [(0, "row 0")], audit_horizon=lambda p: rows)
    pair = NeighbourPair.change_row(constant_table(0.5, rows, 2), 0, 0.0, 1.0,
                                    {"kind": "constant", "value": 0.5}, "row 0")
    return spec, spec.prepare(s, spec.resolve_params({})), pair


def simulated(spec, prep, table, limit, seed, runs=20000):
    """{transcript key: count} over `runs` runs of the kernel (the exact module's keys)."""
    rng = np.random.default_rng(seed)
    counts: dict = {}
    actions, none = np.zeros(limit, np.int16), np.zeros((0, 8))
    for _ in range(runs):
        out = spec.kernel(rng, table, prep.means, prep.theta, prep.aux, limit, actions, none,
                          np.zeros(0))
        key = (actions.tobytes(), *(int(x) for x in out[:3]))
        counts[key] = counts.get(key, 0) + 1
    return counts


def within_6_sd(law, counts, runs=20000):
    """Every simulated transcript is in the law, each frequency within 6 sd of its bounds."""
    return set(counts) <= set(law) and all(
        lo - 6 * math.sqrt(hi * (1 - lo) / runs) <= counts.get(key, 0) / runs
        <= hi + 6 * math.sqrt(hi * (1 - lo) / runs) for key, (lo, hi) in law.items())


@pytest.mark.parametrize("s", [0.5, 1.0, 2.0])
def test_one_randomised_response_release_has_its_closed_form(s):
    spec, prep, pair = bits(s)
    r = exact.exact_privacy(spec, prep, pair, s)
    assert r["eps_exact"] == pytest.approx(s, rel=1e-12) and r["transcripts"] == 2
    # δ(ε) = (e^s − e^ε)/(1 + e^s) below s (P(1 | 1) − e^ε P(1 | 0)), and ε(δ) inverts it
    for e in (0.0, s / 2):
        want = (math.exp(s) - math.exp(e)) / (1 + math.exp(s))
        assert exact.exact_privacy(spec, prep, pair, e)["delta_at_eps"] == pytest.approx(
            want, rel=1e-12)
        assert exact.exact_privacy(spec, prep, pair, s, want)["eps_exact"] == pytest.approx(
            e, abs=1e-9)
    assert exact.exact_privacy(spec, prep, pair, s)["delta_at_eps"] == pytest.approx(
        0.0, abs=1e-15)


def test_rows_the_pair_does_not_change_cancel_out():
    spec, prep, pair = bits(1.0, rows=6)
    law = exact.transcript_law(spec, prep, pair.d, 6)
    assert all(lo == hi for lo, hi in law.values())      # bits: a sum, no bounds to close
    assert len(law) == 2 ** 6 and sum(lo for lo, _ in law.values()) == pytest.approx(
        1.0, rel=1e-12)
    r = exact.exact_privacy(spec, prep, pair, 1.0)
    assert r["eps_exact"] == pytest.approx(1.0, rel=1e-9) and r["transcripts"] == 64


def test_the_law_is_the_kernels_frequencies():
    # 6-sigma agreement of every transcript's probability with 20000 simulated runs
    spec, prep, pair = bits(0.7, rows=3)
    table = np.ascontiguousarray(pair.d_prime, dtype=np.float64)
    law = exact.transcript_law(spec, prep, table, 3)
    counts = simulated(spec, prep, table, 3, seed=3)
    assert set(counts) <= set(law)
    for key, (p, _) in law.items():
        assert abs(counts.get(key, 0) / 20000 - p) <= 6 * math.sqrt(p * (1 - p) / 20000)


def test_a_logged_coin_is_summed_over():
    # the last action is a fair coin logged as a COIN release: the walk branches on it (each
    # value 1/2 on both tables), so the law has 4 transcripts of probability P(bit)/2 and the
    # exact ε is randomised response's, as without the coin
    spec, prep, pair = bits(1.0, rows=2, coin=2)
    r = exact.exact_privacy(spec, prep, pair, 1.0)
    assert r["eps_exact"] == pytest.approx(1.0, rel=1e-12) and r["transcripts"] == 4
    keep = math.exp(1.0) / (1 + math.exp(1.0))
    law = exact.transcript_law(spec, prep, np.ascontiguousarray(pair.d), 2)
    assert sorted(lo for lo, _ in law.values()) == pytest.approx(
        sorted([(keep if a else 1 - keep) / 2 for a in (0, 1) for _ in (0, 1)]), rel=1e-12)


def test_coins_and_large_walks_are_refused(monkeypatch):
    spec, prep, pair = bits(1.0, rows=2, coin=True)
    with pytest.raises(exact.Infeasible, match="randomness besides its releases"):
        exact.exact_privacy(spec, prep, pair, 1.0)
    monkeypatch.setattr(exact, "MAX_RUNS", 8)
    spec, prep, pair = bits(1.0, rows=4)
    with pytest.raises(exact.Infeasible, match="more than 8 kernel runs"):
        exact.exact_privacy(spec, prep, pair, 1.0)


def laplace_threshold(eps, v, v_prime, c):
    """ln P(v + Lap(1) > c) − ln P(v′ + Lap(1) > c), and the same for ≤ c (SciPy)."""
    from scipy.stats import laplace
    return (laplace.logsf(c, v) - laplace.logsf(c, v_prime),
            laplace.logcdf(c, v) - laplace.logcdf(c, v_prime))


@pytest.mark.parametrize("rows", [1, 2])
def test_one_laplace_release_is_bracketed_by_its_closed_form(rows):
    # the transcript is 1[y > 1/2] per row, y = x + Lap(1); the pair changes row 0 from 0 to
    # 1: the other row cancels out, and the exact ε is the larger |log ratio| of the two
    # outcomes of row 0 (SciPy's Laplace, not the module's masses); δ(ε) at ε = 0.3:
    # P(1 | 1) − e^ε P(1 | 0) (the other outcome is negative)
    from scipy.stats import laplace
    spec, prep, pair = bits(1.0, rows=rows, laplace=True)
    r = exact.exact_privacy(spec, prep, pair, 0.3)
    want = max(abs(x) for x in laplace_threshold(1.0, 0.0, 1.0, 0.5))
    low, high = r["eps_exact_bounds"]
    assert low <= want <= high and high - low < 3 * exact.TOL and r["eps_exact"] == high
    delta = laplace.sf(0.5, 1.0) - math.exp(0.3) * laplace.sf(0.5, 0.0)
    d_low, d_high = r["delta_at_eps_bounds"]
    assert d_low <= delta <= d_high and d_high - d_low < 3 * exact.TOL * delta
    assert r["transcripts"] == 2 ** rows and "cell condition" in r["method"]
    # the witness is row 0's outcome with its probability bracketed (the other rows' outcomes
    # split it by halves when rows = 2)
    w = r["witness"]
    share = 0.5 ** (rows - 1)
    assert any(w["p_d"][0] <= share * want_p <= w["p_d"][1]
               for want_p in (laplace.sf(0.5, 0.0), laplace.cdf(0.5, 0.0)))


def test_a_laplace_law_is_the_kernels_frequencies():
    # every transcript's simulated frequency (20000 runs) lies within 6 standard deviations of
    # its bounds (false-failure rate < 1e-8 per transcript, 8 transcripts)
    spec, prep, pair = bits(1.0, rows=3, laplace=True)
    table = np.ascontiguousarray(pair.d_prime, dtype=np.float64)
    law = exact.transcript_law(spec, prep, table, 3)
    assert len(law) == 8 and within_6_sd(law, simulated(spec, prep, table, 3, seed=5))


@pytest.mark.slow       # two walks (~4 s)
def test_a_registered_laplace_algorithms_law_brackets_its_kernels_frequencies():
    # rnm-ftnl on K = 2, two rows: each transcript's simulated frequency (20000 runs) within
    # 6 standard deviations of its bounds (false-failure rate < 1e-8 per transcript); a pair
    # whose changed row no release within the rows reads (epoch 1: its noisy max is played
    # from round 4) has the same law on both tables, and its ε_exact is 0 exactly (each
    # transcript's ratio is capped by its releases' loss, 0 here)
    spec = registry.get("rnm-ftnl")
    p = spec.resolve_params({"means": (0.7, 0.3), "audit_rows": 2})
    prep = spec.prepare(0.5, p)
    first, *_, late = neighbours.candidates(spec, p, 1)
    table = np.ascontiguousarray(first.d_prime, dtype=np.float64)
    law = exact.transcript_law(spec, prep, table, 2)
    assert len(law) == 2 and within_6_sd(law, simulated(spec, prep, table, 2, seed=11))
    assert all(hi - lo < 0.05 * lo for lo, hi in law.values())
    assert "epoch 1" in late.label
    assert exact.exact_privacy(spec, prep, late, 0.5)["eps_exact_bounds"] == [0.0, 0.0]


def test_ldp_ncb_law_sums_over_its_phase_one_arms():
    # LDP-NCB on K = 2, three users, a small C_I so that Phase I can end: its uniform Phase-I
    # arms are logged coins and its rewards Laplace releases; each transcript's simulated
    # frequency (20000 runs) within 6 sd of its bounds (false-failure rate < 1e-8 per
    # transcript), and every one of the 2³ action sequences has mass
    spec = registry.get("ldp-ncb")
    p = spec.resolve_params({"means": (0.3, 0.7), "horizon": 3, "phase1_constant": 0.01})
    prep = spec.prepare(0.5, p)
    table = np.ascontiguousarray(neighbours.candidates(spec, p, 1)[0].d, dtype=np.float64)
    law = exact.transcript_law(spec, prep, table, 3)
    assert len(law) == 8 and all(lo > 0 for lo, _ in law.values())
    assert within_6_sd(law, simulated(spec, prep, table, 3, seed=12))


@pytest.mark.parametrize("name, params", [("privbern", {}),
                                          ("ldp-tb-budget", {"means": (0.4, 0.65),
                                                             "audit_rows": 6})])
def test_registered_randomised_response_algorithms_are_exactly_eps_dp_on_their_pairs(
        name, params):
    # one bit per user (privbern) / per pull (ldp-tb-budget), each ε-randomised response: the
    # transcript reveals the changed user's bit, so its exact ε is the claim's, never above
    spec = registry.get(name)
    p = spec.resolve_params(params)
    prep = spec.prepare(1.0, p)
    got = [exact.exact_privacy(spec, prep, pair, 1.0)["eps_exact"]
           for pair in neighbours.candidates(spec, p, 1)]
    assert max(got) == pytest.approx(1.0, rel=1e-9)
    assert all(e <= 1.0 + 1e-9 for e in got)


@pytest.mark.slow       # an audit (~3 s)
def test_an_audit_with_exact_reports_eps_exact_beside_eps_lb():
    from dpaudit.auditing.audit import audit_algorithm
    from dpaudit.reporting.report import summary
    r = audit_algorithm("ldp-tb-budget", 1.0, params={"means": (0.4, 0.65), "audit_rows": 6},
                        instances="fixed", exact=True, runs=200_000, seed=1, workers=1)
    x = r.to_dict()["exact"]
    assert x["eps_exact"] == pytest.approx(1.0, rel=1e-9) and x["transcripts"] > 2
    assert r.eps_lb <= x["eps_exact"] + 1e-9
    assert f"eps_lb / eps_exact = {r.eps_lb:.3f}" in summary(r.to_dict())


@pytest.mark.parametrize("algo, kwargs, match", [
    ("ldp-ucb", {"instances": "fixed"}, "first data-dependent action, sample 29"),
    ("ldp-tb-budget", {"instances": "fixed"}, "64 discrete, 0 continuous"),
])
def test_exact_is_refused_before_the_audit_where_it_cannot_be_summed(algo, kwargs, match):
    from dpaudit.auditing.audit import audit_algorithm
    from dpaudit.errors import InputError
    params = {"audit_rows": 64} if "instances" in kwargs and algo == "ldp-tb-budget" else {}
    with pytest.raises(InputError, match=match):
        audit_algorithm(algo, 1.0, params=params, exact=True, runs=1000, seed=1, workers=1,
                        **kwargs)


@pytest.mark.slow       # an audit with an instance search (~5 s)
def test_after_an_instance_search_an_infeasible_walk_keeps_the_audit(monkeypatch):
    # the search picks the pair only at its end: a walk too large there is reported in the
    # result (``refused``) and its text, and the audit's verdict stands
    from dpaudit.auditing.audit import audit_algorithm
    from dpaudit.reporting.report import summary
    monkeypatch.setattr(exact, "MAX_RUNS", 8)
    r = audit_algorithm("ldp-tb-budget", 1.0, exact=True, runs=2000, seed=1, workers=1)
    x = r.to_dict()["exact"]
    assert "more than 8 kernel runs" in x["refused"] and "eps_exact" not in x
    assert r.to_dict()["instance_search"] and r.verdict is not None
    assert "exact: not computed on the audited pair: --exact: " in summary(r.to_dict())


def ldp_ucb(eps, horizon):
    spec = registry.get("ldp-ucb")
    p = spec.resolve_params({"means": (0.3, 0.7), "horizon": horizon})
    return spec, spec.prepare(eps, p), neighbours.candidates(spec, p, 1)


@pytest.mark.slow       # 20000 kernel runs per table (~1.5 s)
def test_ldp_ucbs_own_law_brackets_its_kernels_frequencies():
    # K = 2: forced exploration plays 28 data-independent actions, action 29 reads all 28
    # reports; its two transcripts' simulated frequencies (20000 runs) within 6 sd of the
    # law's bounds on both tables of a pair (false-failure rate < 1e-8 per transcript), and
    # the bounds are narrow (each within 1 % of its probability)
    spec, prep, pairs = ldp_ucb(1.0, 29)
    pair = next(p for p in pairs if "mid-horizon" in p.label)
    for table in (pair.d, pair.d_prime):
        table = np.ascontiguousarray(table, dtype=np.float64)
        law = exact.transcript_law(spec, prep, table, 29)
        assert len(law) == 2 and all(hi - lo < 0.01 * lo for lo, hi in law.values())
        assert within_6_sd(law, simulated(spec, prep, table, 29, seed=13))
    r = exact.exact_privacy(spec, prep, pair, 1.0)
    lo, hi = r["eps_exact_bounds"]
    assert 0 < lo <= hi < lo + 0.02 and "action 29 of LDP-UCB" in r["method"]


def test_ldp_ucbs_law_stops_at_its_first_data_dependent_action():
    spec, prep, pairs = ldp_ucb(1.0, 28)
    r = exact.exact_privacy(spec, prep, pairs[0], 1.0)      # 28 forced actions: one transcript
    assert r["eps_exact_bounds"] == [0.0, 0.0] and r["transcripts"] == 1
    spec, prep, pairs = ldp_ucb(1.0, 30)
    with pytest.raises(exact.Infeasible, match="first data-dependent action, sample 29"):
        exact.exact_privacy(spec, prep, pairs[0], 1.0)
