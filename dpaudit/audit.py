"""Privacy audits: the shared pipeline, and its use on registered bandit algorithms.

Data flow: *sources* (one per candidate neighbouring pair; a source draws runs on d or d' and
turns them into feature cells) → pilot on each source, split in a ranking and a scoring half
→ one event per source (:mod:`dpaudit.events`) → the best ``finalists`` sources measured on
fresh samples with valid early stopping (:mod:`dpaudit.measure`: Clopper–Pearson bounds,
Bonferroni over looks × finalists) → ε_lb = the largest lower bound → verdict (DESIGN.md §4):
``violation`` if ε_lb > ε (with confidence 1 − α the privacy loss exceeds the claim), else
``pass``.

Registered algorithms (:func:`audit_algorithm`) use :class:`KernelSource`: compiled runs whose
cells are *views*, prefixes of the transcript (:mod:`dpaudit.simulate`). Every event is a set of
cells of a function of the released output (actions, τ, â), so its probability ratio
lower-bounds the privacy loss of the full transcript. Generic mechanisms and plain Python
callables use :mod:`dpaudit.mechanism`.
"""
from __future__ import annotations

import math
import time

import numpy as np
from tqdm import tqdm

from dpaudit import neighbours as nbrs
from dpaudit import registry
from dpaudit.errors import InputError
from dpaudit.events import Event, lookup, best_event
from dpaudit.measure import LOOKS, Finalist, Measurement, measure
from dpaudit.result import AuditResult
from dpaudit.simulate import STATUS_NAMES, TRUNCATED, default_workers, run_batch, simulate
from dpaudit.stats import detectable_eps, log_ratio, log_ratio_interval
from dpaudit.whitebox import whitebox

DEFAULT_RUNS = 2_000_000   # measurement runs per side per finalist (bandit algorithms)
PILOT_FRACTION = 8         # pilot runs per side per candidate = runs // PILOT_FRACTION
FINALISTS = 2
LOSS_TABLE_ROWS = 20
WHITEBOX_RUNS = 10_000     # runs per direction of the white-box loss and replay


def view_lengths(K: int, horizon: int) -> list[int]:
    """Prefix lengths audited: K+1, K+2, K+4, ... (the first decision after initialisation and
    geometrically longer prefixes), and the whole audit horizon."""
    out, step = [], 1
    while K + step < horizon:
        out.append(K + step)
        step *= 2
    return sorted(set(out + [horizon]))


class Source:
    """Runs of one mechanism on one neighbouring pair, as feature cells.

    Subclasses implement ``draw(side, n, seed) -> Counts`` (side 0 = d, 1 = d'),
    ``neighbours()`` (the pair's JSON) and may override :meth:`pilot` (e.g. to fit the cell map
    on the ranking half), ``orderings`` (extra event orderings, :func:`best_event`),
    :meth:`describe` and :meth:`cell_text`.
    """

    orderings = None

    def pilot(self, half: int, seed: np.random.SeedSequence):
        """(rank, score): each (Counts on d, Counts on d') of ``half`` runs per side."""
        s = seed.spawn(4)
        rank = (self.draw(0, half, s[0]), self.draw(1, half, s[1]))
        score = (self.draw(0, half, s[2]), self.draw(1, half, s[3]))
        return rank, score

    def describe(self, ev: Event) -> dict:
        return {"text": f"one of {ev.cells.size} output cells", "view": ev.view}

    def cell_text(self, v: int, key: int) -> str:
        return f"{int(key):016x}"


def check_common(eps, alpha, runs, workers, delta=0.0, whitebox_runs=0):
    """InputError (one line: the bad value and the accepted range) for bad audit arguments."""
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
        raise InputError(f"eps={eps!r} is out of range: expected a finite number > 0")
    if not isinstance(delta, (int, float)) or not 0 <= delta < 1:
        raise InputError(f"delta={delta!r} is out of range: expected a number in [0, 1)")
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise InputError(f"alpha={alpha!r} is out of range: expected a number in (0, 1)")
    for name, v, low in (("runs", runs, 1), ("workers", workers, 1),
                         ("whitebox_runs", whitebox_runs, 0)):
        if v is not None and (int(v) != v or v < low):
            raise InputError(f"{name}={v!r} is out of range: expected an integer >= {low}")


