"""Linear-bandit building blocks of Chen, Karthik, Chee, Tan (ICLR 2024).

Linear-bandit building blocks of Chen, Karthik, Chee, Tan, "Fixed-Budget
Differentially Private Best Arm Identification", ICLR 2024, arXiv 2401.09073).

Public, data-independent pieces (pure Python/NumPy/SciPy):

* :func:`schedule`: the phase schedule of eqs. (4)–(8): λ, g_i, h_i, s_p, M_1, M, T', in the
  two readings of the ambiguous stage transition: ``"A"`` (literal (7)–(8) with
  ℕ = {1, 2, ...}, the default) and ``"B"`` (Appendix-B compatible: one more stage-1 phase).
* :func:`hardness` (and :func:`h_bai`, :func:`h_pri`, :func:`h_total`): H_BAI, H_pri and H
  of eqs. (14)–(15).
* :func:`load_features`: the ``features`` parameter: the presets ``sec5`` (the Section 5
  instance), ``identity`` (K = d standard basis) and ``collinear`` ('s tight
  construction), or a K × d ``.npy`` / ``.csv`` file.
* :func:`max_det`: a MAX-DET collection (Def. 3.1) of a set of vectors and the coordinates
  α of eq. (12), exhaustively (itertools) or by 1-swap local search.
* :func:`g_optimal_design`: the G-optimal (= D-optimal, Kiefer–Wolfowitz) design used by
  OD-LinBAI / DP-OD, with SciPy (SLSQP for the design, a HiGHS LP for a
  support of at most d(d+1)/2 + 1 points).

Compiled counterparts (numba, used inside the kernels of :mod:`.dp_bai` for phases whose
active set depends on released values): :func:`rank_basis`, :func:`maxdet_exhaustive`,
:func:`maxdet_swap`, :func:`coefficients`, :func:`reduce_coords`, :func:`fw_design`.

Conventions. Every phase works in the *original* coordinates: the
reduction (9) is a change to orthonormal coordinates of the active span, which preserves
inner products, so Gram determinants det(A_S A_Sᵀ) (= DET(S)² in reduced coordinates) and
the coefficients α of (12) are the same in every orthonormal basis (and |det| only changes
by a common factor for a merely orthogonal one). Ranks use a pivoted Gram–Schmidt with
relative tolerance :data:`RANK_TOL`. MAX-DET ties: the lexicographically first subset
(in increasing arm order) whose Gram determinant is ≥ (1 − :data:`DET_TOL`) × the maximum.
"""
from __future__ import annotations

import itertools
import math
import os
import warnings
from dataclasses import dataclass

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from dpaudit.errors import InputError

RANK_TOL = 1e-9          # a residual norm ≤ RANK_TOL × the largest norm counts as 0
DET_TOL = 1e-10          # MAX-DET ties: Gram determinants within this relative tolerance
SWAP_TOL = 1e-9          # 1-swap search: swap while some |α| > 1 + SWAP_TOL
EXHAUSTIVE_MAX = 200_000  # method "auto": exhaustive up to this many subsets, else 1-swap
MAXDET_METHODS = ("auto", "exhaustive", "swap")
CEIL_TOL = 1e-6          # design allocations: ⌈π·m − CEIL_TOL⌉ (solver round-off)

# ------------------------------------------------------------------------------- schedule


@dataclass(frozen=True)
class Schedule:
    """The schedule of eqs. (4)–(8) for K arms, dimension d and budget T.

    ``lam`` = λ (eq. 4, natural log), ``g`` = (g_0, ..., g_{m_g}) (eq. 5, until the first
    g_i = 1 with i ≥ 1), ``h`` = (h_0, h_1, ...) (eq. 6, until the first 0 after h_0),
    ``M1``, ``M`` (eq. 8), ``s`` = (s_0, s_1, ..., s_{M+1}) (eq. 7; s_p = |A_p| and
    s_{M+1} = 1), ``T_prime`` = T' (eq. 8), ``c`` = ⌈d²/4⌉, ``reading`` "A" or "B".
    """

    K: int
    d: int
    T: int
    reading: str
    c: int
    lam: float
    g: tuple
    h: tuple
    M1: int
    M: int
    s: tuple
    T_prime: int

    def phase_pulls(self, p: int, k: int, floor: bool = False) -> int:
        """Pulls per arm in phase p when k arms are pulled.

        Pulls per arm in phase p when k arms are pulled: ⌈T'/(M·k)⌉ (lines 8, 14), or
        ⌊·⌋ with ``floor`` (overrun option ``floor``).

        Args:
            p: the phase (1-based).
            k: arms pulled.
            floor: round down (overrun option ``floor``).

        Returns:
            Pulls per arm.
        """
        q = self.T_prime / (self.M * k)
        return int(math.floor(q)) if floor else int(math.ceil(q))


