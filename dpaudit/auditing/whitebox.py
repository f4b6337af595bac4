"""White-box privacy loss and gray-box replay of a kernel's noisy releases.

White-box privacy loss and gray-box replay of a kernel's noisy releases
(docs/method/whitebox.md).

Every reference kernel logs its internal noisy releases (``releases`` buffer, columns
:data:`dpaudit.simulation.simulate.RELEASE_COLUMNS`) and can *replay* a run with its released
values frozen
(``frozen`` argument of the kernel contract, :mod:`dpaudit.simulation.simulate`). For a
neighbouring pair
(d, d') and one direction, say d -> d', each run is

1. **generated** on d with a fresh Generator: it logs releases j = 0..m−1 with exact values v_j,
   released values y_j, noise family and scale;
2. **replayed** on d' with an identically seeded Generator and ``frozen = (y_0, ..., y_{m−1})``:
   every release draws its noise as usual (so the rng stream stays aligned) but releases y_j, so
   the replay follows the same released values and reports the d'-value v'_j of each release
   given the same history.

**Privacy loss of the releases** (item 5). The run's loss is

    L = Σ_j [ln f_j(y_j | v_j) − ln f'_j(y_j | v'_j)],

the privacy-loss random variable of the released values y (product of the conditional
densities of adaptive composition) at the realised output. The log-density ratios are exact:
Laplace (dist 0, scale b): (|y − v'| − |y − v|)/b; Gaussian (dist 1, sd σ):
((y − v')² − (y − v)²)/(2σ²); randomised response (dist 2, binary y, s = scale):
ln P(y | v) − ln P(y | v') with P(1 | v) = (1 + v(e^s − 1))/(1 + e^s). A mechanism that is
ε-DP in its releases has L ≤ ε on every output, so ``max_loss`` over runs is a *deterministic*
lower bound on the releases' privacy loss: ``max_loss > ε`` (up to rounding, see
:data:`TOLERANCE`) is a violation without any statistics. Both directions are run (d -> d' gives
ln p_d/p_d' on outputs drawn under d, d' -> d the reverse).

**Gray-box replay** (item 6). The replay also yields a transcript (actions, τ, â, status). If
every decision reads the data only through releases, the replay is bit-identical to the
original: the only difference between the two runs is the changed row, and the released values
and the rng stream are shared. Any divergence means raw data reached a decision without noise.
Reported: the number of divergent runs, the first divergent step (min over runs, 0-based sample
index = samples taken before it) and an example.

Scope and caveats:

* Runs are simulated for at most ``limit`` samples (default 16 × the table length); only
  releases made before ``limit`` contribute. Rows at or beyond the table are Bernoulli(means)
  drawn from the run's rng (kernel contract): identical in the original and the replay while
  their transcripts agree, so the pair stays a neighbouring pair of extended tables.
* In a divergent run only releases made at or before the divergent step contribute (after it
  the two runs no longer share a history, and rows beyond the table may no longer be shared).
  Those runs are flagged by the replay anyway.
* A non-private kernel with no releases (``ttucb``) has loss 0 and diverges: expected.

Determinism: run i of direction k (0 = d -> d', 1 = d' -> d) uses
``SeedSequence(seed.entropy, spawn_key=seed.spawn_key + (k, i))`` (the i-th child of the k-th
child of ``seed``, computed without mutating ``seed``), so a seed gives identical results.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from collections.abc import Callable
from typing import TYPE_CHECKING

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from dpaudit.core.request import Claim
from dpaudit.core.terms import PrivacyModel, Side
from dpaudit.simulation.simulate import (COIN, GAUSSIAN, LAPLACE, RANDOMISED_RESPONSE,
                                         STATUS_NAMES, cached_loop, child_seed, seed_sequence)
from dpaudit.simulation.seeding import addresses, pcg64_states, set_state
from dpaudit.statistics import accounting
from dpaudit.statistics.stats import mean_lower_bound

if TYPE_CHECKING:
    from dpaudit.algorithms.spec import AlgorithmSpec, Prepared
    from dpaudit.data.tables import NeighbourPair

RELEASE_ROWS = 4096      # initial release buffer rows per run (grown when a run makes more)
MAX_RELEASE_ROWS = 1 << 22  # more releases in one run raise RuntimeError
DEFAULT_LIMIT_FACTOR = 16  # default limit = 16 × the table length
TOLERANCE = (1e-9, 1e-12)  # violation iff max_loss > eps·(1 + 1e-9) + 1e-12 (float rounding)
DIRECTIONS = ("d->d'", "d'->d")
QUANTILES = (("50", 0.5), ("90", 0.9), ("99", 0.99), ("99.9", 0.999))
MAX_LISTED = 64          # per-release rows listed for the worst run
PROFILE_POINTS = 41      # the accountant's composed δ(ε) at ε = 0, ..., 2 × the claimed ε


# ------------------------------------------------------------------------ log densities

@nb.njit(cache=True)
def _logpdf(dist: float, y: float, v: float, scale: float) -> float:
    """Ln density or ln probability of output y of a release of exact value v.

    Ln density (Laplace, Gaussian) or ln probability (randomised response, coin) of output y
    for exact value v; NaN for an unknown family, a non-binary randomised-response output, a
    coin output outside {0, ..., scale − 1} or a non-positive Laplace/Gaussian scale.
    """
    if dist == LAPLACE:
        if not scale > 0.0:
            return np.nan
        return -math.log(2.0 * scale) - abs(y - v) / scale
    if dist == GAUSSIAN:
        if not scale > 0.0:
            return np.nan
        z = (y - v) / scale
        return -0.5 * z * z - math.log(scale) - 0.5 * math.log(2.0 * math.pi)
    if dist == RANDOMISED_RESPONSE:
        # P(1 | v) = (1 + v·(e^s − 1))/(1 + e^s), P(0 | v) = (1 + (1 − v)·(e^s − 1))/(1 + e^s)
        e = math.expm1(scale)
        norm = max(scale, 0.0) + math.log1p(math.exp(-abs(scale)))   # ln(1 + e^s)
        if y == 1.0:
            return math.log1p(v * e) - norm
        if y == 0.0:
            return math.log1p((1.0 - v) * e) - norm
    if dist == COIN and scale >= 1.0 and 0.0 <= y < scale and y == math.floor(y):
        return -math.log(scale)                  # one of `scale` equally likely indices
    return np.nan


@nb.njit(cache=True)
def _log_ratio(dist: float, y: float, v: float, scale: float, dist_p: float, v_p: float,
               scale_p: float) -> float:
    """Ln f(y | v) − ln f'(y | v') of one release.

    Ln f(y | v) − ln f'(y | v'): exact closed forms when family and scale agree (so that
    v == v' gives exactly 0); a Laplace or Gaussian release of scale 0 on both tables is a
    point mass at its exact value (loss 0 where v == v', else ±∞ at y = v or v'); else the
    difference of the two log densities.
    """
    if dist == dist_p and scale == scale_p and scale > 0.0:
        if dist == LAPLACE:
            return (abs(y - v_p) - abs(y - v)) / scale
        if dist == GAUSSIAN:
            return ((y - v_p) * (y - v_p) - (y - v) * (y - v)) / (2.0 * scale * scale)
    if dist == dist_p and (dist == LAPLACE or dist == GAUSSIAN) and scale == 0.0 \
            and scale_p == 0.0:        # no noise (a mutant's raw release): point masses
        if v == v_p:
            return 0.0
        if y == v:
            return np.inf
        if y == v_p:
            return -np.inf
    return _logpdf(dist, y, v, scale) - _logpdf(dist_p, y, v_p, scale_p)


@nb.njit(cache=True)
def _logpdf_loop(dist: np.ndarray, y: np.ndarray, v: np.ndarray, scale: np.ndarray,
                 out: np.ndarray) -> None:
    for i in range(out.shape[0]):
        out[i] = _logpdf(dist[i], y[i], v[i], scale[i])


@nb.njit(cache=True)
def _ratio_loop(dist: np.ndarray, y: np.ndarray, v: np.ndarray, scale: np.ndarray,
                dist_p: np.ndarray, v_p: np.ndarray, scale_p: np.ndarray, out: np.ndarray) -> None:
    for i in range(out.shape[0]):
        out[i] = _log_ratio(dist[i], y[i], v[i], scale[i], dist_p[i], v_p[i], scale_p[i])


def _flat(*xs: ArrayLike) -> tuple:
    b = np.broadcast_arrays(*[np.asarray(x, dtype=np.float64) for x in xs])
    return b[0].shape, [np.ascontiguousarray(x).ravel() for x in b]


def log_density(dist: ArrayLike, y: ArrayLike, value: ArrayLike, scale: ArrayLike) -> np.ndarray:
    """Ln f(y | value) of releases, vectorised (NumPy broadcasting over all arguments).

    Args:
        dist: the family: :data:`~dpaudit.simulation.simulate.LAPLACE` (scale = b),
            ``GAUSSIAN`` (scale = sd), ``RANDOMISED_RESPONSE`` (y ∈ {0, 1}, value ∈ [0, 1],
            scale = s; a log *probability*) or ``COIN`` (y ∈ {0, ..., scale − 1}: −ln scale).
        y: the released values.
        value: the exact values.
        scale: the noise scales.

    Returns:
        float64 array of the broadcast shape.

    Raises:
        ValueError: an unknown family, a non-binary randomised-response output, a coin output
            outside its range or a non-positive Laplace/Gaussian scale.
    """
    shape, (d, yy, v, s) = _flat(dist, y, value, scale)
    out = np.empty(d.size)
    _logpdf_loop(d, yy, v, s, out)
    _check(out, d, yy)
    return out.reshape(shape)


def log_density_ratio(dist: ArrayLike, y: ArrayLike, value: ArrayLike, value_prime: ArrayLike,
                      scale: ArrayLike, prime: tuple | None = None) -> np.ndarray:
    """Ln f(y | value) − ln f′(y | value_prime) of releases, vectorised.

    Laplace: (|y − v′| − |y − v|)/b; Gaussian: ((y − v′)² − (y − v)²)/(2σ²); randomised
    response: ln P(y | v) − ln P(y | v′).

    Args:
        dist: the family of f (as :func:`log_density`).
        y: the released values.
        value: the exact values on one table.
        value_prime: the exact values on the other.
        scale: the noise scales of f.
        prime: (dist′, scale′) of f′ (None: those of f).

    Returns:
        float64 array of the broadcast shape (nats).

    Raises:
        ValueError: as :func:`log_density`.
    """
    dist_prime, scale_prime = (dist, scale) if prime is None else prime
    shape, (d, yy, v, s, dp, vp, sp) = _flat(dist, y, value, scale, dist_prime, value_prime,
                                             scale_prime)
    out = np.empty(d.size)
    _ratio_loop(d, yy, v, s, dp, vp, sp, out)
    _check(out, d, yy)
    return out.reshape(shape)


def _check(out: np.ndarray, d: np.ndarray, y: np.ndarray) -> None:
    bad = np.isnan(out)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"release with dist={d[i]:g}, y={y[i]!r}: no finite log density "
                         "(unknown family, output outside the family's range or bad scale)")


# -------------------------------------------------------------------------- one run pair

@nb.njit(cache=True)
def _compare(a1: np.ndarray, tau1: int, rec1: int, st1: int, rel1: np.ndarray, n1: int,
             a2: np.ndarray, tau2: int, rec2: int, st2: int, rel2: np.ndarray,
             n2: int) -> tuple:
    """Compare a run (1) with its replay (2).

    Returns (step, loss, counted, bad): ``step`` = first divergent step (-1 if the transcripts
    agree): the first t < min(τ1, τ2) with a1[t] ≠ a2[t], else min(τ1, τ2) if τ, â or status
    differ; ``loss`` = Σ of the log-density ratios of releases j < min(n1, n2) made at or
    before ``step`` (all of them if no divergence); ``counted`` = releases summed; ``bad`` =
    -1, or the index of a release whose replay did not release the frozen value (contract
    violation: -2 - j) or whose ratio is undefined (NaN: j); a raw release (scale 0) whose
    value differs between the tables adds +∞.
    """
    m = min(tau1, tau2)
    step = -1
    for t in range(m):
        if a1[t] != a2[t]:
            step = t
            break
    if step < 0 and (tau1 != tau2 or rec1 != rec2 or st1 != st2):
        step = m
    loss = 0.0
    counted = 0
    for j in range(min(n1, n2)):
        if rel2[j, 5] != rel1[j, 5]:
            return step, loss, counted, -2 - j
        if step >= 0 and rel1[j, 0] > step:
            break
        c = _log_ratio(rel1[j, 7], rel1[j, 5], rel1[j, 4], rel1[j, 6],
                       rel2[j, 7], rel2[j, 4], rel2[j, 6])
        if math.isnan(c):           # +inf stays: a raw release's value on its own table
            return step, loss, counted, j
        loss += c
        counted += 1
    return step, loss, counted, -1


def _start(child: np.random.SeedSequence) -> dict:
    """The state of a fresh ``Generator(PCG64(child))``: where a run seeded by ``child`` starts."""
    return np.random.PCG64(child).state


# ------------------------------------------------------------------ compiled run/replay loops

COUPLED, REPLAY = 0, 1      # a pair loop's mode: runs on both tables, or a run and its replay
GOING, OVERFLOW, BAD, PHASES = 0, 1, 2, 3   # why a pair loop returned (its control's WHY)
NEXT, END, MODE, WHY, NEED, HORIZON, PHASE0 = range(7)   # the control array of a pair loop
STEP, COUNTED, BAD_ROW, READ, READ_ANY = 8, 9, 10, 11, 12   # record columns after
RECORD_COLUMNS = 13                                 # (τ, rec, status, releases) × 2
FIRST_COLUMNS = 4         # a pair's first release that read the position: dist, scale, v, v'
PHASE_SLOTS = 16          # phases a sweep's histogram holds at first (widened when needed)


@nb.njit(cache=True)
def pair_next(work: tuple) -> bool:
    """Whether a pair loop goes on; if so, both generators set where the next pair starts.

    Args:
        work: the loop's buffers (:func:`pair_body`).

    Returns:
        True while pairs are left and the last one needs nothing from Python.
    """
    ctl, states, where = work[7], work[8], work[9]
    if ctl[NEXT] >= ctl[END] or ctl[WHY] != GOING:
        return False
    set_state(where, 0, states[ctl[NEXT]])
    set_state(where, 1, states[ctl[NEXT]])
    return True


@nb.njit(cache=True)
def pair_frozen(work: tuple, n: int) -> np.ndarray:
    """The values the second run of a pair releases (the kernel's ``frozen``).

    Args:
        work: the loop's buffers (:func:`pair_body`).
        n: releases the first run made.

    Returns:
        float64 (n,): its released values (mode REPLAY; n cut at the buffer's rows, the loop
        then grows it and runs the pair again), or none (mode COUPLED).
    """
    r1, frozen, ctl = work[2], work[4], work[7]
    if ctl[MODE] == COUPLED:
        return frozen[:0]
    n = min(n, r1.shape[0])
    for j in range(n):
        frozen[j] = r1[j, 5]
    return frozen[:n]


@nb.njit(cache=True)
def pair_record(work: tuple, o: tuple, r: tuple) -> None:
    """Record a pair's outcome, or stop the loop for Python.

    The runs' transcripts are compared (and in mode REPLAY the releases' loss summed,
    :func:`_compare`); the loop stops when the release buffers were too small (OVERFLOW:
    nothing recorded, the rows needed in the control) or a release broke the contract (BAD).

    Args:
        work: the loop's buffers (:func:`pair_body`).
        o: the first run's (τ, recommendation, status, releases).
        r: the second's.
    """
    a1, a2, r1, r2, _, rec, loss, ctl = work[:8]
    if o[3] > r1.shape[0] or r[3] > r2.shape[0]:
        ctl[WHY], ctl[NEED] = OVERFLOW, max(o[3], r[3])
        return
    n = min(o[3], r[3]) if ctl[MODE] == REPLAY else 0   # coupled runs: transcripts only
    step, lo, counted, bad = _compare(a1, o[0], o[1], o[2], r1, n, a2, r[0], r[1], r[2], r2, n)
    read, total = _reads(work, counted, step)
    if read < 0:
        return
    i = ctl[NEXT]
    _first_read(work, counted, i)
    for c in range(4):
        rec[i, c], rec[i, 4 + c] = o[c], r[c]
    rec[i, STEP], rec[i, COUNTED], rec[i, BAD_ROW] = step, counted, bad
    rec[i, READ], rec[i, READ_ANY] = read, total > 0 or step >= 0
    loss[i] = lo
    ctl[NEXT] = i + 1
    if bad != -1:
        ctl[WHY] = BAD


@nb.njit(cache=True)
def _first_read(work: tuple, counted: int, i: int) -> None:
    """Record pair i's first release that read the changed position (``work[11][i]``).

    Its noise family and scale and its exact values in the run and the replay; family −1 when
    no release among the first ``counted`` read it, or when the replay's release had another
    family or scale (no fixed mechanism given the history).
    """
    r1, r2, first = work[2], work[3], work[11]
    first[i, 0] = -1.0
    for j in range(counted):
        if r1[j, 4] != r2[j, 4]:
            if r1[j, 7] == r2[j, 7] and r1[j, 6] == r2[j, 6]:
                first[i, 0], first[i, 1] = r1[j, 7], r1[j, 6]
                first[i, 2], first[i, 3] = r1[j, 4], r2[j, 4]
            return


@nb.njit(cache=True)
def _reads(work: tuple, counted: int, step: int) -> tuple:
    """Whether this pair's run read the changed position within the horizon, and how often.

    Rows j < ``counted`` whose exact value differs between the run and its replay read it (at
    any time: ``total``); those released by the horizon (samples) count per phase in the
    histogram ``work[10]`` (releases, runs with one, the last run that had one); a decision
    read it when the replay diverged before the horizon. Returns (read, total), or (-1, 0)
    with the loop stopped (PHASES) when a phase falls outside the histogram.
    """
    r1, r2, ctl, hist = work[2], work[3], work[7], work[10]
    horizon, p0, i = ctl[HORIZON], ctl[PHASE0], ctl[NEXT]
    hits, total = 0, 0
    for j in range(counted):
        if r1[j, 4] != r2[j, 4]:
            total += 1
            if r1[j, 0] <= horizon:
                ph = int(r1[j, 2]) - p0
                if ph < 0 or ph >= hist.shape[1]:
                    ctl[WHY], ctl[NEED] = PHASES, int(r1[j, 2])
                    return -1, 0
                hits += 1
    for j in range(counted):
        if r1[j, 4] != r2[j, 4] and r1[j, 0] <= horizon:
            ph = int(r1[j, 2]) - p0
            hist[0, ph] += 1
            if hist[2, ph] != i + 1:
                hist[1, ph] += 1
                hist[2, ph] = i + 1
    return int(hits > 0 or 0 <= step < horizon), total


@nb.njit(nogil=True)
def pair_body(kernel: Callable, rng: np.random.Generator, rng2: np.random.Generator,
              table: np.ndarray, table2: np.ndarray, means: np.ndarray, theta: np.ndarray,
              aux: np.ndarray, limit: int, work: tuple) -> None:
    """The run/replay loop of :meth:`_Runner.sweep` for any ``kernel`` (a first-class function).

    Pair i runs the kernel on ``table`` with ``rng`` and on ``table2`` with ``rng2``, both set
    to the state of pair i (a fresh ``PCG64`` of its seed: :mod:`dpaudit.simulation.seeding`);
    mode REPLAY: the second run releases the first's values (``frozen``), COUPLED: its own.
    Not cached (a function argument: see :func:`dpaudit.simulation.simulate.batch_body`);
    algorithm modules declare the same loop with their kernel called directly in
    ``PAIR_LOOPS``.

    Args:
        kernel: a compiled kernel (the kernel contract of :mod:`dpaudit.simulation.simulate`).
        rng: the first runs' generator.
        rng2: the second runs' generator.
        table: the first runs' table.
        table2: the second runs' table.
        means: the arms' means (rewards beyond the table).
        theta: the kernel's parameters.
        aux: its auxiliary array.
        limit: samples per run at most.
        work: (actions, actions2, releases, releases2, frozen, records int64 (runs, 13), loss
            float64 (runs,), control int64 (7,) [next pair, end, mode, why, rows or phase
            needed, horizon, first phase], states uint64 (runs, 4), the generators' addresses
            int64 (2, 2), the phases read int64 (3, P): releases, runs, last run, the first
            release that read the changed position float64 (runs, :data:`FIRST_COLUMNS`)).
    """
    while pair_next(work):
        o = kernel(rng, table, means, theta, aux, limit, work[0], work[2], pair_frozen(work, 0))
        r = kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                   pair_frozen(work, o[3]))
        pair_record(work, o, r)


_SCRATCH: list = []


def _scratch() -> tuple:
    """This process's two scratch generators and their addresses (:func:`addresses`).

    Every run sets them to its own state first (:func:`_start`, :func:`set_state`), so all
    runners share them: none is built per candidate.
    """
    if not _SCRATCH:
        gens = [np.random.Generator(np.random.PCG64(0)) for _ in range(2)]
        _SCRATCH.extend([*gens, addresses(*gens)])
    return tuple(_SCRATCH)


class _Runner:
    """Buffers and inputs for original/replay pairs of one (spec, prep, pair, limit)."""

    def __init__(self, spec: AlgorithmSpec, prep: Prepared, src: np.ndarray, dst: np.ndarray,
                 limit: int) -> None:
        """Buffers for runs of ``spec`` on ``src`` replayed on ``dst``, ``limit`` samples each."""
        self.kernel, self.prep = spec.kernel, prep
        self.src, self.dst, self.limit = src, dst, limit
        self.a1, self.a2 = np.empty(limit, np.int16), np.empty(limit, np.int16)
        self.r1, self.r2 = np.empty((RELEASE_ROWS, 8)), np.empty((RELEASE_ROWS, 8))
        self.empty = np.empty(0)
        self.frozen = np.empty(RELEASE_ROWS)
        self.name = spec.name
        loop = cached_loop(spec.kernel, "PAIR_LOOPS")
        self.loop = (loop, ()) if loop is not None else (pair_body, (spec.kernel,))
        # generators set to each run's state: the same draws as a fresh Generator of the
        # run's seed, without building one (and its ctypes interface for numba) per run
        self.rng, self.rng2, self.where = _scratch()
        self.horizon = limit    # samples within which a sweep counts what read the position

    def _call(self, state: dict, table: np.ndarray, actions: np.ndarray, buf: str,
              frozen: np.ndarray) -> tuple[int, int, int, int]:
        """One run into a release buffer, its buffer grown when it overflows.

        One run, its generator set to ``state`` (:func:`_start`), into release buffer ``buf``
        ("r1" or "r2"); a run that makes more releases than the buffer holds is simulated
        again (it is deterministic given ``state``) with a buffer that holds them all (up to
        :data:`MAX_RELEASE_ROWS`).
        """
        p = self.prep
        while True:
            releases = getattr(self, buf)
            self.rng.bit_generator.state = state
            out = self.kernel(self.rng, table, p.means, p.theta, p.aux, self.limit, actions,
                              releases, frozen)
            tau, rec, status, nr = (int(x) for x in out)
            if nr <= releases.shape[0]:
                return tau, rec, status, nr
            if nr > MAX_RELEASE_ROWS:
                raise RuntimeError(f"{self.name}: a run made {nr} releases, more than the "
                                   f"white-box buffer holds ({MAX_RELEASE_ROWS}); lower limit "
                                   f"(now {self.limit})")
            setattr(self, buf, np.empty((nr, 8)))

    def _grow(self, rows: int) -> None:
        if rows > MAX_RELEASE_ROWS:
            raise RuntimeError(f"{self.name}: a run made {rows} releases, more than the "
                               f"white-box buffer holds ({MAX_RELEASE_ROWS}); lower limit "
                               f"(now {self.limit})")
        self.r1, self.r2, self.frozen = np.empty((rows, 8)), np.empty((rows, 8)), np.empty(rows)

    def sweep(self, seed: np.random.SeedSequence, key: tuple, runs: int | tuple,
              mode: int) -> tuple:
        """Pairs 0 .. ``runs`` − 1 (or ``runs`` = (i0, i1): i0 .. i1 − 1) in a compiled loop.

        Pair i starts both runs from ``Generator(PCG64(child_seed(seed, *key, i)))``'s state,
        as :meth:`pair` from that state would: the same records (:func:`pair_body`). Python
        steps in only to grow the release buffers or the phase histogram (the pair is run
        again) or to raise.

        Args:
            seed: the parent seed.
            key: the spawn-key levels between it and the pairs.
            runs: pairs.
            mode: :data:`REPLAY` (src, then dst releasing the same values: white-box loss) or
                :data:`COUPLED` (src and dst, each its own releases: transcripts only).

        Returns:
            (records int64 (runs, :data:`RECORD_COLUMNS`): τ, recommendation, status and
            releases of each run, then the first divergent step (-1: none), the releases
            summed, -1 (else a bad release), whether it read the changed position within
            :attr:`horizon` samples and at any time; loss float64 (runs,); the phases whose
            releases read it: {phase: (releases, runs)}; float64 (runs, :data:`FIRST_COLUMNS`):
            each pair's first release that read it (:func:`_first_read`)).

        Raises:
            RuntimeError: as :meth:`pair`.
            ValueError: as :meth:`pair`.
        """
        i0, i1 = runs if isinstance(runs, tuple) else (0, runs)
        n = i1 - i0
        rec, loss = np.empty((n, RECORD_COLUMNS), np.int64), np.empty(n)
        ctl = np.array([0, n, mode, GOING, 0, self.horizon, 0], np.int64)
        states = pcg64_states(seed, key, (i0, i1))
        hist = np.zeros((3, PHASE_SLOTS), np.int64)
        first = np.full((n, FIRST_COLUMNS), -1.0)
        fn, pre = self.loop
        p = self.prep
        while ctl[NEXT] < n:
            fn(*pre, self.rng, self.rng2, self.src, self.dst, p.means, p.theta, p.aux,
               self.limit, (self.a1, self.a2, self.r1, self.r2, self.frozen, rec, loss, ctl,
                            states, self.where, hist, first))
            why, ctl[WHY] = ctl[WHY], GOING
            if why == OVERFLOW:
                self._grow(int(ctl[NEED]))
            elif why == PHASES:       # a wider histogram, the old one inside it
                lo = min(int(ctl[PHASE0]), int(ctl[NEED]))
                hi = max(int(ctl[PHASE0]) + hist.shape[1], int(ctl[NEED]) + 1)
                wide = np.zeros((3, 2 * (hi - lo)), np.int64)
                at = int(ctl[PHASE0]) - lo
                wide[:, at:at + hist.shape[1]] = hist
                hist, ctl[PHASE0] = wide, lo
            elif why == BAD:
                self._raise(int(rec[ctl[NEXT] - 1, BAD_ROW]))
        used = np.flatnonzero(hist[0])
        phases = {int(ctl[PHASE0] + j): (int(hist[0, j]), int(hist[1, j])) for j in used}
        return rec, loss, phases, first

    def _raise(self, bad: int) -> None:
        if bad <= -2:
            raise RuntimeError(f"{self.name}: the replay did not release the frozen value of "
                               f"release {-2 - bad} (kernel ignores its `frozen` argument)")
        row = self.r1[bad]
        raise ValueError(f"{self.name}: release {bad} (dist={row[7]:g}, noisy={row[5]!r}, "
                         f"scale={row[6]!r}) has no finite log-density ratio")

    def pair(self, state: dict) -> tuple:
        """Run on src, replay on dst, from generator state ``state`` (:func:`_start`).

        Returns (orig, replay, (step, loss, counted)).
        """
        o = self._call(state, self.src, self.a1, "r1", self.empty)
        frozen = np.ascontiguousarray(self.r1[:o[3], 5])
        r = self._call(state, self.dst, self.a2, "r2", frozen)
        step, loss, counted, bad = _compare(self.a1, o[0], o[1], o[2], self.r1, o[3],
                                            self.a2, r[0], r[1], r[2], self.r2, r[3])
        if bad != -1:
            self._raise(bad)
        return o, r, (step, float(loss), counted)


class _Reads:
    """What the changed position reached in the runs of one direction.

    What the changed position reached in the runs of one direction, within ``horizon``
    samples (the audited transcript's length): per run, whether a release read it (its exact
    value differs between the run and its replay) or a decision did (the replay diverged),
    at any time up to the white-box limit, and the stopping time; per phase, the releases
    that read it and the runs where one did (:meth:`_Runner.sweep`).
    """

    def __init__(self, horizon: int, rec: np.ndarray, phases: dict) -> None:
        """The reads of a sweep's records ``rec`` and ``phases``, over ``horizon`` samples."""
        self.horizon = horizon
        self.read, self.read_any = rec[:, READ] > 0, rec[:, READ_ANY] > 0
        self.tau = rec[:, 0].copy()
        self.phases = phases

    @staticmethod
    def joined(parts: list) -> "_Reads":
        """The records of consecutive parts (in run order) as one."""
        out = _Reads(parts[0].horizon, np.empty((0, RECORD_COLUMNS), np.int64), {})
        out.read, out.read_any, out.tau = (np.concatenate([getattr(r, a) for r in parts])
                                           for a in ("read", "read_any", "tau"))
        for r in parts:
            for ph, (n, runs) in r.phases.items():
                old = out.phases.get(ph, (0, 0))
                out.phases[ph] = (old[0] + n, old[1] + runs)
        return out

    def by_phase(self) -> dict:
        """{phase: (releases that read the position, runs with one)}."""
        return dict(sorted(self.phases.items()))


WHITEBOX_CHUNK = 1000    # run/replay pairs per task when a mapper spreads them over processes


def _direction_part(spec: AlgorithmSpec, prep: Prepared, tables: tuple, limit: int,
                    horizon: int, root: np.random.SeedSequence, k: int, span: tuple) -> tuple:
    """Run/replay pairs ``span`` = [i0, i1) of direction ``k`` (``tables`` = (run, replay)).

    Returns per-run loss, first divergent step (-1: none) and releases, runs per status, the
    :class:`_Reads` and the first release that read the changed position (:func:`_first_read`).
    """
    runner = _Runner(spec, prep, *tables, limit)
    runner.horizon = horizon
    rec, loss, phases, first = runner.sweep(root, (k,), span, REPLAY)
    status = np.bincount(rec[:, 2], minlength=3)
    return (loss, rec[:, STEP].copy(), rec[:, 3].copy(), status, _Reads(horizon, rec, phases),
            first)


def _in_process(job: Callable, spec: AlgorithmSpec, common: tuple, items: list) -> list:
    return [job(spec, *common, x) for x in items]


def coverage(reads: list, runs: int) -> dict:
    """The ``coverage`` JSON of the two directions.

    Args:
        reads: the :class:`_Reads` of d → d′ and d′ → d.
        runs: runs per direction.

    Returns:
        How much of the sampling touched the changed position within the horizon: runs that
        read it, releases that read it by phase, the stopping times on d and d′.
    """
    read = np.concatenate([r.read for r in reads])
    read_any = np.concatenate([r.read_any for r in reads])
    counts = [r.by_phase() for r in reads]
    phases = sorted(set().union(*counts))
    return {
        "measured": True, "kind": "white-box (run and replay with frozen noise)",
        "horizon": reads[0].horizon, "runs": int(read.size), "runs_read": int(read.sum()),
        "fraction_read": float(read.mean()), "runs_read_any_time": int(read_any.sum()),
        "releases_read": [{"phase": p, "releases": sum(c.get(p, (0, 0))[0] for c in counts),
                           "runs": sum(c.get(p, (0, 0))[1] for c in counts)}
                          for p in phases],
        "stopping_time": {side: {"min": int(r.tau.min()), "median": float(np.median(r.tau)),
                                 "max": int(r.tau.max())}
                          for side, r in zip(Side, reads)},
        "note": (f"a run read the changed position when a release made by sample "
                 f"{reads[0].horizon} had another exact value on the neighbouring table, or a "
                 f"decision did (the replay diverged); runs_read_any_time counts the same up "
                 f"to the white-box limit; {runs} runs per direction; stopping "
                 f"times are of the runs on d and on d' (capped at the white-box limit)")}


def screen(spec: AlgorithmSpec, prep: Prepared, pair: NeighbourPair, *, runs: int,
           seed: int | np.random.SeedSequence, limit: int) -> dict:
    """A cheap white-box score of a candidate pair for the neighbour search.

    Run/replay pairs per direction as in :func:`whitebox`, each run stopped after ``limit``
    samples (the audit's horizon), in a compiled loop (:meth:`_Runner.sweep`).

    Args:
        spec: the algorithm.
        prep: its prepared arrays.
        pair: the candidate pair.
        runs: run/replay pairs per direction.
        seed: the screen's seed.
        limit: samples per run.

    Returns:
        ``max_loss`` and ``mean_loss`` (pooled over both directions; the mean is how often and
        how much the changed position reaches a release), ``diverged_runs`` (replays whose
        transcript differs: raw data reached a decision), ``coupled_diverged`` (of ``runs``
        coupled runs on d and d′ from one generator each, those whose transcripts differ: 0
        when the change moved no decision in them, :func:`coupled_divergence`) and ``feeds``
        (the releases the position fed in the first d → d′ run where it mattered: t, arm,
        phase, count).
    """
    root = seed_sequence(seed)
    losses, diverged, feeds = [], 0, []
    d, dp = (np.ascontiguousarray(t, dtype=np.float64) for t in (pair.d, pair.d_prime))
    for k, (src, dst) in enumerate(((d, dp), (dp, d))):
        runner = _Runner(spec, prep, src, dst, limit)
        rec, loss = runner.sweep(root, (k,), runs, REPLAY)[:2]
        losses.append(loss)
        diverged += int((rec[:, STEP] >= 0).sum())
        if k == 0 and (loss != 0).any():
            feeds = _feeds(runner, _start(child_seed(root, 0, int(np.argmax(loss != 0)))))
    pooled = np.concatenate(losses)
    coupled = _Runner(spec, prep, d, dp, limit).sweep(root, (2,), runs, COUPLED)[0]
    return {"max_loss": float(pooled.max()), "mean_loss": float(pooled.mean()),
            "diverged_runs": diverged, "coupled_diverged": int((coupled[:, STEP] >= 0).sum()),
            "feeds": feeds}


def coupled_divergence(spec: AlgorithmSpec, prep: Prepared, pair: NeighbourPair,
                       replay: Replay) -> dict:
    """The coupled screen of a neighbouring pair.

    Run i on d and run i on d′ draw from the same generator (``child_seed(replay.seed, i)``),
    in a compiled loop (:meth:`_Runner.sweep`).
    Any coupling of two runs gives P(outputs differ) ≥ the total variation distance between the
    output distributions on d and on d′, so ``p_div`` estimates an upper bound of it, and
    ``p_div`` = 0 over every coupled pair is evidence that the pair shows nothing at this
    instance (the runs never read the changed entry, or read it without effect). It bounds from
    above only: a pair whose randomness merely falls out of step diverges without leaking.

    Args:
        spec: the algorithm.
        prep: its prepared arrays.
        pair: the pair.
        replay: runs, seed and samples per run (None: the table's length).

    Returns:
        ``runs``, ``diverged``, ``p_div`` (the share of pairs whose transcripts differ: actions,
        stopping time, recommendation or status) and ``first`` (the first diverging pair, or
        None).
    """
    d = np.ascontiguousarray(pair.d, dtype=np.float64)
    dp = np.ascontiguousarray(pair.d_prime, dtype=np.float64)
    T = d.shape[1] if pair.model == PrivacyModel.STREAM else d.shape[0]
    limit = T if replay.limit is None else int(replay.limit)
    root, runs = seed_sequence(replay.seed), int(replay.runs)
    rec = _Runner(spec, prep, d, dp, limit).sweep(root, (), runs, COUPLED)[0]
    diverged = np.flatnonzero(rec[:, STEP] >= 0).tolist()
    return {"runs": runs, "diverged": len(diverged), "p_div": len(diverged) / runs,
            "first": diverged[0] if diverged else None}


def _feeds(runner: _Runner, state: dict, at_most: int = 4) -> list:
    """The releases whose exact value differs between a run and its replay.

    The releases whose exact value differs between a run and its replay: what the changed
    position feeds (t = samples taken when released, arm, phase, count).
    """
    o, r, _ = runner.pair(state)
    m = min(o[3], r[3])
    rows = np.flatnonzero(runner.r1[:m, 4] != runner.r2[:m, 4])[:at_most]
    return [{"t": int(runner.r1[j, 0]), "arm": int(runner.r1[j, 1]),
             "phase": int(runner.r1[j, 2]), "count": int(runner.r1[j, 3])} for j in rows]


def _quantiles(x: np.ndarray) -> dict:
    if x.size == 0:
        return {}
    # with an infinite loss (a raw release) an order statistic, not inf − inf = NaN
    how = "closest_observation" if np.isinf(x).any() else "linear"
    q = {k: float(np.quantile(x, p, method=how)) for k, p in QUANTILES}
    q["max"] = float(x.max())
    return q


def _above(x: ArrayLike, eps: float) -> np.ndarray:
    return x > eps * (1.0 + TOLERANCE[0]) + TOLERANCE[1]


def _example(runner: _Runner, state: dict, index: int, direction: int, step: int) -> dict:
    o, r, _ = runner.pair(state)
    names = ("d", "d_prime") if direction == 0 else ("d_prime", "d")

    def act(a: np.ndarray, tau: int) -> int | None:
        return int(a[step]) if step < tau else None   # None: the run had ended

    ex = {"run": int(index), "direction": DIRECTIONS[direction], "step": int(step),
          f"action_{names[0]}": act(runner.a1, o[0]), f"action_{names[1]}": act(runner.a2, r[0]),
          f"tau_{names[0]}": o[0], f"tau_{names[1]}": r[0],
          f"rec_{names[0]}": o[1], f"rec_{names[1]}": r[1],
          f"status_{names[0]}": STATUS_NAMES[o[2]], f"status_{names[1]}": STATUS_NAMES[r[2]],
          "common_prefix": [int(a) for a in runner.a1[:min(step, 64)]]}
    return ex


def _worst(runner: _Runner, state: dict, index: int, direction: int) -> dict:
    """Per-release contributions of one run (re-simulated: it is deterministic)."""
    o, r, (step, loss, counted) = runner.pair(state)
    m = counted
    r1, r2 = runner.r1[:m], runner.r2[:m]
    contrib = log_density_ratio(r1[:, 7], r1[:, 5], r1[:, 4], r2[:, 4], r1[:, 6],
                                prime=(r2[:, 7], r2[:, 6]))
    vd, vdp = (r1[:, 4], r2[:, 4]) if direction == 0 else (r2[:, 4], r1[:, 4])
    rows = []
    for j in np.flatnonzero(contrib != 0.0)[:MAX_LISTED]:
        rows.append({"release": int(j), "t": int(r1[j, 0]), "arm": int(r1[j, 1]),
                     "phase": int(r1[j, 2]), "count": int(r1[j, 3]),
                     "value_d": float(vd[j]), "value_d_prime": float(vdp[j]),
                     "noisy": float(r1[j, 5]), "scale": float(r1[j, 6]),
                     "dist": int(r1[j, 7]), "loss": float(contrib[j])})
    return {"run": int(index), "direction": DIRECTIONS[direction], "loss": loss,
            "releases": int(o[3]), "releases_counted": int(m),
            "nonzero_contributions": int(np.count_nonzero(contrib)),
            "contributions": rows, "tau": o[0], "status": STATUS_NAMES[o[2]],
            "diverged_at": None if step < 0 else int(step)}


def release_mechanism(row: dict) -> accounting.Release | None:
    """The dp-accounting release of one logged release that reads the changed entry.

    Args:
        row: a ``worst_run`` contribution (``dist``, ``scale``, ``value_d``,
            ``value_d_prime``).

    Returns:
        The :class:`~dpaudit.statistics.accounting.Release` (Laplace of scale b or Gaussian of
        standard deviation σ, sensitivity |v − v′|; randomised response on values 0 and 1,
        answering a uniformly random bit with probability 2/(1 + e^s)), or None for
        randomised response on fractional values (no fixed-sensitivity mechanism) or a release
        without noise (scale 0: a mutant's raw value, whose loss is unbounded).
    """
    change = abs(row["value_d"] - row["value_d_prime"])
    if row["scale"] == 0 and row["dist"] in (LAPLACE, GAUSSIAN):
        return None
    if row["dist"] == RANDOMISED_RESPONSE:
        if {row["value_d"], row["value_d_prime"]} != {0.0, 1.0}:
            return None
        return accounting.Release("randomised-response", 2.0 / (1.0 + math.exp(row["scale"])))
    family = "laplace" if row["dist"] == LAPLACE else "gaussian"
    return accounting.Release(family, row["scale"], change)


def accountant(worst: dict, eps: float, delta: float) -> dict | None:
    """dp-accounting's bounds on the releases of the worst run that read the changed entry.

    Each release that reads the entry is, given the run's history, a fixed noise mechanism;
    if one of them is not (ε, δ)-DP (the lower bound of its δ(ε) exceeds δ), the step "every
    release is (ε, δ)-DP" of a privacy proof fails: a white-box proof about the releases (not a
    verdict on the released transcript, which may be a post-processing that loses less). The
    releases composed (pessimistic PLDs, :func:`dpaudit.statistics.accounting.composed`) give
    an upper bound on that history's releases' profile.

    Args:
        worst: the result's ``worst_run``.
        eps: the claimed ε.
        delta: the claimed δ (0 for ε-DP).

    Returns:
        A JSON-ready dict (``run``, ``releases`` with each one's δ(ε) bounds, ``composed``
        (δ(ε), ε(δ) and the ``profile`` δ(ε) at :data:`PROFILE_POINTS` values of ε from 0 to
        twice the claim's), ``refuted``, ``evidence``, ``not_accounted``), or None when the run read the entry in
        no release.
    """
    rows = [r for r in worst["contributions"] if r["value_d"] != r["value_d_prime"]]
    mapped = [(r, release_mechanism(r)) for r in rows]
    used = [(r, m) for r, m in mapped if m is not None]
    if not used:
        return None
    ref = accounting.refutation([m for _, m in used], eps, delta)
    grid = np.linspace(0.0, 2.0 * eps, PROFILE_POINTS) if eps > 0 else np.zeros(1)
    prof = accounting.privacy_profile([m for _, m in used], eps=(eps, *grid), delta=(delta,))
    return {
        "method": "dp-accounting privacy loss distributions", "run": worst["run"],
        "direction": worst["direction"], "eps": eps, "delta": delta,
        "releases": [{"release": r["release"], "mechanism": m.mechanism, "noise": m.noise,
                      "sensitivity": m.sensitivity, "delta_at_eps": {"lower": lo, "upper": hi}}
                     for (r, m), (lo, hi) in zip(used, ref.delta_at_eps)],
        "composed": {"delta_at_eps": prof.delta_at[0][1], "eps_at_delta": prof.eps_at[0][1],
                     "profile": {"eps": [e for e, _ in prof.delta_at[1:]],
                                 "delta": [d for _, d in prof.delta_at[1:]]}},
        "refuted": ref.refuted, "evidence": "white-box proof" if ref.refuted else None,
        "not_accounted": len(rows) - len(used)}


def _rounded(x: np.ndarray, up: bool) -> np.ndarray:
    """Values x > 0 to 10 significant digits, rounded up (``up``) or down by a margin of 1e-9."""
    unit = 10.0 ** (np.floor(np.log10(x)) - 9)
    return (np.ceil(x * (1 + 1e-9) / unit) if up else np.floor(x * (1 - 1e-9) / unit)) * unit


def _first_releases(first: np.ndarray) -> tuple[list, np.ndarray]:
    """The distinct mechanisms of the runs' first releases that read the changed entry.

    Noise rounded up and sensitivity down (:func:`_rounded`) so that runs share mechanisms,
    each accounted once: their δ(ε) are lower bounds. Returns (releases, index int (runs,) of
    each run's, −1 for runs with none or one the accountant cannot map).
    """
    back = np.full(first.shape[0], -1)
    ok = first[:, 0] >= 0
    rr = first[:, 0] == RANDOMISED_RESPONSE
    binary = np.isin(first[:, 2], (0.0, 1.0)) & np.isin(first[:, 3], (0.0, 1.0))
    ok &= np.where(rr, binary, first[:, 1] > 0)
    if not ok.any():
        return [], back
    change = np.abs(first[ok, 2] - first[ok, 3])
    keys = np.column_stack([first[ok, 0], _rounded(first[ok, 1], True), _rounded(change, False)])
    keys[rr[ok], 1:] = np.column_stack([first[ok & rr, 1], np.ones(int((ok & rr).sum()))])
    unique, index = np.unique(keys, axis=0, return_inverse=True)
    back[ok] = index.ravel()
    return [release_mechanism({"dist": d, "scale": s, "value_d": 0.0, "value_d_prime": c})
            for d, s, c in unique], back


def _run_deltas(releases: list, back: np.ndarray, eps: float) -> np.ndarray:
    """Each run's δ(ε) of its first release that read the entry (0: none or unmapped)."""
    values = np.array([accounting.delta_at(r, eps) for r in releases] + [0.0])
    return values[back]           # index −1: the appended 0


def release_log(firsts: list, eps: float, delta: float, alpha: float, diverged: int) -> dict:
    """A lower bound on the release log's δ(ε), and whether it refutes (ε, δ)-DP of the log.

    The release log (every noisy release with its time, arm, phase and count: the mechanism a
    proof by composition and post-processing bounds, e.g. π̃ in the proof of DP-BAI-GAUSS's
    Prop. D.2, Chen et al. 2024, arXiv:2401.09073, eq. (107)) is a sequence of releases. Given
    the history before the first release that reads the changed entry, that release is a fixed
    noise mechanism (its family, scale and the statistic's values on d and d′ fixed, the
    table given), and the history has the same law on d and d′ (nothing read the entry
    before; no replay diverged). So the log's hockey-stick divergence at e^ε is at least the
    average over histories of that release's δ(ε): exact per history (dp-accounting's closed
    forms, :func:`_first_deltas`), averaged over the white-box runs with a one-sided
    lower confidence bound (:func:`dpaudit.statistics.stats.mean_lower_bound`, α/2 per
    direction). Assumed, as in every registered kernel: the statistic a release reads is
    fixed by the table and the released counts.

    Args:
        firsts: per direction, float64 (runs, :data:`FIRST_COLUMNS`) (:func:`_first_read`).
        eps: the claimed ε.
        delta: the claimed δ (0 for ε-DP).
        alpha: the bound holds with probability ≥ 1 − α.
        diverged: runs whose replay diverged (then no bound: the histories may differ).

    Returns:
        JSON-ready: ``runs`` and ``runs_accounted`` (both directions), ``delta_at_eps``
        (``lower`` bound at confidence 1 − α, ``estimate``: the larger direction's mean),
        ``profile`` (``eps``: :data:`PROFILE_POINTS` values from 0 to 2ε, ``delta_lower``: the
        lower bound at each, each at confidence 1 − α; None without a bound),
        ``refuted`` (lower > δ up to float rounding: the release log is not (ε, δ)-DP),
        ``evidence`` ("white-box accounting" when refuted, else None), ``alpha``, ``reason``
        (why there is no bound, else None).
    """
    mapped = [_first_releases(f) for f in firsts]
    deltas = [_run_deltas(r, back, eps) for r, back in mapped]
    out = {"eps": eps, "delta": delta, "alpha": alpha, "runs": sum(f.shape[0] for f in firsts),
           "runs_accounted": int(sum((back >= 0).sum() for _, back in mapped)),
           "delta_at_eps": {"lower": 0.0, "estimate": float(max(x.mean() for x in deltas))},
           "profile": None, "refuted": False, "evidence": None, "reason": None}
    if diverged:
        out["reason"] = (f"{diverged} replays diverged: a decision read raw data, so the "
                         "histories before a release may differ between d and d'")
        return out

    def lower(e: float) -> float:
        return max(mean_lower_bound(_run_deltas(r, back, e), alpha / 2) for r, back in mapped)

    bound = max(mean_lower_bound(x, alpha / 2) for x in deltas)
    refuted = bound > delta * (1 + accounting.TOLERANCE[0]) + accounting.TOLERANCE[1]
    grid = np.linspace(0.0, 2.0 * eps, PROFILE_POINTS)
    out["delta_at_eps"]["lower"] = bound
    out.update(profile={"eps": grid.tolist(), "delta_lower": [lower(e) for e in grid]},
               refuted=bool(refuted), evidence="white-box accounting" if refuted else None)
    return out


@dataclass(frozen=True)
class Replay:
    """How :func:`whitebox` replays.

    How :func:`whitebox` replays: ``runs`` per direction, ``seed`` (int or SeedSequence,
    not mutated), ``limit`` samples per run (None: 16 × the table length), coverage counted
    within ``horizon`` samples (None: ``limit``), the release log's bound at confidence
    1 − ``alpha`` (:func:`release_log`).
    """

    runs: int
    seed: object
    limit: int | None = None
    horizon: int | None = None
    alpha: float = 0.05


def whitebox(spec: AlgorithmSpec, prep: Prepared, pair: NeighbourPair, claim: Claim,
             replay: Replay, mapper: Callable | None = None) -> dict:
    """The exact privacy loss of an algorithm's releases on a pair, and the gray-box replay.

    See the module doc. For an (ε, δ) claim with δ > 0 the loss may exceed ε on a set of outputs
    of mass up to about δ, so no single run decides: ``releases_exceed_eps`` is None (the loss
    distribution and ``runs_above_eps`` are still reported).

    Args:
        spec: the algorithm.
        prep: its prepared arrays (at ε).
        pair: the neighbouring pair.
        claim: the claimed (ε, δ) (δ None: 0).
        replay: runs per direction, seed, samples per run (:class:`Replay`).
        mapper: ``mapper(job, spec, common, items)`` → ``[job(spec, *common, item) for item in
            items]``, e.g. on worker processes: it runs the chunks of
            :data:`WHITEBOX_CHUNK` runs (each run has its own seed, so the result does not
            depend on it); None: in this process.

    Returns:
        A JSON-ready dict: ``runs``, ``limit``, ``eps``, ``directions`` (per direction: loss
        distribution, releases, replay), ``max_loss``, ``quantiles`` (pooled over both
        directions), ``runs_above_eps``, ``releases_exceed_eps`` (true iff max_loss >
        ε·(1 + 1e-9) + 1e-12: the releases alone are not ε-DP; the released transcript may
        still be, e.g. report-noisy-max, so this is no verdict), ``worst_run``, ``replay``
        (``diverged_runs``, ``first_divergent_step``, ``example``), ``coverage`` (runs and
        releases that read the changed position within the horizon) and ``note``.

    Raises:
        ValueError: runs < 1 or limit < 1.
        RuntimeError: a kernel makes more than :data:`MAX_RELEASE_ROWS` releases in one run, or
            ignores ``frozen``.
    """
    t0 = time.perf_counter()
    eps, delta = float(claim.eps), claim.delta or 0.0
    runs, seed, limit, horizon = int(replay.runs), replay.seed, replay.limit, replay.horizon
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    d = np.ascontiguousarray(pair.d, dtype=np.float64)
    dp = np.ascontiguousarray(pair.d_prime, dtype=np.float64)
    T = d.shape[1] if pair.model == PrivacyModel.STREAM else d.shape[0]     # the table's horizon
    limit = DEFAULT_LIMIT_FACTOR * T if limit is None else int(limit)
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    root = seed_sequence(seed)
    eps = float(eps)

    per_dir, losses, worst, first, reads, firsts = {}, [], None, None, [], []
    horizon = limit if horizon is None else int(horizon)
    spans = [(i, min(i + WHITEBOX_CHUNK, runs)) for i in range(0, runs, WHITEBOX_CHUNK)]
    for k, (src, dst) in enumerate(((d, dp), (dp, d))):
        parts = (mapper or _in_process)(_direction_part, spec,
                                        (prep, (src, dst), limit, horizon, root, k), spans)
        loss, step, n_rel = (np.concatenate([p[j] for p in parts]) for j in range(3))
        status = sum(p[3] for p in parts)
        reads.append(_Reads.joined([p[4] for p in parts]))
        firsts.append(np.concatenate([p[5] for p in parts]))
        runner = _Runner(spec, prep, src, dst, limit)
        div = np.flatnonzero(step >= 0)
        i_max = int(np.argmax(loss))
        if worst is None or loss[i_max] > worst[0]:
            worst = (float(loss[i_max]), k, i_max)
        entry = {"max_loss": float(loss.max()), "mean_loss": float(loss.mean()),
                 "quantiles": _quantiles(loss), "runs_above_eps": int(_above(loss, eps).sum()),
                 "releases_per_run": {"mean": float(n_rel.mean()), "max": int(n_rel.max())},
                 "status": {STATUS_NAMES[j]: int(status[j]) for j in range(3)},
                 "diverged_runs": int(div.size),
                 "first_divergent_step": int(step[div].min()) if div.size else None}
        if div.size:
            j = int(div[np.argmin(step[div])])      # lowest run index attaining the minimum
            entry["example"] = _example(runner, _start(child_seed(root, k, j)), j, k,
                                        int(step[j]))
            if first is None or step[j] < first[0]:
                first = (int(step[j]), entry["example"])
        per_dir[DIRECTIONS[k]] = entry
        losses.append(loss)

    pooled = np.concatenate(losses)
    max_loss = float(pooled.max())
    k_w, i_w = worst[1], worst[2]
    src, dst = ((d, dp), (dp, d))[k_w]
    worst_run = _worst(_Runner(spec, prep, src, dst, limit), _start(child_seed(root, k_w, i_w)),
                       i_w, k_w)
    diverged = sum(e["diverged_runs"] for e in per_dir.values())
    exceed = bool(_above(np.array([max_loss]), eps)[0]) if delta <= 0 else None
    return {
        "algorithm": spec.name, "eps": eps, "delta": float(delta), "runs": runs, "limit": limit,
        "pair": pair.describe(),
        "directions": per_dir,
        "max_loss": max_loss,
        "quantiles": _quantiles(pooled),
        "runs_above_eps": int(_above(pooled, eps).sum()),
        "releases_exceed_eps": exceed,
        "worst_run": worst_run,
        "replay": {"diverged_runs": int(diverged),
                   "first_divergent_step": None if first is None else first[0],
                   "example": None if first is None else first[1]},
        "coverage": coverage(reads, runs),
        "accountant": accountant(worst_run, eps, delta),
        "release_log": release_log(firsts, eps, delta, replay.alpha, diverged),
        **({"reports": reports_proof(max_loss, eps, delta)} if spec.reports else {}),
        "runtime_s": time.perf_counter() - t0,
        "note": _note(spec, eps, runs, limit, T, exceed, diverged),
    }


def reports_proof(max_loss: float, eps: float, delta: float) -> dict:
    """Whether the white-box runs refute an ε-local-DP claim (``AlgorithmSpec.reports``).

    Under ε-local DP every release the kernel logs is one user's report, an output the claim
    covers, not an internal value that a post-processing may hide (as report-noisy-max hides
    its scores). The changed entry is one user's reward, so a run's loss (the sum over the
    releases that read it) is the exact privacy loss of that user's reports at the realised
    output, computed from the laws the kernel logs (the kernel contract: each release logged
    with the law it is drawn from given the run so far). A pure claim bounds it by ε on every
    output, so ``max_loss`` > ε (up to :data:`TOLERANCE`) proves the claim false with no
    statistics: a white-box proof. A claim with δ > 0 allows losses above ε with probability
    about δ, so no run decides (``refuted`` False).

    Args:
        max_loss: the largest run loss over the white-box runs (nats; ∞ for a report whose
            logged law is a point mass at a value the other table's law excludes).
        eps: the claimed ε.
        delta: the claimed δ.

    Returns:
        JSON-ready: ``max_loss``, ``refuted`` (bool) and ``text`` (the proof, or why none).
    """
    refuted = delta <= 0 and bool(_above(np.array([max_loss]), eps)[0])
    shown = "inf" if math.isinf(max_loss) else f"{max_loss:.4f}"
    if refuted:
        text = (f"a report of the changed user loses {shown} > eps = {eps:g} on its logged law: "
                "the reports are outputs the eps-local-DP claim covers, so the claim is false "
                "(exact, no confidence level)")
    elif delta > 0:
        text = (f"the claim has delta = {delta:g} > 0: a report may lose more than eps with "
                "probability about delta, so no single run decides")
    else:
        text = (f"no report of the changed user lost more than eps = {eps:g} (largest "
                f"{shown}) in the white-box runs")
    return {"max_loss": max_loss, "refuted": refuted, "text": text}


def _note(spec: AlgorithmSpec, eps: float, runs: int, limit: int, T: int, exceed: int,
          diverged: int) -> str:
    parts = [
        f"Each of the {runs} runs per direction was generated on one table and replayed on the "
        "other with its released values frozen and the same rng stream. loss = sum over its "
        "releases of ln f(y | v) - ln f(y | v'), the exact privacy-loss random variable of the "
        "released values at that output; max_loss is a deterministic lower bound on the "
        "releases' privacy loss (an eps-DP mechanism has loss <= eps on every output), so "
        f"releases_exceed_eps = {str(exceed).lower()} needs no statistics (releases above "
        "eps do not make the released transcript non-private by themselves: report-noisy-max "
        "releases noisy scores whose loss exceeds eps and publishes only their argmax).",
        f"Runs stop after at most limit = {limit} samples: only releases made before that count. "
        f"Rows >= {T} (beyond the table) are Bernoulli(means) from the run's rng, the same in "
        "the run and its replay while their transcripts agree.",
        "Replay: a correct implementation reproduces the transcript (actions, tau, recommendation, "
        "status) bit for bit, since decisions may read the data only through releases; a "
        "divergence means raw data reached a decision without noise. In a divergent run only "
        "releases made at or before the divergent step enter its loss.",
    ]
    if exceed is None:
        parts.append("The claim has delta > 0: its loss may exceed eps with probability about "
                     "delta, so max_loss decides nothing (releases_exceed_eps = null); "
                     "runs_above_eps shows how often it did.")
    if diverged:
        parts.append(f"{diverged} runs diverged: a decision read raw data (a privacy leak "
                     "outside the releases, not measured by max_loss).")
    if not spec.private:
        parts.append(f"{spec.name} claims no privacy: its releases (if any) bound nothing, and "
                     "replay divergence is expected.")
    return " ".join(parts)
