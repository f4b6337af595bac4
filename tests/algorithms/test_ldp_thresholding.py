"""Barbara, Lazzaro, Pike-Burke (2025), LDP thresholding bandits (algorithms/ldp_thresholding/algorithm.py): PrivBern, Algorithm 1
(``ldp-tb-budget``), Algorithm 2 (``ldp-tb-confidence``), APT and the ``privbern-wrong-exp``
mutant, against worked numbers derived from the paper's eqs. 4-8 and Theorems 3.1-4.2,
plain-Python references written from the paper's pseudo-code, and the audit
pipeline on the ``local`` model.

Deterministic unless stated. Statistical tests are seeded; each states its false-failure
probability (≤ 1e-6 per test, computed in its docstring).
"""
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from dpaudit.algorithms import registry
from dpaudit.algorithms.ldp_thresholding import algorithm as lt
from dpaudit.auditing import whitebox as wb
from dpaudit.auditing.audit import audit_algorithm
from dpaudit.core.request import Claim
from dpaudit.data import neighbours
from dpaudit.data.tables import NeighbourPair, constant_table
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import CAPPED, RANDOMISED_RESPONSE, STOPPED, TRUNCATED

A, B, C = lt.INSTANCE_A, lt.INSTANCE_B, lt.INSTANCE_C
EPS = (0.5, 1.0, 2.0)


def approx6(x):
    """The worked numbers have 6 significant digits."""
    return pytest.approx(x, rel=6e-6, abs=1e-12)


def prepared(name, eps, **params):
    spec = registry.get(name)
    p = spec.resolve_params(params)
    return spec, p, spec.prepare(eps, p)


def call(spec, prep, table, limit, seed=0, n_rel=0, frozen=None, n_actions=None):
    """One kernel call: (τ, rec, status, n_rel, actions[:τ], releases[:n_rel])."""
    table = np.asarray(table, dtype=np.float64)
    actions = np.full(limit if n_actions is None else n_actions, -1, np.int16)
    releases = np.full((n_rel, 8), np.nan)
    fr = np.empty(0) if frozen is None else np.ascontiguousarray(frozen, dtype=np.float64)
    tau, rec, status, nr = (int(x) for x in spec.kernel(
        np.random.default_rng(seed), table, prep.means, prep.theta, prep.aux, limit, actions,
        releases, fr))
    return tau, rec, status, nr, actions[:min(tau, actions.size)], releases[:min(nr, n_rel)]


def scripted_run(name, eps, responses, limit=10_000, **params):
    """A run with scripted responses: (τ, Ŝ as a set, status, actions)."""
    spec, _, prep = prepared(name, eps, **params)
    prep = lt.scripted(prep, responses)
    tau, rec, status, nr, acts, _ = call(spec, prep, np.zeros((0, prep.means.size)), limit)
    assert nr == 0                                   # scripted responses make no release
    return tau, lt.mask_set(rec, prep.means.size), status, acts


# ----------------- worked numbers (computed independently of this code with NumPy/SciPy)

def test_c_eps_and_privbern_probability_tables():
    c = {0.5: (0.244919, 16.6708), 1.0: (0.462117, 4.68269), 2.0: (0.761594, 1.72406)}
    probs = {0.5: (0.377541, 0.43877, 0.5, 0.56123, 0.622459),
             1.0: (0.268941, 0.384471, 0.5, 0.615529, 0.731059),
             2.0: (0.119203, 0.309601, 0.5, 0.690399, 0.880797)}
    for eps in EPS:
        assert lt.c_eps(eps) == approx6(c[eps][0])
        assert lt.c_eps(eps) ** -2 == approx6(c[eps][1])
        # the literal formula of Definition 2.1 and its stable form agree
        r = np.array([0, 0.25, 0.5, 0.75, 1])
        literal = (r * math.exp(eps) + (1 - r)) / (1 + math.exp(eps))
        assert lt.privbern_prob(r, eps) == pytest.approx(literal, rel=1e-15)
        assert list(lt.privbern_prob(r, eps)) == [approx6(x) for x in probs[eps]]
        # Lemma 2.1: the mean of the output is eq. (4) at μ = r
        assert lt.privbern_prob(r, eps) == pytest.approx(lt.mu_eps(r, eps), rel=1e-14)
    # the stable form keeps P(1 | 0) > 0 at the largest accepted ε (the tanh form rounds it
    # to 0 from ε ≈ 38)
    assert lt.privbern_prob(0.0, 36.0) == pytest.approx(expit(-36.0), rel=1e-12)
    assert lt.privbern_prob(0.0, 36.0) > 0


INSTANCE_TABLES = {
    # name: (instance, zeta, H, {eps: (mu_eps, tau_eps, zeta_eps, delta_eps, H_eps)})
    "A": (A, 0.05, 441.877, {
        0.5: ((0.402033, 0.451016, 0.5, 0.548984, 0.597967), 0.5, 0.0122459,
              (0.110213, 0.0612297, 0.0122459, 0.0612297, 0.110213), 7366.43),
        1.0: ((0.315153, 0.407577, 0.5, 0.592423, 0.684847), 0.5, 0.0231059,
              (0.207953, 0.115529, 0.0231059, 0.115529, 0.207953), 2069.17),
        2.0: ((0.195362, 0.347681, 0.5, 0.652319, 0.804638), 0.5, 0.0380797,
              (0.342717, 0.190399, 0.0380797, 0.190399, 0.342717), 761.822)}),
    "B": (B, 0.0, 822.222, {
        0.5: ((0.426524, 0.487754, 0.512246, 0.573476), 0.5, 0.0,
              (0.0734756, 0.0122459, 0.0122459, 0.0734756), 13707.1),
        1.0: ((0.361365, 0.476894, 0.523106, 0.638635), 0.5, 0.0,
              (0.138635, 0.0231059, 0.0231059, 0.138635), 3850.22),
        2.0: ((0.271522, 0.46192, 0.53808, 0.728478), 0.5, 0.0,
              (0.228478, 0.0380797, 0.0380797, 0.228478), 1417.56)}),
    "C": (C, 0.1, 64.5833, {
        0.5: ((0.402033, 0.475508, 0.536738, 0.597967), 0.524492, 0.0244919,
              (0.146951, 0.0734756, 0.0367378, 0.0979675), 1076.66),
        1.0: ((0.315153, 0.453788, 0.569318, 0.684847), 0.546212, 0.0462117,
              (0.27727, 0.138635, 0.0693176, 0.184847), 302.424),
        2.0: ((0.195362, 0.423841, 0.614239, 0.804638), 0.576159, 0.0761594,
              (0.456956, 0.228478, 0.114239, 0.304638), 111.346)}),
}


