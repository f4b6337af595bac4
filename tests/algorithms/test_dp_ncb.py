"""Sarkar, Pandey, Ray Chowdhury (2025), DP-NCB (algorithms/dp_ncb/algorithm.py): GDP-NCB (Alg. 4), LDP-NCB (Alg. 5), the anytime
wrapper (Alg. 7), the baselines NCB and LDP-UCB, the LDP randomiser and its half-scale mutant,
against worked numbers derived from the paper's Algorithms 4-5, a plain-Python
reference written from the paper's Algorithms 4, 5 and 7 (and the NCB index of eq. (3)), and the white-box release log.

Deterministic unless stated. Statistical tests are seeded; each states its false-failure
probability (≤ 1e-6 per test, computed in its docstring).
"""
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.algorithms import registry
from dpaudit.algorithms.dp_ncb import algorithm as m
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import COIN, LAPLACE, STOPPED, TRUNCATED

NAMES = ("gdp-ncb", "ldp-ncb", "ncb", "ldp-ucb", "gdp-ncb-anytime", "ldp-ncb-anytime",
         "ldp-ncb-randomiser", "ldp-ncb-randomiser-half-scale")


def prepared(name, eps, **params):
    spec = registry.get(name)
    p = spec.resolve_params(params)
    return spec, p, spec.prepare(eps, p)


def call(spec, prep, table, limit, seed=0, n_rel=0, frozen=None, coins=False):
    """One kernel call: (τ, rec, status, n_rel, actions[:τ], releases[:n_rel]); without
    ``coins``, the noisy releases only (the logged Phase-I coins left out of both)."""
    table = np.asarray(table, dtype=np.float64)
    actions = np.full(limit, -1, np.int16)
    releases = np.full((n_rel, 8), np.nan)
    fr = np.empty(0) if frozen is None else np.ascontiguousarray(frozen, dtype=np.float64)
    tau, rec, status, nr = (int(x) for x in spec.kernel(
        np.random.default_rng(seed), table, prep.means, prep.theta, prep.aux, limit, actions,
        releases, fr))
    rel = releases[:min(nr, n_rel)]
    if not coins:
        nr -= int((rel[:, 7] == COIN).sum())
        rel = rel[rel[:, 7] != COIN]
    return tau, rec, status, nr, actions[:min(tau, limit)], rel


# ------------------------------------------------------------------ plain-Python reference

def uniform_arm(rng, K):
    """The kernels' uniform arm (kernels.uniform_index) from its definition: the integer
    k = u·2⁵³ of one rng.random(), redrawn when k ≥ 2⁵³ − (2⁵³ mod K), then k mod K."""
    lim = 2 ** 53 - 2 ** 53 % K
    while True:
        k = int(rng.random() * 2.0 ** 53)
        if k < lim:
            return k % K


def _clip(x):
    return min(1.0, max(0.0, x))


SWITCHES = []   # Phase-I end (samples taken) of every reference window that switched


