"""DP-NCB: privacy-preserving fair bandits (Sarkar, Pandey, Ray Chowdhury, 2025).

DP-NCB: privacy-preserving fair bandits (Sarkar, Pandey, Ray Chowdhury,
"DP-NCB: Privacy Preserving Fair Bandits", 2025).

Source: Sarkar, Pandey, Ray Chowdhury, "DP-NCB: Privacy Preserving Fair Bandits" (the
algorithm numbers below are the paper's). Registered names:

``gdp-ncb`` (Algorithm 4, model ``user``)
    Phase I: uniform arms; after each pull the pulled arm's Phase-I mean is re-noised with a
    fresh Lap(ln T/(ε·N1)) (one release per round) and Phase I ends after the first round whose
    noisy product N1·μ̃ exceeds θ_G = C_I·(c² ln T + (ln T)²/ε). Phase II: the full NCB_GDP
    index (line 19, recovered from App. D.2)
    m + 2c·sqrt(2m ln T/n) + α(ln T)²/(ε n) + 4·sqrt(2α/ε)(ln T)^{3/2}/n, m = clip(μ̃), n = N1 + N2;
    the argmax arm A plays an episode of 2·N2[A] pulls (N2 starts at 1: episodes 2, 4, 8, ...),
    whose mean over the Phase-I samples of A plus *this episode's* samples is released once
    with Lap(ln T/(ε n)) and clipped.
``ldp-ncb`` (Algorithm 5, model ``user``)
    Every reward is privatised by its user, Y = x + Lap(1/ε) (the paper's local randomiser,
    Sec. 5), and the algorithm reads the Y's only: Phase I uniform until some arm meets the
    STOP test of (both strict inequalities of Alg. 5 line 2), then argmax of the
    NCB_LDP index (paper eq. in Sec. 5, line 114 of the text), arms with N = 0 first.
``ldp-ncb-randomiser`` (model ``local``)
    That randomiser alone on a stream of users (as ``privbern``): one reward r ∈ [0, 1] out
    as r + Lap(1/ε); the transcript records the output binned at width 1/4
    (``actions[u] = floor(4·Y)``, clipped to ±2^14) so that {Y ≥ 1} (loss exactly ε) is an
    event on it. Tight: ε_lb → ε.
``ncb`` (Barman et al. 2023; non-private positive control, model ``user``)
    Phase I uniform until max_i n_i μ̂_i > C_I·c² ln T ([CODE] rule, where C_I = 1:
    no 1600), then argmax of eq. (3) μ̂ + 4·sqrt(μ̂ ln T/n) on raw means every round
    (``ncb_index=eq3``, the paper's; ``code`` = μ̂ + 2c·sqrt(2μ̂ ln T/n)). Audit defaults
    C_I = 0.1, T = 32 (see Defaults).
``ldp-ucb`` (Ren et al. 2020 as run by the authors, [CODE]; model ``user``)
    Y = clip(x + Lap(1/ε)); each arm once; force-pull the lowest arm with n ≤ 4 ln t; else
    argmax μ̃ + sqrt(2 ln t/n) + sqrt(32 ln t)/(ε sqrt(n)) (t = 1-based round).
``gdp-ncb-anytime``, ``ldp-ncb-anytime`` (Algorithm 7)
    Windows W = 1, 2, 4, ... of the rounds (window h covers rounds W..2W−1, 1-based); each
    window is Uniform with probability 1/W² and otherwise a fresh instance of the base
    algorithm with horizon W (ln W in every constant); the last window is truncated at the
    process horizon. Windows with W ≤ 2 are forced Uniform (ln 1 = 0, ln 2 < 1).
``ldp-ncb-randomiser-half-scale`` (mutant of ``ldp-ncb-randomiser``)
    Lap(1/(2ε)) in place of Lap(1/ε) (noise of the wrong scale): 2ε-LDP, not ε-LDP.

Readings (paper wins where they differ):

* log = natural log; ties: lowest index; Phase-I noise is fresh every round and
  only the pulled arm is re-noised; Phase-I means are not clipped, the index clips;
  n_i = N1 + N2 in NCB_GDP; the Phase-II loop advances t per pull and truncates the
  last episode at T, whose release is then skipped; LDP arms with N = 0 get index +∞
 ; the LDP Phase-I test is "not stopping" while N = 0.
* LDP clipping: ``ldp_clip=literal`` (default, the paper's Alg. 5 line 12: the stored
  mean is clipped after every Phase-II update and the next running-mean update starts from
  it) or ``sum`` (unclipped running mean, clipped only in the index, the authors' code).
* ``phase1_constant`` = C_I (default 1600, the paper's). With it Phase I never ends for
  T ≤ 10⁶, so the private algorithms at audit horizons play uniformly: the
  audit of the faithful algorithm passes trivially. Audits of Phase II need a small C_I,
  e.g. ``--param phase1_constant=0.01`` (``scaled`` mode).
* Paper vs our reading: our readings are used; one of them was checked
  against the paper: the non-private NCB index is eq. (3) of the paper (4·sqrt(μ̂ ln T/n)),
  the default here, while the authors' code uses 2c·sqrt(2μ̂ ln T/n)
  (option ``ncb_index=code``).
* AdaP-UCB (Azize & Basu 2022), the paper's comparator, is in :mod:`adap_ucb`: that paper
  is not among our sources, so it is assembled
  from what Sarkar et al. (2025) and Hu et al. (2021) say of it (module doc there).

Transcript: ``actions`` = arms (for the randomiser: binned outputs), τ = rounds played (T),
``rec`` = -1 (no recommendation; randomiser: bin of user 0), status STOPPED at T, TRUNCATED at
``limit``. White-box log (kernel contract): GDP Phase-I releases (phase 0, count N1, value
S1/N1, scale ln T/(ε N1)); GDP episode releases (phase = the arm's episode number ≥ 1, count
N1 + N2, scale ln T/(ε (N1 + N2))); LDP/LDP-UCB: one release per reward (phase = the arm's
pull count, count 1, value x, scale 1/ε). ``t`` = samples taken when released. Anytime runs
log the releases of every window (the scale uses that window's ln W).

Defaults (and why). K = 2 (means 0.3, 0.7) and ``horizon`` T = 128 for the user-model
audits: the table has 256 positions, so the default neighbour search tries every row ×
value pattern × base table. With the paper's C_I = 1600 GDP-NCB and LDP-NCB (and their
anytime versions) play uniformly at this horizon (as at any T ≤ 10⁶), so their audits pass
trivially: they are the faithful algorithm's audits, not evidence about Phase II; pass
``phase1_constant`` to audit Phase II. ``ncb`` (the positive control) defaults to C_I = 0.1
and T = 32 (64 positions): θ = 0.9 ln 32 ≈ 3.1, so Phase I ends after 4 ones on one arm,
within the audited short prefixes (3, 4, 6, 10, 18 actions) where the audit's cells are
not unique per run; with the code's C_I = 1 at T = 128 Phase I ends near round 80, where
every action prefix is unique per run, and the default audit found nothing (ε_lb = 0).
``ldp-ucb`` has T = 64: its decisions read privatised rewards from round K on.

Finding (white-box). The GDP-NCB releases are not ε-DP as a set: a Phase-I reward of arm a
enters every later Phase-I re-noising of a (fresh Lap(ln T/ε) on the sum scale, each costing
ε/ln T) and every Phase-II episode release of a (eq. 6 restarts from the Phase-I data), so
their losses add up (the audit's white-box screen reports release losses of 5–7 at ε = 1, T =
128). The paper's privacy argument (Lemma C) covers the Phase-II episode means only. The
released arms are a post-processing of these releases; with C_I = 1600 they do not depend on
them at all, and the black-box audits found no transcript-level violation (also with
``phase1_constant=0.3``).
"""
from __future__ import annotations

