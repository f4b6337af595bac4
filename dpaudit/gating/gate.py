"""The CI gate on privacy regressions: ``dpaudit gate audits/``.

A suite (``audits/suite.toml``) lists audits, one per registered algorithm claim and per
mutant, each with its budget (measurement ``runs``), ``seed`` and expected verdict (``pass``
for the private algorithms, ``violation`` for mutants and non-private comparators)::

    [suite]
    alpha = 1e-3            # false-alarm budget of the whole suite
    runs = 200000           # default budget of an entry

    [[audit]]
    name = "adap-tt"        # entry name (defaults to algo); unique
    algo = "adap-tt"        # registry name, or your own: "bandit.py:run" (a path relative
                            # to the suite file) or "package.module:run"
    eps = 0.5
    seed = 1
    expect = "pass"         # or "violation", or "inconclusive" with reason = "why"
    # optional: delta, runs, params = { risk = "0.05" }, neighbours = "search",
    # instances = "search" (or "fixed": only the instance params give),
    # pair = "pairs/x.json" (an explicit neighbouring pair, path relative to the suite file);
    # beyond_proof = true (a claim outside its proof's range: refused without it);
    # your own algorithm: model = "user" (or stream, full, local), params = { means =
    # "0.9,0.5", horizon = "8" } (dpaudit.auditing.plugin)

An entry naming your own callable is audited as ``dpaudit run --algo FILE.py:FUNCTION`` audits
it (:func:`dpaudit.auditing.plugin.audit_code`); one that returns ``dpaudit.Transcript`` has its
event stored and re-measured as a registered algorithm's, one that returns numbers is judged
on its verdict (its cells come from a feature map fitted on each audit's own pilot).

The gate runs every entry (:func:`dpaudit.auditing.audit.audit_algorithm`) and fails (exit 1) when

* a verdict differs from the expected one (an ``inconclusive`` verdict fails unless the entry
  declares ``expect = "inconclusive"`` with a ``reason``, shown in the reports), or
* the event stored in the baseline leaks significantly more than it did: the baseline keeps,
  per entry, the instance audited (the finalist's, when the claim's space was searched), the
  pair, the event (view, cells, numerator side) and its counts on a fixed
  number of runs (:func:`baseline_event`, :func:`fixed_n_event`: the entry's ``runs`` per side,
  measured at ``--update-baseline`` on their own seeds, not the audit's early-look counts);
  every gate run measures that same event again on as many fresh runs with today's code
  (:func:`remeasure`) and fails when the one-sided two-sample test that its log ratio rose
  (:func:`dpaudit.statistics.stats.rise_p_value`) rejects at α_i. Entries expected to be violations
  are
  not re-measured (a leak is their point), nor is an event with no hit on its denominator
  side (no finite loss to compare with; the output says so).

It fails with exit 2 before any audit runs when the baseline is missing, corrupt, or made for
other entries or another configuration (:func:`read_baseline`), printing the command that
regenerates it; a change of the dpaudit, numpy, numba, scipy, statsmodels or python version
since the baseline is printed and recorded in the JUnit (the random streams may change with
them; the re-measured event does not depend on which event today's search picks).

One error budget across the suite. With N entries, each verdict and each re-measurement runs
at α_i = α/(2N). A false violation has probability ≤ α_i (exact bounds). The rise test is an
asymptotic Wald test: its real size at α_i, measured on every stored event of the suite
(``benchmarks/gate_size.py``, docs/guide/gate.md), is α_i within the measurement's error, whatever
moved the random streams (it compares the same event's counts on independent runs). So the
false alarms α bounds are these two: Σ 2α_i = α. Not bounded by α: **verdict flips**. With the
same code, versions and seeds every verdict repeats exactly; once a change moves the random
streams, an entry whose pass rests on a bound close to (1 + margin)·ε, or whose inconclusive
rests on a pilot that separates nothing, may flip between pass and inconclusive (an
unexpected verdict, a gate failure) with the probability that its budget misses or finds, a
matter of power (docs/guide/gate.md gives each entry's distance from the rule).
Mutants are expected to be caught: a missed mutant fails the gate as an unexpected verdict
(the power of each entry's budget: docs/guide/gate.md).

The entries run side by side on the executor (:mod:`dpaudit.core.executor`: ``--workers``
processes, or a Dask cluster), each audit in one worker; a suite of one entry gives its audit
the workers. Results are deterministic for a suite (same seeds ⇒ same verdicts, whatever
``--workers`` and ``--scheduler``).
Outputs (each written atomically): the baseline JSON (``--update-baseline``), JUnit XML
(``--junit``), and per-entry verdict JSON + HTML/Markdown reports with an index
(``--report-dir``, :mod:`dpaudit.reporting.report`).
"""
from __future__ import annotations

import json
import math
import os
import re
import shlex
import time
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dpaudit.algorithms import registry
from dpaudit.auditing.audit import KernelSource, audit_registered
from dpaudit.auditing.callables import Call, TranscriptSource, inputs, load
from dpaudit.auditing.plugin import audit_code, callable_instance
from dpaudit.auditing.search import STRATEGIES
from dpaudit.core import executor, validate
from dpaudit.core.request import (AuditRequest, Budget, Claim, DEFAULT_BETA, DEFAULT_INSTANCES,
                                  DEFAULT_MARGIN, DEFAULT_NEIGHBOURS, INSTANCES)
