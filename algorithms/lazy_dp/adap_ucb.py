"""AdaP-UCB and AdaP-KLUCB (Azize & Basu, NeurIPS 2022).

AdaP-UCB and AdaP-KLUCB (Azize & Basu 2022, "When privacy meets partial information: a
refined analysis of differentially private bandits", NeurIPS 2022): the baseline
AdaP-UCB of Sarkar et al. (2025) and AdaP-KLUCB of Hu et al. (2021).

**The source paper was not at hand** when this was written. This module is assembled from
what the DP-NCB and lazy-DP papers say about it; every piece below names its source.
Readings that no source fixes are marked [READING]; the KL-UCB index is [RECALLED] (to verify
against Azize & Basu 2022).

Sources

* [NCB-text] the DP-NCB paper (Sarkar, Pandey, Ray Chowdhury), Section 5: "we
  follow the batch arm selection idea of azize2022privacy, where a single arm is selected for a
  fixed duration (episode)"; the index is computed at the beginning of each episode.
* [NCB-baseline] the DP-NCB paper's description of AdaP-UCB: per-arm doubling
  episodes; the private mean uses only the last episode ("forgetting") plus Laplace noise
  calibrated to 1/(ε·episode length); α > 3; and what the authors' code ([CODE]) does: the raw
  first reward stored as μ̃ (no noise), the index μ̃ + √(α ln(t+1)/n) + 2α ln(t+1)/n (no 1/ε
  term). Section 4: α = 3.1 (and ε = 0.2, k = 50) in the experiments.
* [LAZY-related] the lazy-DP paper (Hu, Huang, Mehta, Hegde, arXiv 2102.07929), its related-work
  paragraph: AdaP-UCB "is essentially
  equivalent" to Anytime-Lazy-UCB (:mod:`lazy_dp`) except (a) the private statistic is computed
  when the arm's *accumulated* number of observations reaches exactly 2^r (the logarithmic
  mechanism of Chan et al. 2011) and (b) the noise is added to the empirical mean (Lap(1/(ε·n))
  on a mean of n rewards, the same as Lap(1/ε) on their sum). Footnote 9: AdaP-KLUCB is based on
  KL-UCB; the chosen arm is played until its pull count doubles,
  the index is computed only at episode starts, the private mean uses the last episode only.
  Each reward enters one fresh-batch Laplace statistic exactly once.

The algorithm (one kernel, :func:`adap_kernel`; ``user`` tables (T, K): round t reads
``d[t, a_t]`` only)

1. Initialisation [LAZY-related, as Alg. 1 of Hu et al. (2021); NCB-baseline "plays each arm once"]: arm a is
   pulled at round a (0-based, a = 0..K−1); μ̃_a = that reward + Lap(1/ε) (one release: an
   episode of length 1, count N_a = 1 = 2^0, phase 0).
2. Episodes [NCB-text, NCB-baseline, LAZY-related]: at the start of episode ℓ, at the 1-based round
   t_ℓ = samples so far + 1, the index of every arm is computed with N_a = its pull count so far;
   the argmax J (ties: lowest index, as every kernel here) is pulled N_J times, so that its pull
   count doubles to 2^r (r = the arm's episode number, the ``phase`` of its release). At the end
   of the episode the mean of *this episode's* rewards only ("forgetting") is released with
   Lap(1/(ε·episode length)) and becomes μ̃_J. An episode cut short by the horizon T makes no
   release (nothing would read it) [READING, as for GDP-NCB of Sarkar et al. (2025)].
3. ``adap-ucb`` index [NCB-baseline; the printed form as recalled from the paper, to verify]:
   μ̃_a + sqrt(α·ln t_ℓ/(2·½N_a)) + α·ln t_ℓ/(ε·½N_a) = μ̃_a + sqrt(α ln t_ℓ/N_a) +
   2α ln t_ℓ/(ε N_a) (``index=paper``, default; ½N_a = the last episode's length). Option
   ``index=code`` [NCB-baseline, CODE]: μ̃_a + sqrt(α ln(t+1)/N_a) + 2α ln(t+1)/N_a with t = t_ℓ
   [READING: the code's t is not stated; if it is 0-based, ln(t+1) = ln t_ℓ] and no 1/ε term.
   Option ``init=noisy`` (default) | ``raw`` [NCB-baseline, CODE]: ``raw`` stores the first reward
   itself as μ̃ (no noise, no release); that is **not** ε-DP (the first decision compares raw
   rewards), and is registered as the mutant ``adap-ucb-raw-init``.
4. ``adap-klucb`` index [RECALLED: the sources give no formula, only "based on KL-UCB"
   (footnote 9 of Hu et al. (2021)); to verify against Azize & Basu 2022]: the KL-UCB index of a
   privately optimistic mean, q_max = max{q ∈ [μ̄, 1] : (N_a/2)·kl(μ̄, q) ≤ α ln t_ℓ} with
   μ̄ = clip_[0,1](μ̃_a + α ln t_ℓ/(ε·N_a/2)),
   kl(p, q) = p ln(p/q) + (1−p) ln((1−p)/(1−q)) (Bernoulli, 0·ln 0 = 0), by bisection to width
   :data:`KL_TOL` (:func:`klucb_index`). N_a/2 is read literally: after the initial pull it is
   ½ while the last episode had length 1 [READING].
5. α = ``alpha_conf`` = 3.1 for both (Sarkar et al. (2025), Section 4; Hu et al. (2021) state none), the name of
   :mod:`dp_ncb`.

Privacy (``user`` model, ε-DP claim, both names). Row t is read once, by the arm pulled at
round t, which is fixed by earlier releases only; its reward enters exactly one release, a mean
of n rewards (sensitivity 1/n) with Lap(1/(εn)); the decisions and the transcript are
post-processing of the releases (parallel composition over disjoint episodes). The index form
(``index``) does not matter for privacy; ``init=raw`` does.

Not modelled [READING]: the code's clipping of the released means and its "episodes of 2n pulls
with Lap(1/(ε·n))" (n is not defined there); its μ* = 1 in Nash regret.

White-box log (kernel contract, as :mod:`lazy_dp`): one row per release: t = samples taken, arm,
phase = the arm's episode number (0 = the initial pull), count = episode length, value = the
exact episode mean, noisy = μ̃, scale = 1/(ε·count). Rewards are clamped to [0, 1] when read
(docs/method/architecture.md; audit tables are validated already).

Transcript: τ = samples taken; rec = -1 (regret algorithms recommend nothing); status STOPPED at
T = ``horizon``, TRUNCATED at ``limit``.

Defaults (and why). ``adap-klucb``: ``means`` = Hu et al. (2021)'s Setting 1 (0.75, 0.625, 0.5, 0.375,
0.25), the instance of its experiments and of :mod:`lazy_dp`'s audits. ``adap-ucb`` (and its
mutant): ``means`` = (0.3, 0.7), the K = 2 instance of :mod:`dp_ncb`'s user-model audits (seed
002's experiments use k = 50 draws from U(0.005, 1), too many positions for an exhaustive
search; experiment (a) is k = 2). ``horizon`` T = 10^6 (what ``dpaudit bench`` runs). Audits
read the first ``audit_rows`` = 32 samples (as :mod:`lazy_dp`): the initial pulls (rows
0..K−1) feed the releases that decide the first episode and later rows feed one release each;
32 rows × K ≤ 160 positions keep the neighbour search exhaustive.

Audits (``dpaudit run --algo NAME --eps 1 --seed 1``, 2 shared cores, numba cache warm):
``adap-ucb`` pass, ε_lb = 0.9749 (tied-high base, row 3), 24 s; ``adap-ucb-raw-init``
violation, ε_lb = 10.68 at the first look (row 0: the first episode's arm is a function of the
raw rewards; every gray-box replay diverges), 13 s; ``adap-klucb`` pass, ε_lb = 0 (12 s): with
the clip at 1, every arm with μ̄ = 1 has index q = 1, so ties (lowest index) make arm 0 play
episodes of 1, 2, 4, 8, 16 pulls (rows 5..35) until its μ̄ drops below 1, and the first
decision that depends on data with a sizeable probability is at round 21 (after arm 0's
release over rows 12..19); the search's white-box screen keeps the rows whose releases come
earliest, which never reach it. On an explicit pair there (all-zero 32 × 5 table, row 15 =
0s vs 1s: P(arm 1 takes over at round 21) = 0.12 vs 0.047) the audit gives ε_lb = 0.9895,
pass (``--pair``, 29 s): the algorithm is audited tightly once the pair reaches that decision.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from dpaudit.auditing.whitebox import pair_frozen, pair_next, pair_record
from dpaudit.algorithms.space import Scale, option, proof, theorem
from dpaudit.algorithms.spec import AlgorithmSpec, Param, Prepared
from dpaudit.core import validate
from dpaudit.core.terms import PrivacyModel
from dpaudit.simulation.simulate import LAPLACE, STOPPED, TRUNCATED, batch_buffers, batch_record

from ..kernels import reward, site_release, site_switch
from .algorithm import P_HORIZON, P_MAX_STEPS, SETTING_1, audit_rows

PAPER_UCB = "Azize & Basu (NeurIPS 2022), as the baseline of Sarkar et al. (2025)"
PAPER_KL = "Azize & Basu (NeurIPS 2022), as the baseline of Hu et al. (2021)"

# theta layout of adap_kernel
A_KL, A_EPS, A_HORIZON, A_ALPHA, A_CODE, A_RAW, A_N = range(7)
KL_TOL = 1e-9                       # bisection width of the KL-UCB index
ALPHA = 3.1                         # Sarkar et al. (2025), Section 4 (α > 3)
NCB_MEANS = (0.3, 0.7)              # dp_ncb.MEANS: Sarkar et al. (2025)'s user-model audit instance
AUDIT_ROWS = 32                     # as lazy_dp.BANDIT_ROWS
INDEX_CHOICES = ("paper", "code")
INIT_CHOICES = ("noisy", "raw")


# ------------------------------------------------------------------------------ indices

@nb.njit(cache=True)
def kl_bernoulli(p: ArrayLike, q: ArrayLike) -> ArrayLike:
    """The Bernoulli KL divergence kl(p, q), with 0·ln 0 = 0.

    Bernoulli KL divergence kl(p, q) = p ln(p/q) + (1 − p) ln((1 − p)/(1 − q)) with the
    convention 0·ln 0 = 0 (a term with p = 0 or 1 − p = 0 is 0).

    Args:
        p: a mean in [0, 1].
        q: another mean in [0, 1].

    Returns:
        kl(p, q), of the broadcast shape (nats).
    """
    v = 0.0
    if p > 0.0:
        v += p * math.log(p / q)
    if p < 1.0:
        v += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return v


@nb.njit(cache=True)
def klucb_index(mt: float, N: float, lt: float, eps: float, alpha: float) -> float:
    """The AdaP-KLUCB index (as recalled; module doc item 4).

    AdaP-KLUCB index [RECALLED, module doc item 4]: max{q ∈ [μ̄, 1] : (N/2)·kl(μ̄, q) ≤ α·lt}
    with μ̄ = clip_[0,1](μ̃ + α·lt/(ε·N/2)), ``lt`` = ln t_ℓ. Bisection on [μ̄, 1] (kl(μ̄, ·) is
    increasing there) until the bracket is narrower than :data:`KL_TOL`; returns its lower end
    (feasible). μ̄ = 1 gives 1.

    Args:
        mt: the private mean.
        N: the arm's pulls (N/2 in the last episode).
        lt: ln t_ℓ.
        eps: ε.
        alpha: the exploration constant α.

    Returns:
        The index.
    """
    half = 0.5 * N
    bound = alpha * lt
    mb = mt + bound / (eps * half)
    mb = 1.0 if mb > 1.0 else (0.0 if mb < 0.0 else mb)
    lo, hi = mb, 1.0
    while hi - lo > KL_TOL:
        mid = 0.5 * (lo + hi)
        if half * kl_bernoulli(mb, mid) <= bound:
            lo = mid
        else:
            hi = mid
    return lo


@nb.njit(cache=True)
def adap_index(kl: bool, code: bool, mt: float, N: float, n: int, eps: float,
               alpha: float) -> float:
    """The index of an arm at the start of an episode.

    Index of an arm with private mean ``mt`` and ``N`` pulls at the start of an episode after
    ``n`` samples (t_ℓ = n + 1): AdaP-KLUCB (``kl``), AdaP-UCB as printed (μ̃ + sqrt(α ln t/N) +
    2α ln t/(εN)) or as in the authors' code (``code``: μ̃ + sqrt(α ln(t+1)/N) +
    2α ln(t+1)/N). Module doc items 3–4.

    Args:
        kl: use the KL-UCB index.
        code: the authors' code's index.
        mt: the private mean.
        N: the arm's pulls.
        n: samples taken (t_ℓ = n + 1).
        eps: ε.
        alpha: the exploration constant α.

    Returns:
        The index.
    """
    t = n + 1.0
    if kl:
        return klucb_index(mt, N, math.log(t), eps, alpha)
    if code:
        lt = math.log(t + 1.0)
        return mt + math.sqrt(alpha * lt / N) + 2.0 * alpha * lt / N
    lt = math.log(t)
    return mt + math.sqrt(alpha * lt / N) + 2.0 * alpha * lt / (eps * N)


# ------------------------------------------------------------------------------- kernel

@nb.njit(cache=True)
def adap_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of AdaP-UCB or AdaP-KLUCB.

    One run of AdaP-UCB (theta[A_KL] = 0) or AdaP-KLUCB (1). Kernel contract:
    dpaudit.simulation.simulate; ``table`` (T, K) user table.

    theta (A_* layout): kl flag, ε, horizon T (STOPPED after T samples), α, index=code flag,
    init=raw flag. ``aux`` unused. Returns (τ, -1, status, releases made). Module doc: the
    algorithm and the release log.

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    K = means.shape[0]
    kl = theta[A_KL] == 1.0
    eps = theta[A_EPS]
    m0, m1 = site_switch(theta, 0), site_switch(theta, 1)   # the mutation switch
    T = np.int64(theta[A_HORIZON])
    alpha = theta[A_ALPHA]
    code = theta[A_CODE] == 1.0
    raw = theta[A_RAW] == 1.0
    n_rec = actions.shape[0]
    mt = np.zeros(K)                    # private means μ̃
    N = np.ones(K)                      # pulls so far (after the initial pull)
    ep = np.zeros(K, np.int64)          # episodes completed (the initial pull is episode 0)
    n = 0
    nr = 0
    b0 = 1.0 / eps
    for a in range(K):                  # initialisation: arm a at round a (item 1)
        if n >= T:
            return n, -1, STOPPED, nr
        if n >= limit:
            return n, -1, TRUNCATED, nr
        x = min(1.0, max(0.0, reward(rng, table, means, n, a)))
        if n < n_rec:
            actions[n] = a
        n += 1
        if raw:                         # the authors' code: no noise, no release
            mt[a] = x
        else:
            mt[a], m0 = site_release(m0, rng, releases, frozen, nr, n, a, 0, 1, x,
                                 rng.laplace(0.0, b0), b0, LAPLACE)
            nr += 1
    while True:
        if n >= T:
            return n, -1, STOPPED, nr
        if n >= limit:
            return n, -1, TRUNCATED, nr
        J = 0                           # argmax, ties: lowest index
        best = -np.inf
        for a in range(K):
            v = adap_index(kl, code, mt[a], N[a], n, eps, alpha)
            if v > best:
                J, best = a, v
        length = np.int64(N[J])         # the pull count doubles
        end = n + length
        stop = min(end, T, limit)
        s = 0.0
        while n < stop:
            x = min(1.0, max(0.0, reward(rng, table, means, n, J)))
            if n < n_rec:
                actions[n] = J
            n += 1
            s += x
        if n < end:                     # cut short by T or the audit limit: no release
            return n, -1, (STOPPED if n >= T else TRUNCATED), nr
        ep[J] += 1
        N[J] += length
        scale = 1.0 / (eps * length)
        mt[J], m1 = site_release(m1, rng, releases, frozen, nr, n, J, ep[J], length, s / length,
                             rng.laplace(0.0, scale), scale, LAPLACE)
        nr += 1


@nb.njit(cache=True, nogil=True)
def adap_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
               theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
               keep: int) -> tuple:
    """Cached batch loop of :func:`adap_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = adap_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


@nb.njit(cache=True, nogil=True)
def adap_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
               table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
               limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`adap_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = adap_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                        pair_frozen(work, 0))
        r = adap_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                        pair_frozen(work, o[3]))
        pair_record(work, o, r)


