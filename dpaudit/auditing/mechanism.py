"""Audits of generic mechanisms: ``mechanism(rng, data, n) -> n outputs`` on neighbouring inputs.

Any randomised algorithm fits, not only bandits: a Laplace or Gaussian mechanism, randomised
response, report-noisy-max, a sparse vector, a plain-Python bandit run
(:mod:`dpaudit.auditing.plugin` wraps one). It is audited on one pair (d, d′), on a list of
pairs, or on the input patterns of :mod:`dpaudit.data.patterns` around a base input
(``pairs="search"``); several pairs are drawn in one pilot round of the shared pipeline, each
input as often as one pair's pilot draws it and a third more, the pair measured chosen on that
third.
Outputs are drawn in chunks of :data:`CHUNK`, chunk i seeded by the i-th child of the sample's
SeedSequence (docs/method/kernels.md), the chunks mapped on the executor's worker processes
(:mod:`dpaudit.core.executor`: the outputs do not depend on their number), and turned into the
cells of two views, both fitted on the pilot's ranking half: the outputs' own cells
(:class:`~dpaudit.statistics.features.Features`: exact values, quantile bins or a grid) and, for
outputs of several coordinates or given ``features=``, the bins of a classifier's score
(:mod:`dpaudit.statistics.learned`). The shared pipeline of :mod:`dpaudit.auditing.audit` does the
rest (threshold and likelihood-ratio events, selection and measurement on disjoint samples,
early stopping, Bonferroni over everything measured).
"""
from __future__ import annotations

import inspect
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import cloudpickle
import numpy as np
from tqdm import tqdm

from dpaudit.auditing.audit import Candidates, Checks, Source, conclude, draw_seed, run_audit
from dpaudit.core import executor
from dpaudit.core.request import (AuditRequest, Budget, Claim, DEFAULT_ALPHA, DEFAULT_BETA,
                                  DEFAULT_MARGIN)
from dpaudit.core.terms import Side
from dpaudit.data.patterns import input_patterns
from dpaudit.errors import InputError, UserCodeError, code_file, in_user_code
from dpaudit.simulation.simulate import Counts
from dpaudit.statistics import features, learned
from dpaudit.statistics.events import Event
from dpaudit.verdicts.result import AuditResult

DEFAULT_N = 10_000_000   # measurement samples per side at the last look
PILOT_FRACTION = 4       # pilot samples per side = n // 4 (half ranks and fits, half scores)
# several pairs: one round, each distinct input drawn 3/2 · n // 4 times (a third more, on which
# the pairs' events are validated and the best pair chosen). Successive halving over StatDP's 8
# patterns (n // 2 per side in all, rounds of 8, 2 and 1 pairs) chose on ~2·10^4 runs per pattern
# in its first round: the coded sparse vector (svt3) at n = 2·10^6 kept "one above rest below"
# (0.75 ε) at seed 1 and was a violation at 4 seeds of 6; in one round, at 6 of 6
# (docs/method/calibration.md)
PAIRS_PILOT_SHARE = 1.5
CHUNK = 1 << 16          # outputs per chunk (a worker's task): ~0.7 s of a Python callable
MAX_PAIRS = 64           # pairs one audit takes at most
CELLS, SCORE = 0, 1      # the views: the outputs' own cells, the classifier's score bins


def _counts(views: list, n: int) -> Counts:
    """The counts of ``n`` outputs whose cells in each view are ``views[v]``."""
    uc = [np.unique(cells, return_counts=True) for cells in views]
    return Counts(n_runs=n, views=np.arange(1, len(views) + 1, dtype=np.int64),
                  cells=[u for u, _ in uc], counts=[c.astype(np.int64) for _, c in uc],
                  status=np.array([n, 0, 0], np.int64), tau_sum=0, rec=np.zeros(0, np.int64))


