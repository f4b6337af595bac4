"""Hu, Huang, Mehta, Hegde (2021, arXiv:2102.07929), lazy DP bandits (algorithms/lazy_dp/algorithm.py): Anytime-Lazy-UCB, Lazy-DP-TS, Thompson
sampling, the lazy-ucb mutants, RNM-FTNL, naive FTNL and DP-SE for regret, against worked
numbers computed independently of this code (NumPy/SciPy) from the paper's Algorithms 1-3 and
Theorems 5, 9 and 12, plain-Python references
written from the paper's pseudo-code (Algorithms 1–4) and the bookkeeping invariants (epoch
doubling, fresh-sample sums, noise scales, the lazy schedule).

Deterministic unless stated. Statistical tests are seeded; each states its false-failure
probability (≤ 1e-6 per test, from Hoeffding's inequality P(|p̂ − p| ≥ t) ≤ 2·exp(−2nt²)).
"""
import math

import numba as nb
import numpy as np
import pytest

from dpaudit.algorithms import registry
from dpaudit.algorithms.adap_tt import baselines as baselines
from dpaudit.algorithms.lazy_dp import algorithm as ld
from dpaudit.auditing import whitebox as wb
from dpaudit.core.request import Claim
from dpaudit.data.tables import NeighbourPair
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import STOPPED, TRUNCATED, run_batch
from kernel_calls import assert_releases, call, prepared, random_table

S1, S2 = ld.SETTING_1, ld.SETTING_2
BANDIT = ("lazy-ucb", "lazy-dp-ts", "ts-beta", "lazy-ucb-reuse", "lazy-ucb-eager")
FULL = ("rnm-ftnl", "ftnl")


# ------------------------------------------------------------- plain-Python references

def ref_lazy(table, eps, mode, seed, forget=True, eager=False, log_scale=1.0):
    """Algorithms 1 (mode "ucb"), 3 ("dpts") and 2 ("ts") written from the paper's listings,
    with the same rng call order as the kernel. Returns (actions,
    releases as (t, arm, phase, count, value, noisy, scale))."""
    rng = np.random.default_rng(seed)
    T, K = table.shape
    acts, rels = [], []

    def beta(a, b):
        return ref_beta(rng, a, b)

    def argmax(th):                         # first maximum, as the kernel
        J, best = 0, -1.0
        for j, v in enumerate(th):
            if v > best:
                J, best = j, v
        return J

    if mode == "ts":
        S, O = [0.0] * K, [0.0] * K
        for t in range(T):
            th = [beta(S[j] + 1.0, O[j] - S[j] + 1.0) for j in range(K)]
            J = argmax(th)
            acts.append(J)
            S[J] += table[t, J]
            O[J] += 1.0
        return acts, rels
    mt, O, r, N, Nall = [0.0] * K, [1] * K, [0] * K, [0] * K, [0] * K
    Phi, Sall = [0.0] * K, [0.0] * K
    for j in range(min(K, T)):            # line 1: arm j at round j
        x = table[j, j]
        acts.append(j)
        noise = rng.laplace(0.0, 1.0 / eps)
        mt[j] = x + noise
        rels.append((j + 1, j, 0, 1, x, mt[j], 1.0 / eps))
        Sall[j], Nall[j] = x, 1
    for n in range(K, T):
        t = n + 1
        if mode == "ucb":
            U = [mt[j] + math.sqrt(3 * math.log(t) / O[j]) + 3 * math.log(t) / (eps * O[j])
                 for j in range(K)]
        else:
            U = []
            for j in range(K):
                mb = min(1.0, max(0.0, mt[j] + 3 * math.log(t) * log_scale / (eps * O[j])))
                U.append(beta(mb * O[j] + 1.0, (1.0 - mb) * O[j] + 1.0))
        J = argmax(U) if mode == "dpts" else int(np.argmax(U))
        x = table[n, J]
        acts.append(J)
        N[J] += 1
        Phi[J] += x
        Sall[J] += x
        Nall[J] += 1
        if eager or N[J] == 2 ** (r[J] + 1):
            cnt, val = (N[J], Phi[J] / N[J]) if forget else (Nall[J], Sall[J] / Nall[J])
            scale = 1.0 / (eps * cnt)
            mt[J] = val + rng.laplace(0.0, scale)
            r[J] += 1
            O[J] = cnt
            N[J], Phi[J] = 0, 0.0
            rels.append((n + 1, J, r[J], cnt, val, mt[J], scale))
    return acts, rels


