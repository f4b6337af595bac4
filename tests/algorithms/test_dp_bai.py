"""Tests of Chen, Karthik, Chee, Tan (ICLR 2024, arXiv:2401.09073) (algorithms/dp_bai/algorithm.py, algorithms/dp_bai/linear.py): DP-BAI, DP-BAI-GAUSS,
BASELINE, DP-OD, OD-LinBAI and the reuse mutant, against worked numbers
(examples (a)–(d) below, computed independently of this code with NumPy/SciPy from the paper's
eqs. (4)–(8) and (14)–(15)) and invariants of the paper's Algorithms 1–2.

Deterministic unless stated. The statistical tests are seeded and state their false-failure
probability (each ≤ 1e-6, from Hoeffding's inequality P(|p̂ − p| ≥ t) ≤ 2·exp(−2nt²)).
"""
import dataclasses
import itertools
import math
import pathlib

import numpy as np
import pytest

from dpaudit.algorithms import registry
from dpaudit.algorithms.dp_bai import algorithm as db
from dpaudit.algorithms.dp_bai import linear as lin
from dpaudit.auditing.whitebox import RELEASE_ROWS
from dpaudit.core.request import Claim
from dpaudit.data.tables import NeighbourPair
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import GAUSSIAN, LAPLACE, STOPPED, run_batch

NAMES = ("dp-bai", "dp-bai-gauss", "dp-bai-baseline", "dp-od", "od-linbai", "dp-bai-reuse")
K5_MEANS = (0.5, 0.45, 0.4, 0.35, 0.3)
ROOT = pathlib.Path(__file__).resolve().parents[2]


def prepared(name, eps=1.0, delta=None, **params):
    spec = registry.get(name)
    p, delta = spec.resolve_claim(params, delta)
    return spec, p, spec.prepare(eps, p)


def run(name, table, eps=1.0, seed=0, frozen=None, limit=None, **params):
    """One kernel call: (actions, Î, status, releases (n_rel × 8))."""
    spec, p, prep = prepared(name, eps, **params)
    limit = spec.audit_horizon(p) if limit is None else limit
    actions = np.full(limit, -1, np.int16)
    rel = np.full((RELEASE_ROWS, 8), np.nan)
    tau, rec, status, nr = (int(x) for x in spec.kernel(
        np.random.default_rng(seed), np.ascontiguousarray(table, dtype=np.float64), prep.means,
        prep.theta, prep.aux, limit, actions, rel, np.empty(0) if frozen is None else frozen))
    return actions[:tau].copy(), rec, status, rel[:nr].copy()


def save_features(tmp_path, A, name="f.npy"):
    path = tmp_path / name
    np.save(path, np.asarray(A, dtype=np.float64))
    return str(path)


# ------------------------------------------------------------------ schedule (eqs. 4–8)

@pytest.mark.parametrize("reading, M1, M, s, slack", [
    ("A", 3, 8, (10000, 423, 77, 32, 16, 8, 4, 2, 1), 368),
    ("B", 4, 9, (10000, 423, 77, 64, 32, 16, 8, 4, 2, 1), 384)])
def test_schedule_appendix_b(reading, M1, M, s, slack):
    # worked example (c): d = 16, K = 10 000; λ ≈ 27.65 is the paper's own value (natural log)
    sc = lin.schedule(10_000, 16, 5000, reading)
    assert sc.c == 64 and sc.g[0] == 64 and sc.h == (9936, 359, 13, 0)
    assert sc.lam == pytest.approx(27.6496, abs=5e-5)
    assert (sc.M1, sc.M) == (M1, M) and sc.s[1:] == s and sc.s[0] == 10_000
    assert sc.T_prime == 5000 - slack


def test_schedule_section5_both_readings():
    # worked example (a): c = 1, g = (1, 1), h = (29, 0), λ = 29^(1/ln 2) = 128.7640
    a, b = lin.schedule(30, 2, 1000, "A"), lin.schedule(30, 2, 1000, "B")
    assert a.lam == pytest.approx(128.7640, abs=5e-5) and a.g == (1, 1) and a.h == (29, 0)
    assert (a.M1, a.M, a.s, a.T_prime) == (1, 1, (30, 30, 1), 998)
    assert (b.M1, b.M, b.s, b.T_prime) == (2, 2, (30, 30, 1, 1), 996)


@pytest.mark.parametrize("T, n_p, total", [(500, (33, 54, 81), 489), (1000, (66, 109, 164), 985),
                                           (2000, (133, 221, 331), 1990),
                                           (5000, (333, 554, 831), 4989)])
def test_schedule_k5_table_and_kernel(T, n_p, total):
    # worked example (b): K = d = 5, c = 7 ≥ K, λ = 2, M_1 = 1, M = 3, s = (5, 3, 2, 1), T' = T − 19
    for reading in "AB":
        sc = lin.schedule(5, 5, T, reading)
        assert (sc.lam, sc.M1, sc.M, sc.s, sc.T_prime) == (2.0, 1, 3, (5, 5, 3, 2, 1), T - 19)
    # the kernel: every phase takes the uniform branch (d_p = s_p); counts from the release
    # log, the total from the transcript
    table = (np.random.default_rng(T).random((5, T)) < np.array(K5_MEANS)[:, None]) * 1.0
    acts, rec, status, rel = run("dp-bai", table, features="identity", means=K5_MEANS,
                                 horizon=T)
    assert status == STOPPED and len(acts) == total
    for p, n in enumerate(n_p, start=1):
        rows = rel[rel[:, 2] == p]
        assert len(rows) == (5, 3, 2)[p - 1] and (rows[:, 3] == n).all()
        # the uniform phase pulls exactly its active set A_p, |A_p| = s_p
        start = sum(k * m for k, m in zip((5, 3, 2), n_p[:p - 1]))
        assert len(set(acts[start:start + (5, 3, 2)[p - 1] * n])) == (5, 3, 2)[p - 1]


