"""DP-BAI and its comparators (Chen, Karthik, Chee, Tan, ICLR 2024).

DP-BAI and its comparators (Chen, Karthik, Chee, Tan, "Fixed-Budget Differentially
Private Best Arm Identification", ICLR 2024, arXiv 2401.09073). Privacy model ``stream``: the
table is (K, T) and the n-th pull of arm a reads ``d[a, n]`` (Sec. 2); neighbours differ in one
entry.

Registered algorithms (two compiled kernels, the differences are ``theta`` flags):

* ``dp-bai`` — Algorithm 1 (Sec. 3.1): schedule (4)–(8) (:func:`.linear.schedule`),
  dimensionality reduction (9), MAX-DET collection (Def. 3.1) when d_p² < s_p (line 6),
  phase-local means (10), Laplace noise of scale 1/(ε·n_actual) (eq. 11), derived means
  (12), top-s_{p+1} elimination (line 20). Claim: ε-DP (Prop. 4.1).
* ``dp-bai-gauss`` — Algorithm 2 (App. D): lines 10/16 draw N(0, σ_p²) with
  σ_p = sqrt(2 ln(1.25/δ))/(ε·n_p). Claim: (ε, δ)-DP (Prop. D.2); calibrated with the δ it is
  audited at (``delta`` parameter; default :data:`GAUSS_DELTA`).
* ``dp-bai-baseline`` — BASELINE of Sec. 5: DP-BAI without lines 6–13 (every phase takes the
  uniform branch), same schedule with the true d. Claim: ε-DP (stated in Sec. 5).
* ``dp-od`` — DP-OD (App. E.1): OD-LinBAI with Laplace(L/ε) noise on every coordinate of the
  OLS moment vector U, L = max_i ‖a_i‖ (ℓ2; option ``norm = l1``). Claim: ε-DP.
* ``od-linbai`` — OD-LinBAI (Yang & Tan 2022; our external reading): the same
  kernel without noise. Not private: a positive control that must audit as a violation.
* ``dp-bai-reuse`` — **mutant** of ``dp-bai`` (F2): each phase mean is taken over
  all the arm's samples so far instead of this phase's, with the same noise scale. An early
  entry enters every later release of its arm: not ε-DP. Default instance ``identity``
  K = d = 5 (three phases; the Sec. 5 instance has one phase, where reuse changes nothing).

Readings of the ambiguities, as named parameters with the faithful
reading as default:

* ``reading`` A | B: the stage-1/stage-2 transition of (7)–(8). Reading A (literal,
  ℕ = {1, 2, ...}) is the default; B reproduces Appendix B's M_1 = 4. The paper's own App. B
  says M = 10, which neither reading gives (the paper's text is authoritative but
  self-inconsistent here; see :func:`.linear.schedule`).
* ``overrun`` allow | floor | truncate: Σ_p k_p⌈T'/(M k_p)⌉ can exceed T (e.g. BASELINE
  on the Sec. 5 instance: 510 pulls at T = 500). ``allow`` (default, literal): pull as
  written and release the longer action sequence; ``floor``: ⌊·⌋ in the uniform branch (never
  exceeds T; InputError if a uniform phase would get 0 pulls); ``truncate``: stop pulling at
  T and calibrate each arm's noise to its actual count (an arm with no pull in the phase
  gets μ̃ = −∞ and no release, and so do derived arms that depend on it). In every case the
  noise uses the actual per-phase count of eq. (11) (the pseudo-code's nominal ⌈·⌉ is equal
  unless truncated). When T_M < T no further pulls are made (a shorter transcript).
* ``maxdet`` auto | exhaustive | swap: exhaustive search (itertools in Python for the
  data-independent phase 1, compiled for later phases) while C(s_p, d_p) ≤
  :data:`.linear.EXHAUSTIVE_MAX`, else 1-swap local search (which already gives |α| ≤ 1,
  Lemma G.1). Ties: the lexicographically first maximiser.
* Pull order: increasing arm index, each arm's n_p pulls in a row. Elimination ties
 : lowest index first. d = 1: h_1 read as 0.
* log = natural log; DET uses Gram volumes in the original coordinates (invariant under
  the orthonormal change of basis of (9)).

Paper vs our reading: the paper is authoritative. Checked against the paper's text: eqs. (4)–(12),
Algorithms 1–2 and App. E.1 agree with our transcription; where the paper is
inconsistent with itself our named reading is used and the paper's statement is
recorded (App. B's M = 10 matches no reading; lines 10/16 use the nominal ⌈·⌉ count while eq.
(11) uses the actual one: eq. (11) is followed, they agree unless truncated). OD-LinBAI's own
steps (R, m, ⌈d/2^r⌉ survivors) are not in this paper: our reading of Yang & Tan
(2022) is used. Finding: DP-OD's L = max ‖a_i‖₂ bounds the ℓ2 but not the ℓ1 change of U,
so per-coordinate Laplace(L/ε) is not ε-DP when a pulled arm is not axis-aligned (the Sec. 5
design pulls a_1 = [0, 1] and a_3 = [10, 0], where ℓ1 = ℓ2, so the paper's experiment is
unaffected); ``norm = l1`` calibrates to the ℓ1 norms and restores ε-DP. See
``tests/algorithms/test_dp_bai.py`` and ``examples/dp_od_quadrant*``.

MAX-DET in compiled code: phase 1's active set is [K] (data-independent), so B_1 and α are
precomputed by ``prepare`` (cached per feature set, :func:`setup`); later phases' active sets
depend on released values, so the kernel computes their rank, MAX-DET collection and α itself
(:mod:`.linear`'s compiled helpers). A cache keyed by active set would have to live outside
the kernel contract (which passes only float arrays) and could hold up to C(K, s_p) entries;
on the registered instances later phases never take the MAX-DET branch (Sec. 5: one phase;
identity: d_p = s_p), so the compiled search costs nothing there and stays correct elsewhere.

White-box releases (kernel contract, :mod:`dpaudit.simulation.simulate`): DP-BAI logs one row per
directly noised arm and phase, right after that arm's block of pulls (t = samples taken,
arm, phase p, count = samples in the statistic, the exact phase mean, the released value,
scale b = 1/(ε·n) or σ, family Laplace/Gaussian). Derived means (12) and eliminations are
post-processing and are not logged. DP-OD logs one row per coordinate k of Ũ_r (column
``arm`` holds k, ``count`` the phase's pulls, scale L/ε). OD-LinBAI logs nothing.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import time

import numba as nb
import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from dpaudit.auditing.whitebox import pair_frozen, pair_next, pair_record
from dpaudit.algorithms.space import Scale, option, theorem
from dpaudit.algorithms.spec import AlgorithmSpec, Param, Prepared
from dpaudit.core.terms import PrivacyModel
from dpaudit.errors import InputError
from dpaudit.statistics import accounting
from dpaudit.simulation.simulate import (GAUSSIAN, LAPLACE, STOPPED, TRUNCATED, batch_buffers,
                                         batch_record)

from ..kernels import mutant, site_release, site_switch
from . import linear as lin

# ------------------------------------------------------------------ DP-BAI kernel layout
# theta of dp_bai_kernel
(B_EPS, B_NOISE, B_SIGMA, B_MAXDET, B_REUSE, B_OVERRUN, B_TPRIME, B_M, B_D, B_T, B_METHOD,
 B_EXH, B_D1, B_BRANCH1) = range(14)
NOISE_LAPLACE, NOISE_GAUSS, NOISE_NONE = 0, 1, 2
OVERRUNS = ("allow", "floor", "truncate")
READINGS = ("A", "B")
# aux of dp_bai_kernel: features (K·d) | s_0..s_{M+1} | B_1 (d_1) | α_1 (K·d_1)

# theta of od_kernel
(O_EPS, O_PRIVATE, O_NORM, O_R, O_MPHASE, O_D, O_L, O_D1) = range(8)
NORMS = ("l2", "l1")
# aux of od_kernel: features (K·d) | keep_1..keep_R | phase-1 pulls (K) | phase-1 coords (K·d_1)

GAUSS_DELTA = 1e-5       # default DP δ of dp-bai-gauss (a claim needs one; the paper none)
FW_ITERS, FW_TOL = 10_000, 1e-6   # later-phase OD designs (dependent active sets only)


@nb.njit(cache=True)
def _pull(rng: np.random.Generator, table: np.ndarray, means: ArrayLike, a: int, k: int):
    """The reward of the k-th pull of arm a.

    Reward of the k-th pull (0-based) of arm a: ``table[a, k]`` (stream model), or
    Bernoulli(means[a]) beyond the table (kernel contract).
    """
    if k < table.shape[1]:
        return table[a, k]
    return 1.0 if rng.random() < means[a] else 0.0


@nb.njit(cache=True)
def _laplace(rng: np.random.Generator, scale: float):
    """A Laplace(scale) draw, faster than ``rng.laplace``.

    Lap(scale): an Exp(1) draw (numba's ziggurat) times a fair random sign, times scale (the
    same law as ``rng.laplace(0, scale)``, about 3× faster).
    """
    e = rng.standard_exponential()
    return scale * e if rng.random() < 0.5 else -scale * e


@nb.njit(cache=True)
def _keep_top(act: np.ndarray, n_act: int, mu: np.ndarray, keep: int):
    """Keep the ``keep`` arms with the largest means (A_{p+1}).

    A_{p+1}: the ``keep`` arms of act[:n_act] with the largest mu (stable: lowest index
    first on ties), written back to act[:keep] in increasing order.
    """
    if keep == 1:
        best = 0
        for i in range(1, n_act):
            if mu[act[i]] > mu[act[best]]:
                best = i
        act[0] = act[best]
        return 1
    vals = np.empty(n_act)
    for i in range(n_act):
        vals[i] = -mu[act[i]]
    order = np.argsort(vals, kind="mergesort")
    top = np.sort(act[:n_act][order[:keep]])
    act[:keep] = top
    return keep


@nb.njit(cache=True)
def dp_bai_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                  theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                  releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of DP-BAI, DP-BAI-GAUSS, BASELINE or the reuse mutant.

    One run of DP-BAI (Algorithm 1), DP-BAI-GAUSS (Algorithm 2), BASELINE (Sec. 5) or the
    reuse mutant. Kernel contract: :mod:`dpaudit.simulation.simulate` (stream table (K, T)).

    ``theta`` (indices ``B_*``): ε, noise family (0 Laplace, 1 Gaussian, 2 none), σ factor
    sqrt(2 ln(1.25/δ)), MAX-DET allowed (0: BASELINE), reuse (mutant F2), overrun policy
    (0 allow, 1 floor, 2 truncate), T', M, d, T, MAX-DET method (0 auto, 1 exhaustive,
    2 swap), exhaustive limit, d_1 and phase 1's branch (1 MAX-DET) precomputed. ``aux``:
    features (K·d), s_0..s_{M+1}, B_1 (d_1 arms), α_1 (K × d_1). Returns (τ, Î, status,
    releases made).

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    K = means.shape[0]
    eps = theta[B_EPS]
    m0 = site_switch(theta, 0)                 # the mutation switch
    logged = releases.shape[0] > 0 or frozen.shape[0] > 0 or mutant(theta)
    noise = int(theta[B_NOISE])
    sigma = theta[B_SIGMA]
    allow_maxdet = theta[B_MAXDET] == 1.0
    reuse = theta[B_REUSE] == 1.0
    overrun = int(theta[B_OVERRUN])
    Tp = theta[B_TPRIME]
    M = int(theta[B_M])
    d = int(theta[B_D])
    T = int(theta[B_T])
    method = int(theta[B_METHOD])
    exh = theta[B_EXH]
    d1 = int(theta[B_D1])
    F = aux[:K * d].reshape((K, d))
    s_off = K * d
    b1_off = s_off + M + 2
    a1_off = b1_off + d1
    n_rec = actions.shape[0]
    dist = GAUSSIAN if noise == NOISE_GAUSS else LAPLACE

    act = np.arange(K)
    n_act = K
    N = np.zeros(K, np.int64)         # pulls so far (the next pull of a reads table[a, N[a]])
    cum = np.zeros(K)                 # reward sum over all pulls so far (reuse mutant)
    mu = np.empty(K)                  # μ̃ of the phase
    in_b = np.zeros(K, np.bool_)
    n = 0
    nr = 0
    for p in range(1, M + 1):
        branch = False
        B = np.empty(0, np.int64)                     # MAX-DET arms (arm indices)
        alpha = np.empty((0, 0))                      # rows by arm
        if allow_maxdet:
            if p == 1:
                branch = theta[B_BRANCH1] == 1.0
                if branch:
                    B = aux[b1_off:b1_off + d1].astype(np.int64)
                    alpha = aux[a1_off:a1_off + K * d1].reshape((K, d1))
            else:
                dp, start = lin.rank_basis(F, act, n_act)
                if dp * dp < n_act:                                   # line 6
                    branch = True
                    pos, al = lin.maxdet(F, act, n_act, dp, method, exh)
                    B = act[pos]
                    alpha = np.zeros((K, dp))
                    for i in range(n_act):
                        alpha[act[i]] = al[i]
        if branch:
            targets = B
        else:
            targets = act[:n_act].copy()
        k = targets.shape[0]
        q = Tp / (M * k)
        n_nom = np.int64(math.floor(q)) if (overrun == 1 and not branch) else \
            np.int64(math.ceil(q))
        for a in targets:
            ssum = 0.0
            cnt = 0
            for _ in range(n_nom):
                if overrun == 2 and n >= T:
                    break
                if n >= limit:
                    return n, -1, TRUNCATED, nr
                x = _pull(rng, table, means, a, N[a])
                if n < n_rec:
                    actions[n] = a
                n += 1
                N[a] += 1
                ssum += x
                cnt += 1
            cum[a] += ssum
            if cnt == 0:
                mu[a] = -np.inf
                continue
            value = cum[a] / N[a] if reuse else ssum / cnt             # eq. (10)
            if noise == NOISE_NONE:
                mu[a] = value
                continue
            if noise == NOISE_GAUSS:
                scale = sigma / (eps * cnt)                             # Alg. 2 lines 10/16
                z = rng.normal(0.0, scale)
            else:
                scale = 1.0 / (eps * cnt)                               # eq. (11)
                z = _laplace(rng, scale)
            if logged:                        # else the fast path: the switch is off
                mu[a], m0 = site_release(m0, rng, releases, frozen, nr, n, a, p,
                                         N[a] if reuse else cnt, value, z, scale, dist)
            else:
                mu[a] = value + z
            nr += 1
        if branch:                                                      # eq. (12)
            for b in B:
                in_b[b] = True
            for i in range(n_act):
                a = act[i]
                if in_b[a]:
                    continue
                v = 0.0
                for j in range(B.shape[0]):
                    c = alpha[a, j]
                    if c != 0.0:
                        if mu[B[j]] == -np.inf:
                            v = -np.inf
                            break
                        v += c * mu[B[j]]
                mu[a] = v
            for b in B:
                in_b[b] = False
        n_act = _keep_top(act, n_act, mu, int(aux[s_off + p + 1]))     # line 20
    return n, act[0], STOPPED, nr


@nb.njit(cache=True, nogil=True)
def dp_bai_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                 theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
                 keep: int) -> tuple:
    """Cached batch loop of :func:`dp_bai_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = dp_bai_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


@nb.njit(cache=True)
def od_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
              theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
              releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of OD-LinBAI or DP-OD (App. E.1).

    One run of OD-LinBAI or DP-OD (App. E.1). Kernel contract:
    :mod:`dpaudit.simulation.simulate` (stream table (K, T)).

    Phases r = 1..R: reduce the active vectors to their span (orthonormal coordinates when the
    rank drops), G-optimal design π_r (phase 1 precomputed with SciPy; later phases: uniform
    when the active vectors are independent, else Frank–Wolfe), pull each support arm
    ⌈π_r(a)·m⌉ times (fresh samples), OLS θ̂ = V⁻¹U, keep the ⌈d/2^r⌉ best. DP-OD releases
    Ũ = U + Lap(L/ε) per coordinate. ``theta`` (``O_*``): ε, private (0/1), norm (0 ℓ2: L
    fixed; 1 ℓ1: L_r = max ℓ1 norm of the active coordinates), R, m, d, L, d_1. ``aux``:
    features (K·d), keep sizes (R), phase-1 pulls (K), phase-1 coordinates (K × d_1).

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    K = means.shape[0]
    eps = theta[O_EPS]
    m0 = site_switch(theta, 0)                 # the mutation switch
    logged = releases.shape[0] > 0 or frozen.shape[0] > 0 or mutant(theta)
    private = theta[O_PRIVATE] == 1.0
    l1 = theta[O_NORM] == 1.0
    R = int(theta[O_R])
    m = theta[O_MPHASE]
    d = int(theta[O_D])
    d1 = int(theta[O_D1])
    keep_off = K * d
    p1_off = keep_off + R
    c1_off = p1_off + K
    n_rec = actions.shape[0]

    act = np.arange(K)
    n_act = K
    N = np.zeros(K, np.int64)
    mu = np.empty(K)
    coords = aux[c1_off:c1_off + K * d1].reshape((K, d1)).copy()   # rows by arm
    pulls = aux[p1_off:p1_off + K].astype(np.int64)
    n = 0
    nr = 0
    for r in range(1, R + 1):
        if r > 1:
            X = np.empty((n_act, coords.shape[1]))
            for i in range(n_act):
                X[i] = coords[act[i]]
            dr, Xr = lin.reduce_coords(X)
            w = lin.fw_design(Xr, FW_ITERS, FW_TOL)
            coords = np.zeros((K, dr))
            pulls = np.zeros(K, np.int64)
            for i in range(n_act):
                coords[act[i]] = Xr[i]
                if w[i] > 0.0:
                    pulls[act[i]] = max(np.int64(math.ceil(w[i] * m - lin.CEIL_TOL)), 0)
        dr = coords.shape[1]
        V = np.zeros((dr, dr))
        U = np.zeros(dr)
        pulled = 0
        for i in range(n_act):
            a = act[i]
            s = 0.0
            for _ in range(pulls[a]):
                if n >= limit:
                    return n, -1, TRUNCATED, nr
                x = _pull(rng, table, means, a, N[a])
                if n < n_rec:
                    actions[n] = a
                n += 1
                N[a] += 1
                s += x
            pulled += pulls[a]
            for u in range(dr):
                U[u] += coords[a, u] * s
                for v in range(dr):
                    V[u, v] += pulls[a] * coords[a, u] * coords[a, v]
        if private:
            if l1:
                L = 0.0
                for i in range(n_act):
                    L = max(L, np.sum(np.abs(coords[act[i]])))
            else:
                L = theta[O_L]
            scale = L / eps
            for u in range(dr):
                z = _laplace(rng, scale)
                if logged:                    # else the fast path: the switch is off
                    U[u], m0 = site_release(m0, rng, releases, frozen, nr, n, u, r, pulled,
                                            U[u], z, scale, LAPLACE)
                else:
                    U[u] += z
                nr += 1
        th = lin.solve_small(V, U)
        for i in range(n_act):
            a = act[i]
            v = 0.0
            for u in range(dr):
                v += coords[a, u] * th[u]
            mu[a] = v
        n_act = _keep_top(act, n_act, mu, min(int(aux[keep_off + r - 1]), n_act))
    return n, act[0], STOPPED, nr


@nb.njit(cache=True, nogil=True)
def od_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
             theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
             keep: int) -> tuple:
    """Cached batch loop of :func:`od_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = od_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


