"""Bring your own algorithm: audit a plain Python callable from the command line.

``dpaudit run --algo path/to/file.py:function --model user --eps 0.5`` (or
``--algo package.module:function``) audits ``function(rng, data, eps) -> output`` of ONE run:

* ``rng``: a ``numpy.random.Generator`` (the only randomness allowed);
* ``data``: the input, by privacy model (docs/method/architecture.md): ``user`` and ``full``: a (T, K)
  reward table (row t = round t's rewards); ``stream``: a (K, T) table (entry (a, n) = the
  n-th pull of arm a); ``local``: one reward r ∈ [0, 1] (a float);
* ``eps``: the claimed ε;
* ``output``: the released transcript: a :class:`dpaudit.Transcript` (the actions, and the
  stopping time and recommendation when the run stopped), a number, or any sequence of numbers.
  A Transcript gets the registered algorithms' views (action prefixes, windows of actions and
  arm counts after the changed row, τ and â; :mod:`dpaudit.auditing.callables`) and its events
  print as action sequences; numbers are audited as numbers (threshold events apply); other
  sequences are hashed into one cell per distinct output.

A callable returning numbers runs once per sample in this process; one returning Transcripts
runs on the worker processes (:class:`~dpaudit.auditing.callables.TranscriptSource`, the same
result on any number of workers). Either is slower than the compiled reference kernels: the
default budget is :data:`DEFAULT_RUNS` per side. The neighbouring pair is found
by the black-box search of :mod:`dpaudit.auditing.search` over every position × value pattern × base
table of the model (:func:`dpaudit.data.neighbours.structured`; ``local``: r, r' in {0, ½, 1}).
On the pair behind the result, :data:`~dpaudit.auditing.callables.REPLAY_RUNS` coupled runs
(run i on d and on d′ from one generator state) show whether the output depends on the changed
entry at all: a callable whose outputs never differ is ``inconclusive`` (vacuous).
"""
from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from tqdm import tqdm

from dpaudit.algorithms.spec import Param
from dpaudit.auditing.audit import (Candidates, Checks, command_line, conclude, draw_seed,
                                   run_audit, source_views)
from dpaudit.auditing.callables import (Call, POSITIONS, REPLAY_RUNS, TranscriptSource,
                                        declared_horizons, from_payload, inputs, load, no_exit,
                                        positions, replay)
from dpaudit.auditing.mechanism import (MechanismSource, check_signature,
                                        reproducible)
from dpaudit.core import executor, validate
from dpaudit.core.request import (AuditRequest, Budget, Claim, DEFAULT_ALPHA, DEFAULT_BETA,
                                  DEFAULT_INSTANCES, DEFAULT_MARGIN)
from dpaudit.core.terms import PrivacyModel
from dpaudit.data.neighbours import structured
from dpaudit.data.tables import MODELS
from dpaudit.errors import InputError, UserCodeError
from dpaudit.simulation.transcript import Transcript, checked
from dpaudit.verdicts.result import AuditResult

DEFAULT_RUNS = 200_000
PILOT_BUDGET = 3         # neighbour search: pilot runs per side, all rounds = 3 × runs
_MASK = (1 << 63) - 1


class CallableMechanism:
    """``mechanism(rng, data, n)`` running the callable of ``call`` n times, one output each.

    The first output fixes the mode: a number keeps outputs as numbers (threshold events
    apply); a sequence makes every output a 63-bit hash (UUID 5) of its float64 values
    (``hashed``: hashes have no order, so no threshold events are tried on them). Pickled
    for a worker process as its callable's payload (:meth:`Call.payload`: by name when
    loaded by one) with the mode fixed in this process, so every worker codes alike.
    """

    def __init__(self, call: Call, hashed: bool | None = None) -> None:
        """Wrap ``call``; ``hashed``: the mode, None until the first output fixes it."""
        self.call, self.hashed = call, hashed
        self.__name__ = call.name

    def __reduce__(self) -> tuple:
        """Pickled as (its class, the callable's payload, ε, name, mode)."""
        return _rebuilt, (type(self), self.call.payload(), self.call.eps, self.call.name,
                          self.hashed)

    def _code(self, out: Any) -> float | int:
        try:
            a = np.asarray(out)
        except (TypeError, ValueError):            # e.g. ragged sequences
            a = np.asarray(None)
        if a.dtype.kind not in "iufb" or not np.all(np.isfinite(a)):
            raise UserCodeError(f"{self.__name__} returned {out!r:.80}: expected a real number "
                                "or a sequence of real numbers (not None, complex, text, NaN "
                                "or inf)")
        scalar = a.ndim == 0
        if self.hashed is None:
            self.hashed = not scalar
        if scalar and not self.hashed:
            return a.item()
        if not self.hashed:
            raise UserCodeError(f"{self.__name__} returned {out!r:.80} after returning "
                                "numbers: expected every run to return a number, or every run "
                                "a sequence")
        b = np.ascontiguousarray(a, dtype=np.float64).ravel()
        return uuid.uuid5(uuid.NAMESPACE_OID, b.tobytes().hex()).int & _MASK

    def __call__(self, rng: np.random.Generator, data: Any, n: int) -> np.ndarray:
        """``n`` runs of the callable on ``data``, one output each, shape (n,)."""
        with no_exit(self.__name__):
            return np.asarray([self._code(self.call(rng, data)) for _ in range(n)])