@pytest.mark.parametrize("name", ["A", "B", "C"])
def test_instance_tables(name):
    inst, zeta, H, rows = INSTANCE_TABLES[name]
    m, tau = inst["means"], inst["threshold"]
    assert lt.complexity(m, tau, zeta) == approx6(H)
    for eps, (mu_e, tau_e, zeta_e, delta_e, H_e) in rows.items():
        assert list(lt.mu_eps(m, eps)) == [approx6(x) for x in mu_e]          # eq. (4)
        assert lt.tau_eps(tau, eps) == approx6(tau_e)                          # eq. (5)
        assert lt.zeta_eps(zeta, eps) == approx6(zeta_e)                       # eq. (6)
        assert list(lt.delta_eps(m, tau, zeta, eps)) == [approx6(x) for x in delta_e]  # (7)
        assert lt.complexity_eps(m, tau, zeta, eps) == approx6(H_e)            # eq. (8)
        # H_ε = c_ε^-2 H (exact for every ζ)
        assert lt.complexity_eps(m, tau, zeta, eps) == pytest.approx(
            lt.complexity(m, tau, zeta) / lt.c_eps(eps) ** 2, rel=1e-12)
    assert lt.tau_eps(0.5, 2.0) == 0.5                                         # exactly
    # instance A with ζ = 0 has μ_3 = τ: H = H_ε = inf (non-termination instance)
    assert lt.complexity(A["means"], 0.5) == math.inf
    assert lt.complexity_eps(A["means"], 0.5, 0.0, 1.0) == math.inf


def test_instance_c_fixed_confidence_numbers():
    m = C["means"]
    assert lt.complexity(m, 0.6) == approx6(440.111)
    assert lt.complexity_eps(m, 0.6, 0.0, 1.0) == approx6(2060.91)
    assert lt.thm41_eq24(m, 0.6, 1.0, 0.05) == approx6(280408)
    assert lt.thm42_bound(m, 0.6, 1.0, 0.05) == approx6(40.1132)


# -------------------------------------------------------- bounds (Theorems 3.1, 3.2, 4.1, 4.2)

def test_theorem_3_1_numbers_on_instance_a():
    m = A["means"]
    want = {0.5: (789563, 3.16003e9, 0.000929387, 4.20206),
            1.0: (214018, 532585, 1.71859e-41, 0.000708206),
            2.0: (76332.9, 0.000526939, 1.54484e-131, 7.00698e-13)}
    for eps, (cross, b5, b6, proof5) in want.items():
        assert lt.thm31_crossing(m, 0.5, 0.05, eps) == approx6(cross)
        assert lt.thm31_bound(1e5, m, 0.5, 0.05, eps) == approx6(b5)
        assert lt.thm31_bound(1e6, m, 0.5, 0.05, eps) == approx6(b6)
        assert lt.thm31_proof_bound(1e5, m, 0.5, 0.05, eps) == approx6(proof5)
    # log2 in the inner log (the proof's peeling count)
    for eps, cross in {0.5: 893841, 1.0: 243230, 2.0: 87062}.items():
        assert lt.thm31_crossing(m, 0.5, 0.05, eps, inner_log="2") == approx6(cross)
    for eps in EPS:
        # the stated bound is vacuous at every budget of the Monte Carlo table
        assert (lt.thm31_bound([200, 500, 1000, 2000], m, 0.5, 0.05, eps) > 1).all()


def test_theorem_3_2_number_on_instance_a():
    m = A["means"]
    H = lt.complexity_eps(m, 0.5, 0.05, 0.5)
    assert 8 * 1e4 / H * lt.lb_factor(0.5) == approx6(207.109)
    assert lt.thm32_bound(1e4, m, 0.5, 0.05, 0.5) == approx6(2.82796e-91)
    assert lt.thm32_bound(1e5, m, 0.5, 0.05, 2.0) == 0.0                  # underflows


def test_theorems_4_1_and_4_2_on_instance_b():
    rows = {(0.5, 0.05): (2.22495e6, 5.35278e6, 209636, 298753, 773.663, 38.1414),
            (0.5, 0.01): (2.53073e6, 6.04080e6, 231697, 310582, 1389.34, 38.1414),
            (1.0, 0.05): (557209, 1.35109e6, 53996.2, 76015.7, 74.9400, 110.605),
            (1.0, 0.01): (643102, 1.54435e6, 60192.9, 79362.9, 134.576, 110.605),
            (2.0, 0.05): (185524, 453270, 18463.8, 25682.4, 5.42037, 563.010),
            (2.0, 0.01): (217148, 524423, 20745.2, 26923.5, 9.73385, 563.010)}
    m, K = B["means"], 4
    for (eps, risk), (printed, fixed, hlog, implicit, lb, factor) in rows.items():
        H = lt.complexity_eps(m, 0.5, 0.0, eps)
        assert lt.thm41_eq24(m, 0.5, eps, risk) == approx6(printed)
        assert lt.thm41_eq24(m, 0.5, eps, risk, divisor=16) == approx6(fixed)
        assert H * math.log(4 * K * H / risk) == approx6(hlog)
        T = lt.thm41_implicit(m, 0.5, eps, risk)
        assert T == approx6(implicit)
        assert T == pytest.approx(K + H / 2 * math.log(4 * K * T ** 3 / risk), rel=1e-12)
        # the per-arm bounds of App. D sum to the implicit bound
        assert lt.thm41_arm_pulls(T, m, 0.5, eps, risk).sum() == pytest.approx(T, rel=1e-12)
        assert lt.thm42_bound(m, 0.5, eps, risk) == approx6(lb)
        assert 2 * lt.lb_factor(eps) == approx6(factor)


