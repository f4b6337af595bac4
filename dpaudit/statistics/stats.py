"""Exact binomial statistics for privacy-loss bounds.

Clopper–Pearson bounds come from statsmodels (``proportion_confint(method="beta")``). A
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

import numpy as np
from scipy.optimize import brentq
from scipy.stats import binom, norm
from statsmodels.stats.proportion import proportion_confint


def cp_lower(k, n, alpha):
    """One-sided (1 − α) Clopper–Pearson lower bound on a binomial proportion.

    ``k``: successes (array-like; non-integer values are allowed and interpolate, used only
    for *predicted* bounds); ``n``: trials; ``alpha`` ∈ (0, 1). Returns 0 where k = 0.
    """
    lo, _ = proportion_confint(np.asarray(k, dtype=float), n, alpha=2 * alpha, method="beta")
    return np.nan_to_num(np.asarray(lo, dtype=float), nan=0.0)


def cp_upper(k, n, alpha):
    """One-sided (1 − α) Clopper–Pearson upper bound (1 where k = n)."""
    _, hi = proportion_confint(np.asarray(k, dtype=float), n, alpha=2 * alpha, method="beta")
    return np.nan_to_num(np.asarray(hi, dtype=float), nan=1.0)


def eps_lower_bound(k_num, n_num, k_den, n_den, alpha, delta=0.0):
    """Lower confidence bound (level 1 − α) on the δ-loss ln((P_num(S) − δ)/P_den(S)); ≥ 0.

    Vectorised over ``k_num``/``k_den``. α/2 goes to each of the two one-sided bounds.
    """
    lo = cp_lower(k_num, n_num, alpha / 2) - delta
    hi = cp_upper(k_den, n_den, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.maximum(lo, 0.0)) - np.log(hi)
    return np.maximum(out, 0.0)


def eps_upper_bound(k_num, n_num, k_den, n_den, alpha, delta=0.0):
    """Upper confidence bound (level 1 − α) on the δ-loss ln((P_num(S) − δ)/P_den(S)):
    +inf when the denominator's lower bound is 0, −inf when P_num(S) ≤ δ with confidence."""
    hi = cp_upper(k_num, n_num, alpha / 2) - delta
    lo = cp_lower(k_den, n_den, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(hi <= 0, -np.inf, np.log(np.maximum(hi, 0.0)) - np.log(lo))


P_FLOOR_LOG10 = 50.0   # p-values are floored at 1e-50


def p_value(k_num, n_num, k_den, n_den, eps, delta=0.0) -> float:
    """p-value of H0: P_num(S) ≤ e^ε·P_den(S) + δ for the test behind :func:`eps_lower_bound`:
    the smallest α at which the bound exceeds ε (1 if it never does; floored at 1e-50, below
    which scipy's beta quantiles stop converging)."""
    def f(log10_a):
        return float(eps_lower_bound(k_num, n_num, k_den, n_den, 10.0 ** log10_a, delta)) - eps

    if f(-1e-12) <= 0:
        return 1.0
    if f(-P_FLOOR_LOG10) > 0:
        return 10.0 ** -P_FLOOR_LOG10
    return float(10.0 ** brentq(f, -P_FLOOR_LOG10, -1e-12, xtol=1e-13))


def log_ratio(k_num, n_num, k_den, n_den, delta: float = 0.0) -> float:
    """Point estimate of the δ-loss ln((p̂_num − δ)/p̂_den), the quantity
    :func:`eps_lower_bound` bounds (δ = 0: the log ratio); +inf when the denominator side has
    no hit, −inf when p̂_num = δ, nan when p̂_num < δ or both sides have none."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.log(np.float64(k_num) / n_num - delta) - np.log(np.float64(k_den) / n_den))


def log_ratio_interval(k_num, n_num, k_den, n_den, alpha):
    """Two-sided (1 − α) interval for ln(p_num/p_den) from Clopper–Pearson bounds at α/4 each.

    Returns (lower, upper); lower may be −inf and upper +inf.
    """
    a = alpha / 4
    with np.errstate(divide="ignore"):
        lo = np.log(cp_lower(k_num, n_num, a)) - np.log(cp_upper(k_den, n_den, a))
        hi = np.log(cp_upper(k_num, n_num, a)) - np.log(cp_lower(k_den, n_den, a))
    return float(lo), float(hi)


def rise_z(old, new):
    """Wald statistic of the rise of an event's log ratio ln(p_num/p_den) from the ``old`` to
    the ``new`` measurement: z = (r̂_new − r̂_old)/se, vectorised over the counts.

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


def rise_p_value(old, new) -> float:
    """One-sided p-value of H0 "the event's log ratio did not rise from ``old`` to ``new``"
    (:func:`rise_z`; normal tail, floored at 1e-50 like :func:`p_value`).

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
    """Smallest true loss on an event of probability ``p_den`` (denominator side) that would
    give, at the expected counts with ``n`` runs per side, ε_lb > ``claim`` at level 1 − α
    (for an (ε, δ) claim: the smallest δ-loss, P_num = e^loss·p_den + δ).

    An event never seen on the denominator side is taken at one hit in ``n`` (the
    smallest probability the counts can express). Returns inf when even a certain event on the
    numerator side would not suffice.
    """
    p_den = max(p_den, 1.0 / n)

    def f(loss):
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
    """The counts k of Binomial(n, p) outside whose range the mass is ≤ 2·TAIL: (k, pmf(k),
    mass outside)."""
    k = np.arange(binom.ppf(TAIL, n, p), binom.isf(TAIL, n, p) + 1, dtype=np.int64)
    pmf = binom.pmf(k, n, p)
    return k, pmf, max(0.0, 1.0 - float(pmf.sum()))


def _first_true(pred, n: int, k: np.ndarray, grid: int) -> np.ndarray:
    """For each denominator count in ``k`` (shape (m,)), the smallest numerator count j in
    [0, n] with ``pred(j, k)`` (n + 1 where none), for a predicate that is False then True in j
    and whose switch point does not decrease with k.

    Vectorised bisection at the last count of each of at most ``grid`` blocks of ``k``,
    that value standing for the whole block: it is ≥ the exact one on every count of the
    block, which makes the power below conservative (the critical counts of rejection regions
    {j ≥ t} are too high, the last counts of acceptance regions {j < t} too high too, i.e.
    those regions too large). Exact where ``k`` has at most ``grid`` values."""
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
                 alpha: float | list[float], delta: float = 0.0, grid: int | None = None):
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
        """The numerator side's probability for a true δ-loss ``loss``."""
        return min(1.0, float(np.exp(loss)) * self.p_den + self.delta)

    def power(self, loss: float) -> float:
        """Lower bound on P(violation) when the event's true δ-loss is ``loss`` (in [0, 1])."""
        q = self.p_num(loss)
        n, pmf, t, out = self._last
        p = float(pmf @ binom.sf(t - 1, n, q)) - out
        for m, pmf, u, out in self._early:
            p -= float(pmf @ binom.cdf(u, m, q)) + out
        return min(1.0, max(0.0, p))

    def detectable_loss(self, beta: float) -> float:
        """The smallest true δ-loss flagged with probability ≥ 1 − ``beta`` (from above, to
        1e-6: the power at the value returned is ≥ 1 − β); inf when even P_num = 1 is not."""
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