def ref_gamma(rng, shape):
    """Gamma(shape ≥ 1) by Marsaglia–Tsang (d = shape − 1/3, c = 1/sqrt(9d); squeeze
    u < 1 − (cz·z)²/(12·min(1, 1 + cz)⁴), then the exact log test), in the kernel's order of
    rng calls."""
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        z = rng.standard_normal()
        y = c * z
        if y <= -1.0:
            continue
        v = (1.0 + y) * (1.0 + y) * (1.0 + y)
        u = rng.random()
        m = min(1.0 + y, 1.0)
        m4 = 12.0 * (m * m) * (m * m)
        if u * m4 < m4 - (y * z) * (y * z):
            return d * v
        if math.log(u) < 0.5 * z * z + d * (1.0 - v + math.log(v)):
            return d * v


def ref_beta(rng, a, b):
    """Beta(a, b): exp(−E/a) for b = 1, 1 − exp(−E/b) for a = 1 (E ~ Exp(1)), else
    X/(X + Y) with X = Gamma(a), Y = Gamma(b) drawn in that order."""
    if a > 1.0 and b > 1.0:
        x = ref_gamma(rng, a)
        return x / (x + ref_gamma(rng, b))
    if b == 1.0:
        return math.exp(-rng.standard_exponential() / a)
    return -math.expm1(-rng.standard_exponential() / b)


def ref_ftnl(table, scale, seed, T=None):
    """Algorithm 4 from the listing with Lap(``scale``); returns (actions,
    releases)."""
    rng = np.random.default_rng(seed)
    rows, K = table.shape
    T = rows if T is None else T
    acts, rels = [], []
    J, s, t = 0, 0, 0
    Phi = np.zeros(K)
    while t < rows:
        length = 1 if s == 0 else 2 ** s
        for _ in range(length):
            if t >= rows:
                return acts, rels
            acts.append(J)
            Phi += table[t]
            t += 1
        if t < T:
            noisy = [Phi[j] + rng.laplace(0.0, scale) for j in range(K)]
            rels += [(t, j, s, length, Phi[j], noisy[j], scale) for j in range(K)]
            J = int(np.argmax(noisy))
        Phi[:] = 0.0
        s += 1
    return acts, rels


# --------------------------------------------------- independent worked numbers

@pytest.mark.parametrize("means, eps, rate, d_ucb, d_ts, thm9", [
    (S1, 0.25, 276.3, (15, 13, 12, 12), (16, 14, 14, 13), 4806),
    (S1, 0.5, 230.3, (15, 13, 12, 11), (16, 14, 13, 12), 4294),
    (S1, 1.0, 230.3, (15, 13, 12, 11), (16, 14, 13, 12), 4294),
    (S2, 0.25, 552.6, (16,) * 4, (17,) * 4, 6109),
    (S2, 1.0, 552.6, (16,) * 4, (17,) * 4, 6109)])
def test_regret_bound_worked_numbers(means, eps, rate, d_ucb, d_ts, thm9):
    T = 1e6
    assert ld.regret_rate(means, eps, T) == pytest.approx(rate, abs=0.05)
    assert tuple(ld.sample_complexity(means, eps, T, 24.0)) == d_ucb
    assert tuple(ld.sample_complexity(means, eps, T, 72.0)) == d_ts
    assert round(ld.thm9_bound(means, eps)) == thm9


def test_thm12_and_first_terms_worked_numbers():
    for eps, lb in ((0.25, 0.063), (0.5, 0.032), (1.0, 0.016)):
        assert round(ld.thm12_private_lb(5, eps), 3) == lb
    # Σ_j Δ_j ω^{(d_j+1)}: S1 UCB 34,815–38,911, S1 TS 69,631–90,111, S2 104,857 / 209,715
    assert round(ld.explicit_first_term(S1, 0.5, 1e6)) == 34815
    assert round(ld.explicit_first_term(S1, 0.25, 1e6)) == 38911
    assert round(ld.explicit_first_term(S1, 0.5, 1e6, 72.0)) == 69631
    assert round(ld.explicit_first_term(S1, 0.25, 1e6, 72.0)) == 90111
    assert round(ld.explicit_first_term(S2, 1.0, 1e6)) == 104857
    assert round(ld.explicit_first_term(S2, 1.0, 1e6, 72.0)) == 209715


def test_first_decision_losses_worked_numbers():
    """Alg. 1's first decision J_{K+1} = argmax of K Laplace means (equal bonuses): exact loss
    of {J_{K+1} = i} with X_i(i) 0 vs 1 and the other initial rewards 1."""
    for K, want in ((5, (0.956, 0.968, 0.980)), (2, (0.529, 0.554, 0.595))):
        for eps, w in zip((0.25, 0.5, 1.0), want):
            loss = math.log((1.0 / K) / ld.noisy_max_win(-1.0, K, 1.0 / eps)) / eps
            assert round(loss, 3) == w
            if K == 2:                                        # the closed form
                assert loss * eps == pytest.approx(eps - math.log(1 + eps / 2), abs=1e-9)


