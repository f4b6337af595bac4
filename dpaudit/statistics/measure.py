"""Measurement of the finalist events on fresh samples, with valid early stopping.

The selection (pilot) sample chooses up to F finalists, each an event and a way to draw fresh
samples from d and d'. The measurement budget of ``n`` runs per side is reached in
:data:`LOOKS` cumulative looks at n/8, n/4, n/2 and n. Every (look, finalist) pair is one
planned test of H0: "the event's δ-loss ln((P_num(S) − δ)/P_den(S)) is ≤ ε"; the test at
look k is at level α·w_k/F, with the weights :data:`LOOK_WEIGHTS` (1/16, 1/16, 1/8, 3/4)
putting most of α on the last look, where the power is (weighted Bonferroni over everything
that is measured: the levels sum to α; the adjusted p-value is min(1, min p·α/level), tests
not performed count with p = 1). By the union bound, all the confidence bounds computed hold
simultaneously with probability ≥ 1 − α, whatever the stopping rule and whatever the
weights, so the audit may stop

* with ``violation`` as soon as one lower bound exceeds ε, and
* with ``pass`` as soon as every finalist's *upper* bound is ≤ ε (no measured event can still
  show a violation: "futility"; stopping for futility only costs power, never validity),

and it reports ε_lb = the largest lower bound over all tests performed. A budget with
``early_stop=False`` makes every look instead (the tightest ε_lb the runs give).

Why the weights: the early looks buy early stops (time), the last look carries the power. At
α = 0.05 and power 0.95, moving from α/4 per look to the weights lowers the detectable loss
by about a tenth of its excess over ε (e.g. ε = 0.5, an event of probability 0.1, 10⁵ runs
per side: 0.5602 → 0.5535), while early violations stay possible at α/16 and the false-alarm
bound stays α.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from dpaudit.core.allowance import Allowance
from dpaudit.core.request import Budget, Claim
from dpaudit.core.terms import Side
from dpaudit.simulation.simulate import Counts
from dpaudit.statistics.events import Event
from dpaudit.statistics.stats import eps_lower_bound, eps_upper_bound, p_value

LOOKS = 4
LOOK_WEIGHTS = (1, 1, 2, 12)   # share of a finalist's α at each look (∝; the last gets 3/4)


@dataclass
class Finalist:
    """An event chosen on the selection sample, and how to draw fresh runs for it.

    An event chosen on the selection sample; ``draw(side, n, seed)`` returns the
    :class:`Counts` of ``n`` fresh runs on d (side 0) or d' (side 1); ``delta``: the DP δ of
    the claim its runs are audited against (None: the measurement's claim), so that a finalist
    of an instance calibrated by its own δ is judged at that δ; ``cost``: samples per run of
    its draws (what the allowance is charged); ``group``: finalists with one non-None group
    are several events of one pair, measured on the same runs (drawn once, by the first of
    them, each test still one of the Bonferroni family).
    """

    event: Event
    draw: Callable[[int, int, np.random.SeedSequence], Counts]
    label: object = None
    delta: float | None = None
    cost: int = 0
    group: object = None


@dataclass
class Measured:
    """A finalist's measurement so far: merged counts, hits, runs and its bounds."""

    finalist: Finalist
    counts: list = field(default_factory=lambda: [None, None])  # merged Counts on d, d'
    hits: tuple = (0, 0)    # hits of the event on d, d'
    n: int = 0              # runs per side so far
    eps_lb: float = 0.0     # the largest lower bound over this finalist's looks
    eps_ub: float = float("inf")  # the upper bound at its last look (level α·w_k/F: futility)
    loss_ub: float = float("inf")  # the smallest upper bound at level β·w_k over its looks
    p_values: list = field(default_factory=list)

    def delta(self, claimed: float) -> float:
        """The δ this finalist is judged at: its own, else ``claimed`` (the claim's).

        Args:
            claimed: the measurement's claim δ.

        Returns:
            δ in [0, 1).
        """
        own = self.finalist.delta
        return float(claimed if own is None else own)

    def num_den(self) -> tuple[int, int]:
        """The event's hits (numerator side, denominator side)."""
        hd, hdp = self.hits
        return (hdp, hd) if self.finalist.event.numerator == Side.D_PRIME else (hd, hdp)


@dataclass
class Measurement:
    """The measurement of every finalist: its looks, levels and why it stopped."""

    measured: list[Measured]
    best: Measured | None
    tests: int              # m = planned tests (looks × finalists)
    alpha_per_look: list[float]  # the level of each finalist's test at each look
    beta_per_look: list[float]   # the level of each finalist's upper bound (loss_ub) at each look
    p_adjusted: float       # smallest weighted-Bonferroni-adjusted p-value
    stopped: str            # "violation", "futility", "budget" or "cap: <why>"
    looks: list[dict]


def look_sizes(n: int) -> list[int]:
    """Cumulative runs per side at each look.

    Args:
        n: runs per side at the last look (≥ 1).

    Returns:
        n/8, n/4, n/2, n (at least 1 each; looks of equal size are one look), increasing.
    """
    return sorted({max(1, n >> (LOOKS - 1 - k)) for k in range(LOOKS)})


def design(n: int, alpha: float) -> tuple[list[int], list[float]]:
    """The sequential design of one finalist measured with a budget of ``n`` runs per side.

    Args:
        n: runs per side at the last look (≥ 1).
        alpha: the finalist's share of the error budget (α/F).

    Returns:
        (sizes, levels): the cumulative runs per side at each look (:func:`look_sizes`) and
        the level of the test at each look, ``alpha`` split by the last ``len(sizes)``
        :data:`LOOK_WEIGHTS` (they sum to ``alpha``).
    """
    sizes = look_sizes(n)
    w = LOOK_WEIGHTS[-len(sizes):]
    return sizes, [alpha * x / sum(w) for x in w]


def _add(a: Counts | None, b: Counts) -> Counts:
    return b if a is None else a.merged(b)


def measure(finalists: list[Finalist], claim: Claim, budget: Budget,
            seed: np.random.SeedSequence, allowance: Allowance | None = None,
            draws: Callable[[list], list] | None = None) -> Measurement:
    """Measure the finalists on fresh samples, in looks.

    Violations are tested at the budget's α, Bonferroni over looks × finalists (see the module
    doc). Each finalist also gets ``loss_ub``, an upper confidence bound on its event's δ-loss
    at level 1 − β: β is split over the looks by :data:`LOOK_WEIGHTS` (not over the finalists),
    and the smallest of the bounds of the looks performed is kept (they hold simultaneously with
    probability ≥ 1 − β, whichever look the measurement stopped at). It is what a ``pass``
    rests on (:mod:`dpaudit.verdicts.verdict`). Deterministic for ``seed``: finalist i, look k,
    side s uses ``seed.spawn(F)[i].spawn(len(sizes))[k].spawn(2)[s]``; a finalist that shares
    its ``group`` with an earlier one uses that one's runs.

    Args:
        finalists: the events chosen on the selection sample, with how to draw fresh runs.
        claim: ε and δ (None: 0); a finalist with its own ``delta`` is judged at that δ.
        budget: ``runs`` per side at the last look, ``alpha`` and ``beta``.
        seed: the measurement's seed, drawn from by no other stage.
        allowance: the samples cap and time limit left; a look it refuses is not made, and the
            measurement stops there (``stopped`` = "cap"). Fewer looks spend less of α and β,
            so every bound stays valid; each draw is charged its finalist's ``cost``.
        draws: the draws of one look made together (e.g. pooled on the worker processes):
            (finalist, side, runs, seed) tuples -> their :class:`Counts`, in order, each as
            the finalist's ``draw`` gives it; None: those ``draw`` calls one after another.

    Returns:
        The :class:`Measurement`: every finalist's hits, bounds and p-values, the levels per
        look, the best finalist and why the measurement stopped.
    """
    n, alpha, beta = budget.runs, budget.alpha, budget.beta
    eps, delta = claim.eps, claim.delta or 0.0
    F = max(len(finalists), 1)
    sizes, levels = design(n, alpha / F)
    beta_levels = design(n, beta)[1]
    m = len(sizes) * F
    out = [Measured(f) for f in finalists]
    seeds = [s.spawn(len(sizes)) for s in seed.spawn(F)][:len(finalists)]
    first = {}          # group -> the index of its first finalist, whose runs it shares
    drawer = [i if f.group is None else first.setdefault(f.group, i)
              for i, f in enumerate(finalists)]
    own = [i for i, j in enumerate(drawer) if i == j]      # the finalists that draw
    history, stopped = [], "budget"
    for k, size in enumerate(sizes):
        cost = sum(2 * (size - out[i].n) * out[i].finalist.cost for i in own)
        capped = allowance.refusal(cost) if allowance is not None else ""
        if capped:
            stopped = f"cap: {capped} stopped it after {k} of {len(sizes)} looks"
            break
        if allowance is not None:
            allowance.spend(cost)
        row = {"runs_per_side": size, "eps_lb": [], "eps_ub": []}
        plans = [(out[i].finalist, side, size - out[i].n, sd) for i in own
                 for side, sd in zip(Side, seeds[i][k].spawn(2))]
        got = draws(plans) if draws else [f.draw(side, r, sd) for f, side, r, sd in plans]
        fresh = {i: got[2 * j: 2 * j + 2] for j, i in enumerate(own)}
        for i, ms in enumerate(out):
            c_d, c_dp = fresh[drawer[i]]
            ms.counts = [_add(ms.counts[0], c_d), _add(ms.counts[1], c_dp)]
            ev = ms.finalist.event
            ms.hits = (ms.counts[0].hits(ev.view_index, ev.cells),
                       ms.counts[1].hits(ev.view_index, ev.cells))
            ms.n = size
            k_num, k_den = ms.num_den()
            d = ms.delta(delta)
            lb = float(eps_lower_bound(k_num, size, k_den, size, levels[k], d))
            ms.eps_ub = float(eps_upper_bound(k_num, size, k_den, size, levels[k], d))
            ms.eps_lb = max(ms.eps_lb, lb)
            ms.loss_ub = min(ms.loss_ub, float(eps_upper_bound(k_num, size, k_den, size,
                                                               beta_levels[k], d)))
            ms.p_values.append(p_value(k_num, size, k_den, size, eps, d))
            row["eps_lb"].append(lb)
            row["eps_ub"].append(ms.eps_ub)
        history.append(row)
        if not budget.early_stop:
            continue
        if any(ms.eps_lb > eps for ms in out):
            stopped = "violation"
            break
        if out and all(ms.eps_ub <= eps for ms in out):
            stopped = "futility"
            break
    out = [ms for ms in out if ms.n > 0]     # a finalist the cap left unmeasured is none
    p_adj = min([1.0] + [p * alpha / a for ms in out for p, a in zip(ms.p_values, levels)])
    best = max(out, key=lambda ms: ms.eps_lb) if out else None
    return Measurement(measured=out, best=best, tests=m, alpha_per_look=levels,
                       beta_per_look=beta_levels, p_adjusted=p_adj, stopped=stopped,
                       looks=history)