from collections.abc import Sequence
import dataclasses
import functools
import math

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from dpaudit.auditing.whitebox import pair_frozen, pair_next, pair_record
from dpaudit.algorithms.space import Scale, option, proof, theorem
from dpaudit.algorithms.spec import AlgorithmSpec, Param, Prepared
from dpaudit.core import validate
from dpaudit.core.terms import PrivacyModel
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import LAPLACE, STOPPED, TRUNCATED, batch_buffers, batch_record

from .ldp_ucb import ldp_ucb_forced, ldp_ucb_index, law as ldp_ucb_law
from ..kernels import (coin_index, mutant, reward, site_release, site_switch, uniform_index,
                       user_reward, user_stream_end)

PAPER = "Sarkar, Pandey, Ray Chowdhury (2025): DP-NCB"

# theta layout of ncb_kernel
(MODE, EPS, C, ALPHA, C_I, HORIZON, ANYTIME, NOISE_MULT, REUSE, LDP_CLIP_SUM, NCB_CODE,
 N_THETA) = range(12)
GDP, LDP, NCB, LDP_UCB = 0.0, 1.0, 2.0, 3.0
MAX_BIN = 1 << 14
BINS_PER_UNIT = 4.0


# ------------------------------------------------------------------------------ kernels

@nb.njit(cache=True, inline="always")
def _clip(x: float):
    return min(1.0, max(0.0, x))