# -------------------------------------------------------------------------- privacy loss

def test_privbern_loss_table():
    # entries ℓ(1) / ℓ(0) and max |ℓ|
    table = {0.5: {(1, 0): (0.5, -0.5), (0.75, 0.25): (0.246154, -0.246154),
                   (1, 0.5): (0.21907, -0.28093), (0.6, 0.4): (0.0980459, -0.0980459)},
             1.0: {(1, 0): (1, -1), (0.75, 0.25): (0.470615, -0.470615),
                   (1, 0.5): (0.379885, -0.620115), (0.6, 0.4): (0.185376, -0.185376)},
             2.0: {(1, 0): (2, -2), (0.75, 0.25): (0.801983, -0.801983),
                   (1, 0.5): (0.566219, -1.43378), (0.6, 0.4): (0.307027, -0.307027)}}
    for eps, row in table.items():
        for (r, rp), (l1, l0) in row.items():
            assert lt.privbern_loss(1, r, rp, eps) == approx6(l1)
            assert lt.privbern_loss(0, r, rp, eps) == approx6(l0)
        # sup over a 1001-point grid of [0, 1]^2 is exactly ε, at {0, 1}
        g = np.linspace(0, 1, 1001)
        worst = max(np.abs(lt.privbern_loss(y, g[:, None], g[None, :], eps)).max()
                    for y in (0, 1))
        assert worst == pytest.approx(eps, abs=1e-12)
        # the white-box closed form (randomised response, scale ε) is the same function
        for (r, rp) in row:
            for y in (0, 1):
                assert wb.log_density_ratio(RANDOMISED_RESPONSE, y, r, rp, eps) == \
                    pytest.approx(lt.privbern_loss(y, r, rp, eps), abs=1e-12)
        # the mutant's randomiser is PrivBern at 2ε: loss 2ε at (1, 0)
        assert lt.privbern_loss(1, 1, 0, 2 * eps) == pytest.approx(2 * eps, abs=1e-12)


def test_rewards_outside_unit_interval_are_rejected():
    for bad in (1.5, -0.1, np.nan):
        with pytest.raises(InputError, match=r"r=.* is out of range: expected a number in "
                                              r"\[0, 1\]"):
            lt.privbern_prob(bad, 1.0)
    with pytest.raises(InputError, match=r"eps=40.0 is out of range: expected a number in "
                                         r"\[0, 36\]"):
        lt.privbern_prob(0.5, 40.0)


# ------------------------------------------------------------------ deterministic traces

def test_algorithm_1_trace_1():
    tau, S, status, acts = scripted_run(
        "ldp-tb-budget", 1.0, [[1], [0, 1], [0]], means="0.5,0.5,0.5", threshold=0.6,
        tolerance=0.1, horizon=12)
    assert (tau, status) == (12, STOPPED)
    assert (acts + 1).tolist() == [1, 2, 3, 1, 2, 2, 2, 2, 2, 2, 2, 2]
    assert np.bincount(acts).tolist() == [2, 9, 1]
    assert S == {0}                          # Ŝ = {1} in the paper's 1-based arms


def test_algorithm_1_trace_2_strict_return_rule():
    tau, S, status, acts = scripted_run(
        "ldp-tb-budget", 2.0, [[1, 0, 1, 1, 0, 1, 0, 1, 1, 1], [0, 1], [1, 0, 0]],
        means="0.5,0.5,0.5", threshold=0.5, tolerance=0.0, horizon=15)
    assert (tau, status) == (15, STOPPED)
    assert (acts + 1).tolist() == [1, 2, 3] + [1] * 9 + [2, 2, 2]
    assert np.bincount(acts).tolist() == [10, 4, 1]
    # μ̂ = (0.7, 0.5, 1.0): arm 2 is out because 0.5 > 0.5 is false (τ_ε = 1/2 exactly)
    assert S == {0, 2}


