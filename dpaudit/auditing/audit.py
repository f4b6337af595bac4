"""Privacy audits: the shared pipeline, and its use on registered bandit algorithms.

Data flow: *sources* (one per candidate neighbouring pair; a source draws runs on d or d' and
turns them into feature cells) → pilot on each source, split in a ranking and a scoring half
→ one event per source (:mod:`dpaudit.statistics.events`) → the best ``finalists`` sources measured
on
fresh samples with valid early stopping (:mod:`dpaudit.statistics.measure`: Clopper–Pearson bounds,
Bonferroni over looks × finalists) → ε_lb = the largest lower bound → verdict
(docs/reference/verdict-json.md):
``violation`` if ε_lb > ε (with confidence 1 − α the privacy loss exceeds the claim), else
``pass``.

Registered algorithms (:func:`audit_algorithm`) use :class:`KernelSource`: compiled runs whose
cells are *views*, prefixes of the transcript and windows right after the changed row
(:mod:`dpaudit.simulation.simulate`). Every event is a set of
cells of a function of the released output (actions, τ, â), so its probability ratio
lower-bounds the privacy loss of the full transcript. Generic mechanisms and plain Python
callables use :mod:`dpaudit.auditing.mechanism`.
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from tqdm import tqdm

from dpaudit.algorithms import registry
from dpaudit.algorithms.spec import AlgorithmSpec
from dpaudit.auditing import exact, importance, instances, search, strata
from dpaudit.auditing.whitebox import Replay, whitebox
from dpaudit.core import executor
from dpaudit.core.allowance import Allowance
from dpaudit.core.request import (AuditRequest, Budget, Claim, DEFAULT_ALPHA, DEFAULT_BETA,
                                  DEFAULT_INSTANCES, DEFAULT_MARGIN, DEFAULT_NEIGHBOURS,
                                  FINALISTS, SMALL_DELTA_SHARE, WHITEBOX_RUNS)
from dpaudit.core.terms import PrivacyModel, Side, Verdict
from dpaudit.data import tables
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import (CHUNK, COUNTS, SEQUENCE, STATUS_NAMES, TRUNCATED,
                                         as_views, child_seed, run_batch,
                                         simulate_many)
from dpaudit.statistics.events import (CANDIDATE_LEVELS, Event, best_event,
                                       candidate_events, lookup, validated_bound)
from dpaudit.statistics.measure import Finalist, LOOKS, Measurement, design, measure
from dpaudit.statistics.stats import detectable_eps, detectable_loss, log_ratio, log_ratio_interval
from dpaudit.verdicts.result import AuditResult
from dpaudit.verdicts.verdict import Observation, decide, runs_needed

if TYPE_CHECKING:
    from dpaudit.algorithms.spec import Prepared
    from dpaudit.data.tables import NeighbourPair
    from dpaudit.simulation.simulate import Counts, Request
    from dpaudit.statistics.measure import Measured

DEFAULT_RUNS = 2_000_000   # measurement runs per side per finalist (bandit algorithms)
PILOT_BUDGET = 0.75        # neighbour search: pilot runs per side, all rounds = 0.75 × runs
LOSS_TABLE_ROWS = 20
WINDOW_FROM = 16           # changed rows from here on also get windows after them as views
COUNTS_FROM = 4            # windows at least this long are also viewed as arm counts


def view_lengths(K: int, horizon: int) -> list[int]:
    """The prefix lengths of the transcript that the event search audits.

    Args:
        K: arms.
        horizon: the audit horizon (samples).

    Returns:
        K+1, K+2, K+4, ... (the first decision after initialisation and geometrically longer
        prefixes), and the whole horizon.
    """
    out, step = [], 1
    while K + step < horizon:
        out.append(K + step)
        step *= 2
    return sorted(set(out + [horizon]))


def source_views(pair: NeighbourPair, K: int, horizon: int) -> np.ndarray:
    """The views of a candidate pair's runs: prefixes and windows after the changed row.

    For user/full tables with a changed row t ≥ :data:`WINDOW_FROM`, the windows [t + 1,
    t + 1 + w), w = 1, 2, 4, ... up to the horizon, hold the actions right after the changed
    row, where a leak of that row shows first (a prefix that long is unique to almost every
    run; earlier rows are covered by the prefixes); windows of at least :data:`COUNTS_FROM`
    samples also count how often each arm was played in them
    (:data:`~dpaudit.simulation.simulate.COUNTS`): a release that steers many later draws a
    little, as Lazy-DP-TS's epoch means steer its posterior samples, shows in the counts long
    after the sequences have become unique to every run.

    Args:
        pair: the candidate pair.
        K: arms.
        horizon: the audit horizon (samples).

    Returns:
        The views as :func:`dpaudit.simulation.simulate.as_views` gives them: the prefixes of
        :func:`view_lengths` and those windows.
    """
    views = [(0, L, SEQUENCE) for L in view_lengths(K, horizon)]
    if pair.model in (PrivacyModel.USER, PrivacyModel.FULL) and pair.row >= WINDOW_FROM:
        start, w = pair.row + 1, 1
        while start < horizon:
            end = min(start + w, horizon)
            views.append((start, end, SEQUENCE))
            if end - start >= COUNTS_FROM:
                views.append((start, end, COUNTS))
            if start + w >= horizon:
                break
            w *= 2
    return as_views(views)


class Source:
    """Runs of one mechanism on one neighbouring pair, as feature cells.

    Subclasses implement ``draw(side, n, seed) -> Counts`` (``side``: a :class:`Side`),
    ``neighbours()`` (the pair's JSON) and may override :meth:`pilot_many` (e.g. to fit the
    cell map on the ranking half), ``orderings`` (extra event orderings, :func:`best_event`),
    :meth:`describe` and :meth:`cell_text`.
    """

    orderings = None
    stable_cells = False   # True: cells mean the same in every draw (pilots may be merged)
    delta = None           # the δ of the claim its runs are audited against (None: the request's)

    @staticmethod
    def draw_many(plans: list) -> list:
        """Counts of many draws: one per plan (source, side, runs, seed).

        Sources of one class that can pool their draws on the worker processes override it
        (compiled kernels, callables returning Transcripts): a search round over many small
        pilots then keeps every core busy. Each draw's counts are those of ``source.draw``.

        Args:
            plans: (source, side, runs, seed) tuples, sources of this class.

        Returns:
            The :class:`~dpaudit.simulation.simulate.Counts` of each plan, in order.
        """
        return [src.draw(side, n, seed) for src, side, n, seed in plans]

    def pilot(self, half: int, seed: np.random.SeedSequence) -> tuple:
        """The (rank, score) pilots.

        Args:
            half: runs per side and half.
            seed: the pilot's seed.

        Returns:
            ((counts on d, counts on d′) of the ranking half, the same of the scoring half).
        """
        return type(self).pilot_many([self], half, [seed])[0]

    @classmethod
    def pilot_many(cls, srcs: list, half: int, seeds: list) -> list:
        """The (rank, score) pilots of many sources of this class, pooled (:meth:`draw_many`).

        Seeded as :meth:`pilot` seeds one: ``seed.spawn(4)`` = ranking d, ranking d′,
        scoring d, scoring d′.

        Args:
            srcs: the sources.
            half: runs per side and half.
            seeds: their pilots' seeds.

        Returns:
            :meth:`pilot`'s result for each source, in order.
        """
        plans = [(s, side, half, k) for s, sd in zip(srcs, seeds)
                 for side, k in zip((*Side, *Side), sd.spawn(4))]
        c = cls.draw_many(plans)
        return [((c[4 * j], c[4 * j + 1]), (c[4 * j + 2], c[4 * j + 3]))
                for j in range(len(srcs))]

    def narrowed(self, ev: Event) -> "Source":
        """The source whose draws measure event ``ev`` (here: this one, every view drawn).

        Args:
            ev: an event chosen on the pilots.

        Returns:
            A source with the same cells and view indices.
        """
        return self

    @property
    def cost(self) -> int:
        """Samples per run of a draw (0 for a source that simulates no bandit)."""
        return int(getattr(self, "limit", 0) or 0)

    def describe(self, ev: Event) -> dict:
        """The event in words, and its view.

        Args:
            ev: the event.

        Returns:
            {"text": ..., "view": ...}.
        """
        return {"text": f"one of {ev.cells.size} output cells", "view": ev.view}

    def cell_text(self, v: int, key: int) -> str:
        """One cell in words (here its hash).

        Args:
            v: the view's index.
            key: the cell.

        Returns:
            The text.
        """
        return f"{int(key):016x}"


@dataclass(frozen=True)
class Candidates:
    """The candidates the pipeline chooses among.

    What the pipeline chooses among: ``sources`` (one per candidate neighbouring pair),
    ``order`` (the sources entering the search, best first), ``pilot_budget`` (pilot runs per
    side over all sources and search rounds, :func:`dpaudit.auditing.search.schedule`),
    ``strategy`` (the neighbour strategy's name, reported), ``screen`` (the white-box
    screen's scores, JSON per source, or None), ``last_round`` (the candidates left for the
    last round, :func:`dpaudit.auditing.search.schedule`) and ``validate_rounds`` (whether the
    earlier rounds also rank their candidates by :func:`validated_bound` on a third of their
    runs instead of by the pilot's pessimistic prediction). ``measure_candidates``: each
    finalist is measured on every event of
    :func:`~dpaudit.statistics.events.candidate_events` of its last pilot round (one set of
    runs, each event a test of the Bonferroni family, :class:`Finalist` ``group``).
    ``eta``: the halving factor of the
    search rounds (:func:`dpaudit.auditing.search.schedule`). ``same_d``: per source, the
    index of the first source with the same input d (None: each its own), e.g. a mechanism's
    input patterns around one base; a round draws the d-side runs of its candidates with one d
    once: k + g instead of 2k draws of n runs for g distinct inputs d, and the round's runs
    per candidate grow by 2k/(k + g) at the same number of outputs. Candidates with one d share
    their round's seed: the same d-side runs (a pooled ``draw_many`` draws them once) and
    common random numbers on their d′ sides (each pair's d and d′ stay independent).
    """

    sources: list
    order: list
    pilot_budget: int
    strategy: str | None = None
    screen: list | None = None
    last_round: int | None = None   # candidates in the last search round (None: 2 × finalists)
    validate_rounds: bool = False   # rank the candidates of every earlier round on fresh runs
    median_fallback: bool = False   # fallback events: best at the frequencies (best_event)
    measure_candidates: bool = False   # measure every candidate event of the last round
    eta: int = search.ETA           # the rounds keep the best 1/eta of their candidates
    same_d: list | None = None      # per source, the first source with its d (shared runs)


@dataclass(frozen=True)
class Found:
    """The pipeline's evidence, from the search rounds to the measurement.

    The pipeline's evidence: the search ``rounds`` ((candidates, runs per side) each), the
    predicted ε_lb per round (``history``), the ``pilots`` and ``events`` per source, the
    validated bounds (``valid``), the ``chosen`` finalists and their :class:`Measurement`;
    ``options``: per source, the candidate events of its last round, all measured (JSON rows
    with their measured bounds, :attr:`Candidates.measure_candidates`).
    """

    rounds: list
    history: dict
    pilots: dict
    events: dict
    valid: dict
    chosen: list
    m: Measurement
    capped: str = ""        # where the samples cap stopped the audit ("" if it did not)
    options: dict = field(default_factory=dict)

    def used(self, order: list) -> int:
        """The source behind the result: the best measured finalist, else the first entered.

        Args:
            order: the sources in the order they entered the search.

        Returns:
            The source's index.
        """
        return self.m.best.finalist.label if self.m.best is not None else order[0]


@dataclass(frozen=True)
class Checks:
    """What the caller adds to the evidence before the verdict is decided.

    What the caller adds to the evidence before the verdict is decided: the ``coverage``
    (which runs read the changed entry), the ``whitebox`` report, keys added to the
    ``search`` JSON, whether a callable is ``reproducible`` from its seed, and the reproducing
    ``command`` line.
    """

    coverage: dict = field(default_factory=lambda: dict(BLACK_BOX_COVERAGE))
    whitebox: dict = field(default_factory=dict)
    search: dict = field(default_factory=dict)
    reproducible: bool | None = None
    command: str = ""
    instances: dict = field(default_factory=dict)   # the instance search's JSON; {}: fixed
    exact: dict = field(default_factory=dict)       # --exact (dpaudit.auditing.exact); {}: none
    small_delta: dict = field(default_factory=dict)  # dpaudit.auditing.importance; {}: none
    stratified: dict = field(default_factory=dict)   # dpaudit.auditing.strata; {}: none


def _exact(spec: AlgorithmSpec, prep: Prepared, pair: tables.NeighbourPair,
           claim: Claim) -> dict:
    """The exact law's figures on the audited pair, or why the walk could not finish there.

    After the audit (an instance search picks the pair, so no run could check it before), a
    walk that turns out infeasible leaves ``refused`` (the reason) instead of discarding the
    audit.
    """
    try:
        return exact.exact_privacy(spec, prep, pair, claim.eps, claim.delta)
    except exact.Infeasible as e:
        return {"eps": claim.eps, "delta": claim.delta, "refused": str(e)}


def _small_delta(spec: AlgorithmSpec, prep: Prepared, pair: tables.NeighbourPair,
                 request: AuditRequest, delta: float, seed: np.random.SeedSequence) -> dict:
    """The importance-sampled bound on the audited pair when asked, or why there is none."""
    runs = request.small_delta_runs
    if runs is None:            # the default: for a δ > 0 claim, in proportion to the budget
        runs = int(SMALL_DELTA_SHARE * (request.budget.runs or DEFAULT_RUNS)) if delta > 0 else 0
    if not runs:
        return {}
    try:
        return importance.small_delta(spec, prep, pair, importance.SmallDelta(
            delta, runs, seed, request.budget.alpha))
    except importance.NotApplicable as e:
        return {"refused": str(e), "runs": runs}


def _stratified(spec: AlgorithmSpec, prep: Prepared, pair: tables.NeighbourPair,
                request: AuditRequest, seed: np.random.SeedSequence) -> dict:
    """The stratified pure-ε bound on the audited pair when asked, or why there is none."""
    runs = request.stratified_runs
    if not runs:
        return {}
    try:
        return strata.stratified_bound(spec, prep, pair, strata.Stratified(
            runs, seed, request.budget.alpha))
    except importance.NotApplicable as e:
        return {"refused": str(e), "runs": runs}


def draw_seed(request: AuditRequest) -> AuditRequest:
    """The request with its root seed drawn when it has none (reported in the result).

    Args:
        request: the audit request.

    Returns:
        The request, seeded.
    """
    if request.seed is not None:
        return request
    return replace(request, seed=int(np.random.SeedSequence().generate_state(1, np.uint32)[0]))


def command_line(request: AuditRequest, reproducible: bool | None = None) -> str:
    """The command line that reproduces a seeded request.

    Args:
        request: the audit request.
        reproducible: whether a callable's runs are reproducible from the seed (None: not
            checked).

    Returns:
        The ``dpaudit run`` line, or "" when none would reproduce the result (a spec object, a
        callable or a pair object given in Python; a callable that draws other randomness).
    """
    if reproducible is False or not request.reproducible_by_command:
        return ""
    return request.command()


def run_audit(req: AuditRequest, cand: Candidates, seeds: tuple, bar: tqdm | None = None,
              allow: Allowance | None = None) -> Found:
    """The shared pipeline (module doc) over the candidates' sources, up to the measurement.

    A pilot round starts only if it leaves room for the measurement (all of it, or half the
    samples left if less); a look only if it fits (docs/method/kernels.md). A round whose
    candidates take more samples per run than the average candidate gets fewer runs
    (:func:`dpaudit.auditing.search.round_runs`).

    Args:
        req: the request, resolved: its budget's ``runs`` (measurement runs per side per
            finalist at the last look) and its claim's δ are numbers.
        cand: the candidate sources and the order they enter the search.
        seeds: (pilot, measurement) SeedSequences, drawn from by no other stage.
        bar: a tqdm progress bar, or None.
        allow: what the audit may still spend (None: the budget's samples cap and time limit,
            from now).

    Returns:
        The :class:`Found` evidence: search rounds, pilots, events, validated bounds, finalists
        and their measurement.
    """
    s_pilot, s_meas = seeds
    sources, b = cand.sources, req.budget
    runs = b.runs
    deltas = [claim_delta(s, req.claim) for s in sources]
    order = list(cand.order)
    F = min(b.finalists, len(order))
    tests = F * (len(CANDIDATE_LEVELS) if cand.measure_candidates else 1)   # events measured
    a_plan = design(runs, b.alpha / tests)[1][-1]     # the level of the last look's tests
    rounds = search.schedule(len(order), F, cand.pilot_budget,
                             eta=None if cand.strategy == "structure" else cand.eta,
                             last=cand.last_round)
    if bar is not None:
        bar.total = sum(4 * max(n // 2, 1) * k for k, n in rounds)
    validate = cand.strategy not in (None, "structure") and rounds[-1][0] > F
    alive, history, pilots, events, valid = order, {i: [] for i in order}, {}, {}, {}
    costs = source_costs(sources)
    mean_cost = sum(costs[i] for i in order) / len(order) if order else 0.0
    allow = allow or Allowance.of(b.max_samples, b.time_limit)
    measurement = 2 * runs * F * max([costs[i] for i in order], default=0)
    capped, options = "", {}
    for r, (k, n) in enumerate(rounds):
        n = search.round_runs(n, [costs[i] for i in alive[:k]], mean_cost)
        d_of = cand.same_d or range(len(sources))
        g = len({d_of[i] for i in alive[:k]})   # distinct inputs d: their runs are shared
        n = 2 * k * n // (k + g)
        rounds[r] = (k, n)
        cost = sum(2 * n * costs[i] for i in alive[:k]) * (k + g) // (2 * k)
        why = allow.refusal(cost + min(measurement, allow.samples / 2))
        if why:     # the round, and room for the measurement (or half the cap), must fit
            capped = f"{why} stopped the pilot rounds before round {r + 1} of {len(rounds)}"
            rounds = rounds[:r]
            break
        allow.spend(cost)
        alive = alive[:k]
        last = r == len(rounds) - 1
        checked = validate if last else cand.validate_rounds
        many = last and cand.measure_candidates     # several candidate events per source
        half = max(n // 3 if checked else n // 2, 1)
        got = _pilots([sources[i] for i in alive], half,
                      [child_seed(s_pilot, r * len(sources) + d_of[i]) for i in alive])
        for i, pilot in zip(alive, got):
            if i in pilots and sources[i].stable_cells:    # survivors keep earlier rounds' runs
                pilot = tuple(tuple(a.merged(b) for a, b in zip(old, new))
                              for old, new in zip(pilots[i], pilot))
            pilots[i] = pilot
            events[i] = best_event(pilot, runs, a_plan, deltas[i], sources[i].orderings,
                                   fallback="median" if cand.median_fallback else "raw")
            if many:
                options[i] = candidate_events(pilot, runs, a_plan, deltas[i],
                                              sources[i].orderings) or [events[i]]
        if checked:    # rank the round's events on fresh runs (validated_bound)
            fresh = _draws([sources[i].narrowed(events[i]) if events[i] else sources[i]
                            for i in alive], half,
                           [child_seed(s_pilot, (len(rounds) + (0 if last else 1 + r))
                                       * len(sources) + d_of[i]) for i in alive])
            valid = {i: validated_bound(events[i], c, runs, a_plan, deltas[i])
                     for i, c in zip(alive, fresh) if events[i] is not None}
        for i in alive:
            history[i].append(events[i].predicted_lb if events[i] else 0.0)
        # ranked by the validated or predicted bound; pairs predicting 0 by the median one
        score = ({i: (v,) for i, v in valid.items()} if valid else
                 {i: (e.predicted_lb, e.median_lb) for i, e in events.items() if e})
        alive = sorted(alive, key=lambda i: tuple(-x for x in score.get(i, (-1.0,))))
    chosen = [i for i in alive[:F] if events.get(i) is not None]
    if bar is not None:
        bar.total = bar.n + 2 * runs * len(chosen)
    tried = {i: options.get(i) or [events[i]] for i in chosen}   # a pair's measured events
    narrow = [sources[i].narrowed(tried[i][0]) if len(tried[i]) == 1 else sources[i]
              for i in chosen]
    by_label = dict(zip(chosen, narrow))

    def look(plans: list) -> list:      # a look's draws, pooled on the worker processes
        return type(narrow[0]).draw_many([(by_label[f.label], side, k, sd)
                                          for f, side, k, sd in plans])

    m = measure([Finalist(e, n.draw, i, deltas[i], n.cost, i if len(tried[i]) > 1 else None)
                 for i, n in zip(chosen, narrow) for e in tried[i]], req.claim, b, s_meas,
                allow, look if _pooled(narrow) else None)
    options = {i: [_option(ms.finalist.event, ms.eps_lb) for ms in m.measured
                   if ms.finalist.label == i] for i in chosen if i in options}
    if bar is not None:
        bar.close()
    if m.stopped.startswith("cap: ") and not capped:
        capped = m.stopped[len("cap: "):].replace("it after", "the measurement after")
    return Found(rounds, history, pilots, events, valid, chosen, m, capped, options)


def _option(ev: Event, eps_lb: float) -> dict:
    """A candidate event of the last round as a JSON row, with its measured lower bound."""
    return {"ordering": ev.ordering, "numerator": ev.numerator.label,
            "n_cells": int(ev.cells.size), "scoring_hits": list(ev.scoring_hits),
            "predicted_eps_lb": ev.predicted_lb, "eps_lb": eps_lb}


def claim_delta(source: Source, claim: Claim) -> float:
    """The DP δ of the claim a source's runs are audited against.

    A source of an instance calibrated by its own δ (a searched instance of an (ε, δ)-DP
    algorithm, run with the noise of that δ) is judged at that δ, never at another; any other
    source at the request's.

    Args:
        source: the candidate source.
        claim: the request's claim.

    Returns:
        δ in [0, 1).
    """
    return float(source.delta if source.delta is not None else claim.delta or 0.0)


def source_costs(sources: list) -> list:
    """Samples per run of each source.

    Args:
        sources: the candidate sources.

    Returns:
        A compiled source's ``limit`` (its audit horizon); 0 for sources that simulate no bandit
        (a mechanism's single call).
    """
    return [s.cost for s in sources]


def conclude(req: AuditRequest, cand: Candidates, found: Found, checks: Checks,
             t0: float) -> AuditResult:
    """The audit's result, built once from the evidence and the checks.

    Args:
        req: the request, resolved as for :func:`run_audit`.
        cand: the candidates.
        found: the evidence of :func:`run_audit`.
        checks: what the caller adds (coverage, white-box report, search keys, command).
        t0: the audit's start (``time.perf_counter()``).

    Returns:
        The :class:`~dpaudit.verdicts.result.AuditResult`, with the verdict of
        :mod:`dpaudit.verdicts.verdict`.
    """
    sources, m, b = cand.sources, found.m, req.budget
    eps, runs, margin, beta = req.claim.eps, b.runs, b.margin, b.beta
    # the claim judged is that of the instance behind the result (its finalist's δ)
    delta = claim_delta(sources[found.used(cand.order)], req.claim)
    if m.best is not None:
        best = m.best
        i = best.finalist.label
        src, ev = sources[i], best.finalist.event
        k_num, k_den = best.num_den()
        lb = best.eps_lb
        eps_hat = log_ratio(k_num, best.n, k_den, best.n, delta)
        detect = detectable_eps(k_den / best.n, best.n, eps, m.alpha_per_look[-1], delta)
        detect_power = detectable_loss(k_den, best.n, design(runs, b.alpha / len(m.measured)),
                                       eps, delta, beta)
        event = {**src.describe(ev), "ordering": ev.ordering, "numerator": ev.numerator.label,
                 "n_cells": int(ev.cells.size), "predicted_eps_lb": ev.predicted_lb,
                 "scoring_hits": list(ev.scoring_hits)}
        loss_table = _loss_table(src, found.pilots[i], best.counts, ev.view_index, b.alpha, eps)
        nb_json = src.neighbours()
        worst = max(m.measured, key=lambda ms: ms.loss_ub)   # the pass needs every bound
        eps_ub = worst.loss_ub
        informative = any(_can_carry(ms, ms.delta(delta), (1 + margin) * eps)
                          for ms in m.measured)
        def needed() -> int | None:
            return runs_needed(*(h / worst.n for h in worst.num_den()), worst.delta(delta),
                               beta, (1 + margin) * eps, runs)
    else:   # no event separates d from d' on any pilot
        lb, eps_hat, detect, detect_power, best = 0.0, None, float("inf"), float("inf"), None
        eps_ub, informative, needed = float("inf"), False, None
        event = {"text": "no event separates d from d' on the pilot sample", "view": None}
        loss_table, nb_json = [], sources[cand.order[0]].neighbours()
    # an ε-local-DP claim refuted by a report's exact loss (dpaudit.auditing.whitebox)
    proof = bool(checks.whitebox.get("reports", {}).get("refuted"))
    v = decide(Observation(eps_lb=lb, eps=eps, margin=margin, eps_ub=eps_ub, proof=proof,
                           informative=informative, measured=best is not None,
                           separated=best is not None and ev.predicted_lb > 0,
                           coverage=checks.coverage, needed=needed, capped=found.capped,
                           runs_option="--runs" if b.runs_name == "runs" else b.runs_name))
    return AuditResult(
        algorithm=req.algorithm, params=req.params, eps=float(eps), delta=float(delta),
        verdict=v.verdict, reason=v.reason, runs_needed=v.runs_needed, margin=margin,
        evidence="white-box proof" if proof and not lb > eps else "statistical", eps_lb=lb, eps_hat=eps_hat, saturated=best is not None and k_den == 0, alpha=b.alpha,
        neighbours=nb_json, event=event, counts=_counts(found.rounds, len(sources), best, m, req.claim.delta or 0.0),
        loss_table=loss_table, seed=req.seed, detectable_eps=detect, beta=beta,
        detectable_loss=detect_power, eps_ub=eps_ub, coverage=checks.coverage,
        whitebox=checks.whitebox, search={**_search(cand, found, runs), **checks.search},
        reproducible=checks.reproducible, command=checks.command,
        instance_search=checks.instances, cut_short=found.capped, exact=checks.exact,
        small_delta=checks.small_delta, stratified=checks.stratified,
        measured=(src, ev) if best is not None else None,
        runtime_s=round(time.perf_counter() - t0, 3))


def _can_carry(ms: Measured, delta: float, target: float) -> bool:
    """Whether a measured event can carry a δ-loss of ``target`` at all.

    Whether a measured event can carry a δ-loss of ``target`` at all: ln((1 − δ)/p̂_den) >
    target, p̂_den its frequency on the denominator side (1/n when never seen there).
    """
    p_den = max(ms.num_den()[1], 1) / max(ms.n, 1)
    return delta < 1 and math.log((1 - delta) / p_den) > target


def _pooled(srcs: list) -> bool:
    """Whether the sources' draws can be pooled: all of one class."""
    return bool(srcs) and len({type(s) for s in srcs}) == 1


def _draws(srcs: list, n: int, seeds: list) -> list:
    """Counts of fresh runs on both sides for every source.

    (counts on d, counts on d') of ``n`` fresh runs per side for every source (pooled by the
    sources' :meth:`Source.draw_many`); side j of source i uses ``seeds[i].spawn(2)[j]``.
    """
    plans = [(s, side, n, sd) for s, seed in zip(srcs, seeds)
             for side, sd in zip(Side, seed.spawn(2))]
    c = type(srcs[0]).draw_many(plans) if _pooled(srcs) else [
        s.draw(side, n, sd) for s, side, n, sd in plans]
    return [(c[2 * j], c[2 * j + 1]) for j in range(len(srcs))]


def _pilots(srcs: list, half: int, seeds: list) -> list:
    """The (rank, score) pilots of every source.

    (rank, score) pilots of ``half`` runs per side and half for every source, seeded as
    :meth:`Source.pilot` seeds them, pooled by the sources' :meth:`Source.pilot_many` so that
    a search round over many small pilots keeps every core busy.
    """
    if not _pooled(srcs):
        return [s.pilot(half, sd) for s, sd in zip(srcs, seeds)]
    return type(srcs[0]).pilot_many(srcs, half, seeds)


class ActionSource(Source):
    """A source whose cells are views of a bandit's actions.

    Its ``pair`` (a :class:`NeighbourPair`) and ``views`` are its subclass's; events and cells
    are written as the transcripts behind them.

    Subclasses implement ``items(v, side=None)``: cell → transcript
    (:func:`transcript_item`) for view ``v``, from runs on ``side`` or on either table.
    """

    def neighbours(self) -> dict:
        """The pair's JSON."""
        return self.pair.describe()

    def describe(self, ev: Event) -> dict:
        """The event as the transcripts behind a few of its cells.

        Args:
            ev: the event.

        Returns:
            {"text": ..., "view": ..., "examples": ...}.
        """
        return event_description(ev, self.items(ev.view_index, ev.numerator),
                                 self.pair.model == PrivacyModel.LOCAL)

    def cell_text(self, v: int, key: int) -> str:
        """The transcript behind a cell of a view; its hash when no run decoded met it.

        Args:
            v: the view's index.
            key: the cell.

        Returns:
            The transcript in one line.
        """
        item = self.items(v).get(int(key))
        if item is None:
            return super().cell_text(v, key)
        return transcript_text(item, counts=int(self.views[v][2]) == COUNTS)


@dataclass(eq=False)
class KernelSource(ActionSource):
    """Compiled runs of a registered algorithm's kernel on one neighbouring pair.

    Compiled runs of a registered algorithm's kernel (``spec``, its arrays ``prep``) on
    one :class:`NeighbourPair` ``pair``, counting the cells of ``views``, at most ``limit``
    samples per run, simulated by ``workers`` processes (``bar``: a tqdm bar or None).
    """

    stable_cells = True   # transcript hashes

    spec: AlgorithmSpec
    prep: object
    pair: object
    views: object
    limit: int
    workers: int = 1
    bar: object = None
    delta: float | None = None   # its instance's own δ (calibrated by δ), else None
    decoded: dict = field(default_factory=dict, repr=False)   # view -> cell -> transcript
    only: int | None = None      # the view drawn alone (:meth:`narrowed`), else None: all

    def request(self, side: Side, n: int, seed: np.random.SeedSequence) -> Request:
        """The simulation of ``n`` runs on the table of ``side``.

        Args:
            side: d or d′.
            n: runs.
            seed: their seed.

        Returns:
            The :class:`~dpaudit.simulation.simulate.Request`.
        """
        table = (self.pair.d, self.pair.d_prime)[side.index]
        if self.only is None:
            return self.spec.request(self.prep, table, n, seed, self.views, self.limit)
        v = self.only
        return self.spec.request(self.prep, table, n, seed, self.views[v:v + 1], self.cost)

    @staticmethod
    def draw_many(plans: list) -> list:
        """The plans' draws simulated together (:func:`~dpaudit.simulation.simulate.simulate_many`).

        Args:
            plans: (source, side, runs, seed) tuples, kernel sources of one audit.

        Returns:
            The :class:`~dpaudit.simulation.simulate.Counts` of each plan, in order.
        """
        first = plans[0][0]
        got = simulate_many([s.request(side, n, sd) for s, side, n, sd in plans],
                            workers=first.workers,
                            progress=first.bar.update if first.bar else None)
        return [s._embedded(c) for (s, *_), c in zip(plans, got)]

    def _embedded(self, c: Counts) -> Counts:
        """The counts of a narrowed draw under the source's view indices (others empty)."""
        if self.only is None:
            return c
        cells = [np.zeros(0, np.uint64)] * len(self.views)
        counts = [np.zeros(0, np.int64)] * len(self.views)
        cells[self.only], counts[self.only] = c.cells[0], c.counts[0]
        return replace(c, views=self.views, cells=cells, counts=counts)

    def draw(self, side: Side, n: int, seed: np.random.SeedSequence) -> Counts:
        """Counts of ``n`` runs on the table of ``side``.

        Args:
            side: d or d′.
            n: runs.
            seed: their seed.

        Returns:
            The :class:`~dpaudit.simulation.simulate.Counts`.
        """
        return self.draw_many([(self, side, n, seed)])[0]

    def narrowed(self, ev: Event) -> "KernelSource":
        """The source that measures event ``ev``: its view alone, runs cut where it ends.

        The event is a set of cells of one view [s, e), a function of the first e samples and
        of whether the run ended within them (:func:`~dpaudit.simulation.simulate.run_batch`:
        a run cut at its ``limit`` counts as not ended), so the view is simulated alone, e
        samples per run at most: the same law of the event's cells as runs to the audit
        horizon, at a fraction of their samples. Its counts keep the source's view indices
        (the other views' cells are empty).

        Args:
            ev: an event chosen on the pilots.

        Returns:
            The narrowed :class:`KernelSource`.
        """
        return replace(self, only=ev.view_index)

    @property
    def cost(self) -> int:
        """Samples per run of a draw: the audit horizon, or the end of the view drawn alone."""
        return self.limit if self.only is None else int(self.views[self.only][1])

    def items(self, v: int, side: Side | None = None) -> dict:
        """The transcripts behind view ``v``'s cells, decoded from fresh runs.

        Args:
            v: the view's index.
            side: the table whose runs are decoded; None: runs on d, then on d′ (cached).

        Returns:
            Cell → transcript (:func:`transcripts`).
        """
        view = tuple(int(x) for x in self.views[v])
        if side is not None:
            table = (self.pair.d, self.pair.d_prime)[side.index]
            return transcripts(self.spec, self.prep, table, view, self.limit)
        if view not in self.decoded:
            d, dp = (transcripts(self.spec, self.prep, t, view, self.limit)
                     for t in (self.pair.d, self.pair.d_prime))
            self.decoded[view] = {**dp, **d}
        return self.decoded[view]


def audit_algorithm(algo: str | AlgorithmSpec, eps: float, *, params: dict | None = None, delta: float | None = None,
                    alpha: float = DEFAULT_ALPHA, runs: int | None = None,
                    seed: int | None = None, workers: int | None = None,
                    pair: NeighbourPair | str | None = None,
                    neighbours: str = DEFAULT_NEIGHBOURS, finalists: int = FINALISTS,
                    whitebox_runs: int = WHITEBOX_RUNS, progress: bool = False,
                    beta: float = DEFAULT_BETA, margin: float = DEFAULT_MARGIN,
                    instances: str = DEFAULT_INSTANCES,
                    max_samples: int | None = None,
                    time_limit: float | None = None, early_stop: bool = True,
                    exact: bool = False, beyond_proof: bool = False,
                    small_delta_runs: int | None = None,
                    stratified_runs: int = 0) -> AuditResult:
    """Audit a registered algorithm against the claim (ε, δ)-DP.

    A keyword wrapper of :func:`audit_registered`: the arguments fill the fields of
    :class:`~dpaudit.core.request.AuditRequest`, :class:`~dpaudit.core.request.Claim` and
    :class:`~dpaudit.core.request.Budget`.

    Args:
        algo: a registered name (``dpaudit list``) or an
            :class:`~dpaudit.algorithms.spec.AlgorithmSpec`.
        eps: the claimed ε, in [0.001, 100].
        params: algorithm parameters by name (strings or values); defaults are filled in.
        delta: the claim's DP δ in [0, 1). None: 0, or the spec's ``default_delta`` for
            algorithms calibrated by δ, which always run with the δ they are audited at
            (:meth:`~dpaudit.algorithms.spec.AlgorithmSpec.resolve_claim`).
        alpha: the probability that a violation is a false alarm.
        runs: measurement runs per side per finalist at the last look (default 2·10⁶). The
            audit stops earlier when the verdict is settled (:mod:`dpaudit.statistics.measure`);
            the neighbour search's pilot budget is :data:`PILOT_BUDGET` × ``runs`` per side.
        seed: the root seed; drawn and reported when None. Same seed, same result, whatever
            ``workers``.
        workers: processes (default: every core).
        pair: an explicit :class:`~dpaudit.data.tables.NeighbourPair` (or the path of a pair
            JSON file) instead of the neighbour search.
        neighbours: the search strategy, one of
            :data:`dpaudit.auditing.search.STRATEGIES` (``search``, ``blackbox``,
            ``structure``).
        finalists: pairs measured after the search.
        whitebox_runs: runs per direction of the white-box loss and the gray-box replay on the
            pair used (:mod:`dpaudit.auditing.whitebox`; 0 skips them).
        progress: show progress bars (tqdm) on stderr.
        beta: ``eps_ub`` holds with confidence 1 − β.
        margin: a pass needs ``eps_ub`` ≤ (1 + margin)·ε, else the verdict is inconclusive
            (:mod:`dpaudit.verdicts.verdict`).
        instances: ``fixed`` (the instance ``params`` give) or ``search`` (the claim's space
            screened, the parameters given pinned: :mod:`dpaudit.auditing.instances`).
        max_samples: the samples cap of :class:`~dpaudit.core.request.Budget` (None: none).
        time_limit: the time limit in seconds (None: none).
        early_stop: stop the measurement once the verdict is settled; False: measure every
            look (the tightest ``eps_lb`` the runs give; :class:`~dpaudit.core.request.Budget`).
        exact: also the transcript's exact privacy on the audited pair (``exact`` in the
            result; :mod:`dpaudit.auditing.exact`); with a fixed instance a run shows an
            infeasible walk before the audit (InputError), after it (an instance search) the
            result's ``exact`` says why (``refused``).
        beyond_proof: audit a claim outside the range its paper's proof covers
            (:meth:`~dpaudit.algorithms.spec.AlgorithmSpec.check_proof`; refused otherwise).
        small_delta_runs: also bound the audited pair's δ-loss at the claim's δ from this many
            importance-weighted runs per direction (``small_delta`` in the result;
            :mod:`dpaudit.auditing.importance`); 0: not computed; None: half the runs for a
            δ > 0 claim (:data:`~dpaudit.core.request.SMALL_DELTA_SHARE`), 0 for pure DP.
        stratified_runs: also bound the audited pair's pure ε from this many runs per table,
            stratified on two Laplace releases (``stratified`` in the result;
            :mod:`dpaudit.auditing.strata`); 0: not computed.

    Returns:
        The result (docs/reference/verdict-json.md), with the search (budget, candidates tried,
        finalists, privacy profile) under ``search`` and, when searched, the instances under
        ``instance_search``.

    Raises:
        InputError: a value out of its accepted range, an unknown algorithm or parameter, a
            pair that does not fit the algorithm's privacy model, or ``exact`` where the law
            cannot be summed (:class:`dpaudit.auditing.exact.Infeasible`), or a claim outside
            its proof's range without ``beyond_proof``.
    """
    request = AuditRequest(algo, Claim(eps, delta), params or {}, neighbours, pair,
                           Budget(runs, alpha, beta, margin, finalists, whitebox_runs,
                                  max_samples, time_limit, early_stop=early_stop), seed,
                           workers, progress, instances=instances, exact=exact,
                           beyond_proof=beyond_proof, small_delta_runs=small_delta_runs,
                           stratified_runs=stratified_runs)
    if pair is not None and not isinstance(pair, tables.NeighbourPair):
        raise InputError(f"pair={pair!r} is not valid: expected a "
                         "dpaudit.data.tables.NeighbourPair "
                         "(dpaudit.data.tables.load_pair reads one from a file)")
    return audit_registered(request)


def registered_spec(algo: str | AlgorithmSpec, model: str | None = None) -> AlgorithmSpec:
    """The spec of a registered algorithm, which has its own privacy model.

    Args:
        algo: a registered name or the spec itself.
        model: must be None (a registered algorithm's model is its own).

    Returns:
        The :class:`~dpaudit.algorithms.spec.AlgorithmSpec`.

    Raises:
        InputError: a ``model`` is given, or the name is unknown (naming close matches).
    """
    if model is not None:
        name = getattr(algo, "name", algo)
        raise InputError(f"--model applies to FILE.py:FUNCTION algorithms; {name} has its own "
                         "model (see `dpaudit list`)")
    return algo if isinstance(algo, AlgorithmSpec) else registry.get(algo)


def audit_registered(request: AuditRequest) -> AuditResult:
    """Audit a registered algorithm, as :func:`audit_algorithm` describes.

    Args:
        request: the audit; ``request.algorithm`` is a name or an
            :class:`~dpaudit.algorithms.spec.AlgorithmSpec`, and ``request.pair`` may be the path
            of a pair JSON file (:func:`dpaudit.data.tables.load_pair`).

    Returns:
        The :class:`~dpaudit.verdicts.result.AuditResult`.

    Raises:
        InputError: a bad value, an unknown algorithm or parameter, a pair that does not fit.
    """
    t0 = time.perf_counter()
    spec = registered_spec(request.algorithm, request.model)
    if request.neighbours not in search.STRATEGIES:
        raise InputError(f"--neighbours {request.neighbours!r} is not valid: expected one of "
                         f"{', '.join(search.STRATEGIES)}")
    eps = request.claim.eps
    p, delta = spec.resolve_claim(dict(request.params), request.claim.delta)
    if not request.beyond_proof:
        spec.check_proof(eps, delta)
    pair = (tables.load_pair(request.pair, spec.model) if isinstance(request.pair, str)
            else request.pair)
    prep = spec.prepare(float(eps), p)
    runs = int(request.budget.runs or DEFAULT_RUNS)
    workers = int(request.workers or executor.default_workers())
    rate = None                 # a time limit: the kernels compiled, the rate measured first
    if request.budget.time_limit is not None:
        rate = sample_rate(spec, prep, spec.audit_horizon(p), workers)
    request = draw_seed(request)
    root = np.random.SeedSequence(request.seed)
    s_table, s_pilot, s_meas, s_white, s_screen = root.spawn(5)
    pool, searched = [(p, prep)], {}
    if request.instances == "search" and pair is None:    # a pair fixes the instance
        search.check_memory(spec, prep, p)                 # the given instance: refused first
        pool, searched = _search_instances(spec, request, p, child_seed(root, 5), workers)
    K = prep.means.shape[0]
    horizon = spec.audit_horizon(p)
    if pair is not None:
        if pair.model != spec.model:
            raise InputError(f"the pair is a {pair.model} pair but {spec.name} uses "
                             f"{spec.model} tables")
        m = tables.MODELS[spec.model]
        if spec.model != PrivacyModel.LOCAL:                   # (a local pair is two rewards)
            if pair.d.shape[m.arm_axis] != K:
                raise InputError(f"the pair's tables have {pair.d.shape[m.arm_axis]} arms but "
                                 f"means has {K}")
            horizon = pair.d.shape[1 - m.arm_axis]  # the pair's tables set the horizon
        pairs, order, info, strategy = [pair], [0], {"screen": None, "scores": None}, "pair"
        members, limits = [0], [horizon]
    else:
        strategy = request.neighbours
        table_seed = int(s_table.generate_state(1, np.uint32)[0])
        pairs, order, info, members = _pooled_candidates(
            strategy, spec, pool, (table_seed, s_screen, child_seed(root, 5, 1)), workers)
        limits = [spec.audit_horizon(q) for q, _ in pool]
        if not pairs:
            raise InputError(f"--neighbours {strategy}: {spec.name} names no position within "
                             f"its audit horizon ({horizon}); use --neighbours search")
    if request.exact and not searched:   # refused before the audit when one run shows it
        exact.precheck(spec, prep, pairs[order[0]])                  # infeasible
    bar = tqdm(total=0, unit="run", unit_scale=True, disable=None if request.progress else True,
               leave=False, desc=f"audit {spec.name}")
    sources = []
    for pr, i in zip(pairs, members):
        k, h = pool[i][1].means.shape[0], limits[i]
        sources.append(KernelSource(spec, pool[i][1], pr, source_views(pr, k, h), h, workers,
                                    bar, _own_delta(spec, pool[i][0])))
    cand = Candidates(sources, order, int(PILOT_BUDGET * runs), strategy, info["scores"])
    spent = searched["samples"] if searched else 0
    allow = Allowance.of(request.budget.max_samples, None, spent).counted_time(
        request.budget.time_limit, rate, spent)
    resolved = replace(request, algorithm=spec.name, params=_jsonable_params(p),
                       claim=Claim(eps, delta), budget=replace(request.budget, runs=runs))
    found = run_audit(resolved, cand, (s_pilot, s_meas), bar, allow)
    u, b = found.used(order), request.budget
    used, (p, prep), horizon = pairs[u], pool[members[u]], limits[members[u]]
    K = prep.means.shape[0]
    delta = claim_delta(sources[u], resolved.claim)    # the claim the instance ran at
    if searched:            # the instance behind the result: the finalist's (or the first's)
        resolved = replace(resolved, params=_jsonable_params(p), claim=Claim(eps, delta))
        searched = {**searched, "audited": instances.describe(p, searched["free"]),
                    "instance": instances.free_values(p, searched["free"]),
                    "audited_origin": searched["pool"][members[u]]["origin"]}
    if b.whitebox_runs:
        report = whitebox(spec, prep, used, Claim(eps, delta),
                          Replay(int(b.whitebox_runs), s_white, horizon=horizon,
                                 alpha=b.alpha),
                          partial(search.spec_map, workers=workers))
        coverage = report["coverage"]
    else:
        report, coverage = {}, {"measured": False, "reason": "whitebox_runs = 0: no run was "
                                "replayed, so which runs read the changed position is unknown"}
    views = {"prefixes": view_lengths(K, horizon),
             "windows": f"[t+1, t+1+w), w = 1, 2, 4, ..., after a changed row t >= {WINDOW_FROM}"}
    checks = Checks(coverage=coverage, whitebox=report,
                    search={"views": views, "screen": info["screen"]},
                    command=_command(request, allow if found.capped else None),
                    instances=searched,
                    exact=_exact(spec, prep, used, Claim(eps, delta)) if request.exact else {},
                    small_delta=_small_delta(spec, prep, used, request, delta, child_seed(root, 6)),
                    stratified=_stratified(spec, prep, used, request, child_seed(root, 7)))
    if searched:
        searched["budget_split"] = _budget_split(searched, found, source_costs(sources))
        checks = replace(checks, instances=searched)
    result = conclude(resolved, cand, found, checks, t0)
    if searched and not searched["ranked"] and result.verdict == Verdict.INCONCLUSIVE:
        result = replace(result, reason=(
            f"vacuous over the claim space: none of the {searched['screened']} instances "
            "screened showed a transcript that differs (p_div = 0) or a release above eps, so "
            f"no audit in the searched space can show a leak ({result.reason})"))
    return result


RATE_PROBE_S = 0.25     # a time limit's rate: runs double until a call takes this long
RATE_PROBE_LIMIT = 256  # ... each at most this many samples (memory and time stay small)


def sample_rate(spec: AlgorithmSpec, prep: Prepared, limit: int, workers: int) -> float:
    """Simulated samples per second of an algorithm's instance, its kernels warm.

    Runs on fresh rewards (an empty table of its model), seeded apart from everything the audit
    draws, simulated as the audit's stages simulate them
    (:func:`~dpaudit.simulation.simulate.simulate_many` over ``workers``) and counted as they
    count them (runs × samples per run). The first call compiles the kernel, or loads it from
    numba's cache, in every worker and is not timed; then the runs double until a call takes
    :data:`RATE_PROBE_S`. Runs are cut at ``limit`` or :data:`RATE_PROBE_LIMIT` samples,
    whichever is smaller.

    Args:
        spec: the algorithm.
        prep: its prepared instance.
        limit: samples per run (the audit horizon).
        workers: processes, as the audit uses them (at most one per core is warmed).

    Returns:
        Samples per second (> 0).
    """
    limit = min(int(limit), RATE_PROBE_LIMIT)
    table = tables.MODELS[spec.model].fresh(prep.means.shape[0])

    def took(n: int) -> float:
        t = time.perf_counter()
        simulate_many([spec.request(prep, table, n, np.random.SeedSequence(0), limit=limit)],
                      workers=workers)
        return time.perf_counter() - t

    warm = min(workers, executor.default_workers())     # at most one per core (--workers 100000)
    took((warm - 1) * CHUNK + 1)         # a chunk for each of them: compiled, warm
    n = CHUNK
    while (t := took(n)) < RATE_PROBE_S:
        n *= 2
    return n * limit / t


def _command(request: AuditRequest, counted: Allowance | None) -> str:
    """The command that reproduces an audit, with the count a time limit cut it at.

    Args:
        request: the audit request.
        counted: the allowance of an audit a cap cut short (None: not cut).

    Returns:
        :func:`command_line`; an audit the time limit cut short is reproduced by the samples
        cap it was counted as, with no time limit (``--time-limit 0``).
    """
    if counted is None or counted.rate is None:
        return command_line(request)
    line = command_line(replace(request, budget=replace(request.budget,
                                                        max_samples=counted.cap)))
    return line and f"{line} --time-limit 0"


def _own_delta(spec: AlgorithmSpec, params: dict) -> float | None:
    """The δ an instance of an algorithm calibrated by δ runs at (None: not calibrated by δ).

    Its noise is set by the instance's ``delta`` parameter, so that δ is part of the claim
    its runs are audited against (:func:`claim_delta`).
    """
    return float(params["delta"]) if spec.default_delta else None


def _budget_split(block: dict, found: Found, costs: list) -> dict:
    """The samples each stage of the audit spent.

    Samples spent (at most: runs × samples per run of their instance) by the instance screen
    (:attr:`dpaudit.auditing.instances.SpaceScreen.samples`), the pilots (each candidate's runs on
    both sides in every round it entered; ``costs[i]`` = candidate i's samples per run) and
    the measurement (both sides of every finalist), the screen's share of the three, and
    where the samples cap or the time limit stopped the audit ("" if neither did).
    """
    screen = block["samples"]
    pilots = sum(2 * n * costs[i] for i, h in found.history.items()
                 for (_, n) in found.rounds[:len(h)])
    measured = sum(2 * ms.n * ms.finalist.cost for ms in found.m.measured)
    total = screen + pilots + measured
    return {"unit": "samples, at most (runs x samples per run)", "instance_screen": screen,
            "pilots": int(pilots), "measurement": int(measured),
            "instance_screen_share": round(screen / total, 4) if total else 0.0,
            "capped": found.capped}


POOL = 4    # instances whose neighbour candidates enter the search: the given one, the 2
            # best ranked and the longest ranked (most samples per run), else the third best


def _search_instances(spec: AlgorithmSpec, request: AuditRequest, p: dict,
                      seed: np.random.SeedSequence, workers: int = 1) -> tuple:
    """The instances whose candidates the neighbour search pools, and their JSON.

    (pool, JSON): the instances whose candidates the neighbour search pools, the given
    instance first and then the best the claim-space screen ranks
    (:func:`dpaudit.auditing.instances.screen_space` on ``seed``, a child of the root seed no
    other stage draws from; the parameters the request gives and a given δ are pinned), up to
    :data:`POOL`, each as (params, prepared); and the ``instance_search`` JSON.
    """
    pinned = set(request.params) | ({"delta"} if request.claim.delta is not None else set())
    eps = float(request.claim.eps)
    sc = instances.screen_space(spec, eps, p, pinned,
                                instances.Screen(workers=workers,
                                                 beyond_proof=request.beyond_proof), seed)
    pool = [(p, "given")]
    same = instances.same_instance
    far = instances.longest(sc.ranked)
    for s in [*sc.ranked[:POOL - 2], *([far] if far else []), *sc.ranked[POOL - 2:]]:
        if len(pool) < POOL and not any(same(s.params, q) for q, _ in pool):
            pool.append((s.params, s.origin))
    doc = instances.to_json(sc, spec.space(pinned), eps)
    doc["pool"] = [{"instance": instances.free_values(q, sc.free), "origin": o}
                   for q, o in pool]
    return [(q, spec.prepare(eps, q)) for q, _ in pool], doc


def _pooled_candidates(strategy: str, spec: AlgorithmSpec, pool: list, seeds: tuple,
                       workers: int = 1) -> tuple:
    """The candidate pairs of every instance of the pool, interleaved.

    (pairs, order, info, members) over the instances of ``pool`` ((params, prepared)
    each): every instance's candidates (:func:`dpaudit.auditing.search.candidates`), their
    orders interleaved (best of each instance in turn, at most
    :data:`dpaudit.auditing.search.MAX_BLACKBOX` when there are several) and ``members[j]``
    the instance of pair j. ``seeds`` = (table seed, the first instance's screen seed, a
    SeedSequence whose children screen the others): one instance gives exactly
    :func:`dpaudit.auditing.search.candidates`' result.
    """
    table_seed, first, rest = seeds
    pairs, orders, scores, screens, members = [], [], [], [], []
    for i, (q, prep) in enumerate(pool):
        s = first if i == 0 else child_seed(rest, i)
        pr, od, info = search.candidates(strategy, spec, prep, q, seeds=(table_seed, s),
                                         workers=workers)
        orders.append([len(pairs) + j for j in od])
        scores += info["scores"] if info["scores"] is not None else [None] * len(pr)
        screens.append(info["screen"])
        pairs += pr
        members += [i] * len(pr)
    if len(pool) == 1:
        return pairs, orders[0], info, members
    order = [j for group in itertools.zip_longest(*orders) for j in group if j is not None]
    kept = [x for x in screens if x is not None]
    if kept:                               # the quota over the pool (search.admitted)
        order = search.admitted(order, scores)
    screen = ({"runs_per_direction": kept[0]["runs_per_direction"],
               "keep_share": kept[0]["keep_share"],
               "max_loss": max(x["max_loss"] for x in kept),
               "kept": min(len(order), search.MAX_BLACKBOX)} if kept else None)
    return (pairs, order[:search.MAX_BLACKBOX],
            {"screen": screen, "scores": scores if kept else None}, members)


def _jsonable_params(p: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in p.items()}


def _counts(rounds: list, n_sources: int, b: Measured | None, m: Measurement,
            delta: float) -> dict:
    def status(c: Counts | None) -> dict:
        return {STATUS_NAMES[j]: int(c.status[j]) for j in range(3)} if c else {}
    n = b.n if b else 0
    hd, hdp = b.hits if b else (0, 0)
    c_d, c_dp = b.counts if b else (None, None)
    return {"selection": {"runs_per_side": sum(k * n for k, n in rounds), "pairs": n_sources,
                          "rounds": len(rounds)},
            "measurement": {"runs_d": n, "runs_d_prime": n, "hits_d": int(hd),
                            "hits_d_prime": int(hdp), "status_d": status(c_d),
                            "status_d_prime": status(c_dp), "finalists": len(m.measured),
                            "tests": m.tests, "alpha_per_look": m.alpha_per_look,
                            "beta_per_look": m.beta_per_look,
                            "eps_ub_per_finalist": [ms.loss_ub for ms in m.measured],
                            "delta_per_finalist": [ms.delta(delta) for ms in m.measured],
                            "p_value_adjusted": m.p_adjusted, "stopped": m.stopped,
                            "looks": m.looks}}


BLACK_BOX_COVERAGE = {
    "measured": False, "kind": "black-box",
    "reason": "black-box: the outputs on d and d' are independent draws, so which runs read "
              "the differing entry, which releases did and the stopping times cannot be "
              "observed; what is measured is the event's frequency on d and on d'"}

MULTIPLICITY = ("every candidate, round and event was tried on pilot samples only, which the "
                "measurement never reuses: the error budget alpha is spent on the measured "
                "finalists alone (Bonferroni over looks x finalists)")


def _search(cand: Candidates, found: Found, runs: int) -> dict:
    """The ``search`` JSON of the result.

    The ``search`` JSON: strategy, budget, every candidate tried (pair, white-box screen,
    predicted ε_lb per round, validated ε_lb in the last round, measured ε_lb), the finalists
    and the privacy profile.
    """
    sources, order, screen, m = cand.sources, cand.order, cand.screen, found.m
    rounds, history, valid, chosen = found.rounds, found.history, found.valid, found.chosen
    strategy, budget = cand.strategy, cand.pilot_budget
    lbs = {}
    for ms in m.measured:       # a pair measured on several events: its best
        lbs[ms.finalist.label] = max(lbs.get(ms.finalist.label, 0.0), ms.eps_lb)
    pairs = [src.neighbours() for src in sources]
    tried = []
    for i, nb_json in enumerate(pairs):
        row = {"index": i, "position": nb_json.get("position"), "base": nb_json["base"]["name"]
               if isinstance(nb_json.get("base"), dict) else None,
               "pattern": nb_json.get("pattern"), "predicted_eps_lb": history.get(i, []),
               "validated_eps_lb": valid.get(i), "finalist": i in chosen, "eps_lb": lbs.get(i)}
        if screen is not None:
            row["whitebox"] = screen[i]
        tried.append(row)
    finals = [{"index": i, "pair": pairs[i], "predicted_eps_lb": history[i][-1],
               "validated_eps_lb": valid.get(i), "eps_lb": lbs.get(i),
               **({"event_candidates": found.options[i]} if i in found.options else {})}
              for i in chosen]
    out = {"strategy": strategy, "candidates": len(sources), "entered_rounds": len(order),
           "budget": {"pilot_runs_per_side": int(budget),
                      "pilot_runs_per_side_used": int(sum(k * n for k, n in rounds)),
                      "rounds": [{"candidates": k, "runs_per_side": n} for k, n in rounds],
                      "measurement_runs_per_side_per_finalist": int(runs),
                      "finalists": len(chosen),
                      "shared_d_runs": cand.same_d is not None},
           "multiplicity": MULTIPLICITY, "tried": tried, "finalists": finals}
    if all("position" in p for p in pairs):
        out["profile"] = search.profile(
            pairs, screen, {i: h[-1] for i, h in history.items() if h}, lbs)
    return out


DECODE_RUNS = 20_000   # runs sampled to read a view's cells as the transcripts behind them


def transcripts(spec: AlgorithmSpec, prep: Prepared, table: np.ndarray, view: tuple,
                limit: int) -> dict[int, dict]:
    """The transcript behind each cell of a view, decoded from runs on one table.

    Args:
        spec: the algorithm.
        prep: its prepared arrays.
        table: the table the runs read.
        view: (start, end[, kind]) in samples.
        limit: samples per run.

    Returns:
        Cell hash → {"actions": the actions (a local randomiser's outputs) in the view (a
        counts view: one run's, in order), and ``stopping_time``, ``recommendation``,
        ``status`` when the run stopped within it}, for the cells met in :data:`DECODE_RUNS`
        runs (seed 0), in the order first met.
    """
    start, end = view[:2]
    cells, taus, recs, stats, kept = run_batch(
        spec.request(prep, table, DECODE_RUNS, 0, as_views([view]), limit), DECODE_RUNS)
    _, first = np.unique(cells[:, 0], return_index=True)
    out = {}
    for j in np.sort(first):
        out[int(cells[j, 0])] = transcript_item(kept[j], start, end, taus[j], recs[j], stats[j])
    return out


def transcript_item(actions: np.ndarray, start: int, end: int, tau: int, rec: int,
                    status: int) -> dict:
    """One run's transcript within a view [start, end), as :func:`transcripts` gives it.

    Args:
        actions: the run's actions (−1: none).
        start: the view's first sample.
        end: its end (samples).
        tau: the run's stopping time.
        rec: its recommendation.
        status: its status (stopped, truncated, capped).

    Returns:
        {"actions": the actions in the view, and ``stopping_time``, ``recommendation``,
        ``status`` when the run stopped within it}.
    """
    item = {"actions": [int(a) for a in actions[start:end] if a >= 0]}
    if status != TRUNCATED and tau <= end:
        item.update(stopping_time=int(tau), recommendation=int(rec), status=STATUS_NAMES[status])
    return item


SPELLED_OUT = 32    # longer action sequences are written as runs: 0x945 1x945 2


def actions_text(actions: np.ndarray | list) -> str:
    """Actions in one line.

    Args:
        actions: the arms played.

    Returns:
        Spelled out up to :data:`SPELLED_OUT` of them, else as runs of repeated actions
        (``0x945 1x945 2``: arm 0 945 times, arm 1 945 times, then arm 2).
    """
    actions = [int(a) for a in actions]
    if len(actions) <= SPELLED_OUT:
        return " ".join(map(str, actions))
    runs = []
    for a in actions:
        if runs and runs[-1][0] == a:
            runs[-1][1] += 1
        else:
            runs.append([a, 1])
    return " ".join(f"{a}x{n}" if n > 1 else str(a) for a, n in runs)


def transcript_text(item: dict, counts: bool = False) -> str:
    """A cell's transcript (:func:`transcripts`) in one line.

    Args:
        item: the transcript.
        counts: give how often each arm was played (:func:`counts_text`) instead of the actions
            (:func:`actions_text`).

    Returns:
        The actions, and where the run stopped within the view, its stopping time and
        recommendation.
    """
    text = (counts_text if counts else actions_text)(item["actions"])
    if "stopping_time" in item:
        text += f" (stopped: tau = {item['stopping_time']}, recommends {item['recommendation']})"
    return text


def event_description(ev: Event, items: dict, local: bool = False,
                      n_examples: int = 5) -> dict:
    """An event of action views in words: a few of its cells as the transcripts behind them.

    Args:
        ev: the event (a view of actions: a sequence or counts window).
        items: cell → transcript (:func:`transcripts`) for cells met in runs, in the order met.
        local: the "actions" are a local randomiser's outputs.
        n_examples: transcripts given as examples.

    Returns:
        {"text": ..., "view": ..., "examples": ...}.
    """
    start, end, kind = ev.view
    inside = set(int(c) for c in ev.cells)
    examples = [item for key, item in items.items() if key in inside][:n_examples]
    what = f"the first {end} actions" if start == 0 else f"the actions of samples {start}..{end - 1}"
    unit = "0-based arms"
    if local:      # a local randomiser's "actions" are its outputs
        what, unit = what.replace("actions", "outputs"), "the randomiser's output values"
    if kind == COUNTS:
        shown = "; ".join(counts_text(e["actions"]) for e in examples[:3])
        text = (f"how often each arm was played among {what[4:]} ({unit}) is one of "
                f"{ev.cells.size} count vectors chosen on the pilot sample as more likely under "
                f"{ev.numerator.label}; e.g. {shown}")
    else:
        shown = "; ".join(actions_text(e["actions"]) for e in examples[:3])
        text = (f"{what} ({unit}) are one of {ev.cells.size} sequences chosen on the pilot "
                f"sample as more likely under {ev.numerator.label}; e.g. {shown}")
    return {"text": text, "view": list(ev.view), "examples": examples}


def counts_text(actions: np.ndarray | list) -> str:
    """How often each arm was played, in one line.

    Args:
        actions: the arms played.

    Returns:
        E.g. ``arm 0 x12, arm 1 x20``.
    """
    arms, n = np.unique(np.asarray(actions, np.int64), return_counts=True)
    return ", ".join(f"arm {a} x{c}" for a, c in zip(arms, n)) or "no action"


def _loss_table(src: Source, pilot: tuple, counts: tuple, v: int, alpha: float,
                eps: float) -> list:
    """Per-output-cell privacy loss ln(p_d/p_d') on the measurement sample.

    The rows are the (at most :data:`LOSS_TABLE_ROWS`) cells of view ``v`` with the most mass
    on the *pilot* sample (at least 10 pilot hits), so that choosing them does not look at the
    measurement sample. The intervals are simultaneous over the rows *and* the looks: each is
    two-sided at level 1 − α/(rows · :data:`~dpaudit.statistics.measure.LOOKS`) (Bonferroni), since
    the
    counts are those of the look where the sequential measurement stopped, which the data
    chose; so ``ci_level_simultaneous`` = 1 − α holds whatever the stop. ``flag_above_eps``:
    the interval lies entirely above ε or below −ε. The table is descriptive: its α is its
    own, the verdict rests on ε_lb alone.
    """
    (r_d, r_dp), (s_d, s_dp) = pilot
    keys = np.unique(np.concatenate([c.cells[v] for c in (r_d, r_dp, s_d, s_dp)]))
    mass = sum(np.asarray(lookup(keys, c, v)) for c in (r_d, r_dp, s_d, s_dp))
    top = [j for j in np.argsort(-mass, kind="stable")[:LOSS_TABLE_ROWS] if mass[j] >= 10]
    c_d, c_dp = counts
    a = lookup(keys, c_d, v)
    b = lookup(keys, c_dp, v)
    level = alpha / (max(len(top), 1) * LOOKS)
    rows = []
    for j in top:
        lo, hi = log_ratio_interval(a[j], c_d.n_runs, b[j], c_dp.n_runs, level)
        rows.append({"cell": src.cell_text(v, int(keys[j])),
                     "view": [int(x) for x in np.ravel(c_d.views[v])],
                     "p_d": a[j] / c_d.n_runs, "p_d_prime": b[j] / c_dp.n_runs,
                     "ln_ratio": log_ratio(a[j], c_d.n_runs, b[j], c_dp.n_runs),
                     "ci": [lo, hi], "ci_level_simultaneous": 1 - alpha,
                     "flag_above_eps": bool(lo > eps or hi < -eps)})
    return rows