def schedule(K: int, d: int, T: int, reading: str = "A") -> Schedule:
    """The public, data-independent schedule of DP-BAI (eqs. (4)–(8)).

    λ = inf{β ≥ 2 : β^{ln d} ≥ K − ⌈d²/4⌉} (natural log): 2 if K − c ≤ 1, else
    max(2, (K − c)^{1/ln d}); for d = 1 and K − c ≥ 2 the set is empty, λ = +∞ and h_1 is
    read as 0 (h_i = max(⌈(h_{i−1} + 1)/λ⌉ − 1, 0)). Reading "A" (default):
    M_1 = min{i ≥ 1 : h_i = 0}; reading "B": M_1 = min{i ≥ 1 : h_{i−1} = 0}. Both:
    M = M_1 + min{i ≥ 1 : g_i = 1} − 1, s_p = g_0 + h_{p−1} (p ≤ M_1), g_{p−M_1}
    (M_1 < p ≤ M + 1), T' = T − M_1·d − (M − M_1)·c. T' may be ≤ 0 (callers
    reject it). Raises ValueError for K < 1, d < 1 or an unknown reading.

    Args:
        K: arms.
        d: the features' dimension.
        T: the budget.
        reading: ``A`` or ``B`` (the stage-transition reading).

    Returns:
        The :class:`Schedule`: λ, g, h, s, M_1, M, T'.
    """
    if K < 1 or d < 1:
        raise ValueError(f"schedule needs K >= 1 and d >= 1, got K={K}, d={d}")
    if reading not in ("A", "B"):
        raise ValueError(f"reading must be 'A' or 'B', got {reading!r}")
    c = (d * d + 3) // 4
    g = [min(K, c)]
    h = [max(K - c, 0)]
    if K - c <= 1:
        lam = 2.0
    elif d == 1:
        lam = math.inf
    else:
        lam = max(2.0, (K - c) ** (1.0 / math.log(d)))
    while len(h) < 2 or h[-1] != 0:
        h.append(max(math.ceil((h[-1] + 1) / lam) - 1, 0))
    while len(g) < 2 or g[-1] != 1:
        g.append(math.ceil(g[-1] / 2))
    if reading == "A":
        M1 = next(i for i in range(1, len(h)) if h[i] == 0)
    else:
        M1 = next(i for i in range(1, len(h) + 1) if h[i - 1] == 0)
    m_g = len(g) - 1
    M = M1 + m_g - 1
    s = [g[0] + h[0]] + [g[0] + h[p - 1] for p in range(1, M1 + 1)] + \
        [g[p - M1] for p in range(M1 + 1, M + 2)]
    T_prime = T - M1 * d - (M - M1) * c
    return Schedule(K=K, d=d, T=T, reading=reading, c=c, lam=lam, g=tuple(g), h=tuple(h),
                    M1=M1, M=M, s=tuple(s), T_prime=T_prime)


def hardness(means: ArrayLike, d: int, eps: float) -> dict:
    """H_BAI, H_pri and H = H_BAI + H_pri of eqs. (14)–(15).

    Gaps Δ_i = μ_{i*} − μ_i sorted ascending (Δ_(1) = 0), m = min(d², K) (at least 2, so
    that d = 1 still has a term): H_BAI = max_{2≤i≤m} i/Δ_(i)², H_pri = (1/ε)·max_{2≤i≤m}
    i/Δ_(i). A tie for the best arm gives +∞. Returns {"H_BAI", "H_pri", "H", "m"}.

    Args:
        means: the arms' means, in [0, 1].
        d: the features' dimension.
        eps: ε.

    Returns:
        {"H_BAI", "H_pri", "H"}.
    """
    mu = np.asarray(means, dtype=np.float64)
    gaps = np.sort(mu.max() - mu)
    m = max(2, min(d * d, mu.size))
    i = np.arange(2, m + 1)
    g = gaps[1:m]
    with np.errstate(divide="ignore"):
        h_bai = float(np.max(i / g ** 2))
        h_pri = float(np.max(i / g)) / eps
    return {"H_BAI": h_bai, "H_pri": h_pri, "H": h_bai + h_pri, "m": int(m)}