def ref_window(rng, table, mode, eps, c, alpha, ci, t0, W, out, rel, reuse=False,
               clip_sum=False, ncb_code=False, noise_mult=1.0):
    """The paper's pseudo-code (Alg. 4 GDP, Alg. 5 LDP; NCB / LDP-UCB as the authors run them) on samples
    t0..t0+W−1 of ``table`` with horizon W; appends arms to ``out`` and releases
    (t, arm, phase, count, value, noisy, scale) to ``rel``."""
    K = table.shape[1]
    L = math.log(W)
    end = t0 + W
    N1, S1, mt, N2 = [0.0] * K, [0.0] * K, [0.0] * K, [1.0] * K
    t = t0
    b = noise_mult / eps

    def lap(scale):
        return rng.laplace(0.0, scale)

    def pull(I, private):
        """Read row t for arm I (privatised and logged if ``private``), record the action."""
        nonlocal t
        x = table[t, I]
        if private:
            y = x + lap(b)
            rel.append((t + 1, I, N1[I] + 1, 1, x, y, b))
            x = y
        out.append(I)
        t += 1
        N1[I] += 1
        return x

    if mode == "ldp-ucb":
        while t < end:
            lt = math.log(t - t0 + 1.0)
            zero = [i for i in range(K) if N1[i] == 0]
            forced = [i for i in range(K) if N1[i] <= 4 * lt]
            if zero:
                I = zero[0]
            elif forced:
                I = forced[0]
            else:
                v = [mt[i] + math.sqrt(2 * lt / N1[i]) + math.sqrt(32 * lt) / (eps * math.sqrt(N1[i]))
                     for i in range(K)]
                I = int(np.argmax(v))
            S1[I] += _clip(pull(I, True))
            mt[I] = S1[I] / N1[I]
        return
    theta = {"gdp": ci * (c * c * L + L * L / eps), "ncb": ci * c * c * L}.get(mode, 0.0)
    switched = False
    while t < end:                                    # Phase I
        I = uniform_arm(rng, K)
        rel.append((t, -1, 0, 0, 0.0, I, K))          # the uniform arm, logged as a coin
        x = pull(I, mode == "ldp")
        S1[I] += x
        if mode == "gdp":
            value, scale = S1[I] / N1[I], L / (eps * N1[I])
            mt[I] = value + lap(scale)
            rel.append((t, I, 0, N1[I], value, mt[I], scale))
            switched = N1[I] * mt[I] > theta
        elif mode == "ncb":
            switched = S1[I] > theta
        else:
            mt[I] += (x - mt[I]) / N1[I]
            d = mt[I] - math.sqrt(8 * alpha * L / N1[I]) / eps
            switched = d > 0 and N1[I] * d > ci * (c * c * L + L * L / (d * eps * eps))
        if switched:
            break
    if switched:
        SWITCHES.append(t)
    if mode == "gdp":                                 # Phase II, episodes
        Stot, Ntot, ep = list(S1), list(N1), [0] * K
        while t < end:
            idx = [_clip(mt[i]) + 2 * c * math.sqrt(2 * _clip(mt[i]) * L / (N1[i] + N2[i]))
                   + (alpha * L * L / eps + 4 * math.sqrt(2 * alpha / eps) * L ** 1.5)
                   / (N1[i] + N2[i]) for i in range(K)]
            A = int(np.argmax(idx))
            length = 2 * N2[A]
            N2[A], sep = 0.0, 0.0
            ep[A] += 1
            while N2[A] < length:
                if t >= end:
                    return
                x = table[t, A]
                out.append(A)
                t += 1
                N2[A] += 1
                sep += x
                Stot[A] += x
                Ntot[A] += 1
            cnt = Ntot[A] if reuse else N1[A] + N2[A]
            value = Stot[A] / cnt if reuse else (S1[A] + sep) / cnt
            scale = L / (eps * cnt)
            y = value + lap(scale)
            rel.append((t, A, ep[A], cnt, value, y, scale))
            mt[A] = _clip(y)
        return
    while t < end:                                    # per-round argmax
        v = []
        for i in range(K):
            if N1[i] == 0:
                v.append(math.inf)
            elif mode == "ncb":
                mu = S1[i] / N1[i]
                v.append(mu + (2 * c * math.sqrt(2 * mu * L / N1[i]) if ncb_code
                               else 4 * math.sqrt(mu * L / N1[i])))
            else:
                mu = _clip(S1[i] / N1[i]) if clip_sum else _clip(mt[i])
                v.append(mu + 2 * c * math.sqrt(2 * mu * L / N1[i])
                         + math.sqrt(8 * alpha * L) / eps / math.sqrt(N1[i])
                         + 4 * c * (2 * alpha) ** 0.25 * L ** 0.75 / math.sqrt(eps)
                         / (math.sqrt(N1[i]) * math.sqrt(math.sqrt(N1[i]))))
        I = int(np.argmax(v))
        x = pull(I, mode == "ldp")
        S1[I] += x
        if mode == "ldp":
            mt[I] = _clip(mt[I] + (x - mt[I]) / N1[I])


def ref_run(table, mode, eps, c=3.0, alpha=3.1, ci=1600.0, anytime=False, seed=0, **kw):
    """A whole run of the reference (anytime: windows W = 1, 2, 4, ..., coin per window,
    W ≤ 2 Uniform)."""
    rng = np.random.default_rng(seed)
    T, K = table.shape
    out, rel = [], []
    if not anytime:
        ref_window(rng, table, mode, eps, c, alpha, ci, 0, T, out, rel, **kw)
        return out, rel
    t, W = 0, 1
    while t < T:
        Wh = min(W, T - t)
        coin = rng.random()
        if W <= 2 or coin < 1 / W ** 2:
            for _ in range(Wh):
                out.append(uniform_arm(rng, K))
                t += 1
        else:
            sub = table[:t + Wh]
            ref_window(rng, np.vstack([sub, np.zeros((W - Wh, K))]) if Wh < W else sub,
                       mode, eps, c, alpha, ci, t, W, out, rel, **kw)
            del out[t + Wh:]
            # kept: releases within the window's Wh samples; coins (arm −1) drawn before them
            rel[:] = [r for r in rel if r[0] < t + Wh or (r[0] == t + Wh and r[1] != -1)]
            t += Wh
        W *= 2
    return out, rel