def _rebuilt(cls: type, payload: tuple, eps: float, name: str,
             hashed: bool | None) -> CallableMechanism:
    """A :class:`CallableMechanism` in a worker process (its ``__reduce__``)."""
    return cls(Call(from_payload(payload), eps, name), hashed)


def audit_callable(ref: Callable | str, eps: float, *, model: str = PrivacyModel.USER, delta: float = 0.0,
                   means: Sequence[float] = (0.9, 0.5), horizon: int = 8,
                   alpha: float = DEFAULT_ALPHA,
                   runs: int | None = None, seed: int | None = None,
                   progress: bool = False, beta: float = DEFAULT_BETA,
                   margin: float = DEFAULT_MARGIN, strict: bool = False,
                   workers: int | None = None,
                   instances: str = DEFAULT_INSTANCES, early_stop: bool = True) -> AuditResult:
    """Audit a plain Python bandit callable against (ε, δ)-DP.

    A keyword wrapper of :func:`audit_code`; the callable's contract is in the module doc.

    Args:
        ref: the callable ``fn(rng, data, eps)``, or its ``FILE.py:FUNCTION`` or
            ``MODULE:FUNCTION`` name.
        eps: the claimed ε, in [0.001, 100]; also passed to the callable.
        model: the privacy model (``user``, ``stream``, ``full`` or ``local``): the shape of
            ``data`` and what neighbouring tables differ in.
        delta: the claim's δ in [0, 1).
        means: the arms' means (K values in [0, 1]) the candidate tables are drawn around.
        horizon: the rows T of a candidate table.
        alpha: the probability that a violation is a false alarm.
        runs: measurement runs per side (default 2·10⁵). The black-box neighbour search
            (strategy ``blackbox`` of :mod:`dpaudit.auditing.search`) draws
            :data:`PILOT_BUDGET` × ``runs`` pilot runs per side over all its rounds.
        seed: the root seed; drawn and reported when None.
        progress: show progress bars on stderr.
        beta: ``eps_ub`` holds with confidence 1 − β.
        margin: a pass needs ``eps_ub`` ≤ (1 + margin)·ε (:mod:`dpaudit.verdicts.verdict`).
        strict: a callable that fails :func:`reproducible` raises instead of being audited.
        workers: processes drawing the runs of a callable that returns Transcripts (None: one
            per core); the result does not depend on it.
        instances: ``search``: the horizons of the claim's space the callable declares
            (:func:`~dpaudit.auditing.callables.declared_horizons`), else the given one;
            ``fixed``: the given horizon only.
        early_stop: stop the measurement once the verdict is settled; False: measure every
            look (the tightest ``eps_lb`` the runs give; :class:`~dpaudit.core.request.Budget`).

    Returns:
        :class:`~dpaudit.verdicts.result.AuditResult`; its ``reproducible`` says whether two
        draws with one seed agreed.

    Raises:
        InputError: bad input (a value out of range, a name that does not load).
        UserCodeError: the callable failed (an exception, an unusable output, an exit) or,
            under ``strict``, is not reproducible.
    """
    request = AuditRequest(ref, Claim(eps, delta), {"means": means, "horizon": horizon},
                           budget=Budget(runs, alpha, beta, margin, early_stop=early_stop),
                           seed=seed,
                           progress=progress, model=model, strict=strict, workers=workers,
                           instances=instances)
    _shape(model, means, horizon)        # values, not --param text
    return audit_code(request)


