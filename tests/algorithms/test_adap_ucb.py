"""AdaP-UCB and AdaP-KLUCB (algorithms/lazy_dp/adap_ucb.py; Azize & Basu 2022 as described by Sarkar et al. (2025)
and by Hu et al. (2021), Section 6; the source paper itself is not among our sources):
the kernel against a plain-Python reference written from the module's pseudo-code (same order of
rng calls), the episode bookkeeping (doubling, forgetting, noise scales, truncation), the KL-UCB
index against SciPy, the privacy of the releases (white-box) and explicit-pair audits.

Deterministic unless stated. Statistical tests are seeded; each states its false-failure
probability (≤ 1e-6 per test, from Hoeffding's inequality P(|p̂ − p| ≥ t) ≤ 2·exp(−2nt²), or the
audit's own error guarantee α).
"""
import math

import numpy as np
import pytest
from scipy.special import rel_entr

from dpaudit.algorithms import registry
from dpaudit.algorithms.lazy_dp import adap_ucb as au
from dpaudit.algorithms.lazy_dp import algorithm as ld
from dpaudit.auditing import whitebox as wb
from dpaudit.core.request import Claim
from dpaudit.data.tables import NeighbourPair
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import STOPPED, TRUNCATED, run_batch
from kernel_calls import assert_releases, call, prepared, random_table

NAMES = ("adap-ucb", "adap-klucb", "adap-ucb-raw-init")


# ------------------------------------------------------------- plain-Python references

def ref_kl(p, q):
    """Bernoulli KL with 0·ln 0 = 0, from scipy's relative entropy."""
    return float(rel_entr(p, q) + rel_entr(1.0 - p, 1.0 - q))


def ref_index(kind, mt, N, t, eps, alpha):
    """The module doc's indices at the 1-based round t with N pulls: "paper" μ̃ + sqrt(α ln t/N)
    + 2α ln t/(εN); "code" μ̃ + sqrt(α ln(t+1)/N) + 2α ln(t+1)/N; "kl" the largest q in [μ̄, 1]
    with (N/2)·kl(μ̄, q) ≤ α ln t, μ̄ = clip(μ̃ + α ln t/(ε·N/2)), by bisection to width 1e-9
    (lower end)."""
    if kind == "paper":
        lt = math.log(t)
        return mt + math.sqrt(alpha * lt / N) + 2.0 * alpha * lt / (eps * N)
    if kind == "code":
        lt = math.log(t + 1.0)
        return mt + math.sqrt(alpha * lt / N) + 2.0 * alpha * lt / N
    half, bound = 0.5 * N, alpha * math.log(t)
    mb = min(1.0, max(0.0, mt + bound / (eps * half)))
    lo, hi = mb, 1.0
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if half * ref_kl(mb, mid) <= bound:
            lo = mid
        else:
            hi = mid
    return lo


def ref_adap(table, eps, kind, seed, T=None, raw=False, alpha=3.1):
    """AdaP-UCB / AdaP-KLUCB from the module doc's items 1–4: arm a at round a (μ̃ = x +
    Lap(1/ε), unless ``raw``); then episodes: argmax index (first maximum) at t = samples + 1,
    the arm pulled N_a more times, the episode's own mean + Lap(1/(ε·N_a)) released at its end
    (none if T cuts it). Returns (actions, releases as (t, arm, phase, count, value, noisy,
    scale))."""
    rng = np.random.default_rng(seed)
    rows, K = table.shape
    T = rows if T is None else T
    acts, rels = [], []
    mt, N, ep = [0.0] * K, [1] * K, [0] * K
    n = 0
    for a in range(K):
        if n >= T:
            return acts, rels
        x = table[n, a]
        acts.append(a)
        n += 1
        if raw:
            mt[a] = x
        else:
            mt[a] = x + rng.laplace(0.0, 1.0 / eps)
            rels.append((n, a, 0, 1, x, mt[a], 1.0 / eps))
    while n < T:
        U = [ref_index(kind, mt[a], float(N[a]), n + 1.0, eps, alpha) for a in range(K)]
        J = max(range(K), key=lambda a: (U[a], -a))       # first maximum
        length, s = N[J], 0.0
        for _ in range(length):
            if n >= T:
                return acts, rels                          # cut short: no release
            s += table[n, J]
            acts.append(J)
            n += 1
        ep[J] += 1
        N[J] += length
        scale = 1.0 / (eps * length)
        mt[J] = s / length + rng.laplace(0.0, scale)
        rels.append((n, J, ep[J], length, s / length, mt[J], scale))
    return acts, rels