def test_schedule_appendix_e2_and_collinear(tmp_path):
    sc = lin.schedule(2, 2, 100, "A")                          # worked example (d)
    assert (sc.c, sc.lam, sc.M1, sc.M, sc.T_prime) == (1, 2.0, 1, 1, 98)
    sc = lin.schedule(3, 2, 1000, "A")                         # the tight construction of DP-OD's finding
    assert sc.lam == pytest.approx(math.e) and sc.h == (2, 1, 0)
    assert (sc.M1, sc.M, sc.s, sc.T_prime) == (2, 2, (3, 3, 2, 1), 996)
    # E.2 in the kernel: d_1 = 2 ≥ √2, the uniform branch: both arms ⌈(T − 2)/2⌉ times, the
    # same actions whatever x and y
    T = 101
    out = []
    for y in (1.0, 3.0, 30.0):
        f = save_features(tmp_path, [[1.0, 0.0], [0.0, y]], f"e2_{y}.npy")
        acts, _, _, rel = run("dp-bai", np.full((2, T), 0.5), features=f, means=(0.55, 0.5),
                              horizon=T)
        out.append(acts)
        assert (np.bincount(acts) == [50, 50]).all() and (rel[:, 3] == 50).all()
    assert all(np.array_equal(out[0], o) for o in out)


@pytest.mark.parametrize("K", [2, 3, 5, 10, 30, 64, 200, 1000])
@pytest.mark.parametrize("d", [1, 2, 3, 4, 8, 16])
def test_schedule_reading_a_is_self_consistent(K, d):
    # (a): s_1 = K and s_{M+1} = 1; stage 1 shrinks towards g_0, stage 2 halves; A and B
    # coincide when K ≤ c
    a = lin.schedule(K, d, 10 ** 6, "A")
    assert a.s[1] == K and a.s[-1] == 1 and len(a.s) == a.M + 2
    assert all(a.s[p + 1] <= a.s[p] for p in range(1, a.M + 1))
    if K <= a.c:
        assert a == dataclasses.replace(lin.schedule(K, d, 10 ** 6, "B"), reading="A")


# ------------------------------------------------------------------- hardness (14)–(15)

def test_hardness_worked_numbers():
    A, theta = lin.sec5_features()
    for eps, H in ((0.1, 1983.05), (1.0, 1341.52), (10.0, 1277.37)):   # worked example (a)
        h = lin.hardness(A @ theta, 2, eps)
        assert h["H_BAI"] == pytest.approx(1270.24, abs=0.01)
        assert h["H_pri"] == pytest.approx(71.28 / eps, rel=1e-4) and h["H"] == pytest.approx(
            H, abs=0.01)
    for eps, H in ((0.1, 1200), (1.0, 840), (10.0, 804)):              # worked example (b)
        h = lin.hardness(K5_MEANS, 5, eps)
        assert (h["H_BAI"], h["H_pri"] * eps) == pytest.approx((800, 40)) and h["H"] == \
            pytest.approx(H)
    h = lin.hardness((0.55, 0.5), 2, 0.5)                               # worked example (d)
    assert (h["H_BAI"], h["H_pri"]) == pytest.approx((2 / 0.05 ** 2, 2 / (0.5 * 0.05)))
    assert (lin.h_bai(K5_MEANS, 5), lin.h_pri(K5_MEANS, 5, 2.0), lin.h_total(K5_MEANS, 5, 2.0)
            ) == pytest.approx((800, 20, 820))


def test_section5_instance():
    A, theta = lin.sec5_features()
    assert A[3:, 1][:4] == pytest.approx([0.5096, 0.2158, 0.0328, 0.0132], abs=5e-5)
    assert A[-1, 1] == pytest.approx(0.7978, abs=5e-5)
    mu = A @ theta
    assert mu[:3] == pytest.approx([0.5, 0.45, 0.45]) and mu[-1] == pytest.approx(0.4439,
                                                                                   abs=5e-5)
    gaps = np.sort(mu.max() - mu)
    assert gaps[:6] == pytest.approx([0, 0.05, 0.05, 0.05612, 0.08097, 0.0899], abs=5e-5)


# ------------------------------------------------------------------------------ MAX-DET

def test_maxdet_section5():
    # worked example (a): B_1 = {1, 3} with |det| 10; runners-up {2, 3} (9) and {3, 30} (7.98);
    # a_2 = 0.9 a_1, a_i = ω_i a_1 + 0.1 a_3, so max |α| = 1
    A, _ = lin.sec5_features()
    r = lin.max_det(A)
    assert list(r["B"]) == [0, 2] and r["det"] == pytest.approx(10.0) and r["rank"] == 2
    pairs = np.array(list(itertools.combinations(range(30), 2)))
    vol = np.sqrt(lin._gram_dets(A, pairs))
    order = np.argsort(-vol, kind="stable")[:3]
    assert [tuple(pairs[i]) for i in order] == [(0, 2), (1, 2), (2, 29)]
    assert vol[order] == pytest.approx([10.0, 9.0, 7.978], abs=5e-4)
    alpha = r["alpha"]
    assert alpha[1] == pytest.approx([0.9, 0.0]) and alpha[2] == pytest.approx([0.0, 1.0])
    assert alpha[3:, 0] == pytest.approx(A[3:, 1]) and alpha[3:, 1] == pytest.approx(0.1)
    assert np.abs(alpha).max() == pytest.approx(1.0)
    # the prepared kernel input carries the same phase-1 choice
    spec, p, prep = prepared("dp-bai")
    assert prep.theta[db.B_BRANCH1] == 1 and prep.theta[db.B_D1] == 2


def random_features(rng, K, d, kind):
    if kind == "gauss":
        return rng.normal(size=(K, d))
    # clustered: a basis plus random multiples of two directions (low-rank active sets)
    dirs = rng.normal(size=(2, d))
    A = [np.eye(d)[i] for i in range(d)]
    for _ in range(K - d):
        A.append(rng.uniform(0.2, 2.0) * dirs[rng.integers(2)])
    return np.array(A)