@pytest.mark.parametrize("risk, t_stop", [(0.1, 12), (0.01, 16)])
def test_algorithm_2_traces(risk, t_stop):
    tau, S, status, acts = scripted_run("ldp-tb-confidence", 1.0, [[1], [0]],
                                        means="0.5,0.5", threshold=0.5, risk=risk)
    assert (tau, status, S) == (t_stop, STOPPED, {0})
    assert np.bincount(acts).tolist() == [t_stop // 2] * 2
    # one pull earlier it could not stop: the other arm was still ambiguous
    tau, S, status, _ = scripted_run("ldp-tb-confidence", 1.0, [[1], [0]], means="0.5,0.5",
                                     threshold=0.5, risk=risk, limit=t_stop - 1)
    assert (tau, S, status) == (t_stop - 1, None, TRUNCATED)


def test_algorithm_2_log_base_option():
    # log base 2 (ambiguity option) widens the radius: the same script stops later, as the
    # reference with log2 says
    def respond(t, a, n):
        return 1.0 - a
    for risk in (0.1, 0.01):
        ref_acts, ref_S = ref_alg2(respond, 2, 0.5, risk, 1000, log=math.log2)
        tau, S, status, acts = scripted_run("ldp-tb-confidence", 1.0, [[1], [0]],
                                            means="0.5,0.5", threshold=0.5, risk=risk,
                                            log_base="2")
        assert acts.tolist() == ref_acts and S == ref_S == {0}
        assert tau > {0.1: 12, 0.01: 16}[risk]


def test_algorithm_2_revisits_settled_arms():
    # Algorithm 2 on scripted responses: arm 1 all 1, arm 2 all 0, arm 3 cycling (1, 1, 0), δ = 0.1
    tau, S, status, acts = scripted_run("ldp-tb-confidence", 1.0, [[1], [0], [1, 1, 0]],
                                        means="0.5,0.5,0.5", threshold=0.5, risk=0.1)
    assert (tau, status, S) == (97, STOPPED, {0, 2})
    assert np.bincount(acts).tolist() == [10, 10, 77]
    first_skip = next(t for t in range(3, tau) if acts[t] != t % 3)
    assert (acts[first_skip + 1:] != 2).any()          # arms 1, 2 pulled again later


def test_algorithm_2_stop_rule_equivalent_form():
    """Stop ⇔ for every arm τ_ε lies outside (μ̂ − rad, μ̂ + rad]:
    checked at the stopping time (holds) and one pull before (fails) on random scripts."""
    rng = np.random.default_rng(4)
    te, checked = lt.tau_eps(0.55, 1.0), 0
    for _ in range(40):
        K = int(rng.integers(2, 5))
        resp = [rng.integers(0, 2, int(rng.integers(1, 6))) for _ in range(K)]
        aux = lt.script(resp)
        M = aux.size // K
        tau, S, status, acts = scripted_run("ldp-tb-confidence", 1.0, resp,
                                            means=",".join(["0.5"] * K), threshold=0.55,
                                            risk=0.2, max_steps=5000)
        if status != STOPPED:
            continue
        for t, stop in ((tau, True), (tau - 1, False)):
            if t < K:
                continue
            N = np.bincount(acts[:t], minlength=K)
            mu = np.array([aux[a * M:a * M + M][np.arange(N[a]) % M].sum() / N[a]
                           for a in range(K)])
            rad = np.sqrt(np.log(4 * K * t ** 3 / 0.2) / (8 * N))
            outside = (mu - rad >= te) | (mu + rad < te)
            assert outside.all() == stop
            if stop:
                assert S == set(np.flatnonzero(mu >= te))
            checked += 1
    assert checked > 40


# ---------------------------------------------------------- plain-Python references

def ref_alg1(respond, K, T, tau_e, zeta_e):
    """Algorithm 1 from the paper's listing: ``respond(t, arm, n)`` gives the response of
    round t (0-based) on ``arm``'s n-th pull. Returns (actions, Ŝ)."""
    N, Cs, acts = [0] * K, [0.0] * K, []
    for t in range(T):
        if t < K:
            i = t
        else:
            B_ = [math.sqrt(N[k]) * (abs(tau_e - Cs[k] / N[k]) + zeta_e) for k in range(K)]
            i = B_.index(min(B_))                                  # first minimum
        Cs[i] += respond(t, i, N[i])
        N[i] += 1
        acts.append(i)
    return acts, {k for k in range(K) if Cs[k] / N[k] > tau_e}


def ref_alg2(respond, K, tau_e, risk, limit, log=math.log):
    """Algorithm 2 (with its blank line 2 reconstructed from Sec. 4.1): (actions, Ŝ or None if not stopped)."""
    N, Cs, acts = [0] * K, [0.0] * K, []
    for t in range(K):
        Cs[t] += respond(t, t, 0)
        N[t] = 1
        acts.append(t)
    t = K
    while True:
        mu = [Cs[i] / N[i] for i in range(K)]
        S = {i for i in range(K) if mu[i] >= tau_e}
        rad = [math.sqrt(log(4 * K * t ** 3 / risk) / (8 * N[i])) for i in range(K)]
        mt = [mu[i] - rad[i] if i in S else mu[i] + rad[i] for i in range(K)]
        St = {i for i in range(K) if mt[i] >= tau_e}
        if S == St:
            return acts, S
        if t >= limit:
            return acts, None
        amb = sorted(S ^ St)
        i = max(amb, key=lambda a: (rad[a], -a))
        Cs[i] += respond(t, i, N[i])
        N[i] += 1
        acts.append(i)
        t += 1


def privbern_responder(table, eps, seed):
    """Responses as the kernel draws them: one uniform per pull, Y = 1 iff u < P(1 | x)."""
    rng = np.random.default_rng(seed)
    return lambda t, arm, n: float(rng.random() < table[t, arm] * expit(eps)
                                   + (1 - table[t, arm]) * expit(-eps))


@pytest.mark.parametrize("seed", range(8))
def test_algorithm_1_matches_reference_on_random_tables(seed):
    rng = np.random.default_rng(100 + seed)
    K, T, eps = int(rng.integers(2, 6)), int(rng.integers(10, 300)), float(rng.uniform(0.2, 3))
    tau_, zeta = float(rng.uniform(0.2, 0.8)), float(rng.choice([0.0, 0.05, 0.2]))
    table = rng.random((T, K)) if seed % 2 else (rng.random((T, K)) < 0.5).astype(float)
    spec, _, prep = prepared("ldp-tb-budget", eps, means=",".join(["0.5"] * K),
                             threshold=tau_, tolerance=zeta, horizon=T)
    tau, rec, status, nr, acts, rel = call(spec, prep, table, T, seed=seed, n_rel=T)
    ref_acts, ref_S = ref_alg1(privbern_responder(table, eps, seed), K, T,
                               lt.tau_eps(tau_, eps), lt.zeta_eps(zeta, eps))
    assert (tau, status, nr) == (T, STOPPED, T)
    assert acts.tolist() == ref_acts and lt.mask_set(rec, K) == ref_S
    # the release log: one randomised-response release per pull, value = the reward read
    assert (rel[:, 7] == RANDOMISED_RESPONSE).all() and (rel[:, 6] == eps).all()
    assert np.array_equal(rel[:, 0], np.arange(1, T + 1))
    assert np.array_equal(rel[:, 4], table[np.arange(T), acts])
    assert np.array_equal(rel[:, 1], acts)
    # APT: the same rule on the raw rewards, with τ and ζ
    spec, _, prep = prepared("apt", eps, means=",".join(["0.5"] * K), threshold=tau_,
                             tolerance=zeta, horizon=T)
    tau, rec, status, nr, acts, _ = call(spec, prep, table, T, n_rel=T)
    ref_acts, ref_S = ref_alg1(lambda t, a, n: table[t, a], K, T, tau_, zeta)
    assert (tau, status, nr) == (T, STOPPED, 0)
    assert acts.tolist() == ref_acts and lt.mask_set(rec, K) == ref_S


@pytest.mark.parametrize("seed", range(8))
def test_algorithm_2_matches_reference_on_random_tables(seed):
    rng = np.random.default_rng(200 + seed)
    K, eps, risk = int(rng.integers(2, 5)), float(rng.uniform(1, 4)), float(rng.uniform(0.01, 0.3))
    tau_ = float(rng.uniform(0.3, 0.7))
    T = 3000
    means = rng.choice([0.05, 0.2, 0.8, 0.95], K)
    table = (rng.random((T, K)) < means).astype(float)
    spec, _, prep = prepared("ldp-tb-confidence", eps, means=",".join(map(str, means)),
                             threshold=tau_, risk=risk, horizon=T)
    tau, rec, status, nr, acts, _ = call(spec, prep, table, T, seed=seed)
    ref_acts, ref_S = ref_alg2(privbern_responder(table, eps, seed), K, lt.tau_eps(tau_, eps),
                               risk, T)
    assert acts.tolist() == ref_acts
    if ref_S is None:
        assert (tau, rec, status) == (T, -1, TRUNCATED)
    else:
        assert (status, tau, lt.mask_set(rec, K)) == (STOPPED, len(ref_acts), ref_S)
        assert nr == tau


def test_scripted_kernel_matches_reference_on_random_scripts():
    rng = np.random.default_rng(7)
    for _ in range(60):
        K = int(rng.integers(2, 6))
        resp = [rng.integers(0, 2, int(rng.integers(1, 8))).astype(float) for _ in range(K)]
        aux = lt.script(resp)
        M = aux.size // K

        def respond(t, a, n):
            return aux[a * M + n % M]
        T = int(rng.integers(K, 80))
        zeta = float(rng.choice([0.0, 0.1]))
        means = ",".join(["0.5"] * K)
        tau, S, status, acts = scripted_run("ldp-tb-budget", 1.0, resp, means=means,
                                            threshold=0.6, tolerance=zeta, horizon=T)
        ref_acts, ref_S = ref_alg1(respond, K, T, lt.tau_eps(0.6, 1.0), lt.zeta_eps(zeta, 1.0))
        assert (tau, status) == (T, STOPPED) and acts.tolist() == ref_acts and S == ref_S
        ref_acts, ref_S = ref_alg2(respond, K, lt.tau_eps(0.5, 1.0), 0.1, 400)
        tau, S, status, acts = scripted_run("ldp-tb-confidence", 1.0, resp, means=means,
                                            threshold=0.5, risk=0.1, limit=400)
        assert acts.tolist() == ref_acts
        assert (S if status == STOPPED else None) == ref_S


# ------------------------------------------------------------------ statuses and caps

def test_caps_truncation_and_eps_zero():
    # ε = 0: every response is Bern(1/2) and τ_ε = 1/2; Algorithm 2 runs to the cap
    spec, _, prep = prepared("ldp-tb-confidence", 0.0, max_steps=5000)
    tau, rec, status, *_ = call(spec, prep, np.zeros((0, 4)), 10 ** 6)
    assert (tau, rec, status) == (5000, -1, CAPPED)
    # instance A with ζ = 0 has μ_3 = τ: not stopped within the cap (H = inf)
    spec, _, prep = prepared("ldp-tb-confidence", 1.0, means="0.1,0.3,0.5,0.7,0.9",
                             max_steps=20000)
    tau, rec, status, *_ = call(spec, prep, np.zeros((0, 5)), 10 ** 6)
    assert (tau, rec, status) == (20000, -1, CAPPED)
    # the table horizon (limit) truncates: reported as not stopped
    tau, rec, status, *_ = call(spec, prep, np.full((30, 5), 0.5), 30)
    assert (tau, rec, status) == (30, -1, TRUNCATED)
    # Algorithm 1 stops at T; a limit before T truncates; max_steps below T caps
    spec, _, prep = prepared("ldp-tb-budget", 1.0, horizon=40)
    assert call(spec, prep, np.zeros((0, 4)), 10 ** 6)[:3:2] == (40, STOPPED)
    assert call(spec, prep, np.zeros((16, 4)), 16)[:3] == (16, -1, TRUNCATED)
    spec, _, prep = prepared("ldp-tb-budget", 1.0, horizon=40, max_steps=10)
    assert call(spec, prep, np.zeros((0, 4)), 10 ** 6)[:3] == (10, -1, CAPPED)
    # privbern: one user in the audit (limit 1), max_steps users otherwise
    spec, _, prep = prepared("privbern", 1.0, max_steps=7)
    tau, rec, status, nr, acts, _ = call(spec, prep, np.array(1.0), 1)
    assert (tau, status, nr) == (1, TRUNCATED, 1) and acts[0] in (0, 1)
    tau, rec, status, nr, acts, _ = call(spec, prep, np.array(1.0), 100)
    assert (tau, status, nr, rec) == (7, STOPPED, 7, acts[0])


def test_bad_parameters_are_one_line_input_errors():
    cases = [("ldp-tb-budget", 1.0, {"horizon": 3}, r"horizon=3 is out of range: expected an "
              r"integer >= K = 4"),
             ("ldp-tb-budget", 1.0, {"means": ",".join(["0.5"] * 63)}, "at most 62"),
             ("ldp-tb-budget", 1.0, {"threshold": 1.5}, r"threshold=1.5 is out of range: "
              r"expected number in \[0, 1\]"),
             ("ldp-tb-confidence", 1.0, {"risk": 0}, r"risk=0 is out of range: expected "
              r"number in \(0, 1\)"),
             ("ldp-tb-confidence", 1.0, {"delta": 0.1}, "unknown parameter 'delta'"),
             ("ldp-tb-confidence", 50.0, {}, r"eps=50.0 is out of range: expected a number "
              r"in \[0, 36\]"),
             ("privbern", 1.0, {"means": "0.5,0.5"}, "privbern takes one Bernoulli mean"),
             ("privbern", -1.0, {}, r"eps=-1.0 is out of range")]
    for name, eps, params, needle in cases:
        spec = registry.get(name)
        with pytest.raises(InputError, match=needle) as e:
            spec.prepare(eps, spec.resolve_params(params))
        assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="script has 2 arms: expected K = 3"):
        lt.scripted(prepared("ldp-tb-budget", 1.0, means="0.5,0.5,0.5")[2], [[1], [0]])