# the cached batch loop of each kernel (dpaudit.simulation.simulate.run_batch reads it)
BATCH_LOOPS = {adap_kernel: adap_batch}
# the cached run/replay loop of each kernel (dpaudit.auditing.whitebox.pair_body)
PAIR_LOOPS = {adap_kernel: adap_pairs}
# each kernel's noise sites (dpaudit.algorithms.mutation): (site, what its noise privatises)
NOISE_SITES = {adap_kernel: ((0, "each arm's initial sample"),
                             (1, "an arm's epoch mean, Lap(1/(ε·length))"))}


# ------------------------------------------------------------------------------ prepare

def _prepare(kl: bool, raw: bool | None = None):
    def prepare(eps: float, p: dict) -> Prepared:
        """Theta for :func:`adap_kernel`.

        Theta for :func:`adap_kernel` (``raw``: forced init=raw (the mutant), else the
        ``init`` parameter).
        """
        theta = np.zeros(A_N)
        theta[A_KL] = 1.0 if kl else 0.0
        theta[A_EPS] = validate.positive_real(eps, "eps")
        theta[A_HORIZON] = p["horizon"]
        theta[A_ALPHA] = p["alpha_conf"]
        theta[A_CODE] = 1.0 if p.get("index", "paper") == "code" else 0.0
        init_raw = p.get("init", "noisy") == "raw" if raw is None else raw
        theta[A_RAW] = 1.0 if init_raw else 0.0
        return Prepared(theta=theta, aux=np.zeros(0),
                        means=np.asarray(p["means"], dtype=np.float64))
    return prepare