@pytest.mark.parametrize("kind", ["gauss", "clustered"])
def test_maxdet_lemma_g1_and_implementations_agree(kind):
    # Lemma G.1: every coordinate |α| ≤ 1 for an exact or 1-swap-optimal MAX-DET collection;
    # the itertools search (phase 1, Python) and the compiled one (later phases) pick the same
    # collection; exhaustive ≥ 1-swap in volume; compiled and Python 1-swap agree
    rng = np.random.default_rng(7)
    for _ in range(40):
        K, d = int(rng.integers(4, 14)), int(rng.integers(1, 4))
        A = random_features(rng, K, d, kind)
        ex, sw = lin.max_det(A, "exhaustive"), lin.max_det(A, "swap")
        assert np.abs(ex["alpha"]).max() <= 1 + 1e-9
        assert np.abs(sw["alpha"]).max() <= 1 + 1e-9
        assert ex["det"] >= sw["det"] * (1 - 1e-12)
        act = np.arange(K)
        B, alpha = lin.maxdet(A, act, K, ex["rank"], 1, lin.EXHAUSTIVE_MAX)
        assert list(B) == list(ex["B"]) and np.allclose(alpha, ex["alpha"])
        B, _ = lin.maxdet(A, act, K, ex["rank"], 2, lin.EXHAUSTIVE_MAX)
        assert list(B) == list(sw["B"])


# -------------------------------------------------------- literal reference (Algorithm 1)

def reference(F, table, T, released, maxdet_on=True, reuse=False, reading="A"):
    """Algorithm 1 written literally from the pseudo-code, with the paper's own objects:
    orthonormal coordinates of the active span at every phase (eq. 9, from an SVD), DET as
    |det| of the d_p × d_p matrix of reduced vectors (itertools over all subsets), α by
    solving (12) in reduced coordinates, the pulls of lines 8/14, eq. (10), and the released
    noisy values ``released`` (consumed in pull order) in place of fresh noise. Returns
    (actions, Î, |A_p| per phase, exact phase means in release order)."""
    K, d = F.shape
    sc = lin.schedule(K, d, T, reading)
    A = list(range(K))
    coords = {i: F[i].copy() for i in A}
    N = [0] * K
    cum = [0.0] * K
    acts, sizes, means = [], [], []
    rel = iter(released)
    for p in range(1, sc.M + 1):
        sizes.append(len(A))
        X = np.array([coords[i] for i in A])
        dp = np.linalg.matrix_rank(X)
        basis = np.linalg.svd(X)[2][:dp]
        coords = {i: basis @ coords[i] for i in A}                        # eq. (9)
        if maxdet_on and dp < math.sqrt(len(A)):                          # line 6
            subsets = list(itertools.combinations(A, dp))
            dets = [abs(np.linalg.det(np.array([coords[i] for i in S]).T)) for S in subsets]
            B = list(subsets[next(j for j, v in enumerate(dets) if v >= max(dets) * (1 - 5e-11))])
            pulled, n = B, math.ceil(sc.T_prime / (sc.M * dp))            # line 8
        else:
            B, pulled, n = None, A, math.ceil(sc.T_prime / (sc.M * len(A)))  # line 14
        mu = {}
        for a in pulled:
            xs = [table[a, N[a] + j] for j in range(n)]
            acts += [a] * n
            N[a] += n
            cum[a] += sum(xs)
            means.append(cum[a] / N[a] if reuse else sum(xs) / n)         # eq. (10)
            mu[a] = next(rel)                                             # eq. (11)
        if B is not None:                                                 # eq. (12)
            MB = np.array([coords[j] for j in B]).T
            for i in A:
                if i not in B:
                    mu[i] = float(np.linalg.solve(MB, coords[i]) @ np.array([mu[j] for j in B]))
        A = sorted(sorted(A, key=lambda i: (-mu[i], i))[:sc.s[p + 1]])    # line 20
    return acts, A[0], sizes, means


@pytest.mark.parametrize("name, maxdet_on, reuse", [("dp-bai", True, False),
                                                     ("dp-bai-baseline", False, False),
                                                     ("dp-bai-reuse", True, True)])
@pytest.mark.slow
def test_kernel_matches_literal_reference(tmp_path, name, maxdet_on, reuse):
    # clustered features (K = 40, d = 3: s = 40, 4, 2, 1): phase 1 takes the MAX-DET branch
    # with B_1 precomputed, later phases often have a rank-1 active set and take it again in
    # compiled code. The kernel's transcript and Î equal the literal reference's given the
    # kernel's own released values; its logged exact values equal eq. (10); |A_p| = s_p.
    rng = np.random.default_rng(11)
    A = random_features(rng, 40, 3, "clustered")
    f = save_features(tmp_path, A)
    T = 400
    sc = lin.schedule(40, 3, T)
    later_maxdet = 0
    for trial in range(60):
        table = rng.random((40, T)) * rng.random((40, 1))
        acts, rec, status, rel = run(name, table, eps=5.0, seed=trial, features=f,
                                     means=(0.5,) * 40, horizon=T)
        ref_acts, ref_rec, sizes, means = reference(A, table, T, rel[:, 5], maxdet_on, reuse)
        assert status == STOPPED and list(acts) == ref_acts and rec == ref_rec
        assert rel[:, 4] == pytest.approx(means, abs=1e-12)
        assert sizes == list(sc.s[1:-1])
        later_maxdet += int(maxdet_on and (rel[:, 2] >= 2).any() and
                            len(set(rel[rel[:, 2] == 2, 1])) < sc.s[2])
    if maxdet_on:
        assert later_maxdet > 5          # the compiled MAX-DET path was exercised


# --------------------------------------------------------------- invariants

def phase_counts(acts, rel):
    """Pulls of each released arm in the phase of its release, from the transcript: a
    release at t of arm a counts a's pulls since its previous release."""
    out, last = [], {}
    for t, a in rel[:, :2].astype(int):
        out.append(int((acts[last.get(a, 0):t] == a).sum()))
        last[a] = t
    return np.array(out)