MODES = {"gdp-ncb": "gdp", "ldp-ncb": "ldp", "ncb": "ncb", "ldp-ucb": "ldp-ucb",
         "gdp-ncb-anytime": "gdp", "ldp-ncb-anytime": "ldp"}
# C_I small enough that Phase II is reached on these tables (a "scaled" C_I)
SCALED = {"gdp": 0.003, "ldp": 0.0005, "ncb": 0.3}


@pytest.mark.parametrize("name", list(MODES))
def test_kernel_matches_reference_bit_for_bit(name):
    """Random 0/1 and fractional tables, T = 300, K = 3, ε ∈ {0.5, 2}, 4 seeds each: the
    kernel's actions and every release (t, arm, phase, count, value, noisy, scale) equal the
    plain-Python reference exactly; Phase II is reached in some runs of each mode."""
    mode = MODES[name]
    anytime = name.endswith("anytime")
    SWITCHES.clear()
    for seed in range(4):
        gen = np.random.default_rng(100 + seed)
        table = gen.random((300, 3)) if seed % 2 else (gen.random((300, 3)) < [0.2, 0.5, 0.9]) * 1.0
        for eps in (0.5, 2.0):
            params = {"horizon": 300, "means": (0.2, 0.5, 0.9)}
            if mode != "ldp-ucb":
                params["phase1_constant"] = SCALED[mode]
            spec, p, prep = prepared(name, eps, **params)
            tau, rec, status, nr, acts, rels = call(spec, prep, table, 300, seed=seed,
                                                    n_rel=4000, coins=True)
            out, rel = ref_run(table, mode, eps, ci=SCALED.get(mode, 0.0), anytime=anytime,
                               seed=seed)
            assert (tau, rec, status) == (300, -1, STOPPED)
            assert list(acts) == out
            assert nr == len(rel)
            np.testing.assert_array_equal(rels[:, :7], np.array(rel, dtype=float).reshape(-1, 7))
            if nr:                                  # coins: the Phase-I uniform arms
                assert np.all(rels[:, 7] == np.where(rels[:, 1] == -1, COIN, LAPLACE))
    if mode != "ldp-ucb":
        assert SWITCHES                             # Phase II is exercised


def test_options_match_reference():
    """ldp_clip=sum, ncb_index=code and the reuse flag (white-box only) against the reference."""
    gen = np.random.default_rng(7)
    table = (gen.random((400, 2)) < [0.4, 0.8]) * 1.0
    for name, kw, params in (("ldp-ncb", {"clip_sum": True}, {"ldp_clip": "sum"}),
                             ("ncb", {"ncb_code": True}, {"ncb_index": "code"})):
        mode = MODES[name]
        spec, p, prep = prepared(name, 1.0, horizon=400, means=(0.4, 0.8),
                                 phase1_constant=SCALED[mode], **params)
        _, _, _, nr, acts, rels = call(spec, prep, table, 400, seed=3, n_rel=1000, coins=True)
        out, rel = ref_run(table, mode, 1.0, ci=SCALED[mode], seed=3, **kw)
        assert list(acts) == out and nr == len(rel)
    spec, p, prep = prepared("gdp-ncb", 1.0, horizon=400, means=(0.4, 0.8),
                             phase1_constant=0.003)
    prep.theta[m.REUSE] = 1.0
    _, _, _, nr, acts, rels = call(spec, prep, table, 400, seed=3, n_rel=1000, coins=True)
    out, rel = ref_run(table, "gdp", 1.0, ci=0.003, seed=3, reuse=True)
    assert list(acts) == out
    np.testing.assert_array_equal(rels[:, :7], np.array(rel, dtype=float))


# -------------------------------------------------------------- white-box bookkeeping