# ----------------------------------------------------------------------------- registry

AZIZE_BASU = "Azize & Basu 2022 (AdaP-UCB, AdaP-KLUCB)"
CLAIM = f"ε-global DP: {AZIZE_BASU}, per-episode Laplace means over disjoint samples"


def _p_means(default: tuple, why: str) -> Param:
    return Param("means", default, "floats", f"Bernoulli instance: base tables and rewards "
                 f"beyond the table (default: {why})", low=0.0, high=1.0, min_len=2,
                 claim=theorem(f"{AZIZE_BASU}: any instance with rewards in [0, 1]",
                               Scale.GENERATED, (2, 6)))


P_ROWS = Param("audit_rows", AUDIT_ROWS, "int", "rows of the audit tables: runs are audited on "
               "their first min(horizon, audit_rows) samples", low=1, high=1 << 20,
               claim=theorem("every prefix t <= T of the transcript", Scale.INT_LOG, (16, 256)))
P_ALPHA = Param("alpha_conf", ALPHA, "float", "the exploration constant α (> 3; Sarkar et al. (2025)'s "
                "experiments: 3.1)", low=0.0, high=1e3, open_low=True,
                claim=proof("α > 3 is the regret analysis's; the index is post-processing of "
                            "the private means, so privacy holds for any α", Scale.LOG,
                            (0.01, 20.0)))