@nb.njit(cache=True, inline="always")
def _pull(rng: np.random.Generator, table: np.ndarray, means: ArrayLike, n: int, I: int,
          private: bool, lap_unit: float, white: bool, releases: np.ndarray, frozen: np.ndarray,
          nr: int, actions: np.ndarray, N1: np.ndarray, m0: tuple):
    """Sample n of the base algorithm on arm I, privatised when ``private``.

    Sample n (0-based) of the base algorithm on arm I: read the reward; if ``private``,
    privatise it by the local randomiser Y = x + Lap(``lap_unit``) (noise always drawn; with
    ``white`` (a logged run or a mutant: the mutation switch is in that path only), released
    and logged by :func:`site_release` as release ``nr``: t = n + 1,
    phase = the arm's pull count after it, count 1); record ``actions[n] = I`` and count the
    pull in ``N1[I]``. Returns (x or Y, n + 1, releases made so far, the randomiser's
    mutation state). ``inline="always"``:
    the kernels compile as with the block written out (the note on :func:`reward`: a called
    "pull and record" helper measured 1.4–4x slower).
    """
    x = reward(rng, table, means, n, I)
    if private:
        noise = rng.laplace(0.0, lap_unit)
        if white:
            x, m0 = site_release(m0, rng, releases, frozen, nr, n + 1, I, N1[I] + 1.0, 1.0, x,
                             noise, lap_unit, LAPLACE)
        else:
            x = x + noise
        nr += 1
    if n < actions.shape[0]:
        actions[n] = I
    N1[I] += 1.0
    return x, n + 1, nr, m0


# rows of the per-run work matrix (K columns), reset at the start of every window
(W_N1, W_S1, W_MT, W_N2, W_SEP, W_STOT, W_NTOT, W_EP, N_WORK) = range(9)