def run_audit(sources: list, *, name: str, params: dict, eps: float, delta: float,
              alpha: float, runs: int, pilot_runs: int, seed: int,
              seeds: tuple, finalists: int, t0: float, bar=None) -> AuditResult:
    """The shared pipeline (module doc) over ``sources``; ``seeds`` = (pilot, measurement)
    SeedSequences. ``runs``: measurement runs per side per finalist at the last look;
    ``pilot_runs``: per side per source (half ranks, half scores)."""
    s_pilot, s_meas = seeds
    F = min(finalists, len(sources))
    a_plan = alpha / (LOOKS * F)       # the level of the last look's tests
    half = max(pilot_runs // 2, 1)
    pilots, events = [], []
    for src, s in zip(sources, s_pilot.spawn(len(sources))):
        rank, score = src.pilot(half, s)
        pilots.append((rank, score))
        events.append(best_event(rank, score, runs, a_plan, delta, src.orderings))
    ranked = sorted(range(len(sources)),
                    key=lambda i: -(events[i].predicted_lb if events[i] else -1.0))
    chosen = [i for i in ranked[:F] if events[i] is not None]
    if bar is not None:
        bar.total = bar.n + 2 * runs * len(chosen)
    m = measure([Finalist(events[i], sources[i].draw, i) for i in chosen], runs, eps, delta,
                alpha, s_meas)
    if bar is not None:
        bar.close()

    if m.best is not None:
        b = m.best
        i = b.finalist.label
        src, ev = sources[i], b.finalist.event
        k_den = b.num_den()[1]
        lb, eps_hat = b.eps_lb, b.eps_hat
        detect = detectable_eps(k_den / b.n, b.n, eps, m.alpha_per_test, delta)
        event = {**src.describe(ev), "ordering": ev.ordering, "numerator": side_name(ev.numerator),
                 "n_cells": int(ev.cells.size), "predicted_eps_lb": ev.predicted_lb,
                 "scoring_hits": list(ev.scoring_hits)}
        loss_table = _loss_table(src, pilots[i], b.counts, ev.view_index, alpha, eps)
        nb_json = src.neighbours()
    else:   # no event separates d from d' on any pilot
        lb, eps_hat, detect, b = 0.0, 0.0, float("inf"), None
        event = {"text": "no event separates d from d' on the pilot sample", "view": None}
        loss_table, nb_json = [], sources[0].neighbours()
    verdict = "violation" if lb > eps else "pass"
    return AuditResult(
        algorithm=name, params=params, eps=float(eps), delta=float(delta), verdict=verdict,
        eps_lb=lb, eps_hat=eps_hat, alpha=alpha, neighbours=nb_json, event=event,
        counts=_counts(pilot_runs, len(sources), b, m), loss_table=loss_table, seed=seed,
        runtime_s=round(time.perf_counter() - t0, 3), detectable_eps=detect,
        search=_search(sources, events, ranked, chosen, m))


class KernelSource(Source):
    """Compiled runs of a registered algorithm's kernel on one :class:`NeighbourPair`."""

    def __init__(self, spec, prep, pair, views, workers, bar=None):
        self.spec, self.prep, self.pair, self.views = spec, prep, pair, views
        self.workers, self.bar = workers, bar

    def draw(self, side, n, seed):
        table = self.pair.d if side == 0 else self.pair.d_prime
        return simulate(self.spec.kernel, table, self.prep.means, self.prep.theta,
                        self.prep.aux, n_runs=n, seed=seed, views=self.views,
                        workers=self.workers, progress=self.bar.update if self.bar else None)

    def neighbours(self):
        return self.pair.describe()

    def describe(self, ev):
        return _describe(self.spec, self.prep, self.pair, ev)


def audit_algorithm(algo, eps: float, *, params: dict | None = None, delta: float = 0.0,
                    alpha: float = 0.05, runs: int | None = None, seed: int | None = None,
                    workers: int | None = None, pair=None, finalists: int = FINALISTS,
                    whitebox_runs: int = WHITEBOX_RUNS, progress: bool = False) -> AuditResult:
    """Audit the registered algorithm ``algo`` (name or spec) against the claim (ε, δ)-DP.

    ``params``: algorithm parameters (strings or values; defaults filled in). ``runs``:
    measurement runs per side per finalist at the last look (default 2·10^6; the audit stops
    earlier when the verdict is settled, :mod:`dpaudit.measure`); pilot runs are
    ``runs // 8`` per side per candidate pair. ``pair``: an explicit
    :class:`~dpaudit.tables.NeighbourPair` instead of the candidate search. ``seed``: root
    seed (drawn and reported when None). ``whitebox_runs``: runs per direction of the
    white-box loss and gray-box replay on the pair used (:mod:`dpaudit.whitebox`; 0 skips
    them), reported under ``whitebox``. Raises :class:`InputError` on bad input. Result as in
    DESIGN.md §4.
    """
    t0 = time.perf_counter()
    check_common(eps, alpha, runs, workers, delta, whitebox_runs)
    spec = algo if isinstance(algo, registry.AlgorithmSpec) else registry.get(algo)
    p = spec.resolve_params(params or {})
    prep = spec.prepare(float(eps), p)
    runs = int(runs or DEFAULT_RUNS)
    pilot_runs = max(runs // PILOT_FRACTION, 1000)
    workers = int(workers or default_workers())
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint32)[0])
    s_table, s_pilot, s_meas, s_white = np.random.SeedSequence(seed).spawn(4)

    K = prep.means.shape[0]
    if pair is not None:
        if pair.d.shape[1] != K:
            raise InputError(f"the pair's tables have {pair.d.shape[1]} arms but means has {K}")
        pairs = [pair]
    else:
        pairs = nbrs.candidates(spec, p, int(s_table.generate_state(1, np.uint32)[0]))
    views = view_lengths(K, pairs[0].d.shape[0])
    bar = tqdm(total=2 * (pilot_runs // 2) * 2 * len(pairs), unit="run", unit_scale=True,
               disable=None if progress else True, leave=False, desc=f"audit {spec.name}")
    sources = [KernelSource(spec, prep, pr, views, workers, bar) for pr in pairs]
    res = run_audit(sources, name=spec.name, params=_jsonable_params(p), eps=eps, delta=delta,
                    alpha=alpha, runs=runs, pilot_runs=pilot_runs, seed=seed,
                    seeds=(s_pilot, s_meas), finalists=finalists, t0=t0, bar=bar)
    res.search["views"] = [int(v) for v in views]
    if whitebox_runs:
        used = next(pr for pr in pairs if pr.describe() == res.neighbours)
        res.whitebox = whitebox(spec, prep, used, float(eps), runs=int(whitebox_runs),
                                seed=s_white)
        res.runtime_s = round(time.perf_counter() - t0, 3)
    return res


def side_name(numerator: str) -> str:
    return "d'" if numerator == "d_prime" else "d"


def _jsonable_params(p: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in p.items()}


def _counts(pilot_runs, n_sources, b, m: Measurement) -> dict:
    def status(c):
        return {STATUS_NAMES[j]: int(c.status[j]) for j in range(3)} if c else {}
    n = b.n if b else 0
    hd, hdp = b.hits if b else (0, 0)
    c_d, c_dp = b.counts if b else (None, None)
    return {"selection": {"runs_per_side": pilot_runs, "pairs": n_sources},
            "measurement": {"runs_d": n, "runs_d_prime": n, "hits_d": int(hd),
                            "hits_d_prime": int(hdp), "status_d": status(c_d),
                            "status_d_prime": status(c_dp), "finalists": len(m.measured),
                            "tests": m.tests, "alpha_per_test": m.alpha_per_test,
                            "p_value_adjusted": m.p_adjusted, "stopped": m.stopped,
                            "looks": m.looks}}


def _search(sources, events, ranked, chosen, m: Measurement) -> dict:
    lbs = {ms.finalist.label: ms.eps_lb for ms in m.measured}
    rows = []
    for i in ranked:
        ev, nb_json = events[i], sources[i].neighbours()
        rows.append({"pair": {k: nb_json[k] for k in ("changed_row", "base") if k in nb_json},
                     "predicted_eps_lb": ev.predicted_lb if ev else 0.0,
                     "view": ev.view if ev else None, "finalist": i in chosen,
                     "eps_lb": lbs.get(i)})
    return {"candidates": len(sources), "ranking": rows}


def _describe(spec, prep, pair, ev: Event, n_examples=5) -> dict:
    """Readable event: decode a few of its cells into action prefixes by sampling transcripts."""
    table = pair.d_prime if ev.numerator == "d_prime" else pair.d
    views = np.array([ev.view], np.int64)
    cells, taus, recs, stats, kept = run_batch(
        spec.kernel, np.random.default_rng(0), table, prep.means, prep.theta, prep.aux,
        table.shape[0], 20_000, views, 20_000)
    inside = np.isin(cells[:, 0], ev.cells)
    examples, seen = [], set()
    for j in np.flatnonzero(inside):
        key = int(cells[j, 0])
        if key in seen:
            continue
        seen.add(key)
        prefix = [int(a) for a in kept[j] if a >= 0]
        item = {"actions": prefix}
        if stats[j] != TRUNCATED and taus[j] <= ev.view:
            item.update(stopping_time=int(taus[j]), recommendation=int(recs[j]),
                        status=STATUS_NAMES[stats[j]])
        examples.append(item)
        if len(examples) == n_examples:
            break
    shown = "; ".join(" ".join(map(str, e["actions"][: ev.view])) for e in examples[:3])
    text = (f"the first {ev.view} actions (0-based arms) are one of {ev.cells.size} prefixes "
            f"chosen on the pilot sample as more likely under {side_name(ev.numerator)}; "
            f"e.g. {shown}")
    return {"text": text, "view": ev.view, "examples": examples}


def _loss_table(src, pilot, counts, v: int, alpha: float, eps: float) -> list:
    """Per-output-cell privacy loss ln(p_d/p_d') on the measurement sample.

    The rows are the (at most :data:`LOSS_TABLE_ROWS`) cells of view ``v`` with the most mass
    on the *pilot* sample (at least 10 pilot hits), so that choosing them does not look at the
    measurement sample. The intervals are simultaneous over the rows: each is two-sided at
    level 1 − α/rows (Bonferroni). ``flag_above_eps``: the interval lies entirely above ε or
    below −ε. The table is descriptive: its α is its own, the verdict rests on ε_lb alone.
    """
    (r_d, r_dp), (s_d, s_dp) = pilot
    keys = np.unique(np.concatenate([c.cells[v] for c in (r_d, r_dp, s_d, s_dp)]))
    mass = sum(np.asarray(lookup(keys, c, v)) for c in (r_d, r_dp, s_d, s_dp))
    top = [j for j in np.argsort(-mass, kind="stable")[:LOSS_TABLE_ROWS] if mass[j] >= 10]
    c_d, c_dp = counts
    a = lookup(keys, c_d, v)
    b = lookup(keys, c_dp, v)
    level = alpha / max(len(top), 1)
    rows = []
    for j in top:
        lo, hi = log_ratio_interval(a[j], c_d.n_runs, b[j], c_dp.n_runs, level)
        rows.append({"cell": src.cell_text(v, int(keys[j])), "view": int(c_d.views[v]),
                     "p_d": a[j] / c_d.n_runs, "p_d_prime": b[j] / c_dp.n_runs,
                     "ln_ratio": log_ratio(a[j], c_d.n_runs, b[j], c_dp.n_runs),
                     "ci": [lo, hi], "ci_level_simultaneous": 1 - alpha,
                     "flag_above_eps": bool(lo > eps or hi < -eps)})
    return rows
