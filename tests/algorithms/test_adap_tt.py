"""AdaP-TT bookkeeping (Azize et al. 2023, arXiv:2309.02202, Algorithm 2), checked from the
white-box release log. Reference values of C_G and of the thresholds: worked numbers computed
independently of this code (Python with NumPy/SciPy) from eqs. (4), (14) and (15), 6 significant
digits.

Every test is deterministic given its seed except the Laplace KS tests, whose false-failure
probability is the KS p-value threshold (1e-7 each).
"""
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.algorithms import registry
from dpaudit.algorithms.adap_tt import glr as glr
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import CAPPED, STOPPED, TRUNCATED


def run(name, eps, params, table, seed, limit=None, n_rec=1 << 16):
    spec = registry.get(name)
    p = spec.resolve_params(params)
    prep = spec.prepare(eps, p)
    actions = np.full(n_rec, -1, np.int16)
    releases = np.zeros((4096, 8))
    limit = table.shape[0] if limit is None else limit
    tau, rec, status, nr = spec.kernel(np.random.default_rng(seed), table, prep.means,
                                       prep.theta, prep.aux, limit, actions, releases,
                                       np.empty(0))
    return tau, rec, status, actions[:min(tau, n_rec)], releases[:nr], p


EASY = {"means": "0.9,0.1", "risk": "0.1"}


def easy_table(seed, T=1 << 15):
    return (np.random.default_rng(seed).random((T, 2)) < [0.9, 0.1]).astype(float)


def phase_windows(actions, arm):
    """Indices of the samples of ``arm`` split into its phases: [initial], then doubling."""
    idx = np.flatnonzero(actions == arm)
    out, start, k = [idx[:1]], 1, 2
    while start + 2 ** (k - 2) <= idx.size:
        out.append(idx[start:start + 2 ** (k - 2)])
        start += 2 ** (k - 2)
        k += 1
    return out


@pytest.mark.parametrize("seed", range(5))
def test_switches_at_powers_of_two_with_forgetting(seed):
    table = easy_table(seed)
    tau, rec, status, actions, rel, _ = run("adap-tt", 2.0, EASY, table, seed)
    assert status == STOPPED
    assert len(actions) == tau  # τ counts every sample taken
    for arm in (0, 1):
        wins = phase_windows(actions, arm)
        r = rel[rel[:, 1] == arm]
        for row, window in zip(r, wins):
            t, _, k, count, value = row[:5]
            k, t, count = int(k), int(t), int(count)
            if k == 1:
                assert t == 2 and count == 1
                assert value == table[arm, arm]
                continue
            # switch at the start of the round after the count reaches 2^(k-1)
            assert np.sum(actions[:t] == arm) == 2 ** (k - 1)
            assert actions[t - 1] == arm
            assert count == 2 ** (k - 2) == len(window)
            # forgetting: the mean of this phase's rows only
            assert value == pytest.approx(table[window, arm].mean(), abs=1e-12)


def test_noise_scale_is_one_over_eps_times_phase_length():
    eps = 0.7
    z = []
    for seed in range(120):
        _, _, _, _, rel, _ = run("adap-tt", eps, EASY, easy_table(seed), seed)
        assert np.allclose(rel[:, 6], 1 / (eps * rel[:, 3]))
        z.append((rel[:, 5] - rel[:, 4]) / rel[:, 6])
    z = np.concatenate(z)
    assert z.size > 2000
    assert stats.kstest(z, "laplace").pvalue > 1e-7
    # the classic bug, noise at half or twice the scale, is rejected by the same test
    assert stats.kstest(z * 2, "laplace").pvalue < 1e-7
    assert stats.kstest(z / 2, "laplace").pvalue < 1e-7


def test_stopping_rule_and_recommendation_follow_eq_4():
    eps, K = 2.0, 2
    for seed in range(5):
        tau, rec, status, actions, rel, p = run("adap-tt", eps, EASY, easy_table(seed), seed)
        mu, ntil, kph = np.zeros(K), np.ones(K), np.ones(K, int)
        for i, row in enumerate(rel):
            arm = int(row[1])
            mu[arm], ntil[arm], kph[arm] = row[5], row[3], int(row[2])
            if i < K - 1:
                continue
            ahat = int(np.argmax(mu))
            fires = all(
                (mu[ahat] - mu[b]) ** 2 / (1 / ntil[ahat] + 1 / ntil[b])
                >= 2 * glr.c_eps(kph[ahat], kph[b], ntil[ahat], ntil[b], p["risk"], eps, K)
                for b in range(K) if b != ahat)
            last = i == len(rel) - 1
            assert fires == last, f"seed {seed}: stopping rule disagrees at release {i}"
            if last:
                assert rec == ahat and int(row[0]) == tau