@pytest.mark.parametrize("name, params, eps", [
    ("dp-bai", {}, 1.0), ("dp-bai", {"horizon": 500}, 0.3),
    ("dp-bai-baseline", {"horizon": 500}, 2.0),
    ("dp-bai-baseline", {"horizon": 500, "overrun": "truncate"}, 1.0),
    ("dp-bai-baseline", {"horizon": 500, "overrun": "floor"}, 1.0),
    ("dp-bai", {"features": "identity", "means": K5_MEANS, "horizon": 300}, 0.5),
    ("dp-bai", {"features": "collinear"}, 1.0)])
def test_noise_scale_times_count_times_eps_is_one(name, params, eps):
    table = np.random.default_rng(3).random((30 if "features" not in params else
                                             (5 if params["features"] == "identity" else 3),
                                             600))
    for seed in range(5):
        acts, _, _, rel = run(name, table, eps=eps, seed=seed, **params)
        assert len(rel) > 0 and (rel[:, 7] == LAPLACE).all()
        assert (rel[:, 6] * rel[:, 3] * eps == pytest.approx(1.0, rel=1e-12))
        assert (rel[:, 3] == phase_counts(acts, rel)).all()     # count = actual pulls


def test_noise_invariant_fails_for_the_reuse_mutant():
    # the mutant's statistic covers all N[a] samples but its noise is calibrated to n_p only
    table = np.random.default_rng(3).random((5, 60))
    _, _, _, rel = run("dp-bai-reuse", table)
    later = rel[rel[:, 2] >= 2]
    assert len(later) and (later[:, 6] * later[:, 3] > 1.0 + 1e-9).all()


@pytest.mark.parametrize("delta", [1e-5, 0.01])
def test_gauss_sigma(delta):
    table = np.random.default_rng(3).random((30, 40))
    spec, p, prep = prepared("dp-bai-gauss", 0.7, delta=delta)
    assert p["delta"] == delta
    acts, _, _, rel = run("dp-bai-gauss", table, eps=0.7, delta=delta)
    assert (rel[:, 7] == GAUSSIAN).all()
    assert rel[:, 6] * rel[:, 3] * 0.7 == pytest.approx(math.sqrt(2 * math.log(1.25 / delta)))


def test_overrun_policies_on_baseline_section5():
    # Algorithm 2 (BASELINE): BASELINE at T = 500 pulls 30 × ⌈498/30⌉ = 510 > T (allow); floor: 30 ×
    # 16 = 480; truncate: 500, the last arm gets 7 of its 17 pulls and noise 1/(7ε)
    table = np.full((30, 600), 0.5)
    sizes = {}
    for overrun in db.OVERRUNS:
        acts, _, _, rel = run("dp-bai-baseline", table, horizon=500, overrun=overrun)
        sizes[overrun] = len(acts)
        if overrun == "truncate":
            assert rel[-1, 1] == 29 and rel[-1, 3] == 7 and rel[-1, 6] == pytest.approx(1 / 7)
    assert sizes == {"allow": 510, "floor": 480, "truncate": 500}
    assert registry.get("dp-bai-baseline").audit_horizon(
        registry.get("dp-bai-baseline").resolve_params({"horizon": 500})) == 510


def test_each_entry_read_once_by_pull_index():
    # a table whose entries are all distinct: each release's exact value is the mean of the
    # entries (a, N_before .. N_after − 1) of its own phase only (eq. 10), so every read
    # entry enters exactly one release, and entries are indexed by pull count, not time
    K, T = 5, 300
    table = (np.arange(K * T).reshape(K, T) + 0.5) / (K * T)
    acts, _, _, rel = run("dp-bai", table, features="identity", means=K5_MEANS, horizon=T)
    N = np.zeros(K, int)
    seen = np.zeros((K, T), int)
    for t, a, _, c, v in rel[:, :5]:
        a, c = int(a), int(c)
        assert v == pytest.approx(table[a, N[a]:N[a] + c].mean(), abs=1e-12)
        seen[a, N[a]:N[a] + c] += 1
        N[a] += c
    assert seen.max() == 1 and seen.sum() == len(acts)
    # the mutant re-reads: its later releases cover earlier entries again
    _, _, _, rel = run("dp-bai-reuse", table, horizon=T)
    covered = np.zeros((K, T), int)
    for _, a, _, c, _ in rel[:, :5]:
        covered[int(a), :int(c)] += 1
    assert covered.max() > 1


@pytest.mark.parametrize("name", ["dp-bai", "dp-bai-baseline", "dp-od", "dp-bai-gauss"])
def test_zero_influence_negative_control(name):
    # entries never read must leave the output unchanged. Same seed, table
    # changed at unread entries: bit-identical transcript, Î and releases. Control: changing a
    # read entry changes a released exact value (so the comparison can fail).
    base = np.random.default_rng(5).random((30, 30))
    acts, rec, _, rel = run(name, base, seed=9)
    counts = np.bincount(acts, minlength=30)
    unread = [(a, n) for a in range(30) for n in range(30) if n >= counts[a]]
    assert len(unread) > 800
    changed = base.copy()
    for a, n in unread:
        changed[a, n] = 1.0 - changed[a, n]
    acts2, rec2, _, rel2 = run(name, changed, seed=9)
    assert np.array_equal(acts, acts2) and rec == rec2 and np.array_equal(rel, rel2)
    read = base.copy()
    a0 = int(acts[0])
    read[a0, 0] = 1.0 - read[a0, 0]
    _, _, _, rel3 = run(name, read, seed=9)
    assert not np.array_equal(rel[:, 4], rel3[:, 4])


# --------------------------------------------------------------------------- statistics