def _parsed(params: dict) -> tuple:
    """The instance (means, horizon) of a callable's request.

    (means, horizon) of a callable's request: ``--param`` text (defaults 0.9,0.5 and 8)
    parsed, values as they are.
    """
    unknown = sorted(set(params) - {"means", "horizon"})
    if unknown:
        raise InputError(f"--param {unknown[0]} is not a parameter of FILE.py:FUNCTION "
                         "algorithms: expected means or horizon")
    means, horizon = params.get("means", "0.9,0.5"), params.get("horizon", "8")
    if isinstance(means, str):
        means = Param("means", None, "floats", "", low=0.0, high=1.0, min_len=2).parse(means)
    if isinstance(horizon, str):
        horizon = Param("horizon", None, "int", "", low=1, high=1 << 20).parse(horizon)
    return means, horizon


def _shape(model: str, means: Sequence[float], horizon: int) -> tuple[list, int]:
    """The candidate tables' checked (means, horizon) under ``model``.

    Raises:
        InputError: an unknown model, a horizon < 1, means not a list of ≥ 2 numbers in [0, 1].
    """
    if model not in MODELS:
        raise InputError(f"--model {model!r} is not valid: expected one of {', '.join(MODELS)}")
    horizon = validate.positive(horizon, "horizon")
    return validate.unit_list(means, "means"), horizon


def callable_instance(model: str, params: dict) -> tuple[list, int]:
    """The instance a callable is audited on, checked.

    Args:
        model: the privacy model (``user``, ``stream``, ``full`` or ``local``).
        params: ``means`` and ``horizon``, as ``--param`` text (defaults 0.9,0.5 and 8) or
            values.

    Returns:
        (means, horizon): the arms' means the candidate tables are drawn around, the rows T.

    Raises:
        InputError: another parameter, an unknown model, a horizon < 1, means not a list of
            ≥ 2 numbers in [0, 1].
    """
    return _shape(model, *_parsed(params))


