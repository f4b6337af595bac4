"""Instances of the claim's space: proposals, the coupled screen, a ranking.

An audit at the registry's default instance can show nothing even when the claim fails
elsewhere in its space (e.g. GDP-NCB at C_I = 1600: Phase I never ends within the horizon, so
no run reads anything). :func:`screen_space` looks over the space
(:meth:`dpaudit.algorithms.spec.AlgorithmSpec.space`, parameters the user gave pinned):

1. **Proposals** (:func:`propose`): the given instance, the corners of the free dimensions'
   windows and scrambled Halton points (:class:`scipy.stats.qmc.Halton`), each coordinate
   mapped on its dimension's scale (:meth:`dpaudit.algorithms.space.Axis.value`); generated
   dimensions pick a member of their family (:mod:`dpaudit.data.instances`). Options keep the
   given reading.
2. **Screen** (:func:`screen_instance`): a few structured neighbouring pairs of the instance,
   each run coupled on d and d′ (:func:`dpaudit.auditing.whitebox.coupled_divergence`: p_div,
   the share of coupled runs whose transcripts differ, an upper bound of the outputs' total
   variation) and replayed (:func:`dpaudit.auditing.whitebox.screen`: the largest privacy loss
   of a release). An instance the algorithm refuses, or where every pair has p_div = 0 and no
   release loses more than ε, is dropped with that reason: nothing there can show a leak.
3. **Ranking**: instances whose transcripts differ (p_div > 0) first, among them releases above
   ε first, then p_div per sample of a run (the cost model: a short run that diverges as often
   is cheaper to measure), then p_div. (A release above ε with p_div = 0 stays inside the
   algorithm: e.g. GDP-NCB's Phase-I releases at C_I = 1600, which no decision reads.) The best
   :attr:`Screen.keep` are **refined once** (every log-scale dimension ×2 and ÷2, one arm fewer)
   and screened; the best :attr:`Screen.survivors` of all are returned, the last place
   going to the longest (most samples per run; the best ranked of those) if it is not among
   them: p_div per sample favours short runs, and a leak that needs many decisions to show
   (Lazy-DP-TS: a late epoch mean steering many posterior draws a little) is only in long
   ones.

Everything here draws on the seed it is given, which the audit spawns apart from the
measurement's (so the verdict's error budget is untouched by the number of instances tried).
"""
from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import qmc

from dpaudit.algorithms.space import Axis, ClaimSpace, Scale
from dpaudit.auditing.search import own_bases, spec_map
from dpaudit.auditing.whitebox import TOLERANCE, Replay, coupled_divergence
from dpaudit.auditing.whitebox import screen as release_screen
from dpaudit.data import neighbours as nbrs
from dpaudit.data.instances import FAMILIES
from dpaudit.data.tables import MODELS
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import child_seed, seed_sequence

if TYPE_CHECKING:
    from dpaudit.algorithms.spec import AlgorithmSpec, Prepared

LOG_SCALES = (Scale.LOG, Scale.INT_LOG)


@dataclass(frozen=True)
class Screen:
    """How much the instance screen spends.

    Attributes:
        proposals: instances proposed (the given one, corners, Halton points), ≥ 1.
        pairs: structured neighbouring pairs screened per instance.
        runs: coupled runs per pair (p_div's resolution is 1/runs).
        replays: run/replay pairs per direction of the release screen.
        keep: the best instances refined once.
        survivors: instances returned, best first.
        workers: processes that screen the instances (not part of the budget: the result does
            not depend on it).
        beyond_proof: also screen instances outside the range of the claim's proof
            (:meth:`~dpaudit.algorithms.spec.AlgorithmSpec.check_proof`); False: drop them.
    """

    proposals: int = 48
    pairs: int = 8
    runs: int = 64
    replays: int = 8
    keep: int = 12
    survivors: int = 8
    workers: int = field(default=1, compare=False)
    beyond_proof: bool = False


@dataclass(frozen=True)
class Scored:
    """One screened instance.

    Attributes:
        params: the instance (every parameter, resolved).
        origin: how it was proposed: ``given``, ``corner``, ``halton`` or ``refined``.
        p_div: the largest share of coupled runs whose transcripts differ, over its pairs.
        max_loss: the largest privacy loss of a release, over its pairs (nats).
        samples: samples per run of its audit (the cost model).
        reason: why it was dropped; "" if kept.
    """

    params: dict
    origin: str
    p_div: float = 0.0
    max_loss: float = 0.0
    samples: int = 0
    reason: str = ""

    def above(self, eps: float) -> bool:
        """Whether a release loses more than ε (up to float rounding).

        Args:
            eps: the claimed ε.

        Returns:
            True when the largest release loss exceeds ε·(1 + tolerance).
        """
        return self.max_loss > eps * (1.0 + TOLERANCE[0]) + TOLERANCE[1]

    def score(self, eps: float) -> tuple:
        """The ranking key of a screened instance (smaller first).

        Args:
            eps: the claimed ε.

        Returns:
            A key: transcripts that differ (p_div > 0), releases above ε, p_div per sample, p_div.
        """
        return (self.p_div == 0.0, not self.above(eps), -self.p_div / max(self.samples, 1),
                -self.p_div)


