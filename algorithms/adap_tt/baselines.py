"""Baselines of Azize, Al Marjani, Jourdan, Basu (2023): TTUCB and DP-SE.

Baselines of Azize, Al Marjani, Jourdan, Basu (NeurIPS 2023, arXiv:2309.02202, Section 5):
TTUCB and DP-SE.

Both are fixed-confidence best-arm identification algorithms in the ``user`` table model (row t
of the table is user t's potential rewards, read at round t for the pulled arm only), compiled
to the kernel contract of :mod:`dpaudit.simulation.simulate`. Source: Azize, Al Marjani,
Jourdan and Basu 2023 (arXiv:2309.02202), Section 4.

``ttucb`` — non-private TTUCB of [JD22] as described in the paper's Section 4:

* initialisation pulls arms 0..K-1 once (rows 0..K-1);
* cumulative empirical means μ̂ and counts N over the whole history;
* GLR stopping rule with candidate â = argmax μ̂, evaluated every round once all arms were
  pulled (before choosing the next arm): stop iff for every b ≠ â
  (μ̂_â − μ̂_b)²/(1/N_â + 1/N_b) ≥ 2·c with
  c = 2·C_G(½·ln((K−1)/δ)) + 2·ln(4 + ln N_â) + 2·ln(4 + ln N_b).
  **The paper does not restate TTUCB's threshold**: this is our threshold, from outside the paper
  (Lemma 5 = [KK21] Thm 9 with |S| = 2, union bound over the K − 1 pairs (a, a*)); C_G is
  computed exactly by :func:`dpaudit.algorithms.adap_tt.glr.C_G` (eq. 15);
* UCB leader B = argmax μ̂_a + sqrt(6·ln(n)/N_a), n = samples taken + 1 (Section 4, display
  after "TTUCB belongs to the family ...");
* TC challenger C = argmin_{a≠B} (μ̂_B − μ̂_a)/sqrt(1/N_B + 1/N_a) (same display);
* tracking I = B if M[B] ≤ β·(L[B] + 1) else C (Section 4);
* ties towards the lowest index. τ = samples taken.
It makes no noisy release (n_rel = 0) and is deterministic given the table: it is the audit's
positive control (``private=False``).

``dp-se`` — DP-SE of [SS19] converted to FC-BAI (Section 4 "Comparison to DP-SE").
The paper gives no constants; ours (from outside the paper: the co-authors' draft code citing
SS19 Algorithm 3) are used, with Δ_e = 2^−e and |S| the active set at the start of epoch e:

* R_e = floor(max(32·ln(8|S|e²/δ)/Δ_e², 8·ln(4|S|e²/δ)/(ε·Δ_e)) + 1);
* epoch e pulls the active arms in increasing index order, each R_e times consecutively (a
  data-independent order); right after its block, arm a's epoch mean m_a is released as
  m̃_a = m_a + Lap(1/(ε·R_e)) (one release per active arm per epoch, all logged);
* h_e = sqrt(ln(8|S|e²/δ)/(2R_e)), c_e = ln(4|S|e²/δ)/(ε·R_e); at the end of the epoch every
  active a with max_{b∈S} m̃_b − m̃_a > 2·(h_e + c_e) is removed;
* stop when one arm remains and recommend it; τ = Σ_e |S_e|·R_e.
  (The release is drawn right after the arm's block; it is used only at the epoch's end.)

Ambiguity option ``epoch_mean``: ``epoch`` (default, our reading: m_a = this epoch's
reward sum / R_e) or ``cumulative-count`` (the draft code's quirk: this epoch's sum divided by
the arm's cumulative count Σ_{j≤e} R_j; the noise scale stays 1/(ε·R_e)).

Both kernels check a data-independent cap ``max_steps`` (status CAPPED) and ``limit``
(TRUNCATED) before every sample, exactly as the AdaP-TT kernel: a stopping decision available
after n samples is taken before those checks.
"""
from __future__ import annotations