@nb.njit(cache=True, nogil=True)
def dp_bai_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
                 table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
                 limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`dp_bai_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = dp_bai_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                          pair_frozen(work, 0))
        r = dp_bai_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                          pair_frozen(work, o[3]))
        pair_record(work, o, r)

@nb.njit(cache=True, nogil=True)
def od_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
             table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
             limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`od_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = od_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                      pair_frozen(work, 0))
        r = od_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                      pair_frozen(work, o[3]))
        pair_record(work, o, r)


# the cached batch loop of each kernel (dpaudit.simulation.simulate.run_batch reads it)
BATCH_LOOPS = {dp_bai_kernel: dp_bai_batch, od_kernel: od_batch}
# the cached run/replay loop of each kernel (dpaudit.auditing.whitebox.pair_body)
PAIR_LOOPS = {dp_bai_kernel: dp_bai_pairs, od_kernel: od_pairs}
# each kernel's noise sites (dpaudit.algorithms.mutation): (site, what its noise privatises)
NOISE_SITES = {dp_bai_kernel: ((0, "each active arm's phase mean (Laplace eq. 11 or Gaussian)"),),
               od_kernel: ((0, "each coordinate of the phase's design statistic (eq. 12)"),)}


@nb.njit(cache=True)
def dp_bai_recommendations(rng: np.random.Generator, tables: np.ndarray, means: ArrayLike,
                           theta: np.ndarray, aux: np.ndarray, limit: int) -> np.ndarray:
    """The recommendation of one :func:`dp_bai_kernel` run per table.

    Î of one :func:`dp_bai_kernel` run per table ``tables[i]`` (n, K, W): fresh tables per
    run, e.g. rewards drawn from any distribution by the caller (`dpaudit reproduce chen2024`).
    No transcript or release log is kept.

    Args:
        rng: the generator.
        tables: (n, K, W) reward tables, one per run.
        means: the arms' means.
        theta: the kernel's parameters.
        aux: its auxiliary array.
        limit: samples per run at most.

    Returns:
        The recommendations, int64 (n,).
    """
    actions, rel, frozen = np.empty(0, np.int16), np.empty((0, 8)), np.empty(0)
    out = np.empty(tables.shape[0], np.int64)
    for i in range(tables.shape[0]):
        out[i] = dp_bai_kernel(rng, tables[i], means, theta, aux, limit, actions, rel, frozen)[1]
    return out


