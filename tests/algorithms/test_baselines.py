"""Tests of the baselines of Azize et al. (2023, arXiv:2309.02202), ``ttucb`` and ``dp-se`` (algorithms/adap_tt/baselines.py).

Deterministic unless stated; every statistical test is seeded and states its false-failure
probability.
"""
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.algorithms import registry
from dpaudit.algorithms.adap_tt import baselines as bl
from dpaudit.algorithms.adap_tt.algorithm import MU1
from dpaudit.algorithms.adap_tt.glr import C_G
from dpaudit.simulation.simulate import CAPPED, LAPLACE, STOPPED, TRUNCATED, run_batch


def run(name, eps, table, limit=None, seed=0, n_rel=256, **params):
    """One kernel call; returns (tau, rec, status, n_rel, actions[:min(tau, len)], releases)."""
    spec = registry.get(name)
    p = spec.resolve_params(params)
    prep = spec.prepare(eps, p)
    table = np.ascontiguousarray(table, dtype=np.float64)
    limit = table.shape[0] if limit is None else limit
    actions = np.full(table.shape[0], -1, np.int16)
    releases = np.full((n_rel, 8), np.nan)
    tau, rec, status, nr = spec.kernel(np.random.default_rng(seed), table, prep.means,
                                       prep.theta, prep.aux, limit, actions, releases,
                                       np.empty(0))
    return tau, rec, status, nr, actions[:tau], releases[:min(nr, n_rel)]


def bernoulli_table(means, T, seed):
    rng = np.random.default_rng(seed)
    return (rng.random((T, len(means))) < np.asarray(means)).astype(np.float64)


def one_zero_table(K, T):
    t = np.zeros((T, K))
    t[:, 0] = 1.0
    return t


# ----------------------------------------------------------------------------------- TTUCB

def ttucb_reference(table, risk, beta):
    """Plain-Python TTUCB, written from the formulas: (actions, tau, rec) or
    (actions, None, None) if the table runs out. Same float operations as the rule's text."""
    T, K = table.shape
    cg = C_G(0.5 * math.log((K - 1) / risk))
    N, S, L, M = [0] * K, [0.0] * K, [0] * K, [0] * K
    acts = []
    n = 0
    while True:
        if n >= K:
            mu = [S[a] / N[a] for a in range(K)]
            ahat = mu.index(max(mu))
            if all((mu[ahat] - mu[b]) ** 2 / (1 / N[ahat] + 1 / N[b])
                   >= 2 * (2 * cg + 2 * math.log(4 + math.log(N[ahat]))
                           + 2 * math.log(4 + math.log(N[b])))
                   for b in range(K) if b != ahat):
                return acts, n, ahat
        if n >= T:
            return acts, None, None
        if n < K:
            I = n
        else:
            ucb = [mu[a] + math.sqrt(6 * math.log(n + 1) / N[a]) for a in range(K)]
            B = ucb.index(max(ucb))
            if M[B] <= beta * (L[B] + 1):
                I = B
            else:
                tc = {a: (mu[B] - mu[a]) / math.sqrt(1 / N[B] + 1 / N[a]) for a in range(K)
                      if a != B}
                I = min(tc, key=lambda a: (tc[a], a))
            L[B] += 1
            M[B] += I == B
        acts.append(I)
        N[I] += 1
        S[I] += table[n, I]
        n += 1


def test_ttucb_matches_plain_python_reference_on_random_table():
    means = (0.8, 0.6, 0.55, 0.3)
    table = bernoulli_table(means, 6000, seed=11)
    tau, rec, status, nr, acts, _ = run("ttucb", 1.0, table, means=means, risk=0.05, beta=0.5)
    ref_acts, ref_tau, ref_rec = ttucb_reference(table, 0.05, 0.5)
    assert status == STOPPED and nr == 0
    assert (tau, rec) == (ref_tau, ref_rec)
    assert acts.tolist() == ref_acts
    assert acts[:4].tolist() == [0, 1, 2, 3]          # initialisation
    assert len(set(acts[4:].tolist())) > 1            # adaptive afterwards


def test_ttucb_reference_with_other_beta():
    means = (0.9, 0.5, 0.2)
    table = bernoulli_table(means, 8000, seed=5)
    tau, rec, status, _, acts, _ = run("ttucb", 1.0, table, means=means, risk=0.1, beta=0.3)
    ref_acts, ref_tau, ref_rec = ttucb_reference(table, 0.1, 0.3)
    assert (tau, rec) == (ref_tau, ref_rec) and status == STOPPED
    assert acts.tolist() == ref_acts