import dataclasses
import math

import numba as nb
import numpy as np

from dpaudit.auditing.whitebox import pair_frozen, pair_next, pair_record
from dpaudit.algorithms.space import Scale, option, theorem
from dpaudit.algorithms.spec import AlgorithmSpec, Param, Prepared
from dpaudit.core.terms import PrivacyModel
from dpaudit.simulation.simulate import (CAPPED, LAPLACE, STOPPED, TRUNCATED, batch_buffers,
                                         batch_record)

from ..kernels import argmax, reward, site_release, site_switch
from .algorithm import MU1, PAPER, _params, _tc_challenger
from .glr import C_G

# theta layout of the TTUCB kernel
TT_RISK, TT_BETA, TT_MAX_STEPS, TT_CG = range(4)
# theta layout of the DP-SE kernel
SE_EPS, SE_RISK, SE_MAX_STEPS, SE_EPOCH_MEAN = range(4)
EPOCH_MEANS = ("epoch", "cumulative-count")


# ------------------------------------------------------------------------------------- TTUCB

@nb.njit(cache=True)
def _ttucb_stop(mu: np.ndarray, N: np.ndarray, glog: float, cg: float):
    """Non-private GLR stopping rule of TTUCB: â if it fires, else -1.

    ``mu``, ``N``, ``glog``: shape (K,) cumulative means, counts and 2·ln(4 + ln N_a);
    ``cg`` = C_G(½·ln((K−1)/δ)). Fires iff for every b ≠ â = argmax μ̂:
    (μ̂_â − μ̂_b)²/(1/N_â + 1/N_b) ≥ 2·(2·cg + glog[â] + glog[b]).
    """
    ahat = argmax(mu)
    for b in range(mu.shape[0]):
        if b == ahat:
            continue
        d = mu[ahat] - mu[b]
        if d * d / (1.0 / N[ahat] + 1.0 / N[b]) < 2.0 * (2.0 * cg + glog[ahat] + glog[b]):
            return -1
    return ahat


@nb.njit(cache=True)
def _ttucb_next(mu: np.ndarray, N: np.ndarray, L: np.ndarray, M: np.ndarray, beta: float, n: int):
    """Arm to pull at time index ``n`` (= samples taken + 1) and the leader B: (I, B).

    UCB leader argmax μ̂_a + sqrt(6·ln(n)/N_a), TC challenger argmin_{a≠B}
    (μ̂_B − μ̂_a)/sqrt(1/N_B + 1/N_a), tracking I = B iff M[B] ≤ β·(L[B] + 1) (paper Section 4).
    Ties towards the lowest index.
    """
    K = mu.shape[0]
    ln_n6 = 6.0 * math.log(n)
    B, best = 0, -np.inf
    for a in range(K):
        v = mu[a] + math.sqrt(ln_n6 / N[a])
        if v > best:
            B, best = a, v
    if M[B] <= beta * (L[B] + 1):
        return B, B
    return _tc_challenger(mu, N, B), B