@pytest.mark.slow
def test_rnm_epoch_zero_loss_exceeds_eps():
    """The audit finding on Theorem 8 (module doc): row 0 = action a 0 → 1, others 1 → 0 moves
    a's gap from −1 to +1, and RNM with Lap(1/ε) gives P(J = a) = 0.4357 vs 0.0750 at K = 5,
    ε = 1 (loss 1.759 > ε); Lap(2/ε) (``rnm_scale=corrected``) and Lap(K/ε) stay ≤ ε."""
    p_up, p_down = ld.noisy_max_win(1.0, 5, 1.0), ld.noisy_max_win(-1.0, 5, 1.0)
    assert (round(p_up, 4), round(p_down, 4)) == (0.4357, 0.0750)
    assert math.log(p_up / p_down) == pytest.approx(1.759, abs=1e-3)
    for eps in (0.25, 0.5, 1.0):
        for scale in (2.0 / eps, 5.0 / eps):
            for g in np.linspace(-4, 2, 13):
                p, q = ld.noisy_max_win(g + 2, 5, scale), ld.noisy_max_win(g, 5, scale)
                assert math.log(p / q) <= eps + 1e-9
                assert math.log((1 - q) / (1 - p)) <= eps + 1e-9


# ------------------------------------------------------ kernels vs the plain references

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name, mode, kw", [
    ("lazy-ucb", "ucb", {}), ("lazy-dp-ts", "dpts", {}),
    ("lazy-dp-ts", "dpts", {"bonus_log": "2"}), ("lazy-dp-ts", "dpts", {"bonus": 0.3}),
    ("lazy-dp-ts", "dpts", {"bonus_log": "2", "bonus": 0.05}), ("ts-beta", "ts", {}),
    ("lazy-ucb-reuse", "ucb", {"forget": False}),
    ("lazy-ucb-eager", "ucb", {"forget": False, "eager": True})])
def test_lazy_kernel_matches_reference(seed, name, mode, kw):
    eps = (0.25, 0.5, 1.0, 2.0)[seed % 4]
    table = random_table(seed, 400)
    params = {k: kw[k] for k in ("bonus_log", "bonus") if k in kw}
    tau, rec, status, acts, rel = call(name, table, eps, seed=seed, horizon=400, **params)
    # the bonus c·log t/(εO): the reference's 3·ln t·log_scale/(εO)
    log_scale = (1 / math.log(2) if "bonus_log" in kw else 1.0) * kw.get("bonus", 3.0) / 3.0
    ref_a, ref_r = ref_lazy(table, eps, mode, seed, kw.get("forget", True),
                            kw.get("eager", False), log_scale)
    assert (tau, rec, status) == (400, -1, STOPPED)
    assert acts.tolist() == ref_a
    assert_releases(rel, ref_r)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", FULL)
def test_ftnl_kernel_matches_reference(seed, name):
    eps = (0.25, 0.5, 1.0)[seed % 3]
    T = (63, 64, 100)[seed % 3]
    table = random_table(seed, T)
    tau, rec, status, acts, rel = call(name, table, eps, seed=seed, horizon=T)
    scale = (1.0 if name == "rnm-ftnl" else 5.0) / eps
    ref_a, ref_r = ref_ftnl(table, scale, seed)
    assert (tau, rec, status) == (T, -1, STOPPED)
    assert acts.tolist() == ref_a
    assert_releases(rel, ref_r)


def test_audit_limit_truncates_without_changing_the_prefix():
    table = random_table(1, 200)
    for name in BANDIT + FULL:
        full = call(name, table, 1.0, seed=3, horizon=200)
        cut = call(name, table, 1.0, seed=3, horizon=200, limit=37)
        assert cut[:3] == (37, -1, TRUNCATED)
        assert cut[3].tolist() == full[3][:37].tolist()


# ----------------------------------------------------------------------- bookkeeping

def _epochs_per_arm(rel, K):
    return [rel[rel[:, 1] == a] for a in range(K)]


