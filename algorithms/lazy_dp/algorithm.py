"""Lazy / forgetful DP bandits and RNM-FTNL (Hu, Huang, Mehta, Hegde, 2021).

Lazy / forgetful DP bandits and RNM-FTNL (Hu, Huang, Mehta, Hegde, "Near-Optimal Algorithms for
Differentially Private Online Learning in a Stochastic Environment", arXiv:2102.07929, 2021).

Source: Hu, Huang, Mehta, Hegde, arXiv 2102.07929 (the algorithm numbers below are the
paper's). Two kernels, each shared by several registered names through
theta flags (no copied kernels):

:func:`lazy_kernel` (bandit feedback, ``user`` tables (T, K): round t reads ``d[t, J_t]`` only)

``lazy-ucb`` (Algorithm 1, Anytime-Lazy-UCB)
    Rounds 1..K pull arm j at round j and release μ̃_j = x + Lap(1/ε) (epoch 0,
    O_j = 1). From round t = K+1 on: J = argmax_j μ̃_j + sqrt(3·ln t/O_j) +
    3·ln t/(ε·O_j) (ties: lowest index). The pulled reward joins the arm's unprocessed
    sum Φ_J; when the arm's unprocessed count N_J reaches 2^{r_J+1} (an equality check after
    the increment) the epoch is processed: O_J ← 2^{r_J+1}, μ̃_J ← (Φ_J + Lap(1/ε))/O_J,
    r_J ← r_J + 1, N_J, Φ_J ← 0. Each reward enters exactly one release; unprocessed rewards
    never reach a decision.
``lazy-dp-ts`` (Algorithm 3, Lazy-DP-TS)
    The same initialisation and epoch bookkeeping; the decision is J = argmax_j θ_j with
    θ_j ~ Beta(μ̄_j·O_j + 1, (1 − μ̄_j)·O_j + 1), μ̄_j = clamp_[0,1](μ̃_j + 3·ln t/(ε·O_j))
    (real-valued Beta parameters; rewards clamped to [0, 1]). Option ``bonus_log``: the base of the
    printed "log t" in the bonus (``e``: our reading, default; ``2``). Parameter ``bonus``: the
    constant 3 (default; the claim space searches 0.01–10: μ̄ is post-processing of the
    releases, so Thm 4's privacy holds for any constant, and a small one lets the private
    means decide early, where the paper's 3 clamps μ̄ to 1 for O < 3 ln t/ε). Beta(O+1, 1)
    and Beta(1, O+1) (μ̄ = 1 or 0, the common case early on) are drawn exactly as
    exp(−E/(O+1)) and 1 − exp(−E/(O+1)), E ~ Exp(1) (one variate instead of two gammas).

Beta sampling (``lazy-dp-ts``, ``ts-beta``): :func:`_beta`, exact: Beta(a, b) = X/(X + Y)
with X ~ Gamma(a), Y ~ Gamma(b) from an inlined Marsaglia–Tsang sampler (:func:`_gamma`, with
a squeeze that almost never needs a log at large shapes) instead of numba's ``rng.beta``
(~35 ns); ``ts-beta`` keeps each arm's gamma constants and updates only the pulled arm's.
Numbers: docs/method/speed.md.
``ts-beta`` (Algorithm 2, non-private Thompson sampling with Beta(1, 1) priors)
    No forced initial pull: every round θ_j ~ Beta(S_j + 1, O_j − S_j + 1) over *all* rewards
    so far (the real-valued form of the printed Beta(μ̂_j·O_j + 1, (1 − μ̂_j)·O_j + 1)). No
    release. Positive control: it must audit as a violation (ln 2 from one
    decision at K = 2, ln 5 ≈ 1.61 at K = 5).
``lazy-ucb-reuse`` (mutant of ``lazy-ucb``: lazy, not forgetful)
    Epochs close on the same schedule, but the released mean is over *every* reward of the arm
    so far (processed ones reused), μ̃ = (S_all + Lap(1/ε))/N_all, O = N_all: each release is an
    ε-DP view of the initial sample, so it composes (item 3, "keeps old epochs").
``lazy-ucb-eager`` (mutant of ``lazy-ucb``: neither lazy nor forgetful)
    A release after *every* pull, over every reward so far (item 3, "refreshes μ̃
    every round from running sums").

:func:`ftnl_kernel` (full information, ``full`` tables (T, K): round t reads the whole row)

``rnm-ftnl`` (Algorithm 4)
    Epoch 0 is round 1 (row 0): play action 0 (the box's "first action"), observe X(1) and
    J ← argmax_j (X_j(1) + Lap_j(1/ε)). Epoch s ≥ 1 covers rounds 2^s..2^{s+1} − 1 (rows
    2^s − 1..2^{s+1} − 2): play J throughout, add every coordinate of every row to Φ;
    at its end J ← argmax_j (Φ_j + Lap_j(1/ε)) with K fresh draws, Φ ← 0. An epoch cut short by
    the horizon computes no noisy max. Option ``rnm_scale``: ``paper`` (Lap(1/ε), default) or
    ``corrected`` (Lap(2/ε), not in the paper; see the privacy note below).
``ftnl`` (naive FTNL of Sec. 5, "each action's inner mean (ε/K)-DP")
    The same kernel with Lap(K/ε).

Baselines (Sec. 6)

``dp-se-regret``
    DP-SE of Sajed & Sheffet as the regret baseline: :func:`baselines.dpse_kernel` (Azize et al. (2023)'s
    constants, ; this paper gives none) is *reused unchanged*
    for the elimination phase with confidence ``risk`` δ, then the surviving arm is played
    until T. The commit phase reads no data and releases nothing, so its rows cost nothing to
    simulate (``dpaudit bench``'s steps/s counts them). A run that reaches T while eliminating
    stops there. ``risk`` defaults to :data:`DPSE_AUDIT_RISK` = 0.01, the audit instance
    (below); the regret experiment (`dpaudit reproduce hu2021`) passes δ = 1/T, the paper's
    choice ("DP-SE needs T"). δ is a confidence parameter, not part of the privacy claim: every
    δ gives an ε-DP algorithm (each reward enters one Laplace(1/(εR_e)) epoch mean).

``adap-klucb`` (the paper's other comparator; the paper gives neither its index, its
exploration constant α nor its episode schedule) is in :mod:`adap_ucb`, assembled from what
Sarkar et al. (2025) and Hu et al. (2021) say of it.

Privacy note on Theorem 8 (paper vs our reading: they agree on the algorithm; this is an audit
finding). The paper's neighbours may change one reward vector in *all* K coordinates (Def. 1,
App. D.1), and the proof cites Claim 3.9 of Dwork & Roth (Report Noisy Max with Lap(1/ε) is
ε-DP). That claim assumes monotone (counting) queries: all scores move in the same direction.
Here one coordinate may go up by 1 while the others go down by 1, and RNM with Lap(1/ε) is
then only 2ε-DP: at epoch 0 (row 0: action a 0 → 1, the others 1 → 0, K = 5, ε = 1),
P(J^{(0)} = a) is 0.436 on d' and 0.075 on d (ln ratio 1.76 = 1.76ε). ``rnm-ftnl`` is
registered with the paper's claim and audits as a violation; ``rnm_scale=corrected`` doubles
the noise. ``ftnl`` (Lap(K/ε)) is ε-DP even for the whole noisy vector.

White-box log (kernel contract of :mod:`dpaudit.simulation.simulate`). Every Laplace draw that
reaches a
decision is logged: lazy kernels one row per processed epoch (t = samples taken, arm, phase =
epoch index r, count = O, value = the exact epoch mean Φ/O, noisy = μ̃, scale = 1/(ε·O));
``ftnl_kernel`` K rows per noisy max (t, arm j, phase s, count = rows of the epoch, value =
Φ_j, noisy = Φ_j + Lap, scale). The releases of RNM are a noisy *vector*, only Kε-DP
; its white-box release loss exceeds ε by design (the claim is on the argmax).

Rewards are clamped to [0, 1] before use (audit tables are validated there already).

Transcript: τ = samples taken; rec = -1 (regret algorithms recommend nothing; ``dp-se-regret``:
the committed arm); status STOPPED at T = ``horizon``, TRUNCATED at ``limit``.

Defaults (and why). ``means``: the paper's Setting 1 (0.75, 0.625, 0.5, 0.375, 0.25), K = 5;
``horizon`` T = 10^6 (Sec. 6; what ``dpaudit bench`` runs). Audits read the first
``audit_rows`` samples of a run:

* lazy bandits and ``ts-beta``: 32 rows (≤ 256 positions: the search stays exhaustive, every
  row × pattern × base). The initial pulls (rows 0..K−1) feed the release that decides
  J_{K+1} (0.98ε at K = 5 on one event) and later canaries have the same
  shift-to-noise ratio, so 12 rows already give ε_lb ≈ 0.95 for ``lazy-ucb``; but a
  processed reward that is *reused* shows only after its arm's next release and a decision
  after it, which 12 rows rarely contain (``lazy-ucb-reuse``: pass at 12 rows, ε_lb 0.97;
  violation at 32, ε_lb 1.69, seed 1, ε = 1). 32 rows cost 30–50 s per audit on 2 loaded
  cores. Lazy-DP-TS at the paper's bonus constant 3 stays far below ε (μ̄ = 1 early on);
  the claim-space search takes ``bonus`` down to 0.01, where the means decide.
* ``rnm-ftnl`` / ``ftnl``: 4 rows: row 0 is epoch 0 (its noisy max is played in rows 1, 2,
  the largest-loss canary: the change of one row moves the gap by 2 with no averaging), rows
  1, 2 are epoch 1 (whose other row lets the base table set the gap), row 3 shows J^{(1)}.
  Later epochs add nothing: each canary feeds one noisy max whatever the epoch length.
* ``dp-se-regret``: the first elimination epoch (K·R_1 rows) plus one row, like ``dp-se``:
  every action before row K·R_1 is data-independent (arm a in rows a·R_1..(a+1)·R_1 − 1), the
  first data-dependent action is the first one after the first eliminations. R_1 =
  ⌊128·ln(8K/δ)⌋ + 1 (ε ≥ about 0.1) grows only with ln(1/δ): δ = 1/T = 10^-6 gives 11 206 rows
  and a 124–265 s audit (seed 1, ε = 1, 2 cores), δ = 0.01 (``DPSE_AUDIT_RISK``, the δ of
  ``dp-se``'s audit horizon) gives 5 311 rows and about half the time, with the same decision
  structure (one Laplace epoch mean per arm per row block, same shift-to-noise ratio per row).
  The last row only shows whether arm 0 was eliminated, so the informative base table puts
  arm 0 just below the elimination threshold 2(h_1 + c_1) of another arm
  (:func:`~algorithms.adap_tt.baselines.dpse_regret_boundary`: arm 1 on top, the gap two
  noise scales short of the threshold, arm 0 eliminated about 13.5 % of the time): the
  default search audits it (``dpaudit run --algo dp-se-regret --eps 1 --seed 1``: pass,
  ε_lb = 0.72, 31 s). With arm 0 on top no run shows an elimination within these rows, and
  at even odds no event is rare enough to carry a loss of (1 + margin)·ε; that table (the gap
  at the threshold itself, ``threshold-exact``) is a candidate too, for an elimination that
  reads the raw gap (no noise, or one draw shared by the arms' means), which one changed
  reward decides there.
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

from ..adap_tt.baselines import (SE_EPOCH_MEAN, SE_EPS, SE_MAX_STEPS, SE_RISK,
                                 dpse_kernel, dpse_regret_boundary, epoch_length)
from ..kernels import argmax, site_release, site_switch

PAPER = "Hu, Huang, Mehta, Hegde (2021, arXiv:2102.07929)"

# theta layout of lazy_kernel
L_MODE, L_EPS, L_HORIZON, L_FORGET, L_EAGER, L_LOG_SCALE, L_N = range(7)
UCB, DPTS, TS = 0.0, 1.0, 2.0          # theta[L_MODE]
# theta layout of ftnl_kernel
F_SCALE, F_HORIZON, F_FIRST, F_N = range(4)
# theta layout of dpse_regret_kernel: dp-se's four entries, then
R_HORIZON, R_N = 4, 5
DPSE_AUDIT_RISK = 0.01        # dp-se-regret's default δ (module doc: the audit instance)

SETTING_1 = (0.75, 0.625, 0.5, 0.375, 0.25)   # Sec. 6, distinct gaps
SETTING_2 = (0.5, 0.4, 0.4, 0.4, 0.4)         # Sec. 6, equal gaps 0.1
HORIZON = 10 ** 6                              # Sec. 6
BANDIT_ROWS = 32
FULL_ROWS = 4
LOG_BASES = ("e", "2")
RNM_SCALES = ("paper", "corrected")


# ----------------------------------------------------------------------------- helpers

@nb.njit(cache=True, inline="always")
def _clamp01(x: float):
    return 1.0 if x > 1.0 else (0.0 if x < 0.0 else x)


@nb.njit(cache=True, inline="always")
def _pull(rng: np.random.Generator, table: np.ndarray, means: ArrayLike, t: int, a: int):
    """The reward of round t for arm a, clamped to [0, 1].

    Reward of round t (0-based) for arm a, clamped to [0, 1]: ``table[t, a]``,
    or Bernoulli(means[a]) beyond the table (kernel contract).
    """
    if t < table.shape[0]:
        return _clamp01(table[t, a])
    return 1.0 if rng.random() < means[a] else 0.0


@nb.njit(cache=True, inline="always")
def _gamma(rng: np.random.Generator, d: float, c: float):
    """A Gamma(d + 1/3, 1) draw by Marsaglia and Tsang's method.

    A Gamma(d + 1/3, 1) draw (shape ≥ 1) by Marsaglia and Tsang's exact rejection method
    (ACM TOMS 26(3), 2000) with the constants d = shape − 1/3 and c = 1/sqrt(9d) passed in:
    z standard normal, y = c·z > −1, v = (1 + y)^3, u uniform; d·v is accepted iff
    ln u < h = z²/2 + d·(1 − v + ln v).

    Squeeze (accepts without a log; exact since it implies the test): Taylor's theorem with
    Lagrange remainder gives ln(1 + y) ≥ y − y²/2 + y³/3 − y⁴/(4m⁴), m = min(1, 1 + y), and
    with 9dc² = 1 the terms up to y³ cancel in h: h ≥ −(y·z)²/(12m⁴) = L for every d, so
    u < 1 + L ≤ e^L implies acceptance. Its rejection rate is about z⁴/(108d) (d large: ~0;
    the classical squeeze u < 1 − 0.0331·z⁴ rejects ~10 % whatever d, and measured no faster
    at small d). ``tests/algorithms/test_lazy_dp.py`` checks L ≤ h on a grid.
    """
    while True:
        z = rng.standard_normal()
        y = c * z
        if y <= -1.0:
            continue
        t = 1.0 + y
        v = t * t * t
        u = rng.random()
        m = min(t, 1.0)
        m4 = 12.0 * (m * m) * (m * m)
        w = y * z
        if u * m4 < m4 - w * w:
            return d * v
        if math.log(u) < 0.5 * z * z + d * (1.0 - v + math.log(v)):
            return d * v


@nb.njit(cache=True, inline="always")
def _beta(rng: np.random.Generator, a: float, b: float, da: float, ca: float, db: float, cb: float):
    """A Beta(a, b) draw (a, b ≥ 1).

    A Beta(a, b) draw (a, b ≥ 1). ``da, ca, db, cb``: :func:`_gamma`'s constants of the
    two shapes (d = shape − 1/3, c = 1/sqrt(9d); unused when a or b is 1).

    Beta(a, 1) = exp(−E/a) and Beta(1, b) = 1 − exp(−E/b) exactly for E ~ Exp(1) (the law of
    U^{1/a}: P(exp(−E/a) ≤ y) = y^a): one exponential variate (the common Lazy-DP-TS case
    μ̄ ∈ {0, 1}). Otherwise X/(X + Y) with X ~ Gamma(a), Y ~ Gamma(b) independent (the
    definition of the Beta law; numba's ``rng.beta`` draws the same two gammas through
    ``standard_gamma`` calls, ~35 ns against ~7 ns here for large shapes). Returns a float:
    an inlined helper returning the pair (X, X + Y) measured 1.5x slower per step. The
    Python reference of tests/algorithms/test_lazy_dp.py replays this exact sequence of rng calls.
    """
    if a > 1.0 and b > 1.0:
        x = _gamma(rng, da, ca)
        return x / (x + _gamma(rng, db, cb))
    if b == 1.0:
        return math.exp(-rng.standard_exponential() / a)
    return -math.expm1(-rng.standard_exponential() / b)


@nb.njit(cache=True, inline="always")
def _gamma_constants(p: np.ndarray, d: np.ndarray, c: np.ndarray):
    """Update :func:`_gamma`'s constants for the shapes ``p``.

    Update :func:`_gamma`'s constants d = p − 1/3 and c = 1/sqrt(9d) for the shapes ``p``
    (arrays of one length; entries with p ≤ 1 are skipped: Beta(1, b) and Beta(a, 1) need no
    gamma). Lazy-DP-TS's shapes move by O(1/t) per round, so when d moved by at most 1e-4
    relative, c comes from two Newton steps c ← c·(3/2 − x·c²/2), x = 9d, started at the
    previous c: the relative error falls from ≤ 5e-5 to ≤ 1.5·(5e-5)² ≈ 4e-9 to ~2e-17, below
    the rounding of the direct 1/sqrt(9d) (tests check ≤ 4 ulp). Otherwise (a new epoch, a
    clamp, the first round) it is the direct form. Measured: 10 square roots and divisions cost
    ~30 ns per round at K = 5, a quarter of Lazy-DP-TS's step.
    """
    for i in range(p.shape[0]):
        if p[i] <= 1.0:
            continue
        dn = p[i] - 1.0 / 3.0
        x = 9.0 * dn
        ci = c[i]
        if abs(dn - d[i]) <= 1e-4 * d[i]:
            ci = ci * (1.5 - 0.5 * x * ci * ci)
            c[i] = ci * (1.5 - 0.5 * x * ci * ci)
        else:
            c[i] = 1.0 / math.sqrt(x)
        d[i] = dn


# ------------------------------------------------------- bound formulas

def gaps(means: ArrayLike) -> np.ndarray:
    """Δ_j = max μ − μ_j (the analysis' arm 1 is the best arm).

    Args:
        means: the arms' means, in [0, 1].

    Returns:
        Δ_j per arm, float64 (K,).
    """
    m = np.asarray(means, dtype=np.float64)
    return m.max() - m


def sample_complexity(means: ArrayLike, eps: float, T: float, c: float = 24.0) -> np.ndarray:
    """The d_j of Theorems 3 and 5 for every suboptimal arm.

    d_j = ⌈log2(c·ln T/(Δ_j·min{Δ_j, ε}))⌉ for every suboptimal arm (in order): Thm 3 /
    Lemma 19 with c = 24, Thm 5 / Lemma 20 with c = 72 (outer log2, inner ln).

    Args:
        means: the arms' means, in [0, 1].
        eps: ε.
        T: the horizon.
        c: 24 (Thm 3 / Lemma 19) or 72 (Thm 5 / Lemma 20).

    Returns:
        d_j per suboptimal arm, in order.
    """
    d = gaps(means)
    d = d[d > 0]
    return np.ceil(np.log2(c * math.log(T) / (d * np.minimum(d, eps)))).astype(np.int64)


def regret_rate(means: ArrayLike, eps: float, T: float) -> float:
    """Σ_{Δj>0} ln T/min{Δ_j, ε}: the O(·) rate of Theorems 3 and 5.

    Args:
        means: the arms' means, in [0, 1].
        eps: ε.
        T: the horizon.

    Returns:
        The rate.
    """
    d = gaps(means)
    d = d[d > 0]
    return float(np.sum(math.log(T) / np.minimum(d, eps)))


def explicit_first_term(means: ArrayLike, eps: float, T: float, c: float = 24.0) -> float:
    """Σ_j Δ_j·ω^{(d_j+1)} with ω^{(r)} = 2^{r+1} − 1 (Lemma 19's first term).

    Args:
        means: the arms' means, in [0, 1].
        eps: ε.
        T: the horizon.
        c: 24 or 72 (as :func:`sample_complexity`).

    Returns:
        The term.
    """
    d = gaps(means)
    d = d[d > 0]
    dj = sample_complexity(means, eps, T, c)
    return float(np.sum(d * (2.0 ** (dj + 2) - 1.0)))


def thm9_bound(means: ArrayLike, eps: float, tol: float = 1e-9) -> float:
    """Theorem 9's explicit regret bound.

    Theorem 9's explicit bound Σ_ℓ 256(1 + ln|𝒥_ℓ|)/min{2^{ℓ−1}Δ_min, ε} over the gap
    brackets ℓ = ⌊log2(Δ_j/Δ_min)⌋ + 1 (``tol`` puts exact powers of two in the upper one).

    Args:
        means: the arms' means, in [0, 1].
        eps: ε.
        tol: puts exact powers of two in the lower bracket.

    Returns:
        The bound.
    """
    d = gaps(means)
    d = d[d > 0]
    dmin = d.min()
    ell = np.floor(np.log2(d / dmin) + tol).astype(np.int64) + 1
    out = 0.0
    for l_, n in zip(*np.unique(ell, return_counts=True)):
        out += 256.0 * (1.0 + math.log(n)) / min(2.0 ** (l_ - 1) * dmin, eps)
    return out


def thm12_private_lb(K: int, eps: float) -> float:
    """Theorem 12's explicit private term 0.2·0.49·ln K/(10ε) = 0.0098·ln K/ε (App. D.3).

    Args:
        K: arms.
        eps: ε.

    Returns:
        The private term.
    """
    return 0.2 * 0.49 * math.log(K) / (10.0 * eps)


def noisy_max_win(gap: float, K: int, scale: float) -> float:
    """The probability that a leading action wins a Laplace noisy max.

    P(L_a + gap > max_{j≠a} L_j) for K i.i.d. Lap(scale) draws: the probability that an
    action leading K − 1 tied competitors by ``gap`` wins a Laplace noisy max ('s
    first decision of Alg. 1, Alg. 4's RNM). Numerical quadrature (scipy).

    Args:
        gap: the leader's lead.
        K: actions.
        scale: the Laplace scale.

    Returns:
        P(L_a + gap > max_{j≠a} L_j) for K i.i.d. Lap(scale) draws.
    """
    from scipy import integrate, stats   # here: worker processes import the kernel only
    lap = stats.laplace(scale=scale)
    f = lambda x: lap.pdf(x) * lap.cdf(x + gap) ** (K - 1)   # noqa: E731
    lo, hi = -60.0 * scale, 60.0 * scale
    return float(integrate.quad(f, lo, hi, points=sorted({0.0, -gap}), limit=400,
                                epsabs=1e-13, epsrel=1e-11)[0])


# --------------------------------------------------------------------------- bandit kernel

@nb.njit(cache=True)
def lazy_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of Algorithm 1, 3 or 2, or of a lazy-ucb mutant.

    One run of Algorithm 1 (theta[L_MODE] = 0), Algorithm 3 (1) or Algorithm 2 (2), and the
    lazy-ucb mutants (L_FORGET = 0: releases over all rewards so far; L_EAGER = 1: a release
    after every pull). Kernel contract: dpaudit.simulation.simulate; ``table`` (T, K) user table.

    theta (L_* layout): mode, ε, horizon T (STOPPED after T samples), forget, eager,
    log_scale (Lazy-DP-TS's bonus c·log t/(εO) = 3·ln t·log_scale/(εO): log_scale = (c/3) ×
    (1/ln 2 for ``bonus_log=2``, else 1)). ``aux`` unused.
    Returns (τ, -1, status, releases made). Module doc: the algorithms and the release log.

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    K = means.shape[0]
    mode = theta[L_MODE]
    eps = theta[L_EPS]
    m0, m1 = site_switch(theta, 0), site_switch(theta, 1)   # the mutation switch
    T = np.int64(theta[L_HORIZON])
    forget = theta[L_FORGET] == 1.0
    eager = theta[L_EAGER] == 1.0
    log_scale = theta[L_LOG_SCALE]
    n_rec = actions.shape[0]

    wf = np.empty((12, K))           # the run's state in two allocations, not 18 (~1 µs)
    wi = np.zeros((4, K), np.int64)
    mt = wf[0]                       # private means μ̃ (TS: posterior successes S)
    O = wf[1]                        # samples behind μ̃ (TS: pulls)
    c1 = wf[2]                       # sqrt(3/O)
    c2 = wf[3]                       # 3/(ε·O)
    r = wi[0]                        # last processed epoch
    target = wi[1]                   # unprocessed pulls that close the current epoch
    Nn = wi[2]                       # unprocessed pulls
    Phi = wf[4]                      # unprocessed reward sum
    Sall = wf[5]                     # every reward so far (mutants)
    Nall = wi[3]
    pa = wf[6]                       # TS / Lazy-DP-TS: the Beta parameters and their
    pb = wf[7]                       # Marsaglia–Tsang constants (TS: updated on each pull)
    da, ca, db, cb = wf[8], wf[9], wf[10], wf[11]
    d0 = 2.0 / 3.0
    c0 = 1.0 / math.sqrt(9.0 * d0)
    for a in range(K):
        mt[a], O[a], Phi[a], Sall[a], pa[a], pb[a] = 0.0, 1.0, 0.0, 0.0, 1.0, 1.0
        da[a], ca[a], db[a], cb[a] = d0, c0, d0, c0
        target[a] = 2
    n = 0
    nr = 0
    if mode == TS:
        O[:] = 0.0
    else:
        b0 = 1.0 / eps
        for a in range(K):           # initialisation: arm a at round a, epoch 0
            if n >= T:
                return n, -1, STOPPED, nr
            if n >= limit:
                return n, -1, TRUNCATED, nr
            x = _pull(rng, table, means, n, a)
            if n < n_rec:
                actions[n] = a
            n += 1
            mt[a], m0 = site_release(m0, rng, releases, frozen, nr, n, a, 0, 1, x,
                                 rng.laplace(0.0, b0), b0, LAPLACE)
            nr += 1
            Sall[a] = x
            Nall[a] = 1
            c1[a] = math.sqrt(3.0)
            c2[a] = 3.0 / eps
    while True:
        if n >= T:
            return n, -1, STOPPED, nr
        if n >= limit:
            return n, -1, TRUNCATED, nr
        t = n + 1.0                                    # 1-based round
        J = 0
        if mode == UCB:
            lt = math.log(t)
            sl = math.sqrt(lt)
            best = -np.inf
            for a in range(K):
                v = mt[a] + sl * c1[a] + lt * c2[a]
                if v > best:
                    J, best = a, v
        elif mode == DPTS:
            lt = math.log(t) * log_scale
            for a in range(K):
                mb = _clamp01(mt[a] + lt * c2[a])
                pa[a] = mb * O[a] + 1.0
                pb[a] = (1.0 - mb) * O[a] + 1.0
            _gamma_constants(pa, da, ca)
            _gamma_constants(pb, db, cb)
            best = -1.0
            for a in range(K):
                th = _beta(rng, pa[a], pb[a], da[a], ca[a], db[a], cb[a])
                if th > best:
                    J, best = a, th
        else:
            best = -1.0
            for a in range(K):
                th = _beta(rng, pa[a], pb[a], da[a], ca[a], db[a], cb[a])
                if th > best:
                    J, best = a, th
        x = _pull(rng, table, means, n, J)
        if n < n_rec:
            actions[n] = J
        n += 1
        if mode == TS:
            mt[J] += x
            O[J] += 1.0
            pa[J] = mt[J] + 1.0
            pb[J] = O[J] - mt[J] + 1.0
            da[J] = pa[J] - 1.0 / 3.0
            ca[J] = 1.0 / math.sqrt(9.0 * da[J])
            db[J] = pb[J] - 1.0 / 3.0
            cb[J] = 1.0 / math.sqrt(9.0 * db[J])
            continue
        Nn[J] += 1
        Phi[J] += x
        Sall[J] += x
        Nall[J] += 1
        if eager or Nn[J] == target[J]:                # epoch r_J + 1 complete
            r[J] += 1
            if forget:
                cnt, val = Nn[J], Phi[J] / Nn[J]
            else:
                cnt, val = Nall[J], Sall[J] / Nall[J]
            scale = 1.0 / (eps * cnt)
            mt[J], m1 = site_release(m1, rng, releases, frozen, nr, n, J, r[J], cnt, val,
                                 rng.laplace(0.0, scale), scale, LAPLACE)
            nr += 1
            O[J] = cnt
            c1[J] = math.sqrt(3.0 / cnt)
            c2[J] = 3.0 / (eps * cnt)
            Nn[J] = 0
            Phi[J] = 0.0
            target[J] = 2 * target[J]


@nb.njit(cache=True, nogil=True)
def lazy_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
               theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
               keep: int) -> tuple:
    """Cached batch loop of :func:`lazy_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = lazy_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


# ------------------------------------------------------------------- full-information kernel

@nb.njit(cache=True)
def ftnl_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of RNM-FTNL (Algorithm 4) or naive FTNL.

    One run of RNM-FTNL (Algorithm 4; theta[F_SCALE] = 1/ε) or naive FTNL (K/ε). Kernel
    contract: dpaudit.simulation.simulate; ``table`` (T, K) ``full`` table (round t reads the whole
    row).

    theta (F_* layout): Laplace scale of each action's noise, horizon T, the action played in
    round 1. ``aux`` unused. Epoch s ≥ 0 ends after 2^{s+1} − 1 rounds; a complete epoch
    (before T) releases Φ_j + Lap(scale) for every j (logged) and its argmax is played for the
    whole next epoch. Returns (τ, -1, status, releases made).

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    K = means.shape[0]
    scale = theta[F_SCALE]
    m0 = site_switch(theta, 0)                 # the mutation switch
    T = np.int64(theta[F_HORIZON])
    J = np.int64(theta[F_FIRST])
    n_rec = actions.shape[0]
    Phi = np.zeros(K)
    noisy = np.empty(K)
    n = 0
    nr = 0
    s = 0
    start = 0
    end = 1                                    # epoch 0 = round 1
    while True:
        if n >= T:
            return n, -1, STOPPED, nr
        if n >= limit:
            return n, -1, TRUNCATED, nr
        for j in range(K):                     # the whole reward vector is observed
            Phi[j] += _pull(rng, table, means, n, j)
        if n < n_rec:
            actions[n] = J
        n += 1
        if n == end:
            if n < T:                          # a noisy max that is never played is skipped
                for j in range(K):
                    noisy[j], m0 = site_release(m0, rng, releases, frozen, nr, n, j, s, end - start,
                                            Phi[j], rng.laplace(0.0, scale), scale, LAPLACE)
                    nr += 1
                J = argmax(noisy)
            Phi[:] = 0.0
            s += 1
            start = end
            end = 2 * end + 1                  # epoch s: rounds 2^s .. 2^{s+1} − 1


@nb.njit(cache=True, nogil=True)
def ftnl_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
               theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
               keep: int) -> tuple:
    """Cached batch loop of :func:`ftnl_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = ftnl_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


# ------------------------------------------------------------------------- DP-SE (regret)

@nb.njit(cache=True)
def dpse_regret_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                       theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                       releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """DP-SE for regret.

    DP-SE for regret: :func:`baselines.dpse_kernel` (theta[:4], its layout; its cap
    max_steps = T) until one arm survives, then that arm until T = theta[R_HORIZON]. Kernel
    contract: dpaudit.simulation.simulate. Returns (τ, the committed arm or -1, status,
    releases).

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    T = np.int64(theta[R_HORIZON])
    tau, rec, status, nr = dpse_kernel(rng, table, means, theta, aux, min(limit, T), actions,
                                       releases, frozen)
    if status != STOPPED:                      # T or the audit limit reached while eliminating
        return tau, -1, STOPPED if tau >= T else TRUNCATED, nr
    end = min(limit, T)
    for n in range(tau, min(end, actions.shape[0])):   # the commit phase reads nothing
        actions[n] = rec
    return end, rec, STOPPED if end >= T else TRUNCATED, nr


@nb.njit(cache=True, nogil=True)
def dpse_regret_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                      theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int,
                      views: np.ndarray, keep: int) -> tuple:
    """Cached batch loop of :func:`dpse_regret_kernel`.

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = dpse_regret_kernel(rng, table, means, theta, aux, limit, b[0],
                                                 b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


@nb.njit(cache=True, nogil=True)
def lazy_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
               table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
               limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`lazy_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = lazy_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                        pair_frozen(work, 0))
        r = lazy_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                        pair_frozen(work, o[3]))
        pair_record(work, o, r)

@nb.njit(cache=True, nogil=True)
def ftnl_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
               table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
               limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`ftnl_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = ftnl_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                        pair_frozen(work, 0))
        r = ftnl_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                        pair_frozen(work, o[3]))
        pair_record(work, o, r)

@nb.njit(cache=True, nogil=True)
def dpse_regret_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
                      table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
                      limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`dpse_regret_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = dpse_regret_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                               pair_frozen(work, 0))
        r = dpse_regret_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                               pair_frozen(work, o[3]))
        pair_record(work, o, r)


# the cached batch loop of each kernel (dpaudit.simulation.simulate.run_batch reads it)
BATCH_LOOPS = {lazy_kernel: lazy_batch,
               ftnl_kernel: ftnl_batch,
               dpse_regret_kernel: dpse_regret_batch}
# the cached run/replay loop of each kernel (dpaudit.auditing.whitebox.pair_body)
PAIR_LOOPS = {lazy_kernel: lazy_pairs,
              ftnl_kernel: ftnl_pairs,
              dpse_regret_kernel: dpse_regret_pairs}
# each kernel's noise sites (dpaudit.algorithms.mutation): (site, what its noise privatises)
NOISE_SITES = {lazy_kernel: ((0, "each arm's initial sample"),
                             (1, "an arm's phase mean, Lap(1/(ε·count))")),
               ftnl_kernel: ((0, "each arm's score in a phase's noisy max"),),
               dpse_regret_kernel: ((0, "each active arm's epoch mean (DP-SE's)"),)}


# ------------------------------------------------------------------------------- prepare

def _means(p: dict) -> np.ndarray:
    return np.asarray(p["means"], dtype=np.float64)


def _prepare_lazy(mode: float, forget: bool = True, eager: bool = False):
    def prepare(eps: float, p: dict) -> Prepared:
        """Theta for :func:`lazy_kernel` (``eps`` ignored by ``ts-beta``)."""
        e = 1.0 if mode == TS else validate.positive_real(eps, "eps")
        theta = np.zeros(L_N)
        theta[L_MODE], theta[L_EPS], theta[L_HORIZON] = mode, e, p["horizon"]
        theta[L_FORGET] = 1.0 if forget else 0.0
        theta[L_EAGER] = 1.0 if eager else 0.0
        theta[L_LOG_SCALE] = 1.0 / math.log(2.0) if p.get("bonus_log") == "2" else 1.0
        theta[L_LOG_SCALE] *= p.get("bonus", 3.0) / 3.0     # Lazy-DP-TS: c/3 × the printed 3
        return Prepared(theta=theta, aux=np.zeros(0), means=_means(p))
    return prepare


def _prepare_ftnl(naive: bool):
    def prepare(eps: float, p: dict) -> Prepared:
        """Theta for :func:`ftnl_kernel`.

        Theta for :func:`ftnl_kernel`: Lap(1/ε) (RNM-FTNL; 2/ε with
        ``rnm_scale=corrected``) or Lap(K/ε) (naive FTNL).
        """
        e = validate.positive_real(eps, "eps")
        m = _means(p)
        theta = np.zeros(F_N)
        if naive:
            theta[F_SCALE] = m.size / e
        else:
            theta[F_SCALE] = (2.0 if p["rnm_scale"] == "corrected" else 1.0) / e
        theta[F_HORIZON], theta[F_FIRST] = p["horizon"], 0
        return Prepared(theta=theta, aux=np.zeros(0), means=m)
    return prepare


def _risk(p: dict) -> float:
    """δ of dp-se-regret: ``risk`` (None, from Python callers: 1/T)."""
    return 1.0 / p["horizon"] if p.get("risk") is None else p["risk"]


def _prepare_dpse(eps: float, p: dict) -> Prepared:
    """Theta for :func:`dpse_regret_kernel`.

    Theta for :func:`dpse_regret_kernel`: dp-se's (ε, δ = ``risk`` or 1/T, max_steps = T,
    epoch mean "epoch") and T.
    """
    e = validate.positive_real(eps, "eps")
    theta = np.zeros(R_N)
    theta[SE_EPS], theta[SE_RISK], theta[SE_MAX_STEPS] = e, _risk(p), p["horizon"]
    theta[SE_EPOCH_MEAN] = 0.0
    theta[R_HORIZON] = p["horizon"]
    return Prepared(theta=theta, aux=np.zeros(0), means=_means(p))


def dpse_rows(p: dict) -> int:
    """The audit rows of ``dp-se-regret``.

    Audit rows of ``dp-se-regret``: K·R_1 + 1 (epoch 1 of DP-SE and the first row after
    it), R_1 ε-free (as ``dp-se``'s default: valid for ε ≥ about 0.1 at δ = 1/T).

    Args:
        p: the algorithm's parameters.

    Returns:
        K·R_1 + 1.
    """
    K = len(p["means"])
    return int(K * epoch_length(K, 1, math.inf, _risk(p)) + 1)


# ------------------------------------------------------------------------------ registry

AUTHORS = "Hu, Huang, Mehta, Hegde 2021 (arXiv:2102.07929)"
CLAIMS = {"lazy-ucb": f"ε-DP: {AUTHORS}, Thm 2", "lazy-dp-ts": f"ε-DP: {AUTHORS}, Thm 4",
          "rnm-ftnl": f"ε-DP: {AUTHORS}, Thm 8", "ftnl": f"ε-DP: {AUTHORS}, Sec. 5 (Lap(K/ε) "
          "per action, basic composition)",
          "dp-se-regret": "ε-DP: Sajed & Sheffet 2019, DP-SE (the regret baseline of "
                          f"{AUTHORS}, Sec. 6)"}
ANY = "the claims hold for any instance with rewards in [0, 1] and any K"

P_MEANS = Param("means", SETTING_1, "floats", "Bernoulli instance: base tables and rewards "
                "beyond the table (default: Setting 1 of Sec. 6)", low=0.0, high=1.0, min_len=2,
                claim=theorem(ANY, Scale.GENERATED, (2, 6)))
P_HORIZON = Param("horizon", HORIZON, "int", "T: samples per run (what `dpaudit bench` runs; "
                  "the lazy algorithms are anytime and only stop there)", low=1, high=2.0 ** 62,
                  claim=theorem("every horizon T (the algorithms are anytime)", Scale.INT_LOG,
                                (64, 1 << 20)))


def _p_rows(default: int, window: tuple = (16, 256)) -> Param:
    return Param("audit_rows", default, "int", "rows of the audit tables: runs are audited on "
                 "their first min(horizon, audit_rows) samples", low=1, high=1 << 20,
                 claim=theorem("every prefix t <= T of the transcript", Scale.INT_LOG, window))


P_MAX_STEPS = Param("max_steps", 1 << 40, "int", "data-independent cap on samples (runs stop at "
                    "T = horizon first unless this is smaller)", low=1, high=2.0 ** 62)


def _bandit_params(rows: int = BANDIT_ROWS, extra: tuple = ()):
    return (P_MEANS, P_HORIZON, _p_rows(rows), *extra, P_MAX_STEPS)


def audit_rows(p: dict) -> int:
    """Rows of the audit tables: the first min(horizon, audit_rows) samples of a run.

    Args:
        p: the algorithm's parameters.

    Returns:
        The rows.
    """
    return min(p["horizon"], p["audit_rows"])


def _lazy_structure(p: dict) -> list[tuple[int, str]]:
    K = len(p["means"])
    return [(0, "initial pull of arm 0 (its epoch-0 release decides round K+1)"),
            (K - 1, f"initial pull of arm {K - 1}"),
            (K, "first adaptive pull (enters its arm's epoch-1 sum)")]


def _ts_structure(p: dict) -> list[tuple[int, str]]:
    return [(0, "round 1: its reward enters every later posterior of the pulled arm")]


def _full_structure(p: dict) -> list[tuple[int, str]]:
    return [(0, "epoch 0 (round 1): the first noisy max, played in rounds 2-3"),
            (1, "epoch 1 (rounds 2-3): the noisy max played from round 4")]


SPECS: list[AlgorithmSpec] = []   # this module's algorithms (dpaudit.algorithms.registry)

SPECS.append(AlgorithmSpec(
    name="lazy-ucb", title="Anytime-Lazy-UCB (Algorithm 1)", paper=PAPER, model=PrivacyModel.USER,
    private=True, kernel=lazy_kernel, params=_bandit_params(), prepare=_prepare_lazy(UCB),
    structure=_lazy_structure, audit_horizon=audit_rows,
    theorem=CLAIMS["lazy-ucb"],
    description="UCB on lazily refreshed private means: per-arm doubling epochs, each epoch's "
                "fresh reward sum released once with Lap(1/ε); bonus sqrt(3 ln t/O) + "
                "3 ln t/(εO) (Thm 2: ε-DP)"))

SPECS.append(AlgorithmSpec(
    name="lazy-dp-ts", title="Lazy-DP-TS (Algorithm 3)", paper=PAPER, model=PrivacyModel.USER,
    private=True, kernel=lazy_kernel,
    params=_bandit_params(extra=(Param(
        "bonus_log", "e", "choice", "ambiguity option: base of the printed log t in the "
        "bonus 3 log t/(εO) (e: our reading; 2 enlarges it by 1/ln 2)",
        choices=LOG_BASES, claim=option("Algorithm 3: the base of the printed log t")),
        Param("bonus", 3.0, "float", "the constant c of the optimism bonus c log t/(εO) "
              "(paper: 3)", low=0.0, high=1e3,
              claim=proof("c = 3 (Algorithm 3) is the regret analysis's; μ̄ is "
                          "post-processing of the private means, so privacy (Thm 4) holds "
                          "for any c", Scale.LOG, (0.01, 10.0))))),
    prepare=_prepare_lazy(DPTS), structure=_lazy_structure, audit_horizon=audit_rows,
    theorem=CLAIMS["lazy-dp-ts"],
    description="Thompson sampling from Beta(μ̄O+1, (1−μ̄)O+1), μ̄ = clamp(μ̃ + 3 ln t/(εO)), "
                "with Algorithm 1's lazy private means (Thm 4: ε-DP)"))

SPECS.append(AlgorithmSpec(
    name="ts-beta", title="Thompson sampling, Beta(1,1) priors (Algorithm 2, not private)",
    paper=PAPER, model=PrivacyModel.USER, private=False, kernel=lazy_kernel,
    params=_bandit_params(),
    prepare=_prepare_lazy(TS), structure=_ts_structure, audit_horizon=audit_rows,
    description="non-private reference: posteriors over every reward so far (positive control: "
                "must be flagged as a violation)"))

SPECS.append(AlgorithmSpec(
    name="lazy-ucb-reuse", title="Anytime-Lazy-UCB mutant: lazy but not forgetful", paper=PAPER,
    model=PrivacyModel.USER, private=True, kernel=lazy_kernel, params=_bandit_params(),
    prepare=_prepare_lazy(UCB, forget=False), structure=_lazy_structure, audit_horizon=audit_rows,
    mutant_of="lazy-ucb",
    theorem=CLAIMS["lazy-ucb"],
    description="epoch releases over every reward of the arm so far, (S_all + Lap(1/ε))/N_all: "
                "processed observations are reused, so each release composes"))

SPECS.append(AlgorithmSpec(
    name="lazy-ucb-eager", title="Anytime-Lazy-UCB mutant: not lazy, not forgetful",
    paper=PAPER, model=PrivacyModel.USER, private=True, kernel=lazy_kernel, params=_bandit_params(),
    prepare=_prepare_lazy(UCB, forget=False, eager=True), structure=_lazy_structure,
    audit_horizon=audit_rows, mutant_of="lazy-ucb",
    theorem=CLAIMS["lazy-ucb"],
    description="a fresh release after every pull from the running sums, (S_all + "
                "Lap(1/ε))/N_all: every reward enters every later release of its arm"))

SPECS.append(AlgorithmSpec(
    name="rnm-ftnl", title="RNM-FTNL (Algorithm 4, full information)", paper=PAPER,
    model=PrivacyModel.FULL, private=True, kernel=ftnl_kernel,
    params=(P_MEANS, P_HORIZON, _p_rows(FULL_ROWS),
            Param("rnm_scale", "paper", "choice", "Laplace scale of Report Noisy Max: paper = "
                  "1/ε (Thm 8's claim); corrected = 2/ε (needed when a row moves actions in "
                  "opposite directions; not in the paper)", choices=RNM_SCALES,
                  claim=option("Thm 8: the Report Noisy Max scale")),
            P_MAX_STEPS),
    prepare=_prepare_ftnl(False), structure=_full_structure, audit_horizon=audit_rows,
    theorem=CLAIMS["rnm-ftnl"],
    description="global doubling epochs; argmax_j (Φ_j + Lap(1/ε)) of each epoch's reward sums "
                "is played for the whole next epoch (Thm 8 claims ε-DP; see the module note)"))

SPECS.append(AlgorithmSpec(
    name="ftnl", title="Naive FTNL (Sec. 5: Lap(K/ε) per action)", paper=PAPER,
    model=PrivacyModel.FULL,
    private=True, kernel=ftnl_kernel,
    params=(P_MEANS, P_HORIZON, _p_rows(FULL_ROWS), P_MAX_STEPS),
    prepare=_prepare_ftnl(True), structure=_full_structure, audit_horizon=audit_rows,
    theorem=CLAIMS["ftnl"],
    description="RNM-FTNL's epochs with Lap(K/ε) per action: the noisy vector itself is ε-DP "
                "(basic composition)"))

SPECS.append(AlgorithmSpec(
    name="dp-se-regret", title="DP-SE for regret (Sajed & Sheffet 2019; Sec. 6 baseline)",
    paper=PAPER, model=PrivacyModel.USER, private=True, kernel=dpse_regret_kernel,
    params=(P_MEANS, P_HORIZON,
            Param("risk", DPSE_AUDIT_RISK, "float", "confidence δ of the eliminations "
                  "(default 0.01: the audit instance, 5 311 audit rows; the paper's regret "
                  "runs use 1/T, as `dpaudit reproduce hu2021` does)",
                  low=0.0, high=1.0, open_low=True, open_high=True,
                  claim=theorem("DP-SE is ε-DP at every confidence", Scale.LOG, (1e-3, 0.5))),
            _p_rows(1 << 20, (64, 8192)), P_MAX_STEPS),
    prepare=_prepare_dpse, structure=lambda p: [(0, "first sample of arm 0 (epoch 1)")],
    audit_horizon=lambda p: min(p["horizon"], p["audit_rows"], dpse_rows(p)),
    theorem=CLAIMS["dp-se-regret"],
    description="Azize et al. (2023)'s DP-SE kernel (epoch means + Lap(1/(εR_e)), eliminations) until one "
                "arm survives, then that arm until T",
    extra={"boundary_tables": dpse_regret_boundary}))
