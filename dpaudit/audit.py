"""Black-box privacy audit of a registered bandit algorithm on neighbouring reward tables.

Data flow: candidate pairs (:mod:`dpaudit.neighbours`) → pilot runs on each pair →
event selection per pair (:mod:`dpaudit.events`) → the best ``finalists`` pairs re-run on fresh,
independent samples → Clopper–Pearson ε lower bound per finalist at α/F (Bonferroni over the F
finalists; the pilot sample is never reused) → ε_lb = the largest → verdict (DESIGN.md §4):
``violation`` if ε_lb > ε (with confidence 1 − α the privacy loss exceeds the claim), else
``pass``.

Every event is a set of cells of a *view* (the transcript truncated at L samples), a function of
the released output (actions, τ, â), so its probability ratio lower-bounds the privacy loss of
the full transcript. Views of a short prefix only need that prefix simulated.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from dpaudit import neighbours as nbrs
from dpaudit import registry
from dpaudit.errors import InputError
from dpaudit.events import Event, best_event
from dpaudit.result import AuditResult
from dpaudit.simulate import (STATUS_NAMES, TRUNCATED, Counts, default_workers, run_batch,
                              simulate)
from dpaudit.stats import detectable_eps, eps_lower_bound, log_ratio, log_ratio_interval

DEFAULT_RUNS = 2_000_000   # measurement runs per side per finalist
PILOT_FRACTION = 8         # pilot runs per side per candidate = runs // PILOT_FRACTION
FINALISTS = 2
LOSS_TABLE_ROWS = 20


def view_lengths(K: int, horizon: int) -> list[int]:
    """Prefix lengths audited: K+1, K+2, K+4, ... (the first decision after initialisation and
    geometrically longer prefixes), and the whole audit horizon."""
    out, step = [], 1
    while K + step < horizon:
        out.append(K + step)
        step *= 2
    return sorted(set(out + [horizon]))


@dataclass
class _Candidate:
    pair: object
    event: Event | None


def _check_common(eps, alpha, runs, workers):
    import math
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
        raise InputError(f"eps={eps!r} is out of range: expected a finite number > 0")
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise InputError(f"alpha={alpha!r} is out of range: expected a number in (0, 1)")
    if runs is not None and (int(runs) != runs or runs < 1):
        raise InputError(f"runs={runs!r} is out of range: expected an integer >= 1")
    if workers is not None and (int(workers) != workers or workers < 1):
        raise InputError(f"workers={workers!r} is out of range: expected an integer >= 1")


def audit_algorithm(algo, eps: float, *, params: dict | None = None, alpha: float = 0.05,
                    runs: int | None = None, seed: int | None = None, workers: int | None = None,
                    pair=None, finalists: int = FINALISTS, progress: bool = False) -> AuditResult:
    """Audit the registered algorithm ``algo`` (name or spec) against the claim ε-DP.

    ``params``: algorithm parameters (strings or values; defaults filled in). ``runs``:
    measurement runs per side per finalist (default 2·10^6); pilot runs are ``runs // 8`` per
    side per candidate pair. ``pair``: an explicit :class:`~dpaudit.tables.NeighbourPair`
    instead of the candidate search. ``seed``: root seed (drawn and reported when None).
    Raises :class:`InputError` on bad input. Result as in DESIGN.md §4.
    """
    t0 = time.perf_counter()
    _check_common(eps, alpha, runs, workers)
    spec = algo if isinstance(algo, registry.AlgorithmSpec) else registry.get(algo)
    p = spec.resolve_params(params or {})
    prep = spec.prepare(float(eps), p)
    runs = int(runs or DEFAULT_RUNS)
    pilot_runs = max(runs // PILOT_FRACTION, 1000)
    workers = int(workers or default_workers())
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint32)[0])
    root = np.random.SeedSequence(seed)
    s_table, s_pilot, s_meas = root.spawn(3)

    K = prep.means.shape[0]
    if pair is not None:
        if pair.d.shape[1] != K:
            raise InputError(f"the pair's tables have {pair.d.shape[1]} arms but means has {K}")
        pairs = [pair]
    else:
        pairs = nbrs.candidates(spec, p, int(s_table.generate_state(1, np.uint32)[0]))
    H = pairs[0].d.shape[0]
    views = view_lengths(K, H)
    total = 4 * (pilot_runs // 2) * len(pairs) + 2 * runs * min(finalists, len(pairs))
    bar = tqdm(total=total, unit="run", unit_scale=True, disable=None if progress else True, leave=False,
               desc=f"audit {spec.name}")

    def sim(table, n, s):
        return simulate(spec.kernel, table, prep.means, prep.theta, prep.aux, n_runs=n, seed=s,
                        views=views, workers=workers, progress=bar.update)

    # 1. pilot: choose an event per candidate pair (selection sample)
    n_fin = min(finalists, len(pairs))
    cands = []
    half = pilot_runs // 2
    for pr, s in zip(pairs, s_pilot.spawn(len(pairs))):
        seeds = s.spawn(4)
        rank = (sim(pr.d, half, seeds[0]), sim(pr.d_prime, half, seeds[1]))
        score = (sim(pr.d, half, seeds[2]), sim(pr.d_prime, half, seeds[3]))
        cands.append(_Candidate(pr, best_event(rank, score, runs, alpha / n_fin)))
    ranked = sorted(range(len(cands)), key=lambda i: -(cands[i].event.predicted_lb
                                                      if cands[i].event else -1.0))
    chosen = [i for i in ranked[:n_fin] if cands[i].event is not None]
    bar.total = 4 * (pilot_runs // 2) * len(pairs) + 2 * runs * len(chosen)

    # 2. measurement: fresh runs, Bonferroni over the finalists actually measured
    a_fin = alpha / max(len(chosen), 1)
    measured = []
    for i, s in zip(chosen, s_meas.spawn(max(len(chosen), 1))):
        c = cands[i]
        sd, sdp = s.spawn(2)
        m_d, m_dp = sim(c.pair.d, runs, sd), sim(c.pair.d_prime, runs, sdp)
        hd, hdp = m_d.hits(c.event.view_index, c.event.cells), m_dp.hits(c.event.view_index,
                                                                          c.event.cells)
        k_num, k_den = (hdp, hd) if c.event.numerator == "d_prime" else (hd, hdp)
        lb = float(eps_lower_bound(k_num, runs, k_den, runs, a_fin))
        measured.append((lb, i, m_d, m_dp, hd, hdp))
    bar.close()

    if measured:
        lb, i, m_d, m_dp, hd, hdp = max(measured, key=lambda m: m[0])
        c = cands[i]
        ev = c.event
        k_num, k_den = (hdp, hd) if ev.numerator == "d_prime" else (hd, hdp)
        eps_hat = log_ratio(k_num, runs, k_den, runs)
        detect = detectable_eps(k_den / runs, runs, float(eps), a_fin)
        event = _describe(spec, prep, c.pair, ev, hd, hdp, runs)
        loss_table = _loss_table(m_d, m_dp, ev.view_index, alpha, float(eps))
        pair_used = c.pair
    else:   # every pair gave identical transcript distributions on the pilot
        lb, eps_hat, detect, hd, hdp = 0.0, 0.0, float("inf"), 0, 0
        m_d = m_dp = None
        event = {"text": "no event separates d from d' on the pilot sample", "view": None}
        loss_table, pair_used = [], pairs[0]
    verdict = "violation" if lb > eps else "pass"
    return AuditResult(
        algorithm=spec.name, params=_jsonable_params(p), eps=float(eps), delta=0.0,
        verdict=verdict, eps_lb=lb, eps_hat=eps_hat, alpha=alpha,
        neighbours=pair_used.describe(), event=event,
        counts=_counts(pilot_runs, len(pairs), runs, hd, hdp, m_d, m_dp, a_fin, len(chosen)),
        loss_table=loss_table, seed=seed, runtime_s=round(time.perf_counter() - t0, 3),
        detectable_eps=detect, search=_search(cands, ranked, chosen, measured, views))


def _jsonable_params(p: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in p.items()}


def _counts(pilot_runs, n_pairs, runs, hd, hdp, m_d, m_dp, a_fin, n_fin) -> dict:
    def status(c):
        return {STATUS_NAMES[j]: int(c.status[j]) for j in range(3)} if c else {}
    return {"selection": {"runs_per_side": pilot_runs, "pairs": n_pairs},
            "measurement": {"runs_d": runs, "runs_d_prime": runs, "hits_d": int(hd),
                            "hits_d_prime": int(hdp), "status_d": status(m_d),
                            "status_d_prime": status(m_dp), "finalists": n_fin,
                            "alpha_per_finalist": a_fin}}


def _search(cands, ranked, chosen, measured, views) -> dict:
    lbs = {i: lb for lb, i, *_ in measured}
    rows = []
    for i in ranked:
        c = cands[i]
        rows.append({"changed_row": c.pair.row, "base": c.pair.base["name"],
                     "predicted_eps_lb": c.event.predicted_lb if c.event else 0.0,
                     "view": c.event.view if c.event else None,
                     "finalist": i in chosen, "eps_lb": lbs.get(i)})
    return {"candidates": len(cands), "views": [int(v) for v in views], "ranking": rows}


def _describe(spec, prep, pair, ev: Event, hd, hdp, runs, n_examples=5) -> dict:
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
    num = "d'" if ev.numerator == "d_prime" else "d"
    shown = "; ".join(" ".join(map(str, e["actions"][: ev.view])) for e in examples[:3])
    text = (f"the first {ev.view} actions (0-based arms) are one of {ev.cells.size} prefixes "
            f"chosen on the pilot sample as more likely under {num}; e.g. {shown}")
    return {"text": text, "view": ev.view, "n_cells": int(ev.cells.size), "numerator": num,
            "examples": examples, "predicted_eps_lb": ev.predicted_lb,
            "scoring_hits": list(ev.scoring_hits)}


def _loss_table(m_d: Counts, m_dp: Counts, v: int, alpha: float, eps: float) -> list:
    """Per-cell privacy loss on the measurement sample for the cells with the most mass.

    CIs are two-sided at level 1 − α *per cell* (not corrected for the number of cells: a
    descriptive table, the verdict rests on ε_lb alone)."""
    keys = np.union1d(m_d.cells[v], m_dp.cells[v])
    a = np.zeros(keys.size, np.int64)
    b = np.zeros(keys.size, np.int64)
    a[np.searchsorted(keys, m_d.cells[v])] = m_d.counts[v]
    b[np.searchsorted(keys, m_dp.cells[v])] = m_dp.counts[v]
    top = np.argsort(-(a + b), kind="stable")[:LOSS_TABLE_ROWS]
    rows = []
    for j in top:
        lo, hi = log_ratio_interval(b[j], m_dp.n_runs, a[j], m_d.n_runs, alpha)
        rows.append({"cell": f"{int(keys[j]):016x}", "view": int(m_d.views[v]),
                     "p_d": a[j] / m_d.n_runs, "p_d_prime": b[j] / m_dp.n_runs,
                     "ln_ratio": log_ratio(b[j], m_dp.n_runs, a[j], m_d.n_runs),
                     "ci": [lo, hi], "ci_level_per_cell": 1 - alpha,
                     "flag_above_eps": bool(lo > eps or -hi > eps)})
    return rows