def gdp_log(T=2000, K=3, eps=1.0, ci=0.002, seed=5, table_seed=9):
    gen = np.random.default_rng(table_seed)
    table = (gen.random((T, K)) < np.linspace(0.3, 0.9, K)) * 1.0
    spec, p, prep = prepared("gdp-ncb", eps, horizon=T, means=tuple(np.linspace(0.3, 0.9, K)),
                             phase1_constant=ci)
    tau, rec, status, nr, acts, rels = call(spec, prep, table, T, seed=seed, n_rel=2 * T + 10)
    return table, acts, rels, p, prep


def test_gdp_phase1_releases_fresh_mean_and_scale():
    """Phase-I release j of arm a (phase 0): count = a's Phase-I pulls so far, value = their
    mean recomputed from the table, scale·count·ε = ln T (sum-scale noise ln T/ε, Alg. 4
    remark), one release per Phase-I round; the switch happens exactly after the first
    release with count·noisy > θ_G."""
    T, eps = 2000, 1.0
    table, acts, rels, p, prep = gdp_log(T=T, eps=eps)
    ph1 = rels[rels[:, 2] == 0]
    T1 = len(ph1)
    assert 0 < T1 < T                              # the switch happens in this run
    assert list(ph1[:, 0]) == list(range(1, T1 + 1))
    theta_g = m.gdp_threshold(T, eps, 3.0, p["phase1_constant"])
    for j, (t, a, _, cnt, value, noisy, scale, _) in enumerate(ph1):
        a, t = int(a), int(t)
        pulls = [s for s in range(t) if acts[s] == a]
        assert acts[t - 1] == a and cnt == len(pulls)
        assert value == pytest.approx(table[pulls, a].mean(), rel=1e-12)
        assert scale * cnt * eps == pytest.approx(math.log(T), rel=1e-12)
        assert (cnt * noisy > theta_g) == (j == T1 - 1)


def test_gdp_episodes_double_and_use_fresh_samples():
    """Phase-II episode releases: per arm the episode lengths are 2, 4, 8, ... (count − N1 =
    2^e for episode e), the episode is a block of consecutive pulls of that arm ending at the
    release, the released value is (Phase-I sum + this episode's sum)/(N1 + 2^e) from the
    table (earlier episodes forgotten), and scale·count·ε = ln T."""
    T, eps = 2000, 1.0
    table, acts, rels, p, prep = gdp_log(T=T, eps=eps)
    ph1 = rels[rels[:, 2] == 0]
    T1 = len(ph1)
    ph2 = rels[rels[:, 2] >= 1]
    assert len(ph2) >= 6
    K = table.shape[1]
    n1 = [sum(1 for s in range(T1) if acts[s] == a) for a in range(K)]
    s1 = [sum(table[s, a] for s in range(T1) if acts[s] == a) for a in range(K)]
    prev_end = T1
    for t, a, e, cnt, value, noisy, scale, _ in ph2:
        a, t, e = int(a), int(t), int(e)
        length = 2 ** e
        assert cnt == n1[a] + length
        assert t - length == prev_end                     # episodes tile Phase II
        assert all(acts[s] == a for s in range(t - length, t))
        fresh = table[t - length:t, a].sum()
        assert value == pytest.approx((s1[a] + fresh) / cnt, rel=1e-12)
        assert scale * cnt * eps == pytest.approx(math.log(T), rel=1e-12)
        prev_end = t
    # the arm chosen for each episode is the argmax of NCB_GDP on the released means
    mt = {}
    for t, a, _, cnt, value, noisy, scale, _ in ph1:
        mt[int(a)] = noisy
    n2 = [1.0] * K
    start = T1
    for t, a, e, cnt, value, noisy, scale, _ in ph2:
        idx = m.ncb_gdp_index([mt.get(i, 0.0) for i in range(K)],
                              [n1[i] + n2[i] for i in range(K)], T, eps)
        assert int(np.argmax(idx)) == int(a) == acts[start]
        n2[int(a)] = 2.0 ** int(e)
        mt[int(a)] = min(1.0, max(0.0, noisy))
        start = int(t)


def test_gdp_mutant_reuse_counts_every_sample():
    """The reuse flag (epoch sums over every earlier sample): count = all pulls of the arm."""
    T = 2000
    table, acts, rels, p, prep = gdp_log(T=T)
    prep.theta[m.REUSE] = 1.0
    spec = registry.get("gdp-ncb")
    _, _, _, nr, acts2, rels2 = call(spec, prep, table, T, seed=5, n_rel=2 * T + 10)
    for t, a, e, cnt, value, *_ in rels2[rels2[:, 2] >= 1]:
        pulls = [s for s in range(int(t)) if acts2[s] == int(a)]
        assert cnt == len(pulls)
        assert value == pytest.approx(table[pulls, int(a)].mean(), rel=1e-12)