@nb.njit(cache=True)
def ttucb_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                 theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                 releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of TTUCB (Azize et al. 2023, Section 4).

    One run of TTUCB (Azize et al. 2023, Section 4). Kernel contract:
    dpaudit.simulation.simulate.

    ``theta`` = (δ, β, max_steps, C_G(½·ln((K−1)/δ))), shape (4,) (indices TT_*); ``aux``,
    ``releases`` and ``frozen`` unused. Other shapes as in the contract (``table`` (T, K),
    ``means`` (K,), ``actions`` int16). Returns int64 (τ, â or -1, status, 0): no noisy
    release. ``rng`` is read only for rewards of rows beyond the table. Raises nothing.

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    K = means.shape[0]
    beta = theta[TT_BETA]
    cg = theta[TT_CG]
    max_steps = np.int64(theta[TT_MAX_STEPS])
    n_rec = actions.shape[0]

    N = np.zeros(K)                  # counts (float: only used in ratios)
    S = np.zeros(K)                  # reward sums
    mu = np.zeros(K)                 # cumulative empirical means
    glog = np.empty(K)               # 2·ln(4 + ln N_a), refreshed for the pulled arm
    L = np.zeros(K, np.int64)        # rounds with a as leader
    M = np.zeros(K, np.int64)        # rounds with a as leader and a pulled
    n = 0
    I = 0
    B = -1
    while True:
        if n >= K:                   # after initialisation: stopping test every round
            ahat = _ttucb_stop(mu, N, glog, cg)
            if ahat >= 0:
                return n, ahat, STOPPED, 0
        if n >= max_steps:
            return n, -1, CAPPED, 0
        if n >= limit:
            return n, -1, TRUNCATED, 0
        if n < K:
            I = n                    # initialisation: arm n at row n
        else:
            I, B = _ttucb_next(mu, N, L, M, beta, n + 1)
            L[B] += 1
            if I == B:
                M[B] += 1
        x = reward(rng, table, means, n, I)
        if n < n_rec:
            actions[n] = I
        n += 1
        N[I] += 1.0
        S[I] += x
        mu[I] = S[I] / N[I]
        glog[I] = 2.0 * math.log(4.0 + math.log(N[I]))