from dpaudit.core.terms import Side, Verdict
from dpaudit.data import tables
from dpaudit.data.tables import load_pair
from dpaudit.errors import InputError
from dpaudit.reporting import report
from dpaudit.simulation.simulate import COUNTS, SEQUENCE, as_views
from dpaudit.statistics.events import Event
from dpaudit.statistics.stats import log_ratio, rise_p_value
from dpaudit.verdicts.result import jsonable, versions, write_json_atomic, write_text_atomic

SUITE_FILE = "suite.toml"
BASELINE_FILE = "baseline.json"
BASELINE_SCHEMA = 3    # the stored event per entry, counts of a fixed-n measurement (docs/guide/gate.md)
REMEASURE_KEY = 0x6761_7465   # spawn key of the stored events' fresh runs
BASELINE_STREAM, CHECK_STREAM = 0, 1   # the stored event's runs: at --update-baseline, at a check
DEFAULT_ALPHA = 1e-3
DEFAULT_RUNS = 200_000
VERDICTS = tuple(Verdict)
ENTRY_KEYS = {"name", "algo", "eps", "delta", "seed", "runs", "expect", "params", "neighbours",
              "instances", "pair", "reason", "model", "beyond_proof"}
OWN_KEYS = {"name", "algo", "eps", "delta", "seed", "runs", "expect", "params", "reason",
            "model"}     # an entry naming your own callable


@dataclass(frozen=True)
class Entry:
    """One audit of the suite (module doc: the TOML keys)."""
    name: str
    algo: str
    eps: float
    seed: int
    expect: Verdict
    runs: int
    delta: float | None = None
    params: dict = field(default_factory=dict)
    neighbours: str = DEFAULT_NEIGHBOURS
    instances: str = DEFAULT_INSTANCES
    pair: str | None = None              # as written in the suite (relative to its folder)
    pair_path: str | None = None         # resolved
    reason: str | None = None            # why an entry is expected to be inconclusive
    model: str | None = None             # your own callable's privacy model
    algo_path: str | None = None         # your own callable, its file resolved (else None)
    beyond_proof: bool = False           # a claim outside its proof's range, audited anyway

    def request(self, budget: Budget, workers: int | None = None) -> AuditRequest:
        """The entry's audit request.

        Args:
            budget: the suite's levels and the entry's runs.
            workers: processes.

        Returns:
            The :class:`~dpaudit.core.request.AuditRequest`; its pair path is relative to the
            working directory, as its command line prints it.
        """
        if self.algo_path:      # your own callable, its path relative to the working folder
            return AuditRequest(_relative(self.algo_path), Claim(self.eps, self.delta),
                                self.params, budget=budget, seed=self.seed, workers=workers,
                                model=self.model, small_delta_runs=0)
        return AuditRequest(self.algo, Claim(self.eps, self.delta), self.params,
                            self.neighbours, self.pair_path and os.path.relpath(self.pair_path),
                            budget, self.seed, workers, instances=self.instances,
                            beyond_proof=self.beyond_proof, small_delta_runs=0)

    def config(self) -> dict:
        """What a baseline must match to be comparable (everything but the name)."""
        own = {"model": self.model} if self.algo_path else {}
        return {"algo": self.algo, "eps": self.eps, "delta": self.delta, "seed": self.seed,
                "runs": self.runs, "params": self.params, "neighbours": self.neighbours,
                "instances": self.instances, "pair": self.pair, **own,
                **({"beyond_proof": True} if self.beyond_proof else {})}


def _relative(ref: str) -> str:
    """A callable's name with its file relative to the working folder (as a command prints it)."""
    target, _, attr = ref.rpartition(":")
    return f"{os.path.relpath(target)}:{attr}" if target.endswith(".py") else ref


def _own(algo: str, suite_file: str) -> str | None:
    """Your own callable's name with its file resolved against the suite's folder.

    None for a registry name (it has no ':').
    """
    if ":" not in algo:
        return None
    target, _, attr = algo.rpartition(":")
    if target.endswith(".py"):
        target = os.path.join(os.path.dirname(os.path.abspath(suite_file)), target)
    return f"{target}:{attr}"


@dataclass(frozen=True)
class Suite:
    """A parsed suite file: its ``path``, the false-alarm bound ``alpha`` and the entries."""

    path: str
    alpha: float
    entries: tuple

    @property
    def entry_alpha(self) -> float:
        """α_i = α/(2N): the verdict's and the baseline's bound each (module doc)."""
        return self.alpha / (2 * len(self.entries))


def suite_path(path: str) -> str:
    """The suite file of a path.

    Args:
        path: a folder holding suite.toml, or a .toml file.

    Returns:
        The suite file.
    """
    return os.path.join(path, SUITE_FILE) if os.path.isdir(path) else path