P_INDEX = Param("index", "paper", "choice", "AdaP-UCB index: paper = sqrt(α ln t/N) + "
                "2α ln t/(εN) (the printed form, half-N = last episode); code = the DP-NCB "
                "authors' sqrt(α ln(t+1)/N) + 2α ln(t+1)/N (no 1/ε term)",
                choices=INDEX_CHOICES, claim=option("the printed index vs the authors' code"))
P_INIT = Param("init", "noisy", "choice", "initial private mean: noisy = first reward + "
               "Lap(1/ε); raw = the first reward itself (the DP-NCB authors' code; NOT ε-DP)",
               choices=INIT_CHOICES, claim=option("the first private mean"))
P_MEANS_UCB = _p_means(NCB_MEANS, "Sarkar et al. (2025)'s user-model audit instance, as dp-ncb's")
P_MEANS_KL = _p_means(SETTING_1, "Hu et al. (2021)'s Setting 1")


def _structure(p: dict) -> list[tuple[int, str]]:
    K = len(p["means"])
    return [(0, "initial pull of arm 0 (its release decides the first episode)"),
            (K - 1, f"initial pull of arm {K - 1}"),
            (K, "first episode (length 1: its release decides the next episode)")]


SPECS: list[AlgorithmSpec] = []   # this module's algorithms (dpaudit.algorithms.registry)