@nb.njit(cache=True, nogil=True)
def ttucb_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
                keep: int) -> tuple:
    """Cached batch loop of :func:`ttucb_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = ttucb_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


def _ttucb_prepare(eps: float, p: dict) -> Prepared:
    """Theta (4,) and empty aux for :func:`ttucb_kernel`; ``eps`` is ignored (not private).

    C_G(½·ln((K−1)/δ)) is computed exactly by :func:`glr.C_G` (eq. 15). Raises ValueError
    (from C_G) only for non-finite inputs, which parameter validation excludes.
    """
    K = len(p["means"])
    theta = np.zeros(4)
    theta[TT_RISK], theta[TT_BETA], theta[TT_MAX_STEPS] = p["risk"], p["beta"], p["max_steps"]
    theta[TT_CG] = C_G(0.5 * math.log((K - 1) / p["risk"]))
    return Prepared(theta=theta, aux=np.zeros(0), means=np.asarray(p["means"], dtype=np.float64))


def _ttucb_structure(p: dict) -> list[tuple[int, str]]:
    """(row, description) of rows whose change reaches the first data-dependent decisions.

    TTUCB adds no noise, so any change of a read row can change the transcript deterministically.
    """
    K = len(p["means"])
    return [(0, "initial pull of arm 0 (enters μ̂_0 and every later leader/challenger choice)"),
            (K, "first post-initialisation sample")]


# ------------------------------------------------------------------------------------- DP-SE

@nb.njit(cache=True)
def epoch_length(n_active: int, e: int, eps: float, risk: float) -> np.int64:
    """DP-SE epoch length R_e = floor(max(32·ln(8|S|e²/δ)/Δ_e², 8·ln(4|S|e²/δ)/(ε·Δ_e)) + 1).

    ``n_active`` = |S| at the start of epoch ``e`` (≥ 1), ``eps`` = ε > 0 (math.inf gives the
    ε-free lower bound), ``risk`` = δ ∈ (0, 1). Δ_e = 2^−e. Returns samples per active arm
    (int64, clamped to 2^62 so that it fits). Raises nothing. Source: the
    constants of the co-authors' draft code (the paper gives none).

    Args:
        n_active: active arms at the start of the epoch.
        e: the epoch (≥ 1).
        eps: ε > 0 (math.inf: the ε-free bound).
        risk: δ ∈ (0, 1).

    Returns:
        R_e, samples per active arm (int64, clamped to 2^62).
    """
    d = 2.0 ** (-e)
    r1 = 32.0 * math.log(8.0 * n_active * e * e / risk) / (d * d)
    r2 = 8.0 * math.log(4.0 * n_active * e * e / risk) / (eps * d)
    return np.int64(min(math.floor(max(r1, r2) + 1.0), 2.0 ** 62))


@nb.njit(cache=True)
def dpse_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of DP-SE converted to FC-BAI (Azize et al. 2023, Section 4).

    One run of DP-SE converted to FC-BAI (Azize et al. 2023, Section 4). Kernel contract:
    dpaudit.simulation.simulate.

    ``theta`` = (ε, δ, max_steps, epoch_mean 0 = epoch / 1 = cumulative-count) (indices SE_*);
    shape (4,); ``aux`` unused; other shapes as in the contract. Every epoch mean is logged to
    ``releases`` (t = samples taken when released = end of the arm's block, arm, phase = epoch
    e, count = R_e, value = the exact mean, noisy, scale = 1/(ε·R_e), dist = Laplace);
    ``frozen``: replayed released values (kernel contract).
    Returns int64 (τ, â or -1, status, n_rel). Raises nothing.

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    K = means.shape[0]
    eps, risk = theta[SE_EPS], theta[SE_RISK]
    m0 = site_switch(theta, 0)                 # the mutation switch
    max_steps = np.int64(theta[SE_MAX_STEPS])
    cumulative = theta[SE_EPOCH_MEAN] == 1.0
    n_rec = actions.shape[0]

    active = np.ones(K, np.bool_)
    ncum = np.zeros(K, np.int64)     # cumulative counts (cumulative-count option only)
    mt = np.empty(K)                 # noisy epoch means m̃
    n_act = K
    n = 0
    nr = 0
    e = 0
    while n_act > 1:
        e += 1
        R = epoch_length(n_act, e, eps, risk)
        for a in range(K):
            if not active[a]:
                continue
            s = 0.0
            for _ in range(R):
                if n >= max_steps:
                    return n, -1, CAPPED, nr
                if n >= limit:
                    return n, -1, TRUNCATED, nr
                s += reward(rng, table, means, n, a)
                if n < n_rec:
                    actions[n] = a
                n += 1
            ncum[a] += R
            mean = s / ncum[a] if cumulative else s / R
            scale = 1.0 / (eps * R)
            mt[a], m0 = site_release(m0, rng, releases, frozen, nr, n, a, e, R, mean,
                                 rng.laplace(0.0, scale), scale, LAPLACE)
            nr += 1
        h = math.sqrt(math.log(8.0 * n_act * e * e / risk) / (2.0 * R))
        c = math.log(4.0 * n_act * e * e / risk) / (eps * R)
        top = -np.inf
        for a in range(K):
            if active[a] and mt[a] > top:
                top = mt[a]
        for a in range(K):
            if active[a] and top - mt[a] > 2.0 * (h + c):
                active[a] = False
                n_act -= 1
    for a in range(K):
        if active[a]:
            return n, a, STOPPED, nr
    return n, -1, STOPPED, nr   # unreachable: the arm attaining the maximum is never removed


@nb.njit(cache=True, nogil=True)
def dpse_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
               theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
               keep: int) -> tuple:
    """Cached batch loop of :func:`dpse_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = dpse_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


@nb.njit(cache=True, nogil=True)
def ttucb_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
                table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
                limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`ttucb_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = ttucb_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                         pair_frozen(work, 0))
        r = ttucb_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                         pair_frozen(work, o[3]))
        pair_record(work, o, r)