def load_suite(path: str) -> Suite:
    """Parse and validate a suite (module doc).

    Args:
        path: a folder holding ``suite.toml``, or a suite file.

    Returns:
        The :class:`Suite`.

    Raises:
        InputError: a missing file, bad TOML, unknown keys or algorithms, or bad values (one
            line naming the file and the entry).
    """
    f = suite_path(path)
    try:
        with open(f, "rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        raise InputError(f"suite {f} not found: expected a folder with {SUITE_FILE} or a "
                         ".toml file") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"suite {f} is not valid TOML: {e}") from None
    except UnicodeDecodeError:
        raise InputError(f"suite {f} is not valid TOML: not UTF-8 text") from None
    except OSError as e:
        raise InputError(f"suite {f} cannot be read ({e.strerror})") from None
    head = doc.get("suite", {})
    if not isinstance(head, dict):
        raise InputError(f"suite {f}: suite = {head!r} is not valid: expected a [suite] table")
    alpha = validate.probability(head.get("alpha", DEFAULT_ALPHA), f"suite {f}: alpha")
    default_runs = head.get("runs", DEFAULT_RUNS)
    raw = doc.get("audit", [])
    if not (isinstance(raw, list) and all(isinstance(e, dict) for e in raw)):
        raise InputError(f"suite {f}: audit = {raw!r} is not valid: expected [[audit]] tables")
    if not raw:
        raise InputError(f"suite {f} has no [[audit]] entries")
    entries, names = [], set()
    for i, e in enumerate(raw):
        where = f"suite {f}, audit #{i + 1}"
        for key, kind, what in (("algo", str, "a registry name"), ("name", str, "a string"),
                                ("params", dict, "a table of parameters"),
                                ("pair", str, "a path to a pair JSON file"),
                                ("neighbours", str, "a strategy name")):
            if key in e and not isinstance(e[key], kind):
                raise InputError(f"{where}: {key} = {e[key]!r} is not valid: expected {what}")
        algo_path = _own(e.get("algo", ""), f)
        unknown = sorted(set(e) - (OWN_KEYS if algo_path else ENTRY_KEYS - {"model"}))
        if unknown:
            raise InputError(f"{where}: unknown key {unknown[0]!r}: expected one of "
                             f"{', '.join(sorted(OWN_KEYS if algo_path else ENTRY_KEYS))}"
                             + (" (an entry naming your own callable)" if algo_path else ""))
        if "algo" not in e or "eps" not in e or "expect" not in e:
            raise InputError(f"{where}: algo, eps and expect are required")
        name = str(e.get("name", e["algo"]))
        if name in names:
            raise InputError(f"{where}: entry name {name!r} is used twice")
        names.add(name)
        if algo_path:
            entries.append(_own_entry(e, where, name, algo_path, default_runs))
            continue
        spec = registry.get(e["algo"])               # InputError naming the close matches
        expect, reason = _expected(e, where, name), e.get("reason")
        eps = validate.eps(e["eps"], f"{where} ({name}): eps")
        runs = validate.integer(1000)(e.get("runs", default_runs), f"{where} ({name}): runs")
        seed = validate.seed(e.get("seed", 0), f"{where} ({name}): seed")
        if e.get("delta") is not None:
            validate.delta(e["delta"], f"{where} ({name}): delta")
        if e.get("neighbours", DEFAULT_NEIGHBOURS) not in STRATEGIES:
            raise InputError(f"{where} ({name}): neighbours = {e['neighbours']!r} is not valid: "
                             f"expected one of {', '.join(STRATEGIES)}")
        if e.get("instances", DEFAULT_INSTANCES) not in INSTANCES:
            raise InputError(f"{where} ({name}): instances = {e['instances']!r} is not valid: "
                             f"expected one of {', '.join(INSTANCES)}")
        params = {str(k): str(v) for k, v in e.get("params", {}).items()}
        beyond_proof = e.get("beyond_proof", False)
        if not isinstance(beyond_proof, bool):
            raise InputError(f"{where} ({name}): beyond_proof = {beyond_proof!r} is not valid: "
                             "expected true or false")
        try:
            _, delta = spec.resolve_claim(params, e.get("delta"))
            if not beyond_proof:
                spec.check_proof(eps, delta)
        except InputError as err:
            raise InputError(f"{where} ({name}): {err}") from None
        pair_path = None
        if "pair" in e:
            pair_path = os.path.join(os.path.dirname(os.path.abspath(f)), e["pair"])
            try:
                load_pair(pair_path, spec.model)
            except InputError as err:
                raise InputError(f"{where} ({name}): {err}") from None
        entries.append(Entry(name=name, algo=e["algo"], eps=eps, seed=seed,
                             expect=expect, runs=runs, delta=e.get("delta"),
                             params=params, neighbours=e.get("neighbours", DEFAULT_NEIGHBOURS),
                             instances=e.get("instances", DEFAULT_INSTANCES),
                             pair=e.get("pair"), pair_path=pair_path, reason=reason,
                             beyond_proof=beyond_proof))
    return Suite(path=f, alpha=alpha, entries=tuple(entries))


def _expected(e: dict, where: str, name: str) -> Verdict:
    """The entry's expected verdict, checked with its reason."""
    if e["expect"] not in VERDICTS:
        raise InputError(f"{where} ({name}): expect={e['expect']!r} is not valid: "
                         f"expected one of {', '.join(VERDICTS)}")
    reason = e.get("reason")
    if (e["expect"] == Verdict.INCONCLUSIVE) != isinstance(reason, str) or reason == "":
        raise InputError(f"{where} ({name}): expect = 'inconclusive' needs reason = '...' "
                         "(why the audit cannot decide), and only it takes a reason")
    return Verdict(e["expect"])