def test_lazy_ucb_epoch_doubling_fresh_sums_and_noise_scales():
    """Alg. 1 on fresh Bernoulli rewards of a 20 000-row table: arm j's releases have counts
    1, 2, 4, ... (epoch r = 2^r samples), the r-th is made at the arm's ω^{(r)} = 2^{r+1} − 1-th
    pull, its exact value is the mean of exactly the rewards of those pulls (fresh samples,
    each reward in exactly one release), and scale·count·ε = 1."""
    for eps in (0.25, 1.0):
        T, K = 20_000, 5
        table = (np.random.default_rng(7).random((T, K)) < np.array(S1)).astype(float)
        tau, _, _, acts, rel = call("lazy-ucb", table, eps, seed=11, horizon=T)
        used = np.zeros(T, int)
        for a, er in enumerate(_epochs_per_arm(rel, K)):
            pulls = np.flatnonzero(acts == a)                     # rows of arm a's pulls
            assert er[:, 2].tolist() == list(range(len(er)))      # phase r = 0, 1, 2, ...
            assert er[:, 3].tolist() == [2 ** r for r in range(len(er))]
            for r, row in enumerate(er):
                first, last = 2 ** r - 1, 2 ** (r + 1) - 1        # ω^{(r−1)}, ω^{(r)} pulls
                assert row[0] == pulls[last - 1] + 1              # released right after
                assert row[4] == pytest.approx(table[pulls[first:last], a].mean(), abs=1e-12)
                used[pulls[first:last]] += 1
                assert row[6] * row[3] * eps == pytest.approx(1.0, rel=1e-12)
            # unprocessed pulls: fewer than the next epoch's 2^{r+1}
            assert len(pulls) - (2 ** len(er) - 1) < 2 ** len(er)
        assert used.max() == 1                                    # each reward used at most once


def test_mutant_releases_reuse_processed_rewards():
    """lazy-ucb-reuse: same schedule, every release over all the arm's rewards so far (count =
    pulls so far, scale 1/(ε·count)); lazy-ucb-eager: a release after every pull."""
    T, K = 3000, 5
    table = (np.random.default_rng(5).random((T, K)) < np.array(S1)).astype(float)
    _, _, _, acts, rel = call("lazy-ucb-reuse", table, 1.0, seed=2, horizon=T)
    for a, er in enumerate(_epochs_per_arm(rel, K)):
        pulls = np.flatnonzero(acts == a)
        assert er[:, 3].tolist() == [2 ** (r + 1) - 1 for r in range(len(er))]
        for row in er:
            assert row[4] == pytest.approx(table[pulls[:int(row[3])], a].mean(), abs=1e-12)
    _, _, _, acts, rel = call("lazy-ucb-eager", table, 1.0, seed=2, horizon=T)
    assert rel.shape[0] == T                                      # one release per sample
    assert rel[:, 0].tolist() == list(range(1, T + 1))


def test_lazy_schedule_unprocessed_rewards_never_reach_a_decision():
    """Flipping every reward of every arm's unfinished last epoch, and every table entry that
    is never read (the other arms of each row), leaves the transcript and the releases
    bit-identical (unprocessed observations never affect decisions)."""
    T = 3000
    table = (np.random.default_rng(9).random((T, 5)) < np.array(S1)).astype(float)
    for name in ("lazy-ucb", "lazy-dp-ts"):
        _, _, _, acts, rel = call(name, table, 1.0, seed=4, horizon=T)
        flip = np.ones_like(table, dtype=bool)              # unread entries
        flip[np.arange(T), acts] = False
        n_flipped = 0
        for a in range(5):
            pulls = np.flatnonzero(acts == a)
            n_done = 2 ** int((rel[:, 1] == a).sum()) - 1   # processed pulls: ω^{(r)}
            flip[pulls[n_done:], a] = True                  # the unfinished epoch
            n_flipped += len(pulls) - n_done
        assert n_flipped > 0
        _, _, _, acts2, rel2 = call(name, np.where(flip, 1.0 - table, table), 1.0, seed=4,
                                    horizon=T)
        assert acts2.tolist() == acts.tolist()
        assert np.array_equal(rel2, rel)


def test_rnm_epochs_at_the_paper_horizon():
    """T = 10^6: epochs 0..18 complete (epoch 18 ends at round 524 287) and 19 noisy maxes are
    played; epoch 19 is cut short and computes none. Release s is made after
    2^{s+1} − 1 rounds, over 2^s rounds, each action with scale 1/ε; actions are constant in an
    epoch and equal the argmax of the previous epoch's noisy values."""
    T, eps = 10 ** 6, 0.5
    spec, p, prep = prepared("rnm-ftnl", eps, horizon=T)
    actions = np.empty(T, np.int16)
    rel = np.full((4096, 8), np.nan)
    tau, rec, status, nr = spec.kernel(np.random.default_rng(1), np.zeros((0, 5)), prep.means,
                                       prep.theta, prep.aux, T, actions, rel, np.empty(0))
    assert (tau, status, nr) == (T, STOPPED, 19 * 5)
    rel = rel[:nr].reshape(19, 5, 8)
    for s in range(19):
        assert (rel[s, :, 0] == 2 ** (s + 1) - 1).all()
        assert (rel[s, :, 2] == s).all() and (rel[s, :, 3] == (1 if s == 0 else 2 ** s)).all()
        assert (rel[s, :, 6] == 1 / eps).all()
        lo, hi = 2 ** (s + 1) - 1, min(2 ** (s + 2) - 1, T)     # epoch s+1 rows
        assert (actions[lo:hi] == np.argmax(rel[s, :, 5])).all()
    assert actions[0] == 0                                      # the "first action"
    _, _, _, acts, rel_n = call("ftnl", np.zeros((0, 5)), eps, seed=1, horizon=63, limit=63)
    assert (rel_n[:, 6] == 5 / eps).all() and rel_n.shape[0] == 5 * 5   # epoch 5 is not used