def test_ldp_every_reward_is_one_release_of_scale_one_over_eps():
    """LDP-NCB (and LDP-UCB): release j is the reward of sample j: t = j + 1, arm = a_j, value
    = table[j, a_j], count 1, phase = that arm's pull count, scale·count·ε = 1."""
    gen = np.random.default_rng(3)
    table = gen.random((500, 3))
    for name, extra in (("ldp-ncb", {"phase1_constant": 0.0005}), ("ldp-ucb", {})):
        spec, p, prep = prepared(name, 0.7, horizon=500, means=(0.2, 0.5, 0.8), **extra)
        _, _, _, nr, acts, rels = call(spec, prep, table, 500, seed=1, n_rel=1200)
        assert nr == 500
        assert np.array_equal(rels[:, 0], np.arange(1, 501))
        assert np.array_equal(rels[:, 1], acts)
        assert np.array_equal(rels[:, 4], table[np.arange(500), acts])
        assert np.all(rels[:, 3] == 1) and np.allclose(rels[:, 6] * 0.7, 1.0)
        pulls = np.array([np.sum(acts[:j + 1] == acts[j]) for j in range(500)])
        assert np.array_equal(rels[:, 2], pulls)


def test_ldp_phase1_switch_rule():
    """LDP Phase I ends after the first sample whose arm meets STOP,
    recomputed from the released Y's; before it no arm meets it; afterwards the arms follow
    the NCB_LDP argmax (checked by the reference test)."""
    T, eps, ci, c, alpha = 1000, 1.0, 0.0005, 3.0, 3.1
    gen = np.random.default_rng(4)
    table = (gen.random((T, 2)) < [0.3, 0.9]) * 1.0
    spec, p, prep = prepared("ldp-ncb", eps, horizon=T, means=(0.3, 0.9), phase1_constant=ci)
    _, _, _, nr, acts, rels = call(spec, prep, table, T, seed=2, n_rel=2 * T)
    L = math.log(T)
    N, mu = [0, 0], [0.0, 0.0]
    switch = None
    for j in range(T):
        a = int(acts[j])
        N[a] += 1
        mu[a] += (rels[j, 5] - mu[a]) / N[a]
        d = mu[a] - math.sqrt(8 * alpha * L / N[a]) / eps
        if d > 0 and N[a] * d > ci * (c * c * L + L * L / (d * eps * eps)):
            switch = j + 1
            break
    assert switch is not None and switch < T
    out, _ = ref_run(table, "ldp", eps, ci=ci, seed=2)
    assert list(acts) == out


def test_paper_constants_phase1_never_ends():
    """With C_I = 1600 Phase I never ends at T = 10⁴ (GDP and LDP): every GDP
    release is a Phase-I release, and θ_G = C_I·(c² ln T + (ln T)²/ε) of Alg. 4 line 2."""
    assert m.gdp_threshold(1e3, 0.2) == pytest.approx(481208, abs=1)
    assert m.gdp_threshold(1e3, 1.0) == pytest.approx(175819, abs=1)
    assert m.gdp_threshold(1e4, 0.2) == pytest.approx(811272, abs=1)
    assert m.gdp_threshold(1e5, 1.0) == pytest.approx(377862, abs=1)
    assert m.gdp_threshold(1e6, 0.2) == pytest.approx(1725890, abs=1)
    assert m.gdp_threshold(1e6, 1.0) == pytest.approx(504333, abs=1)
    T = 10_000
    table = np.ones((T, 2))
    spec, p, prep = prepared("gdp-ncb", 1.0, horizon=T)
    _, _, _, nr, acts, rels = call(spec, prep, table, T, seed=0, n_rel=2 * T + 1)
    assert nr == T and np.all(rels[:, 2] == 0)
    spec, p, prep = prepared("ldp-ncb", 1.0, horizon=T)
    _, _, _, nr, acts2, _ = call(spec, prep, table, T, seed=0, n_rel=0)
    out, _ = ref_run(table, "ldp", 1.0, ci=1600.0, seed=0)
    assert list(acts2) == out            # = uniform play: the reference's Phase I only
    assert abs(np.mean(acts2) - 0.5) < 0.05   # 9σ: P(fail) < 1e-18