@dataclass(frozen=True)
class SpaceScreen:
    """What :func:`screen_space` found.

    Attributes:
        free: the dimensions varied (names); the others were pinned or options.
        ranked: kept instances, best first (at most ``Screen.survivors``; the last may be
            the longest instead, module doc).
        dropped: the dropped ones, each with its reason.
        screened: instances screened in all (proposals and refinements).
        budget: the :class:`Screen` it spent.
        seconds: wall time.
        samples: samples simulated, at most: per instance screened (a refused one costs
            nothing), ``pairs`` × (2·``runs`` coupled runs + 4·``replays`` release-screen
            runs) × its samples per run (a run that stops earlier costs less).
    """

    free: tuple[str, ...]
    ranked: tuple[Scored, ...]
    dropped: tuple[Scored, ...]
    screened: int
    budget: Screen
    seconds: float = field(compare=False)
    samples: int = 0

    @property
    def budget_json(self) -> dict:
        """The screen's budget as JSON."""
        return {k: v for k, v in dataclasses.asdict(self.budget).items() if k != "workers"}


def _family(axis: Axis, seed: int) -> tuple:
    make = FAMILIES[axis.name]
    return make(axis.dim.window, seed) if axis.name == "features" else make(axis.dim.window)


def propose(space: ClaimSpace, n: int, seed: int | np.random.SeedSequence,
            pinned: Sequence[str] = ()) -> list[tuple[dict, str]]:
    """Instances of the space's free dimensions to screen, with their origin.

    The given instance first (no override), then the corners of the windows (all of them for
    at most 3 free dimensions, else the two diagonal ones), then scrambled Halton points.

    Args:
        space: the claim space.
        n: instances at most.
        seed: an int or SeedSequence: draws the Halton points and the generated families'
            random members.
        pinned: parameter names never overridden.

    Returns:
        (overrides, origin) pairs: overrides are parameter values (a generated dimension may
        set several, e.g. features and their means).
    """
    free = space.free()
    out = [({}, "given")]
    if not free:
        return out
    root = seed_sequence(seed)
    family_seed = int(child_seed(root, 0).generate_state(1)[0])
    families = {a.name: _family(a, family_seed) for a in free if a.dim.scale == Scale.GENERATED}

    def at(u: np.ndarray) -> dict:
        o = {}
        for a, x in zip(free, u):
            v = a.value(x, families.get(a.name, ()))
            o.update(v if isinstance(v, dict) else {a.name: v})
        return {k: v for k, v in o.items() if k not in pinned}

    k = len(free)
    corners = itertools.product((0.0, 1.0), repeat=k) if k <= 3 else ((0.0,) * k, (1.0,) * k)
    out += [(at(u), "corner") for u in corners]
    rest = max(n - len(out), 0)
    if rest:
        rng = np.random.default_rng(child_seed(root, 1))
        points = qmc.Halton(d=k, scramble=True, seed=rng).random(rest)
        out += [(at(u), "halton") for u in points]
    return out[:max(n, 1)]


