"""Event selection on a selection (pilot) sample: plug-in likelihood-ratio events over cells.

For a view (a window of the transcript, e.g. a prefix, :mod:`dpaudit.simulation.simulate`) and a
direction
(numerator table d or d'), the cells are ranked by their smoothed ratio
(a + ½)/(b + ½) on one half of the pilot sample (*ranking half*); the candidate events
are the unions of the top-j cells (every j for up to 4096 cells, else j on a log-spaced grid).
Callers may add other orderings (e.g. the natural order of a 1-D output: its prefixes and
suffixes are threshold events). Each union is scored on the other
half (*scoring half*, independent of the ranking) by the ε lower bound it would give on a
measurement sample of ``n_meas`` runs per side if the probabilities were the scoring half's
pessimistic three-sigma values (Clopper–Pearson lower bound for the numerator, upper bound for
the denominator, at :data:`PLUG_IN_ALPHA`), so that a union that was merely lucky on the
scoring half (a handful of hits against none, a far tail threshold among thousands of nested
thresholds) does not beat one with more mass. Measured on the default audits: with one or two
sigma, Laplace at ε = 0.1 chose tail events giving ε_lb/ε as low as 0.916 (20 seeds); with
three sigma every seed gave ≥ 0.974, and four sigma was too timid for the tail events of a
Gaussian (ε, δ) violation (noise × 0.8 caught in 24/30 audits instead of 20/20).

The best (view, direction, ordering, j) is returned. Only the measurement sample, drawn
afterwards, enters the reported bound, so this search costs no confidence.
:func:`candidate_events` returns the best union at each of :data:`CANDIDATE_LEVELS` instead,
for a caller that measures them all (their α split among them).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from statsmodels.stats.proportion import proportion_confint

from dpaudit.core.terms import Side
from dpaudit.simulation.simulate import Counts
from dpaudit.statistics.stats import cp_lower, cp_upper, eps_lower_bound

GRID = 160  # union sizes scored per view, direction and ordering (log grid) ...
FULL_GRID = 4096  # ... unless the view has at most this many cells: then every union size
PLUG_IN_ALPHA = 1.35e-3  # one-sided level of the pessimistic plug-in probabilities (3 sigma)
SHORTLIST = 32  # unions per view, direction and ordering scored exactly (pre-ranked by Wilson)
SPARSE = 0.5    # views with more distinct cells than this share of the runs (both sides) skipped
# plug-in levels of the candidate events a caller measures together: 3, 2 and 1 sigma
# pessimistic, the frequencies themselves and 1 sigma optimistic, from large events of smaller
# loss to small ones of larger loss (a small event of the largest loss, unlucky on the scoring
# half, is still among them: RAPPOR's "all 8 differing bits favour d", 0.5 % of the outputs)
CANDIDATE_LEVELS = (PLUG_IN_ALPHA, 0.02275, 0.1587, 0.5, 0.8413)


@dataclass
class Event:
    """A set of cells of one view, and the side on top of its ratio.

    A set of cells of one view; ``numerator`` is the table ("d" or "d_prime") whose
    probability is on top of the privacy-loss ratio.
    """

    view: tuple        # the view's window (start, end) of samples (start 0: a prefix)
    view_index: int
    cells: np.ndarray  # sorted uint64
    numerator: Side
    predicted_lb: float
    scoring_hits: tuple[int, int]  # (numerator, denominator) hits on the scoring half
    ordering: str = "likelihood ratio"  # the cell ordering whose prefix this event is
    median_lb: float = 0.0  # fallback events: the best union's bound at the frequencies


def lookup(keys: np.ndarray, c: Counts, v: int) -> np.ndarray:
    """Counts of one view for each cell in ``keys``.

    Args:
        keys: sorted uint64 cells, shape (m,).
        c: counts of a sample (:class:`~dpaudit.simulation.simulate.Counts`).
        v: the view's index.

    Returns:
        int64 array of shape (m,): the runs whose view-``v`` cell is each key (0 where absent).
    """
    pos = np.searchsorted(c.cells[v], keys)
    pos = np.minimum(pos, max(c.cells[v].size - 1, 0))
    found = c.cells[v].size > 0
    hit = (c.cells[v][pos] == keys) if found else np.zeros(keys.size, bool)
    return np.where(hit, c.counts[v][pos] if found else 0, 0)


def _aligned(v: int, rank: tuple[Counts, Counts], *samples: Counts):
    """The cells of view ``v`` seen while ranking, and every sample's counts on them.

    Cells of view ``v`` seen on the ranking half (either side), and every sample's counts
    on them (cells never seen while ranking have no ratio to rank them by: left out).
    """
    keys = np.union1d(rank[0].cells[v], rank[1].cells[v])
    return keys, [lookup(keys, c, v) for c in samples]


def _union_sizes(n_cells: int) -> np.ndarray:
    """The indices of the unions of first cells that are scored.

    0-based indices j of the unions "first j + 1 cells" scored: all of them up to
    :data:`FULL_GRID` cells, else a log-spaced grid of :data:`GRID` sizes.
    """
    if n_cells <= FULL_GRID:
        return np.arange(n_cells)
    return np.unique(np.geomspace(1, n_cells, GRID).astype(np.int64)) - 1


def predicted_bound(A: ArrayLike, B: ArrayLike, n: int, n_meas: int, alpha: float,
                    delta: float = 0.0) -> np.ndarray:
    """The ε lower bound an event's pilot hits predict for the measurement.

    The bound the measurement would give if the event's probabilities were their pessimistic
    three-sigma values (Clopper–Pearson at :data:`PLUG_IN_ALPHA`).

    Args:
        A: the event's hits on the numerator side in ``n`` pilot runs (scalar or array).
        B: its hits on the denominator side, broadcast against ``A``.
        n: pilot runs per side.
        n_meas: measurement runs per side.
        alpha: the measurement's level.
        delta: the claimed δ.

    Returns:
        float64 array (nats, ≥ 0) of the broadcast shape.
    """
    return _plug_in_bound((A, B), n, n_meas, alpha, delta, PLUG_IN_ALPHA)


def _plug_in_bound(hits: tuple, n: int, n_meas: int, alpha: float, delta: float,
                   level: float) -> np.ndarray:
    """:func:`predicted_bound` with the plug-in probabilities at one-sided ``level``.

    ``hits``: (numerator, denominator) hits in ``n`` runs per side; ``level`` 0.5 takes about
    the frequencies themselves (Clopper–Pearson medians: finite for 0 hits), a level above it
    moves them toward a larger loss (optimistic: the numerator up, the denominator down).
    """
    p_num = cp_lower(hits[0], n, level)
    p_den = cp_upper(hits[1], n, level)
    return eps_lower_bound(p_num * n_meas, n_meas, p_den * n_meas, n_meas, alpha, delta)


def validated_bound(event: Event, fresh: tuple[Counts, Counts], n_meas: int, alpha: float,
                    delta: float = 0.0) -> float:
    """The ε lower bound a chosen event's fresh frequencies predict for the measurement.

    The runs of ``fresh`` played no part in choosing the event, so no pessimism is needed:
    this compares events chosen on different pilots fairly (the best of many unions scored on
    one sample overrates itself).

    Args:
        event: the chosen event.
        fresh: (counts on d, counts on d′) of runs that did not choose it.
        n_meas: measurement runs per side.
        alpha: the measurement's level.
        delta: the claimed δ.

    Returns:
        The predicted bound in nats.
    """
    hits = [c.hits(event.view_index, event.cells) for c in fresh]
    num, den = (hits[1], hits[0]) if event.numerator == Side.D_PRIME else hits
    scale = n_meas / fresh[0].n_runs
    return float(eps_lower_bound(num * scale, n_meas, den * scale, n_meas, alpha, delta))


def _wilson_prediction(hits: tuple, n: int, n_meas: int, alpha: float, delta: float,
                       level: float) -> np.ndarray:
    """The predicted bound of every union, Wilson-approximated.

    The predicted bound of every union with each Clopper–Pearson bound replaced by its
    Wilson approximation (closed form, statsmodels): a cheap pre-ranking, see
    :data:`SHORTLIST`.
    """
    def wilson(k: ArrayLike, m: int, a: float) -> tuple:
        return proportion_confint(k, m, alpha=2 * a, method="wilson")

    p_num = wilson(hits[0], n, level)[0]
    p_den = wilson(hits[1], n, level)[1]
    lo = wilson(p_num * n_meas, n_meas, alpha / 2)[0] - delta
    hi = wilson(p_den * n_meas, n_meas, alpha / 2)[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.maximum(lo, 0.0)) - np.log(hi)


def _segments(pilot: tuple, orderings: Callable | None) -> list:
    """Every (view, direction, ordering) segment of a pilot, with its unions' scoring hits.

    Returns:
        (view index, window, keys, numerator, ordering name, order, js, A, B) per segment: the
        unions "first j + 1 cells of ``order``" for j in ``js`` and their scoring-half hits A
        (numerator side) and B (the other).
    """
    rank, score = pilot
    (r_d, r_dp), (s_d, s_dp) = rank, score
    if r_d.n_runs != r_dp.n_runs or s_d.n_runs != s_dp.n_runs:
        raise ValueError("both sides of a pilot half need the same number of runs")
    segments = []
    for v, L in enumerate(r_d.views):     # L: the view's window (or a 1-D output's index)
        if min(r_d.cells[v].size, r_dp.cells[v].size) > SPARSE * r_d.n_runs:
            continue    # most runs have a cell of their own: no event of this view generalises
        keys, (rd, rdp, sd, sdp) = _aligned(v, rank, r_d, r_dp, s_d, s_dp)
        if keys.size == 0:
            continue
        extra = orderings(v, keys) if orderings else []
        js = _union_sizes(keys.size)
        for numerator, rn, rx, sn, sx in ((Side.D_PRIME, rdp, rd, sdp, sd),
                                          (Side.D, rd, rdp, sd, sdp)):
            ratio = (rn + 0.5) / (rx + 0.5)
            for name, order in [("likelihood ratio", np.argsort(-ratio, kind="stable"))] + extra:
                segments.append((v, L, keys, numerator, name, order, js,
                                 np.cumsum(sn[order])[js], np.cumsum(sx[order])[js]))
    return segments


def _scored(segments: list, n: int, n_meas: int, alpha: float, delta: float,
            level: float) -> tuple:
    """The shortlisted unions of every segment and their predicted bounds at ``level``.

    Returns:
        (owner segment, index into its js, A, B, predicted bound), arrays of one length.
    """
    approx = _wilson_prediction((np.concatenate([g[7] for g in segments]),
                                 np.concatenate([g[8] for g in segments])), n, n_meas, alpha,
                                delta, level)
    owner, index, at = [], [], 0
    for k, g in enumerate(segments):
        m = g[7].size
        short = (np.arange(m) if m <= SHORTLIST else
                 np.sort(np.argsort(-approx[at:at + m], kind="stable")[:SHORTLIST]))
        owner.append(np.full(short.size, k))
        index.append(short)
        at += m
    owner, index = np.concatenate(owner), np.concatenate(index)
    A = np.array([segments[k][7][i] for k, i in zip(owner, index)], dtype=np.int64)
    B = np.array([segments[k][8][i] for k, i in zip(owner, index)], dtype=np.int64)
    return owner, index, A, B, _plug_in_bound((A, B), n, n_meas, alpha, delta, level)


def _event(segments: list, scored: tuple, top: int, predicted: float) -> Event:
    """The ``top``-th shortlisted union of :func:`_scored` as an :class:`Event`."""
    owner, index, A, B, _ = scored
    v, L, keys, numerator, name, order, js, _, _ = segments[owner[top]]
    j = js[index[top]]
    return Event(view=tuple(int(x) for x in np.ravel(L)), view_index=v,
                 cells=np.sort(keys[order[: j + 1]]), numerator=numerator,
                 predicted_lb=float(predicted), scoring_hits=(int(A[top]), int(B[top])),
                 ordering=name)


def best_event(pilot: tuple, n_meas: int, alpha: float, delta: float = 0.0,
               orderings: Callable | None = None,
               fallback: str = "") -> Event | None:
    """The best event over all views, both directions and all orderings.

    Every (view, direction, ordering) *segment* of unions of first cells is pre-ranked by
    :func:`_wilson_prediction`, and its best :data:`SHORTLIST` unions are scored exactly by the
    bound they would give at the measurement budget; all segments are scored in one vectorised
    call. The plug-in likelihood-ratio order (ranking half) is always tried.

    Args:
        pilot: (rank, score): (counts on d, counts on d′) of each pilot half.
        n_meas: measurement runs per side.
        alpha: the measurement's level.
        delta: the claimed δ (events are scored by the δ-loss bound).
        orderings: optional ``orderings(v, keys)`` giving extra orderings of a view's cells
            (a list of (name, permutation of ``keys``)), e.g. the natural order of a 1-D
            output, whose prefixes are threshold events.
        fallback: when no union has a positive scored bound, return instead of None, with
            ``predicted_lb`` 0: ``"raw"``, the raw best likelihood-ratio union; ``"median"``,
            the union whose bound is largest at the scoring half's frequencies themselves
            (plug-in level ½, that bound its ``median_lb``), the raw best when none is
            positive there either; ``""``: no fallback. The raw best likelihood-ratio union
            is the largest
            (A + ½)/(B + ½) over the scoring half's hits A on its numerator side and B on the
            other, ties to the most excess hits A − B, as long as one has A > B. Measuring it
            costs no confidence, may still reveal a violation, and its small probability
            under the denominator lets the verdict name a budget; a search's rounds rank
            pairs whose three-sigma predictions are all 0 by these events (on fresh runs, or
            by ``median_lb``).
            ``"median"`` serves mechanism audits, whose search ranks many pairs that all
            predict 0; the registered algorithms' audits keep ``"raw"``, on which their gate
            entries' passes rest (ldp-ncb, ldp-ncb-anytime: "median" made them inconclusive).

    Returns:
        The event, or None.
    """
    segments = _segments(pilot, orderings)
    if not segments:
        return None
    scored = _scored(segments, pilot[1][0].n_runs, n_meas, alpha, delta, PLUG_IN_ALPHA)
    _, _, A, B, pred = scored
    top = int(np.argmax(pred))
    if pred[top] > 0:
        return _event(segments, scored, top, pred[top])
    ratio = np.where(A > B, (A + 0.5) / (B + 0.5), 0.0)
    top = int(np.lexsort((A - B, ratio))[-1])
    if not fallback or A[top] <= B[top]:
        return None
    if fallback != "median":
        return _event(segments, scored, top, 0.0)
    at = _scored(segments, pilot[1][0].n_runs, n_meas, alpha, delta, 0.5)
    best = int(np.argmax(at[4]))
    ev = _event(*((segments, at, best) if at[4][best] > 0 else (segments, scored, top)), 0.0)
    ev.median_lb = max(float(at[4][best]), 0.0)
    return ev


def candidate_events(pilot: tuple, n_meas: int, alpha: float, delta: float = 0.0,
                     orderings: Callable | None = None) -> list[Event]:
    """The best event at each plug-in level of :data:`CANDIDATE_LEVELS`, all to be measured.

    The three-sigma plug-in of :func:`best_event` guards a choice made on the scoring half
    alone, and pays for it with mass: on an output whose largest loss sits on a small event
    (RAPPOR's "every differing bit favours d", 0.5 % of the outputs) it prefers a larger
    event of smaller loss. Scored less pessimistically, or optimistically, the same unions
    trade mass for loss differently; the caller measures every candidate on runs of its own
    (α split among them), so no lucky union can carry the result and none is chosen by the
    noise of a few hundred outputs.

    Args:
        pilot: (rank, score) as for :func:`best_event`.
        n_meas: measurement runs per side.
        alpha: the measurement's level.
        delta: the claimed δ.
        orderings: extra orderings as for :func:`best_event`.

    Returns:
        Distinct events with a positive predicted bound at their level and at three sigma,
        most pessimistic level first (at most one per level; empty when none has one); each
        one's ``predicted_lb`` is its three-sigma prediction, as for :func:`best_event` (a
        union whose three-sigma prediction is 0 was lucky on the scoring half at its level
        and would be again, by chance, on the few fresh runs that fall in it).
    """
    segments = _segments(pilot, orderings)
    out, seen = [], set()
    for level in CANDIDATE_LEVELS if segments else ():
        scored = _scored(segments, pilot[1][0].n_runs, n_meas, alpha, delta, level)
        top = int(np.argmax(scored[4]))
        key = (int(scored[0][top]), int(scored[1][top]))
        if scored[4][top] <= 0 or key in seen:
            continue
        seen.add(key)
        A, B = scored[2][top], scored[3][top]
        three_sigma = predicted_bound(A, B, pilot[1][0].n_runs, n_meas, alpha, delta)
        if three_sigma > 0:     # a union lucky on the scoring half: tiny, 3-sigma bound 0
            out.append(_event(segments, scored, top, three_sigma))
    return out