@nb.njit(cache=True)
def _window(rng: np.random.Generator, table: np.ndarray, means: ArrayLike, theta: np.ndarray,
            t0: int, W: int, limit: int, actions: np.ndarray, releases: np.ndarray,
            frozen: np.ndarray, nr: int, white: bool, wk: int, switch: tuple):
    """Play one window of the anytime wrapper as a fresh base instance.

    Play samples t0 .. t0+W−1 (0-based; stops early at ``limit``) as one fresh instance of
    the theta[MODE] algorithm with horizon W (ln W in every constant). ``wk``: (N_WORK, K)
    work matrix, reset here. ``switch``: the three sites' mutation states, read once per run
    (each window starts from them). Returns (samples taken so far, releases made so far).
    """
    K = means.shape[0]
    mode = theta[MODE]
    eps, c, alpha, ci = theta[EPS], theta[C], theta[ALPHA], theta[C_I]
    L = math.log(W)
    end = t0 + W
    n_rec = actions.shape[0]
    wk[:, :] = 0.0
    N1, S1, mt, N2 = wk[W_N1], wk[W_S1], wk[W_MT], wk[W_N2]
    Sep, Stot, Ntot, ep = wk[W_SEP], wk[W_STOT], wk[W_NTOT], wk[W_EP]
    N2[:] = 1.0                                  # Alg. 4 pseudo count
    n = t0
    lap_unit = theta[NOISE_MULT] / eps           # the local randomiser's scale 1/ε
    m0, m1, m2 = switch                          # the mutation switch
    # ---------------------------------------------------------------- LDP-UCB baseline
    if mode == LDP_UCB:
        while n < end:
            if n >= limit:
                return n, nr
            lt = math.log(float(n - t0 + 1))
            I = ldp_ucb_forced(N1, lt)
            if I < 0:
                best = -np.inf
                for i in range(K):
                    v = ldp_ucb_index(mt[i], lt, N1[i], eps)
                    if v > best:
                        best, I = v, i
            y, n, nr, m0 = _pull(rng, table, means, n, I, True, lap_unit, white, releases, frozen,
                             nr, actions, N1, m0)
            S1[I] += _clip(y)
            mt[I] = S1[I] / N1[I]
        return n, nr
    # ---------------------------------------------------------------------- Phase I
    if mode == GDP:
        theta_g = ci * (c * c * L + L * L / eps)
    elif mode == NCB:
        theta_g = ci * c * c * L
    else:
        theta_g = 0.0
    phase1 = True
    while phase1 and n < end:
        if n >= limit:
            return n, nr
        if white:                                # logged: an exact walk branches on it
            I = coin_index(rng, K, releases, frozen, nr, n)
            nr += 1
        else:
            I = uniform_index(rng, K)
        x, n, nr, m0 = _pull(rng, table, means, n, I, mode == LDP, lap_unit, white, releases,
                         frozen, nr, actions, N1, m0)
        S1[I] += x
        if mode == GDP:
            value = S1[I] / N1[I]
            scale = L / (eps * N1[I])
            noise = rng.laplace(0.0, scale)
            if white:
                mt[I], m1 = site_release(m1, rng, releases, frozen, nr, n, I, 0.0, N1[I], value,
                                     noise, scale, LAPLACE)
            else:
                mt[I] = value + noise
            nr += 1
            if N1[I] * mt[I] > theta_g:          # Alg. 4 line 2 (strict exit)
                phase1 = False
        elif mode == NCB:
            if S1[I] > theta_g:
                phase1 = False
        else:                                    # LDP: running mean of the Y's, unclipped
            mt[I] += (x - mt[I]) / N1[I]
            d = mt[I] - math.sqrt(8.0 * alpha * L / N1[I]) / eps
            if d > 0.0 and N1[I] * d > ci * (c * c * L + L * L / (d * eps * eps)):
                phase1 = False
    # --------------------------------------------------------------------- Phase II
    if mode == GDP:
        reuse = theta[REUSE] == 1.0
        for i in range(K):
            Stot[i] = S1[i]
            Ntot[i] = N1[i]
        b34 = alpha * L * L / eps + 4.0 * math.sqrt(2.0 * alpha / eps) * L ** 1.5
        while n < end:
            A, best = 0, -np.inf
            for i in range(K):
                ni = N1[i] + N2[i]
                m = _clip(mt[i])
                v = m + 2.0 * c * math.sqrt(2.0 * m * L / ni) + b34 / ni
                if v > best:
                    best, A = v, i
            length = 2.0 * N2[A]
            N2[A] = 0.0
            Sep[A] = 0.0
            ep[A] += 1.0
            while N2[A] < length:
                if n >= end or n >= limit:       # truncated episode: no release
                    return n, nr
                x = reward(rng, table, means, n, A)
                if n < n_rec:
                    actions[n] = A
                n += 1
                N2[A] += 1.0
                Sep[A] += x
                Stot[A] += x
                Ntot[A] += 1.0
            if reuse:                            # mutant: every earlier sample of A
                cnt = Ntot[A]
                value = Stot[A] / cnt
            else:                                # Phase I + this episode (eq. 6)
                cnt = N1[A] + N2[A]
                value = (S1[A] + Sep[A]) / cnt
            scale = L / (eps * cnt)
            noise = rng.laplace(0.0, scale)
            if white:
                y, m2 = site_release(m2, rng, releases, frozen, nr, n, A, ep[A], cnt, value, noise,
                                 scale, LAPLACE)
            else:
                y = value + noise
            nr += 1
            mt[A] = _clip(y)
        return n, nr
    # LDP Phase II / non-private NCB: argmax every round
    ncb_code = theta[NCB_CODE] == 1.0
    clip_sum = theta[LDP_CLIP_SUM] == 1.0
    b3 = math.sqrt(8.0 * alpha * L) / eps
    b4 = 4.0 * c * (2.0 * alpha) ** 0.25 * L ** 0.75 / math.sqrt(eps)
    while n < end:
        if n >= limit:
            return n, nr
        I, best = 0, -np.inf
        for i in range(K):
            if N1[i] == 0.0:
                v = np.inf                     
            elif mode == NCB:
                m = S1[i] / N1[i]
                if ncb_code:
                    v = m + 2.0 * c * math.sqrt(2.0 * m * L / N1[i])
                else:
                    v = m + 4.0 * math.sqrt(m * L / N1[i])          # eq. (3)
            else:
                m = _clip(S1[i] / N1[i]) if clip_sum else _clip(mt[i])
                sn = math.sqrt(N1[i])             # N^{3/4} = sqrt(N)·sqrt(sqrt(N)): no pow
                v = m + 2.0 * c * math.sqrt(2.0 * m * L / N1[i]) + b3 / sn + \
                    b4 / (sn * math.sqrt(sn))
            if v > best:
                best, I = v, i
        x, n, nr, m0 = _pull(rng, table, means, n, I, mode == LDP, lap_unit, white, releases,
                         frozen, nr, actions, N1, m0)
        S1[I] += x
        if mode == LDP:
            mt[I] = _clip(mt[I] + (x - mt[I]) / N1[I])   # Alg. 5 line 12 (literal)
    return n, nr


