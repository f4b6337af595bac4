"""AdaP-TT of Azize, Al Marjani, Jourdan, Basu (2023), Algorithm 2 and Appendix D.

AdaP-TT (Azize, Al Marjani, Jourdan, Basu, "On the Complexity of Differentially Private
Best-Arm Identification with Fixed Confidence", NeurIPS 2023, arXiv:2309.02202; Algorithm 2 and
Appendix D).

ε-global-DP fixed-confidence best-arm identification in the ``user`` table model: row t of the
table is user t's potential rewards, read at round t for the pulled arm only.

Faithful to Algorithm 2 of Azize, Al Marjani, Jourdan and Basu 2023 (arXiv:2309.02202):

* initialisation pulls arms 1..K once; phase 1 of arm a is that single sample, released as
  μ̃ = x + Lap(1/ε) with Ñ = 1 (ambiguity: the paper never defines the phase-1 estimate);
* per-arm doubling: arm a switches phase when its global count doubles (eq. 10); only the arm
  pulled last can switch (Lemma 3: N = 2^(k−1), Ñ = 2^(k−2));
* forgetting: the phase mean uses this phase's samples only (eq. 11), noised with a fresh
  Lap(1/(ε·Ñ)) draw (eq. 12);
* private GLR stopping rule with candidate â = argmax μ̃ (Line 11), local counts Ñ and
  threshold 2·c_{ε,k_â,k_b}(Ñ_â, Ñ_b, δ) of eq. (4) with C_G computed exactly;
  evaluated at every switch and once after initialisation (Alg. 2 evaluates it every round;
  its inputs only change at switches);
* private UCB leader B = argmax μ̃_a + sqrt(k_a/Ñ_a) + k_a/(ε·Ñ_a) (eq. 22);
* private TC challenger with global counts (eq. 23), tracking with β;
* τ = number of samples taken; ties broken towards the lowest index.

Named options for the documented ambiguities: ``threshold`` (``theory`` = eq. 4, default;
``heuristic`` = the public draft code's threshold), ``bonus`` (``phase`` =
eq. 22, default; ``log`` = ln n in place of k_a in both terms, the remedy for starvation),
``s`` (not stated in the paper, default 2), ``max_steps`` (data-independent cap: a run that
reaches it halts without a decision and is reported as *capped*, never dropped).

Finding (docs/papers/azize2023.md): under eq. 22's bonus an arm that is not pulled
gains no bonus, so a best arm whose phase-1 release is low is never pulled again and, with tied
sub-optimal arms (the paper's μ1), the run never stops: 14 % of runs at ε = 0.5 (witness: seed
7, run 0; ``benchmarks/stopping_times.py``). ``bonus=log`` ends it; the faithful bonus stays the
default.

Mutants share the one kernel through theta flags: ``adap-tt-no-forgetting`` (FORGETTING = 0:
phase means over all past samples) and ``adap-tt-raw-leader`` (RAW_LEADER = 1: the
UCB leader of eq. 22 reads the exact phase means).
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np
from scipy.special import zeta

from dpaudit.auditing.whitebox import pair_frozen, pair_next, pair_record
from dpaudit.algorithms.space import Scale, option, proof, theorem
from dpaudit.algorithms.spec import AlgorithmSpec, Param, Prepared
from dpaudit.core.terms import PrivacyModel
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import (CAPPED, LAPLACE, STOPPED, TRUNCATED, batch_buffers,
                                         batch_record)

from ..kernels import argmax, reward, site_release, site_switch
from .glr import cg_table, max_phase

# theta layout of the AdaP-TT kernel
EPS, RISK, BETA, S, THRESHOLD, BONUS, FORGETTING, MAX_STEPS, ZETA_S, RAW_LEADER, LOG_TERM = range(11)
THRESHOLDS = ("theory", "heuristic")
BONUSES = ("phase", "log")

MU1 = (0.95, 0.9, 0.9, 0.9, 0.9, 0.5)  # Azize et al. (2023) Section 5 instance μ1 (K = 6)


@nb.njit(cache=True)
def _threshold(theta: np.ndarray, aux: np.ndarray, K: int, k1: int, k2: int, n1: float, n2: float):
    """2·c (the GLR statistic is compared with this), eq. (4) or the heuristic."""
    eps, risk = theta[EPS], theta[RISK]
    if theta[THRESHOLD] == 0.0:
        s = theta[S]
        lz = math.log(2.0 * K * theta[ZETA_S] / risk)
        c_np = 2.0 * aux[k1 * k2] + 2.0 * math.log(4.0 + math.log(n1)) \
            + 2.0 * math.log(4.0 + math.log(n2))
        lap = (lz + s * math.log(k1)) ** 2 / (n1 * eps * eps) \
            + (lz + s * math.log(k2)) ** 2 / (n2 * eps * eps)
        return 2.0 * (2.0 * c_np + lap)
    L = math.log(1.0 / risk)
    return 2.0 * (L + math.log(1.0 + math.log(n1)) + math.log(1.0 + math.log(n2))
                  + (1.0 / n1 + 1.0 / n2) * L * L / (eps * eps))


@nb.njit(cache=True)
def _threshold_floor(theta: np.ndarray, aux: np.ndarray, k1: int, k2: int, n1: float, n2: float):
    """A cheap lower bound on :func:`_threshold`.

    A lower bound on :func:`_threshold` from one table lookup and no logarithm: ln(4 + ln n)
    ≥ ln 4, ln(1 + ln n) ≥ 0 and ln k ≥ 0 for n, k ≥ 1 (``theta[LOG_TERM]`` = ln(2Kζ(s)/δ),
    or ln(1/δ) for the heuristic). Shaved by 1e-12 (relative) against rounding, so that
    ``z < floor`` implies ``z < threshold``: a shortcut that never changes a decision.
    """
    eps, lz = theta[EPS], theta[LOG_TERM]
    lap = (1.0 / n1 + 1.0 / n2) * lz * lz / (eps * eps)
    if theta[THRESHOLD] == 0.0:
        floor = 2.0 * (2.0 * (2.0 * aux[k1 * k2] + 4.0 * math.log(4.0)) + lap)
    else:
        floor = 2.0 * (lz + lap)
    return floor * (1.0 - 1e-12)


@nb.njit(cache=True)
def _glr_stop(mu: np.ndarray, ntil: np.ndarray, kph: np.ndarray, theta: np.ndarray,
              aux: np.ndarray):
    """Private GLR stopping rule (Alg. 2 Lines 11–12): returns â if it fires, else -1."""
    K = mu.shape[0]
    ahat = argmax(mu)
    for b in range(K):
        if b == ahat:
            continue
        d = mu[ahat] - mu[b]
        z = d * d / (1.0 / ntil[ahat] + 1.0 / ntil[b])
        if z < _threshold_floor(theta, aux, kph[ahat], kph[b], ntil[ahat], ntil[b]):
            return -1
        if z < _threshold(theta, aux, K, kph[ahat], kph[b], ntil[ahat], ntil[b]):
            return -1
    return ahat


@nb.njit(cache=True)
def _tc_challenger(mu: np.ndarray, N: np.ndarray, B: int):
    """The transportation-cost challenger (eq. 23).

    Transportation-cost challenger argmin_{a≠B} (μ_B − μ_a)/sqrt(1/N_B + 1/N_a) with global
    counts ``N`` (Azize et al. (2023) eq. 23 for AdaP-TT with μ̃; TTUCB with μ̂). Ties: lowest index.
    """
    C, best = -1, np.inf
    inv_b = 1.0 / N[B]
    for a in range(mu.shape[0]):
        if a != B:
            v = (mu[B] - mu[a]) / math.sqrt(inv_b + 1.0 / N[a])
            if v < best:
                C, best = a, v
    return C


@nb.njit(cache=True)
def _leader(mu: np.ndarray, ntil: np.ndarray, kph: np.ndarray, eps: float, log_bonus: float,
            n: int):
    """Private UCB leader (eq. 22): argmax μ̃_a + sqrt(k_a/Ñ_a) + k_a/(ε·Ñ_a)."""
    best, best_v = 0, -np.inf
    for a in range(mu.shape[0]):
        r = math.log(n) if log_bonus else kph[a]
        v = mu[a] + math.sqrt(r / ntil[a]) + r / (eps * ntil[a])
        if v > best_v:
            best, best_v = a, v
    return best


@nb.njit(cache=True)
def adap_tt_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                   theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                   releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of AdaP-TT (Azize et al. (2023) Algorithm 2). Kernel contract: dpaudit.simulation.simulate.

    ``theta`` = (ε, δ, β, s, threshold 0/1, bonus 0/1, forgetting 0/1, max_steps, ζ(s),
    raw_leader 0/1); ``aux`` = C_G table indexed by k1·k2 (eq. 14 at δ/2). Returns
    (τ, â, status, n_rel); every phase mean μ̃ is logged to ``releases`` (``frozen``: replayed
    released values, kernel contract).
    With forgetting = 0 (the ``adap-tt-no-forgetting`` mutant) the phase mean is taken over
    *all* samples of the arm so far, with the same noise scale 1/(ε·Ñ): not private.
    With raw_leader = 1 (the ``adap-tt-raw-leader`` mutant) the UCB leader of eq. 22 reads the
    exact phase means μ̂ instead of μ̃ (the releases are unchanged): not private.

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    K = means.shape[0]
    eps = theta[EPS]
    m0, m1 = site_switch(theta, 0), site_switch(theta, 1)   # the mutation switch
    beta = theta[BETA]
    log_bonus = theta[BONUS] == 1.0
    forgetting = theta[FORGETTING] == 1.0
    raw_leader = theta[RAW_LEADER] == 1.0
    max_steps = np.int64(theta[MAX_STEPS])
    n_rec = actions.shape[0]

    ints = np.zeros((6, K), np.int64)    # the per-arm state: two allocations per run, not 12
    floats = np.zeros((5, K))
    N = ints[0]                      # global counts
    kph = ints[1]                    # phase indices
    kph[:] = 1
    nsw = ints[2]                    # global count at the start of the current phase
    nsw[:] = 1
    C = ints[3]                      # sample count of the phase in progress
    L = ints[4]                      # rounds with a as leader
    M = ints[5]                      # rounds with a as leader and a pulled
    ntil = floats[0]                 # local count of the last completed phase
    ntil[:] = 1.0
    mu = floats[1]                   # private means μ̃
    mraw = floats[2]                 # exact phase means μ̂ (read by the raw-leader mutant only)
    lead = mraw if raw_leader else mu  # the means the UCB leader reads
    S = floats[3]                    # reward sum of the phase in progress
    Stot = floats[4]                 # reward sum since the start (mutant only)

    n = 0                            # samples taken
    nr = 0                           # releases made
    for a in range(K):               # initialisation: rows 0..K-1
        if n >= max_steps:
            return n, -1, CAPPED, nr
        if n >= limit:
            return n, -1, TRUNCATED, nr
        x = reward(rng, table, means, n, a)
        if n < n_rec:
            actions[n] = a
        n += 1
        N[a] = 1
        Stot[a] = x
    for a in range(K):   # phase 1 = the initial sample, released with Lap(1/ε)
        mraw[a] = Stot[a]
        mu[a], m0 = site_release(m0, rng, releases, frozen, nr, K, a, 1, 1, Stot[a],
                             rng.laplace(0.0, 1.0 / eps), 1.0 / eps, LAPLACE)
        nr += 1

    ahat = _glr_stop(mu, ntil, kph, theta, aux)
    if ahat >= 0:
        return n, ahat, STOPPED, nr
    B = _leader(lead, ntil, kph, eps, log_bonus, n + 1)
    last = -1
    while True:
        if last >= 0 and C[last] >= nsw[last]:          # per-arm doubling (eq. 10)
            a = last
            kph[a] += 1
            ntil[a] = C[a]
            mean = S[a] / C[a] if forgetting else Stot[a] / N[a]
            scale = 1.0 / (eps * ntil[a])
            mraw[a] = mean
            mu[a], m1 = site_release(m1, rng, releases, frozen, nr, n, a, kph[a], C[a], mean,
                                 rng.laplace(0.0, scale), scale, LAPLACE)    # eq. 12
            nr += 1
            nsw[a] = N[a]
            S[a] = 0.0
            C[a] = 0
            ahat = _glr_stop(mu, ntil, kph, theta, aux)
            if ahat >= 0:
                return n, ahat, STOPPED, nr
            B = _leader(lead, ntil, kph, eps, log_bonus, n + 1)
        elif log_bonus:
            B = _leader(lead, ntil, kph, eps, log_bonus, n + 1)
        if n >= max_steps:
            return n, -1, CAPPED, nr
        if n >= limit:
            return n, -1, TRUNCATED, nr
        if M[B] <= beta * (L[B] + 1):                   # tracking
            I = B
        else:                                           # TC challenger, global counts
            I = _tc_challenger(mu, N, B)
        x = reward(rng, table, means, n, I)
        if n < n_rec:
            actions[n] = I
        n += 1
        N[I] += 1
        S[I] += x
        C[I] += 1
        Stot[I] += x
        L[B] += 1
        if I == B:
            M[B] += 1
        last = I


@nb.njit(cache=True, nogil=True)
def adap_tt_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                  theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
                  keep: int) -> tuple:
    """Cached batch loop of :func:`adap_tt_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = adap_tt_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


@nb.njit(cache=True, nogil=True)
def adap_tt_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
                  table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
                  limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`adap_tt_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = adap_tt_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                           pair_frozen(work, 0))
        r = adap_tt_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                           pair_frozen(work, o[3]))
        pair_record(work, o, r)


