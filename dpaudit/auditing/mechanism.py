"""Audits of generic mechanisms: ``mechanism(rng, data, n) -> n outputs`` on a fixed pair.

Any randomised algorithm fits, not only bandits: a Laplace or Gaussian mechanism, randomised
response, report-noisy-max, a plain-Python bandit run (:mod:`dpaudit.auditing.plugin` wraps one).
Outputs are drawn in chunks of :data:`CHUNK`, chunk i seeded by the i-th child of the sample's
SeedSequence (docs/method/kernels.md), the chunks mapped on the executor's worker processes
(:mod:`dpaudit.core.executor`: the outputs do not depend on their number), turned into cells
by a
:class:`~dpaudit.statistics.features.Features` map
fitted on the pilot's ranking half, and audited by the shared pipeline of
:mod:`dpaudit.auditing.audit` (threshold and likelihood-ratio events, selection and measurement on
disjoint samples, early stopping, Bonferroni over everything measured).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import cloudpickle
import numpy as np
from tqdm import tqdm

from dpaudit.auditing.audit import Candidates, Checks, Source, conclude, draw_seed, run_audit
from dpaudit.core import executor
from dpaudit.core.request import (AuditRequest, Budget, Claim, DEFAULT_ALPHA, DEFAULT_BETA,
                                  DEFAULT_MARGIN)
from dpaudit.core.terms import Side
from dpaudit.errors import InputError, code_file, in_user_code
from dpaudit.simulation.simulate import Counts
from dpaudit.statistics import features
from dpaudit.statistics.events import Event
from dpaudit.verdicts.result import AuditResult

DEFAULT_N = 10_000_000   # measurement samples per side at the last look
PILOT_FRACTION = 4       # pilot samples per side = n // 4 (half ranks and fits, half scores)
CHUNK = 1 << 16          # outputs per chunk (a worker's task): ~0.7 s of a Python callable


def _counts(cells: np.ndarray, n: int) -> Counts:
    u, c = np.unique(cells, return_counts=True)
    return Counts(n_runs=n, views=np.array([1], np.int64), cells=[u], counts=[c.astype(np.int64)],
                  status=np.array([n, 0, 0], np.int64), tau_sum=0, rec=np.zeros(0, np.int64))


class MechanismSource(Source):
    """Samples of ``mechanism`` on the pair (d, d_prime), as cells of a fitted feature map."""

    def __init__(self, mechanism: Callable, d: Any, d_prime: Any, neighbours: dict,
                 bar: tqdm | None = None, workers: int = 1) -> None:
        """Runs of ``mechanism`` on (``d``, ``d_prime``) by ``workers`` processes."""
        self.mechanism, self.data = mechanism, (read_only(d), read_only(d_prime))
        self.nb, self.bar, self.feat, self.workers = neighbours, bar, None, workers
        self._payload: tuple | None = None     # :meth:`payload`

    @staticmethod
    def outputs_many(plans: list) -> list:
        """The outputs of many draws, their chunks mapped on the executor together.

        Each draw is cut in chunks of :data:`CHUNK` outputs, chunk i drawn from the i-th child
        of its seed (:func:`_draw`), so its outputs do not depend on ``workers``.

        Args:
            plans: (source, side, outputs, seed) tuples, sources of this class.

        Returns:
            The outputs of each plan (an array of (n,) or (n, m) numbers), in order.

        Raises:
            InputError: the mechanism returned outputs of the wrong shape or kind.
            UserCodeError: a worker's run of the user's code raised.
        """
        tasks, owner = [], []
        for j, (src, side, n, seed) in enumerate(plans):
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
        return [np.concatenate(parts) for parts in got]

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
        return [_counts(src.feat.cells(y), n) for (src, _, n, _), y in zip(plans, ys)]

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
        """The (rank, score) pilots; each source's cell map is fitted on its ranking half.

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
            src.feat = features.fit(ys[2 * j], ys[2 * j + 1])
        score = cls.draw_many([(src, side, half, k[2 + side.index])
                               for src, k in zip(srcs, s) for side in Side])
        return [((_counts(src.feat.cells(ys[2 * j]), half),
                  _counts(src.feat.cells(ys[2 * j + 1]), half)),
                 (score[2 * j], score[2 * j + 1])) for j, src in enumerate(srcs)]

    def orderings(self, v: int, keys: np.ndarray) -> list:
        """The natural orderings of ordered outputs (threshold events); none for hashes.

        Args:
            v: the view's index.
            keys: the cells (sorted uint64).

        Returns:
            (name, permutation of ``keys``) pairs.
        """
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
        return {"text": f"{self.feat.describe(ev.cells)} (more likely under "
                        f"{ev.numerator.label}; {self.feat.kind} output)", "view": None}

    def cell_text(self, v: int, key: int) -> str:
        """One cell in words.

        Args:
            v: the view's index (unused: a mechanism has one view).
            key: the cell.

        Returns:
            Its value or interval.
        """
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