@pytest.mark.statistical
def test_tight_construction_probabilities():
    # collinear features, x all zeros, x' = x with x_{1,1} = 1 (T = 32: n_1 = 14).
    # E = "the first action of phase 2 is not arm 1": P_x(E) = 1/2, P_x'(E) = e^{-ε}/2.
    # n = 200 000 runs per side; Hoeffding with t = 0.0065: each side fails with probability
    # ≤ 2·exp(−2·n·t²) = 9.1e-8, both together ≤ 1.9e-7 ≤ 1e-6.
    spec, p, prep = prepared("dp-bai", features="collinear")
    H = spec.audit_horizon(p)
    n, t = 200_000, 0.0065
    d = np.zeros((3, H))
    dp = d.copy()
    dp[0, 0] = 1.0
    rates = []
    for i, table in enumerate((d, dp)):
        _, taus, recs, st, kept = run_batch(spec.request(prep, table, n, 100 + i, [H], H), n)
        assert (st == STOPPED).all() and (kept[:, :14] == 0).all()
        rates.append(float((kept[:, 14] != 0).mean()))
    assert rates[0] == pytest.approx(0.5, abs=t)
    assert rates[1] == pytest.approx(math.exp(-1.0) / 2, abs=t)


# Success rates on the Section 5 instance at T = 500 (uniform rewards on [0, 2 mu]) from an
# independent step-by-step implementation of Algorithm 1 and its baselines, 20 000 trials per
# cell (standard error <= 0.0035, rounded to 3 decimals), for eps = 0.1 / 1 / 10
REFERENCE_T500 = {"dp-bai": (0.749, 0.975, 0.980), "dp-bai-baseline": (0.051, 0.274, 0.439),
                  "dp-od": (0.554, 0.829, 0.976), "od-linbai": (0.979, 0.979, 0.979)}


@pytest.mark.statistical
def test_accuracy_matches_an_independent_implementation():
    # dpaudit reproduce chen2024's simulation at T = 500 with n = 5000 trials per cell. 12
    # cells; Hoeffding with t = sqrt(ln(2.4e7)/(2n)) = 0.041 per cell, so all hold with
    # probability >= 1 - 1e-6 if the true rates equal the reference; those are estimates
    # (SE <= 0.0035, rounded), so the tolerance adds 0.011 (> 3 SE).
    from dpaudit.reproduce.chen2024 import successes
    n = 5000
    t = math.sqrt(math.log(2.4e7) / (2 * n)) + 0.011
    cells = [(m, e, 500) for m in REFERENCE_T500 for e in (0.1, 1.0, 10.0)]
    rate = {(m, e): k / n for (m, e, _), k in zip(cells, successes(cells, n, 2024))}
    for (m, e), r in rate.items():
        assert r == pytest.approx(REFERENCE_T500[m][(0.1, 1.0, 10.0).index(e)], abs=t), (m, e)
    # the qualitative claims of Sec. 5 at T = 500: DP-BAI ahead of BASELINE and DP-OD (gaps
    # >= 0.15 at eps <= 1 in the reference: far beyond 2t)
    for eps in (0.1, 1.0):
        assert rate[("dp-bai", eps)] > rate[("dp-od", eps)] > rate[("dp-bai-baseline", eps)]


# ---------------------------------------------------------------------------- DP-OD

@pytest.mark.parametrize("T", [500, 1000, 2000, 5000])
def test_od_design_and_allocation_section5(T):
    # OD-LinBAI (Yang & Tan 2022): the G-optimal design is exactly {a_1: ½, a_3: ½} (Kiefer–Wolfowitz value
    # 2 = d at both, every other arm ≤ 1.62); m = T − 3, ⌈m/2⌉ pulls of arms 1 and 3
    A, _ = lin.sec5_features()
    pi = lin.g_optimal_design(A)
    assert np.flatnonzero(pi).tolist() == [0, 2] and pi[[0, 2]] == pytest.approx([0.5, 0.5])
    V = (A.T * pi) @ A
    g = np.einsum("ia,ab,ib->i", A, np.linalg.inv(V), A)
    assert g[[0, 2]] == pytest.approx([2.0, 2.0]) and np.delete(g, [0, 2]).max() < 1.63
    table = np.random.default_rng(T).random((30, T))
    acts, _, _, rel = run("dp-od", table, horizon=T)
    n = math.ceil((T - 3) / 2)
    assert np.bincount(acts, minlength=3)[[0, 1, 2]].tolist() == [n, 0, n]
    # L = ‖a_3‖ = 10: both coordinates of Ũ get Lap(10/ε) (ε = 1)
    assert len(rel) == 2 and (rel[:, 6] == 10.0).all()
    assert rel[:, 4] == pytest.approx([10 * table[2, :n].sum(), table[0, :n].sum()])


def test_od_phases_identity_and_dependent_active_sets(tmp_path):
    # OD-LinBAI's schedule on K = d = 5: R = 3, m = (T − 5 − (3 + 2))/3 = 30 at T = 100; the active
    # vectors stay independent, so every design is uniform: 5 × 6, 3 × 10, 2 × 15 pulls, and
    # Ũ has d_r = 5, 3, 2 coordinates (orthonormal reduction when the rank drops)
    table = np.random.default_rng(2).random((5, 100))
    acts, rec, status, rel = run("dp-od", table, features="identity", means=K5_MEANS,
                                 horizon=100)
    assert status == STOPPED and len(acts) == 90
    assert [int((rel[:, 2] == r).sum()) for r in (1, 2, 3)] == [5, 3, 2]
    assert [int(c) for c in rel[[0, 5, 8], 3]] == [30, 30, 30]
    # a dependent later active set takes the compiled Frank–Wolfe path: features e_1..e_4 and
    # c·e_1 (c = 0.3..0.9), d = 4: R = 2, m = (200 − 10 − 2)/2 = 94. Phase 1: the uniform
    # design on e_1..e_4 (24 pulls each); with arm 0 always 1 and ε = 100 the survivors are
    # e_1 and 0.9·e_1: rank 1, so phase 2 reduces to one coordinate and the G-optimal design
    # puts all its weight on the longer vector: 94 pulls of arm 0
    A = np.vstack([np.eye(4), np.outer(np.linspace(0.3, 0.9, 8), np.eye(4)[0])])
    f = save_features(tmp_path, A)
    tab = np.zeros((12, 200))
    tab[0] = 1.0
    acts, rec, status, rel = run("dp-od", tab, eps=100.0, features=f, means=(0.5,) * 12,
                                 horizon=200)
    assert status == STOPPED and rec == 0 and len(acts) == 96 + 94
    assert np.bincount(acts[:96]).tolist() == [24] * 4 and (acts[96:] == 0).all()
    assert int((rel[:, 2] == 2).sum()) == 1 and rel[-1, 3] == 94
    w = lin.fw_design(np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]]), 10_000, 1e-6)
    assert w[:2] == pytest.approx([0.5, 0.5], abs=0.01) and w[2] < 0.01   # exact: ½, ½, 0


