"""Adversarial neighbours: the search for the neighbouring pair that leaks the most.

DP quantifies over every neighbouring pair; an audit is only as strong as the pair it tries.
Strategies (``dpaudit run --neighbours STRATEGY``):

``search`` (default)
    1. *Candidates*: every position × value pattern × base table of the algorithm's privacy
       model (:func:`dpaudit.data.neighbours.structured`; large tables: the positions the release
       log marks).
    2. *White-box screen*: :data:`SCREEN_RUNS` run/replay pairs per direction and candidate
       (:func:`dpaudit.auditing.whitebox.screen`): the largest privacy loss of the releases, its
       mean,
       and whether the replay diverged. Candidates whose releases can lose at most
       :data:`SCREEN_KEEP` of the best candidate's loss are dropped (if decisions read data
       only through releases, the transcript cannot leak more than its releases); divergent
       candidates (raw data reached a decision) come first. At most :data:`MAX_BLACKBOX` go
       on, ranked by that loss, then by how early the first release they feed is made (a
       release shows only in the actions after it: the earlier, the more the transcript can
       reveal before the horizon; e.g. AdaP-TT's initial pulls, released after K samples),
       taking the phases in turn: the earliest candidate of every phase (epoch, episode) of
       that first release, then the second of each, and so on. An early release need not be
       the one the decisions read most: Lazy-DP-TS's epoch-0 means hardly move its posterior
       draws (the bonus clips μ̄ at 1), its later epochs' do. At least :data:`COUPLED_QUOTA`
       of them (where there are so many) are candidates whose change moved a transcript in
       :data:`SCREEN_RUNS` coupled runs (d and d′ from one generator), taking the places of
       the last-ranked others (:func:`admitted`): a large release loss need not move a
       decision (FTNL with one draw reused releases the raw argmax, and the pairs at the
       largest release loss change every coordinate alike, never moving it).
    3. *Black-box successive halving* (:func:`schedule`): each round draws a fresh pilot for
       every surviving candidate (compiled candidates keep their earlier rounds' runs too),
       scores it by the ε lower bound its best event is predicted to give on the measurement
       sample (:func:`dpaudit.statistics.events.best_event`), and keeps the best 1/:data:`ETA`,
       until
       twice the number of finalists remain. Half the pilot budget goes to that last round,
       the other half is shared equally by the earlier rounds. In the last round a third of
       the runs is held out: the candidates' events are compared on it
       (:func:`dpaudit.statistics.events.validated_bound`), because the best of many unions scored
       on
       one sample overrates itself.
    4. The best finalists are measured on fresh samples (:mod:`dpaudit.statistics.measure`).
``blackbox``
    The same without the white-box screen (for algorithms without a release log): every
    candidate enters the rounds (at least :data:`MIN_ROUND_RUNS` runs each, so the budget
    may be exceeded; the JSON reports the runs used).
``structure``
    The v1 candidates (the algorithm's ``structure`` rows on three bases,
    :func:`dpaudit.data.neighbours.candidates`), one pilot round sharing the budget: the audit of
    the previous version, kept for comparison.

**Multiplicity.** Everything tried before the measurement (every candidate, every round,
every event) looks only at pilot samples, which the measurement never reuses; the verdict's
error budget α is spent on the measured finalists alone (Bonferroni over looks × finalists,
:mod:`dpaudit.statistics.measure`), so trying more candidates costs no confidence, only pilot runs.

**Privacy profile** (:func:`profile`): the white-box loss and the predicted ε_lb of every
candidate, as (table × position) matrices ready to draw as a heatmap.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from dpaudit.algorithms import registry
from dpaudit.auditing.whitebox import screen as wb_screen
from dpaudit.core import executor, validate
from dpaudit.data import neighbours as nbrs
from dpaudit.data.tables import MODELS, base_tables

if TYPE_CHECKING:
    from dpaudit.algorithms.spec import AlgorithmSpec, Prepared

STRATEGIES = ("search", "blackbox", "structure")
ETA = 2                 # successive halving keeps the best 1/ETA of each round
SCREEN_RUNS = 8         # white-box run/replay pairs per direction and candidate
SCREEN_KEEP = 0.5       # keep candidates whose release loss reaches this share of the best
SCREEN_CHUNK = 64       # candidates per task when the screen runs on the worker processes
MAX_BLACKBOX = 64       # candidates entering the black-box rounds, at most
COUPLED_QUOTA = 16      # of them, at least this many whose change moved a coupled transcript
MIN_ROUND_RUNS = 500    # pilot runs per side per candidate and round, at least


def schedule(n: int, finalists: int, budget: int, eta: int | None = ETA,
             min_runs: int = MIN_ROUND_RUNS, last: int | None = None) -> list[tuple[int, int]]:
    """Successive-halving rounds for ``n`` candidates.

    Rounds halve the candidates until ``last`` (default 2 × ``finalists``) remain; the last
    round's pilot picks the finalists among them and their events. Half of the budget goes to
    the last round, half is shared by the others.

    Args:
        n: candidates.
        finalists: pairs measured after the search.
        budget: pilot runs per side over all rounds (each round gets at least ``min_runs`` per
            candidate, so a tiny budget may be exceeded).
        eta: the halving factor; None: one round, the budget shared equally (the best
            ``finalists`` are measured).
        min_runs: pilot runs per side per candidate at least.
        last: candidates in the last round (at least ``finalists``); None: 2 × ``finalists``.

    Returns:
        (candidates, pilot runs per side per candidate) per round.
    """
    if eta is None:
        return [(n, max(budget // max(n, 1), min_runs))]
    # the finalists are chosen among these, on the last pilot
    last = min(n, 2 * finalists if last is None else max(last, finalists))
    counts = [n]
    while counts[-1] > last:
        counts.append(max(last, math.ceil(counts[-1] / eta)))
    if len(counts) == 1:
        return [(n, max(budget // max(n, 1), min_runs))]
    early = budget / 2 / (len(counts) - 1)
    out = [(c, max(int(early // c), min_runs)) for c in counts[:-1]]
    return out + [(counts[-1], max(int(budget / 2 // counts[-1]), min_runs))]


def round_runs(runs: int, costs: list, mean_cost: float, min_runs: int = MIN_ROUND_RUNS) -> int:
    """Pilot runs per side per candidate of a round, within its share of the samples.

    :func:`schedule` counts runs as if every candidate cost the average of those that entered
    the search. A round whose candidates take more samples per run on average (long-horizon
    survivors) gets proportionally fewer runs, the same for each of them, so that the rounds
    together spend at most budget × ``mean_cost`` samples per side (up to ``min_runs``).

    Args:
        runs: the round's runs per side per candidate in the schedule.
        costs: samples per run of each of the round's candidates.
        mean_cost: the mean samples per run of the candidates that entered the search.
        min_runs: runs per side per candidate at least.

    Returns:
        ``runs``, or fewer (at least ``min_runs``) for a round of costlier candidates.
    """
    cost = sum(costs) / len(costs) if costs else 0.0
    if mean_cost <= 0 or cost <= mean_cost:
        return runs
    return min(runs, max(int(runs * mean_cost / cost), min_runs))


PAIRS_PER_POSITION = 32   # bases × value patterns: at most 29 pairs per position (full model)


def check_memory(spec: AlgorithmSpec, prep: Prepared, params: dict) -> tuple:
    """The shape of the instance's audit tables, once its candidates fit in memory.

    Args:
        spec: the algorithm.
        prep: its prepared arrays.
        params: its parameters.

    Returns:
        The tables' shape.

    Raises:
        InputError: the candidate tables would need more than half the memory (naming the
            horizon), before any simulation.
    """
    horizon = spec.audit_horizon(params)
    shape = MODELS[spec.model].shape(prep.means.shape[0], horizon)
    entries = math.prod(shape)
    validate.memory(f"horizon={horizon}: the candidate pairs of "
                    f"{'x'.join(map(str, shape))} tables",
                    2 * PAIRS_PER_POSITION * min(entries, nbrs.MAX_POSITIONS) * entries * 8,
                    "use a smaller --param horizon, or one explicit --pair")
    return shape


def candidates(strategy: str, spec: AlgorithmSpec, prep: Prepared, params: dict, *, seeds: tuple,
               workers: int = 1) -> tuple[list, list, dict]:
    """The candidate pairs of a registered algorithm, and their order.

    Args:
        strategy: ``search``, ``blackbox`` or ``structure``.
        spec: the algorithm.
        prep: its prepared arrays.
        params: its parameters.
        seeds: (table seed, an int: the base tables; screen seed, a SeedSequence: the
            white-box screen).
        workers: processes screening the pairs (the result does not depend on it).

    Returns:
        (pairs, order, info): every candidate pair, the indices entering the black-box rounds
        (best first), and ``info`` = {"screen": its settings (JSON) or None, "scores": per-pair
        :func:`dpaudit.auditing.whitebox.screen` results or None}.
    """
    table_seed, screen_seed = seeds
    # the instance the kernel uses (``params["means"]`` may be None: derived by ``prepare``)
    params = {**params, "means": tuple(float(x) for x in prep.means)}
    shape = check_memory(spec, prep, params)
    if strategy == "structure":
        pairs = nbrs.candidates(spec, params, table_seed)
        return pairs, list(range(len(pairs))), {"screen": None, "scores": None}
    means, horizon = params["means"], spec.audit_horizon(params)
    m = MODELS[spec.model]
    marks = set()
    if len(m.positions(shape)) > nbrs.MAX_POSITIONS:
        base = base_tables(spec.model, means, horizon, table_seed)[0][0]
        marks = nbrs.release_positions(spec, prep, base, horizon)
    positions = nbrs.select_positions(spec.model, shape, marks)
    pairs = nbrs.structured(spec.model, means, horizon, table_seed, positions,
                            own_bases(spec, prep, horizon))
    if strategy == "blackbox":
        return pairs, list(range(len(pairs))), {"screen": None, "scores": None}
    scores = spec_map(_screen_pair, spec, (prep, horizon),
                      list(zip(pairs, screen_seed.spawn(len(pairs)))), workers, chunk=SCREEN_CHUNK)
    order = screened(scores)
    return pairs, order, {"screen": {
        "runs_per_direction": SCREEN_RUNS, "keep_share": SCREEN_KEEP,
        "max_loss": max(s["max_loss"] for s in scores), "kept": len(order)},
        "scores": scores}


def spec_map(job: Callable, spec: AlgorithmSpec, common: tuple, items: list, workers: int,
             chunk: int = 1) -> list:
    """``job(spec, *common, item)`` for every item, on the worker processes when it can be.

    The screens call it: each item (an instance, a candidate pair) is a pure function of its
    own seed, so the results, in item order, are those of the loop in this process whatever
    ``workers``. The spec travels by its registered name (a spec that the registry does not
    hold under its name, e.g. one built in a test, runs the loop here).

    Args:
        job: a module-level function of (spec, *common, item).
        spec: the algorithm.
        common: arguments shared by every item (sent once per chunk).
        items: the items.
        workers: processes.
        chunk: items per task.

    Returns:
        The results, in item order.
    """
    if workers <= 1 or len(items) <= chunk or not _registered(spec):
        return [job(spec, *common, x) for x in items]
    tasks = [(spec.name, job, common, items[i:i + chunk]) for i in range(0, len(items), chunk)]
    return [r for part in executor.map_tasks(_spec_chunk, tasks, workers) for r in part]


def _registered(spec: AlgorithmSpec) -> bool:
    return any(s is spec for s in registry.all_specs())


def _spec_chunk(task: tuple) -> list:
    name, job, common, items = task
    spec = registry.get(name)
    return [job(spec, *common, x) for x in items]


def _screen_pair(spec: AlgorithmSpec, prep: Prepared, limit: int, item: tuple) -> dict:
    pair, seed = item
    return wb_screen(spec, prep, pair, runs=SCREEN_RUNS, seed=seed, limit=limit)


def own_bases(spec: AlgorithmSpec, prep: Prepared, horizon: int) -> list:
    """The base tables an algorithm adds to the structured ones.

    Args:
        spec: the algorithm (``spec.extra``'s ``boundary_tables(prep, horizon)``, e.g. DP-SE's
            threshold boundary).
        prep: its prepared arrays.
        horizon: rows of the audit tables.

    Returns:
        (table, recipe) pairs; [] for most algorithms.
    """
    make = spec.extra.get("boundary_tables")
    return make(prep, horizon) if make else []


def screened(scores: list[dict]) -> list[int]:
    """The candidates that pass the white-box screen, best first (module doc).

    Args:
        scores: per-candidate :func:`dpaudit.auditing.whitebox.screen` results.

    Returns:
        Indices, by divergent replays, then largest loss (to 9 decimals: float rounding must
        not decide), earliest release fed (:func:`_first_release`), mean loss and index; the
        first :data:`MAX_BLACKBOX` with the quota of :func:`admitted`.
    """
    best = max(s["max_loss"] for s in scores)
    keep = [i for i, s in enumerate(scores)
            if s["diverged_runs"] > 0 or best <= 0 or s["max_loss"] >= SCREEN_KEEP * best]

    def tier(i: int) -> tuple:
        return -(scores[i]["diverged_runs"] > 0), -round(scores[i]["max_loss"], 9)
    keep.sort(key=lambda i: (*tier(i), _first_release(scores[i]), -scores[i]["mean_loss"], i))
    turn, seen = {}, {}
    for i in keep:      # the n-th candidate feeding its phase first, in each tier
        group = (tier(i), _first_phase(scores[i]))
        turn[i] = seen[group] = seen.get(group, -1) + 1
    keep.sort(key=lambda i: (*tier(i), turn[i]))
    return admitted(keep, scores)


def admitted(order: list[int], scores: list[dict]) -> list[int]:
    """The first :data:`MAX_BLACKBOX` of a ranked order, with a quota of moved transcripts.

    At least :data:`COUPLED_QUOTA` of them (where the order has so many) are candidates whose
    change moved a transcript in the screen's coupled runs: the best-ranked of those beyond
    the first :data:`MAX_BLACKBOX` replace the last-ranked of the others in it.

    Args:
        order: candidate indices, best first.
        scores: per-candidate :func:`dpaudit.auditing.whitebox.screen` results.

    Returns:
        At most :data:`MAX_BLACKBOX` indices, in the order's order.
    """
    top = order[:MAX_BLACKBOX]
    moved = sum(scores[i]["coupled_diverged"] > 0 for i in top)
    extra = [i for i in order[MAX_BLACKBOX:]
             if scores[i]["coupled_diverged"] > 0][:max(0, COUPLED_QUOTA - moved)]
    drop = set([i for i in reversed(top) if scores[i]["coupled_diverged"] == 0][:len(extra)])
    return [i for i in order if i in set(top) - drop or i in extra]


def _first_phase(score: dict) -> int:
    """The phase (epoch, episode) of the first release the candidate feeds (-1 if none)."""
    feeds = score.get("feeds", [])
    return min(feeds, key=lambda f: f["t"])["phase"] if feeds else -1


def _first_release(score: dict) -> float:
    """Samples taken when the first release the candidate feeds was made.

    Samples taken when the first release the candidate feeds was made (inf if none): a
    release can only show in the actions after it, so the earlier, the more the transcript
    can reveal of it before the horizon.
    """
    return min((f["t"] for f in score.get("feeds", [])), default=math.inf)


def profile(pairs_json: list[dict], screen: list[dict] | None, predicted: dict,
            measured: dict) -> dict:
    """The privacy profile by changed position.

    Args:
        pairs_json: the candidates' JSON.
        screen: the white-box screen's scores (or None).
        predicted: the black-box pilot's predicted ε_lb per candidate, in the last round it
            reached.
        measured: the finalists' measured ε_lb, by index.

    Returns:
        Matrices indexed [table][position] (rows: base table and pattern; columns: positions in
        table order), ``null`` where not computed: ``whitebox_max_loss``, ``predicted_eps_lb``
        and ``eps_lb``.
    """
    positions = sorted({tuple(p["position"]) for p in pairs_json})
    tables = sorted({(p["base"]["name"], p.get("pattern", "")) for p in pairs_json})
    col = {pos: j for j, pos in enumerate(positions)}
    row = {t: i for i, t in enumerate(tables)}

    def matrix(values: dict):
        out = [[None] * len(positions) for _ in tables]
        for i, v in values.items():
            p = pairs_json[i]
            out[row[(p["base"]["name"], p.get("pattern", ""))]][col[tuple(p["position"])]] = v
        return out

    prof = {"axes": ["table", "position"], "positions": [list(p) for p in positions],
            "tables": [f"{b} {pat}".strip() for b, pat in tables],
            "predicted_eps_lb": matrix(predicted), "eps_lb": matrix(measured)}
    if screen is not None:
        prof["whitebox_max_loss"] = matrix({i: s["max_loss"] for i, s in enumerate(screen)})
    return prof