@nb.njit(cache=True)
def od_recommendations(rng: np.random.Generator, tables: np.ndarray, means: ArrayLike,
                       theta: np.ndarray, aux: np.ndarray, limit: int) -> np.ndarray:
    """As :func:`dp_bai_recommendations` for :func:`od_kernel`.

    Args:
        rng: the generator.
        tables: (n, K, W) reward tables, one per run.
        means: the arms' means.
        theta: the kernel's parameters.
        aux: its auxiliary array.
        limit: samples per run at most.

    Returns:
        The recommendations, int64 (n,).
    """
    actions, rel, frozen = np.empty(0, np.int16), np.empty((0, 8)), np.empty(0)
    out = np.empty(tables.shape[0], np.int64)
    for i in range(tables.shape[0]):
        out[i] = od_kernel(rng, tables[i], means, theta, aux, limit, actions, rel, frozen)[1]
    return out


# --------------------------------------------------------------------- Python-side set-up

@dataclasses.dataclass(frozen=True)
class Setup:
    """Data-independent precomputation of one configuration (cached, :func:`setup`).

    ``features`` (K × d), ``means``, ``sched`` (:class:`.linear.Schedule`; DP-BAI family),
    ``phase1`` (DP-BAI: {"rank", "branch" ("maxdet" | "uniform"), "B", "alpha", "det",
    "method", "subsets"}; OD: {"rank", "coords", "design", "pulls", "m", "R", "keep", "L"}),
    ``max_pulls`` (an upper bound on the samples of any run: the audit horizon),
    ``seconds`` (time spent on MAX-DET / the design: data-independent, reported separately).
    """

    kind: str
    features: np.ndarray
    means: np.ndarray
    sched: object
    phase1: dict
    max_pulls: int
    seconds: float