def audit_code(request: AuditRequest) -> AuditResult:
    """Audit a callable, as :func:`audit_callable` describes.

    The search is black-box (``request.neighbours``: ``search`` or ``blackbox``); an explicit
    pair is refused.

    Args:
        request: the audit; ``request.algorithm`` is a function, or its ``FILE.py:FUNCTION`` or
            ``MODULE:FUNCTION`` name.

    Returns:
        The :class:`~dpaudit.verdicts.result.AuditResult`.

    Raises:
        InputError: bad input.
        UserCodeError: the callable fails or, under ``strict``, is not reproducible.
    """
    t0 = time.perf_counter()
    model = request.model or PrivacyModel.USER
    if request.pair is not None:
        raise InputError("--pair applies to registered algorithms only")
    if request.exact:
        raise InputError("--exact applies to registered algorithms only: it walks a kernel's "
                         "logged releases, which FILE.py:FUNCTION callables do not have")
    if request.beyond_proof:
        raise InputError("--beyond-proof applies to registered algorithms only: a "
                         "FILE.py:FUNCTION callable declares no proof or range")
    if request.neighbours not in ("search", "blackbox"):
        raise InputError(f"--neighbours {request.neighbours} applies to registered algorithms "
                         "only: FILE.py:FUNCTION callables use the black-box search")
    means, horizon = callable_instance(model, request.params)
    ref = request.algorithm
    fn = ref if callable(ref) else load(ref)
    if callable(ref):
        check_signature(fn, f"{getattr(fn, '__name__', 'the callable')}")
        ref = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
    runs = int(request.budget.runs or DEFAULT_RUNS)
    request = draw_seed(request)
    s_table, s_pilot, s_meas, s_replay = np.random.SeedSequence(request.seed).spawn(4)
    # the horizons of the claim's space it declares (--instances search), else the given one
    horizons = (request.instances == "search" and declared_horizons(fn, horizon)) or [horizon]
    table_seed = int(s_table.generate_state(1, np.uint32)[0])
    eps = float(request.claim.eps)
    call = Call(fn, eps, getattr(fn, "__name__", "callable"),
                None if callable(request.algorithm) else ref)
    mech = CallableMechanism(call)
    mark_seed = np.random.SeedSequence(request.seed, spawn_key=(PROBE_KEY, 1))
    pairs, limits, tried = [], [], []
    for h in horizons:
        where = positions(call, model, list(means), h, table_seed, mark_seed)
        found_h = structured(model, list(means), h, table_seed, positions=where)
        pairs += found_h
        limits += [h] * len(found_h)
        if where is not None:
            every = len(MODELS[model].positions(MODELS[model].shape(len(means), h)))
            tried.append({"horizon": h, "positions": len(where), "of": every,
                          "candidates": len(found_h)})
    bar = tqdm(total=0, unit="run", unit_scale=True, leave=False,
               disable=None if request.progress else True, desc=f"audit {ref}")
    workers = request.workers or executor.default_workers()
    if returns_transcripts(call, inputs(pairs[0])[0], request.seed):
        # the registered algorithms' views of its transcripts, drawn by the worker processes
        sources = [TranscriptSource(call, inputs(pr), source_views(pr, len(means), h), pr, h,
                                    workers, bar)
                   for pr, h in zip(pairs, limits)]
        mech = TranscriptMechanism(call)
    else:
        sources = [MechanismSource(mech, *inputs(pr), pr.describe(), bar, workers)
                   for pr in pairs]
    same = reproducible(mech, sources[0].data[0], request.seed)
    if request.strict and not same:
        raise UserCodeError(f"{ref}: two runs with one seed differed: it draws randomness "
                            "other than rng (strict)")
    resolved = replace(request, algorithm=ref, claim=replace(request.claim,
                                                             delta=request.claim.delta or 0.0),
                       params={"model": model, "means": list(means), "horizon": horizon},
                       budget=replace(request.budget, runs=runs))
    cand = Candidates(sources, list(range(len(sources))), PILOT_BUDGET * runs, "blackbox")
    found = run_audit(resolved, cand, (s_pilot, s_meas), bar)
    u = found.used(cand.order)
    searched = {}
    if tried:    # the positions changed where a table has more than callables.POSITIONS
        first = found.rounds[0][1] if found.rounds else 0
        searched["positions"] = {
            "per_horizon": tried, "at_most": POSITIONS, "first_round_runs_per_side": first,
            "note": "positions: the first 2K rows, the last K rows before the runs' stopping "
                    "times on each base table, a geometric grid; every candidate (position x "
                    f"base table x value pattern) costs {first} runs per side in the first "
                    "pilot round, and fewer candidates go on"}
    if len(horizons) > 1:   # the instance behind the result: its finalist's horizon
        resolved = replace(resolved, params={**resolved.params, "horizon": limits[u]})
        searched = {"instances": {"declared": "horizon", "horizons": horizons,
                                  "candidates_per_horizon": [limits.count(h) for h in horizons],
                                  "audited_horizon": limits[u]}}
    coverage = replay(call, sources[u].data, limits[u], REPLAY_RUNS, s_replay)
    counted = ({"refused": "FILE.py:FUNCTION callables have no logged releases to tilt: their "
                           "(eps, delta) bound is the counted one", "runs": 0}
               if request.small_delta_runs or (request.small_delta_runs is None
                                               and request.claim.delta) else {})
    strat = ({"refused": "FILE.py:FUNCTION callables have no logged releases to stratify on: "
                         "their eps bound is the counted one", "runs": request.stratified_runs}
             if request.stratified_runs else {})
    return conclude(resolved, cand, found, Checks(coverage=coverage, reproducible=same,
                                                  search=searched, small_delta=counted,
                                                  stratified=strat,
                                                  command=command_line(request, same)), t0)


PROBE_KEY = 0x7E57     # spawn key of the probe run's seed: a stream no audit draws


def returns_transcripts(call: Call, data: Any, seed: int) -> bool:
    """Whether the callable returns a :class:`~dpaudit.simulation.transcript.Transcript`.

    One probe run, on a stream no audit draws, decides (every run must then return one).

    Args:
        call: the callable.
        data: an input.
        seed: the audit's seed.

    Returns:
        True for a Transcript.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(PROBE_KEY,)))
    with no_exit(call.name):
        return isinstance(call(rng, data), Transcript)


class TranscriptMechanism(CallableMechanism):
    """``mechanism(rng, data, n)`` running a callable that returns Transcripts: 63-bit hashes."""

    def _code(self, out: Any) -> int:
        actions, tau, rec, status = checked(out, self.__name__)
        b = np.concatenate([actions.astype(np.int64), [tau, rec, status]])
        return uuid.uuid5(uuid.NAMESPACE_OID, b.tobytes().hex()).int & _MASK