def _own_entry(e: dict, where: str, name: str, algo_path: str, default_runs: int) -> Entry:
    """An entry naming your own callable, checked: it loads, and its model and params."""
    expect = _expected(e, where, name)
    eps = validate.eps(e["eps"], f"{where} ({name}): eps")
    runs = validate.integer(1000)(e.get("runs", default_runs), f"{where} ({name}): runs")
    seed = validate.seed(e.get("seed", 0), f"{where} ({name}): seed")
    if e.get("delta") is not None:
        validate.delta(e["delta"], f"{where} ({name}): delta")
    model = e.get("model", "user")
    if model not in tables.MODELS:
        raise InputError(f"{where} ({name}): model = {model!r} is not valid: expected one of "
                         f"{', '.join(tables.MODELS)}")
    params = {str(k): str(v) for k, v in e.get("params", {}).items()}
    try:
        load(algo_path)
        callable_instance(model, params)
    except InputError as err:
        raise InputError(f"{where} ({name}): {err}") from None
    return Entry(name=name, algo=e["algo"], eps=eps, seed=seed, expect=expect, runs=runs,
                 delta=e.get("delta"), params=params, reason=e.get("reason"), model=model,
                 algo_path=algo_path)


def judge(entry: Entry, result: dict, rise: dict | None, alpha: float) -> tuple[bool, str, str]:
    """The outcome of one entry.

    Args:
        entry: the suite entry.
        result: its audit's verdict JSON.
        rise: the re-measured stored event (:func:`remeasure`), or None when not re-measured.
        alpha: the entry's level.

    Returns:
        (ok, status, message): the verdict against the expected one, then the stored event's
        rise against ``alpha``.
    """
    got = result["verdict"]
    lb = float(result["eps_lb"])
    facts = ((f"reason: {result['reason']}; " if result.get("reason") else "")
             + f"eps_lb {lb:.4f}, eps_ub {_num(result.get('eps_ub'))}"
             + (f"; stored event p = {rise['p_value']:.3g}" if rise else ""))
    problems = []
    if got != entry.expect:
        what = {Verdict.PASS: "no violation found",
                Verdict.INCONCLUSIVE: result.get("reason") or "",
                Verdict.VIOLATION: f"eps_lb {lb:.4f} > eps {entry.eps:g}"}[got]
        problems.append(("unexpected verdict", f"expected {entry.expect.upper()}, got "
                                               f"{got.upper()} ({what})"))
    if rise and rise["p_value"] <= alpha:
        problems.append(("loss rose", (
            f"the baseline's event leaks more than it did: log ratio "
            f"{_num(rise['log_ratio_baseline'])} -> {_num(rise['log_ratio'])} on "
            f"{rise['runs']} fresh runs per side (two-sample p = {rise['p_value']:.3g} <= "
            f"{alpha:.3g})")))
    if problems:
        return False, problems[0][0], (f"{entry.name}: " + "; and ".join(p for _, p in problems)
                                       + f" (algorithm {entry.algo}; {facts})")
    return True, "ok", f"{entry.name}: {got.upper()} as expected; {facts}"


def _num(x: float | str | None) -> str:
    x = float(x) if x is not None else math.nan
    return f"{x:.4f}" if math.isfinite(x) else str(x)


def run_entry(entry: Entry, alpha: float, workers: int | None = None, beta: float = DEFAULT_BETA,
              margin: float = DEFAULT_MARGIN) -> tuple[dict, dict | None]:
    """One entry audited.

    Args:
        entry: the suite entry.
        alpha: its level.
        workers: processes.
        beta: the pass bound's β (and the detectable loss's power 1 − β).
        margin: a pass needs ε_ub ≤ (1 + margin)·ε.

    Returns:
        (the verdict JSON, docs/reference/verdict-json.md; the :func:`baseline_event` of its ε_lb,
        None when no event was measured).
    """
    audit = audit_code if entry.algo_path else audit_registered
    res = audit(entry.request(Budget(entry.runs, alpha, beta, margin), workers))
    doc = res.to_dict()
    stable = res.measured and isinstance(res.measured[0], (KernelSource, TranscriptSource))
    return doc, (baseline_event(doc, *res.measured) if stable else None)


def baseline_event(result: dict, source: KernelSource | TranscriptSource, event: Event) -> dict:
    """What the baseline keeps of the event behind an audit's ε_lb.

    Enough to measure the event again with other code.

    Args:
        result: the audit's verdict JSON.
        source: the source of the finalist measured (a compiled kernel, or your callable
            returning Transcripts).
        event: its event.

    Returns:
        A JSON-able dict: ``params`` (the instance audited), ``pair`` (d, the changed position
        and its value in d′), ``horizon`` (samples per run), ``view``, ``numerator``, ``cells``
        (16 hex digits each), the hits and runs, and ``saturated`` when the denominator side had
        no hit (its loss then has no finite upper bound, so no rise can be shown on it).
    """
    pair, m = source.pair, result["counts"]["measurement"]
    num = Side(event.numerator)
    k_num, k_den = ((m["hits_d_prime"], m["hits_d"]) if num == "d_prime" else
                    (m["hits_d"], m["hits_d_prime"]))
    return {"params": result["params"],
            "pair": {"model": pair.model, "d": np.asarray(pair.d).tolist(),
                     "position": list(pair.position),
                     "value_d_prime": np.asarray(pair.d_prime[pair.position]).tolist()},
            "horizon": int(source.limit), "view": [int(x) for x in event.view],
            "numerator": num, "cells": [format(int(c), "016x") for c in event.cells],
            "hits_num": int(k_num), "hits_den": int(k_den), "runs": int(m["runs_d"]),
            "saturated": int(k_den) == 0}