def test_ttucb_one_zero_table_stops_exactly_when_glr_rule_fires():
    K, risk = 6, 0.01
    table = one_zero_table(K, 4000)
    tau, rec, status, nr, acts, _ = run("ttucb", 1.0, table, means=MU1, risk=risk)
    assert status == STOPPED and rec == 0 and nr == 0
    assert acts[:K].tolist() == list(range(K))
    # μ̂_0 = 1, μ̂_b = 0: the rule with our threshold, evaluated on the kernel's counts.
    cg = C_G(0.5 * math.log((K - 1) / risk))

    def fires(N):
        return all(1.0 / (1 / N[0] + 1 / N[b]) >= 2 * (2 * cg + 2 * math.log(4 + math.log(N[0]))
                                                        + 2 * math.log(4 + math.log(N[b])))
                   for b in range(1, K))
    counts = np.zeros(K, int)
    for n in range(tau):
        if n >= K:
            assert not fires(counts), n
        counts[acts[n]] += 1
    assert fires(counts)
    assert ttucb_reference(table, risk, 0.5)[1:] == (tau, 0)


def test_ttucb_releases_nothing():
    table = bernoulli_table(MU1, 500, seed=3)
    tau, _, status, nr, _, rel = run("ttucb", 1.0, table, n_rel=16)
    assert nr == 0 and rel.shape == (0, 8)
    spec = registry.get("ttucb")
    prep = spec.prepare(1.0, spec.resolve_params({}))
    buf = np.full((16, 8), np.nan)
    spec.kernel(np.random.default_rng(0), table, prep.means, prep.theta, prep.aux, 500,
                np.empty(500, np.int16), buf, np.empty(0))
    assert np.isnan(buf).all()


def test_ttucb_threshold_uses_exact_cg():
    spec = registry.get("ttucb")
    # ½·ln((K−1)/δ) = 1 for K = 2, δ = e^−2: C_G(1) = 2.507095 (eq. (15), computed
    # independently of this code with SciPy, 6 digits)
    theta = spec.prepare(1.0, spec.resolve_params({"means": (0.6, 0.4),
                                                   "risk": math.exp(-2)})).theta
    assert theta[bl.TT_CG] == pytest.approx(2.507095, abs=2e-6)
    theta = spec.prepare(1.0, spec.resolve_params({})).theta
    assert theta[bl.TT_CG] == C_G(0.5 * math.log(5 / 0.01))
    assert (theta[bl.TT_RISK], theta[bl.TT_BETA], theta[bl.TT_MAX_STEPS]) == (0.01, 0.5, 1 << 24)


# ----------------------------------------------------------------------------------- DP-SE

def R_hand(n_active, e, eps, risk):
    """R_e of DP-SE (the co-authors' draft-code constants), written out independently of the
    module."""
    d = 2.0 ** -e
    return math.floor(max(32 * math.log(8 * n_active * e * e / risk) / d ** 2,
                          8 * math.log(4 * n_active * e * e / risk) / (eps * d)) + 1)


def test_dpse_epoch_lengths_by_hand():
    # K = 6, δ = 0.01, ε = 0.5: 128·ln 4800 = 1084.98 > 32·ln 2400 = 249.06 → R_1 = 1085
    assert bl.epoch_length(6, 1, 0.5, 0.01) == 1085 == R_hand(6, 1, 0.5, 0.01)
    # e = 2: 512·ln 19200 = 5049.7 → 5050
    assert bl.epoch_length(6, 2, 0.5, 0.01) == 5050 == R_hand(6, 2, 0.5, 0.01)
    # ε = 0.01: the privacy term 1600·ln 2400 = 12453.1 dominates → 12454
    assert bl.epoch_length(6, 1, 0.01, 0.01) == 12454 == R_hand(6, 1, 0.01, 0.01)
    for S in (2, 3, 5):
        for e in (1, 2, 3, 4):
            for eps in (0.05, 1.0, 1e6):
                assert bl.epoch_length(S, e, eps, 0.05) == R_hand(S, e, eps, 0.05)


def test_dpse_epoch1_actions_are_blocks_in_index_order():
    R1 = R_hand(6, 1, 0.5, 0.01)
    table = bernoulli_table(MU1, 6 * R1 + 10, seed=1)
    tau, rec, status, nr, acts, rel = run("dp-se", 0.5, table)
    assert status == TRUNCATED and tau == 6 * R1 + 10
    assert acts[:6 * R1].tolist() == np.repeat(np.arange(6), R1).tolist()
    assert nr == 6 and rel[:, 0].tolist() == [R1 * (a + 1) for a in range(6)]


