"""LDP-UCB's decision rule and the exact law of its first data-dependent action.

LDP-UCB (Ren et al. 2020, as run by Sarkar, Pandey, Ray Chowdhury 2025): each user reports
Y = x + Lap(1/ε) and the algorithm reads clip(Y) to [0, 1]; each arm is pulled once, then an arm
with n ≤ 4 ln t pulls is forced, else the arm of largest index m + √(2 ln t/n) + √(32 ln t)/(ε√n)
(m the arm's mean clipped report) is played. The rule is here once, for the kernel
(:func:`ldp_ucb_forced`, :func:`ldp_ucb_index`) and for :func:`law`.

Forced exploration makes the first t* actions data-independent (t* = 28 for K = 2), so the
first action that reads the reports is action t* + 1, and it reads all t* of them: a release
walk nests t* continuous integrals. Its law is instead one comparison of two sums of
independent clipped reports: arm 1 is played iff S₁/N₁ − S₀/N₀ > c (c the difference of the
two arms' exploration bonuses). Each clipped report is rounded down and up to the grid 1/m,
whose exact laws (Laplace CDF at the grid points, atoms at 0 and 1) are convolved per arm, and
the rounded-down and rounded-up sums bracket the event's probability: certified bounds up to
the convolution's float rounding (:data:`SLACK` added on each side) and a band of
:data:`TIE` around the threshold counted as undecided.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numba as nb
import numpy as np
from scipy.signal import fftconvolve
from scipy.stats import laplace

from dpaudit.errors import InputError
from dpaudit.simulation.simulate import LAPLACE

if TYPE_CHECKING:
    from dpaudit.algorithms.spec import Prepared

GRID = 8192         # grid points per unit of a clipped report
SLACK = 1e-10       # added to each bound: the convolutions' float rounding
TIE = 1e-9          # |S₁/N₁ − S₀/N₀ − c| below it: undecided (float evaluation of the index)
CHECKS = 64         # report vectors on which the kernel's action t* + 1 is checked against the rule


@nb.njit(cache=True, inline="always")
def ldp_ucb_forced(N1: np.ndarray, lt: float) -> int:
    """The forced arm: the first arm never pulled, else the first with n ≤ 4 ln t.

    Args:
        N1: float (K,) pulls per arm so far.
        lt: ln t, t the 1-based round.

    Returns:
        The arm, or −1 when no arm is forced (the index decides).
    """
    K = N1.shape[0]
    for i in range(K):
        if N1[i] == 0.0:
            return i
    for i in range(K):
        if N1[i] <= 4.0 * lt:
            return i
    return -1


@nb.njit(cache=True, inline="always")
def ldp_ucb_index(m: float, lt: float, n: float, eps: float) -> float:
    """The index m + √(2 ln t/n) + √(32 ln t)/(ε√n) of an arm.

    Args:
        m: the arm's mean clipped report.
        lt: ln t, t the 1-based round.
        n: the arm's pulls (> 0).
        eps: ε.

    Returns:
        The index.
    """
    return m + math.sqrt(2.0 * lt / n) + math.sqrt(32.0 * lt) / (eps * math.sqrt(n))


def _schedule(actions: np.ndarray, K: int) -> tuple[int, np.ndarray]:
    """(t*, pulls per arm before it): the first sample no arm is forced at, or −1 if none."""
    N = np.zeros(K)
    for n, a in enumerate(actions):
        forced = ldp_ucb_forced(N, math.log(n + 1.0))
        if forced < 0:
            return n, N
        if forced != a:
            raise InputError(f"--exact: ldp-ucb's law does not match its kernel: sample {n + 1} "
                             f"forced arm {forced}, the kernel played {a}")
        N[a] += 1.0
    return -1, N


def _report_pmfs(x: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """Laws of clip(x + Lap(b)) rounded down and up to the grid, float (GRID + 1,) each."""
    below = laplace.cdf(np.arange(1, GRID + 1) / GRID - x, scale=b)   # P(clip < k/GRID)
    down = np.append(np.diff(below, prepend=0.0), 1.0 - below[-1])    # atom at 0 in cell 0
    up = np.zeros_like(down)
    up[1:] = down[:-1]
    up[-1] += down[-1]                                                # the atom at 1 stays
    return down, up


def _sum_pmf(pmfs: list) -> np.ndarray:
    out = np.ones(1)
    for p in pmfs:
        out = np.maximum(fftconvolve(out, p), 0.0)
    return out


def _prob_above(a: np.ndarray, n_a: float, b: np.ndarray, n_b: float, c: float) -> float:
    """P(A/(n_a·GRID) − B/(n_b·GRID) > c) for independent grid sums of laws a and b."""
    tail = np.append(np.cumsum(a[::-1])[::-1], 0.0)           # P(A ≥ k), k = 0..len(a)
    r = np.arange(b.size)
    k = np.floor(n_a * (c * GRID + r / n_b)) + 1.0              # smallest A above the line
    return float(b @ tail[np.clip(k, 0, a.size).astype(int)])


def _arm_one(reports: tuple, N: np.ndarray, c: float) -> tuple[float, float]:
    """Bounds on P(arm 1 at t* + 1): the reports' (arms, values x, scales) on one table."""
    arms, xs, bs = reports
    laws = [_report_pmfs(x, b) for x, b in zip(xs, bs)]
    sums = [[_sum_pmf([laws[j][side] for j in np.flatnonzero(arms == i)]) for i in (0, 1)]
            for side in (0, 1)]                                 # [down, up][arm]
    lo = _prob_above(sums[0][1], N[1], sums[1][0], N[0], c + TIE)
    hi = _prob_above(sums[1][1], N[1], sums[0][0], N[0], c - TIE)
    return max(lo - SLACK, 0.0), min(hi + SLACK, 1.0)