# ------------------------------------------------------ kernel vs the plain reference

VARIANTS = [("adap-ucb", "paper", False, {}), ("adap-ucb", "code", False, {"index": "code"}),
            ("adap-klucb", "kl", False, {}), ("adap-ucb-raw-init", "paper", True, {}),
            ("adap-ucb", "code", True, {"index": "code", "init": "raw"})]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("name, kind, raw, params", VARIANTS)
def test_kernel_matches_reference(seed, name, kind, raw, params):
    """Bit for bit (actions, every release column), K = 2, 3, 5, several ε and α; the horizon
    T (STOPPED) or the audit limit (T > rows: TRUNCATED) cuts the last episode short, which
    then makes no release (an episode that ends exactly at T: test_episodes_double_...)."""
    eps = (0.25, 1.0, 4.0, 20.0)[seed % 4]
    alpha = (3.1, 1.0)[seed % 2]
    K = (2, 3, 5)[seed % 3]
    rows = 3000
    T = (3000, 1300, 257, 5000, 131)[seed % 5]
    table = random_table(seed, rows, K)
    means = tuple(np.linspace(0.2, 0.8, K))
    tau, rec, status, acts, rel = call(name, table, eps, seed=seed, limit=min(rows, T),
                                       horizon=T, alpha_conf=alpha, means=means, **params)
    ref_a, ref_r = ref_adap(table, eps, kind, seed, min(rows, T), raw, alpha)
    assert (tau, rec) == (min(rows, T), -1)
    assert status == (STOPPED if T <= rows else TRUNCATED)
    assert acts.tolist() == ref_a
    assert_releases(rel, ref_r)


def test_audit_limit_truncates_without_changing_the_prefix():
    table = random_table(1, 300, 5)
    for name in NAMES:
        full = call(name, table, 1.0, seed=3, horizon=300)
        cut = call(name, table, 1.0, seed=3, horizon=300, limit=37)
        assert cut[:3] == (37, -1, TRUNCATED)
        assert cut[3].tolist() == full[3][:37].tolist()
        assert np.array_equal(cut[4], full[4][:cut[4].shape[0]])
        assert (cut[4][:, 0] <= 37).all()


# ----------------------------------------------------------------------- bookkeeping

def _check_bookkeeping(name, table, eps, T, seed):
    """Every arm's releases: phases 0, 1, 2, ...; counts 1, 1, 2, 4, ... (pull count after
    episode r = 2^r); release r is made right after the arm's 2^r-th pull; its value is the
    mean of exactly that episode's rewards (pulls 2^{r−1} .. 2^r − 1; pull 0 for r = 0);
    scale·count·ε = 1. Every row < T is pulled once and enters exactly one release, except
    the rows of the last episode if T cuts it (no release). Returns (actions, releases,
    rows of the cut episode)."""
    K = table.shape[1]
    tau, rec, status, acts, rel = call(name, table, eps, seed=seed, horizon=T,
                                       means=tuple(np.linspace(0.25, 0.75, K)))
    assert (tau, status) == (T, STOPPED) and acts.shape[0] == T
    used = np.zeros(T, int)
    for a in range(K):
        pulls = np.flatnonzero(acts == a)
        er = rel[rel[:, 1] == a]
        R = len(er)
        assert er[:, 2].tolist() == list(range(R))
        assert er[:, 3].tolist() == [1] + [2 ** (r - 1) for r in range(1, R)]
        assert np.cumsum(er[:, 3]).tolist() == [2 ** r for r in range(R)]
        for r, row in enumerate(er):
            lo, hi = (0, 1) if r == 0 else (2 ** (r - 1), 2 ** r)
            assert row[0] == pulls[hi - 1] + 1
            assert row[4] == pytest.approx(table[pulls[lo:hi], a].mean(), abs=1e-12)
            assert row[6] * row[3] * eps == pytest.approx(1.0, rel=1e-12)
            used[pulls[lo:hi]] += 1
        pending = len(pulls) - 2 ** (R - 1)                # pulls after the last release
        assert 0 <= pending < 2 ** (R - 1)                 # an unfinished episode of length N
        if pending:
            assert acts[-1] == a and (acts[T - pending:] == a).all()
    cut = np.flatnonzero(used == 0)
    assert used.max() == 1 and (cut.size == 0 or cut.tolist() == list(range(T - cut.size, T)))
    assert np.sort(rel[:, 0]).tolist() == rel[:, 0].tolist()       # logged in time order
    return acts, rel, cut