def stored_event(stored: dict) -> tuple[tables.NeighbourPair, np.ndarray]:
    """The neighbouring pair and the sorted cells of a stored event (:func:`baseline_event`).

    Args:
        stored: the baseline's event.

    Returns:
        (pair, cells): the :class:`~dpaudit.data.tables.NeighbourPair` and the sorted uint64
        cells.

    Raises:
        InputError: a key is missing or of the wrong type, the counts are not 0 ≤ hits ≤
            runs, or the pair is not a neighbouring pair of its model.
    """

    def bad(what: str) -> InputError:
        return InputError(f"its stored event has {what}")
    if not isinstance(stored, dict):
        raise bad("the wrong type")
    if not isinstance(stored.get("params", {}), dict):
        raise bad(f"params = {stored.get('params')!r}: expected a table of parameters")
    for key, kind in (("pair", dict), ("horizon", int), ("view", list), ("cells", list),
                      ("hits_num", int), ("hits_den", int), ("runs", int)):
        if not isinstance(stored.get(key), kind) or isinstance(stored.get(key), bool):
            raise bad(f"{key} = {stored.get(key)!r}: expected {kind.__name__}")
    if stored.get("numerator") not in tuple(Side):
        raise bad(f"numerator = {stored.get('numerator')!r}: expected d or d_prime")
    if not (stored["horizon"] >= 1 and stored["runs"] >= 1
            and 0 <= stored["hits_num"] <= stored["runs"]
            and 0 <= stored["hits_den"] <= stored["runs"]):
        raise bad("counts out of range: expected horizon >= 1, 0 <= hits <= runs")
    view = stored["view"]
    if not (1 <= len(view) <= 3 and all(isinstance(v, int) and v >= 0 for v in view)
            and view[2:] in ([], [SEQUENCE], [COUNTS])):
        raise bad(f"view = {view!r}: expected sample indices [start, end, kind] (kind 0: "
                  f"action sequences, 1: arm counts)")
    try:
        cells = np.sort(np.array([int(c, 16) for c in stored["cells"]], dtype=np.uint64))
    except (TypeError, ValueError, OverflowError):
        raise bad("cells that are not 16-digit hexadecimal numbers") from None
    pr = stored["pair"]
    try:
        m = tables.model(pr.get("model"))
        d = m.validate(pr.get("d"), "the baseline's d")
        pair = tables.NeighbourPair.from_tables(
            d, m.set(d, tuple(pr.get("position")), pr.get("value_d_prime")),
            {"kind": "baseline"}, "the baseline's pair", pr.get("model"))
    except InputError as e:
        raise bad(f"a bad pair ({e})") from None
    except (TypeError, ValueError, IndexError, KeyError):
        raise bad("a malformed pair") from None
    return pair, cells


def measure_stored(entry: Entry, stored: dict, stream: int,
                   workers: int | None = None) -> tuple[int, int]:
    """The stored event measured on fresh runs with today's code.

    All ``entry.runs`` runs per side are run (a fixed n, no look, no stop). The instance is the
    stored one (the finalist's of a searched claim space), else the entry's.

    Args:
        entry: the suite entry.
        stored: the baseline's event (:func:`baseline_event`).
        stream: :data:`BASELINE_STREAM` or :data:`CHECK_STREAM`: independent seeds from the
            entry's seed, a stream no audit draws.
        workers: processes.

    Returns:
        (numerator hits, denominator hits).
    """
    pair, cells = stored_event(stored)
    views = as_views([stored["view"]])
    if entry.algo_path:     # your own callable, on the stored pair
        call = Call(load(entry.algo_path), entry.eps, entry.name, entry.algo_path)
        src = TranscriptSource(call, inputs(pair), views, pair, stored["horizon"], workers or 1)
    else:
        spec = registry.get(entry.algo)
        params, _ = spec.resolve_claim(dict(stored.get("params", entry.params)), entry.delta)
        prep = spec.prepare(entry.eps, params)
        # the stored view alone, each run cut where it ends (KernelSource.narrowed: the same
        # law of its cells as runs to the horizon, at a fraction of the samples)
        src = KernelSource(spec, prep, pair, views, stored["horizon"], workers or 1, only=0)
    seeds = np.random.SeedSequence(entry.seed, spawn_key=(REMEASURE_KEY, stream)).spawn(2)
    hits = [int(src.draw(side, entry.runs, seeds[side.index]).hits(0, cells)) for side in Side]
    return (hits[1], hits[0]) if stored["numerator"] == Side.D_PRIME else (hits[0], hits[1])


def fixed_n_event(entry: Entry, ev: dict, workers: int | None = None) -> dict:
    """A stored event with its counts replaced by a fixed-n measurement.

    What ``--update-baseline`` stores for an entry whose event is re-measured: the audit's own
    counts may come from an early look its futility rule chose, which a two-sample test must not
    compare with. The audit's counts stay, as ``audit_counts``.

    Args:
        entry: the suite entry.
        ev: the event (:func:`baseline_event`).
        workers: processes.

    Returns:
        ``ev`` with the counts of :func:`measure_stored` on :data:`BASELINE_STREAM`.
    """
    k_num, k_den = measure_stored(entry, ev, BASELINE_STREAM, workers)
    return {**ev, "counts": "fixed-n",
            "audit_counts": {k: ev[k] for k in ("hits_num", "hits_den", "runs")},
            "hits_num": k_num, "hits_den": k_den, "runs": entry.runs, "saturated": k_den == 0}