def test_dpse_one_zero_table_eliminates_all_after_epoch1():
    # Noise scale 1/(1e6·R_1) < 1e-9, the margin is 1 − 2(h_1 + c_1) > 0.8: P(failure) < e^-1e8.
    K = 6
    R1 = R_hand(K, 1, 1e6, 0.01)
    assert R1 == 1085
    tau, rec, status, nr, acts, rel = run("dp-se", 1e6, one_zero_table(K, K * R1 + 100))
    assert (tau, rec, status, nr) == (K * R1, 0, STOPPED, K)
    assert rel[:, 4].tolist() == [1.0] + [0.0] * (K - 1)


def test_dpse_eliminates_among_active_arms_only():
    # Non-stationary table (ε = 1e6: noise < 1e-9 against margins > 0.05, P(failure) < e^-1e7).
    # Epoch 1: arms 0, 2 pay 1 and arm 1 pays 0.5 -> arm 1 removed. Afterwards arm 0 pays 0.2,
    # arm 2 pays 0: arm 2 is removed in epoch 2 — unless arm 1's stale m̃ = 0.5 entered the max.
    K, eps = 3, 1e6
    R1, R2 = R_hand(3, 1, eps, 0.01), R_hand(2, 2, eps, 0.01)
    table = np.zeros((3 * R1 + 2 * R2, K))
    table[:3 * R1] = (1.0, 0.5, 1.0)
    table[3 * R1:] = (0.2, 0.0, 0.0)
    tau, rec, status, nr, acts, rel = run("dp-se", eps, table, means=(0.5, 0.5, 0.5))
    assert (tau, rec, status, nr) == (3 * R1 + 2 * R2, 0, STOPPED, 5)
    assert acts[3 * R1:].tolist() == [0] * R2 + [2] * R2


@pytest.mark.parametrize("side", [-1, 1])
def test_dpse_elimination_width_boundary(side):
    # K = 2 constant columns with a gap 1 % below / above 2·(h_1 + c_1) computed by hand;
    # ε = 1e6 makes the noise (< 1e-8) negligible against the 1e-3 margin: P(failure) < e^-1e5.
    eps, risk = 1e6, 0.01
    R1 = R_hand(2, 1, eps, risk)
    width = 2 * (math.sqrt(math.log(8 * 2 / risk) / (2 * R1)) + math.log(4 * 2 / risk) / (eps * R1))
    table = np.full((2 * R1 + 1, 2), 0.3)
    table[:, 0] += width * (1 + 0.01 * side)
    tau, rec, status, *_ = run("dp-se", eps, table, means=(0.5, 0.5))
    if side > 0:
        assert (tau, rec, status) == (2 * R1, 0, STOPPED)
    else:
        assert (tau, rec, status) == (2 * R1 + 1, -1, TRUNCATED)


def test_dpse_threshold_boundary_table_puts_the_first_elimination_at_even_odds():
    # K = 2 at the boundary: m̃_0 − m̃_1 = width + (L_0 − L_1) with L_a ~ Lap(1/(εR_1)) i.i.d.,
    # so arm 1 is eliminated after epoch 1 with probability 1/2 exactly; 4000 runs: the
    # share lies in [0.45, 0.55] but with probability < 1e-9 (Hoeffding: 2·exp(-2·4000·0.05²))
    eps, risk = 1.0, 0.01
    spec = registry.get("dp-se")
    p = spec.resolve_params({"means": "0.6,0.4", "risk": risk})
    prep = spec.prepare(eps, p)
    R1 = R_hand(2, 1, eps, risk)
    H = 2 * R1 + 1
    (table, recipe), = bl.dpse_boundary(prep, H)
    width = 2 * (math.sqrt(math.log(8 * 2 / risk) / (2 * R1)) + math.log(4 * 2 / risk) / (eps * R1))
    assert recipe["name"] == "threshold-boundary" and table.shape == (H, 2)
    assert table[0, 0] - table[0, 1] == pytest.approx(width) and (table == table[0]).all()
    _, taus, recs, stats, _ = run_batch(spec.request(prep, table, 4000, 1), 0)
    stopped = (taus == 2 * R1) & (stats == STOPPED)
    assert 0.45 <= stopped.mean() <= 0.55 and (recs[stopped] == 0).all()
    for e in (0.001, 0.1, 10.0):          # the gap is at most 1/4 (R_1's terms), rows in [0, 1]
        (t, _), = bl.dpse_boundary(spec.prepare(e, p), H)
        assert 0 < t[0, 0] - t[0, 1] <= 0.25
    assert registry.get("dp-se-regret").extra["boundary_tables"] is bl.dpse_regret_boundary
    assert "boundary_tables" not in registry.get("adap-tt").extra


