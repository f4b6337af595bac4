"""(ε, δ) at small δ on a neighbouring pair: importance sampling of the release that reads it.

Counting runs cannot see events of mass ~δ = 10⁻⁵. A registered kernel logs its releases and
can be run with some of them frozen (the kernel contract's gray-box replay), so the one release
that first reads the changed entry can be drawn from a proposal tilted toward its loss tail
(:class:`dpaudit.statistics.tilted.Tilt`) and each run weighted by the exact likelihood ratio
of that release. One weighted run, numerator table N and denominator table D:

1. run the kernel on N (generator g₁): releases R; replay on D with R's values frozen: the
   first release h whose exact value differs (v on N, v′ on D, its family and scale). Before
   h the two tables give the same history (no release read the entry; a replay that diverges
   before h means a decision read raw data: refused);
2. draw y and y′ from two tilts around (v, v′) (their own generator): r, mostly tilt
   (ρ = 0.9, defended by the numerator's own law: weights ≤ 10), which makes the numerator's
   rare event common, and r′ (ρ = 0.3, defended by the denominator's law: weights ≤ 1.43),
   whose small weight bound keeps the denominator's upper bound tight;
3. run on N with R's first h values and y frozen, and on D with them and y′, both continuing
   on a fresh generator g₂ (independent of the prefix): transcripts t and t′, and the exact
   values of release h in each (v and v′ again, or the kernel drew other randomness: refused);
4. terms w·1(t ∈ E) and w′·1(t′ ∈ E), w = f(y − v)/r(y), w′ = f(y′ − v′)/r′(y′).

E_r[w·1(t ∈ E)] = P_N(E) and E_r′[w′·1(t′ ∈ E)] = P_D(E) for every event E of the transcript:
the prefix has one law on both tables, release h is reweighted exactly, and everything after
it is the kernel's own law on each table given the released values (later reads of the entry
included). A run with no release reading the entry within the horizon has the same transcript
on both tables (checked) and weight 1. The event is the union of transcripts chosen on pilot
runs (largest weighted ratio first, the prefix with the largest bound on the pilot), both
directions piloted; fresh runs measure it (:func:`dpaudit.statistics.tilted.delta_bounds`:
bounds by betting, α/2 per side).

What it is: a statistical lower bound on the transcript's δ-loss ln((P_N(E) − δ)/P_D(E)) at
confidence 1 − α, on this pair, for registered kernels whose reading release is Laplace or
Gaussian. Not for callables (no frozen releases: they are audited by counting).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import optimize

from dpaudit.auditing.exact import frozen_run, horizon_of
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import GAUSSIAN, LAPLACE
from dpaudit.statistics import accounting
from dpaudit.statistics.tilted import BASES, Tilt, delta_bounds

if TYPE_CHECKING:
    from dpaudit.algorithms.spec import AlgorithmSpec, Prepared
    from dpaudit.data.tables import NeighbourPair

FAMILY = {LAPLACE: "laplace", GAUSSIAN: "gaussian"}
PILOT_SHARE = 0.25      # of the runs, per direction, spent choosing the event
PILOT_RHO = 0.5         # the pilot's tilt share on both sides: the bulk and the tail seen alike
RHO_NUM, RHO_DEN = 0.9, 0.3   # the tilt's share on the numerator's and denominator's runs
HIGHS = (1 / (1 - RHO_NUM), 1 / (1 - RHO_DEN))   # the largest weight on each side
MAX_PREFIXES = 32       # unions of transcripts the pilot compares


class NotApplicable(InputError):
    """The pair cannot be importance-sampled (the message says why)."""


RHOS = (0.0, 0.3, 0.6, 0.9)     # the measurement's candidate tilt shares (0: no tilt)
OFFSETS = (-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)   # its candidate centres (scales)


@dataclass(frozen=True)
class Aim:
    """Where the tilt points and how much of the proposal it is.

    At the δ whose ε(δ) the reading release reaches, or ``offset`` scales beyond v (on its far
    side from v′; :class:`~dpaudit.statistics.tilted.Tilt`); ``rho`` the tilt's share (None:
    :data:`RHO_NUM` on the numerator's runs, :data:`RHO_DEN` on the denominator's).
    """

    delta: float
    offset: float | None = None
    rho: float | None = None


@dataclass(frozen=True)
class Runs:
    """Weighted runs of one direction.

    Per run the transcripts on N and D and the weights; per release family and scale, the
    runs whose reading release was drawn from a tilt, with their draws and exact values.
    """

    keys: list          # transcript on N
    keys_prime: list    # transcript on D
    w: np.ndarray       # f(y − v)/r(y), 1 where no release read the entry
    w_prime: np.ndarray
    drawn: dict         # (family, scale) -> (runs, y, y′, v, v′): the tilted draws


def _first_reading(rel: np.ndarray, rel_p: np.ndarray) -> int:
    n = min(rel.shape[0], rel_p.shape[0])
    diff = np.flatnonzero(rel[:n, 4] != rel_p[:n, 4])
    return int(diff[0]) if diff.size else -1


@functools.lru_cache(maxsize=1024)
def _tilt(family: str, scale: float, sensitivity: float, aim: Aim, base: str) -> Tilt:
    """The tilt of a release.

    Centred at the aim's offset, else where its loss reaches its own exact ε(δ) (cached: a
    phase's releases share one scale and sensitivity).
    """
    rho = aim.rho if aim.rho is not None else RHO_NUM if base == "numerator" else RHO_DEN
    if aim.offset is not None:
        return Tilt(family, scale, 0.0, rho, base, aim.offset)
    delta = aim.delta
    release = accounting.Release(family, scale, max(sensitivity, 1e-300))
    top = sensitivity / scale if family == "laplace" else 50.0
    if accounting.delta_at(release, 0.0) <= delta:
        eps = 0.0
    else:
        eps = optimize.brentq(lambda e: accounting.delta_at(release, e) - delta, 0.0, top)
    return Tilt(family, scale, eps, rho, base)


def weighted_runs(spec: AlgorithmSpec, prep: Prepared, tables: tuple, aim: Aim | tuple,
                  runs: int, seed: np.random.SeedSequence) -> Runs:
    """``runs`` weighted runs of one direction (module doc, steps 1–4).

    Args:
        spec: a registered algorithm.
        prep: its prepared arrays.
        tables: (N, D), float64 tables of the kernel's layout.
        aim: where the tilt points (:class:`Aim`), or one per side (numerator, denominator).
        runs: runs.
        seed: the direction's seed.

    Returns:
        :class:`Runs`.

    Raises:
        NotApplicable: a decision read raw data, the reading release is not Laplace or
            Gaussian, or the kernel draws randomness besides its releases.
    """
    N, D = tables
    aims = aim if isinstance(aim, tuple) else (aim, aim)
    limit = horizon_of(N, spec.model)
    keys, keys_p = [], []
    w, wp = np.ones(runs), np.ones(runs)
    drawn: dict = {}        # tilts -> [(run, y, y′, v, v′)]: weighted at once after the loop
    for i, child in enumerate(seed.spawn(runs)):
        s1, s2, s3 = child.spawn(3)
        key, rel = frozen_run(spec, prep, N, limit, np.zeros(0), np.random.default_rng(s1))
        key_p, rel_p = frozen_run(spec, prep, D, limit, rel[:, 5].copy(),
                                  np.random.default_rng(s1))
        h = _first_reading(rel, rel_p)
        if h < 0:
            if key != key_p:
                raise NotApplicable(f"{spec.name}: a decision read the changed entry (the "
                                    "replay diverged with no release reading it)")
            keys.append(key)
            keys_p.append(key)
            continue
        code, scale = int(rel[h, 7]), float(rel[h, 6])
        if not scale > 0:
            raise NotApplicable(f"{spec.name}: the release reading the changed entry has no "
                                "noise (scale 0): its loss is unbounded, nothing to tilt")
        if code not in FAMILY or rel_p[h, 7] != code or rel_p[h, 6] != scale:
            raise NotApplicable(f"{spec.name}: the release reading the changed entry is not a "
                                "Laplace or Gaussian release of one scale on both tables")
        v, vp = float(rel[h, 4]), float(rel_p[h, 4])
        at, at_p = np.array([v]), np.array([vp])
        tilts = [_tilt(FAMILY[code], scale, abs(v - vp), a, b) for a, b in zip(aims, BASES)]
        draw = np.random.default_rng(s2)
        y, y_p = (t.draw(draw, at, at_p) for t in tilts)
        key, r3 = frozen_run(spec, prep, N, limit, np.append(rel[:h, 5], y),
                             np.random.default_rng(s3))
        key_p, r4 = frozen_run(spec, prep, D, limit, np.append(rel[:h, 5], y_p),
                               np.random.default_rng(s3))
        if r3[h, 4] != v or r4[h, 4] != vp:
            raise NotApplicable(f"{spec.name}: the history before the reading release changed "
                                "with the generator (randomness besides its releases)")
        drawn.setdefault(tuple(tilts), []).append((i, y[0], y_p[0], v, vp))
        keys.append(key)
        keys_p.append(key_p)
    groups: dict = {}
    for (t, t_p), rows in drawn.items():
        i, y, y_p, v, vp = (np.array(c) for c in zip(*rows))
        i = i.astype(int)
        w[i], wp[i] = t.weight(y, v, vp), t_p.weight(y_p, v, vp)
        old = groups.get((t.family, t.scale))
        new = (i, y, y_p, v, vp)
        groups[(t.family, t.scale)] = new if old is None else tuple(
            np.concatenate(pair) for pair in zip(old, new))
    return Runs(keys, keys_p, w, wp, groups)


def _proposal(pilot: Runs, hit: np.ndarray, base: str, n: int, alpha: float) -> tuple:
    """The measurement's tilt on one side: the candidate whose bound the pilot predicts tightest.

    Each candidate r′ (:data:`RHOS` × :data:`OFFSETS`) is judged on the pilot's own draws (from
    r): the event's weighted mass p = E_r[(f/r)·1_E] is the same under every proposal, and its
    second moment under r′ is E_r[(f/r)(f/r′)·1_E], so its predicted one-sided bound is
    sd·√(2 ln(2/α)/n), plus on the denominator's side (an upper bound) the unseen-weight term
    ln(2/α)/((1 − ρ)n). The bound stays valid whatever is chosen: the measurement's runs are
    fresh.

    Args:
        pilot: the pilot's runs.
        hit: bool (pilot runs,): the side's transcript is in the event.
        base: ``numerator`` or ``denominator``.
        n: the measurement's runs.
        alpha: the level of the two bounds together.

    Returns:
        (:class:`Aim` without δ, the predicted bound's relative width).
    """
    num = base == "numerator"
    terms = (pilot.w if num else pilot.w_prime) * hit
    p, t = float(terms.mean()), math.log(2 / alpha)
    best = (math.inf, Aim(0.0, 0.0, 0.0))
    if p <= 0:
        return best[1], best[0]
    for rho in RHOS:
        for off in OFFSETS if rho > 0 else (0.0,):
            cand = np.ones_like(terms)
            for (family, scale), (i, y, y_p, v, vp) in pilot.drawn.items():
                cand[i] = Tilt(family, scale, 0.0, rho, base, off).weight(
                    y if num else y_p, v, vp)
            sd = math.sqrt(max(float(np.mean(terms * cand)) - p * p, 0.0))
            width = (sd * math.sqrt(2 * t / n) + (0.0 if num else t / ((1 - rho) * n))) / p
            if width < best[0]:
                best = (width, Aim(0.0, off, rho))
    return best[1], best[0]


def _predicted(terms: np.ndarray, terms_prime: np.ndarray, n: int, alpha: float,
               delta: float) -> float:
    """The δ-loss bound n fresh runs like the pilot's would give an event (normal widths).

    Each side's one-sided bound at α/2 is taken as the mean ∓ sd·√(2 ln(2/α)/n), the upper one
    plus the unseen-weight term ln(2/α)/((1 − ρ)n) (:data:`HIGHS`): a forecast to choose by,
    never a bound.
    """
    t = math.log(2 / alpha)
    lo = terms.mean() - terms.std() * math.sqrt(2 * t / n)
    hi = terms_prime.mean() + terms_prime.std() * math.sqrt(2 * t / n) + HIGHS[1] * t / n
    return max(math.log((lo - delta) / hi), 0.0) if lo > delta and hi > 0 else 0.0


def _choose(pilot: Runs, delta: float, alpha: float, n: int) -> tuple[set, tuple[float, float]]:
    """The event chosen on the pilot: a union of transcripts, largest weighted ratio first.

    Among the first :data:`MAX_PREFIXES` unions, the one whose bound the pilot forecasts for n
    measurement runs is largest (:func:`_predicted`; the plug-in δ-loss breaks ties, e.g. when
    every forecast is 0): a plug-in choice alone overfits a far tail whose masses the pilot
    barely resolves, and a union trades loss for mass.

    Returns:
        (the transcripts, (the forecast bound, its plug-in δ-loss)).
    """
    m = len(pilot.keys)
    p: dict = {}
    q: dict = {}
    for k, x in zip(pilot.keys, pilot.w):
        p[k] = p.get(k, 0.0) + x / m
    for k, x in zip(pilot.keys_prime, pilot.w_prime):
        q[k] = q.get(k, 0.0) + x / m
    order = sorted(p, key=lambda k: -(p[k] / q[k]) if q.get(k, 0) > 0 else -math.inf)
    rank = {k: i for i, k in enumerate(order)}
    at = np.array([rank.get(k, m) for k in pilot.keys])
    at_p = np.array([rank.get(k, m) for k in pilot.keys_prime])
    best, chosen, sp, sq = (-math.inf, -math.inf), set(), 0.0, 0.0
    for i, k in enumerate(order[:MAX_PREFIXES]):
        sp, sq = sp + p[k], sq + q.get(k, 0.0)
        plug = (math.inf if sq == 0 else math.log((sp - delta) / sq)) if sp > delta else -math.inf
        bound = _predicted(pilot.w * (at <= i), pilot.w_prime * (at_p <= i), n, alpha, delta)
        if (bound, plug) > best:
            best, chosen = (bound, plug), set(order[:i + 1])
    return chosen, best


@dataclass(frozen=True)
class SmallDelta:
    """What :func:`small_delta` computes and spends.

    Attributes:
        delta: the δ of the δ-loss, in (0, 1).
        runs: weighted runs per direction (a share :data:`PILOT_SHARE` pilots the event).
        seed: the seed (an int or a SeedSequence).
        alpha: the bound holds at confidence 1 − α.
    """

    delta: float
    runs: int
    seed: int | np.random.SeedSequence
    alpha: float = 0.05


def small_delta(spec: AlgorithmSpec, prep: Prepared, pair: NeighbourPair,
                ask: SmallDelta) -> dict:
    """A lower bound on the transcript's δ-loss at δ on a pair, by importance sampling.

    Args:
        spec: a registered algorithm.
        prep: its prepared arrays (at the claimed ε).
        pair: the neighbouring pair; runs are cut at its table's horizon.
        ask: δ, runs, seed and level (:class:`SmallDelta`).

    Returns:
        JSON-ready: ``eps_lower`` (the bound), ``delta``, ``alpha``, ``direction`` (the
        numerator: ``d`` or ``d_prime``), ``event_transcripts``, ``pilot_loss`` and
        ``predicted_bound`` (the plug-in δ-loss and the pilot's forecast, which chose the event
        by the bound), the measured ``p_lower``, ``p_prime_upper``, ``p_estimate``,
        ``p_prime_estimate``, ``runs`` per direction and ``method``.

    Raises:
        NotApplicable: as :func:`weighted_runs`.
    """
    delta, runs, alpha = ask.delta, ask.runs, ask.alpha
    d = np.ascontiguousarray(pair.d, dtype=np.float64)
    dp = np.ascontiguousarray(pair.d_prime, dtype=np.float64)
    pilots = max(int(runs * PILOT_SHARE), 1)
    root = (ask.seed if isinstance(ask.seed, np.random.SeedSequence)
            else np.random.SeedSequence(ask.seed))
    s_pilot, s_meas = root.spawn(2)
    best = None
    for direction, tables, s in zip(("d", "d_prime"), ((d, dp), (dp, d)), s_pilot.spawn(2)):
        pilot = weighted_runs(spec, prep, tables, Aim(delta, rho=PILOT_RHO), pilots, s)
        event, score = _choose(pilot, delta, alpha, runs - pilots)
        if best is None or score > best[2]:
            best = (direction, tables, score, event, pilot)
    direction, tables, (predicted, loss), event, pilot = best
    # fixed on the pilot: each side's tilt, the one whose bound it predicts tightest
    hits = [np.array([k in event for k in keys]) for keys in (pilot.keys, pilot.keys_prime)]
    aims = tuple(_proposal(pilot, h, b, runs - pilots, alpha)[0] for h, b in zip(hits, BASES))
    meas = weighted_runs(spec, prep, tables, aims, runs - pilots, s_meas)
    hit = np.array([k in event for k in meas.keys])
    hit_p = np.array([k in event for k in meas.keys_prime])
    b = delta_bounds(meas.w * hit, meas.w_prime * hit_p, 0.0, delta,
                     tuple(1 / (1 - a.rho) for a in aims), alpha)
    return {"eps_lower": b.eps_lower, "delta": delta, "alpha": alpha, "direction": direction,
            "event_transcripts": len(event), "pilot_loss": loss, "predicted_bound": predicted,
            "p_lower": b.p_lower, "p_prime_upper": b.p_prime_upper,
            "p_estimate": b.p_estimate, "p_prime_estimate": b.p_prime_estimate,
            "runs": runs, "pilot_runs": pilots,
            "tilts": {b: {"rho": a.rho, "offset": a.offset} for a, b in zip(aims, BASES)},
            "method": "importance sampling of the release that first reads the changed entry "
                      "(defensive mixtures chosen on the pilot per side), bounds by betting"}
