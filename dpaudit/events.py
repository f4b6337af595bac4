"""Event selection on a selection (pilot) sample: plug-in likelihood-ratio events over cells.

For a view (transcript truncated at L samples, :mod:`dpaudit.simulate`) and a direction
(numerator table d or d'), the cells are ranked by their smoothed ratio
((a + ½)/n) / ((b + ½)/n) on one half of the pilot sample (*ranking half*); the candidate events
are the unions of the top-j cells, j on a log-spaced grid. Each union is scored on the other
half (*scoring half*, independent of the ranking) by the ε lower bound it would give on a
measurement sample of ``n_meas`` runs per side if the probabilities were the scoring half's
pessimistic one-sigma values (Clopper–Pearson lower bound for the numerator, upper bound for the
denominator, at :data:`PLUG_IN_ALPHA`), so that a handful of hits against none cannot look
like a large loss. The best (view, direction, j) is returned. Only the measurement
sample, drawn afterwards, enters the reported bound, so this search costs no confidence.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.simulate import Counts
from dpaudit.stats import cp_lower, cp_upper, eps_lower_bound

GRID = 160  # union sizes scored per view and direction
PLUG_IN_ALPHA = 0.16  # one-sided level of the pessimistic plug-in probabilities (≈ one sigma)


@dataclass
class Event:
    """A set of cells of one view; ``numerator`` is the table ("d" or "d_prime") whose
    probability is on top of the privacy-loss ratio."""

    view: int          # prefix length L
    view_index: int
    cells: np.ndarray  # sorted uint64
    numerator: str
    predicted_lb: float
    scoring_hits: tuple[int, int]  # (numerator, denominator) hits on the scoring half


def _lookup(keys: np.ndarray, c: Counts, v: int) -> np.ndarray:
    """Counts of view ``v`` of ``c`` for each cell in ``keys`` (0 where absent)."""
    pos = np.searchsorted(c.cells[v], keys)
    pos = np.minimum(pos, max(c.cells[v].size - 1, 0))
    found = c.cells[v].size > 0
    hit = (c.cells[v][pos] == keys) if found else np.zeros(keys.size, bool)
    return np.where(hit, c.counts[v][pos] if found else 0, 0)


def best_event(rank: tuple[Counts, Counts], score: tuple[Counts, Counts], n_meas: int,
               alpha: float) -> Event | None:
    """Best event over all views and both directions, or None if no union has a positive
    scored bound. ``rank``/``score``: (counts on d, counts on d') of the two pilot halves;
    ``alpha``: the level the measurement will use."""
    best = None
    (r_d, r_dp), (s_d, s_dp) = rank, score
    for v, L in enumerate(r_d.views):
        for numerator, r_num, r_den, s_num, s_den in (("d_prime", r_dp, r_d, s_dp, s_d),
                                                      ("d", r_d, r_dp, s_d, s_dp)):
            keys = r_num.cells[v]          # cells seen on the numerator side while ranking
            if keys.size == 0:
                continue
            a = r_num.counts[v]
            b = _lookup(keys, r_den, v)
            order = np.argsort(-((a + 0.5) / r_num.n_runs) / ((b + 0.5) / r_den.n_runs),
                               kind="stable")
            A = np.cumsum(_lookup(keys[order], s_num, v))
            B = np.cumsum(_lookup(keys[order], s_den, v))
            js = np.unique(np.geomspace(1, keys.size, GRID).astype(np.int64)) - 1
            p_num = cp_lower(A[js], s_num.n_runs, PLUG_IN_ALPHA)
            p_den = cp_upper(B[js], s_den.n_runs, PLUG_IN_ALPHA)
            pred = eps_lower_bound(p_num * n_meas, n_meas, p_den * n_meas, n_meas, alpha)
            i = int(np.argmax(pred))
            if pred[i] > 0 and (best is None or pred[i] > best.predicted_lb):
                j = js[i]
                best = Event(view=int(L), view_index=v, cells=np.sort(keys[order[: j + 1]]),
                             numerator=numerator, predicted_lb=float(pred[i]),
                             scoring_hits=(int(A[j]), int(B[j])))
    return best
