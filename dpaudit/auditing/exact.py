"""The exact privacy loss of the released transcript on small instances.

A kernel's releases are its only randomness when every other draw (tie-breaking coins, rewards
beyond the table) is absent; the transcript (actions, τ, recommendation, status) is then a
function of the released values, and its law on a table is a sum over bit releases
(randomised response) and an integral over continuous ones (Laplace, Gaussian). Both tables of
a neighbouring pair are walked together, with the kernel run with the release values so far
frozen (the kernel contract's gray-box replay, :mod:`dpaudit.simulation.simulate`):

* a run that makes no release beyond the frozen values is a leaf: its transcript has
  conditional probability 1 on each table;
* a bit release branches on both values, weighted by P(y | v) on each table (exact values v
  as the run logged them, :func:`dpaudit.auditing.whitebox.log_density`); a logged coin (a
  uniform draw among k, e.g. an arm explored uniformly) on its k values, each 1/k;
* a continuous release's values are cut into cells, far ends at 700 Laplace scales (38
  standard deviations) from the exact values, so the mass outside is below 1e-300; on each
  cell the conditional law of every transcript is bounded by its values at the cell's two
  ends (the **cell condition**: it is monotone between neighbouring evaluated points), and a
  cell is split where the ends differ most until the undecided mass is below the tolerance.

The laws come out as bounds, lower and upper, on P_d(t) and P_d′(t) for every transcript t:
exact sums where the releases are bits, certified bounds under the cell condition where they
are continuous (the condition holds when every decision compares a statistic monotone in each
release with a threshold, and the cells are narrower than the gaps between its breakpoints).
A transcript's log ratio is also bounded above by the releases' largest loss on its leaf
(Σ |v − v′|/b for Laplace releases: the values each release reads are fixed by the actions,
so by the transcript). From the bounds:

* ε_exact = max over transcripts of |ln P_d(t) − ln P_d′(t)| (inf when one law puts mass
  where the other does not): the smallest ε for which the transcript is ε-DP on this pair,
  reported as an interval [low, high];
* δ(ε) = max of Σ_t (P_d(t) − e^ε P_d′(t))⁺ and its mirror (the hockey-stick divergence), and
  ε(δ) the smallest ε with δ(ε) ≤ δ, each an interval.

Scope: runs cut at the table's horizon (no reward beyond it), at most :data:`MAX_RUNS` kernel
runs. A kernel that draws other randomness is refused when one of its first
:data:`COIN_CHECKS` leaves replayed under another generator (seed i + 1 for leaf i) gives
another transcript: a fair coin that decides the transcript escapes this with probability
2^−(leaves checked).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri

from dpaudit.auditing.whitebox import log_density
from dpaudit.core.terms import PrivacyModel
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import COIN, GAUSSIAN, LAPLACE, RANDOMISED_RESPONSE

if TYPE_CHECKING:
    from dpaudit.algorithms.spec import AlgorithmSpec, Prepared
    from dpaudit.data.tables import NeighbourPair

MAX_RUNS = 1 << 20    # kernel runs (both tables) of one walk at most
SEED = 0              # the generator of the walk; leaf i is run again under seed i + 1
COIN_CHECKS = 64      # leaves replayed under another generator
TOL = 1e-2            # relative width of each transcript's bounds per continuous release
MAX_ROUNDS = 40       # bisection rounds per continuous release at most
MAX_CELLS = 4096      # cells per continuous release at most
TINY = 1e-290         # masses below it are not refined


class Infeasible(InputError):
    """The exact law cannot be computed on this instance (the message says why)."""


def frozen_run(spec: AlgorithmSpec, prep: Prepared, table: np.ndarray, limit: int,
               frozen: np.ndarray, seed: int | np.random.Generator) -> tuple:
    """One run with its first releases' values frozen (the kernel contract's replay).

    Args:
        spec: the algorithm (its kernel).
        prep: its prepared arrays.
        table: the reward table, float64 (the kernel's layout).
        limit: samples per run.
        frozen: float64 (k,): the values of its first k releases.
        seed: an int seed or a Generator (used as is).

    Returns:
        (transcript key: (actions bytes, τ, recommendation, status), releases float (n, 8)).
    """
    rows = max(64, 2 * frozen.shape[0] + 2)
    while True:
        actions, releases = np.zeros(limit, np.int16), np.zeros((rows, 8))
        tau, rec, status, n = (int(x) for x in spec.kernel(
            np.random.default_rng(seed), table, prep.means, prep.theta, prep.aux, limit,
            actions, releases, frozen))
        if n <= rows:
            return (actions[:min(tau, limit)].tobytes(), tau, rec, status), releases[:n]
        rows = n


class _Walk:
    """The walk of the release tree on both tables of a pair at once (module doc)."""

    def __init__(self, spec: AlgorithmSpec, prep: Prepared, tables: tuple, limit: int) -> None:
        self.spec, self.prep, self.limit = spec, prep, limit
        self.tables = [np.ascontiguousarray(t, dtype=np.float64) for t in tables]
        self.runs = self.leaves = 0
        self.caps: dict = {}            # transcript -> its largest release loss (nats)
        self.continuous = False
        self.rng = np.random.default_rng(SEED)   # draws beyond the frozen values: unused

    def node(self, frozen: np.ndarray, tol: float) -> dict:
        """Bounds {t: [lo_d, lo_d′, hi_d, hi_d′]} on the transcripts' laws given the prefix."""
        self.runs += 2
        if self.runs > MAX_RUNS:
            raise Infeasible(f"--exact: the law of {self.spec.name} on this instance needs "
                             f"more than {MAX_RUNS} kernel runs; audit a smaller instance "
                             "(K = 2, a shorter horizon)")
        outs = [frozen_run(self.spec, self.prep, t, self.limit, frozen, self.rng)
                for t in self.tables]
        k = frozen.shape[0]
        nxt = [rel[k] if rel.shape[0] > k else None for _, rel in outs]
        if nxt[0] is None and nxt[1] is None:
            return self._leaf(frozen, outs)
        fam = {int(r[7]) for r in nxt if r is not None}
        if len(fam) > 1:
            raise Infeasible(f"--exact: {self.spec.name}'s release {k} has different noise "
                             "families on the two tables")
        laws = [r if r is not None else nxt[1 - i] for i, r in enumerate(nxt)]
        if RANDOMISED_RESPONSE in fam or COIN in fam:
            return self._discrete(frozen, laws, tol)
        self.continuous = True
        if not all(float(r[6]) > 0 for r in laws):
            raise Infeasible(f"--exact: {self.spec.name}'s release {k} has no noise (scale 0: "
                             "a raw value); its loss is unbounded wherever the value differs")
        return self._cells(frozen, laws, tol)

    def _leaf(self, frozen: np.ndarray, outs: list) -> dict:
        self.leaves += 1
        keys = [key for key, _ in outs]
        if self.leaves <= COIN_CHECKS and any(
                frozen_run(self.spec, self.prep, t, self.limit, frozen, SEED + self.leaves)[0]
                != key for t, key in zip(self.tables, keys)):
            raise Infeasible(f"--exact: {self.spec.name}'s transcript changes with the "
                             "generator when every release is fixed: it draws randomness "
                             "besides its releases (coins), which --exact does not sum over")
        if keys[0] != keys[1]:
            for key in keys:
                self.caps[key] = np.inf
            return {keys[0]: np.array([1.0, 0.0, 1.0, 0.0]),
                    keys[1]: np.array([0.0, 1.0, 0.0, 1.0])}
        if keys[0] not in self.caps:
            self.caps[keys[0]] = _sup_loss(outs[0][1], outs[1][1])
        return {keys[0]: np.ones(4)}

    def _discrete(self, frozen: np.ndarray, laws: list, tol: float) -> dict:
        """Sum over a bit's two values or a coin's k, each weighted by its probability."""
        out: dict = {}
        values = ((1.0, 0.0) if int(laws[0][7]) == RANDOMISED_RESPONSE
                  else np.arange(int(laws[0][6]), dtype=float))
        for y in values:
            p = np.exp([float(log_density(r[7], y, r[4], r[6])) for r in laws])
            for key, b in self.node(np.append(frozen, y), tol).items():
                out[key] = out.get(key, 0.0) + np.tile(p, 2) * b
        return out

    def _cells(self, frozen: np.ndarray, laws: list, tol: float) -> dict:
        fam = int(laws[0][7])
        centres = np.array([float(r[4]) for r in laws])
        scales = np.array([float(r[6]) for r in laws])
        far = FAR_SCALES[fam] * scales[0]
        ys = np.array([centres.min() - far, *_quantiles(fam, centres[0], scales[0]),
                       centres.max() + far])
        keys: dict = {}                             # transcript -> column
        rows = [self._child(frozen, y, tol, keys) for y in ys]
        for done in range(MAX_ROUNDS + 1):
            ends = _stack(rows, len(keys))          # (points, transcripts, 4)
            m = _masses(fam, centres, scales, ys)[:, None, :]       # (cells, 1, 2)
            a, b = ends[:-1], ends[1:]
            gaps = m * np.abs(a[..., :2] + a[..., 2:] - b[..., :2] - b[..., 2:]) / 2
            lo = (m * np.minimum(a[..., :2], b[..., :2])).sum(axis=0)  # (transcripts, 2)
            bad = (gaps.sum(axis=0) > tol / 2 * lo + TINY).any(axis=1)
            if done == MAX_ROUNDS or not bad.any():
                break
            g = gaps[:, bad, :]                     # all but the smallest gaps summing to
            order = np.argsort(g, axis=0)           # tol/4 of a bad transcript's mass
            over = np.zeros(g.shape, bool)
            np.put_along_axis(over, order, np.cumsum(np.take_along_axis(g, order, 0), 0)
                              > tol / 4 * lo[bad] + TINY, 0)
            mids = (ys[:-1] + ys[1:]) / 2
            split = over.any(axis=(1, 2)) & (ys[:-1] < mids) & (mids < ys[1:])
            if not split.any() or ys.size + split.sum() > MAX_CELLS:
                break
            new = mids[split]                       # bisect where a bad transcript changes
            rows += [self._child(frozen, y, tol, keys) for y in new]
            order = np.argsort(np.concatenate([ys, new]), kind="stable")
            ys = np.concatenate([ys, new])[order]
            rows = [rows[i] for i in order]
        hi = (m * np.maximum(a[..., 2:], b[..., 2:])).sum(axis=0)
        tails = _masses(fam, centres, scales, np.array([-np.inf, ys[0]]))[0] + _masses(
            fam, centres, scales, np.array([ys[-1], np.inf]))[0]
        return {t: np.concatenate([lo[j], hi[j] + tails]) for t, j in keys.items()}

    def _child(self, frozen: np.ndarray, y: float, tol: float, keys: dict) -> dict:
        """The child node at value y, its transcripts given columns in ``keys``."""
        out = self.node(np.append(frozen, y), tol)
        for t in out:
            keys.setdefault(t, len(keys))
        return {keys[t]: v for t, v in out.items()}


def _stack(rows: list, width: int) -> np.ndarray:
    """Children's bounds as one array (points, transcripts, 4); absent transcripts 0."""
    out = np.zeros((len(rows), width, 4))
    for i, row in enumerate(rows):
        for j, v in row.items():
            out[i, j] = v
    return out


def _masses(fam: int, centres: np.ndarray, scales: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """P(y_i < Y ≤ y_i+1) per cell and table, float (cells, 2), accurate in both tails."""
    z = (ys[:, None] - centres[None, :]) / scales[None, :]     # (points, 2)
    with np.errstate(over="ignore"):
        if fam == LAPLACE:
            below, above = 0.5 * np.exp(np.minimum(z, 0)), 0.5 * np.exp(-np.maximum(z, 0))
        else:
            below, above = ndtr(np.minimum(z, 0)), ndtr(-np.maximum(z, 0))
    left = z[:-1] <= 0                      # the cell's lower end below the centre
    right = z[1:] >= 0                      # its upper end above it
    return np.where(~right, below[1:] - below[:-1],
                    np.where(~left, above[:-1] - above[1:], 1.0 - below[:-1] - above[1:]))


FAR_SCALES = {LAPLACE: 700.0, GAUSSIAN: 38.0}   # far ends: masses beyond below 1e-300
CELLS = 8                                        # first cells of a continuous release


def _quantiles(fam: int, v: float, s: float) -> np.ndarray:
    """The release law's quantiles at levels i/CELLS, i = 1..CELLS−1."""
    p = np.arange(1, CELLS) / CELLS
    if fam == LAPLACE:
        return v - s * np.sign(p - 0.5) * np.log1p(-2 * np.abs(p - 0.5))
    return v + s * ndtri(p)


def _sup_loss(rel: np.ndarray, rel_prime: np.ndarray) -> float:
    """The largest |ln f(y | v) − ln f(y | v′)| of a leaf's releases, summed over them.

    Laplace: |v − v′|/b; randomised response: the larger of y = 0, 1; Gaussian: 0 when the
    values agree, else inf (unbounded). Releases that differ in family or scale: inf.
    """
    if rel.shape != rel_prime.shape or (rel[:, 6:8] != rel_prime[:, 6:8]).any():
        return np.inf
    total = 0.0
    for r, rp in zip(rel, rel_prime):
        fam, v, vp, s = int(r[7]), float(r[4]), float(rp[4]), float(r[6])
        if v == vp:
            continue
        if fam == GAUSSIAN:
            return np.inf
        ys = (0.0, 1.0) if fam == RANDOMISED_RESPONSE else (v, vp)
        total += max(abs(float(log_density(fam, y, v, s) - log_density(fam, y, vp, s)))
                     for y in ys)
    return total


def transcript_laws(spec: AlgorithmSpec, prep: Prepared, tables: tuple, limit: int,
                    tol: float = TOL) -> tuple:
    """Bounds on the transcript's law on two tables (module doc).

    Args:
        spec: the algorithm (its kernel).
        prep: its prepared arrays.
        tables: (d, d′), reward tables of the kernel's layout.
        limit: samples per run (at most the tables' horizon: no reward beyond it).
        tol: the relative width allowed to each transcript's bounds per continuous release
            (the same at each deeper one).

    Returns:
        (keys: the transcripts, list; bounds: float (4, n): lower on d, lower on d′, upper on
        d, upper on d′; caps: float (n,) each transcript's largest release loss; method: how
        the bounds were computed: exact sums (bit releases), the cell condition (continuous
        ones), or the algorithm's own law (``spec.extra["exact_law"]``, with the same
        signature as this function's result after a runner of its kernel, e.g. LDP-UCB's
        first data-dependent action)).

    Raises:
        Infeasible: more than :data:`MAX_RUNS` kernel runs, releases of different families
            on the two tables, or a transcript that changes with the generator (randomness
            besides the releases).
    """
    own = spec.extra.get("exact_law")
    if own is not None:
        tables = tuple(np.ascontiguousarray(t, dtype=np.float64) for t in tables)
        try:
            keys, b, caps, method = own(functools.partial(_run, spec, prep, limit), prep,
                                        tables, limit)
        except InputError as e:
            raise Infeasible(str(e)) from None
        order = sorted(range(len(keys)), key=keys.__getitem__)
        return [keys[i] for i in order], b[:, order], caps[order], method
    walk = _Walk(spec, prep, tables, limit)
    law = walk.node(np.zeros(0), tol)
    keys = sorted(law)
    method = ("exact sum over release sequences (randomised-response releases)"
              if not walk.continuous else
              f"certified bounds: sums over bit releases, cell integrals over continuous "
              f"releases under the cell condition (relative width {tol:g} per release)")
    return (keys, np.array([law[k] for k in keys]).T,
            np.array([walk.caps[k] for k in keys]), method)


def _run(spec: AlgorithmSpec, prep: Prepared, limit: int, table: np.ndarray,
         frozen: np.ndarray, seed: int) -> tuple:
    """:func:`frozen_run` with the algorithm and limit bound: an algorithm's own law runs it."""
    return frozen_run(spec, prep, table, limit, frozen, seed)


def transcript_law(spec: AlgorithmSpec, prep: Prepared, table: np.ndarray,
                   limit: int, tol: float = TOL) -> dict:
    """Bounds on the transcript's law on one table.

    Args:
        spec: the algorithm (its kernel).
        prep: its prepared arrays.
        table: the reward table (the kernel's layout).
        limit: samples per run (at most the table's horizon).
        tol: as :func:`transcript_laws`.

    Returns:
        {transcript key: (lower, upper)}; equal where the releases are bits.

    Raises:
        Infeasible: as :func:`transcript_laws`.
    """
    keys, b, _, _ = transcript_laws(spec, prep, (table, table), limit, tol)
    return {k: (float(lo), float(hi)) for k, lo, hi in zip(keys, b[0], b[2])}


def horizon_of(table: np.ndarray, model: str) -> int:
    """Samples per run on a table: its horizon (a local pair's one reward: 1).

    Args:
        table: a table of the model's layout.
        model: its privacy model.

    Returns:
        The samples.
    """
    d = np.asarray(table)
    if d.ndim == 0:
        return 1
    return int(d.shape[1] if model == PrivacyModel.STREAM else d.shape[0])


def _limit(pair: NeighbourPair) -> int:
    """Samples per run: the pair's table horizon (:func:`horizon_of`)."""
    return horizon_of(pair.d, pair.model)


def precheck(spec: AlgorithmSpec, prep: Prepared, pair: NeighbourPair) -> None:
    """Refuse an instance whose one run already shows the law infeasible, before an audit.

    Args:
        spec: the algorithm.
        prep: its prepared arrays.
        pair: a neighbouring pair of the instance.

    Raises:
        Infeasible: the run's releases need more than :data:`MAX_RUNS` kernel runs at
            least (2 per bit release, k per coin of k values, :data:`CELLS` + 1 per continuous
            one, multiplied), or the algorithm's own law refuses the instance (it is computed
            on (d, d)).
    """
    limit = _limit(pair)
    table = np.ascontiguousarray(pair.d, dtype=np.float64)
    if "exact_law" in spec.extra:           # its own law says where it applies
        transcript_laws(spec, prep, (table, table), limit)
        return
    rel = frozen_run(spec, prep, table, limit, np.zeros(0), SEED)[1]
    coin = rel[:, 7] == COIN
    bits = int((rel[:, 7] == RANDOMISED_RESPONSE).sum()) + int(coin.sum())
    cont = rel.shape[0] - bits
    log_runs = (math.log(2.0) * (bits - coin.sum()) + np.log(rel[coin, 6]).sum()
                + math.log(CELLS + 1.0) * cont)
    if log_runs > math.log(MAX_RUNS):
        raise Infeasible(f"--exact: a run of {spec.name} makes {rel.shape[0]} releases within "
                         f"{limit} samples ({bits} discrete, {cont} continuous), at least "
                         f"e^{log_runs:.1f} kernel runs (at most {MAX_RUNS} = "
                         f"e^{math.log(MAX_RUNS):.1f}); audit a smaller instance (K = 2, a "
                         "shorter horizon)")


def _one_way(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """Σ (p − e^ε q)⁺."""
    return float(np.maximum(p - np.exp(eps) * q, 0.0).sum())


def hockey_stick(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """δ(ε) of a pair of laws on the same transcripts, the larger direction.

    Args:
        p: float (n,) probabilities on d.
        q: float (n,) on d′, the same transcripts.
        eps: ε ≥ 0.

    Returns:
        max(Σ (p − e^ε q)⁺, Σ (q − e^ε p)⁺).
    """
    return max(_one_way(p, q, eps), _one_way(q, p, eps))


EPS_CEILING = 50.0    # nats: ε(δ) above it is reported as inf


def _eps_at(divergence: Callable[[float], float], delta: float) -> float:
    """The smallest ε ≥ 0 with divergence(ε) ≤ δ, the divergence nonincreasing in ε."""
    if divergence(0.0) <= delta:
        return 0.0
    if divergence(EPS_CEILING) > delta:
        return float("inf")
    return float(brentq(lambda e: divergence(e) - delta, 0.0, EPS_CEILING, xtol=1e-12))


def eps_at_delta(p: np.ndarray, q: np.ndarray, delta: float) -> float:
    """The smallest ε ≥ 0 with δ(ε) ≤ δ (:func:`hockey_stick`, nonincreasing in ε).

    Args:
        p: float (n,) probabilities on d.
        q: float (n,) on d′.
        delta: δ in (0, 1).

    Returns:
        ε(δ) to 1e-12 nats; inf when even :data:`EPS_CEILING` leaves δ(ε) above δ.
    """
    return _eps_at(lambda e: hockey_stick(p, q, e), delta)


def exact_privacy(spec: AlgorithmSpec, prep: Prepared, pair: NeighbourPair, eps: float,
                  delta: float = 0.0) -> dict:
    """The transcript's exact ε and δ(ε) on a neighbouring pair, as bounds (module doc).

    Args:
        spec: the algorithm.
        prep: its prepared arrays at the claimed ε.
        pair: the neighbouring pair; runs are cut at its table's horizon.
        eps: the claimed ε.
        delta: the claimed δ (0: pure DP).

    Returns:
        JSON-ready: the claim's ``eps`` and ``delta``; ``eps_exact_bounds`` [low, high]
        (pure DP: the largest |log ratio| over transcripts; with δ > 0: ε(δ)) and
        ``eps_exact``, its high end (equal to the low end where the releases are bits);
        ``max_log_ratio`` (high end), ``delta_at_eps_bounds`` and ``delta_at_eps`` (its high
        end, δ at the claimed ε); ``witness`` (the transcript of the largest certain loss: τ,
        recommendation, status and its probability bounds on d and d′); ``undecided`` (the larger table's mass the bounds leave
        open), ``transcripts`` (distinct, over both tables), ``limit`` and ``method``.

    Raises:
        Infeasible: as :func:`transcript_laws`.
    """
    limit = _limit(pair)
    keys, (p_lo, q_lo, p_hi, q_hi), caps, method = transcript_laws(
        spec, prep, (pair.d, pair.d_prime), limit)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.nan_to_num(np.maximum(np.log(p_lo) - np.log(q_hi),
                                       np.log(q_lo) - np.log(p_hi)), nan=0.0, neginf=0.0)
        high = np.minimum(caps, np.nan_to_num(np.maximum(np.log(p_hi) - np.log(q_lo),
                                                         np.log(q_hi) - np.log(p_lo)),
                                              nan=np.inf))
    worst = (max(float(low.max()), 0.0), float(high.max()))

    def lower(e: float) -> float:
        return max(_one_way(p_lo, q_hi, e), _one_way(q_lo, p_hi, e))

    def upper(e: float) -> float:
        return max(_one_way(p_hi, q_lo, e), _one_way(q_hi, p_lo, e))

    at = worst if delta == 0 else (_eps_at(lower, delta), _eps_at(upper, delta))
    i = int(np.argmax(low))
    witness = {"tau": keys[i][1], "recommendation": keys[i][2], "status": keys[i][3],
               "p_d": [float(p_lo[i]), float(p_hi[i])],
               "p_d_prime": [float(q_lo[i]), float(q_hi[i])]}
    return {"eps": eps, "delta": delta, "eps_exact": at[1], "eps_exact_bounds": list(at),
            "witness": witness,
            "max_log_ratio": worst[1], "delta_at_eps": upper(eps),
            "delta_at_eps_bounds": [lower(eps), upper(eps)],
            "undecided": float(max((p_hi - p_lo).sum(), (q_hi - q_lo).sum())),
            "transcripts": len(keys), "limit": limit, "method": method}