def test_truncation_at_limit():
    spec, p, prep = prepared("gdp-ncb", 1.0, horizon=128)
    tau, rec, status, *_ = call(spec, prep, np.ones((128, 2)), 50)
    assert (tau, rec, status) == (50, -1, TRUNCATED)


# ------------------------------------------------------------------------ anytime

def test_anytime_windows_double_and_restart():
    """Scripted flags (0 = base algorithm) on T = 127 rounds: windows W = 1, 2 are Uniform
    (no release: the W ≤ 2 guard) even when scripted 0; windows W = 4, ..., 64 cover samples
    W−1 .. 2W−2 and restart GDP-NCB with horizon W: their Phase-I releases have scale·count·ε =
    ln W and counts that restart at 1 in each window."""
    T = 127
    spec, p, prep = prepared("gdp-ncb-anytime", 1.0, horizon=T)
    prep = m.with_flags(prep, [0] * 10)
    tau, _, status, nr, acts, rels = call(spec, prep, np.ones((T, 2)), T, n_rel=500)
    assert tau == T and status == STOPPED
    assert nr == T - 3                    # every round of windows W ≥ 4 (Phase I), none before
    for t, a, ph, cnt, value, noisy, scale, _ in rels:
        h = int(math.floor(math.log2(t)))  # sample t-1 (0-based) lies in window W = 2^h
        W = 2 ** h
        assert W >= 4 and scale * cnt == pytest.approx(math.log(W), rel=1e-12)
        pulls = sum(1 for s in range(W - 1, int(t)) if acts[s] == int(a))
        assert cnt == pulls               # fresh instance: only this window's pulls
    # a Uniform flag on window W = 8 removes its releases only
    prep2 = m.with_flags(prep, [0, 0, 0, 1, 0, 0, 0])
    _, _, _, nr2, _, rels2 = call(spec, prep2, np.ones((T, 2)), T, n_rel=500)
    assert nr2 == T - 3 - 8 and not np.any((rels2[:, 0] >= 8) & (rels2[:, 0] <= 15))


def test_anytime_truncates_last_window():
    """T = 100: the last window (W = 64, samples 63..99) is cut at T; its instance still uses
    horizon W = 64 (ln 64 in the scale)."""
    spec, p, prep = prepared("gdp-ncb-anytime", 1.0, horizon=100)
    prep = m.with_flags(prep, [0] * 10)
    tau, _, status, nr, acts, rels = call(spec, prep, np.ones((100, 2)), 100, n_rel=500)
    assert tau == 100 and status == STOPPED
    last = rels[rels[:, 0] >= 64]
    assert len(last) == 100 - 63
    assert np.allclose(last[:, 6] * last[:, 3], math.log(64))


@pytest.mark.statistical
def test_anytime_uniform_coin_frequency():
    """The coin of window W = 8 (samples 7..14) is Uniform with probability 1/64: among
    n = 40000 runs (C_I = 1600, so base windows release every round) count the runs with no
    release in that window. Count ~ Bin(40000, 1/64), mean 625, sd 24.8; the test accepts
    [binom.ppf(5e-7), binom.isf(5e-7)]: false-failure probability ≤ 1e-6."""
    spec, p, prep = prepared("gdp-ncb-anytime", 1.0, horizon=15)
    table = np.ones((15, 2))
    rng = np.random.default_rng(2024)
    n, hits = 40_000, 0
    actions = np.empty(15, np.int16)
    releases = np.empty((20, 8))
    for _ in range(n):
        _, _, _, nr = spec.kernel(rng, table, prep.means, prep.theta, prep.aux, 15, actions,
                                  releases, np.empty(0))
        hits += not np.any(releases[:nr, 0] >= 8)
    lo, hi = stats.binom.ppf(5e-7, n, 1 / 64), stats.binom.isf(5e-7, n, 1 / 64)
    assert lo <= hits <= hi


# ---------------------------------------------------------------------- randomiser

@pytest.mark.parametrize("name,mult", [("ldp-ncb-randomiser", 1.0),
                                       ("ldp-ncb-randomiser-half-scale", 0.5)])