def test_loss_and_bitmask_helpers():
    m = (0.1, 0.4, 0.65, 0.9)     # instance C: τ = 0.6, ζ = 0.1, arm 2 inside the band
    masks = [lt.set_mask(s) for s in ({3}, {2, 3}, {1, 3}, {3, 2, 1}, set(), {2})]
    assert lt.budget_loss(masks, m, 0.6, 0.1).tolist() == [False, False, True, True, True,
                                                            True]
    # μ_i = τ + ζ exactly is never penalised (eq. 2 vs eq. 1)
    assert lt.budget_loss([lt.set_mask({0})], (0.9, 0.7), 0.6, 0.1).tolist() == [False]
    assert lt.budget_loss([-1], (0.9, 0.2), 0.6, 0.1).tolist() == [True]   # no decision
    assert lt.target_mask(B["means"], 0.5) == 0b1100
    assert lt.mask_set(0b1011, 4) == {0, 1, 3} and lt.mask_set(-1, 4) is None


# ------------------------------------------------------------- white box and replay

def local_pair(r, rp):
    return NeighbourPair.change("local", None, (), r, rp, {"kind": "none", "name": "none"},
                                "the local reward")


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_privbern_whitebox_loss_is_exactly_eps_and_mutant_twice(eps):
    spec, _, prep = prepared("privbern", eps)
    r = wb.whitebox(spec, prep, local_pair(0.0, 1.0), Claim(eps), wb.Replay(200, 1))
    assert r["max_loss"] == pytest.approx(eps, abs=1e-12)
    assert {round(q, 9) for q in r["quantiles"].values()} <= {round(eps, 9), round(-eps, 9)}
    assert r["releases_exceed_eps"] is False and r["replay"]["diverged_runs"] == 0
    assert r["worst_run"]["nonzero_contributions"] == 1      # only user 0 reads r
    spec, _, prep = prepared("privbern-wrong-exp", eps)
    r = wb.whitebox(spec, prep, local_pair(0.0, 1.0), Claim(eps), wb.Replay(200, 1))
    assert r["max_loss"] == pytest.approx(2 * eps, abs=1e-12)
    assert r["releases_exceed_eps"] is True