def _data(x: Any, name: str) -> np.ndarray:
    try:
        return np.asarray(x)
    except (TypeError, ValueError):
        raise InputError(f"{name} is not array-like")


def audit_mechanism(mechanism: Callable, d: Any, d_prime: Any, *, eps: float, delta: float = 0.0,
                    alpha: float = DEFAULT_ALPHA, n: int | None = None, seed: int | None = None,
                    name: str | None = None, progress: bool = False,
                    beta: float = DEFAULT_BETA, margin: float = DEFAULT_MARGIN,
                    workers: int | None = None) -> AuditResult:
    """Audit a mechanism against the claim (ε, δ)-DP on neighbouring inputs.

    A keyword wrapper of :func:`audit_pair`.

    Args:
        mechanism: ``mechanism(rng, data, n)`` returns ``n`` independent outputs for ``data``
            using only the ``numpy.random.Generator`` ``rng``: an array of shape (n,) or
            (n, m), integer or boolean (discrete) or float (continuous; floats with at most
            1024 distinct values are treated as discrete).
        d: the first input, passed to ``mechanism`` unchanged (arrays as read-only copies).
        d_prime: its neighbour; must differ from ``d``.
        eps: the claimed ε, in [0.001, 100].
        delta: the claim's δ in [0, 1).
        alpha: the probability that a violation is a false alarm.
        n: measurement samples per side at the last look (default 10⁷; the audit stops
            earlier once the verdict is settled). The pilot draws ``n // 4`` more per side.
        seed: the root seed; drawn and reported when None.
        name: the result's algorithm name (default: the mechanism's ``__name__``).
        progress: show progress bars on stderr.
        beta: ``eps_ub`` holds with confidence 1 − β.
        margin: a pass needs ``eps_ub`` ≤ (1 + margin)·ε (:mod:`dpaudit.verdicts.verdict`).
        workers: processes drawing the outputs, :data:`CHUNK` at a time (None: one, this
            process: a vectorised mechanism is fastest there; a mechanism that loops in Python
            gains from more). The result is the same whatever their number.

    Returns:
        :class:`~dpaudit.verdicts.result.AuditResult`: ``.verdict``, ``.eps_lb``, ``.eps_hat``,
        ``.alpha``, ``.eps_ub`` and ``.to_dict()``, the JSON of
        docs/reference/verdict-json.md.

    Raises:
        InputError: a value out of range, identical inputs, inputs of different shapes.
        UserCodeError: the mechanism raised, or returned outputs an audit cannot use.
    """
    request = AuditRequest(mechanism, Claim(eps, delta),
                           budget=Budget(n, alpha, beta, margin, finalists=1, runs_name="n"),
                           seed=seed, progress=progress, workers=workers)
    return audit_pair(request, d, d_prime, name)


def audit_pair(request: AuditRequest, d: Any, d_prime: Any,
               name: str | None = None) -> AuditResult:
    """Audit a mechanism on a pair of neighbouring inputs, as :func:`audit_mechanism` describes.

    Args:
        request: the audit; ``request.algorithm`` is the mechanism.
        d: the first input.
        d_prime: its neighbour.
        name: the result's algorithm name (default: the mechanism's ``__name__``).

    Returns:
        The :class:`~dpaudit.verdicts.result.AuditResult`.

    Raises:
        InputError: bad input, or identical inputs.
    """
    t0 = time.perf_counter()
    mechanism = request.algorithm
    if not callable(mechanism):
        raise InputError(f"mechanism={mechanism!r} is not callable")
    n = int(request.budget.runs or DEFAULT_N)
    pilot = max(n // PILOT_FRACTION, 2000)
    request = draw_seed(request)
    s_pilot, s_meas = np.random.SeedSequence(request.seed).spawn(2)
    d, d_prime = _data(d, "d"), _data(d_prime, "d_prime")
    if d.shape == d_prime.shape and np.array_equal(d, d_prime):
        raise InputError("d and d_prime are identical: neighbouring inputs must differ (an "
                         "audit of identical inputs could never fail)")
    label = name or getattr(mechanism, "__name__", type(mechanism).__name__)
    nb = {"model": "mechanism", "d": d.tolist(), "d_prime": d_prime.tolist()}
    bar = tqdm(total=2 * pilot, unit="sample", unit_scale=True, leave=False,
               disable=None if request.progress else True, desc=f"audit {label}")
    src = MechanismSource(mechanism, d, d_prime, nb, bar, request.workers or 1)
    resolved = replace(request, algorithm=label, params={},
                       claim=replace(request.claim, delta=request.claim.delta or 0.0),
                       budget=replace(request.budget, runs=n))
    cand = Candidates([src], [0], pilot, "pair")
    return conclude(resolved, cand, run_audit(resolved, cand, (s_pilot, s_meas), bar), Checks(),
                    t0)