@nb.njit(cache=True)
def ncb_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
               theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
               releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of GDP-NCB, LDP-NCB, NCB or LDP-UCB, optionally in the anytime wrapper.

    One run of GDP-NCB / LDP-NCB / NCB / LDP-UCB (theta[MODE]), optionally inside the
    anytime wrapper (theta[ANYTIME] = 1, Algorithm 7). Kernel contract: dpaudit.simulation.simulate;
    ``table`` (T, K) user table. ``aux``: empty, or the anytime flags script (aux[h] = 1
    forces window h (W = 2^h) Uniform, 0 forces the base algorithm; windows beyond it draw
    the coin; W <= 2 is always Uniform). The coin is drawn in every window, scripted or not.
    Returns (τ, -1, STOPPED at T or TRUNCATED at ``limit``, releases).

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    K = means.shape[0]
    T = np.int64(theta[HORIZON])
    white = releases.shape[0] > 0 or frozen.shape[0] > 0 or mutant(theta)   # logged path
    switch = (site_switch(theta, 0), site_switch(theta, 1), site_switch(theta, 2))
    wk = np.empty((N_WORK, K))
    n_rec = actions.shape[0]
    nr = 0
    if theta[ANYTIME] == 0.0:
        n, nr = _window(rng, table, means, theta, 0, T, limit, actions, releases, frozen, nr,
                        white, wk, switch)
    else:
        n = 0
        W = np.int64(1)
        h = 0
        while n < T and n < limit:
            Wh = min(W, T - n)                   # the last window is truncated
            coin = rng.random()
            if W <= 2:                           # guard of 
                uniform = True
            elif h < aux.shape[0]:
                uniform = aux[h] == 1.0          # scripted flag (tests)
            else:
                uniform = coin < 1.0 / (float(W) * float(W))
            if uniform:
                stop = n + Wh
                while n < stop and n < limit:
                    I = uniform_index(rng, K)
                    reward(rng, table, means, n, I)   # observed, unused (keeps rng aligned)
                    if n < n_rec:
                        actions[n] = I
                    n += 1
            else:
                # a fresh instance with horizon W; it plays only the Wh rounds left
                end_lim = min(limit, n + Wh)
                n, nr = _window(rng, table, means, theta, n, W, end_lim, actions, releases,
                                frozen, nr, white, wk, switch)
            W *= 2
            h += 1
    if n >= T:
        return n, -1, STOPPED, nr
    return n, -1, TRUNCATED, nr


@nb.njit(cache=True, nogil=True)
def ncb_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
              theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
              keep: int) -> tuple:
    """Cached batch loop of :func:`ncb_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = ncb_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


@nb.njit(cache=True)
def laplace_randomiser_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                              theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                              releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """The LDP-NCB local randomiser on a stream of users.

    The LDP-NCB local randomiser Y = r + Lap(theta[NOISE_MULT]/ε) on a stream of users
    (:func:`user_reward`: user u's reward ``table.flat[u]`` for u < table.size, else
    Bernoulli(means[0])). ``actions[u]`` = floor(4·Y) clipped to ±2^14 (the binned output).
    Returns (users, bin of user 0, STOPPED after theta[HORIZON] users or TRUNCATED at
    ``limit``, releases).

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    scale = theta[NOISE_MULT] / theta[EPS]
    m0 = site_switch(theta, 0)                 # the mutation switch
    white = releases.shape[0] > 0 or frozen.shape[0] > 0 or mutant(theta)   # logged path
    n_users = np.int64(theta[HORIZON])
    n_rec = actions.shape[0]
    users, status = user_stream_end(n_users, limit)
    first = -1
    for n in range(users):
        x = user_reward(rng, table, means, n)
        noise = rng.laplace(0.0, scale)
        if white:
            y, m0 = site_release(m0, rng, releases, frozen, n, n + 1, 0, n + 1, 1.0, x, noise, scale,
                             LAPLACE)
        else:
            y = x + noise
        b = np.int64(min(max(math.floor(BINS_PER_UNIT * y), -MAX_BIN), MAX_BIN))
        if n == 0:
            first = b
        if n < n_rec:
            actions[n] = np.int16(b)
    return users, first if status == STOPPED else -1, status, users