def test_bandit_whitebox_replay_and_apt_divergence():
    base = constant_table(0.0, 16, 4)
    pair = NeighbourPair.change_row(base, 3, 0.0, 1.0, {"kind": "constant", "value": 0.0},
                                    "row 3")
    spec, _, prep = prepared("ldp-tb-budget", 1.0)
    r = wb.whitebox(spec, prep, pair, Claim(1.0), wb.Replay(300, 2, limit=64))
    assert r["max_loss"] == pytest.approx(1.0, abs=1e-12)
    assert r["replay"]["diverged_runs"] == 0
    spec, _, prep = prepared("ldp-tb-confidence", 1.0)
    r = wb.whitebox(spec, prep, pair, Claim(1.0), wb.Replay(100, 2, limit=400))
    assert r["max_loss"] == pytest.approx(1.0, abs=1e-12)
    assert r["replay"]["diverged_runs"] == 0
    spec, _, prep = prepared("apt", 1.0)
    r = wb.whitebox(spec, prep, pair, Claim(1.0), wb.Replay(20, 2, limit=64))
    # row 3 (arm 3's initial reward) decides the first adaptive pull (sample 4)
    assert r["replay"]["diverged_runs"] == 40 and r["replay"]["first_divergent_step"] == 4


def test_frozen_bits_steer_the_replay():
    table = np.random.default_rng(3).random((200, 4))
    spec, _, prep = prepared("ldp-tb-budget", 1.0, horizon=200)
    tau, rec, _, nr, acts, rel = call(spec, prep, table, 200, seed=5, n_rel=200)
    # replay on a different table with the same bits frozen: the same transcript
    other = 1.0 - table
    tau2, rec2, _, nr2, acts2, rel2 = call(spec, prep, other, 200, seed=5, n_rel=200,
                                           frozen=rel[:, 5])
    assert (tau2, rec2, nr2) == (tau, rec, nr) and np.array_equal(acts2, acts)
    assert np.array_equal(rel2[:, 5], rel[:, 5]) and np.array_equal(rel2[:, 4],
                                                                     other[np.arange(200), acts])
    # flipped bits give a different run
    _, _, _, _, acts3, _ = call(spec, prep, table, 200, seed=5, frozen=1.0 - rel[:, 5])
    assert not np.array_equal(acts3, acts)


# ------------------------------------------------------------------- exact transcript DP

def transcript_law(table, eps, K, T, tau_e, zeta_e):
    """Exact law of Algorithm 1's transcript (actions, Ŝ) on ``table``: sum over all 2^T
    response sequences of Π_t P(Y_t | table[t, a_t])."""
    law = {}
    for bits in range(2 ** T):
        ys = [(bits >> t) & 1 for t in range(T)]
        acts, S = ref_alg1(lambda t, a, n: ys[t], K, T, tau_e, zeta_e)
        p = 1.0
        for t, a in enumerate(acts):
            q = lt.privbern_prob(table[t, a], eps)
            p *= q if ys[t] else 1 - q
        key = (tuple(acts), frozenset(S))
        law[key] = law.get(key, 0.0) + p
    return law


