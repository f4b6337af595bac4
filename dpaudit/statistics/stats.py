"""Exact binomial statistics for privacy-loss bounds.

Clopper–Pearson bounds are beta quantiles (scipy's ``beta.ppf``/``beta.isf``: the one-sided
bounds of statsmodels' ``proportion_confint(method="beta")``, each computed alone). A
privacy-loss lower bound for an event S measured on independent runs,

    ε_lb = ln( CP_lower(k_num, n_num; α/2) / CP_upper(k_den, n_den; α/2) ),

holds with probability ≥ 1 − α (union bound over the two one-sided bounds) for any event fixed
before the measurement runs were drawn. It is clipped at 0 (the privacy loss of a pair of
distributions is ≥ 0).

(ε, δ) claims: the mechanism violates (ε, δ)-DP on S when P_num(S) − e^ε·P_den(S) > δ, i.e. when
the *δ-loss* ln((P_num(S) − δ)/P_den(S)) exceeds ε. Its lower bound replaces CP_lower(k_num) by
CP_lower(k_num) − δ; with δ = 0 it is the pure-DP bound above.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.stats import beta, binom, norm


def cp_lower(k: ArrayLike, n: ArrayLike, alpha: float) -> np.ndarray:
    """One-sided (1 − α) exact Clopper–Pearson lower bound on a binomial proportion.

    Args:
        k: successes, scalar or array; non-integer values interpolate (used only for
            *predicted* bounds).
        n: trials (≥ 1), broadcast against ``k``.
        alpha: the one-sided error, in (0, 1).

    Returns:
        float64 array of ``k``'s shape (0-d for scalars), in [0, 1]; 0 where k = 0.
    """
    k = np.asarray(k, dtype=float)
    return np.where(k > 0, beta.ppf(alpha, k, n - k + 1), 0.0)


def cp_upper(k: ArrayLike, n: ArrayLike, alpha: float) -> np.ndarray:
    """One-sided (1 − α) exact Clopper–Pearson upper bound on a binomial proportion.

    Args:
        k: successes, scalar or array.
        n: trials (≥ 1), broadcast against ``k``.
        alpha: the one-sided error, in (0, 1).

    Returns:
        float64 array of ``k``'s shape, in [0, 1]; 1 where k = n.
    """
    k = np.asarray(k, dtype=float)
    return np.where(k < n, beta.isf(alpha, k + 1, n - k), 1.0)


def mean_lower_bound(values: ArrayLike, alpha: float) -> float:
    """One-sided (1 − α) lower confidence bound on the mean of a nonnegative random variable.

    From n independent draws: with probability ≥ 1 − α the survival function S(c) = P(X ≥ c)
    is nowhere more than λ = √(ln(1/α)/(2n)) below the empirical one Ŝ (the one-sided
    Dvoretzky–Kiefer–Wolfowitz inequality with Massart's constant, Massart 1990, valid for
    α ≤ 1/2), so E[X] = ∫ S(c) dc ≥ ∫ max(0, Ŝ(c) − λ) dc for every distribution on [0, ∞):
    the empirical mean with mass λ taken from the largest draws. No bound on X is needed.

    Args:
        values: float (n,) draws, n ≥ 1, each ≥ 0 and finite.
        alpha: the one-sided error, in (0, 1/2].

    Returns:
        The lower bound (≥ 0, ≤ the empirical mean).

    Raises:
        ValueError: no draw, a negative or non-finite draw, or α outside (0, 1/2].
    """
    x = np.sort(np.asarray(values, dtype=float).ravel())[::-1]
    if x.size == 0 or not np.all(np.isfinite(x)) or x[-1] < 0:
        raise ValueError(f"values: expected n >= 1 finite draws >= 0, got {x.size} draws "
                         f"from {x.min(initial=np.inf)} to {x.max(initial=-np.inf)}")
    if not 0 < alpha <= 0.5:
        raise ValueError(f"alpha={alpha}: expected in (0, 0.5]")
    lam = np.sqrt(np.log(1.0 / alpha) / (2.0 * x.size))
    steps = x - np.append(x[1:], 0.0)                   # Ŝ = k/n on (x_(k+1), x_(k)]
    share = np.arange(1, x.size + 1) / x.size
    return float(np.sum(np.maximum(share - lam, 0.0) * steps))


def betting_bounds(values: ArrayLike, low: float, high: float,
                   alpha: float) -> tuple[float, float]:
    """One-sided (1 − α) lower and upper confidence bounds on the mean of a bounded variable.

    Confidence by betting (Waudby-Smith and Ramdas 2023, JRSS B 86(1), arXiv:2010.09686):
    rescaled to z in [0, 1], the capital K(m) = Π_i (1 + λ_i(m)·(z_i − m)) of bets that the
    mean is above m is a nonnegative martingale when the mean is m (λ_i(m) ≤ 1/m keeps every
    factor ≥ 0), so P(K(μ) ≥ 1/α) ≤ α (Markov), and every m with K(m) ≥ 1/α lies below the
    mean at confidence 1 − α; the upper bound bets the other way, λ_i(m) ≤ 1/(1 − m). The bets
    λ_i(m) = min(√(2 ln(1/α)/(n σ̂²_{i−1})), 3/4 ÷ m) (resp. ÷ (1 − m)) are their predictable
    plug-in for a fixed n (σ̂²_{i−1}: the variance of the draws before i, regularised by 1/n²
    rather than their prior 1/4, which would swamp the variance of a small variable), capped
    as they are, and 0 on the first :data:`WARM_UP` share of the draws (a rare variable shows
    no variance before its first hits, and bets sized on that collapse the capital: on the
    importance weights of a 2·10⁻⁴ event the bound fell to 0.05–0.4 of the mean where the
    normal width gives 0.93); each factor is then monotone in m, so each bound is found by
    bisection. The
    width follows the draws' variance; a mean near 0 allows bets up to 1/m, so a rare, small
    variable (an importance weight on a rare event) gets a tight lower bound whatever its range,
    while its upper bound must allow an unseen draw at ``high`` (about (high − low)·ln(1/α)/n).

    Args:
        values: float (n,) independent draws, n ≥ 1, each in [low, high], in an order fixed
            before they were seen (the draws' own order).
        low: the variable's smallest possible value.
        high: its largest possible value (> low).
        alpha: each bound's one-sided error, in (0, 1).

    Returns:
        (lower, upper), each at 1 − α on its own (both at once: 1 − 2α).

    Raises:
        ValueError: no draw, a draw outside [low, high] or non-finite, low ≥ high, or α outside
            (0, 1).
    """
    x = np.asarray(values, dtype=float).ravel()
    if not low < high:
        raise ValueError(f"low={low}, high={high}: expected low < high")
    if x.size < 1 or not np.all(np.isfinite(x)) or x.min() < low or x.max() > high:
        raise ValueError(f"values: expected n >= 1 finite draws in [{low}, {high}], got {x.size} "
                         f"draws from {x.min(initial=np.inf)} to {x.max(initial=-np.inf)}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha}: expected in (0, 1)")
    z = (x - low) / (high - low)
    lower = _betting_lower(z, alpha)
    upper = 1.0 - _betting_lower(1.0 - z, alpha)
    return low + lower * (high - low), low + upper * (high - low)


WARM_UP = 0.01    # the share of draws that only estimate the variance (betting_bounds)


def _betting_lower(z: np.ndarray, alpha: float) -> float:
    """The betting lower bound on the mean of draws z in [0, 1] (:func:`betting_bounds`)."""
    n, target = z.size, np.log(1.0 / alpha)
    i = np.arange(1, n + 1)
    mean = np.cumsum(z) / i                                 # running mean and variance, with
    before = np.concatenate(([0.0], mean[:-1]))             # a prior variance of 1/n² (a
    var = (n ** -2.0 + np.cumsum((z - before) ** 2)) / i    # draw's weight): no scale assumed
    lam0 = np.sqrt(2.0 * target / (n * np.concatenate(([n ** -2.0], var[:-1]))))
    lam0[:math.ceil(WARM_UP * n)] = 0.0     # no bet before the variance has been seen

    def rejected(m: float) -> bool:                       # K(m) ≥ 1/α; decreasing in m
        return float(np.sum(np.log1p(np.minimum(lam0, 0.75 / m) * (z - m)))) >= target

    lo, hi = 0.0, float(z.mean())
    if hi * 1e-12 <= 0 or not rejected(hi * 1e-12):    # a mean below ~1e-311: 0, no bet
        return 0.0
    for _ in range(60):                                    # to ~1e-18 of the unit range
        mid = (lo + hi) / 2
        if mid > 0 and rejected(mid):
            lo = mid
        else:
            hi = mid
    return lo


def eps_lower_bound(k_num: ArrayLike, n_num: int, k_den: ArrayLike, n_den: int, alpha: float,
                    delta: float = 0.0) -> np.ndarray:
    """Lower confidence bound (level 1 − α) on an event's δ-loss ln((P_num(S) − δ)/P_den(S)).

    α/2 goes to each of the two one-sided Clopper–Pearson bounds (union bound); the result is
    clipped at 0. Valid for an event fixed before the runs counted were drawn.

    Args:
        k_num: the event's hits in ``n_num`` runs on the numerator side (scalar or array).
        n_num: runs on the numerator side.
        k_den: the event's hits in ``n_den`` runs on the denominator side, broadcast against
            ``k_num``.
        n_den: runs on the denominator side.
        alpha: the error of the bound, in (0, 1).
        delta: the claim's δ (0: the pure-DP log ratio).

    Returns:
        float64 array (nats, ≥ 0) of the broadcast shape.
    """
    lo = cp_lower(k_num, n_num, alpha / 2) - delta
    hi = cp_upper(k_den, n_den, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.maximum(lo, 0.0)) - np.log(hi)
    return np.maximum(out, 0.0)


def eps_upper_bound(k_num: ArrayLike, n_num: int, k_den: ArrayLike, n_den: int, alpha: float,
                    delta: float = 0.0) -> np.ndarray:
    """Upper confidence bound (level 1 − α) on an event's δ-loss ln((P_num(S) − δ)/P_den(S)).

    Args:
        k_num: the event's hits in ``n_num`` runs on the numerator side (scalar or array).
        n_num: runs on the numerator side.
        k_den: the event's hits in ``n_den`` runs on the denominator side.
        n_den: runs on the denominator side.
        alpha: the error of the bound, split α/2 over the two one-sided bounds.
        delta: the claim's δ.

    Returns:
        float64 array (nats) of the broadcast shape: +inf where the denominator's lower bound
        is 0, −inf where P_num(S) ≤ δ with confidence.
    """
    hi = cp_upper(k_num, n_num, alpha / 2) - delta
    lo = cp_lower(k_den, n_den, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(hi <= 0, -np.inf, np.log(np.maximum(hi, 0.0)) - np.log(lo))


P_FLOOR_LOG10 = 50.0   # p-values are floored at 1e-50


def p_value(k_num: int, n_num: int, k_den: int, n_den: int, eps: float,
            delta: float = 0.0) -> float:
    """The p-value of H0: P_num(S) ≤ e^ε·P_den(S) + δ, the test behind :func:`eps_lower_bound`.

    Args:
        k_num: hits in ``n_num`` runs on the numerator side.
        n_num: runs on the numerator side.
        k_den: hits in ``n_den`` runs on the denominator side.
        n_den: runs on the denominator side.
        eps: the claimed ε.
        delta: the claimed δ.

    Returns:
        The smallest α at which the lower bound exceeds ε: 1 if it never does, floored at
        1e-50 (below it scipy's beta quantiles stop converging).
    """
    def f(log10_a: float) -> float:
        return float(eps_lower_bound(k_num, n_num, k_den, n_den, 10.0 ** log10_a, delta)) - eps

    if f(-1e-12) <= 0:
        return 1.0
    if f(-P_FLOOR_LOG10) > 0:
        return 10.0 ** -P_FLOOR_LOG10
    return float(10.0 ** brentq(f, -P_FLOOR_LOG10, -1e-12, xtol=1e-13))


def log_ratio(k_num: int, n_num: int, k_den: int, n_den: int, delta: float = 0.0) -> float:
    """The point estimate of the δ-loss ln((p̂_num − δ)/p̂_den) that :func:`eps_lower_bound` bounds.

    Args:
        k_num: hits in ``n_num`` runs on the numerator side.
        n_num: runs on the numerator side.
        k_den: hits in ``n_den`` runs on the denominator side.
        n_den: runs on the denominator side.
        delta: the claim's δ (0: the log ratio).

    Returns:
        The estimate in nats: +inf when the denominator side has no hit, −inf when
        p̂_num = δ, nan when p̂_num < δ or both sides have none.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.log(np.float64(k_num) / n_num - delta) - np.log(np.float64(k_den) / n_den))


def log_ratio_interval(k_num: int, n_num: int, k_den: int, n_den: int,
                       alpha: float) -> tuple[float, float]:
    """Two-sided (1 − α) interval for ln(p_num/p_den), from Clopper–Pearson bounds at α/4 each.

    Args:
        k_num: hits in ``n_num`` runs on the numerator side.
        n_num: runs on the numerator side.
        k_den: hits in ``n_den`` runs on the denominator side.
        n_den: runs on the denominator side.
        alpha: the interval's error, in (0, 1).

    Returns:
        (lower, upper) in nats; lower may be −inf and upper +inf.
    """
    a = alpha / 4
    with np.errstate(divide="ignore"):
        lo = np.log(cp_lower(k_num, n_num, a)) - np.log(cp_upper(k_den, n_den, a))
        hi = np.log(cp_upper(k_num, n_num, a)) - np.log(cp_lower(k_den, n_den, a))
    return float(lo), float(hi)


def rise_z(old: tuple, new: tuple) -> np.ndarray:
    """The Wald statistic of the rise of an event's log ratio between two measurements.

    z = (r̂_new − r̂_old)/se for the log ratio ln(p_num/p_den), vectorised over the counts.

    Each count gets the Haldane–Anscombe ½ (so no count of 0 makes it infinite), r̂ =
    ln((k_num + ½)/(k_den + ½)) and se² = Σ (1/(k + ½) − 1/(n + ½)) over the four counts (the
    delta method's variance of a log proportion, (1 − p)/(np)); 0 where that is 0.

    Args:
        old: (k_num, n_num, k_den, n_den), hits and runs of the numerator and denominator
            sides in the earlier (baseline) measurement; ints or integer arrays.
        new: the same for an independent later measurement of the same event.

    Returns:
        float64 array (or scalar) z; large positive values mean the log ratio rose.
    """
    k = [np.asarray(x, dtype=np.float64) + 0.5 for x in (old[0], old[2], new[0], new[2])]
    n = [np.asarray(x, dtype=np.float64) + 0.5 for x in (old[1], old[3], new[1], new[3])]
    rise = np.log(k[2] / k[3]) - np.log(k[0] / k[1])
    var = sum(1.0 / kk - 1.0 / nn for kk, nn in zip(k, n))
    return np.divide(rise, np.sqrt(var), out=np.zeros(np.broadcast(rise, var).shape),
                     where=var > 0)                   # every side hit in every run: z = 0


def rise_p_value(old: tuple, new: tuple) -> float:
    """One-sided p-value of H0 "the event's log ratio did not rise from ``old`` to ``new``".

    The normal tail of :func:`rise_z`, floored at 1e-50 like :func:`p_value`.

    An asymptotic test, not an exact one: its real size at the gate's level α_i = 1.25·10⁻⁵
    was measured on every stored event of the gate's suite (``benchmarks/gate_size.py``,
    docs/guide/gate.md) and at small counts enumerated exactly (tests/statistics/test_stats.py); with few
    hits it is conservative (the ½ and the 1/k variance), at 10³ hits and more its size is
    α_i within the measurement's error.

    Args:
        old: (k_num, n_num, k_den, n_den) of the earlier (baseline) measurement.
        new: the same for an independent later measurement.

    Returns:
        A p-value in [1e-50, 1].
    """
    return float(max(norm.sf(float(rise_z(old, new))), 10.0 ** -P_FLOOR_LOG10))


def detectable_eps(p_den: float, n: int, claim: float, alpha: float, delta: float = 0.0) -> float:
    """The smallest true loss whose expected counts would give ε_lb > ``claim``.

    For an (ε, δ) claim it is the smallest δ-loss, with P_num = e^loss·p_den + δ.

    Args:
        p_den: the event's probability on the denominator side; an event never seen there is
            taken at one hit in ``n`` (the smallest probability the counts can express).
        n: runs per side.
        claim: the claimed ε.
        alpha: the level of the bound.
        delta: the claimed δ.

    Returns:
        The loss in nats; inf when even a certain event on the numerator side would not do.
    """
    p_den = max(p_den, 1.0 / n)

    def f(loss: float) -> float:
        k_num = min(n, n * (p_den * np.exp(loss) + delta))
        return float(eps_lower_bound(k_num, n, n * p_den, n, alpha, delta)) - claim

    hi = -np.log(p_den)
    if f(hi) <= 0:
        return float("inf")
    if f(0.0) > 0:
        return 0.0
    return float(brentq(f, 0.0, hi, xtol=1e-6))


TAIL = 1e-12   # binomial mass left out on each side of a window; counted against the power
GRID = 256     # critical counts computed exactly at this many denominator counts per look


def _window(n: int, p: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The counts k of Binomial(n, p) outside whose range the mass is ≤ 2·TAIL.

    Returns (k, pmf(k), the mass outside).
    """
    k = np.arange(binom.ppf(TAIL, n, p), binom.isf(TAIL, n, p) + 1, dtype=np.int64)
    pmf = binom.pmf(k, n, p)
    return k, pmf, max(0.0, 1.0 - float(pmf.sum()))


def _first_true(pred: Callable, n: int, k: np.ndarray, grid: int) -> np.ndarray:
    """For each denominator count in ``k``, the smallest numerator count j with ``pred(j, k)``.

    ``k`` has shape (m,); j ranges over [0, n] (n + 1 where none); ``pred`` is False then True
    in j and its switch point does not decrease with k.

    Vectorised bisection at the last count of each of at most ``grid`` blocks of ``k``,
    that value standing for the whole block: it is ≥ the exact one on every count of the
    block, which makes the power below conservative (the critical counts of rejection regions
    {j ≥ t} are too high, the last counts of acceptance regions {j < t} too high too, i.e.
    those regions too large). Exact where ``k`` has at most ``grid`` values.
    """
    block = -(-k.size // grid)
    right = k[np.minimum(np.arange(block - 1, k.size + block - 1, block), k.size - 1)]
    lo = np.full(right.size, -1, dtype=np.int64)       # pred(lo) taken False
    hi = np.full(right.size, n + 1, dtype=np.int64)    # pred(hi) taken True
    while np.any(hi - lo > 1):
        live = hi - lo > 1
        mid = (lo + hi) // 2
        ok = np.asarray(pred(np.clip(mid, 0, n), right), dtype=bool)
        hi = np.where(live & ok, mid, hi)
        lo = np.where(live & ~ok, mid, lo)
    return np.repeat(hi, block)[:k.size]


class PowerCurve:
    """The probability that one measured event is flagged, as a function of its true loss.

    The design is the one :mod:`dpaudit.statistics.measure` runs for a finalist: cumulative looks of
    ``sizes`` runs per side, look k a test at level ``alpha[k]`` (its share of α after the
    weighted Bonferroni) of H0 "δ-loss ≤ ``eps``" with :func:`eps_lower_bound`; the measurement stops
    early for futility when the upper bounds (:func:`eps_upper_bound`) are ≤ ε. The event has
    probability ``p_den`` on the denominator side and ``min(1, e^loss·p_den + δ)`` on the
    numerator side.

    :meth:`power` is a lower bound on the probability of a ``violation``, computed exactly from
    the binomial laws: P(the last look's bound exceeds ε) minus, for every earlier look, P(that
    look's upper bound is ≤ ε) (a futility stop needs that; violations at earlier looks and on
    other finalists only add power). For each denominator count the test's critical numerator
    count is found by bisection on the very functions the audit calls (on a grid of
    denominator counts, rounded the conservative way: :func:`_first_true`); binomial mass
    beyond :data:`TAIL` is counted against the power.

    Args:
        p_den: probability of the event on the denominator side, in (0, 1].
        sizes: cumulative runs per side at each look (increasing; the last is the budget).
        eps: the claimed ε (> 0).
        alpha: the level of the test at each look (shape ``len(sizes)``), or one level for
            every look.
        delta: the claimed δ (≥ 0).
        grid: denominator counts per look at which critical counts are exact (default
            :data:`GRID`; fewer is faster and more conservative).
    """

    def __init__(self, p_den: float, sizes: list[int], eps: float,
                 alpha: float | list[float], delta: float = 0.0, grid: int | None = None) -> None:
        """Compute the critical counts of every look (see the class doc for the arguments)."""
        grid = GRID if grid is None else grid
        self.p_den, self.sizes, self.eps, self.delta = float(p_den), list(sizes), eps, delta
        levels = np.broadcast_to(np.asarray(alpha, dtype=float), (len(self.sizes),))
        n, a = self.sizes[-1], levels[-1]
        k, pmf, out = _window(n, self.p_den)
        t = _first_true(lambda j, kd: eps_lower_bound(j, n, kd, n, a, delta) > eps, n, k,
                        grid)
        self._last = (n, pmf, t, out)
        self._early = []
        for m, a in zip(self.sizes[:-1], levels[:-1]):
            k, pmf, out = _window(m, self.p_den)
            # the largest numerator count whose upper bound is ≤ ε (−1: none)
            u = _first_true(lambda j, kd: eps_upper_bound(j, m, kd, m, a, delta) > eps, m,
                            k, grid) - 1
            self._early.append((m, pmf, u, out))

    def p_num(self, loss: float) -> float:
        """The numerator side's probability for a true δ-loss.

        Args:
            loss: the δ-loss (nats).

        Returns:
            min(1, e^loss·p_den + δ).
        """
        return min(1.0, float(np.exp(loss)) * self.p_den + self.delta)

    def power(self, loss: float) -> float:
        """A lower bound on P(violation) when the event's true δ-loss is ``loss``.

        Args:
            loss: the δ-loss (nats).

        Returns:
            The bound, in [0, 1].
        """
        q = self.p_num(loss)
        n, pmf, t, out = self._last
        p = float(pmf @ binom.sf(t - 1, n, q)) - out
        for m, pmf, u, out in self._early:
            p -= float(pmf @ binom.cdf(u, m, q)) + out
        return min(1.0, max(0.0, p))

    def detectable_loss(self, beta: float) -> float:
        """The smallest true δ-loss flagged with probability ≥ 1 − ``beta``.

        Found from above, to 1e-6: the power at the value returned is ≥ 1 − β.

        Args:
            beta: 1 − the power asked for, in (0, 1).

        Returns:
            The loss (nats); inf when even P_num = 1 is not flagged that often.
        """
        top = float(np.log((1.0 - self.delta) / self.p_den)) if self.delta < 1 else 0.0
        if top <= 0 or self.power(top) < 1 - beta:
            return float("inf")
        if self.power(0.0) >= 1 - beta:
            return 0.0
        x = float(brentq(lambda v: self.power(v) - (1 - beta), 0.0, top, xtol=1e-7))
        while self.power(x) < 1 - beta:      # return a point on the safe side of the root
            x = min(top, x + 1e-6)
        return x


def detectable_loss(hits_den: int, runs: int, plan: tuple, eps: float, delta: float = 0.0,
                    beta: float = 0.05) -> float:
    """The detectable loss of a measured event at power 1 − β (:class:`PowerCurve`).

    Args:
        hits_den: the event's hits on the denominator side in ``runs`` runs there; its
            probability is taken as hits/runs. Never seen there (0 hits), it may be as small
            as 0, where no loss is detectable: inf.
        runs: the runs measured on the denominator side (≥ 1).
        plan: (sizes, alpha): the cumulative runs per side at each planned look (the last is
            the budget) and the level of the test at each look, or one level for every look
            (:func:`dpaudit.statistics.measure.design` gives both).
        eps: the claimed ε (> 0).
        delta: the claimed δ.
        beta: 1 − the power asked for, in (0, 1).

    Returns:
        The smallest true δ-loss (nats) on that event that the design flags with probability
        ≥ 1 − β; inf when none does.
    """
    if hits_den == 0:
        return float("inf")
    sizes, alpha = plan
    return PowerCurve(hits_den / runs, sizes, eps, alpha, delta).detectable_loss(beta)
