"""Audits of generic mechanisms: ``mechanism(rng, data, n) -> n outputs`` on a fixed pair.

Any randomised algorithm fits, not only bandits: a Laplace or Gaussian mechanism, randomised
response, report-noisy-max, a plain-Python bandit run (:mod:`dpaudit.auditing.plugin` wraps one).
Outputs are drawn in chunks of :data:`CHUNK`, chunk i seeded by the i-th child of the sample's
SeedSequence (docs/method/kernels.md), turned into cells by a
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

import numpy as np
from tqdm import tqdm

from dpaudit.auditing.audit import Candidates, Checks, Source, conclude, draw_seed, run_audit
from dpaudit.core.request import (AuditRequest, Budget, Claim, DEFAULT_ALPHA, DEFAULT_BETA,
                                  DEFAULT_MARGIN)
from dpaudit.core.terms import Side
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import Counts
from dpaudit.statistics import features
from dpaudit.statistics.events import Event
from dpaudit.verdicts.result import AuditResult

DEFAULT_N = 10_000_000   # measurement samples per side at the last look
PILOT_FRACTION = 4       # pilot samples per side = n // 4 (half ranks and fits, half scores)
CHUNK = 1 << 20


def _counts(cells: np.ndarray, n: int) -> Counts:
    u, c = np.unique(cells, return_counts=True)
    return Counts(n_runs=n, views=np.array([1], np.int64), cells=[u], counts=[c.astype(np.int64)],
                  status=np.array([n, 0, 0], np.int64), tau_sum=0, rec=np.zeros(0, np.int64))


class MechanismSource(Source):
    """Samples of ``mechanism`` on the pair (d, d_prime), as cells of a fitted feature map."""

    def __init__(self, mechanism: Callable, d: Any, d_prime: Any, neighbours: dict,
                 bar: tqdm | None = None) -> None:
        """Runs of ``mechanism`` on (``d``, ``d_prime``), described by ``neighbours``."""
        self.mechanism, self.data = mechanism, (read_only(d), read_only(d_prime))
        self.nb, self.bar, self.feat = neighbours, bar, None

    def _outputs(self, side: Side, n: int, seed: np.random.SeedSequence):
        sizes = [CHUNK] * (n // CHUNK) + ([n % CHUNK] if n % CHUNK else [])
        for size, child in zip(sizes, seed.spawn(len(sizes))):
            y = features.as_outputs(
                self.mechanism(np.random.default_rng(child), self.data[side.index], size), size)
            if self.bar is not None:
                self.bar.update(size)
            yield y

    def draw(self, side: Side, n: int, seed: np.random.SeedSequence) -> Counts:
        """Counts of fresh outputs on one input, in the fitted cells.

        Args:
            side: the input (d or d′).
            n: outputs.
            seed: their seed.

        Returns:
            The :class:`~dpaudit.simulation.simulate.Counts` of one view.
        """
        cells = [self.feat.cells(y) for y in self._outputs(side, n, seed)]
        return _counts(np.concatenate(cells), n)

    def pilot(self, half: int, seed: np.random.SeedSequence) -> tuple:
        """The (rank, score) pilots; the cell map is fitted on the ranking half.

        Args:
            half: outputs per side and half.
            seed: the pilot's seed.

        Returns:
            ((counts on d, counts on d′) of the ranking half, the same of the scoring half).
        """
        s = seed.spawn(4)
        y_d, y_dp = (np.concatenate(list(self._outputs(side, half, s[side.index])))
                     for side in Side)
        self.feat = features.fit(y_d, y_dp)
        rank = (_counts(self.feat.cells(y_d), half), _counts(self.feat.cells(y_dp), half))
        score = (self.draw(Side.D, half, s[2]), self.draw(Side.D_PRIME, half, s[3]))
        return rank, score

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
                    beta: float = DEFAULT_BETA, margin: float = DEFAULT_MARGIN) -> AuditResult:
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
                           seed=seed, progress=progress)
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
    src = MechanismSource(mechanism, d, d_prime, nb, bar)
    resolved = replace(request, algorithm=label, params={},
                       claim=replace(request.claim, delta=request.claim.delta or 0.0),
                       budget=replace(request.budget, runs=n))
    cand = Candidates([src], [0], pilot, "pair")
    return conclude(resolved, cand, run_audit(resolved, cand, (s_pilot, s_meas), bar), Checks(),
                    t0)