class MechanismSource(Source):
    """Samples of ``mechanism`` on the pair (d, d_prime), as cells of a fitted feature map."""

    def __init__(self, mechanism: Callable, d: Any, d_prime: Any, neighbours: dict,
                 bar: tqdm | None = None, workers: int = 1) -> None:
        """Runs of ``mechanism`` on (``d``, ``d_prime``) by ``workers`` processes."""
        self.mechanism, self.data = mechanism, (read_only(d), read_only(d_prime))
        self.nb, self.bar, self.feat, self.workers = neighbours, bar, None, workers
        self.learn: Callable | bool | None = None   # features= hook; True: the default ones
        self.score: learned.Learned | None = None   # the fitted classifier's cells
        self._payload: tuple | None = None     # :meth:`payload`

    def views(self, y: np.ndarray) -> list:
        """The cells of outputs in each view: their own, and the classifier score's if learned.

        Args:
            y: outputs, shape (n,) or (n, m).

        Returns:
            One uint64 array of shape (n,) per view (:data:`CELLS`, then :data:`SCORE`).
        """
        own = self.feat.cells(y)
        return [own] if self.score is None else [own, self.score.cells(y)]

    @staticmethod
    def outputs_many(plans: list) -> list:
        """The outputs of many draws, their chunks mapped on the executor together.

        Each draw is cut in chunks of :data:`CHUNK` outputs, chunk i drawn from the i-th child
        of its seed (:func:`_draw`), so its outputs do not depend on ``workers``. Plans of one
        mechanism on one input object with the same runs and seed are drawn once (the shared
        d-side runs of a search round, :attr:`dpaudit.auditing.audit.Candidates.same_d`).

        Args:
            plans: (source, side, outputs, seed) tuples, sources of this class.

        Returns:
            The outputs of each plan (an array of (n,) or (n, m) numbers), in order.

        Raises:
            InputError: the mechanism returned outputs of the wrong shape or kind.
            UserCodeError: a worker's run of the user's code raised.
        """
        tasks, owner, same, drawn = [], [], {}, []
        for j, (src, side, n, seed) in enumerate(plans):
            key = (id(src.mechanism), id(src.data[side.index]), n, seed.entropy,
                   tuple(seed.spawn_key))
            drawn.append(same.setdefault(key, j))
            if drawn[j] != j:
                continue
            sizes = [CHUNK] * (n // CHUNK) + ([n % CHUNK] if n % CHUNK else [])
            tasks += [(src, src.data[side.index], size, child)
                      for size, child in zip(sizes, seed.spawn(len(sizes)))]
            owner += [j] * len(sizes)
        first = plans[0][0]
        if first.workers > 1 and len(tasks) > 1:
            chunks = executor.map_tasks(_chunk_job, [(src.payload(), *rest)
                                                     for src, *rest in tasks], first.workers)
        else:
            chunks = (_draw(src.mechanism, *rest) for src, *rest in tasks)
        got: list[list] = [[] for _ in plans]
        for j, (_, _, size, _), y in zip(owner, tasks, chunks):
            got[j].append(y)
            if first.bar is not None:
                first.bar.update(size)
        ys = {j: np.concatenate(got[j]) for j in set(drawn)}
        return [ys[j] for j in drawn]

    def payload(self) -> tuple[bytes, str | None]:
        """(the mechanism pickled for a worker process, the file it comes from or None).

        Lambdas, closures and the user's modules go by value
        (:func:`dpaudit.core.executor.by_value`); the file is what an error in their code names (:func:`dpaudit.errors.in_user_code`).
        """
        if self._payload is None:
            self._payload = (executor.by_value(self.mechanism), code_file(self.mechanism))
        return self._payload

    @staticmethod
    def draw_many(plans: list) -> list:
        """Counts of fresh outputs of many draws in their sources' fitted cells.

        Args:
            plans: (source, side, outputs, seed) tuples, sources of this class.

        Returns:
            The :class:`~dpaudit.simulation.simulate.Counts` (one view) of each plan.
        """
        ys = MechanismSource.outputs_many(plans)
        return [_counts(src.views(y), n) for (src, _, n, _), y in zip(plans, ys)]

    def draw(self, side: Side, n: int, seed: np.random.SeedSequence) -> Counts:
        """Counts of fresh outputs on one input, in the fitted cells.

        Args:
            side: the input (d or d′).
            n: outputs.
            seed: their seed.

        Returns:
            The :class:`~dpaudit.simulation.simulate.Counts` of one view.
        """
        return self.draw_many([(self, side, n, seed)])[0]

    @classmethod
    def pilot_many(cls, srcs: list, half: int, seeds: list) -> list:
        """The (rank, score) pilots; each source's cell maps are fitted on its ranking half.

        The classifier of :mod:`dpaudit.statistics.learned` is fitted too when the source has
        ``features=`` or its outputs have several coordinates.

        Seeded as :meth:`Source.pilot` seeds one (``seed.spawn(4)``); the ranking halves of
        every source are drawn together, then the scoring halves.

        Args:
            srcs: the sources.
            half: outputs per side and half.
            seeds: their pilots' seeds.

        Returns:
            ((counts on d, counts on d′) of the ranking half, the same of the scoring half)
            for each source, in order.
        """
        s = [sd.spawn(4) for sd in seeds]
        ys = cls.outputs_many([(src, side, half, k[side.index])
                               for src, k in zip(srcs, s) for side in Side])
        for j, src in enumerate(srcs):
            y_d, y_dp = ys[2 * j], ys[2 * j + 1]
            src.feat = features.fit(y_d, y_dp)
            several = y_d.ndim == 2 and y_d.shape[1] > 1
            hook = src.learn if callable(src.learn) else None
            src.score = (learned.fit(y_d, y_dp, hook) if hook is not None or
                         (several and src.learn is not False) else None)
        score = cls.draw_many([(src, side, half, k[2 + side.index])
                               for src, k in zip(srcs, s) for side in Side])
        return [((_counts(src.views(ys[2 * j]), half),
                  _counts(src.views(ys[2 * j + 1]), half)),
                 (score[2 * j], score[2 * j + 1])) for j, src in enumerate(srcs)]

    def orderings(self, v: int, keys: np.ndarray) -> list:
        """The natural orderings of ordered outputs (threshold events); none for hashes.

        Args:
            v: the view's index.
            keys: the cells (sorted uint64).

        Returns:
            (name, permutation of ``keys``) pairs.
        """
        if v == SCORE:
            return self.score.orderings(keys)
        if getattr(self.mechanism, "hashed", False):   # hashed transcripts have no order
            return []
        return self.feat.orderings(v, keys)

    def neighbours(self) -> dict:
        """The pair's JSON."""
        return self.nb

    def describe(self, ev: Event) -> dict:
        """The event in words.

        Args:
            ev: the event.

        Returns:
            {"text": the cells in words, "view": None}.
        """
        if ev.view_index == SCORE:
            return {"text": f"{self.score.describe(ev.cells)} (more likely under "
                            f"{ev.numerator.label})", "view": None, "learned": True}
        return {"text": f"{self.feat.describe(ev.cells)} (more likely under "
                        f"{ev.numerator.label}; {self.feat.kind} output)", "view": None}

    def cell_text(self, v: int, key: int) -> str:
        """One cell in words.

        Args:
            v: the view's index (:data:`CELLS` or :data:`SCORE`).
            key: the cell.

        Returns:
            Its value or interval.
        """
        if v == SCORE:
            return self.score.bins.cell_text(key).replace("y in", "s(y) in", 1)
        return self.feat.cell_text(key)


def _draw(mechanism: Callable, data: Any, n: int, seed: np.random.SeedSequence) -> np.ndarray:
    """One chunk: ``n`` outputs of ``mechanism`` on ``data`` from a generator seeded by ``seed``."""
    return features.as_outputs(mechanism(np.random.default_rng(seed), data, n), n)


_LOADED: dict[bytes, Callable] = {}     # pickled mechanism -> mechanism, in each worker process


def _chunk_job(task: tuple) -> np.ndarray:
    """:func:`_draw` in a worker process, of (:meth:`MechanismSource.payload`, data, n, seed).

    An exception in the user's code comes back as one line naming its file and line.
    """
    (pickled, origin), data, n, seed = task
    if pickled not in _LOADED:
        _LOADED[pickled] = cloudpickle.loads(pickled)
    with in_user_code(origin):
        return _draw(_LOADED[pickled], data, n, seed)


def read_only(x: Any) -> Any:
    """An array input as a read-only copy.

    A mechanism or callable that writes to its input then raises ValueError in its own code
    instead of changing the pair it is audited on.

    Args:
        x: an input.

    Returns:
        A read-only copy of an array; numbers and other values as they are.
    """
    if not isinstance(x, np.ndarray):
        return x
    a = np.array(x, copy=True)
    a.flags.writeable = False
    return a


def check_signature(fn: Callable, name: str, expected: str = "a function (rng, data, eps)") -> None:
    """Check that ``fn`` can be called with three positional arguments.

    A callable whose signature Python cannot inspect is let through: its call will tell.

    Args:
        fn: the callable.
        name: its name, for the message.
        expected: the call it must accept, for the message.

    Raises:
        InputError: ``fn`` cannot take three positional arguments.
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(None, None, None)
    except TypeError:
        raise InputError(f"{name}: takes {sig}: expected {expected}") from None


REPRO_RUNS = 256       # outputs drawn twice with one seed by :func:`reproducible`
REPRO_KEY = 0x5EED     # spawn key of that seed: a stream no audit draws


def reproducible(mechanism: Callable, data: Any, seed: int) -> bool:
    """Whether a mechanism's outputs are reproducible from their seed.

    :data:`REPRO_RUNS` outputs come out the same twice from generators with one seed when the
    mechanism draws its randomness from ``rng`` alone. Global ``np.random`` or ``random`` make
    them differ, unless every output agrees by chance: with probability (1 − q)^256 when two
    draws of an output differ with probability q (a fair coin: q = 1/2; an output that is 1
    with probability 0.07: q ≈ 0.13, 8e-16).

    Args:
        mechanism: ``mechanism(rng, data, n)``.
        data: the input its outputs read.
        seed: the seed of both draws.

    Returns:
        True when both draws agree.
    """
    ss = np.random.SeedSequence(seed, spawn_key=(REPRO_KEY,))
    return bool(np.array_equal(_draw(mechanism, data, REPRO_RUNS, ss),
                               _draw(mechanism, data, REPRO_RUNS, ss)))


@dataclass(frozen=True)
class Inputs:
    """What a mechanism is audited on, as :func:`audit_mechanism` takes it.

    Attributes:
        d: the first input of one pair, or the base input of ``pairs="search"``.
        d_prime: its neighbour (one pair only).
        pairs: None (the pair (d, d_prime)), a list or iterable of (d, d′) pairs, or
            ``"search"``.
        sensitivity: how far each entry of a searched neighbour moves.
        changes: which entries of a searched neighbour move: ``"each"`` or ``"one"``.
        features: the classifier's features of the outputs, or None (the default ones).
        name: the result's algorithm name.
    """

    d: Any = None
    d_prime: Any = None
    pairs: Any = None
    sensitivity: float = 1.0
    changes: str = "each"
    features: Callable | None = None
    name: str | None = None

    def resolved(self) -> list[tuple[str | None, np.ndarray, np.ndarray]]:
        """The pairs to audit: (pattern name or None, d, d′) each, checked.

        Raises:
            InputError: no pair, both a pair and ``pairs``, more than :data:`MAX_PAIRS`, an item
                that is not a pair, identical inputs, inputs that are not array-like.
        """
        if isinstance(self.pairs, str):
            if self.pairs != "search":
                raise InputError(f"pairs={self.pairs!r} is not valid: expected 'search' or a "
                                 "list of (d, d_prime) pairs")
            if self.d is None or self.d_prime is not None:
                raise InputError("pairs='search' needs d, the base input whose entries it "
                                 "moves, and no d_prime")
            return input_patterns(self.d, self.sensitivity, self.changes)
        if self.pairs is None:
            if self.d is None or self.d_prime is None:
                raise InputError("give d and d_prime, or pairs=[(d, d_prime), ...], or "
                                 "pairs='search' with d the base input")
            return [_pair(None, self.d, self.d_prime, "d and d_prime")]
        if self.d is not None or self.d_prime is not None:
            raise InputError("give either d and d_prime or pairs, not both")
        try:
            items = list(itertools.islice(iter(self.pairs), MAX_PAIRS + 1))
        except TypeError:
            raise InputError(f"pairs={self.pairs!r} is not valid: expected 'search' or a list "
                             "of (d, d_prime) pairs") from None
        if not 1 <= len(items) <= MAX_PAIRS:
            many = len(items) if len(items) <= MAX_PAIRS else f"more than {MAX_PAIRS}"
            raise InputError(f"pairs has {many} pairs: expected 1 to {MAX_PAIRS}")
        out = []
        for i, item in enumerate(items):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise InputError(f"pairs[{i}] is not a (d, d_prime) pair")
            out.append(_pair(None, *item, f"pairs[{i}]"))
        return out


def _pair(name: str | None, d: Any, d_prime: Any, what: str) -> tuple:
    """(name, d, d′) as arrays; identical inputs are refused."""
    try:
        a, b = np.asarray(d), np.asarray(d_prime)
    except (TypeError, ValueError):
        raise InputError(f"{what}: an input is not array-like") from None
    if a.shape == b.shape and np.array_equal(a, b):
        raise InputError(f"{what}: d and d_prime are identical: neighbouring inputs must "
                         "differ (an audit of identical inputs could never fail)")
    return name, a, b


def audit_mechanism(mechanism: Callable, d: Any = None, d_prime: Any = None, *, eps: float,
                    delta: float = 0.0, pairs: Any = None, sensitivity: float = 1.0,
                    changes: str = "each", features: Callable | None = None,
                    alpha: float = DEFAULT_ALPHA, n: int | None = None,
                    seed: int | None = None, name: str | None = None,
                    progress: bool = False, beta: float = DEFAULT_BETA,
                    margin: float = DEFAULT_MARGIN, workers: int | None = None,
                    strict: bool = False, early_stop: bool = True) -> AuditResult:
    """Audit a mechanism against the claim (ε, δ)-DP on neighbouring inputs.

    A keyword wrapper of :func:`audit_inputs`. The inputs are one pair (``d``, ``d_prime``), a
    list of pairs (``pairs=[(d, d′), ...]``) or the input patterns around ``d``
    (``pairs="search"``, :mod:`dpaudit.data.patterns`); several pairs share the pilot budget
    in one round and the best is measured (the module doc of
    :mod:`dpaudit.auditing.audit`: selection on the pilot only, so α needs no split).

    Args:
        mechanism: ``mechanism(rng, data, n)`` returns ``n`` independent outputs for ``data``
            using only the ``numpy.random.Generator`` ``rng``: an array of shape (n,) or
            (n, m), integer or boolean (discrete) or float (continuous; floats with at most
            1024 distinct values are treated as discrete).
        d: the first input, passed to ``mechanism`` unchanged (arrays as read-only copies);
            with ``pairs="search"``, the base input (a vector of query answers).
        d_prime: its neighbour; must differ from ``d``.
        eps: the claimed ε, in [0.001, 100].
        delta: the claim's δ in [0, 1).
        pairs: a list or iterable of at most :data:`MAX_PAIRS` (d, d′) pairs, or ``"search"``.
        sensitivity: ``pairs="search"``: how far each entry of a neighbour moves (> 0).
        changes: ``pairs="search"``: ``"each"``, every entry of the input may move (query
            answers of sensitivity ``sensitivity`` each: all eight patterns), or ``"one"``,
            one entry moves (a histogram: "one above" and "one below").
        features: ``features(y)`` maps outputs (n, m) to classifier features (n, k) for the
            learned events (:mod:`dpaudit.statistics.learned`; default: code indicators and
            values, used for outputs of several coordinates).
        alpha: the probability that a violation is a false alarm.
        n: measurement samples per side at the last look (default 10⁷; the audit stops
            earlier once the verdict is settled). The pilot draws ``n // 4`` more per side
            for one pair; for several, ``3/2 · n // 4`` outputs of each distinct input (pairs
            with one d share its runs), so memory and time grow with the pairs.
        seed: the root seed; drawn and reported when None.
        name: the result's algorithm name (default: the mechanism's ``__name__``).
        progress: show progress bars on stderr.
        beta: ``eps_ub`` holds with confidence 1 − β.
        margin: a pass needs ``eps_ub`` ≤ (1 + margin)·ε (:mod:`dpaudit.verdicts.verdict`).
        workers: processes drawing the outputs, :data:`CHUNK` at a time (None: one, this
            process: a vectorised mechanism is fastest there; a mechanism that loops in Python
            gains from more). The result is the same whatever their number.
        strict: a mechanism whose outputs are not reproducible from ``rng`` (it draws from
            global ``np.random``, say) is refused instead of audited.
        early_stop: stop the measurement once the verdict is settled; False: measure every
            look, the tightest ``eps_lb`` the ``n`` runs give (a tightness figure:
            ``benchmarks/mechanisms.py``).

    Returns:
        :class:`~dpaudit.verdicts.result.AuditResult`: ``.verdict``, ``.eps_lb``, ``.eps_hat``,
        ``.alpha``, ``.eps_ub``, ``.reproducible`` and ``.to_dict()``, the JSON of
        docs/reference/verdict-json.md.

    Raises:
        InputError: a value out of range, identical inputs, a mechanism that cannot be called
            as ``mechanism(rng, data, n)``, bad ``pairs``.
        UserCodeError: the mechanism raised, returned outputs an audit cannot use or, under
            ``strict``, is not reproducible.
    """
    request = AuditRequest(mechanism, Claim(eps, delta),
                           budget=Budget(n, alpha, beta, margin, finalists=1, runs_name="n",
                                         early_stop=early_stop),
                           seed=seed, progress=progress, workers=workers, strict=strict)
    return audit_inputs(request, Inputs(d, d_prime, pairs, sensitivity, changes, features, name))


def audit_inputs(request: AuditRequest, inputs: Inputs) -> AuditResult:
    """Audit a mechanism on neighbouring inputs, as :func:`audit_mechanism` describes.

    Args:
        request: the audit; ``request.algorithm`` is the mechanism.
        inputs: the pairs, and how their outputs are featurised.

    Returns:
        The :class:`~dpaudit.verdicts.result.AuditResult`.

    Raises:
        InputError: bad input, or identical inputs.
        UserCodeError: the mechanism failed or, under ``strict``, is not reproducible.
    """
    t0 = time.perf_counter()
    mechanism = request.algorithm
    if not callable(mechanism):
        raise InputError(f"mechanism={mechanism!r} is not callable")
    label = inputs.name or getattr(mechanism, "__name__", type(mechanism).__name__)
    check_signature(mechanism, label, "mechanism(rng, data, n)")
    if inputs.features is not None and not callable(inputs.features):
        raise InputError(f"features={inputs.features!r} is not callable: expected features(y) "
                         "-> an (n, k) array")
    pairs = inputs.resolved()
    n = int(request.budget.runs or DEFAULT_N)
    many = len(pairs) > 1
    same_d = [next(j for j, (_, e, _) in enumerate(pairs) if e.shape == d.shape and
                   np.array_equal(e, d)) for _, d, _ in pairs]
    per_input = int(n // PILOT_FRACTION * (PAIRS_PILOT_SHARE if many else 1))
    # runs per pair: 2 · pilot / (pairs + distinct d), the d sides shared (run_audit)
    pilot = max(per_input * (len(pairs) + len(set(same_d))) // 2, 2000)
    request = draw_seed(request)
    s_pilot, s_meas = np.random.SeedSequence(request.seed).spawn(2)
    bar = tqdm(total=2 * pilot, unit="sample", unit_scale=True, leave=False,
               disable=None if request.progress else True, desc=f"audit {label}")
    srcs = []
    for pattern, d, d_prime in pairs:
        nb = {"model": "mechanism", "d": d.tolist(), "d_prime": d_prime.tolist()}
        if pattern is not None:
            nb["pattern"] = pattern
        srcs.append(MechanismSource(mechanism, d, d_prime, nb, bar, request.workers or 1))
        srcs[-1].learn = inputs.features
    for src, j in zip(srcs, same_d):    # one d object per input: its runs are shared
        src.data = (srcs[j].data[0], src.data[1])
    same = reproducible(mechanism, srcs[0].data[0], request.seed)
    if request.strict and not same:
        raise UserCodeError(f"{label}: two draws with one seed differed: it draws randomness "
                            "other than rng (strict)")
    resolved = replace(request, algorithm=label, params={},
                       claim=replace(request.claim, delta=request.claim.delta or 0.0),
                       budget=replace(request.budget, runs=n))
    cand = Candidates(srcs, list(range(len(srcs))), pilot, "pairs" if many else "pair",
                      last_round=1, validate_rounds=True, median_fallback=True,
                      measure_candidates=True, eta=None,
                      same_d=same_d if len(set(same_d)) < len(same_d) else None)
    searched = {}
    if many:
        searched["pairs"] = {
            "given": "search" if isinstance(inputs.pairs, str) else "list",
            "count": len(srcs), **({"sensitivity": float(inputs.sensitivity),
                                    "changes": inputs.changes}
                                   if isinstance(inputs.pairs, str) else {}),
            "note": "every input's pilot runs are shared by its pairs (one round); the "
                    "measured pair was chosen on pilot runs only"}
    return conclude(resolved, cand, run_audit(resolved, cand, (s_pilot, s_meas), bar),
                    Checks(reproducible=same, search=searched), t0)