def test_dpse_regret_boundary_puts_arm_0_in_the_noise_tail():
    # K = 2, arm 1 on top, the gap 2 noise scales b short of the threshold: arm 0 is eliminated
    # iff L_1 − L_0 > 2b, probability (1 + 1)·e^-2/2 = 0.1353 (difference of two i.i.d.
    # Laplace(b)); 8000 runs: the share lies outside ±0.04 with probability < 2e-11 (Hoeffding)
    eps, risk = 1.0, 0.01
    spec = registry.get("dp-se")
    prep = spec.prepare(eps, spec.resolve_params({"means": "0.4,0.6", "risk": risk}))
    R1 = R_hand(2, 1, eps, risk)
    H = 2 * R1 + 1
    (table, recipe), (exact, at) = bl.dpse_regret_boundary(prep, H)
    (even, _), = bl.dpse_boundary(prep, H, top=1)
    assert recipe["name"] == "threshold-boundary" and table.shape == (H, 2)
    # the second table is the threshold itself: a raw gap there is decided by one reward
    assert at["name"] == "threshold-exact" and np.array_equal(exact, even)
    assert table[0, 1] > table[0, 0] and (table == table[0]).all()
    assert (even[0, 1] - even[0, 0]) - (table[0, 1] - table[0, 0]) == pytest.approx(2 / (eps * R1))
    _, taus, recs, stats, _ = run_batch(spec.request(prep, table, 8000, 1), 0)
    eliminated = (taus == 2 * R1) & (stats == STOPPED) & (recs == 1)
    assert abs(eliminated.mean() - math.exp(-2)) <= 0.04


def replay_dpse(table, acts, rel, tau, rec, eps, risk, cumulative=False):
    """Check every release of a stopped DP-SE run against R_e and the Laplace scale 1/(εR_e), from the log alone."""
    K = table.shape[1]
    active = list(range(K))
    i, e, n, ncum = 0, 0, 0, np.zeros(K, int)
    while len(active) > 1:
        e += 1
        R = R_hand(len(active), e, eps, risk)
        noisy = {}
        for a in active:
            t, arm, phase, count, value, nz, scale, dist = rel[i]
            n += R
            ncum[a] += R
            assert (t, arm, phase, count, dist) == (n, a, e, R, LAPLACE)
            assert acts[n - R:n].tolist() == [a] * R
            block = table[n - R:n, a].sum()
            assert value == pytest.approx(block / (ncum[a] if cumulative else R), rel=1e-12)
            assert scale == pytest.approx(1 / (eps * R), rel=1e-15)
            noisy[a] = nz
            i += 1
        h = math.sqrt(math.log(8 * len(active) * e * e / risk) / (2 * R))
        c = math.log(4 * len(active) * e * e / risk) / (eps * R)
        top = max(noisy.values())
        active = [a for a in active if not top - noisy[a] > 2 * (h + c)]
    assert i == len(rel) and n == tau and active == [rec]


@pytest.mark.parametrize("epoch_mean", ["epoch", "cumulative-count"])
def test_dpse_release_log_replays_the_rule(epoch_mean):
    means, eps, risk = (0.8, 0.75, 0.6, 0.3), 0.5, 0.05
    table = bernoulli_table(means, 600_000, seed=7)
    for seed in range(3):
        tau, rec, status, nr, acts, rel = run("dp-se", eps, table, seed=seed, means=means,
                                              risk=risk, epoch_mean=epoch_mean)
        assert status == STOPPED and nr == len(rel)
        assert len({r[2] for r in rel}) >= 3              # at least three epochs replayed
        replay_dpse(table, acts, rel, tau, rec, eps, risk, epoch_mean == "cumulative-count")