def test_od_linbai_is_deterministic():
    table = np.random.default_rng(1).random((30, 40))
    outs = {run("od-linbai", table, seed=s)[1] for s in range(20)}
    assert len(outs) == 1
    assert len(run("od-linbai", table)[3]) == 0      # no releases


def test_dp_od_l2_calibration_leaks_on_diagonal_features(tmp_path):
    # finding: an entry of arm a shifts U by a's coordinates, whose ℓ1 norm can exceed the
    # ℓ2 norm L of App. E.1. With a_1 = [1, 1], a_2 = [1, −1] (design ½, ½; L = √2) the
    # releases' privacy loss reaches ‖a_1‖₁/L·ε = √2·ε; with norm = l1 (L = 2) it is ε.
    # The white-box loss of each run is exact; the maximum is attained in a run whose two
    # released coordinates both fall beyond both exact values (probability 1/4 per run: none
    # of the 400 runs attaining it has probability 0.75^400 < 1e-49).
    from dpaudit.auditing.whitebox import Replay, whitebox
    f = save_features(tmp_path, [[1.0, 1.0], [1.0, -1.0], [0.1, 0.1]])
    for norm, expect in (("l2", math.sqrt(2)), ("l1", 1.0)):
        spec, p, prep = prepared("dp-od", features=f, means=(0.6, 0.4, 0.06), norm=norm)
        H = spec.audit_horizon(p)
        pair = NeighbourPair.change("stream", np.zeros((3, H)), (0, 0), 0.0, 1.0,
                                    {"name": "tied-low"}, "test")
        w = whitebox(spec, prep, pair, Claim(1.0), Replay(200, 1))
        assert w["max_loss"] == pytest.approx(expect, rel=1e-9)


@pytest.mark.statistical
def test_dp_od_l2_calibration_violates_eps_dp_on_the_output():
    # The output itself leaks: features a_0 = (-1, -1), a_1 = (-1, 1), a_2 = (0.5, 0.5)
    # (examples/dp_od_quadrant.csv; design ½, ½ on arms 0 and 1, 15 pulls each at T = 32,
    # L = √2). With S_1 = 0, U = (−s, −s) where s = arm 0's reward sum, and Î = arm 2 iff
    # Ũ_1 + Ũ_2 > 0 and 3Ũ_1 > Ũ_2: a quadrant-like tail region that one entry moves by
    # (1, 1), i.e. 2 noise-scale units of Lap(√2). Exact probabilities (numerical
    # integration over the two Laplace coordinates): s = 2 gives 0.0393676, s = 3 gives
    # 0.0121111, ln ratio 1.1788 > ε = 1. The kernel matches them: n = 400 000 runs per side,
    # multiplicative Chernoff P(|X − np| ≥ δnp) ≤ 2·exp(−δ²np/3) with δ = 0.06 (d: np ≈ 15 747,
    # ≤ 1.2e-8) and δ = 0.1 (d': np ≈ 4844, ≤ 2.0e-7); both hold with probability ≥ 1 − 1e-6,
    # and then ln(p̂_d/p̂_d') ≥ 1.1788 + ln(0.94/1.1) = 1.02 > 1.
    from scipy import integrate, stats
    b = math.sqrt(2)

    def exact(s):
        f = lambda x2: stats.laplace.pdf(x2, scale=b) * stats.laplace.sf(   # noqa: E731
            max(2 * s - x2, (2 * s + x2) / 3), scale=b)
        return integrate.quad(f, -60, 60, points=[0, s, 2 * s], limit=400, epsabs=1e-14)[0]

    assert exact(2) == pytest.approx(0.0393676, rel=1e-5)
    assert math.log(exact(2) / exact(3)) == pytest.approx(1.1788, abs=1e-4)
    spec, p, prep = prepared("dp-od", features=str(ROOT / "examples/dp_od_quadrant.csv"),
                             means=(0.5, 0.4, 0.3))
    H = spec.audit_horizon(p)
    n = 400_000
    rates = []
    for i, s_ones in enumerate((2, 3)):
        table = np.zeros((3, H))
        table[0, :s_ones] = 1.0
        _, _, recs, st, _ = run_batch(spec.request(prep, table, n, 40 + i, np.array([H]), H))
        assert (st == STOPPED).all()
        rates.append(float((recs == 2).mean()))
    assert rates[0] == pytest.approx(exact(2), rel=0.06)
    assert rates[1] == pytest.approx(exact(3), rel=0.1)
    assert math.log(rates[0] / rates[1]) > 1.0


# ---------------------------------------------------------- parameters and registration

def test_registry_and_claims():
    specs = {s.name: s for s in registry.all_specs()}
    for name in NAMES:
        assert specs[name].model == "stream"
    assert specs["od-linbai"].private is False and specs["dp-bai-reuse"].mutant_of == "dp-bai"
    assert specs["dp-bai"].claim == "eps-DP (pure)"
    assert specs["dp-bai-gauss"].claim == "(eps, delta)-DP, default delta 1e-05"