# the cached batch loop of each kernel (dpaudit.simulation.simulate.run_batch reads it)
BATCH_LOOPS = {adap_tt_kernel: adap_tt_batch}
# the cached run/replay loop of each kernel (dpaudit.auditing.whitebox.pair_body)
PAIR_LOOPS = {adap_tt_kernel: adap_tt_pairs}
# each kernel's noise sites (dpaudit.algorithms.mutation): (site, what its noise privatises)
NOISE_SITES = {adap_tt_kernel: (
    (0, "each arm's initial sample, Lap(1/ε)"),
    (1, "an arm's phase mean at its doubling, Lap(1/(ε·ñ)) (eq. 12)"))}


THM3 = "Thm 3 (App. C.2)"
CLAIM = "ε-global DP for rewards in [0, 1]: Azize et al. 2023, " + THM3


def _params(horizon_default: int) -> tuple[Param, ...]:
    return (
        Param("means", MU1, "floats", "Bernoulli instance: base tables and rows beyond the table",
              low=0.0, high=1.0, min_len=2,
              claim=theorem(f"{THM3}: any instance with rewards in [0, 1]", Scale.GENERATED,
                            (2, 6))),
        Param("risk", 0.01, "float", "BAI risk δ", low=0.0, high=1.0, open_low=True, open_high=True,
              claim=theorem(f"{THM3}: every risk δ in (0, 1)", Scale.LOG, (1e-3, 0.5))),
        Param("beta", 0.5, "float", "Top Two tracking proportion β", low=0.0, high=1.0,
              open_low=True, open_high=True,
              claim=theorem(f"{THM3}: every β in (0, 1)", Scale.LINEAR, (0.1, 0.9))),
        Param("s", 2.0, "float", "exponent s > 1 of the threshold's union bound (paper: unstated)",
              low=1.0, high=100.0, open_low=True,
              claim=proof(f"the stopping threshold (eq. (4)) is post-processing in {THM3}'s "
                          "proof, which never uses s", Scale.LOG, (1.01, 10.0))),
        Param("threshold", "theory", "choice", "stopping threshold: eq. (4) or the draft code's",
              choices=THRESHOLDS, claim=option("eq. (4) vs the draft code's threshold")),
        Param("bonus", "phase", "choice", "leader bonus: k_a (eq. 22) or ln n", choices=BONUSES,
              claim=option("eq. (22)'s exploration bonus")),
        Param("max_steps", 1 << 24, "int", "data-independent cap on samples (capped runs are "
              "reported)", low=1, high=2.0 ** 62),
        Param("horizon", horizon_default, "int", "audit table rows: transcripts are audited up to "
              "this many samples", low=2, high=1 << 20,
              claim=theorem(f"{THM3} covers the whole run, so every prefix of the transcript",
                            Scale.INT_LOG, (8, 512))),
    )