@pytest.mark.parametrize("name", ("adap-ucb", "adap-klucb"))
def test_episodes_double_forget_and_scale(name):
    """The module doc's bookkeeping on Bernoulli tables of 20 000 rows, K = 5 (Setting 1), at
    several ε. T = 20 000 cuts the last episode (asserted: no release for it); the same run
    with T = the row where that episode started ends on a complete episode, whose release is
    the last one (made at T)."""
    for eps in (0.25, 1.0, 8.0):
        T, K = 20_000, 5
        table = (np.random.default_rng(7).random((T, K)) < np.array(ld.SETTING_1)).astype(float)
        acts, rel, cut = _check_bookkeeping(name, table, eps, T, seed=11)
        assert cut.size > 0                                # this horizon cuts an episode
        T2 = T - cut.size                                  # the same run, ended at an episode
        acts2, rel2, cut2 = _check_bookkeeping(name, table[:T2], eps, T2, seed=11)
        assert cut2.size == 0 and acts2.tolist() == acts[:T2].tolist()
        assert np.array_equal(rel2, rel)                   # the last release is at T2
        assert rel2[-1, 0] == T2


def test_unread_entries_and_cut_episode_never_matter():
    """Each row t is read once, at (t, a_t): flipping every other entry of every row, and the
    rewards of the episode cut by T, leaves the transcript and the releases bit-identical."""
    T = 5000
    for name in NAMES:
        table = (np.random.default_rng(9).random((T, 5)) < np.array(ld.SETTING_1)).astype(float)
        _, _, _, acts, rel = call(name, table, 1.0, seed=4, horizon=T, means=ld.SETTING_1)
        read = np.zeros(table.shape, bool)
        read[np.arange(T), acts] = True
        used = np.zeros(T, bool)
        for row in rel:
            used[int(row[0]) - int(row[3]):int(row[0])] = True
        flip = ~read
        flip[~used] = True                                 # the cut episode (and raw inits)
        if name == "adap-ucb-raw-init":                    # raw initial rewards are read
            flip[np.arange(5), np.arange(5)] = False
        assert (~used).sum() > (5 if name == "adap-ucb-raw-init" else 0)
        _, _, _, acts2, rel2 = call(name, np.where(flip, 1.0 - table, table), 1.0, seed=4,
                                    horizon=T, means=ld.SETTING_1)
        assert acts2.tolist() == acts.tolist()
        assert np.array_equal(rel2, rel)


def test_raw_init_makes_no_initial_release():
    """init=raw: the first K releases disappear (episodes still start at phase 1) and the first
    decision compares the raw rewards: K = 2, rewards (0, 1) → arm 1 plays round 3 (and (1, 0)
    → arm 0) whatever the rng."""
    for first, want in (((0.0, 1.0), 1), ((1.0, 0.0), 0)):
        table = np.full((8, 2), 0.5)
        table[0, 0], table[1, 1] = first
        for seed in range(20):
            _, _, _, acts, rel = call("adap-ucb-raw-init", table, 1.0, seed=seed, horizon=8)
            assert acts[2] == want
            assert rel[0, 2] == 1 and rel[0, 3] == 1 and (rel[:, 2] >= 1).all()