def test_rewards_are_clamped_and_tables_validated():
    assert ld._pull.py_func(None, np.array([[1.5, -0.5]]), np.zeros(2), 0, 0) == 1.0
    assert ld._pull.py_func(None, np.array([[1.5, -0.5]]), np.zeros(2), 0, 1) == 0.0
    with pytest.raises(InputError, match=r"outside \[0, 1\]"):
        NeighbourPair.change_row(np.full((12, 5), 2.0), 0, 0.0, 1.0, {}, "x")


# --------------------------------------------------------------- statistical checks

def _first_decision_rate(name, table, eps, n, seed):
    spec, p, prep = prepared(name, eps, horizon=table.shape[0])
    cells, tau, rec, st, kept = run_batch(spec.request(prep, table, n, seed, [table.shape[0]]),
                                          n)
    return kept


def test_lazy_ucb_first_decision_matches_exact_probability():
    """P(J_6 = arm 0) under X_0(0) = 0 (others' initial rewards 1): 0.0750 at ε = 1 (d), 1/5
    under X_0(0) = 1 (d'). n = 400 000 runs per side; Hoeffding with t = 0.005:
    2·exp(−2·4e5·0.005²) = 4e-9 per side."""
    n = 400_000
    for x0, want in ((0.0, ld.noisy_max_win(-1.0, 5, 1.0)), (1.0, 0.2)):
        table = np.ones((6, 5))
        table[0, 0] = x0
        kept = _first_decision_rate("lazy-ucb", table, 1.0, n, 17)
        assert abs((kept[:, 5] == 0).mean() - want) < 0.005


def test_ts_beta_positive_control_loss_ln_2():
    """K = 2, X(1) = (0, 0) vs (1, 1): P(J_2 = J_1) = 1/3 vs 2/3 (ln 2).
    n = 250 000 runs per side, t = 0.006: 2·exp(−2·2.5e5·0.006²) = 2·e^−18 = 3.0e-8 per side."""
    n = 250_000
    for x, want in ((0.0, 1 / 3), (1.0, 2 / 3)):
        spec, p, prep = prepared("ts-beta", 1.0, horizon=2, means=(0.5, 0.5))
        table = np.full((2, 2), x)
        *_, kept = run_batch(spec.request(prep, table, n, 3, [2], 2), n)
        assert abs((kept[:, 1] == kept[:, 0]).mean() - want) < 0.006


@nb.njit
def _beta_draws(seed_rng, a, b, n):
    out = np.empty(n)
    for i in range(n):
        out[i] = ld._beta(seed_rng, a, b, a - 1 / 3, 1 / math.sqrt(9 * a - 3),
                          b - 1 / 3, 1 / math.sqrt(9 * b - 3))
    return out