def _prepare(forgetting: bool, raw_leader: bool = False):
    def prepare(eps: float, p: dict) -> Prepared:
        K = len(p["means"])
        theta = np.zeros(11)
        theta[EPS], theta[RISK], theta[BETA], theta[S] = eps, p["risk"], p["beta"], p["s"]
        theta[THRESHOLD] = THRESHOLDS.index(p["threshold"])
        theta[BONUS] = BONUSES.index(p["bonus"])
        theta[FORGETTING] = 1.0 if forgetting else 0.0
        theta[MAX_STEPS] = p["max_steps"]
        theta[ZETA_S] = zeta(p["s"])
        theta[RAW_LEADER] = 1.0 if raw_leader else 0.0
        theta[LOG_TERM] = (math.log(2.0 * K * float(theta[ZETA_S]) / p["risk"]) if theta[THRESHOLD] == 0
                           else math.log(1.0 / p["risk"]))
        if not math.isfinite(theta[LOG_TERM]):   # eq. (4)'s 2Kζ(s)/δ overflows a float
            raise InputError(f"risk={p['risk']!r} with s={p['s']!r} is not valid: eq. (4)'s "
                             f"2Kζ(s)/δ overflows; expected 2Kζ(s)/δ < 1e308 (a larger risk or s)")
        kmax = max_phase(p["max_steps"])
        aux = cg_table(p["risk"] / 2, K, p["s"], kmax)   # c_{k1k2}(·, ·, δ/2) in eq. (4)
        return Prepared(theta=theta, aux=aux, means=np.asarray(p["means"], dtype=np.float64))
    return prepare