SPECS.append(AlgorithmSpec(
    name="adap-ucb", title="AdaP-UCB (Azize & Basu 2022), as described by Sarkar et al. (2025) and Hu et al. (2021)",
    paper=PAPER_UCB, model=PrivacyModel.USER, private=True, kernel=adap_kernel,
    params=(P_MEANS_UCB, P_HORIZON, P_ROWS, P_ALPHA, P_INDEX, P_INIT, P_MAX_STEPS),
    prepare=_prepare(False), structure=_structure, audit_horizon=audit_rows,
    theorem=CLAIM,
    description="per-arm doubling episodes chosen by a UCB index at episode start; each "
                "episode's own mean released with Lap(1/(ε·length)) (forgetting): ε-DP"))

SPECS.append(AlgorithmSpec(
    name="adap-klucb", title="AdaP-KLUCB (Azize & Basu 2022), index as recalled",
    paper=PAPER_KL, model=PrivacyModel.USER, private=True, kernel=adap_kernel,
    params=(P_MEANS_KL, P_HORIZON, P_ROWS, P_ALPHA, P_MAX_STEPS),
    prepare=_prepare(True), structure=_structure, audit_horizon=audit_rows,
    theorem=CLAIM,
    description="AdaP-UCB's episodes and releases with a KL-UCB index on the optimistic "
                "private mean clip(μ̃ + α ln t/(ε N/2)) (to verify against the paper): ε-DP"))

SPECS.append(AlgorithmSpec(
    name="adap-ucb-raw-init", title="AdaP-UCB mutant: raw first reward as the private mean",
    paper=PAPER_UCB, model=PrivacyModel.USER, private=True, kernel=adap_kernel,
    params=(P_MEANS_UCB, P_HORIZON, P_ROWS, P_ALPHA, P_INDEX, P_MAX_STEPS),
    prepare=_prepare(False, raw=True), structure=_structure, audit_horizon=audit_rows,
    mutant_of="adap-ucb",
    theorem=CLAIM,
    description="the DP-NCB authors' code: each arm's first reward is stored as μ̃ without "
                "noise, so the first episode's choice reads raw rewards"))