# ------------------------------------------------------------------- KL-UCB index

def test_kl_bernoulli_against_scipy():
    for p in (0.0, 1e-9, 0.1, 0.5, 0.77, 1.0 - 1e-9, 1.0):
        for q in (1e-6, 0.05, 0.3, 0.5, 0.9, 1 - 1e-6):
            want = rel_entr(p, q) + rel_entr(1 - p, 1 - q)
            assert au.kl_bernoulli(p, q) == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_klucb_index_against_brentq():
    """q_max of the module doc (item 4) against scipy.optimize.brentq on
    (N/2)·kl(μ̄, q) − α ln t = 0 over [μ̄, 1) (q_max = 1 when the root is within 1e-12 of 1),
    on a grid of μ̃ (including negative and > 1 private means), N, t, ε, α: |error| ≤ 2e-9."""
    from scipy.optimize import brentq
    checked = 0
    for mt in (-0.4, 0.0, 0.05, 0.3, 0.5, 0.74, 0.95, 1.3):
        for N in (1, 2, 8, 64, 1024, 2 ** 16, 2 ** 20):
            for t in (6, 100, 10 ** 4, 10 ** 6):
                for eps in (0.2, 1.0, 5.0):
                    for alpha in (3.1, 1.0):
                        lt = math.log(t)
                        got = au.klucb_index(mt, float(N), lt, eps, alpha)
                        mb = min(1.0, max(0.0, mt + alpha * lt / (eps * N / 2)))
                        f = lambda q: N / 2 * au.kl_bernoulli(mb, q) - alpha * lt  # noqa: E731
                        top = 1.0 - 1e-12
                        want = 1.0 if mb >= top or f(top) <= 0 else \
                            brentq(f, mb, top, xtol=1e-14, rtol=1e-15)
                        assert abs(got - want) <= 2e-9, (mt, N, t, eps, alpha, got, want)
                        assert mb <= got <= 1.0
                        checked += mb < 0.99 and want < 0.99
    assert checked > 100                                   # many interior roots


def test_klucb_index_monotone_in_N_and_t():
    """Non-increasing in N (less optimism, tighter KL ball) and non-decreasing in t."""
    for mt in (-0.2, 0.1, 0.5, 0.9):
        for eps in (0.2, 1.0, 10.0):
            v = [au.klucb_index(mt, float(2 ** k), math.log(1000.0), eps, 3.1)
                 for k in range(25)]
            assert all(b <= a for a, b in zip(v, v[1:]))
            assert v[0] == 1.0 and v[-1] < 1.0
            w = [au.klucb_index(mt, 4096.0, math.log(t), eps, 3.1) for t in (2, 10, 1e3, 1e6)]
            assert all(b >= a for a, b in zip(w, w[1:]))


def test_ucb_indices():
    """adap_index (the kernel's) equals the printed form μ̃ + sqrt(α ln t/(2·½N)) +
    α ln t/(ε·½N) (index=paper) and the code's form (index=code, no 1/ε)."""
    for mt, N, n, eps in ((0.3, 1.0, 2, 0.2), (-0.1, 64.0, 999, 1.0), (0.9, 4096.0, 10 ** 6, 3)):
        t, alpha = n + 1.0, 3.1
        half = N / 2
        printed = mt + math.sqrt(alpha * math.log(t) / (2 * half)) + \
            alpha * math.log(t) / (eps * half)
        assert au.adap_index(False, False, mt, N, n, eps, alpha) == pytest.approx(printed,
                                                                                  rel=1e-14)
        code = mt + math.sqrt(alpha * math.log(t + 1) / N) + 2 * alpha * math.log(t + 1) / N
        assert au.adap_index(False, True, mt, N, n, eps, alpha) == pytest.approx(code, rel=1e-14)


# --------------------------------------------------------------- statistical checks