@functools.lru_cache(maxsize=64)
def setup(kind: str, features: str, means: ArrayLike, horizon: int, reading: str = "A",
          overrun: str = "allow", maxdet: str = "auto", maxdet_on: bool = True) -> Setup:
    """Precompute a configuration (``kind`` "bai" or "od").

    Precompute a configuration (``kind`` "bai" or "od"); InputError for bad input (one
    line naming the value): unknown features, T' < 1, ``overrun=floor`` with a uniform
    phase of 0 pulls, OD's m ≤ 0.

    Args:
        kind: ``bai`` or ``od``.
        features: the ``features`` text.
        means: the arms' means (None: the preset's).
        horizon: rows T.
        reading: ``A`` or ``B`` (the stage-transition reading).
        overrun: ``allow``, ``floor`` or ``truncate``.
        maxdet: ``auto``, ``exhaustive`` or ``swap``.
        maxdet_on: use the MAX-DET branch.

    Returns:
        The :class:`Setup`.
    """
    A, mu = lin.load_features(features, means)
    K, d = A.shape
    t0 = time.perf_counter()
    if kind == "bai":
        sc = lin.schedule(K, d, horizon, reading)
        if sc.T_prime < 1:
            raise InputError(f"horizon={horizon} is too small for K={K}, d={d}: T' = T - M_1 d "
                             f"- (M - M_1) ceil(d^2/4) = {sc.T_prime} < 1 (reading {reading})")
        floor = overrun == "floor"
        if floor:
            for p in range(1, sc.M + 1):
                if sc.phase_pulls(p, sc.s[p], floor=True) < 1:
                    raise InputError(f"horizon={horizon} is too small for overrun=floor: phase "
                                     f"{p} would pull its {sc.s[p]} arms 0 times")
        rank, _ = lin.rank_basis(A, np.arange(K), K)
        ph = {"rank": int(rank), "branch": "uniform", "B": np.zeros(0, np.int64),
              "alpha": np.zeros((K, 0)), "det": None, "method": None, "subsets": 0}
        if maxdet_on and rank * rank < K:
            r = lin.max_det(A, maxdet)
            ph.update(branch="maxdet", B=r["B"], alpha=r["alpha"], det=r["det"],
                      method=r["method"], subsets=r["subsets"])
        pulls = 0
        for p in range(1, sc.M + 1):
            ks = [sc.s[p]] + ([k for k in range(1, min(d, sc.s[p]) + 1) if k * k < sc.s[p]]
                              if maxdet_on else [])
            if p == 1:
                ks = [len(ph["B"])] if ph["branch"] == "maxdet" else [K]
            pulls += max(k * (sc.phase_pulls(p, k, floor and k == sc.s[p])) for k in ks)
        if overrun != "allow":
            pulls = min(pulls, horizon)
        seconds = time.perf_counter() - t0
        return Setup(kind, A, mu, sc, ph, int(pulls), seconds)
    R = max(1, math.ceil(math.log2(d)))
    m = (horizon - min(K, d * (d + 1) // 2) - sum(math.ceil(d / 2 ** r) for r in range(1, R))) / R
    if m <= 0:
        raise InputError(f"horizon={horizon} is too small for OD-LinBAI with K={K}, d={d}: "
                         f"m = {m:g} <= 0")
    rank = int(np.linalg.matrix_rank(A))
    r1, coords = lin.reduce_coords(A)
    design = lin.g_optimal_design(coords)
    alloc = lin.allocation(design, m)
    keep = [math.ceil(d / 2 ** r) for r in range(1, R + 1)]
    # later phases: at most ⌈π m⌉ ≤ π m + 1 per support arm
    pulls = int(alloc.sum()) + sum(math.ceil(m) + min(keep[r - 2], K) for r in range(2, R + 1))
    ph = {"rank": rank, "coords": coords, "design": design, "pulls": alloc, "m": m, "R": R,
          "keep": keep, "L": float(np.linalg.norm(A, axis=1).max())}
    return Setup(kind, A, mu, None, ph, pulls, time.perf_counter() - t0)


def _means_key(p: dict):
    return None if p.get("means") is None else tuple(p["means"])


def _bai_setup(p: dict, maxdet_on: bool) -> Setup:
    return setup("bai", p["features"], _means_key(p), p["horizon"], p["reading"], p["overrun"],
                 p.get("maxdet", "auto"), maxdet_on)


def _od_setup(p: dict) -> Setup:
    return setup("od", p["features"], _means_key(p), p["horizon"])


def _bai_prepare(noise: int, maxdet_on: bool, reuse: bool = False):
    def prepare(eps: float, p: dict) -> Prepared:
        su = _bai_setup(p, maxdet_on)
        sc, ph = su.sched, su.phase1
        K, d = su.features.shape
        theta = np.zeros(14)
        theta[B_EPS], theta[B_NOISE] = eps, noise
        if noise == NOISE_GAUSS:
            theta[B_SIGMA] = math.sqrt(2.0 * math.log(1.25 / p["delta"]))
        theta[B_MAXDET] = 1.0 if maxdet_on else 0.0
        theta[B_REUSE] = 1.0 if reuse else 0.0
        theta[B_OVERRUN] = OVERRUNS.index(p["overrun"])
        theta[B_TPRIME], theta[B_M], theta[B_D], theta[B_T] = sc.T_prime, sc.M, d, sc.T
        theta[B_METHOD] = lin.MAXDET_METHODS.index(p.get("maxdet", "auto"))
        theta[B_EXH] = lin.EXHAUSTIVE_MAX
        d1 = len(ph["B"])
        theta[B_D1], theta[B_BRANCH1] = d1, 1.0 if ph["branch"] == "maxdet" else 0.0
        aux = np.concatenate([su.features.ravel(), np.asarray(sc.s, np.float64),
                              ph["B"].astype(np.float64), ph["alpha"].ravel()])
        return Prepared(theta=theta, aux=aux, means=su.means.copy())
    return prepare


def _od_prepare(private: bool):
    def prepare(eps: float, p: dict) -> Prepared:
        su = _od_setup(p)
        ph = su.phase1
        K, d = su.features.shape
        theta = np.zeros(8)
        theta[O_EPS], theta[O_PRIVATE] = eps, 1.0 if private else 0.0
        theta[O_NORM] = NORMS.index(p.get("norm", "l2"))
        theta[O_R], theta[O_MPHASE], theta[O_D] = ph["R"], ph["m"], d
        theta[O_L], theta[O_D1] = ph["L"], ph["coords"].shape[1]
        aux = np.concatenate([su.features.ravel(), np.asarray(ph["keep"], np.float64),
                              ph["pulls"].astype(np.float64), ph["coords"].ravel()])
        return Prepared(theta=theta, aux=aux, means=su.means.copy())
    return prepare


def _bai_structure(maxdet_on: bool):
    """The phase-1 entries read with certainty.

    Phase-1 entries read with certainty: the first pull of every arm of B_1
    (MAX-DET branch) or of every arm (uniform branch).
    """
    def structure(p: dict) -> list:
        ph = _bai_setup(p, maxdet_on).phase1
        arms = ph["B"] if ph["branch"] == "maxdet" else range(len(ph["alpha"]))
        return [((int(a), 0), f"first pull of arm {int(a)} (read in phase 1)") for a in arms]
    return structure


def _od_structure(p: dict) -> list:
    ph = _od_setup(p).phase1
    return [((int(a), 0), f"first pull of arm {int(a)} (phase-1 design support)")
            for a in np.flatnonzero(ph["pulls"])]


def _info(kind: str, maxdet_on: bool = True):
    """Precomputation details for ``dpaudit bench`` (data-independent MAX-DET / design)."""
    def info(p: dict) -> dict:
        su = _bai_setup(p, maxdet_on) if kind == "bai" else _od_setup(p)
        ph = su.phase1
        out = {"precompute_s": su.seconds, "max_pulls": su.max_pulls, "K": su.features.shape[0],
               "d": su.features.shape[1]}
        if kind == "bai":
            out.update(phase1_branch=ph["branch"], B_1=[int(b) for b in ph["B"]],
                       maxdet_method=ph["method"], maxdet_subsets=ph["subsets"],
                       s=list(su.sched.s), M=su.sched.M, T_prime=su.sched.T_prime)
        else:
            out.update(design_support=[int(a) for a in np.flatnonzero(ph["pulls"])],
                       phase1_pulls=int(ph["pulls"].sum()), R=ph["R"], m=ph["m"], L=ph["L"])
        return out
    return info


# ------------------------------------------------------------------------------ registry

PAPER = "Chen, Karthik, Chee, Tan (ICLR 2024, arXiv:2401.09073)"
HORIZON = 32          # audit default budget T: small tables, every phase-1 entry in view
REUSE_HORIZON = 60    # the mutant's K = d = 5 instance: T' = 41, n_p = 3 / 5 / 7
REUSE_MEANS = (0.5, 0.45, 0.4, 0.35, 0.3)   # 

PROP41 = "Prop. 4.1"
CLAIMS = {"bai": "ε-DP: Chen, Karthik, Chee, Tan 2024, Prop. 4.1",
          "gauss": "(ε, δ)-DP: Chen, Karthik, Chee, Tan 2024, Prop. D.2",
          "baseline": "ε-DP: Chen, Karthik, Chee, Tan 2024, Sec. 5 (Prop. 4.1's argument, "
                      "uniform phases)",
          "od": "ε-DP: Chen, Karthik, Chee, Tan 2024, App. E.1 (stated informally)"}

P_FEATURES = Param("features", "sec5", "text",
                   "features: sec5 | identity | collinear | a K x d .npy/.csv file | rows "
                   "'a11,a12;a21,a22' (a Python array also works)",
                   claim=theorem(f"{PROP41}: any features a_i in R^d (the means follow them)",
                                 Scale.GENERATED, (2, 6)))
P_MEANS = Param("means", None, "floats", "arm means for base tables and rewards beyond the "
                "table (default: a_i . theta* of the preset)", low=0.0, high=1.0, min_len=2)
P_HORIZON = Param("horizon", HORIZON, "int", "the budget T (the audited tables have as many "
                  "rows as the longest run)", low=2, high=1 << 20,
                  claim=theorem(f"{PROP41}: every budget T with T' >= 1", Scale.INT_LOG,
                                (8, 512)))
P_READING = Param("reading", "A", "choice", "schedule reading of eqs. (7)-(8)",
                  choices=READINGS, claim=option("eqs. (7)-(8): the phase schedule"))
P_OVERRUN = Param("overrun", "allow", "choice", "budget overrun policy", choices=OVERRUNS,
                  claim=option("phases that would exceed the budget T"))
P_MAXDET = Param("maxdet", "auto", "choice", "MAX-DET search",
                 choices=lin.MAXDET_METHODS, claim=option("MAX-DET: exact or approximate"))
P_DELTA = Param("delta", GAUSS_DELTA, "float", "DP delta of the Gaussian mechanism",
                low=0.0, high=1.0, open_low=True, open_high=True,
                claim=theorem("Prop. D.2: every δ in (0, 1)", Scale.LOG, (1e-6, 0.1)))
P_NORM = Param("norm", "l2", "choice", "norm of L = max_i ||a_i||", choices=NORMS,
                claim=option("App. E.1: the norm of L is not stated"))

BAI_PARAMS = (P_FEATURES, P_MEANS, P_HORIZON, P_READING, P_OVERRUN, P_MAXDET)
# DP-OD's claim (App. E.1) covers the same features and budgets; OD-LinBAI needs m > 0
OD_PARAMS = (
    dataclasses.replace(P_FEATURES, claim=theorem(
        "App. E.1: any features a_i in R^d (the means follow them)", Scale.GENERATED, (2, 6))),
    P_MEANS,
    dataclasses.replace(P_HORIZON, claim=theorem(
        "App. E.1: every budget T with m > 0", Scale.INT_LOG, (8, 512))))


def gauss_proof_range(eps: float, delta: float) -> str | None:
    """Where the proof of Prop. D.2 holds: None inside, else why not (one clause).

    Prop. D.2 is stated for every ε > 0, δ > 0; its proof (App. I) reduces it to the
    mechanism π̃ of eq. (107) (counts and private means) and bounds the one Gaussian release
    that reads the changed entry by "a property of the Gaussian mechanism" (eq. (113), citing
    Dwork and Roth 2014, App. A: Thm. A.1, σ ≥ sqrt(2 ln(1.25/δ))·Δ/ε gives (ε, δ)-DP for
    ε < 1). The step needs only that release's hockey-stick δ(ε) ≤ δ, which holds for ε < 1 by
    the theorem and is decided exactly elsewhere by the Gaussian's privacy profile (Balle and
    Wang 2018, Thm. 8; :func:`dpaudit.statistics.accounting.delta_at`). The ratio Δ/σ =
    ε/sqrt(2 ln(1.25/δ)) does not depend on the phase's count, so neither does the range.
    Outside it π̃ itself is not (ε, δ)-DP (a white-box proof: the release is one of π̃'s
    outputs), while the claim on the actions, a post-processing of π̃, is neither proved nor
    refuted.

    Args:
        eps: ε > 0.
        delta: δ in (0, 1).

    Returns:
        None where the proof holds, else the reason (the range, the source, δ(ε)).
    """
    if eps < 1.0:                                         # Dwork and Roth 2014, Thm. A.1
        return None

    def excess(e: float) -> float:                        # δ(e) − δ of the calibrated release
        sigma = math.sqrt(2.0 * math.log(1.25 / delta)) / e    # sensitivity 1
        return accounting.delta_at(accounting.Release("gaussian", sigma), e) - delta

    if excess(eps) <= 0:
        return None
    top = ("" if excess(1.0) > 0 else
           f"; exact accounting extends the step to eps <= {optimize.brentq(excess, 1.0, eps):.4g} "
           f"at delta = {delta:g}")
    return (f"Prop. D.2 ({PAPER}) is proved in App. I by eq. (113), the Gaussian mechanism's "
            f"(eps, delta)-DP (Dwork and Roth 2014, Thm. A.1, stated for eps in (0, 1)){top}; at eps = "
            f"{eps:g} the calibrated release has delta({eps:g}) = {excess(eps) + delta:.4g} > "
            f"{delta:g} (white-box proof, dp-accounting's exact Gaussian privacy profile): the "
            f"proof's mechanism (eq. (107)) is not ({eps:g}, {delta:g})-DP, and the claim on "
            "the actions is neither proved nor refuted there")


def _bai_horizon(maxdet_on: bool):
    return lambda p: _bai_setup(p, maxdet_on).max_pulls


SPECS: list[AlgorithmSpec] = []   # this module's algorithms (dpaudit.algorithms.registry)

SPECS.append(AlgorithmSpec(
    name="dp-bai", title="DP-BAI (Algorithm 1)", paper=PAPER, model=PrivacyModel.STREAM,
    private=True,
    kernel=dp_bai_kernel, params=BAI_PARAMS, prepare=_bai_prepare(NOISE_LAPLACE, True),
    structure=_bai_structure(True), audit_horizon=_bai_horizon(True), theorem=CLAIMS["bai"],
    description="fixed-budget linear BAI: MAX-DET collections, phase-local means + "
                "Lap(1/(eps n)), top-s elimination",
    extra={"info": _info("bai")}))

SPECS.append(AlgorithmSpec(
    name="dp-bai-gauss", title="DP-BAI-GAUSS (Algorithm 2, App. D)", paper=PAPER,
    model=PrivacyModel.STREAM, private=True, kernel=dp_bai_kernel, params=BAI_PARAMS + (P_DELTA,),
    prepare=_bai_prepare(NOISE_GAUSS, True), structure=_bai_structure(True),
    audit_horizon=_bai_horizon(True), default_delta=GAUSS_DELTA, theorem=CLAIMS["gauss"],
    proof_range=gauss_proof_range,
    description="DP-BAI with Gaussian noise sigma = sqrt(2 ln(1.25/delta))/(eps n)",
    extra={"info": _info("bai")}))

SPECS.append(AlgorithmSpec(
    name="dp-bai-baseline", title="BASELINE (Sec. 5: DP-BAI without MAX-DET)", paper=PAPER,
    model=PrivacyModel.STREAM, private=True, kernel=dp_bai_kernel,
    params=(P_FEATURES, P_MEANS, P_HORIZON, P_READING, P_OVERRUN),
    prepare=_bai_prepare(NOISE_LAPLACE, False), structure=_bai_structure(False),
    audit_horizon=_bai_horizon(False), theorem=CLAIMS["baseline"],
    description="every phase pulls every active arm ceil(T'/(M s_p)) times (uniform branch)",
    extra={"info": _info("bai", False)}))

SPECS.append(AlgorithmSpec(
    name="dp-od", title="DP-OD (App. E.1)", paper=PAPER, model=PrivacyModel.STREAM, private=True,
    kernel=od_kernel, params=OD_PARAMS + (P_NORM,),
    prepare=_od_prepare(True), structure=_od_structure,
    audit_horizon=lambda p: _od_setup(p).max_pulls, theorem=CLAIMS["od"],
    description="OD-LinBAI with Lap(L/eps) on every coordinate of the OLS moment vector",
    extra={"info": _info("od")}))

SPECS.append(AlgorithmSpec(
    name="od-linbai", title="OD-LinBAI (Yang & Tan 2022)", paper=PAPER,
    model=PrivacyModel.STREAM, private=False, kernel=od_kernel, params=OD_PARAMS,
    prepare=_od_prepare(False), structure=_od_structure,
    audit_horizon=lambda p: _od_setup(p).max_pulls,
    description="non-private G-optimal-design elimination (positive control: must be flagged)",
    extra={"info": _info("od")}))

SPECS.append(AlgorithmSpec(
    name="dp-bai-reuse", title="DP-BAI mutant: phase means reuse earlier phases", paper=PAPER,
    model=PrivacyModel.STREAM, private=True, kernel=dp_bai_kernel,
    params=(dataclasses.replace(P_FEATURES, default="identity"),
            dataclasses.replace(P_MEANS, default=REUSE_MEANS),
            dataclasses.replace(P_HORIZON, default=REUSE_HORIZON), P_READING, P_OVERRUN,
            P_MAXDET),
    prepare=_bai_prepare(NOISE_LAPLACE, True, reuse=True), structure=_bai_structure(True),
    audit_horizon=_bai_horizon(True), mutant_of="dp-bai", theorem=CLAIMS["bai"],
    description="phase mean over all the arm's samples so far with the same noise scale "
                "1/(eps n_p): an entry re-enters every later release of its arm (F2)",
    extra={"info": _info("bai")}))
