"""Measurement of the finalist events on fresh samples, with valid early stopping.

The selection (pilot) sample chooses up to F finalists, each an event and a way to draw fresh
samples from d and d'. The measurement budget of ``n`` runs per side is reached in
:data:`LOOKS` cumulative looks at n/8, n/4, n/2 and n. Every (look, finalist) pair is one
planned test of H0: "the event's δ-loss ln((P_num(S) − δ)/P_den(S)) is ≤ ε", each at level
α/m with m = LOOKS·F (Bonferroni over everything that is measured; the adjusted p-values come
from ``statsmodels.stats.multitest.multipletests``, tests not performed count with p = 1). By
the union bound, all the confidence bounds computed hold simultaneously with probability
≥ 1 − α, whatever the stopping rule, so the audit may stop

* with ``violation`` as soon as one lower bound exceeds ε, and
* with ``pass`` as soon as every finalist's *upper* bound is ≤ ε (no measured event can still
  show a violation: "futility"; stopping for futility only costs power, never validity),

and it reports ε_lb = the largest lower bound over all tests performed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from statsmodels.stats.multitest import multipletests

from dpaudit.events import Event
from dpaudit.simulate import Counts
from dpaudit.stats import eps_lower_bound, eps_upper_bound, p_value

LOOKS = 4


@dataclass
class Finalist:
    """An event chosen on the selection sample; ``draw(side, n, seed)`` returns the
    :class:`Counts` of ``n`` fresh runs on d (side 0) or d' (side 1)."""

    event: Event
    draw: Callable[[int, int, np.random.SeedSequence], Counts]
    label: object = None


@dataclass
class Measured:
    finalist: Finalist
    counts: list = field(default_factory=lambda: [None, None])  # merged Counts on d, d'
    hits: tuple = (0, 0)    # hits of the event on d, d'
    n: int = 0              # runs per side so far
    eps_lb: float = 0.0     # the largest lower bound over this finalist's looks
    eps_ub: float = float("inf")  # the upper bound at its last look
    p_values: list = field(default_factory=list)

    def num_den(self) -> tuple[int, int]:
        hd, hdp = self.hits
        return (hdp, hd) if self.finalist.event.numerator == "d_prime" else (hd, hdp)


@dataclass
class Measurement:
    measured: list[Measured]
    best: Measured | None
    tests: int              # m = planned tests (looks × finalists)
    alpha_per_test: float
    p_adjusted: float       # smallest Bonferroni-adjusted p-value (statsmodels)
    stopped: str            # "violation", "futility" or "budget"
    looks: list[dict]


def look_sizes(n: int, looks: int = LOOKS) -> list[int]:
    """Cumulative runs per side at each look: n/2^(looks−1), ..., n/2, n (at least 1 each)."""
    return sorted({max(1, n >> (looks - 1 - k)) for k in range(looks)})


def _add(a: Counts | None, b: Counts) -> Counts:
    return b if a is None else a.merged(b)


def measure(finalists: list[Finalist], n: int, eps: float, delta: float, alpha: float,
            seed: np.random.SeedSequence, looks: int = LOOKS) -> Measurement:
    """Measure ``finalists`` on fresh samples of up to ``n`` runs per side (see module doc).

    Deterministic for ``seed``: finalist i, look k, side s uses
    ``seed.spawn(F)[i].spawn(looks)[k].spawn(2)[s]``.
    """
    sizes = look_sizes(n, looks)
    F = max(len(finalists), 1)
    m = len(sizes) * F
    a_test = alpha / m
    out = [Measured(f) for f in finalists]
    seeds = [s.spawn(len(sizes)) for s in seed.spawn(F)][:len(finalists)]
    history, stopped = [], "budget"
    for k, size in enumerate(sizes):
        row = {"runs_per_side": size, "eps_lb": [], "eps_ub": []}
        for i, ms in enumerate(out):
            s_d, s_dp = seeds[i][k].spawn(2)
            extra = size - ms.n
            ms.counts = [_add(ms.counts[0], ms.finalist.draw(0, extra, s_d)),
                         _add(ms.counts[1], ms.finalist.draw(1, extra, s_dp))]
            ev = ms.finalist.event
            ms.hits = (ms.counts[0].hits(ev.view_index, ev.cells),
                       ms.counts[1].hits(ev.view_index, ev.cells))
            ms.n = size
            k_num, k_den = ms.num_den()
            lb = float(eps_lower_bound(k_num, size, k_den, size, a_test, delta))
            ms.eps_ub = float(eps_upper_bound(k_num, size, k_den, size, a_test, delta))
            ms.eps_lb = max(ms.eps_lb, lb)
            ms.p_values.append(p_value(k_num, size, k_den, size, eps, delta))
            row["eps_lb"].append(lb)
            row["eps_ub"].append(ms.eps_ub)
        history.append(row)
        if any(ms.eps_lb > eps for ms in out):
            stopped = "violation"
            break
        if out and all(ms.eps_ub <= eps for ms in out):
            stopped = "futility"
            break
    pvals = [p for ms in out for p in ms.p_values]
    pvals += [1.0] * (m - len(pvals))
    p_adj = float(multipletests(pvals, alpha=alpha, method="bonferroni")[1].min())
    best = max(out, key=lambda ms: ms.eps_lb) if out else None
    return Measurement(measured=out, best=best, tests=m, alpha_per_test=a_test,
                       p_adjusted=p_adj, stopped=stopped, looks=history)