def thm42_bound(T_prime: int, M: int, H: float) -> float:
    """The error bound of Theorem 4.2, eq. (16).

    Chen et al. (2024) Thm 4.2, eq. (16): P(Î_T ≠ i*) ≤ exp(−T'/(65·M·H)) "for all sufficiently large
    T" (vacuous at practical T: on the Sec. 5 instance 0.9961 at T = 500, ε = 0.1,
    worked example (a)). ``T_prime``, ``M``: the schedule's T' and M (:func:`schedule`); ``H``: eq. (15)
    (:func:`hardness`). Returns a probability in (0, 1].

    Args:
        T_prime: the schedule's T'.
        M: the schedule's M.
        H: the hardness H.

    Returns:
        A probability in (0, 1].
    """
    return math.exp(-T_prime / (65.0 * M * H))

def h_bai(means: ArrayLike, d: int) -> float:
    """H_BAI = max_{2≤i≤min(d², K)} i/Δ_(i)² (eq. 15; :func:`hardness`).

    Args:
        means: the arms' means, in [0, 1].
        d: the features' dimension.

    Returns:
        H_BAI.
    """
    return hardness(means, d, 1.0)["H_BAI"]


def h_pri(means: ArrayLike, d: int, eps: float) -> float:
    """H_pri = (1/ε)·max_{2≤i≤min(d², K)} i/Δ_(i) (eq. 15; :func:`hardness`).

    Args:
        means: the arms' means, in [0, 1].
        d: the features' dimension.
        eps: ε.

    Returns:
        H_pri.
    """
    return hardness(means, d, eps)["H_pri"]


def h_total(means: ArrayLike, d: int, eps: float) -> float:
    """H = H_BAI + H_pri (eq. 14; :func:`hardness`).

    Args:
        means: the arms' means, in [0, 1].
        d: the features' dimension.
        eps: ε.

    Returns:
        H.
    """
    return hardness(means, d, eps)["H"]


# ------------------------------------------------------------------------------- features

SEC5_THETA = (0.045, 0.5)


def sec5_features() -> tuple[np.ndarray, np.ndarray]:
    """The Section 5 instance.

    The Section 5 instance: K = 30, d = 2, a_1 = [0, 1], a_2 = [0, 0.9], a_3 = [10, 0],
    a_i = [1, ω_i] (i = 4..30) with ω = ``default_rng(0).uniform(0, 0.8, size=27)``
    ((a); the paper gives no seed), θ* = [0.045, 0.5]. Returns (A, θ*).
    """
    omega = np.random.default_rng(0).uniform(0.0, 0.8, size=27)
    A = np.vstack([[0.0, 1.0], [0.0, 0.9], [10.0, 0.0], np.column_stack([np.ones(27), omega])])
    return A, np.asarray(SEC5_THETA)


def collinear_features() -> tuple[np.ndarray, np.ndarray]:
    """The tight construction of DP-OD's finding.

    The tight construction of DP-OD's finding: a_1 = [1, 0], a_2 = [0.5, 0], a_3 = [0.25, 0]
    (collinear, d_1 = 1, B_1 = {1}); θ* = [0.8, 0] (means 0.8, 0.4, 0.2: only the base tables
    use them). On the all-zero table, changing x_{1,1} moves P(phase 2 starts with arm 2)
    from 1/2 to e^{−ε}/2: a privacy loss of exactly ε.
    """
    return np.array([[1.0, 0.0], [0.5, 0.0], [0.25, 0.0]]), np.array([0.8, 0.0])


PRESETS = ("sec5", "identity", "collinear")


def _rows(text: str) -> np.ndarray:
    """The matrix written ``a11,a12;a21,a22``.

    The matrix written ``a11,a12;a21,a22`` (rows split by ';', entries by ','); InputError
    for a non-number or rows of unequal length.
    """
    try:
        rows = [[float(x) for x in row.split(",")] for row in text.split(";")]
    except ValueError:
        raise InputError(f"features={text} is not valid: expected rows of numbers "
                         "'a11,a12;a21,a22', a preset or a .npy/.csv file") from None
    if len({len(r) for r in rows}) != 1:
        raise InputError(f"features={text} has rows of unequal length: expected a K x d "
                         "matrix")
    return np.array(rows, dtype=np.float64)