def test_exact_transcript_loss_is_at_most_eps_and_reaches_it():
    """Changing one row changes one factor, so the transcript
    (actions and Ŝ) is ε-DP; with τ ≠ 1/2 the first adaptive pull shows the changed bit
    exactly (K = 2: a_2 = arm 1 iff Y_0 = 0 and Y_1 = 1), so the bound is attained."""
    K, T, eps = 2, 8, 1.0
    tau_e, zeta_e = lt.tau_eps(0.6, eps), lt.zeta_eps(0.1, eps)
    rng = np.random.default_rng(0)
    for row in range(T):
        base = rng.random((T, K))
        d, dp = base.copy(), base.copy()
        d[row], dp[row] = 0.0, 1.0
        P, Q = (transcript_law(x, eps, K, T, tau_e, zeta_e) for x in (d, dp))
        assert P.keys() == Q.keys() and sum(P.values()) == pytest.approx(1.0)
        worst = max(abs(math.log(P[k] / Q[k])) for k in P)
        assert worst <= eps + 1e-9
        if row == 1:
            # the event a_2 = 1 has probability ratio exactly e^ε
            p = sum(v for k, v in P.items() if k[0][2] == 1)
            q = sum(v for k, v in Q.items() if k[0][2] == 1)
            assert math.log(q / p) == pytest.approx(eps, abs=1e-12)


# ---------------------------------------------------------------- statistical tests

@pytest.mark.statistical
@pytest.mark.parametrize("law", ["uniform", "beta"])
def test_privbern_mean_is_mu_eps_for_any_reward_law(law):
    """E[Y] = μ_ε (Lemma 2.1) for non-Bernoulli rewards: n = 10^6 users whose rewards are
    drawn from Uniform[0, 1] (μ = 1/2) or Beta(2, 5) (μ = 2/7), privatised by the kernel.
    The mean of n bits has sd ≤ 0.5/√n = 5e-4; the test allows 5.5 sd (two-sided normal
    tail 3.8e-8; the binomial is within 1e-3 of it relatively at this n): false failure
    < 1e-6."""
    n, eps = 1_000_000, 1.0
    rng = np.random.default_rng(11 if law == "uniform" else 12)
    r = rng.random(n) if law == "uniform" else rng.beta(2, 5, n)
    mu = 0.5 if law == "uniform" else 2 / 7
    spec, _, prep = prepared("privbern", eps, max_steps=n)
    tau, _, status, nr, bits, _ = call(spec, prep, r, n, seed=13)
    assert (tau, status, nr) == (n, STOPPED, n)
    assert abs(bits.mean() - lt.mu_eps(mu, eps)) <= 5.5 * 0.5 / math.sqrt(n)
    # and per-reward: bits of users with r > 1/2 are more often 1 (the bit depends on r)
    assert bits[r > 0.5].mean() > bits[r <= 0.5].mean() + 0.05


@pytest.mark.parametrize("eps, T, reference, half", [(1.0, 500, 0.0905, 0.0040),
                                                  (0.5, 1000, 0.2183, 0.0057),
                                                  (2.0, 200, 0.0491, 0.0030)])
def test_algorithm_1_monte_carlo_regression(eps, T, reference, half):
    """P(L(T) = 1) on instance A against reference Monte Carlo values (R = 20000, their 95 %
    half-width ``half``). We run R = 20000 fresh runs. Failure needs our estimate to miss the
    reference by more than half·1.5 (its own error, treated as ≤ 3 sd = 1.53 half-widths) plus
    5.5 sd of ours (sd = sqrt(p(1−p)/R) ≤ half/1.96): probability ≤ 4e-8 if the reference
    value is within 3 of its sd (itself 0.997; if not, this test needs the reference fixed).
    The reference values were simulated independently of this code (NumPy, R = 20000 runs)."""
    R = 20000
    tau, rec, status = lt.fresh_runs(registry.get("ldp-tb-budget"), eps, {**A, "horizon": T}, R,
                                     seed=T)
    assert (tau == T).all() and (status == STOPPED).all()
    p = lt.budget_loss(rec, A["means"], 0.5, 0.05).mean()
    sd = math.sqrt(reference * (1 - reference) / R)
    assert abs(p - reference) <= 1.53 * half + 5.5 * sd


@pytest.mark.statistical
def test_algorithm_2_stopping_times_and_correctness_on_instance_b():
    """Instance B, ε = 1, δ = 0.05, R = 1000 fresh runs (0 errors, mean 15454,
    median 14889, max 37425). The stopping time has sd ≈ 6000 (measured), so the mean of
    1000 runs has sd ≈ 190 for both the reference sample and ours: the test allows
    |mean − 15454| ≤ 8·190 (a 5.7 sd gap of the difference: < 1.2e-8). δ-correctness
    (Thm 4.1): errors ~ Binomial(1000, p ≤ 0.05); ≤ 90 errors fails only if p > 0.05 or
    with probability < 1e-7 (binomial tail at 90). Every run must stop within 2^24 pulls
    (implicit bound of App. D: 76016)."""
    tau, rec, status = lt.fresh_runs(registry.get("ldp-tb-confidence"), 1.0,
                                     {**B, "risk": 0.05}, 1000, seed=21)
    assert (status == STOPPED).all()
    errors = int((rec != lt.target_mask(B["means"], 0.5)).sum())
    assert errors <= 90
    assert stats.binom.sf(90, 1000, 0.05) < 1e-7
    assert abs(tau.mean() - 15454) <= 8 * 190
    assert tau.max() < lt.thm41_implicit(B["means"], 0.5, 1.0, 0.05)


# ----------------------------------------------------------------- audits (local model)