def reference_adap_tt(table, K, eps, beta, releases, limit):
    """Readable pure-Python Algorithm 2 with the noisy phase means taken from ``releases``
    (frozen noise): returns the action sequence. Leader eq. 22, TC challenger eq. 23 with
    global counts, tracking with β; switches at doubling; ties to the lowest index."""
    noisy = {(int(r[1]), int(r[2])): r[5] for r in releases}
    mu = [noisy[(a, 1)] for a in range(K)]
    N, k, nsw, ntil = [1] * K, [1] * K, [1] * K, [1.0] * K
    L, M, C = [0] * K, [0] * K, [0] * K
    actions, last = list(range(K)), None

    def leader():
        return max(range(K), key=lambda a: (mu[a] + math.sqrt(k[a] / ntil[a])
                                            + k[a] / (eps * ntil[a]), -a))
    B = leader()
    while len(actions) < limit:
        if last is not None and C[last] >= nsw[last]:
            a = last
            k[a] += 1
            ntil[a] = C[a]
            if (a, k[a]) not in noisy:     # the run stopped at this switch
                break
            mu[a] = noisy[(a, k[a])]
            nsw[a], C[a] = N[a], 0
            B = leader()
        if M[B] <= beta * (L[B] + 1):
            i = B
        else:
            i = min((a for a in range(K) if a != B),
                    key=lambda a: ((mu[B] - mu[a]) / math.sqrt(1 / N[B] + 1 / N[a]), a))
        actions.append(i)
        N[i] += 1
        C[i] += 1
        L[B] += 1
        M[B] += i == B
        last = i
    return actions


@pytest.mark.parametrize("seed", range(6))
def test_actions_match_reference_replay(seed):
    K, eps = 4, 0.5
    params = {"means": "0.8,0.7,0.6,0.5"}
    table = np.random.default_rng(seed).random((3000, K))
    tau, _, status, actions, rel, _ = run("adap-tt", eps, params, table, seed)
    assert status == TRUNCATED and tau == 3000
    ref = reference_adap_tt(table, K, eps, 0.5, rel, tau)
    assert list(actions) == ref


def test_mutant_releases_cumulative_means():
    table = easy_table(3)
    _, _, _, actions, rel, _ = run("adap-tt-no-forgetting", 2.0, EASY, table, 3)
    later = rel[rel[:, 2] >= 3]
    assert len(later) > 4
    for t, arm, k, count, value in later[:, :5]:
        arm, t = int(arm), int(t)
        rows = np.flatnonzero(actions[:t] == arm)
        assert value == pytest.approx(table[rows, arm].mean(), abs=1e-12)
        assert value != pytest.approx(table[rows[-int(count):], arm].mean(), abs=1e-12) or \
            np.ptp(table[rows, arm]) == 0


def test_limit_truncates_and_max_steps_caps():
    table = easy_table(0)
    tau, rec, status, *_ = run("adap-tt", 0.5, EASY, table, 0, limit=100)
    assert (tau, rec, status) == (100, -1, TRUNCATED)
    tau, rec, status, *_ = run("adap-tt", 0.5, {**EASY, "max_steps": "100"}, table, 0)
    assert (tau, rec, status) == (100, -1, CAPPED)


def test_same_seed_same_transcript():
    table = easy_table(1)
    a = run("adap-tt", 1.0, EASY, table, 11)
    b = run("adap-tt", 1.0, EASY, table, 11)
    c = run("adap-tt", 1.0, EASY, table, 12)
    assert np.array_equal(a[3], b[3]) and np.array_equal(a[4], b[4])
    assert not np.array_equal(a[4], c[4])


def test_c_G_matches_definition_and_reference_values():
    reference = {0.5: 1.964124, 1: 2.507095, 2: 3.582930, 3: 4.648365, 5: 6.757320,
              10: 11.954646, 20: 22.203253, 50: 52.588880}
    lam = np.linspace(0.5 + 1e-6, 1 - 1e-6, 200_001)
    g = np.array([glr.g_G(v) for v in lam[::50]])
    for x, want in reference.items():
        assert glr.C_G(x) == pytest.approx(want, abs=2e-6)
        grid_min = np.min((g + x) / lam[::50])
        assert glr.C_G(x) <= grid_min + 1e-12 and glr.C_G(x) == pytest.approx(grid_min, abs=1e-4)
    assert glr.C_G(1.0) > 1.0 + math.log(1.0)   # x + ln x is anti-conservative below 6.1