def remeasure(entry: Entry, stored: dict, workers: int | None = None) -> dict:
    """The stored event measured again, and the test that its loss rose.

    Args:
        entry: the suite entry.
        stored: the baseline's event.
        workers: processes.

    Returns:
        dict with ``hits_num``, ``hits_den``, ``runs``, ``log_ratio`` (new) and
        ``log_ratio_baseline`` (ln of the estimated probability ratio, ±inf where a side has no
        hit), and ``p_value`` of the one-sided two-sample test that the log ratio rose
        (:func:`dpaudit.statistics.stats.rise_p_value`), on :data:`CHECK_STREAM`.
    """
    k_num, k_den = measure_stored(entry, stored, CHECK_STREAM, workers)
    old = (stored["hits_num"], stored["runs"], stored["hits_den"], stored["runs"])
    new = (k_num, entry.runs, k_den, entry.runs)
    return {"hits_num": k_num, "hits_den": k_den, "runs": entry.runs,
            "log_ratio": log_ratio(*new), "log_ratio_baseline": log_ratio(*old),
            "p_value": rise_p_value(old, new)}


def read_baseline(path: str, suite: Suite, regenerate: str) -> dict:
    """The baseline at ``path`` for ``suite``, checked before any audit runs.

    Args:
        path: the baseline file.
        suite: the suite it must have been made for.
        regenerate: the command that rebuilds it, for the message.

    Returns:
        The baseline document.

    Raises:
        InputError: one line ending with the ``regenerate`` command, when the file is
            missing, unreadable, not a baseline of :data:`BASELINE_SCHEMA`, or made for other
            entries or another configuration of an entry (named, with the key that differs).
    """
    fix = f"; regenerate it with: {regenerate}"
    try:
        with open(path) as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise InputError(f"baseline {path} not found{fix}") from None
    except (OSError, ValueError) as e:
        raise InputError(f"baseline {path} cannot be read ({type(e).__name__}){fix}") from None
    if not (isinstance(doc, dict) and doc.get("schema") == BASELINE_SCHEMA
            and isinstance(doc.get("entries"), dict)
            and all(isinstance(b, dict) for b in doc["entries"].values())):
        raise InputError(f"baseline {path} is not a dpaudit baseline of schema "
                         f"{BASELINE_SCHEMA}{fix}")
    entries = doc["entries"]
    for e in suite.entries:
        if e.name not in entries:
            raise InputError(f"baseline {path} has no entry {e.name!r}{fix}")
        stored = entries[e.name].get("config")
        if stored != e.config():
            key = next((k for k, v in e.config().items()
                        if not isinstance(stored, dict) or stored.get(k) != v), "config")
            raise InputError(f"baseline {path}: entry {e.name!r} was made with {key} = "
                             f"{(stored or {}).get(key)!r}, the suite has "
                             f"{e.config().get(key)!r}{fix}")
        if entries[e.name].get("event") is not None:
            try:
                stored_event(entries[e.name]["event"])
            except InputError as err:
                raise InputError(f"baseline {path}: entry {e.name!r}: {err}{fix}") from None
    extra = sorted(set(entries) - {e.name for e in suite.entries})
    if extra:
        raise InputError(f"baseline {path} has an entry {extra[0]!r} the suite lacks{fix}")
    return doc


def version_changes(stored: dict | None) -> list[str]:
    """The packages whose version differs from the baseline's.

    Args:
        stored: the baseline's versions.

    Returns:
        ``name old -> new`` lines.
    """
    now = versions()
    return [f"{k} {stored.get(k)} -> {v}" for k, v in now.items()
            if isinstance(stored, dict) and stored.get(k) != v]


def baseline_doc(suite: Suite, rows: list, beta: float, margin: float) -> dict:
    """The baseline of a gate run (docs/guide/gate.md).

    Args:
        suite: the suite.
        rows: one outcome per entry.
        beta: the pass rule's β.
        margin: the pass rule's margin.

    Returns:
        Per entry its configuration, verdict, reason, ε_lb, ε_ub (the bound a pass rests on),
        detectable loss (a planning figure) and the :func:`baseline_event` of its event; the versions
        it was made with.
    """
    return jsonable({
        "schema": BASELINE_SCHEMA, "suite": suite.path, "alpha": suite.alpha,
        "entry_alpha": suite.entry_alpha, "beta": beta, "margin": margin,
        "versions": versions(),
        "entries": {r["entry"].name: {
            "config": r["entry"].config(), "verdict": r["result"]["verdict"],
            "reason": r["result"].get("reason"), "eps_lb": r["result"]["eps_lb"],
            "eps_ub": r["result"].get("eps_ub"), "detectable_loss": r["result"]["detectable_loss"], "power": r["result"]["power"],
            "event": r["event"]} for r in rows}})