@pytest.mark.statistical
def test_first_decision_probability():
    """adap-ucb, K = 2, ε = 1: both arms have N = 1 after initialisation (equal bonuses), so
    round 3 plays arm 0 iff x_0 + L_0 > x_1 + L_1: with x = (0, 1), P = P(L_0 − L_1 > 1) =
    ½e^{−1}(1 + ½) = 0.27591 (difference of two Lap(1)); with x = (1, 1), ½. n = 400 000 runs
    per case; Hoeffding with t = 0.005: 2·exp(−2·4e5·0.005²) = 4.1e-9 per case."""
    n = 400_000
    for x0, want in ((0.0, 0.75 * math.exp(-1.0)), (1.0, 0.5)):
        table = np.ones((3, 2))
        table[0, 0] = x0
        spec, p, prep = prepared("adap-ucb", 1.0, horizon=3)
        *_, kept = run_batch(spec.request(prep, table, n, 17, [3], 3), n)
        assert abs((kept[:, 2] == 0).mean() - want) < 0.005


# ---------------------------------------------------------------- white-box / replay

@pytest.mark.slow
def test_whitebox_release_loss_and_replay():
    """Honest variants: the exact release loss is ε (one reward in one Lap(1/(εn)) mean of n)
    and no replay diverges (decisions read data only through releases); the raw-init mutant:
    replays diverge (the raw first reward reaches the first decision)."""
    pair = NeighbourPair.change_row(np.full((32, 5), 0.5), 0, np.zeros(5), np.ones(5),
                                    {"name": "tied-mid"}, "row 0")
    for name, params in (("adap-ucb", {}), ("adap-ucb", {"index": "code"}), ("adap-klucb", {})):
        spec, p, prep = prepared(name, 1.0, means=ld.SETTING_1, **params)
        w = wb.whitebox(spec, prep, pair, Claim(1.0), wb.Replay(2000, 5))
        assert w["releases_exceed_eps"] is False and w["replay"]["diverged_runs"] == 0
        assert w["max_loss"] == pytest.approx(1.0, abs=1e-9)
    spec, p, prep = prepared("adap-ucb-raw-init", 1.0, means=ld.SETTING_1)
    w = wb.whitebox(spec, prep, pair, Claim(1.0), wb.Replay(2000, 5))
    assert w["replay"]["diverged_runs"] > 0


@pytest.mark.statistical
@pytest.mark.slow
def test_audit_pipeline_on_explicit_pairs():
    """End to end (dpaudit.auditing.audit) at α = 1e-6 on fixed pairs, 200 000 runs per side, ε = 1.
    adap-ucb-raw-init, K = 2, row 0 = (0, 0) vs (1, 1) on a ½ table: round 3 is arm 1 on d and
    arm 0 on d' with probability 1 (a violation with ε_lb > 5); adap-ucb on the same pair
    passes. adap-klucb on the all-zero table, row 15 = 0s vs 1s (arm 0's episode of rows
    12..19, whose release decides at round 21 whether arm 1 takes over: P = 0.12 vs 0.047,
    loss 0.96) passes with ε_lb > 0.7: the audit is informative there (the default search
    does not reach row 15, see the module doc of adap_ucb).
    A wrong "violation" for the honest algorithms has probability ≤ α = 1e-6 (the audit's
    own guarantee); a missed violation or ε_lb ≤ 0.7 needs p̂ off by more than 0.02 on one
    side (Hoeffding: 2·exp(−2·2e5·0.02²) = 2.5e-70)."""
    from dpaudit.auditing.audit import audit_algorithm
    kw = dict(runs=200_000, seed=1, workers=1, whitebox_runs=0, alpha=1e-6)
    pair = NeighbourPair.change_row(np.full((8, 2), 0.5), 0, np.zeros(2), np.ones(2),
                                    {"name": "tied-mid"}, "round 1")
    r = audit_algorithm("adap-ucb-raw-init", 1.0, pair=pair, **kw)
    assert r.verdict == "violation" and r.eps_lb > 5.0
    # the honest algorithm passes with the budget its verdict asks for at α = 1e-6 (2·10^5
    # runs leave its detectable loss at 1.256 > 1.25 ε: inconclusive, 2.24·10^5 needed)
    assert audit_algorithm("adap-ucb", 1.0, pair=pair, **{**kw, "runs": 250_000}).verdict \
        == "pass"
    d = np.zeros((32, 5))
    pair = NeighbourPair.change_row(d, 15, np.zeros(5), np.ones(5), {"name": "tied-low"},
                                    "row 15")
    r = audit_algorithm("adap-klucb", 1.0, pair=pair, **kw)
    assert r.verdict == "pass" and r.eps_lb > 0.7


