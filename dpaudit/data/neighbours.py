"""Candidate neighbouring pairs: where to change the table, to which values, on which base.

Two generators:

* :func:`structured` (the default search, :mod:`dpaudit.auditing.search`): positions × value
patterns
  × base tables of the algorithm's privacy model (:mod:`dpaudit.data.tables`), with no
  per-algorithm hand-coding. Tables with at most :data:`MAX_POSITIONS` positions try every
  position; larger ones try the positions the algorithm's *release log* marks
  (:func:`release_positions`): the first samples (initial pulls), the samples at and just
  before every release (phase and episode boundaries), the last samples before stopping, and
  a geometric grid.
* :func:`candidates` (strategy ``structure``, the v1 generator): the rows the algorithm's
  ``structure`` hook names (e.g. AdaP-TT's initial pulls) on three bases (tied-high, tied-mid,
  instance), all-0 in d vs all-1 in d'.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from dpaudit.auditing.whitebox import RELEASE_ROWS
from dpaudit.core.terms import PrivacyModel
from dpaudit.data.tables import MODELS, NeighbourPair, base_tables

if TYPE_CHECKING:
    from dpaudit.algorithms.spec import AlgorithmSpec, Prepared

MAX_POSITIONS = 256   # positions tried exhaustively up to this many; else the release log's


def structured(model_name: str, means: Sequence[float], horizon: int, seed: int,
               positions: list[tuple] | None = None,
               extra_bases: Sequence = ()) -> list[NeighbourPair]:
    """Every (position, pattern, base) neighbouring pair of a model's tables.

    Deduplicated: a pair and its mirror image count once (the audit tries both directions).

    Args:
        model_name: the privacy model.
        means: the K arms' means.
        horizon: rows T.
        seed: the seed of the ``instance`` base table.
        positions: the positions to try (None: all of them).
        extra_bases: (table, recipe) bases added to
            :func:`dpaudit.data.tables.base_tables`' (an algorithm's own, e.g. DP-SE's
            threshold-boundary table).

    Returns:
        The pairs, ordered by position, then base, then pattern.
    """
    m = MODELS[model_name]
    bases = base_tables(model_name, means, horizon, seed) + list(extra_bases)
    if positions is None:
        positions = m.positions(m.shape(len(means), horizon))
    out, seen = [], set()
    for pos in positions:
        for table, recipe in bases:
            base_value = None if table is None else table[pos]
            for name, v_d, v_dp in m.patterns(base_value):
                pair = NeighbourPair.change(model_name, table, pos, v_d, v_dp, recipe,
                                            _why(model_name, pos), name)
                key = (pair.d.tobytes(), pair.d_prime.tobytes())
                if key in seen or key[::-1] in seen:
                    continue
                seen.add(key)
                out.append(pair)
    return out


def _why(model_name: str, pos: tuple) -> str:
    if model_name == PrivacyModel.LOCAL:
        return "the local reward"
    if model_name == PrivacyModel.STREAM:
        return f"pull {pos[1]} of arm {pos[0]}"
    return f"round {pos[0]}"


def select_positions(model_name: str, shape: tuple, marks: Sequence[tuple],
                     limit: int = MAX_POSITIONS
                     ) -> list[tuple]:
    """At most ``limit`` positions, by priority.

    Args:
        model_name: the privacy model.
        shape: the tables' shape.
        marks: positions the release log marks (:func:`release_positions`).
        limit: positions at most.

    Returns:
        All positions if there are no more; else, in this order of priority, the first 2K
        samples (K arms), the ``marks`` and a geometric grid up to the end of the table.
    """
    m = MODELS[model_name]
    every = m.positions(shape)
    if len(every) <= limit:
        return every
    if model_name == PrivacyModel.STREAM:
        K, T = shape
        first = [(a, n) for n in range(min(2, T)) for a in range(K)]
        grid = [(a, int(n)) for n in np.unique(np.geomspace(1, T, 24).astype(int) - 1)
                for a in range(K)]
    else:
        T, K = shape
        first = [(t,) for t in range(min(2 * K, T))]
        grid = [(int(t),) for t in np.unique(np.geomspace(1, T, 48).astype(int) - 1)]
    out = []
    for pos in first + sorted(set(marks)) + grid:
        if pos not in out and all(0 <= p < s for p, s in zip(pos, shape)):
            out.append(pos)
        if len(out) == limit:
            break
    return sorted(out)


def release_positions(spec: AlgorithmSpec, prep: Prepared, table: np.ndarray, limit: int, runs: int = 8,
                      seed: int = 0) -> set:
    """The positions the release log marks on a few runs.

    For every release made after s samples: the samples s − 1 and s (the last one it can read
    and the first one after it); and τ − 1, the last sample before stopping.

    Args:
        spec: the algorithm.
        prep: its prepared arrays.
        table: the table the runs read.
        limit: samples per run.
        runs: runs.
        seed: their seed.

    Returns:
        The positions: rows (t,) for user/full; (arm, pull index) for stream.
    """
    marks = set()
    rng = np.random.default_rng(seed)
    actions = np.empty(limit, np.int16)
    releases = np.empty((RELEASE_ROWS, 8))
    for _ in range(runs):
        tau, _, _, n_rel = (int(x) for x in spec.kernel(
            rng, table, prep.means, prep.theta, prep.aux, limit, actions, releases,
            np.empty(0)))
        samples = {int(s) for s in releases[:min(n_rel, RELEASE_ROWS), 0]}
        samples = {x for s in samples for x in (s - 1, s)} | {tau - 1}
        samples = {s for s in samples if 0 <= s < min(tau, limit)}
        if spec.model == PrivacyModel.STREAM:
            pulls = np.zeros(prep.means.shape[0], np.int64)
            index = np.empty(tau, np.int64)
            for t, a in enumerate(actions[:tau]):
                index[t] = pulls[a]
                pulls[a] += 1
            marks |= {(int(actions[s]), int(index[s])) for s in samples}
        else:
            marks |= {(s,) for s in samples}
    return marks


def candidates(spec: AlgorithmSpec, params: dict, table_seed: int) -> list[NeighbourPair]:
    """The candidates of the strategy ``structure``.

    The positions ``spec.structure(params)`` names × the bases tied-high, tied-mid and
    instance, the position all 0 in d and all 1 in d′. A position is a row (``user``/``full``)
    or a tuple (``(arm, pull)`` for ``stream``); positions outside the table are skipped.
    ``local``: the value patterns of :func:`structured`.

    Args:
        spec: the algorithm (tables of its model, horizon ``spec.audit_horizon(params)``).
        params: its parameters.
        table_seed: the seed of the ``instance`` base table.

    Returns:
        The pairs.
    """
    m = MODELS[spec.model]
    K = len(params["means"])
    H = spec.audit_horizon(params)
    if spec.model == PrivacyModel.LOCAL:     # one reward, no position to name: its value patterns
        return structured(PrivacyModel.LOCAL, params["means"], H, table_seed)
    shape = m.shape(K, H)
    bases = {r["name"]: (t, r) for t, r in base_tables(spec.model, params["means"], H,
                                                      table_seed)}
    out = []
    for pos, why in spec.structure(params):
        pos = (int(pos),) if np.isscalar(pos) else tuple(int(x) for x in pos)
        if len(pos) != len(shape) - 1 + (spec.model == PrivacyModel.STREAM) or \
                not all(0 <= x < n for x, n in zip(pos, shape)):
            continue
        for name in ("tied-high", "tied-mid", "instance"):
            table, recipe = bases[name]
            out.append(NeighbourPair.change(spec.model, table, pos, 0.0, 1.0, recipe, why))
    return out