def test_delta_resolution():
    spec = registry.get("dp-bai-gauss")
    assert spec.resolve_claim({}, None)[1] == db.GAUSS_DELTA
    p, d = spec.resolve_claim({}, 1e-3)
    assert d == 1e-3 == p["delta"]
    p, d = spec.resolve_claim({"delta": "0.01"}, None)
    assert d == 0.01 == p["delta"]
    with pytest.raises(InputError, match="delta=0 is not valid"):
        spec.resolve_claim({}, 0.0)
    with pytest.raises(InputError, match="differ"):
        spec.resolve_claim({"delta": 0.01}, 0.001)
    pure = registry.get("dp-bai")
    assert pure.resolve_claim({}, None)[1] == 0.0 and pure.resolve_claim({}, 1e-6)[1] == 1e-6


@pytest.mark.parametrize("params, match", [
    ({"features": "nope"}, "features='nope' is not valid"),
    ({"features": "missing.npy"}, "features=missing.npy is not a file"),
    ({"features": "identity"}, "features=identity needs means"),
    ({"means": "0.5,0.4"}, "means has 2 values but features=sec5 has K = 30"),
    ({"horizon": 3, "features": "identity", "means": K5_MEANS}, "horizon=3 is too small"),
    ({"horizon": 20, "overrun": "floor"}, "horizon=20 is too small for overrun=floor"),
    ({"maxdet": "fast"}, "maxdet=fast is not valid")])
def test_bad_parameters(params, match):
    spec = registry.get("dp-bai-baseline" if params.get("overrun") == "floor" else "dp-bai")
    with pytest.raises(InputError, match=match):
        spec.prepare(1.0, spec.resolve_params(params))


def test_feature_files(tmp_path):
    A, _ = lin.sec5_features()
    np.savetxt(tmp_path / "f.csv", A, delimiter=",")
    F, mu = lin.load_features(str(tmp_path / "f.csv"), tuple(np.linspace(0.1, 0.5, 30)))
    assert np.allclose(F, A) and mu.size == 30
    np.save(tmp_path / "bad.npy", np.array([1.0, np.nan]))
    with pytest.raises(InputError, match="shape"):
        lin.load_features(str(tmp_path / "bad.npy"), (0.5, 0.5))
    np.save(tmp_path / "nan.npy", np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(InputError, match="non-finite"):
        lin.load_features(str(tmp_path / "nan.npy"), (0.5, 0.5))
    (tmp_path / "text.csv").write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="cannot be read"):
        lin.load_features(str(tmp_path / "text.csv"), (0.5,))


def classical_gaussian_delta(eps, delta):
    """δ(ε) of N(0, σ²), σ = sqrt(2 ln(1.25/δ))/ε, sensitivity 1: Balle and Wang's closed form
    (2018, Thm. 8), written with SciPy here (independent of dp-accounting)."""
    from scipy.stats import norm
    mu = eps / math.sqrt(2 * math.log(1.25 / delta))       # Δ/σ
    return norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu)


@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-3, 0.1])
def test_the_gaussian_proof_range_ends_where_the_calibrated_release_stops_being_dp(delta):
    """Prop. D.2's proof holds for ε < 1 (Dwork–Roth Thm. A.1) and wherever the classically
    calibrated release's exact δ(ε) ≤ δ; the boundary is found from the closed form."""
    from scipy.optimize import brentq
    top = brentq(lambda e: classical_gaussian_delta(e, delta) - delta, 1.0, 50.0)
    assert 5 < top < 11
    spec = registry.get("dp-bai-gauss")
    for eps in (0.01, 0.5, 0.999, 1.0, 2.0, top - 1e-3):
        assert spec.proof_range(eps, delta) is None
    why = spec.proof_range(top + 1e-3, delta)
    assert why is not None and "Thm. A.1" in why and "eq. (113)" in why
    assert f"eps <= {top:.4g} at delta = {delta:g}" in why
    with pytest.raises(InputError, match="outside the range of dp-bai-gauss's privacy proof"):
        spec.check_proof(top + 1e-3, delta)
    spec.check_proof(top - 1e-3, delta)
    for pure in ("dp-bai", "dp-bai-baseline"):       # Laplace: no range narrower than the claim
        assert registry.get(pure).proof_range is None
        registry.get(pure).check_proof(50.0, 0.0)