@pytest.mark.statistical
def test_dpse_noise_is_laplace_with_logged_scale():
    # 4000 runs × 2 releases of epoch 1 (K = 2, δ = 0.5, ε = 0.7). Under a correct kernel the KS
    # p-value is Uniform(0,1): false-failure probability 1e-7.
    K, eps, risk, runs = 2, 0.7, 0.5, 4000
    R1 = R_hand(K, 1, eps, risk)
    table = bernoulli_table((0.6, 0.4), K * R1, seed=2)
    spec = registry.get("dp-se")
    prep = spec.prepare(eps, spec.resolve_params({"means": (0.6, 0.4), "risk": risk}))
    rng = np.random.default_rng(12345)
    acts, rel = np.empty(0, np.int16), np.empty((2, 8))
    z = np.empty((runs, 2))
    for i in range(runs):
        *_, nr = spec.kernel(rng, table, prep.means, prep.theta, prep.aux, K * R1, acts, rel,
                             np.empty(0))
        assert nr == 2
        z[i] = (rel[:, 5] - rel[:, 4]) / rel[:, 6]
        assert rel[0, 6] == rel[1, 6] == pytest.approx(1 / (eps * R1), rel=1e-15)
    assert (z[:, 0] != z[:, 1]).all()                    # one fresh draw per arm
    assert stats.kstest(z.ravel(), "laplace").pvalue > 1e-7


# ------------------------------------------------------------------------------------ both

CASES = [("ttucb", 1.0), ("dp-se", 0.5)]


@pytest.mark.parametrize("name,eps", CASES)
def test_same_seed_same_result(name, eps):
    spec = registry.get(name)
    prep = spec.prepare(eps, spec.resolve_params({"means": (0.9, 0.6, 0.5)}))
    table = np.zeros((0, 3))                  # every reward drawn from the run's rng
    views = np.array([8, 64, 4096], np.int64)
    out = [run_batch(spec.request(prep, table, 20, 99, views, 1 << 22)) for _ in range(2)]
    for x, y in zip(*out):
        assert np.array_equal(x, y)
    assert (out[0][3] == STOPPED).all()


@pytest.mark.parametrize("name,eps", CASES)
def test_limit_truncates_and_cap_halts(name, eps):
    K = 6
    table = one_zero_table(K, 20_000)
    tau0, rec0, st0, *_ = run(name, eps, table)
    assert st0 == STOPPED and rec0 == 0
    for lim in (3, K + 5, tau0 - 1):
        tau, rec, st, *_ = run(name, eps, table, limit=lim)
        assert (tau, rec, st) == (lim, -1, TRUNCATED)
        tau, rec, st, *_ = run(name, eps, table, max_steps=lim)
        assert (tau, rec, st) == (lim, -1, CAPPED)
    # a decision available at n is taken before the cap/limit checks
    assert run(name, eps, table, limit=tau0)[:3] == (tau0, 0, STOPPED)
    assert run(name, eps, table, max_steps=tau0)[:3] == (tau0, 0, STOPPED)
    assert run(name, eps, table, limit=10, max_steps=10)[:3] == (10, -1, CAPPED)


def test_registry_entries():
    tt, se = registry.get("ttucb"), registry.get("dp-se")
    assert (tt.private, se.private, tt.model, se.model) == (False, True, "user", "user")
    pt, ps = tt.resolve_params({}), se.resolve_params({})
    assert pt["means"] == MU1 == ps["means"] and pt["risk"] == 0.01 == ps["risk"]
    assert pt["beta"] == 0.5 and pt["max_steps"] == ps["max_steps"] == 1 << 24
    assert tt.audit_horizon(pt) == 32
    assert se.audit_horizon(ps) == 6 * 1085 + 1 == 6 * R_hand(6, 1, 1.0, 0.01) + 1
    assert se.audit_horizon({**ps, "horizon": 77}) == 77
    assert ps["epoch_mean"] == "epoch"
    assert se.prepare(0.5, {**ps, "epoch_mean": "cumulative-count"}).theta[bl.SE_EPOCH_MEAN] == 1
    assert [r for r, _ in tt.structure(pt)][0] == 0


@pytest.mark.parametrize("eps", [0.01, 0.5, 5.0])
def test_dpse_structure_rows_are_in_arm0_epoch1(eps):
    spec = registry.get("dp-se")
    p = spec.resolve_params({})
    rows = [r for r, _ in spec.structure(p)]
    R1 = R_hand(6, 1, eps, 0.01)
    table = bernoulli_table(MU1, R1, seed=0)
    *_, acts, _ = run("dp-se", eps, table)
    assert all(r < R1 and acts[r] == 0 for r in rows)