def load_features(text: str, means: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The features and means of the ``features`` and ``means`` parameters.

    (features K × d, means K) for the ``features`` parameter ``text`` and the ``means``
    parameter (None: derived from the preset's θ*, μ_i = a_iᵀθ*).

    ``text``: ``sec5``, ``identity`` (K = d = len(means): needs ``means``), ``collinear``,
    the rows of a K × d matrix written ``a11,a12;a21,a22`` (what
    :func:`dpaudit.algorithms.spec.matrix_text` makes of an array; needs ``means``), or the
    path of a ``.npy`` / ``.csv`` file holding a K × d matrix (needs ``means``). Raises
    :class:`InputError` (one line naming the bad value) for an unknown preset, an unreadable
    or malformed file, non-finite or all-zero features, K < 2, or means of the wrong length.

    Args:
        text: the matrix as text.
        means: the ``means`` parameter (None: derived from the preset's θ*).

    Returns:
        (features (K, d), means (K,)).
    """
    text = str(text).strip()
    theta = None
    if text == "sec5":
        A, theta = sec5_features()
    elif text == "collinear":
        A, theta = collinear_features()
    elif text == "identity":
        if means is None:
            raise InputError("features=identity needs means (one per arm; K = d = len(means))")
        A = np.eye(len(means))
    elif not text.endswith((".npy", ".csv")) and ("," in text or ";" in text):
        A = _rows(text)
    elif text.endswith((".npy", ".csv")):
        if not os.path.isfile(text):
            raise InputError(f"features={text} is not a file (expected a preset "
                             f"{', '.join(PRESETS)} or a .npy/.csv file)")
        try:
            with warnings.catch_warnings():       # an empty file: our one line, not numpy's
                warnings.simplefilter("ignore", UserWarning)
                A = (np.load(text, allow_pickle=False) if text.endswith(".npy")
                     else np.loadtxt(text, delimiter=",", ndmin=2))
            A = np.asarray(A, dtype=np.float64)
        except (ValueError, OSError) as e:
            raise InputError(f"features={text} cannot be read as a numeric matrix ({e})")
    else:
        raise InputError(f"features={text!r} is not valid: expected a preset "
                         f"({', '.join(PRESETS)}) or a path ending in .npy or .csv")
    if A.ndim != 2 or A.shape[0] < 2 or A.shape[1] < 1:
        raise InputError(f"features={text} has shape {A.shape}: expected a K x d matrix with "
                         "K >= 2 arms and d >= 1")
    if not np.isfinite(A).all():
        raise InputError(f"features={text} has a non-finite entry")
    if not np.any(A):
        raise InputError(f"features={text} is all zeros: the arms span nothing")
    if means is None:
        if theta is None:
            raise InputError(f"features={text} needs means (one per arm, K = {A.shape[0]})")
        mu = A @ theta
    else:
        mu = np.asarray(means, dtype=np.float64)
        if mu.size != A.shape[0]:
            raise InputError(f"means has {mu.size} values but features={text} has "
                             f"K = {A.shape[0]} arms")
    return np.ascontiguousarray(A), np.ascontiguousarray(mu)


# ----------------------------------------------------------------- compiled linear algebra


@nb.njit(cache=True)
def _gram_det(F: np.ndarray, idx: np.ndarray, k: int):
    """det(A_S A_Sᵀ) of the rows F[idx[:k]] (Gaussian elimination with partial pivoting)."""
    G = np.empty((k, k))
    for i in range(k):
        for j in range(i + 1):
            s = 0.0
            for c in range(F.shape[1]):
                s += F[idx[i], c] * F[idx[j], c]
            G[i, j] = s
            G[j, i] = s
    det = 1.0
    for c in range(k):
        piv = c
        for r in range(c + 1, k):
            if abs(G[r, c]) > abs(G[piv, c]):
                piv = r
        if G[piv, c] == 0.0:
            return 0.0
        if piv != c:
            for j in range(k):
                G[c, j], G[piv, j] = G[piv, j], G[c, j]
            det = -det
        det *= G[c, c]
        for r in range(c + 1, k):
            f = G[r, c] / G[c, c]
            for j in range(c, k):
                G[r, j] -= f * G[c, j]
    return abs(det)


@nb.njit(cache=True)
def solve_small(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A x = b for a small nonsingular A.

    X with A x = b for a small nonsingular A (Gaussian elimination with partial pivoting;
    no LAPACK call, whose overhead dominates for the 2 x 2 systems of the kernels). A and b
    are not modified.

    Args:
        A: a small nonsingular matrix.
        b: the right-hand side.

    Returns:
        x.
    """
    k = A.shape[0]
    M = A.copy()
    x = b.copy()
    for c in range(k):
        piv = c
        for r in range(c + 1, k):
            if abs(M[r, c]) > abs(M[piv, c]):
                piv = r
        if piv != c:
            for j in range(k):
                M[c, j], M[piv, j] = M[piv, j], M[c, j]
            x[c], x[piv] = x[piv], x[c]
        for r in range(c + 1, k):
            f = M[r, c] / M[c, c]
            for j in range(c, k):
                M[r, j] -= f * M[c, j]
            x[r] -= f * x[c]
    for c in range(k - 1, -1, -1):
        s = x[c]
        for j in range(c + 1, k):
            s -= M[c, j] * x[j]
        x[c] = s / M[c, c]
    return x


@nb.njit(cache=True)
def rank_basis(F: np.ndarray, act: np.ndarray, n_act: int) -> tuple:
    """The rank of some rows and a greedy basis of them.

    Rank of the rows F[act[:n_act]] and a greedy basis (pivoted Gram–Schmidt: the row with
    the largest residual norm first, lowest position on ties), as positions into ``act``.
    A residual norm ≤ RANK_TOL × the largest row norm counts as 0.

    Args:
        F: the features, (K, d) float64.
        act: positions of the active arms.
        n_act: active arms.

    Returns:
        (rank, the basis's positions into ``act``).
    """
    d = F.shape[1]
    R = np.empty((n_act, d))
    norm2 = np.empty(n_act)
    top = 0.0
    for i in range(n_act):
        s = 0.0
        for c in range(d):
            R[i, c] = F[act[i], c]
            s += R[i, c] * R[i, c]
        norm2[i] = s
        top = max(top, s)
    basis = np.empty(min(n_act, d), np.int64)
    used = np.zeros(n_act, np.bool_)
    r = 0
    thr = (RANK_TOL * RANK_TOL) * top
    while r < basis.shape[0]:
        j = -1
        for i in range(n_act):
            if not used[i] and (j < 0 or norm2[i] > norm2[j]):
                j = i
        if j < 0 or not norm2[j] > thr:
            break
        used[j] = True
        basis[r] = j
        r += 1
        nq = math.sqrt(norm2[j])
        q = R[j] / nq
        for i in range(n_act):
            if used[i]:
                continue
            dot = 0.0
            for c in range(d):
                dot += R[i, c] * q[c]
            s = 0.0
            for c in range(d):
                R[i, c] -= dot * q[c]
                s += R[i, c] * R[i, c]
            norm2[i] = s
    return r, basis[:r].copy()


@nb.njit(cache=True)
def n_subsets(n: int, k: int) -> int:
    """C(n, k) as a float (no overflow).

    Args:
        n: items.
        k: chosen.

    Returns:
        C(n, k) as a float.
    """
    out = 1.0
    for i in range(k):
        out = out * (n - i) / (i + 1)
    return out


@nb.njit(cache=True)
def maxdet_exhaustive(F: np.ndarray, act: np.ndarray, n_act: int, k: int) -> np.ndarray:
    """A MAX-DET collection by exhaustive search.

    MAX-DET collection of the rows F[act[:n_act]] by exhaustive search over the C(n_act, k)
    subsets in lexicographic order: the first whose Gram determinant is ≥ (1 − DET_TOL) ×
    the maximum. Returns positions into ``act`` (increasing).

    Args:
        F: the features, (K, d) float64.
        act: positions of the active arms.
        n_act: active arms.
        k: the rank.

    Returns:
        Positions into ``act`` (increasing).
    """
    comb = np.arange(k)
    idx = np.empty(k, np.int64)
    best = 0.0
    for _pass in range(2):
        for i in range(k):
            comb[i] = i
        while True:
            for i in range(k):
                idx[i] = act[comb[i]]
            v = _gram_det(F, idx, k)
            if _pass == 0:
                if v > best:
                    best = v
            elif v >= (1.0 - DET_TOL) * best:
                return comb.copy()
            j = k - 1
            while j >= 0 and comb[j] == n_act - k + j:
                j -= 1
            if j < 0:
                break
            comb[j] += 1
            for i in range(j + 1, k):
                comb[i] = comb[i - 1] + 1
    return comb.copy()


@nb.njit(cache=True)
def coefficients(F: np.ndarray, act: np.ndarray, n_act: int, B: np.ndarray) -> np.ndarray:
    """The coefficients α of eq. (12).

    α of eq. (12): row i (position in ``act``) solves a_i = Σ_j α_{i,j} a_{act[B[j]]}
    (Gram system in original coordinates; exact for a_i in the span of the basis).

    Args:
        F: the features, (K, d) float64.
        act: positions of the active arms.
        n_act: active arms.
        B: positions into ``act`` of the basis.

    Returns:
        α, shape (n_act, k).
    """
    k = B.shape[0]
    d = F.shape[1]
    G = np.empty((k, k))
    for i in range(k):
        for j in range(k):
            s = 0.0
            for c in range(d):
                s += F[act[B[i]], c] * F[act[B[j]], c]
            G[i, j] = s
    rhs = np.empty((k, n_act))
    for j in range(k):
        for i in range(n_act):
            s = 0.0
            for c in range(d):
                s += F[act[B[j]], c] * F[act[i], c]
            rhs[j, i] = s
    return np.ascontiguousarray(np.linalg.solve(G, rhs).T)


@nb.njit(cache=True)
def maxdet_swap(F: np.ndarray, act: np.ndarray, n_act: int, start: np.ndarray) -> np.ndarray:
    """A MAX-DET collection by 1-swap local search.

    1-swap local search for a MAX-DET collection from the basis ``start`` (positions into
    ``act``): while some arm z has a coordinate |α_{z,j}| > 1 + SWAP_TOL, replace basis member
    j by z (the swap multiplies |det| by |α_{z,j}|; the largest such swap, lowest position on
    ties). At the end every |α| ≤ 1 + SWAP_TOL, which is all Lemma G.1's proof uses.
    Returns positions into ``act`` (increasing).

    Args:
        F: the features, (K, d) float64.
        act: positions of the active arms.
        n_act: active arms.
        start: the starting basis.

    Returns:
        Positions into ``act`` (increasing).
    """
    B = np.sort(start.copy())
    k = B.shape[0]
    for _ in range(100 * (n_act + 1) * (k + 1)):
        alpha = coefficients(F, act, n_act, B)
        bi, bj, bv = -1, -1, 1.0 + SWAP_TOL
        for i in range(n_act):
            for j in range(k):
                if abs(alpha[i, j]) > bv:
                    bi, bj, bv = i, j, abs(alpha[i, j])
        if bi < 0:
            break
        B[bj] = bi
        B = np.sort(B)
    return B


@nb.njit(cache=True)
def maxdet(F: np.ndarray, act: np.ndarray, n_act: int, k: int, method: int,
           exhaustive_max: int) -> tuple:
    """A MAX-DET collection of rows of rank k.

    MAX-DET collection of the rows F[act[:n_act]] of rank k (method 0 auto: exhaustive if
    C(n_act, k) ≤ ``exhaustive_max``, else 1-swap; 1 exhaustive; 2 1-swap from the greedy
    basis). Returns (positions into ``act``, α (n_act × k)).

    Args:
        F: the features, (K, d) float64.
        act: positions of the active arms.
        n_act: active arms.
        k: the rank.
        method: 0 auto, 1 exhaustive, 2 1-swap.
        exhaustive_max: subsets at most for the exhaustive search.

    Returns:
        (positions into ``act``, α (n_act × k)).
    """
    if method == 1 or (method == 0 and n_subsets(n_act, k) <= exhaustive_max):
        B = maxdet_exhaustive(F, act, n_act, k)
    else:
        _, start = rank_basis(F, act, n_act)
        B = maxdet_swap(F, act, n_act, start)
    return B, coefficients(F, act, n_act, B)


@nb.njit(cache=True)
def reduce_coords(X: np.ndarray) -> tuple:
    """The dimensionality reduction of OD-LinBAI.

    Dimensionality reduction of OD-LinBAI: (rank, coordinates). If the rank r of the rows
    of X (n × k; NumPy's matrix_rank tolerance) is below k, the rows' coordinates in the top-r
    right singular vectors (orthonormal), else X itself.

    Args:
        X: the rows (n × k).

    Returns:
        (rank, coordinates).
    """
    n, k = X.shape
    _, sv, vt = np.linalg.svd(X, full_matrices=False)
    tol = sv[0] * max(n, k) * np.finfo(np.float64).eps
    r = 0
    for v in sv:
        if v > tol:
            r += 1
    if r == k:
        return r, X.copy()
    return r, np.ascontiguousarray(X @ np.ascontiguousarray(vt[:r].T))


@nb.njit(cache=True)
def fw_design(X: np.ndarray, iters: int, tol: float) -> np.ndarray:
    """An approximate G-optimal design by Frank–Wolfe.

    Approximate G-optimal design on the rows of X (n × k, rank k) by Frank–Wolfe
    (Fedorov–Wynn steps, exact line search), stopped when max_a aᵀV⁻¹a ≤ k(1 + tol); the
    support is then cut to the k(k+1)/2 largest weights (Kiefer–Wolfowitz) and renormalised.
    Exact (uniform) when n = k.

    Args:
        X: the rows (n × k).
        iters: iterations at most.
        tol: the stopping tolerance.

    Returns:
        The weights on the rows (simplex).
    """
    n, k = X.shape
    w = np.full(n, 1.0 / n)
    if n == k:
        return w
    for _ in range(iters):
        V = np.zeros((k, k))
        for i in range(n):
            for a in range(k):
                for b in range(k):
                    V[a, b] += w[i] * X[i, a] * X[i, b]
        Vi = np.linalg.inv(V)
        j, gj = 0, -1.0
        for i in range(n):
            g = X[i] @ Vi @ X[i]
            if g > gj:
                j, gj = i, g
        if gj <= k * (1.0 + tol):
            break
        step = (gj / k - 1.0) / (gj - 1.0)
        w *= 1.0 - step
        w[j] += step
    cap = k * (k + 1) // 2
    if n > cap:
        order = np.argsort(-w, kind="mergesort")
        for i in order[cap:]:
            w[i] = 0.0
    return w / w.sum()


# ------------------------------------------------------------------------ Python versions


def _gram_dets(F: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """Gram determinants det(A_S A_Sᵀ) of every row subset (vectorised NumPy)."""
    A = F[subsets]                                     # (n_sub, k, d)
    return np.abs(np.linalg.det(A @ np.swapaxes(A, 1, 2)))


def max_det(F: np.ndarray, method: str = "auto", exhaustive_max: int = EXHAUSTIVE_MAX) -> dict:
    """MAX-DET collection (Def. 3.1) of the rows of F (n × d) in their span, and α of (12).

    Returns {"rank": d', "B": sorted row indices of the collection (|B| = d'), "alpha":
    (n × d') coordinates of every row in B, "det": DET(B) (the volume sqrt(det(A_B A_Bᵀ)),
    equal to |det| in any orthonormal basis of the span), "method": "exhaustive" | "swap",
    "subsets": subsets examined}. ``method``: ``auto`` (exhaustive if C(n, d') ≤
    ``exhaustive_max``, else 1-swap), ``exhaustive`` (itertools, lexicographically first
    maximiser within DET_TOL) or ``swap`` (1-swap local search from the greedy basis).

    Args:
        F: the features, (K, d) float64.
        method: ``auto``, ``exhaustive`` or ``swap``.
        exhaustive_max: subsets at most for the exhaustive search.

    Returns:
        The collection and α.
    """
    F = np.ascontiguousarray(F, dtype=np.float64)
    n = F.shape[0]
    act = np.arange(n, dtype=np.int64)
    k, start = rank_basis(F, act, n)
    if k == 0:
        raise ValueError("max_det: every vector is zero")
    n_sub = math.comb(n, k)
    if method == "exhaustive" or (method == "auto" and n_sub <= exhaustive_max):
        subsets = np.array(list(itertools.combinations(range(n), k)), dtype=np.int64)
        dets = np.concatenate([_gram_dets(F, subsets[i:i + 65536])
                               for i in range(0, len(subsets), 65536)])
        B = subsets[int(np.flatnonzero(dets >= (1.0 - DET_TOL) * dets.max())[0])]
        used = "exhaustive"
    elif method in ("auto", "swap"):
        B = start.copy()
        n_sub = 0
        while True:
            n_sub += 1
            alpha = _alpha(F, np.sort(B))
            B = np.sort(B)
            i, j = np.unravel_index(np.argmax(np.abs(alpha)), alpha.shape)
            if abs(alpha[i, j]) <= 1.0 + SWAP_TOL:
                break
            B[j] = i
        used = "swap"
    else:
        raise ValueError(f"method must be one of {MAXDET_METHODS}, got {method!r}")
    B = np.sort(np.asarray(B, dtype=np.int64))
    vol = math.sqrt(max(float(np.linalg.det(F[B] @ F[B].T)), 0.0))
    return {"rank": int(k), "B": B, "alpha": _alpha(F, B), "det": vol, "method": used,
            "subsets": int(n_sub)}


def _alpha(F: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Coordinates of every row of F in the rows F[B] (Gram system)."""
    G = F[B] @ F[B].T
    return np.linalg.solve(G, F[B] @ F.T).T


def g_optimal_design(X: np.ndarray) -> np.ndarray:
    """A G-optimal design on the rows of X.

    G-optimal design (= D-optimal by Kiefer–Wolfowitz) on the rows of X (n × k, rank k):
    weights π on the simplex minimising max_a aᵀV(π)⁻¹a, V(π) = Σ π_a a aᵀ.

    SciPy: SLSQP maximises ln det V(π) on the simplex; a HiGHS LP then finds a basic
    (vertex) solution with the same V, i.e. a support of at most k(k+1)/2 + 1 points
    (approximate designs leave many tiny weights, each of which ⌈π·m⌉ would turn into a
    pull: note); weights below 1e-9 are dropped and the rest renormalised.
    n = k: the uniform design (exact). Raises ValueError if X has rank < k.

    Args:
        X: the rows (n × k).

    Returns:
        The weights π (simplex).
    """
    from scipy.optimize import linprog, minimize   # here: workers import the kernels only

    X = np.asarray(X, dtype=np.float64)
    n, k = X.shape
    if np.linalg.matrix_rank(X) < k:
        raise ValueError("g_optimal_design: the vectors do not span R^k")
    if n == k:
        return np.full(n, 1.0 / n)
    outer = np.einsum("ia,ib->iab", X, X)

    def f(w: np.ndarray):
        sign, logdet = np.linalg.slogdet(np.tensordot(w, outer, 1))
        return -logdet if sign > 0 else 1e300

    def grad(w: np.ndarray):
        Vi = np.linalg.inv(np.tensordot(w, outer, 1))
        return -np.einsum("ia,ab,ib->i", X, Vi, X)

    res = minimize(f, np.full(n, 1.0 / n), jac=grad, method="SLSQP",
                   bounds=[(0.0, 1.0)] * n,
                   constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1.0,
                                 "jac": lambda w: np.ones(n)}],
                   options={"ftol": 1e-12, "maxiter": 1000})
    w = np.clip(res.x, 0.0, None)
    w /= w.sum()
    V = np.tensordot(w, outer, 1)
    iu = np.triu_indices(k)
    A_eq = np.vstack([outer[:, iu[0], iu[1]].T, np.ones((1, n))])
    b_eq = np.concatenate([V[iu], [1.0]])
    lp = linprog(np.zeros(n), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs-ds")
    if lp.status == 0:
        w = np.clip(lp.x, 0.0, None)
    w[w < 1e-9] = 0.0
    return w / w.sum()


def allocation(pi: np.ndarray, m: float) -> np.ndarray:
    """Pulls per arm of a design.

    Pulls ⌈π_a·m⌉ per arm of a design (π_a = 0: none), with a CEIL_TOL guard against
    solver round-off (an exact ½ of an even m must not become one extra pull).

    Args:
        pi: the design's weights.
        m: the pulls to share.

    Returns:
        Pulls per arm (int64).
    """
    out = np.ceil(np.asarray(pi) * m - CEIL_TOL).astype(np.int64)
    out[np.asarray(pi) <= 0] = 0
    return np.maximum(out, 0)