def _pairs(spec: AlgorithmSpec, prep: Prepared, params: dict, n: int, table_seed: int) -> list:
    """``n`` structured neighbouring pairs of an instance.

    ``n`` structured neighbouring pairs of the instance, spread over the screened positions
    (the first samples, the release log's marks), bases and value patterns.
    """
    means = tuple(float(x) for x in prep.means)
    horizon = spec.audit_horizon(params)
    model = MODELS[spec.model]
    shape = model.shape(len(means), horizon)
    marks = set()
    if len(model.positions(shape)) > n:
        base = nbrs.base_tables(spec.model, means, horizon, table_seed)[0][0]
        marks = nbrs.release_positions(spec, prep, base, horizon)
    positions = nbrs.select_positions(spec.model, shape, marks, limit=max(n // 2, 1))
    pairs = nbrs.structured(spec.model, means, horizon, table_seed, positions,
                            own_bases(spec, prep, horizon))
    step = max(len(pairs) // n, 1)
    return pairs[::step][:n]


def screen_instance(spec: AlgorithmSpec, eps: float, params: dict, origin: str, budget: Screen,
                    seed: int | np.random.SeedSequence) -> Scored:
    """Screen one instance (module doc, step 2).

    Args:
        spec: the algorithm.
        eps: the claimed ε.
        params: the instance's parameters, resolved.
        origin: where it came from (given, corner, halton, refined).
        budget: the screen's runs and samples (:class:`Screen`).
        seed: an int or SeedSequence.

    Returns:
        The :class:`Scored` instance, or with the reason it is dropped.
    """
    try:
        prep = spec.prepare(eps, params)
        samples = int(spec.audit_horizon(params))
    except InputError as e:
        return Scored(params, origin, reason=f"not accepted: {e}")
    except (ValueError, ArithmeticError) as e:    # a value in its window the code cannot take
        return Scored(params, origin, reason=f"not accepted (the algorithm's preparation "
                                             f"failed: {type(e).__name__}: {e})")
    root = seed_sequence(seed)
    table_seed = int(child_seed(root, 0).generate_state(1)[0])
    p_div, max_loss = 0.0, 0.0
    for i, pair in enumerate(_pairs(spec, prep, params, budget.pairs, table_seed)):
        c = coupled_divergence(spec, prep, pair, Replay(budget.runs, child_seed(root, 1, i),
                                                        samples))
        r = release_screen(spec, prep, pair, runs=budget.replays, seed=child_seed(root, 2, i),
                           limit=samples)
        p_div, max_loss = max(p_div, c["p_div"]), max(max_loss, r["max_loss"])
    scored = Scored(params, origin, p_div, max_loss, samples)
    if p_div == 0.0 and not scored.above(eps):
        return Scored(params, origin, p_div, max_loss, samples,
                      f"vacuous: p_div = 0 on {budget.pairs} pairs x {budget.runs} coupled "
                      f"runs and no release loses more than eps")
    return scored


def _refine(space: ClaimSpace, s: Scored) -> list[tuple[dict, str]]:
    """The instances one step around ``s``.

    One step around ``s``: every free log-scale dimension ×2 and ÷2 (inside its window),
    and one arm fewer (the last) when the means are free and K > 2.
    """
    free = space.free()
    out = []
    for f in (2.0, 0.5):
        o = {}
        for a in free:
            if a.dim.scale in LOG_SCALES:
                lo, hi = a.window()
                v = min(max(s.params[a.name] * f, lo), hi)
                o[a.name] = int(round(v)) if a.dim.scale == Scale.INT_LOG else v
        if o:
            out.append((o, "refined"))
    means = s.params.get("means")
    if any(a.name == "means" for a in free) and means is not None and len(means) > 2:
        out.append(({"means": tuple(means[:-1])}, "refined"))
    return out


def _screen_job(spec: AlgorithmSpec, eps: float, budget: Screen, item: tuple) -> Scored:
    params, origin, seed = item
    return screen_instance(spec, eps, params, origin, budget, seed)


def screen_space(spec: AlgorithmSpec, eps: float, params: dict, pinned: Sequence[str],
                 budget: Screen, seed: int | np.random.SeedSequence) -> SpaceScreen:
    """Propose, screen, rank and refine instances of ``spec``'s claim space (module doc).

    Args:
        spec: a registered :class:`~dpaudit.algorithms.spec.AlgorithmSpec`.
        eps: the claim's ε (pinned).
        params: the audited instance (resolved parameters); the proposals override its free
            dimensions.
        pinned: names of the parameters the user gave (never varied).
        budget: :class:`Screen` (and the processes it runs on).
        seed: an int or SeedSequence, disjoint from the measurement's.

    Returns:
        :class:`SpaceScreen`: survivors best first, dropped instances with their reasons.
    """
    t0 = time.perf_counter()
    space = spec.space(pinned)
    root = seed_sequence(seed)
    scored: list[Scored] = []

    def run(batch: list, start: int) -> None:
        out, todo = [], []
        for j, (over, origin) in enumerate(batch):
            try:
                p = spec.resolve_params({**params, **over})
                if not budget.beyond_proof:
                    spec.check_proof(eps, p.get("delta", 0.0))
            except InputError as e:
                out.append(Scored({**params, **over}, origin, reason=f"not accepted: {e}"))
                continue
            out.append(None)
            todo.append((j, (p, origin, child_seed(root, 1, start + j))))
        done = spec_map(_screen_job, spec, (eps, budget), [x for _, x in todo], budget.workers)
        for (j, _), s in zip(todo, done):
            out[j] = s
        scored.extend(out)

    run(propose(space, budget.proposals, child_seed(root, 0), set(pinned)), 0)
    kept = sorted((s for s in scored if not s.reason), key=lambda s: s.score(eps))
    refined = [x for s in kept[:budget.keep] for x in _refine(space, s)]
    run(refined, len(scored))
    unique = {}
    for s in scored:
        unique.setdefault(_key(s.params), s)
    kept = sorted((s for s in unique.values() if not s.reason), key=lambda s: s.score(eps))
    per_run = budget.pairs * (2 * budget.runs + 4 * budget.replays)
    return SpaceScreen(tuple(a.name for a in space.free()), survivors(kept, budget.survivors),
                       tuple(s for s in unique.values() if s.reason), len(scored), budget,
                       time.perf_counter() - t0, sum(per_run * s.samples for s in scored))


def longest(ranked: list[Scored]) -> Scored | None:
    """The instance with the most samples per run, the best ranked of those.

    Args:
        ranked: screened instances, best first.

    Returns:
        The instance, or None if there is none.
    """
    return max(ranked, key=lambda s: s.samples, default=None)


def survivors(ranked: list[Scored], n: int) -> tuple[Scored, ...]:
    """The instances searched for neighbours (module doc, step 3).

    Args:
        ranked: screened instances, best first.
        n: how many.

    Returns:
        The first ``n``, the last place going to :func:`longest` if it is not among them.
    """
    out = list(ranked[:n])
    far = longest(ranked)
    if out and far not in out:
        out[-1] = far
    return tuple(out)


def same_instance(a: dict, b: dict) -> bool:
    """Whether two instances are the same (floats compared to 9 significant digits).

    Args:
        a: one instance's parameters.
        b: the other's.

    Returns:
        True when they agree.
    """
    return _key(a) == _key(b)


def _key(params: dict) -> tuple:
    """An instance's identity: its values, floats to 9 significant digits."""
    def rounded(v: object) -> object:
        if isinstance(v, float):
            return float(f"{v:.9g}")
        return tuple(rounded(x) for x in v) if isinstance(v, tuple) else v
    return tuple(sorted((k, rounded(v)) for k, v in params.items()))


def describe(params: dict, names: Sequence[str]) -> str:
    """The free dimensions of an instance in words: ``horizon=16, phase1_constant=0.0098``.

    Args:
        params: the instance's parameters.
        names: the dimensions to show.

    Returns:
        The text.
    """
    def shown(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.3g}"
        if isinstance(v, tuple):
            return ",".join(f"{x:.3g}" for x in v)
        if isinstance(v, str) and ("," in v or ";" in v):     # a matrix's rows
            return ";".join(",".join(f"{float(x):.3g}" for x in row.split(","))
                            for row in v.split(";"))
        return str(v)
    return ", ".join(f"{k}={shown(params[k])}" for k in names if k in params)



def free_values(params: dict, names: Sequence[str]) -> dict:
    """The values of some dimensions of an instance, JSON-ready.

    Args:
        params: the instance's parameters.
        names: the dimensions.

    Returns:
        {name: value}.
    """
    return {k: list(params[k]) if isinstance(params[k], tuple) else params[k]
            for k in names if k in params}


def to_json(sc: SpaceScreen, space: ClaimSpace, eps: float) -> dict:
    """The ``instance_search`` block of a result.

    No timing is kept (a result is the same on every machine). The audit adds the pool
    searched and the instance audited.

    Args:
        sc: the screen's outcome.
        space: the claim space.
        eps: the claimed ε.

    Returns:
        The space (its claim and dimensions), the screen's settings, every instance kept (best
        first: its free values, origin, p_div, the releases' largest loss, samples per run) and
        dropped (with its reason).
    """
    def row(s: Scored) -> dict:
        r = {"instance": free_values(s.params, sc.free), "origin": s.origin,
             "p_div": s.p_div, "max_release_loss": s.max_loss, "samples": s.samples}
        return {**r, "reason": s.reason} if s.reason else {**r, "releases_above_eps":
                                                            s.above(eps)}
    return {"claim": space.claim, "space": space.rows(), "free": list(sc.free),
            "pinned": [a.name for a in space.axes if a.pinned],
            "screen": {**sc.budget_json, "seed": "child 5 of the root seed"},
            "screened": sc.screened, "samples": sc.samples, "ranked": [row(s) for s in sc.ranked],
            "dropped": [row(s) for s in sc.dropped]}