def test_extreme_risks_give_a_finite_threshold_table_or_a_one_line_input_error():
    # (K − 1)·ζ(s)²/δ overflows a float at δ = 5e-301, s = 1.0001 (ζ ≈ 1e4); its log does not
    table = glr.cg_table(5e-301, 5, 1.0001, 4)
    lz = math.log(4) + 2 * math.log(glr.zeta(1.0001)) - math.log(5e-301)
    for p in (1, 2, 3, 4, 6, 8, 9, 12, 16):
        assert table[p] == pytest.approx(glr.C_G(0.5 * (lz + 1.0001 * math.log(p))), rel=1e-12)
    spec = registry.get("adap-tt")
    spec.prepare(0.5, spec.resolve_params({"risk": 1e-300, "s": 1.0001}))   # finite: no error
    with pytest.raises(InputError, match=r"risk=1e-300 with s=1\.00000001 is not valid"):
        spec.prepare(0.5, spec.resolve_params({"risk": 1e-300, "s": 1.00000001}))


def test_thresholds_match_reference_magnitudes():
    # K = 6, δ = 0.01, s = 2, both arms in phase k with Ñ = 2^(k-2)
    rows = {2: (19.768, 401.2, 82.29), 8: (28.396, 122.2, 113.7), 16: (33.340, 133.4, 133.4)}
    for k, (cnp, two_c_eps1, two_c_eps10) in rows.items():
        n = 2.0 ** (k - 2)
        assert glr.c_k(k * k, n, n, 0.005, 6) == pytest.approx(cnp, abs=1e-3)
        assert 2 * glr.c_eps(k, k, n, n, 0.01, 1.0, 6) == pytest.approx(two_c_eps1, rel=1e-3)
        assert 2 * glr.c_eps(k, k, n, n, 0.01, 10.0, 6) == pytest.approx(two_c_eps10, rel=1e-3)


# ---------------------------------------------------------------- runs that never stop

WITNESS_RELEASE = -8.1069   # arm 0's phase-1 release in run 0 of seed 7 (docs/papers/azize2023.md finding)


def starved_run(bonus, steps=1 << 20):
    """AdaP-TT on μ1 (ε = 0.5) with arm 0's phase-1 release replayed at the witness's value."""
    spec = registry.get("adap-tt")
    p = spec.resolve_params({"bonus": bonus})
    prep = spec.prepare(0.5, p)
    actions = np.full(steps, -1, np.int16)
    releases = np.zeros((4096, 8))
    tau, rec, status, nr = spec.kernel(np.random.default_rng(0), np.zeros((0, 6)), prep.means,
                                       prep.theta, prep.aux, steps, actions, releases,
                                       np.array([WITNESS_RELEASE]))
    return tau, status, actions[:tau], releases[:nr]


def test_the_faithful_leader_bonus_never_samples_a_best_arm_released_low_again():
    """docs/papers/azize2023.md: under eq. 22's bonus k_a/Ñ_a (the paper's letter)
    an arm that is not pulled gains no bonus; arm 0 (μ = 0.95) released at −8.1 has index
    −8.1 + 1 + 2 = −5.1 for ever, and its transportation cost (≈ 9) stays above the tied
    arms' (O(1)): it is never pulled after the initialisation, its Ñ = 1 keeps the threshold
    out of reach, and the run does not stop (2^20 samples here; the witness ran to 2^30)."""
    tau, status, actions, rel = starved_run("phase")
    assert status == TRUNCATED and tau == 1 << 20
    assert (actions[6:] == 0).sum() == 0
    assert rel[rel[:, 1] == 0].shape[0] == 1                  # arm 0: the phase-1 release only
    assert rel[rel[:, 1] == 1][-1, 2] >= 15                    # a tied arm reached phase ≥ 15


def test_the_log_bonus_samples_it_again_and_the_run_recovers():
    """The ``bonus=log`` option (ln n in place of k_a, the public draft code's choice): arm 0's
    index grows with ln n, so it is pulled again within about a hundred samples and its mean is
    re-estimated phase after phase."""
    tau, status, actions, rel = starved_run("log")
    pulls = np.flatnonzero(actions[6:] == 0)
    assert pulls.size > 0 and pulls[0] < 200                   # sample 107 here
    assert rel[rel[:, 1] == 0][-1, 2] >= 15                    # arm 0 reached phase ≥ 15 (19 here)