@pytest.mark.statistical
def test_randomiser_tail_and_scale(name, mult):
    """Y = r + Lap(mult/ε), ε = 1, binned at 1/4: P(Y ≥ 1 | r = 1) = 1/2, P(Y ≥ 1 | r = 0) =
    e^{−ε/mult}/2. n = 200000 users per r; each frequency is tested with a two-sided binomial
    interval at 2.5e-7 per side per r: false-failure probability ≤ 1e-6. The release log
    records scale·ε = mult."""
    spec, p, prep = prepared(name, 1.0, max_steps=200_000)
    for r, prob in ((1.0, 0.5), (0.0, 0.5 * math.exp(-1.0 / mult))):
        spec_k = spec.kernel
        actions = np.empty(200_000, np.int16)
        # every user holds r: a table of 200000 copies
        table = np.full(200_000, r)
        tau, first, status, _ = spec_k(np.random.default_rng(11), table, prep.means,
                                       prep.theta, prep.aux, 200_000, actions, np.empty((0, 8)),
                                       np.empty(0))
        hits = int(np.sum(actions >= 4))
        n = 200_000
        assert stats.binom.ppf(2.5e-7, n, prob) <= hits <= stats.binom.isf(2.5e-7, n, prob)
    rel = np.empty((1, 8))
    spec.kernel(np.random.default_rng(0), np.array([1.0]), prep.means, prep.theta, prep.aux,
                1, np.empty(1, np.int16), rel, np.empty(0))
    assert rel[0, 6] == pytest.approx(mult) and rel[0, 4] == 1.0 and rel[0, 7] == LAPLACE


# ------------------------------------------------------------------- registry, inputs

def test_registry_names_and_claims():
    specs = {n: registry.get(n) for n in NAMES}
    assert not specs["ncb"].private
    assert specs["ldp-ncb-randomiser-half-scale"].mutant_of == "ldp-ncb-randomiser"
    assert specs["ldp-ncb-randomiser"].model == "local"
    assert specs["gdp-ncb"].resolve_params({})["phase1_constant"] == 1600.0
    assert specs["ncb"].resolve_params({})["phase1_constant"] == m.NCB_PHASE1


def test_bad_inputs_are_one_line_input_errors():
    spec = registry.get("gdp-ncb")
    with pytest.raises(InputError, match="eps=0"):
        spec.prepare(0.0, spec.resolve_params({}))
    with pytest.raises(InputError, match="horizon=1"):
        spec.resolve_params({"horizon": 1})
    with pytest.raises(InputError, match="means"):
        spec.resolve_params({"means": "0.5,1.5"})
    with pytest.raises(InputError, match="alpha_conf"):
        spec.resolve_params({"alpha_conf": -1})
    with pytest.raises(InputError, match="ldp_clip"):
        registry.get("ldp-ncb").resolve_params({"ldp_clip": "x"})


def test_nash_regret_uniform_play_worked_instance():
    """Worked numbers (computed independently of this code): the seed-42 instance U(0.005, 1)^50: max 0.9701 (arm 11), mean 0.4487;
    uniform play has Nash regret μ* − mean ≈ 0.52; a zero round gives NR = μ*."""
    mu = np.random.RandomState(42).uniform(0.005, 1, 50)
    assert int(np.argmax(mu)) == 11
    assert mu.max() == pytest.approx(0.9701, abs=5e-5)
    assert mu.mean() == pytest.approx(0.4487, abs=5e-5)
    assert m.nash_regret(np.full(1000, mu.mean()), mu.max()) == pytest.approx(0.5214, abs=1e-3)
    assert m.nash_regret([0.5, 0.0], 1.0) == 1.0


@pytest.mark.statistical
@pytest.mark.slow
@pytest.mark.parametrize("K", [2, 3, 50])
def test_uniform_index_is_uniform(K):
    """kernels.uniform_index follows the uniform law on {0, ..., K−1}: n = 600 000 draws,
    chi-square test at level 1e-7 per case (3e-7 over the cases), and every value occurs."""
    from dpaudit.algorithms.kernels import uniform_index
    rng = np.random.default_rng(100 + K)
    counts = np.bincount([uniform_index(rng, K) for _ in range(600_000)], minlength=K)
    assert counts.shape == (K,) and counts.min() > 0
    assert stats.chisquare(counts).pvalue > 1e-7


def test_uniform_index_matches_its_definition():
    """The kernel helper draws exactly :func:`uniform_arm` (its definition, in exact integer
    arithmetic) on the same stream: 10 000 draws with K = 3."""
    from dpaudit.algorithms.kernels import uniform_index
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    assert [uniform_index(a, 3) for _ in range(10_000)] == [uniform_arm(b, 3) for _ in range(10_000)]