def _check(run: Callable, table: np.ndarray, reports: tuple, N: np.ndarray, c: float,
           t_star: int) -> None:
    """The kernel's action t* + 1 on CHECKS report vectors is the rule's (else InputError)."""
    arms, xs, bs = reports
    rng = np.random.default_rng(0)
    for i in range(CHECKS):
        y = xs + rng.laplace(0.0, bs)
        key, _ = run(table, y, i)
        s = [np.clip(y[arms == a], 0.0, 1.0).sum() / N[a] for a in (0, 1)]
        gap = s[1] - s[0] - c
        played = int(np.frombuffer(key[0], np.int16)[t_star])
        if abs(gap) > TIE and played != int(gap > 0):
            raise InputError(f"--exact: ldp-ucb's law does not match its kernel at sample "
                             f"{t_star + 1} (reports {i}: the rule plays {int(gap > 0)}, "
                             f"the kernel {played})")


def law(run: Callable, prep: Prepared, tables: tuple, limit: int, eps_index: int) -> tuple:
    """Bounds on LDP-UCB's transcript law on two tables, K = 2, up to its first read (module doc).

    Args:
        run: ``run(table, frozen, seed) -> (transcript key, releases float (n, 8))``, the kernel
            with its first releases frozen (:func:`dpaudit.auditing.exact.frozen_run`).
        prep: the prepared arrays (``theta[eps_index]`` = ε).
        tables: (d, d′), user tables float (T, 2).
        limit: samples per run, at most t* + 1.
        eps_index: where ``prep.theta`` holds ε.

    Returns:
        (keys: the transcripts; bounds float (4, n): lower on d, lower on d′, upper on d,
        upper on d′; caps float (n,): the reports' largest loss Σ|x − x′|/b; method: how the
        bounds were computed).

    Raises:
        InputError: K ≠ 2, a limit beyond sample t* + 1, or a kernel whose forced arms or
            action t* + 1 differ from the rule's.
    """
    outs = [run(t, np.zeros(0), 0) for t in tables]
    key, rel = outs[0]
    actions = np.frombuffer(key[0], np.int16)
    K = prep.means.shape[0]
    if K != 2:
        raise InputError(f"--exact: ldp-ucb's law is summed for K = 2 arms, not K = {K}")
    t_star, N = _schedule(actions, K)
    if t_star < 0:                                  # no data-dependent action within limit
        if outs[1][0] != key:
            raise InputError("--exact: ldp-ucb's data-independent actions differ on d and d′")
        return [key], np.ones((4, 1)), np.zeros(1), "exact: every action is data-independent"
    if actions.size > t_star + 1:
        raise InputError(f"--exact: ldp-ucb's law is summed up to its first data-dependent "
                         f"action, sample {t_star + 1}; a horizon of {actions.size} samples "
                         f"goes beyond it (audit horizon={t_star + 1})")
    lt = math.log(t_star + 1.0)
    eps = float(prep.theta[eps_index])
    c = ldp_ucb_index(0.0, lt, N[0], eps) - ldp_ucb_index(0.0, lt, N[1], eps)
    bounds, reports = [], []
    for table, (_, r) in zip(tables, outs):
        r = r[:t_star]
        if (r[:, 7] != LAPLACE).any():
            raise InputError("--exact: ldp-ucb's reports are not Laplace releases")
        rep = (r[:, 1].astype(int), r[:, 4].copy(), r[:, 6].copy())
        _check(run, table, rep, N, c, t_star)
        bounds.append(_arm_one(rep, N, c))
        reports.append(rep)
    caps = float(np.sum(np.abs(reports[0][1] - reports[1][1]) / reports[0][2]))
    (lo_d, hi_d), (lo_p, hi_p) = bounds
    keys = []
    for a in (0, 1):
        acts = actions.copy()
        acts[t_star] = a
        keys.append((acts.tobytes(), *key[1:]))
    b = np.array([[1.0 - hi_d, lo_d], [1.0 - hi_p, lo_p], [1.0 - lo_d, hi_d],
                  [1.0 - lo_p, hi_p]])
    method = (f"certified bounds: action {t_star + 1} of LDP-UCB from the per-arm sums of its "
              f"{t_star} clipped reports, each rounded down and up to 1/{GRID} and convolved "
              f"(slack {SLACK:g} per bound)")
    return keys, b, np.full(2, caps), method