@nb.njit(cache=True, nogil=True)
def laplace_randomiser_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                             theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int,
                             views: np.ndarray, keep: int) -> tuple:
    """Cached batch loop of :func:`laplace_randomiser_kernel`.

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = laplace_randomiser_kernel(rng, table, means, theta, aux, limit,
                                                        b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


@nb.njit(cache=True, nogil=True)
def ncb_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
              table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
              limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`ncb_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = ncb_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                       pair_frozen(work, 0))
        r = ncb_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                       pair_frozen(work, o[3]))
        pair_record(work, o, r)

@nb.njit(cache=True, nogil=True)
def laplace_randomiser_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
                             table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
                             limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`laplace_randomiser_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = laplace_randomiser_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                                      pair_frozen(work, 0))
        r = laplace_randomiser_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                                      pair_frozen(work, o[3]))
        pair_record(work, o, r)


# the cached batch loop of each kernel (dpaudit.simulation.simulate.run_batch reads it)
BATCH_LOOPS = {ncb_kernel: ncb_batch, laplace_randomiser_kernel: laplace_randomiser_batch}
# the cached run/replay loop of each kernel (dpaudit.auditing.whitebox.pair_body)
PAIR_LOOPS = {ncb_kernel: ncb_pairs, laplace_randomiser_kernel: laplace_randomiser_pairs}
# each kernel's noise sites (dpaudit.algorithms.mutation): (site, what its noise privatises)
NOISE_SITES = {ncb_kernel: ((0, "the local randomiser of each reward (LDP)"),
                            (1, "an arm's Phase I mean (GDP)"),
                            (2, "an arm's Phase II episode mean (eq. 6)")),
               laplace_randomiser_kernel: ((0, "each user's reward, Lap(1/ε)"),)}


# ------------------------------------------------------------------- constants

def gdp_threshold(T: ArrayLike, eps: ArrayLike, c: float = 3.0,
                  phase1_constant: float = 1600.0) -> ArrayLike:
    """θ_G = C_I·(c² ln T + (ln T)²/ε) (Alg. 4 line 2).

    Args:
        T: the budget or horizon (samples).
        eps: ε.
        c: the constant c.
        phase1_constant: C_I.

    Returns:
        θ_G, of the broadcast shape.
    """
    L = np.log(np.asarray(T, dtype=np.float64))
    return phase1_constant * (c * c * L + L * L / eps)


def ncb_gdp_index(m: ArrayLike, n: float, T: ArrayLike, eps: ArrayLike, c: float = 3.0,
                  alpha: float = 3.1) -> ArrayLike:
    """The NCB_GDP index of Algorithm 4.

    NCB_GDP(i) = m + 2c sqrt(2 m ln T/n) + α(ln T)²/(ε n) + 4 sqrt(2α/ε)(ln T)^{3/2}/n with
    m = clip(μ̃). Vectorised.

    Args:
        m: clipped private means.
        n: pulls.
        T: the budget or horizon (samples).
        eps: ε.
        c: the constant c.
        alpha: the exploration constant α.

    Returns:
        The index, of the broadcast shape.
    """
    m = np.clip(np.asarray(m, dtype=np.float64), 0.0, 1.0)
    n = np.asarray(n, dtype=np.float64)
    L = math.log(T)
    return m + 2 * c * np.sqrt(2 * m * L / n) + alpha * L * L / (eps * n) + \
        4 * np.sqrt(2 * alpha / eps) * L ** 1.5 / n


def nash_regret(mu_bar: ArrayLike, mu_star: float) -> float:
    """The empirical Nash regret, computed in log space.

    Empirical Nash regret μ* − exp(mean_t ln μ̄_t), computed in log space;
    μ* if some μ̄_t = 0.

    Args:
        mu_bar: per-round mean rewards.
        mu_star: the best mean.

    Returns:
        μ* − exp(mean_t ln μ̄_t); μ* if some μ̄_t = 0.
    """
    mu_bar = np.asarray(mu_bar, dtype=np.float64)
    if np.any(mu_bar <= 0):
        return float(mu_star)
    return float(mu_star - np.exp(np.mean(np.log(mu_bar))))


# ------------------------------------------------------------------------------- prepare

def _prepare(mode: float, anytime: bool = False, noise_mult: float = 1.0, reuse: bool = False):
    def prepare(eps: float, p: dict) -> Prepared:
        theta = np.zeros(N_THETA)
        theta[MODE] = mode
        theta[EPS] = validate.positive_real(eps, "eps") if mode != NCB else 1.0   # ncb: ε unused
        theta[C] = p.get("c", 3.0)
        theta[ALPHA] = p.get("alpha_conf", 3.1)
        theta[C_I] = p.get("phase1_constant", 1600.0)
        theta[HORIZON] = p["horizon"]
        theta[ANYTIME] = 1.0 if anytime else 0.0
        theta[NOISE_MULT] = noise_mult
        theta[REUSE] = 1.0 if reuse else 0.0
        theta[LDP_CLIP_SUM] = 1.0 if p.get("ldp_clip", "literal") == "sum" else 0.0
        theta[NCB_CODE] = 1.0 if p.get("ncb_index", "eq3") == "code" else 0.0
        means = np.asarray(p["means"], dtype=np.float64)
        if mode != LDP_UCB and not anytime and p["horizon"] < 2:
            raise InputError(f"horizon={p['horizon']} is out of range: expected an integer "
                             ">= 2 (ln T must be positive)")
        return Prepared(theta=theta, aux=np.zeros(0), means=means)
    return prepare


def with_flags(prep: Prepared, flags: Sequence[int]) -> Prepared:
    """``prep`` with the anytime windows' Uniform/base flags scripted.

    ``prep`` with the anytime windows' Uniform/base flags scripted (aux[h] = 1: window h
    Uniform; 0: the base algorithm), for deterministic tests.

    Args:
        prep: the prepared arrays.
        flags: per window, 1: Uniform; 0: the base algorithm.

    Returns:
        A copy of ``prep``.
    """
    return dataclasses.replace(prep, aux=np.asarray(flags, dtype=np.float64))


# ------------------------------------------------------------------------------ registry

AUDIT_HORIZON = 128
NCB_AUDIT_HORIZON = 32   # ncb: Phase I ends within the first ~8 rounds at C_I = 0.1
NCB_PHASE1 = 0.1
MEANS = (0.3, 0.7)


AUTHORS = "Sarkar, Pandey, Ray Chowdhury"
CLAIMS = {GDP: f"ε-global DP for every ε > 0: {AUTHORS}, Thm 2 (proof: App. C)",
          LDP: f"ε-local DP: {AUTHORS}, Sec. 5 (every reward reported with Lap(1/ε))",
          "gdp-anytime": f"ε-global DP: {AUTHORS}, Thm 4 (Algorithm 7 over GDP-NCB)",
          "ldp-anytime": f"ε-local DP: {AUTHORS}, Thm 5 (Algorithm 7 over LDP-NCB)",
          LDP_UCB: f"ε-local DP: {AUTHORS}, Sec. 5's randomiser (LDP-UCB, Ren et al. 2020)",
          "randomiser": f"ε-local DP of one reward in [0, 1]: {AUTHORS}, Sec. 5"}
UNUSED = "fixed by the paper; the privacy proof of Thm 2 (App. C) never uses it"


def _params(horizon: int = AUDIT_HORIZON, phase1_constant: float = 1600.0, extra: tuple = ()):
    return (Param("means", MEANS, "floats", "Bernoulli instance: base tables and rewards "
                  "beyond the table", low=0.0, high=1.0, min_len=2,
                  claim=theorem("the claims hold for any instance with rewards in [0, 1], any k",
                                Scale.GENERATED, (2, 6))),
            Param("horizon", horizon, "int", "horizon T (= audit table rows)", low=2,
                  high=2.0 ** 40, claim=theorem("the claims hold for every horizon T", Scale.INT_LOG,
                                                (4, 512))),
            Param("c", 3.0, "float", "confidence constant c (paper: 3)", low=0.0, high=1e3,
                  open_low=True, claim=proof(f"c = 3: {UNUSED}", Scale.LOG, (0.1, 10.0))),
            Param("alpha_conf", 3.1, "float", "the paper's α (> 3; paper: 3.1)", low=0.0,
                  high=1e3, open_low=True,
                  claim=proof(f"α = 3.1: {UNUSED}", Scale.LOG, (1.0, 10.0))),
            Param("phase1_constant", phase1_constant, "float", "Phase-I multiplier C_I "
                  "(paper: 1600; small values let Phase I end at audit horizons)", low=0.0,
                  high=1e9, claim=proof(f"C_I = 1600 (Algorithm 4, line 2): {UNUSED}",
                                        Scale.LOG, (1e-3, 1e4)))) + tuple(extra)


P_LDP_CLIP = Param("ldp_clip", "literal", "choice", "clip the stored mean after each "
                   "Phase-II update (literal, Alg. 5) or only in the index (sum, the code)",
                   choices=("literal", "sum"),
                   claim=option("Algorithm 5: where the stored mean is clipped"))
P_NCB_INDEX = Param("ncb_index", "eq3", "choice", "non-private index: eq. (3) of the paper "
                    "or the authors' code (2c sqrt(2 mu ln T/n))", choices=("eq3", "code"),
                    claim=option("eq. (3) vs the authors' code"))


def _structure(p: dict):
    K = len(p["means"])
    return [(0, "first Phase-I sample"), (K, "early Phase-I sample"),
            (p["horizon"] // 2, "mid-horizon sample (Phase II when it is reached)")]


SPECS: list[AlgorithmSpec] = []   # this module's algorithms (dpaudit.algorithms.registry)

def _reg(name: str, title: str, mode: float, private: bool = True, anytime: bool = False,
         params: tuple | None = None, mutant_of: str | None = None,
         description: str = "", extra: dict | None = None, **kw: object):
    key = f"{'gdp' if mode == GDP else 'ldp'}-anytime" if anytime else mode
    claim = CLAIMS[key] if private else ""
    SPECS.append(AlgorithmSpec(
        name=name, title=title, paper=PAPER, model=PrivacyModel.USER, private=private,
        kernel=ncb_kernel,
        params=params or _params(), prepare=_prepare(mode, anytime, **kw),
        structure=_structure, audit_horizon=lambda p: int(p["horizon"]), mutant_of=mutant_of,
        description=description, theorem=claim, extra=extra or {},
        reports=private and mode != GDP))


_reg("gdp-ncb", "GDP-NCB (Algorithm 4, full NCB_GDP index)", GDP,
     description="Phase I uniform with fresh Lap(ln T/(ε N1)) per round; Phase II doubling "
                 "episodes, Phase-I + episode mean released with Lap(ln T/(ε n))")
_reg("ldp-ncb", "LDP-NCB (Algorithm 5) on X + Lap(1/ε) reports", LDP,
     params=_params(extra=(P_LDP_CLIP,)),
     description="every reward privatised by Lap(1/ε); Phase I uniform until the STOP test, "
                 "then argmax NCB_LDP")
_reg("gdp-ncb-anytime", "Anytime GDP-NCB (Algorithm 7)", GDP, anytime=True,
     description="doubling windows W = 1, 2, 4, ...: Uniform w.p. 1/W², else fresh GDP-NCB "
                 "with horizon W (W <= 2 forced Uniform)")
_reg("ldp-ncb-anytime", "Anytime LDP-NCB (Algorithm 7)", LDP, anytime=True,
     params=_params(extra=(P_LDP_CLIP,)),
     description="doubling windows W = 1, 2, 4, ...: Uniform w.p. 1/W², else fresh LDP-NCB "
                 "with horizon W (W <= 2 forced Uniform)")
_reg("ncb", "NCB (Barman et al. 2023), non-private", NCB, private=False,
     params=_params(horizon=NCB_AUDIT_HORIZON, phase1_constant=NCB_PHASE1,
                    extra=(P_NCB_INDEX,)),
     description="Phase I uniform until max n μ̂ > C_I c² ln T (C_I = 1: the authors' code), "
                 "then argmax of eq. (3) on raw means (positive control; audit default C_I = 0.1, T = 32)")
_reg("ldp-ucb", "LDP-UCB (Ren et al. 2020, as in the authors' code)", LDP_UCB,
     params=_params(horizon=64)[:2],
     description="Y = clip(X + Lap(1/ε)); each arm once; force n <= 4 ln t; else argmax "
                 "μ̃ + sqrt(2 ln t/n) + sqrt(32 ln t)/(ε sqrt n)",
     extra={"exact_law": functools.partial(ldp_ucb_law, eps_index=EPS)})

RANDOMISER_USERS = 1 << 16


def _prepare_randomiser(noise_mult: float):
    def prepare(eps: float, p: dict) -> Prepared:
        theta = np.zeros(N_THETA)
        theta[EPS] = validate.positive_real(eps, "eps")
        theta[NOISE_MULT] = noise_mult
        theta[HORIZON] = p["max_steps"]
        if len(p["means"]) != 1:
            raise InputError(f"means={','.join(map(str, p['means']))} is not valid: the "
                             "randomiser takes one Bernoulli mean (the other users' rewards)")
        return Prepared(theta=theta, aux=np.zeros(0), means=np.asarray(p["means"], float))
    return prepare


def _randomiser_params():
    return (Param("means", (0.5,), "floats", "Bernoulli mean of the other users' rewards "
                  "(bench)", low=0.0, high=1.0),
            Param("max_steps", RANDOMISER_USERS, "int", "users privatised per run (bench); "
                  "the audit reads user 0, the local reward", low=1, high=2.0 ** 62))


for _name, _mult, _mut, _desc in (
        ("ldp-ncb-randomiser", 1.0, None, "one reward r in [0, 1] -> r + Lap(1/ε) (Sec. 5): "
         "ε-LDP, tight on {Y >= 1}"),
        ("ldp-ncb-randomiser-half-scale", 0.5, "ldp-ncb-randomiser",
         "Lap(1/(2ε)) in place of Lap(1/ε): 2ε-LDP, not ε-LDP")):
    SPECS.append(AlgorithmSpec(
        name=_name, title=("LDP-NCB local randomiser" if _mut is None else
                           "LDP-NCB randomiser mutant: noise of half the scale"),
        paper=PAPER, model=PrivacyModel.LOCAL, private=True, kernel=laplace_randomiser_kernel,
        params=_randomiser_params(), prepare=_prepare_randomiser(_mult),
        structure=lambda p: [], audit_horizon=lambda p: 1, mutant_of=_mut,
        description=_desc, theorem=CLAIMS["randomiser"]))