def junit_xml(suite: Suite, rows: list, changes: list[str]) -> str:
    """The JUnit XML of the gate.

    Args:
        suite: the suite.
        rows: one outcome per entry.
        changes: the version changes since the baseline.

    Returns:
        The XML: one testcase per entry, a <failure> for each failed one; the suite's
        properties name the false-alarm bound and any version change.
    """
    fails = sum(not r["ok"] for r in rows)
    ts = ET.Element("testsuite", name="dpaudit gate", tests=str(len(rows)),
                    failures=str(fails), errors="0",
                    time=f"{sum(r['result']['runtime_s'] for r in rows):.3f}")
    props = ET.SubElement(ts, "properties")
    ET.SubElement(props, "property", name="suite", value=suite.path)
    ET.SubElement(props, "property", name="false_alarm_bound", value=repr(suite.alpha))
    ET.SubElement(props, "property", name="versions_changed",
                  value="; ".join(changes) or "none")
    for r in rows:
        e, res, rise = r["entry"], r["result"], r.get("rise")
        tc = ET.SubElement(ts, "testcase", classname=f"dpaudit.gate.{e.expect}", name=e.name,
                           time=f"{res['runtime_s']:.3f}")
        if not r["ok"]:
            ET.SubElement(tc, "failure", message=r["message"], type=r["status"]).text = \
                res.get("command", "")
        tprops = ET.SubElement(tc, "properties")
        for key in ("verdict", "reason", "eps_lb", "eps_ub", "alpha", "power",
                    "detectable_loss"):
            if res.get(key) is not None:
                ET.SubElement(tprops, "property", name=key, value=str(res[key]))
        ET.SubElement(tprops, "property", name="stored_event_p_value",
                      value=str(rise["p_value"]) if rise else r.get("why_not", "n/a"))
        if res.get("instance_search"):
            ET.SubElement(tprops, "property", name="instance",
                          value=res["instance_search"]["audited"])
        ET.SubElement(tc, "system-out").text = r["message"] + "; " + res.get("command", "")
    return ET.tostring(ts, encoding="unicode", xml_declaration=True) + "\n"


@dataclass(frozen=True)
class GateOptions:
    """How ``dpaudit gate`` runs.

    How ``dpaudit gate`` runs: the ``baseline`` file (None: ``baseline.json`` beside the
    suite), the ``junit`` XML and the ``report_dir`` to write (None: none),
    ``update_baseline`` (write it instead of checking against it), ``workers`` (entries
    audited at once; results do not depend on it); every entry's upper bound ``eps_ub`` holds with confidence 1 −
    ``beta``, and a pass needs it ≤ (1 + ``margin``)·ε (:mod:`dpaudit.verdicts.verdict`).
    """

    baseline: str | None = None
    junit: str | None = None
    report_dir: str | None = None
    update_baseline: bool = False
    workers: int | None = None
    beta: float = DEFAULT_BETA
    margin: float = DEFAULT_MARGIN


@dataclass(frozen=True)
class EntryCheck:
    """One entry of a gate run: what :func:`check_entry` needs.

    Attributes:
        entry: the suite entry.
        alpha: its level α_i (the verdict's and the re-measurement's).
        has_baseline: a baseline was read (False: being written).
        stored: the baseline's event of the entry, or None.
        update_baseline: the run writes the baseline.
        workers: processes per audit.
        beta: the pass bound's β.
        margin: a pass needs ε_ub ≤ (1 + margin)·ε.
    """

    entry: Entry
    alpha: float
    has_baseline: bool
    stored: dict | None
    update_baseline: bool = False
    workers: int | None = None
    beta: float = DEFAULT_BETA
    margin: float = DEFAULT_MARGIN


def check_entry(c: EntryCheck) -> dict:
    """One entry audited, its stored event re-measured where the rules say so, and judged.

    Args:
        c: the entry and the run's settings.

    Returns:
        The row of the gate: ``entry``, ``result`` (verdict JSON), ``event`` (the event
        a baseline stores, or None), ``rise`` (:func:`remeasure`, or None), ``why_not`` (why
        it was not re-measured), ``ok``, ``status``, ``message`` and ``seconds``.
    """
    t = time.perf_counter()
    e = c.entry
    res, ev = run_entry(e, c.alpha, c.workers, c.beta, c.margin)
    if c.update_baseline and e.expect != Verdict.VIOLATION and ev and not ev["saturated"]:
        ev = fixed_n_event(e, ev, c.workers)
    rise, why_not = None, None
    if not c.has_baseline:
        why_not = "no baseline yet"
    elif e.expect == Verdict.VIOLATION:
        why_not = "not re-measured: a violation is expected"
    elif not c.stored:
        why_not = "not re-measured: the baseline measured no event"
    elif c.stored.get("saturated"):
        why_not = "not re-measured: the stored event had no hit on the denominator side"
    else:
        rise = remeasure(e, c.stored, c.workers)
    ok, status, msg = judge(e, res, rise, c.alpha)
    return {"entry": e, "result": res, "event": ev, "rise": rise, "why_not": why_not,
            "ok": ok, "status": status, "message": msg + (f"; {why_not}" if why_not and ok else ""),
            "seconds": time.perf_counter() - t}