def _structure(p: dict) -> list[tuple[int, str]]:
    """Rows whose change reaches an early release."""
    K = len(p["means"])
    return [(0, "initial pull of arm 0 (its phase-1 release, Ñ = 1)"),
            (K - 1, f"initial pull of arm {K - 1}"),
            (K, "first post-initialisation sample (phase 2 of the first leader, Ñ = 1)"),
            (K + 1, "second post-initialisation sample")]


PAPER = "Azize, Al Marjani, Jourdan, Basu (NeurIPS 2023, arXiv:2309.02202)"
HORIZON = 32

SPECS: list[AlgorithmSpec] = []   # this module's algorithms (dpaudit.algorithms.registry)

SPECS.append(AlgorithmSpec(
    name="adap-tt", title="AdaP-TT (Algorithm 2 + App. D)", paper=PAPER, model=PrivacyModel.USER,
    private=True, kernel=adap_tt_kernel, params=_params(HORIZON), prepare=_prepare(True),
    structure=_structure, audit_horizon=lambda p: p["horizon"], theorem=CLAIM,
    description="ε-global-DP Top Two with per-arm doubling, forgetting and Laplace phase means"))

SPECS.append(AlgorithmSpec(
    name="adap-tt-no-forgetting", title="AdaP-TT mutant: no forgetting", paper=PAPER,
    model=PrivacyModel.USER, private=True, kernel=adap_tt_kernel, params=_params(HORIZON),
    prepare=_prepare(False), structure=_structure, audit_horizon=lambda p: p["horizon"],
    mutant_of="adap-tt", theorem=CLAIM,
    description="phase means over all past samples with the same noise scale 1/(ε·Ñ): a row "
                "re-enters every later release of its arm (first row)"))

SPECS.append(AlgorithmSpec(
    name="adap-tt-raw-leader", title="AdaP-TT mutant: leader on raw means", paper=PAPER,
    model=PrivacyModel.USER, private=True, kernel=adap_tt_kernel, params=_params(HORIZON),
    prepare=_prepare(True, raw_leader=True), structure=_structure,
    audit_horizon=lambda p: p["horizon"], mutant_of="adap-tt", theorem=CLAIM,
    description="UCB leader (eq. 22) computed from the exact phase means μ̂ instead of μ̃: a "
                "decision reads raw rewards without noise: leader "
                "and challenger must use μ̃)"))