@nb.njit(cache=True, nogil=True)
def dpse_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
               table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
               limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`dpse_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = dpse_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                        pair_frozen(work, 0))
        r = dpse_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                        pair_frozen(work, o[3]))
        pair_record(work, o, r)


# the cached batch loop of each kernel (dpaudit.simulation.simulate.run_batch reads it)
BATCH_LOOPS = {ttucb_kernel: ttucb_batch, dpse_kernel: dpse_batch}
# the cached run/replay loop of each kernel (dpaudit.auditing.whitebox.pair_body)
PAIR_LOOPS = {ttucb_kernel: ttucb_pairs, dpse_kernel: dpse_pairs}
# each kernel's noise sites (dpaudit.algorithms.mutation): (site, what its noise privatises)
NOISE_SITES = {dpse_kernel: ((0, "each active arm's epoch mean, Lap(1/(ε·R_e))"),)}


def _dpse_prepare(eps: float, p: dict) -> Prepared:
    """Theta (4,) and empty aux for :func:`dpse_kernel`.

    Raises ValueError if ``eps`` is not a finite ε > 0.
    """
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"DP-SE needs a finite eps > 0, got {eps!r}")
    theta = np.zeros(4)
    theta[SE_EPS], theta[SE_RISK], theta[SE_MAX_STEPS] = eps, p["risk"], p["max_steps"]
    theta[SE_EPOCH_MEAN] = EPOCH_MEANS.index(p["epoch_mean"])
    return Prepared(theta=theta, aux=np.zeros(0), means=np.asarray(p["means"], dtype=np.float64))


def dpse_boundary(prep: Prepared, horizon: int, top: int = 0,
                  tail: float = 0.0) -> list[tuple[np.ndarray, dict]]:
    """The threshold-boundary base table of DP-SE's first elimination.

    The threshold-boundary base table of DP-SE's first elimination: every row gives arm
    ``top`` ½ + g/2 and the other arms ½ − g/2, with g = 2·(h_1 + c_1) − tail·b, 2·(h_1 + c_1)
    the epoch-1 elimination threshold (module doc) at this ε, δ and K and b = 1/(ε·R_1) the
    scale of the epoch means' Laplace noise. With ``tail`` = 0 the gap is exactly the
    threshold and the noise decides the elimination half the time (one changed reward moves
    its probability the most); with ``tail`` = s an elimination needs the noise difference of
    two arms above s·b: probability (1 + s/2)·e^(−s)/2, an event rare enough to carry a loss
    near ε.

    Args:
        prep: the prepared instance (``means`` shape (K,), θ holds ε and δ).
        horizon: rows of the table.
        top: the arm above the threshold (0 for ``dp-se``, whose recommendation shows the
            eliminations; :func:`dpse_regret_boundary` puts arm 0 below it).
        tail: s ≥ 0, in noise scales b.

    Returns:
        One (horizon, K) float64 ``user`` table with its recipe (R_1's two terms bound h_1 and
        c_1 by Δ_1/8 each, so g ≤ ¼ and the rows lie in [0, 1]).
    """
    K = prep.means.shape[0]
    eps, risk = float(prep.theta[SE_EPS]), float(prep.theta[SE_RISK])
    r1 = float(epoch_length(K, 1, eps, risk))
    g = 2.0 * (math.sqrt(math.log(8.0 * K / risk) / (2.0 * r1)) + math.log(4.0 * K / risk)
               / (eps * r1)) - tail / (eps * r1)
    row = np.full(K, 0.5 - g / 2)
    row[top] = 0.5 + g / 2
    return [(np.tile(row, (int(horizon), 1)),
             {"kind": "rows", "row": row.tolist(), "name": "threshold-boundary"})]


def dpse_regret_boundary(prep: Prepared, horizon: int) -> list[tuple[np.ndarray, dict]]:
    """The boundary tables of :func:`dpse_boundary` with tails of 2 and 0 noise scales.

    :func:`dpse_boundary` with arm 1 on top and a tail of 2 noise scales: arm 0 sits below
    the threshold, eliminated with probability 2·e^(−2)/2 ≈ 0.135, and the first action after
    epoch 1 (arm 0 if it survived, else the next survivor) shows its elimination, the one
    output of DP-SE for regret within its audit rows. At even odds (tail 0) no event is rare
    enough to carry a loss of (1 + margin)·ε, so that table cannot make a pass; it is there
    for an elimination that reads the raw gap (no noise, or one draw shared by the arms'
    means): at the threshold itself one changed reward decides it.

    Args:
        prep: the prepared arrays.
        horizon: rows T.

    Returns:
        [(table, recipe)]: the 2-scale tail (``threshold-boundary``), then the threshold
        itself (``threshold-exact``).
    """
    (exact, recipe), = dpse_boundary(prep, horizon, top=1, tail=0.0)
    return [*dpse_boundary(prep, horizon, top=1, tail=2.0),
            (exact, {**recipe, "name": "threshold-exact"})]


def _dpse_structure(p: dict) -> list[tuple[int, str]]:
    """Rows of arm 0's epoch-1 block (rows 0..R_1−1 for every ε, R_1 ≥ its ε-free part).

    Every row of an epoch feeds exactly one noisy mean (this one: m̃_0 of epoch 1, scale
    1/(ε·R_1)), which decides the first elimination.
    """
    r1 = int(epoch_length(len(p["means"]), 1, math.inf, p["risk"]))
    return [(0, "first sample of arm 0 (epoch 1: feeds only m̃_0 of epoch 1)"),
            (r1 - 1, "a late sample of arm 0's epoch-1 block (feeds only m̃_0 of epoch 1)")]


# ---------------------------------------------------------------------------------- registry

_SHARED = {p.name: p for p in _params(0)}   # the shared parameter definitions of adap_tt

TTUCB_HORIZON = 32
# samples of epoch 1 on μ1 at δ = 0.01, plus 1 (the first action of epoch 2 reveals the first
# elimination); ε-free: valid for every ε ≥ 0.115, where R_1 does not depend on ε.
DPSE_HORIZON = int(len(MU1) * epoch_length(len(MU1), 1, math.inf, 0.01) + 1)

SPECS: list[AlgorithmSpec] = []   # this module's algorithms (dpaudit.algorithms.registry)

SPECS.append(AlgorithmSpec(
    name="ttucb", title="TTUCB (non-private Top Two, [JD22])", paper=PAPER, model=PrivacyModel.USER,
    private=False, kernel=ttucb_kernel,
    params=(_SHARED["means"], _SHARED["risk"], _SHARED["beta"], _SHARED["max_steps"],
            dataclasses.replace(_SHARED["horizon"], default=TTUCB_HORIZON)),
    prepare=_ttucb_prepare, structure=_ttucb_structure, audit_horizon=lambda p: p["horizon"],
    description="non-private baseline of Section 5: UCB leader, TC challenger, tracking, GLR "
                "stopping on raw means (positive control: must be flagged as a violation)"))

SPECS.append(AlgorithmSpec(
    name="dp-se", title="DP-SE converted to FC-BAI ([SS19])", paper=PAPER,
    model=PrivacyModel.USER, private=True, kernel=dpse_kernel,
    params=(_SHARED["means"], _SHARED["risk"],
            Param("epoch_mean", "epoch", "choice", "ambiguity option: epoch mean divided by R_e "
                  "(our reading) or by the arm's cumulative count (draft-code quirk)",
                  choices=EPOCH_MEANS, claim=option("the epoch mean's divisor")),
            _SHARED["max_steps"],
            dataclasses.replace(_SHARED["horizon"], default=DPSE_HORIZON, claim=theorem(
                "every prefix of the transcript (the claim covers the whole run); long "
                "enough to reach the first elimination", Scale.INT_LOG, (64, 8192)))),
    prepare=_dpse_prepare, structure=_dpse_structure, audit_horizon=lambda p: p["horizon"],
    theorem="ε-DP (Laplace epoch means over disjoint samples): Sajed & Sheffet 2019, DP-SE, "
            "as run by Azize et al. 2023, Sec. 5",
    description="ε-DP successive elimination: epochs of geometric length, one Laplace epoch "
                "mean per active arm, stop when one arm remains",
    extra={"boundary_tables": dpse_boundary}))