# ------------------------------------------------------------------ registry and input

def test_registry_claims_models_and_defaults():
    want = {"adap-ucb": None, "adap-klucb": None, "adap-ucb-raw-init": "adap-ucb"}
    for name, mutant in want.items():
        s = registry.get(name)
        assert (s.model, s.private, s.mutant_of) == ("user", True, mutant)
        assert s.kernel is au.adap_kernel
        p = s.resolve_params({})
        assert p["horizon"] == 10 ** 6 and p["alpha_conf"] == 3.1 and p["audit_rows"] == 32
        assert s.audit_horizon(p) == 32 and s.audit_horizon({**p, "horizon": 20}) == 20
    assert registry.get("adap-ucb").resolve_params({})["means"] == au.NCB_MEANS
    assert registry.get("adap-klucb").resolve_params({})["means"] == ld.SETTING_1
    p = registry.get("adap-ucb").resolve_params({})
    assert (p["index"], p["init"]) == ("paper", "noisy")
    assert registry.get("adap-ucb").prepare(1.0, p).theta[au.A_RAW] == 0.0
    s = registry.get("adap-ucb-raw-init")
    assert s.prepare(1.0, s.resolve_params({})).theta[au.A_RAW] == 1.0
    names = [s.name for s in registry.all_specs()]
    assert set(want) <= set(names)


@pytest.mark.parametrize("name, eps, params, match", [
    ("adap-ucb", 0.0, {}, r"eps=0.0 is out of range: expected a number in \(0, inf\)"),
    ("adap-klucb", -1.0, {}, r"eps=-1.0 is out of range"),
    ("adap-ucb", 1.0, {"index": "x"}, r"index=x is not valid: expected one of paper, code"),
    ("adap-ucb", 1.0, {"init": "zero"}, r"init=zero is not valid: expected one of noisy, raw"),
    ("adap-ucb", 1.0, {"alpha_conf": "0"}, r"alpha_conf=0 is out of range"),
    ("adap-klucb", 1.0, {"index": "code"}, r"unknown parameter 'index' for adap-klucb"),
    ("adap-klucb", 1.0, {"means": "0.5"}, r"means=0.5 is out of range"),
    ("adap-ucb", 1.0, {"horizon": "0"}, r"horizon=0 is out of range")])
def test_bad_input_is_one_line(name, eps, params, match):
    spec = registry.get(name)
    with pytest.raises(InputError, match=match) as e:
        spec.prepare(eps, spec.resolve_params(params))
    assert "\n" not in str(e.value)


@pytest.mark.slow
def test_the_searched_alpha_reaches_down_to_where_a_raw_initial_sample_decides():
    """AdaP-KLUCB's μ̄ = clip(μ̃ + α ln t/(ε N/2)) is 1 for a raw initial sample in [0, 1] at
    any α ≥ 0.5 (ε = 0.5, N = 1, t ≥ 2): no transcript shows it. α is a proof dimension (the
    index is post-processing), searched down to 0.01, where the raw sample decides: a
    violation (seeded; the mutant loses ∞)."""
    from dpaudit.auditing.audit import audit_algorithm
    claim = registry.get("adap-klucb").param("alpha_conf").claim
    assert claim.scope.value == "proof" and claim.window == (0.01, 20.0)
    r = audit_algorithm("adap-klucb~scale=0@0", 0.5, runs=250_000, seed=1, workers=1)
    assert r.verdict == "violation" and r.params["alpha_conf"] < 0.5