def gate(path: str, options: GateOptions = GateOptions(),
         echo: Callable[[str], object] = print) -> int:
    """Run a suite of audits and compare it with its baseline.

    The suite's rules are in the module doc and docs/guide/gate.md.

    Args:
        path: a folder holding ``suite.toml``, or a suite file.
        options: the baseline, JUnit and report paths and the pass rule
            (:class:`GateOptions`).
        echo: receives the progress and summary lines.

    Returns:
        The exit code: 0 when every entry is as expected and no stored event's loss rose,
        1 otherwise.

    Raises:
        InputError: before any audit runs, for a bad suite, an output folder that does not
            exist, or (without ``update_baseline``) a missing, corrupt or mismatched baseline
            (:func:`read_baseline`).
    """
    o = options
    baseline, junit, report_dir, update_baseline = (o.baseline, o.junit, o.report_dir,
                                                    o.update_baseline)
    workers, beta, margin = o.workers, o.beta, o.margin
    suite = load_suite(path)
    given = baseline is not None
    if baseline is None:
        baseline = os.path.join(os.path.dirname(suite.path), BASELINE_FILE)
    inputs = {"the suite file": suite.path, **{f"the pair file of entry {e.name!r}":
                                                e.pair_path for e in suite.entries}}
    validate.output_path("--junit", junit, {**inputs, "the baseline": baseline})
    if update_baseline:
        validate.output_path("--baseline", baseline, {**inputs, "the --junit file": junit})
    if report_dir is not None:
        if not os.path.isdir(report_dir):
            raise InputError(f"--report-dir {report_dir}: folder does not exist")
        for out in _report_files(report_dir, suite.entries):
            validate.output_path("--report-dir", out, {**inputs, "the baseline": baseline,
                                                       "the --junit file": junit})
    regenerate = shlex.join(["dpaudit", "gate", path, *(["--baseline", baseline] if given
                                                        else []), "--update-baseline"])
    doc = None if update_baseline else read_baseline(baseline, suite, regenerate)
    base = doc["entries"] if doc else {}
    changes = version_changes(doc["versions"]) if doc else []
    a_i = suite.entry_alpha
    echo(f"dpaudit gate: {len(suite.entries)} audits from {suite.path}; false-alarm "
         f"probability of the suite <= {suite.alpha:g} (each audit's verdict and each stored "
         f"event's re-measurement at alpha {a_i:.3g}; baseline "
         f"{baseline if doc else 'being written'})")
    if changes:
        echo(f"versions changed since the baseline: {'; '.join(changes)} (the random streams "
             "may differ; the stored events are measured again all the same)")
    rows, t0 = [], time.perf_counter()
    checks = [EntryCheck(e, a_i, doc is not None, (base.get(e.name) or {}).get("event"),
                         update_baseline, workers, beta, margin) for e in suite.entries]
    # the entries run side by side on the executor, each audit in its worker process (one
    # entry: its audit's own maps use the workers); the rows come back in suite order
    parallel = workers or executor.default_workers()
    for i, row in enumerate(executor.map_tasks(check_entry, checks, parallel)):
        rows.append(row)
        echo(f"[{i + 1}/{len(suite.entries)}] {'ok  ' if row['ok'] else 'FAIL'} "
             f"{row['message']} ({row['seconds']:.0f} s)")
    failed = [r for r in rows if not r["ok"]]
    if update_baseline and failed:
        echo(f"baseline not written: {len(failed)} unexpected verdict(s)")
    elif update_baseline:
        write_text_atomic(baseline, dumps(baseline_doc(suite, rows, beta, margin)))
        echo(f"baseline written: {baseline}")
    if junit:
        write_text_atomic(junit, junit_xml(suite, rows, changes))
    if report_dir:
        _reports(report_dir, rows, base)
    echo(f"dpaudit gate: {len(rows) - len(failed)}/{len(rows)} as expected in "
         f"{time.perf_counter() - t0:.0f} s; false-alarm probability <= {suite.alpha:g}")
    for r in failed:
        echo(f"FAILED {r['message']}")
    return 1 if failed else 0


def dumps(doc: dict) -> str:
    """Indented JSON with each list of numbers on one line.

    Args:
        doc: the baseline.

    Returns:
        The text (a baseline's tables stay readable and a few hundred kB at most).
    """
    text = json.dumps(doc, indent=1)
    return re.sub(r"\[[-+0-9.eE,\s]*\]", lambda m: "[" + ", ".join(
        x.strip() for x in m.group(0)[1:-1].split(",") if x.strip()) + "]", text) + "\n"


def _stem(name: str) -> str:
    """The file name stem of an entry's reports."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _report_files(folder: str, entries: tuple) -> list[str]:
    """Every file :func:`_reports` writes into ``folder``."""
    return [os.path.join(folder, f) for f in report.INDEX_FILES] + [
        os.path.join(folder, _stem(e.name) + ext) for e in entries
        for ext in (".json", ".html", ".md")]


def _reports(folder: str, rows: list, base: dict) -> None:
    """Per-entry verdict JSON and HTML/Markdown reports, and the index page."""
    entries = []
    for r in rows:
        e, res = r["entry"], r["result"]
        stem = _stem(e.name)
        write_json_atomic(os.path.join(folder, f"{stem}.json"), res)
        report.write_report([res], os.path.join(folder, f"{stem}.html"),
                            os.path.join(folder, f"{stem}.md"))
        b = base.get(e.name)
        entries.append({"name": e.name, "algorithm": e.algo, "eps": e.eps,
                        "expected": e.expect + (f" ({e.reason})" if e.reason else ""),
                        "verdict": res["verdict"] + (f": {res['reason']}"
                                                     if res.get("reason") else ""),
                        "ok": r["ok"],
                        "eps_lb": res["eps_lb"], "baseline": b["eps_lb"] if b else None,
                        "report": f"{stem}.html", "runtime_s": res["runtime_s"]})
    report.write_index(entries, folder)