def test_gamma_constants_newton_updates_match_the_direct_form():
    """ld._gamma_constants along Lazy-DP-TS-like shapes (p = p0 + 3 ln t, t = 1..20000, with
    a jump every 5000 rounds as at an epoch end, and p ≤ 1 entries skipped): d = p − 1/3
    exactly and c within 4 ulp of 1/sqrt(9d) in every round (Newton steps and direct form)."""
    p0 = np.array([1.0, 2.5, 40.0, 3000.0, 7.0e5])
    d = np.full(5, 2.0 / 3.0)
    c = 1.0 / np.sqrt(9.0 * d)
    for t in range(1, 20_001):
        p = p0 + 3.0 * math.log(t) + 50.0 * (t // 5000)
        p[0] = 1.0
        ld._gamma_constants(p, d, c)
        assert (d[1:] == p[1:] - 1.0 / 3.0).all() and d[0] == 2.0 / 3.0
        exact = 1.0 / np.sqrt(9.0 * d)
        assert (np.abs(c - exact) <= 4 * np.spacing(exact)).all(), (t, c - exact)


def test_squeeze_bound_of_the_gamma_sampler():
    """The squeeze of ld._gamma (every d) is a lower bound of Marsaglia–Tsang's log acceptance
    h(z) = z²/2 + d(1 − v + ln v): −(cz·z)²/(12·min(1, 1 + cz)⁴) ≤ h on a dense grid of z,
    for d from 2/3 to 10^6 (up to rounding: |h| ~ 1e-16 where the two meet)."""
    for d in (2 / 3, 1.0, 4.0, 4.5, 37.0, 1e3, 1e6):
        c = 1 / math.sqrt(9 * d)
        z = np.concatenate([np.linspace(-1 / c * (1 - 1e-9), 0, 200_001),
                            np.linspace(0, 40, 200_001)])
        y = c * z
        v = (1 + y) ** 3
        h = 0.5 * z * z + d * (1 - v + np.log(v))
        bound = -(y * z) ** 2 / (12 * np.minimum(1 + y, 1.0) ** 4)
        assert (bound <= h + 1e-12 * (1 + np.abs(h))).all()


@pytest.mark.parametrize("a, b", [(1.3, 1.7), (2.5, 7.25), (7.25, 2.5), (40.5, 12.5),
                                  (3000.5, 1000.5), (750001.0, 250001.0), (5.0, 1.0), (1.0, 9.0)])
def test_beta_sampler_law(a, b):
    """ld._beta (the kernels' Beta sampler: Marsaglia–Tsang gammas with the squeeze, the
    exponential form of Beta(a, 1) / Beta(1, b)) against scipy's exact Beta CDF: the
    Kolmogorov distance of n = 200 000 draws. DKW: P(sup|F̂ − F| > t) ≤ 2·exp(−2nt²); t = 0.0065
    gives 9.2e-8 per case, 7.4e-7 over the 8 cases."""
    from scipy import stats
    n = 200_000
    x = np.sort(_beta_draws(np.random.default_rng(int(a * 7 + b * 13)), a, b, n))
    F = stats.beta(a, b).cdf(x)
    k = np.arange(1, n + 1) / n
    assert max(np.max(k - F), np.max(F - (k - 1 / n))) < 0.0065


@pytest.mark.statistical
def test_ts_beta_transcript_law_exact():
    """The kernel's argmax of sampled Betas follows the law of Thompson sampling: ts-beta with
    K = 2 on a constant 0.3 table, three rounds. Round 1: 1/2 each; round 2 repeats J_1 with
    P = E[Beta(1.3, 1.7)] = 1.3/3 (the other arm is uniform); round 3 after two pulls of one
    arm repeats it with E[Beta(1.6, 2.4)] = 0.4, after one pull of each with 1/2. And K = 5,
    horizon 2: P(J_2 = J_1) = E[θ⁴], θ ~ Beta(1.3, 1.7) = Π_{k<4} (1.3 + k)/(3 + k). n = 400 000
    runs; Hoeffding t = 0.005 per cell: 2·exp(−20) = 4.1e-9, 9 cells: 3.7e-8."""
    n = 400_000
    spec, p, prep = prepared("ts-beta", 1.0, horizon=3, means=(0.5, 0.5))
    table = np.full((3, 2), 0.3)
    *_, kept = run_batch(spec.request(prep, table, n, 21, [3], 3), n)
    a = kept[:, :3].astype(int)
    p2 = 1.3 / 3
    want = {}
    for s in range(8):
        seq = ((s >> 2) & 1, (s >> 1) & 1, s & 1)
        pr = 0.5 * (p2 if seq[1] == seq[0] else 1 - p2)
        pr *= (0.4 if seq[2] == seq[0] else 0.6) if seq[1] == seq[0] else 0.5
        want[seq] = pr
    for seq, pr in want.items():
        got = np.mean((a[:, 0] == seq[0]) & (a[:, 1] == seq[1]) & (a[:, 2] == seq[2]))
        assert abs(got - pr) < 0.005, (seq, got, pr)
    spec, p, prep = prepared("ts-beta", 1.0, horizon=2)
    *_, kept = run_batch(spec.request(prep, np.full((2, 5), 0.3), n, 22, [2], 2), n)
    want = np.prod([(1.3 + k) / (3.0 + k) for k in range(4)])
    assert abs((kept[:, 1] == kept[:, 0]).mean() - want) < 0.005


def test_rnm_epoch_zero_probabilities_on_the_kernel():
    """rnm-ftnl, row 0 = (1, 0, 0, 0, 0) vs (0, 1, 1, 1, 1), ε = 1: P(J^{(0)} = 0) = 0.4357 vs
    0.0750 (loss 1.76 > ε); n = 400 000 per side, t = 0.005: 4e-9 per side."""
    n = 400_000
    for row, want in (((1, 0, 0, 0, 0), 0.43566), ((0, 1, 1, 1, 1), 0.07503)):
        spec, p, prep = prepared("rnm-ftnl", 1.0, horizon=2)
        table = np.array([row, (0, 0, 0, 0, 0)], dtype=float)
        *_, kept = run_batch(spec.request(prep, table, n, 8, [2], 2), n)
        assert abs((kept[:, 1] == 0).mean() - want) < 0.005


# ---------------------------------------------------------------- white-box / replay

def _wb(name, pair, eps=1.0, runs=2000, **params):
    spec, p, prep = prepared(name, eps, **params)
    return wb.whitebox(spec, prep, pair, Claim(eps), wb.Replay(runs, 5))


@pytest.mark.slow
def test_whitebox_release_loss_and_replay():
    """Honest lazy algorithms: release loss ≤ ε and no replay diverges (decisions read data
    only through releases); mutants: loss > ε (a reward re-enters later releases); ts-beta:
    no release, replays diverge (raw data reaches decisions)."""
    base = np.ones((64, 5))
    pair = NeighbourPair.change_row(base, 0, np.zeros(5), np.ones(5), {"name": "tied-high"},
                                    "row 0")
    for name in ("lazy-ucb", "lazy-dp-ts"):
        w = _wb(name, pair, horizon=64)
        assert w["releases_exceed_eps"] is False and w["replay"]["diverged_runs"] == 0
        assert w["max_loss"] == pytest.approx(1.0, abs=1e-9)
    for name in ("lazy-ucb-reuse", "lazy-ucb-eager"):
        w = _wb(name, pair, horizon=64)
        assert w["releases_exceed_eps"] is True and w["max_loss"] > 2.0
    w = _wb("ts-beta", pair, horizon=64)
    assert w["max_loss"] == 0 and w["replay"]["diverged_runs"] > 0
    # RNM: the logged vector is Kε-DP by design (module doc), the replay never diverges
    full = NeighbourPair.change("full", np.full((8, 5), 0.5), (0,), np.array([0, 1, 1, 1, 1.]),
                                np.array([1, 0, 0, 0, 0.]), {"name": "tied-mid"}, "row 0",
                                "arm 0 up")
    w = _wb("rnm-ftnl", full, horizon=8)
    assert w["replay"]["diverged_runs"] == 0 and w["max_loss"] == pytest.approx(5.0, abs=1e-9)
    w = _wb("ftnl", full, horizon=8)
    assert w["releases_exceed_eps"] is False and w["replay"]["diverged_runs"] == 0


# ------------------------------------------------------------------------ DP-SE reuse

def test_dp_se_regret_reuses_the_dp_se_kernel_then_commits():
    T = 60_000
    table = (np.random.default_rng(2).random((T, 5)) < np.array(S1)).astype(float)
    tau, rec, status, acts, rel = call("dp-se-regret", table, 1.0, seed=6, horizon=T,
                                       risk=1 / T)
    spec = registry.get("dp-se")
    p = spec.resolve_params({"means": S1, "risk": 1 / T})
    prep = spec.prepare(1.0, p)
    a2 = np.full(T, -1, np.int16)
    r2 = np.full((1 << 16, 8), np.nan)
    t2, rec2, st2, nr2 = baselines.dpse_kernel(np.random.default_rng(6), table, prep.means,
                                               prep.theta, prep.aux, T, a2, r2, np.empty(0))
    assert st2 == STOPPED and (tau, rec, status) == (T, rec2, STOPPED)
    assert acts[:t2].tolist() == a2[:t2].tolist() and (acts[t2:] == rec2).all()
    assert np.array_equal(rel, r2[:nr2])

@pytest.mark.statistical
def test_dp_se_regret_audit_instance():
    """Default δ = DPSE_AUDIT_RISK = 0.01 (module doc): the audit reads K·R_1 + 1 = 5 311 rows
    (dp-se's audit δ) instead of 11 206 at the paper's δ = 1/T = 10^-6; rows 0..K·R_1 − 1
    are data-independent (arm a in block a) whatever the table, and row K·R_1 is not."""
    spec = registry.get("dp-se-regret")
    p = spec.resolve_params({})
    assert p["risk"] == ld.DPSE_AUDIT_RISK == 0.01
    assert spec.audit_horizon(p) == ld.dpse_rows(p) == 5311
    assert ld.dpse_rows({"means": S1, "risk": None, "horizon": 10 ** 6}) == 11206
    assert spec.audit_horizon(spec.resolve_params({"risk": 1e-6})) == 11206
    R1 = (5311 - 1) // 5
    blocks = np.repeat(np.arange(5), R1).tolist()
    firsts = set()
    for table in (np.zeros((5311, 5)), np.ones((5311, 5)),
                  np.tile([0.0, 1, 1, 1, 1], (5311, 1))):
        tau, rec, status, acts, rel = call("dp-se-regret", table, 1.0, seed=1, limit=5311)
        assert (tau, status) == (5311, TRUNCATED) and acts[:-1].tolist() == blocks
        firsts.add(int(acts[-1]))
    assert firsts == {0, 1}          # tied tables keep arm 0; one-cold eliminates it


# ------------------------------------------------------------------ registry and input

def test_registry_claims_models_and_mutants():
    want = {"lazy-ucb": ("user", True, None), "lazy-dp-ts": ("user", True, None),
            "ts-beta": ("user", False, None), "lazy-ucb-reuse": ("user", True, "lazy-ucb"),
            "lazy-ucb-eager": ("user", True, "lazy-ucb"), "rnm-ftnl": ("full", True, None),
            "ftnl": ("full", True, None), "dp-se-regret": ("user", True, None)}
    for name, (model, private, mutant) in want.items():
        s = registry.get(name)
        assert (s.model, s.private, s.mutant_of) == (model, private, mutant)
    assert registry.get("lazy-ucb").audit_horizon(registry.get("lazy-ucb").resolve_params({})) \
        == ld.BANDIT_ROWS
    assert registry.get("rnm-ftnl").audit_horizon(registry.get("rnm-ftnl").resolve_params({})) \
        == ld.FULL_ROWS


@pytest.mark.parametrize("name, eps, params, match", [
    ("lazy-ucb", 0.0, {}, r"eps=0.0 is out of range: expected a number in \(0, inf\)"),
    ("rnm-ftnl", -1.0, {}, r"eps=-1.0 is out of range"),
    ("lazy-dp-ts", 1.0, {"bonus_log": "10"}, r"bonus_log=10 is not valid: expected one of e, 2"),
    ("rnm-ftnl", 1.0, {"rnm_scale": "x"}, r"rnm_scale=x is not valid"),
    ("lazy-ucb", 1.0, {"means": "0.5,1.5"}, r"means=0.5,1.5 is out of range"),
    ("lazy-ucb", 1.0, {"horizon": "0"}, r"horizon=0 is out of range"),
    ("dp-se-regret", 1.0, {"risk": "1"}, r"risk=1 is out of range")])
def test_bad_input_is_one_line(name, eps, params, match):
    spec = registry.get(name)
    with pytest.raises(InputError, match=match) as e:
        spec.prepare(eps, spec.resolve_params(params))
    assert "\n" not in str(e.value)


@pytest.mark.statistical
def test_audit_pipeline_on_explicit_pairs():
    """End to end (dpaudit.auditing.audit) at α = 1e-6 on fixed pairs, 200 000 runs per side:
    rnm-ftnl's epoch-0 pair (true loss 1.76 at ε = 1) is a violation, the same pair with
    ``rnm_scale=corrected`` (loss ≤ ε, shown exactly above) passes; ts-beta on the ln 2
    pair at K = 5 (P(J_2 = J_1) = 1/3 vs 1/15: loss ln 5 ≈ 1.61 from one decision; ln 2 at
    K = 2) is a violation at ε = 0.5 with ε_lb > 1.
    A wrong "violation" for the corrected RNM has probability ≤ α = 1e-6 (the audit's own
    guarantee); a missed violation needs p̂ off by more than 0.1 somewhere (Hoeffding:
    2·exp(−2·2e5·0.01) < 1e-800)."""
    from dpaudit.auditing.audit import audit_algorithm
    full = NeighbourPair.change("full", np.zeros((4, 5)), (0,), np.array([0, 1, 1, 1, 1.]),
                                np.array([1, 0, 0, 0, 0.]), {"name": "tied-low"}, "epoch 0",
                                "arm 0 up")
    kw = dict(runs=200_000, seed=1, workers=1, whitebox_runs=0, pair=full, alpha=1e-6)
    assert audit_algorithm("rnm-ftnl", 1.0, **kw).verdict == "violation"
    assert audit_algorithm("rnm-ftnl", 1.0, params={"rnm_scale": "corrected"},
                           **kw).verdict == "pass"
    user = NeighbourPair.change_row(np.ones((2, 5)), 0, np.zeros(5), np.ones(5),
                                    {"name": "tied-high"}, "round 1")
    r = audit_algorithm("ts-beta", 0.5, **{**kw, "pair": user})
    assert r.verdict == "violation" and r.eps_lb > 1.0


@pytest.mark.slow
def test_the_bonus_constant_is_searched_so_a_raw_initial_release_is_found():
    """At the paper's c = 3, μ̄ = clamp(μ̃ + 3 ln t/(εO)) is 1 whatever a raw initial sample is,
    so no transcript shows it; the claim space searches c (privacy holds for any c) and a
    small one lets the raw sample decide: a violation (seeded; the mutant loses ∞)."""
    from dpaudit.auditing.audit import audit_algorithm
    spec = registry.get("lazy-dp-ts")
    assert [p.name for p in spec.params if p.claim is not None and p.name == "bonus"]
    r = audit_algorithm("lazy-dp-ts~scale=0@0", 0.5, runs=250_000, seed=1, workers=1)
    assert r.verdict == "violation" and r.params["bonus"] < 3.0