@pytest.mark.statistical
def test_privbern_audit_on_the_local_model_is_tight_and_the_mutant_is_caught():
    """The local-model pipeline end to end (candidates r, r' ∈ {0, ½, 1}, white-box screen,
    measurement). At α = 1e-6, ε_lb ≤ ε fails with probability ≤ 1e-6 (Clopper–Pearson).
    Event {Y = 1} at (0, 1) has ratio e^ε with masses 0.73/0.27: at 2·10^5 runs per side
    ε_lb ≈ ε − 0.05 (sd of ε̂ ≈ 0.006), so ≥ 0.85 ε is a > 15 sd margin. The mutant's true
    loss is 2ε: its bound ≈ 2 − 0.05 clears 1 by > 100 sd."""
    r = audit_algorithm("privbern", 1.0, alpha=1e-6, runs=200_000, seed=3, workers=1,
                        whitebox_runs=100)
    assert r.verdict == "pass" and 0.85 <= r.eps_lb <= 1.0
    assert r.neighbours["model"] == "local" and {r.neighbours["d"], r.neighbours["d_prime"]} \
        == {0.0, 1.0}
    assert r.whitebox["max_loss"] == pytest.approx(1.0, abs=1e-12)
    m = audit_algorithm("privbern-wrong-exp", 1.0, alpha=1e-6, runs=200_000, seed=3,
                        workers=1, whitebox_runs=100)
    assert m.verdict == "violation" and m.exit_code == 1 and 1.5 < m.eps_lb <= 2.0
    assert registry.get("privbern-wrong-exp").mutant_of == "privbern"


@pytest.mark.statistical
def test_local_model_explicit_pair_and_structure_strategy():
    # --pair with two rewards (the arm-count check applies to tables only) and the
    # `structure` strategy (a local algorithm names no rows: its value patterns are tried)
    spec = registry.get("privbern")
    r = audit_algorithm(spec, 1.0, alpha=1e-6, runs=50_000, seed=4, workers=1,
                        pair=local_pair(1.0, 0.5), whitebox_runs=10)
    assert r.neighbours["d"] == 1.0 and r.verdict == "pass"
    # the true loss of (1, ½) is 0.620: the bound must stay below it
    assert r.eps_lb <= 0.620115 + 1e-9
    pairs = neighbours.candidates(spec, spec.resolve_params({}), 0)
    assert sorted((float(p.d), float(p.d_prime)) for p in pairs) == [(0, 0.5), (0, 1),
                                                                      (0.5, 1)]
    r = audit_algorithm(spec, 1.0, alpha=1e-6, runs=50_000, seed=4, workers=1,
                        neighbours="structure", whitebox_runs=10)
    assert r.verdict == "pass" and r.eps_lb > 0.7
    # a structure strategy that names no row inside the audit tables: a one-line input error
    with pytest.raises(InputError, match="names no position within its audit horizon"):
        audit_algorithm("ldp-tb-budget", 1.0, params={"audit_rows": 2}, runs=1000,
                        neighbours="structure", workers=1)


@pytest.mark.statistical
def test_bandit_audits_on_a_known_pair():
    """Instance C (τ = 0.6), tied-low table, row 3 (arm 3's initial pull) 0 vs 1: the first
    adaptive pull is arm 3 iff Y_0 = Y_1 = Y_2 = 0 and Y_3 = 1, an event of ratio exactly
    e^ε (0.286 vs 0.105 at ε = 1). At 2·10^5 runs per side and α = 1e-6, ldp-tb-budget's
    ε_lb ≤ 1 fails with probability ≤ 1e-6 and ≥ 0.85 is a > 10 sd margin; APT reads raw
    rewards (the event has probability 1 vs 0): a violation at any budget."""
    base = constant_table(0.0, 16, 4)
    pair = NeighbourPair.change_row(base, 3, 0.0, 1.0, {"kind": "constant", "value": 0.0,
                                                        "name": "tied-low"}, "row 3")
    r = audit_algorithm("ldp-tb-budget", 1.0, alpha=1e-6, runs=200_000, seed=5, workers=1,
                        pair=pair, whitebox_runs=50)
    assert r.verdict == "pass" and 0.85 <= r.eps_lb <= 1.0
    a = audit_algorithm("apt", 1.0, alpha=1e-6, runs=200_000, seed=5, workers=1, pair=pair,
                        whitebox_runs=10)
    assert a.verdict == "violation" and a.eps_lb > 5


@pytest.mark.slow
def test_batch_loops_load_from_numba_cache_and_equal_the_generic_loop():
    # as tests/auditing/test_audit.py for adap-tt: a fresh process loads tb_batch and privbern_batch
    # from numba's cache, and they equal the generic loop bit for bit
    import subprocess
    import sys
    import tempfile
    code = ("import numpy as np\n"
            "from dpaudit.algorithms import registry\n"
            "from dpaudit.simulation import simulate\n"
            "from dpaudit.algorithms.ldp_thresholding import algorithm as lt\n"
            "for name, table in (('ldp-tb-confidence', np.ones((48, 4))),"
            " ('privbern', np.array([1.0]))):\n"
            "    spec = registry.get(name)\n"
            "    prep = spec.prepare(1.0, spec.resolve_params({}))\n"
            "    L = table.shape[0]\n"
            "    out = simulate.run_batch(spec.request(prep, table, 300, 1, np.array([L]), L))\n"
            "    ref = simulate.batch_body(spec.kernel, np.random.default_rng(1), table,"
            " prep.means, prep.theta, prep.aux, L, 300, simulate.as_views([L]), 0)\n"
            "    assert all(np.array_equal(a, b) for a, b in zip(out, ref))\n"
            "print(sum(lt.tb_batch.stats.cache_hits.values()),"
            " sum(lt.privbern_batch.stats.cache_hits.values()))\n")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=tempfile.gettempdir()) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[-1].stderr
    assert all(int(x) >= 1 for x in runs[1].stdout.split())