@pytest.mark.cli
def test_eps_9_is_refused_naming_the_range_the_source_and_delta_9(capsys):
    """The issue's command: δ(9) of the release, printed with the range and where it comes from,
    before any run (exit 2, one line)."""
    from dpaudit.commands.cli import main
    assert main(["run", "--algo", "dp-bai-gauss", "--eps", "9", "--delta", "1e-5", "--seed",
                 "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dpaudit: error: eps=9, delta=1e-05 is "
                                                    "outside the range")
    assert f"delta(9) = {classical_gaussian_delta(9, 1e-5):.4g} > 1e-05" in err
    assert "1.359e-05" in err and "white-box proof" in err and "--beyond-proof" in err
    assert "Prop. D.2" in err and "Thm. A.1" in err and "eps <= 8.42 at delta = 1e-05" in err


@pytest.mark.slow
def test_beyond_proof_audits_the_claim_and_says_so_in_its_command():
    from dpaudit.auditing.audit import audit_algorithm
    r = audit_algorithm("dp-bai-gauss", 9.0, delta=1e-5, runs=2000, seed=1, workers=1,
                        whitebox_runs=300, instances="fixed", beyond_proof=True).to_dict()
    assert r["verdict"] in ("pass", "inconclusive", "violation") and r["claim"]["eps"] == 9.0
    assert r["command"].endswith("--instances fixed --beyond-proof")
    rel = r["whitebox"]["release_log"]           # the release log's δ(9), as in the refusal
    assert rel["refuted"] and rel["delta_at_eps"]["lower"] > 1e-5


@pytest.mark.cli
def test_cli_errors_are_one_line(capsys):
    from dpaudit.commands.cli import main
    for argv in (["run", "--algo", "dp-bai", "--eps", "1", "--param", "features=nope"],
                 ["run", "--algo", "dp-bai-gauss", "--eps", "1", "--delta", "0"],
                 ["run", "--algo", "dp-bai-gauss", "--eps", "1", "--delta", "0.001",
                  "--param", "delta=0.01"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("dpaudit: error:")


# ------------------------------------------------------------------ engine, end to end

def test_stream_search_positions_come_from_the_release_log():
    # 30 × 30 = 900 positions > 256: the search takes the release log's marks. At T = 32
    # DP-BAI releases arm 0 after 15 samples and arm 2 after 30: marks (0, 14), (2, 0) and
    # (2, 14) (last sample before each release, first one after, last before stopping)
    from dpaudit.auditing import search
    from dpaudit.data import neighbours as nbrs
    spec, p, prep = prepared("dp-bai")
    H = spec.audit_horizon(p)
    base = np.zeros((30, H))
    assert nbrs.release_positions(spec, prep, base, H) == {(0, 14), (2, 0), (2, 14)}
    pairs, order, info = search.candidates("blackbox", spec, prep, p,
                                           seeds=(1, np.random.SeedSequence(1)))
    positions = {pr.position for pr in pairs}
    assert {(0, 14), (2, 0), (2, 14)} <= positions and len(positions) <= nbrs.MAX_POSITIONS
    assert all(pr.model == "stream" and pr.d.shape == (30, H) for pr in pairs)


def test_structure_candidates_for_stream_tables():
    from dpaudit.data import neighbours as nbrs
    spec, p, prep = prepared("dp-bai")
    pairs = nbrs.candidates(spec, {**p, "means": tuple(prep.means)}, 1)
    assert {pr.position for pr in pairs} == {(0, 0), (2, 0)} and len(pairs) == 6
    assert {pr.base["name"] for pr in pairs} == {"tied-high", "tied-mid", "instance"}
    assert all(pr.d[pr.position] == 0 and pr.d_prime[pr.position] == 1 for pr in pairs)


@pytest.mark.statistical
@pytest.mark.slow
def test_audit_positive_control_and_gauss_delta():
    from dpaudit.auditing.audit import audit_algorithm
    # OD-LinBAI is a deterministic function of the table: the pair found separates the
    # outputs completely (0 hits against n), so the verdict cannot depend on chance
    r = audit_algorithm("od-linbai", 1.0, runs=20_000, seed=1, workers=1, whitebox_runs=50)
    m = r.counts["measurement"]
    assert r.verdict == "violation" and {m["hits_d"], m["hits_d_prime"]} == {0, m["runs_d"]}
    assert r.whitebox["replay"]["diverged_runs"] > 0
    # the (ε, δ) algorithm is audited at its own δ and calibrated with it (a fixed pair; at
    # α = 1e-6 a correct algorithm gives "violation" with probability ≤ 1e-6)
    H = registry.get("dp-bai-gauss").audit_horizon(registry.get("dp-bai-gauss").resolve_params(
        {"delta": db.GAUSS_DELTA}))
    pair = NeighbourPair.change("stream", np.zeros((30, H)), (0, 0), 0.0, 1.0,
                                {"name": "tied-low"}, "test")
    r = audit_algorithm("dp-bai-gauss", 1.0, runs=40_000, seed=1, workers=1, whitebox_runs=50,
                        pair=pair, alpha=1e-6)    # a pilot of 0.75 x 40000 runs finds its event
    # not a violation, but not a pass either: its event is too likely on d' to carry a
    # δ-loss of 1.25 ε at all (P_d = e^1.25·P_d' + δ > 1), so no budget makes it informative
    assert r.delta == db.GAUSS_DELTA == r.params["delta"] and r.verdict == "inconclusive"
    assert r.reason.startswith("underpowered:") and "no feasible number of runs" in r.reason
    assert r.runs_needed is None
    assert r.whitebox["releases_exceed_eps"] is None
    r = audit_algorithm("dp-bai-gauss", 1.0, delta=1e-3, runs=20_000, seed=1, workers=1,
                        whitebox_runs=0, pair=pair)
    assert r.delta == 1e-3 == r.params["delta"]


@pytest.mark.statistical
def test_reuse_mutant_release_loss_exceeds_eps():
    # white-box (deterministic given the seed): on the all-zero table with x_{1,1} = 1 in d',
    # arm 0's first entry enters its phase-1 release (loss ε) and, when it survives, its later
    # reused means (n_2/(n_1 + n_2)·ε = 5/8 ε, then 7/15 ε): up to 2.09ε in all. A run attains
    # it when arm 0 survives both eliminations and its three released values fall beyond
    # both exact values: 259 of these 4000 runs (6.5 %); with any probability ≥ 2 % per run,
    # none of 4000 attaining it has probability ≤ 0.98^4000 < 1e-35
    from dpaudit.auditing.whitebox import Replay, whitebox
    spec, p, prep = prepared("dp-bai-reuse")
    H = spec.audit_horizon(p)
    pair = NeighbourPair.change("stream", np.zeros((5, H)), (0, 0), 0.0, 1.0,
                                {"name": "tied-low"}, "test")
    w = whitebox(spec, prep, pair, Claim(1.0), Replay(2000, 3))
    assert w["releases_exceed_eps"] is True
    assert w["max_loss"] == pytest.approx(1 + 5 / 8 + 7 / 15, abs=1e-9)
    spec, p, prep = prepared("dp-bai", features="identity", means=K5_MEANS, horizon=60)
    assert whitebox(spec, prep, pair, Claim(1.0), Replay(2000, 3))["max_loss"] == pytest.approx(1.0)


def test_bench_reports_precomputation():
    from dpaudit.simulation.bench import bench
    r = bench("dp-bai", 1.0, seconds=0.3)
    assert r["steps"] > 0 and r["status"]["stopped"] == r["runs"]
    assert r["precompute"]["B_1"] == [0, 2] and r["precompute"]["maxdet_subsets"] == 435
    r = bench("dp-bai-gauss", 1.0, seconds=0.1)
    assert r["delta"] == db.GAUSS_DELTA
    r = bench("dp-od", 1.0, seconds=0.1)
    assert r["precompute"]["design_support"] == [0, 2]
