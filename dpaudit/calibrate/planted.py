"""A synthetic algorithm with a planted worst position: calibration of the neighbour search.

``planted`` (``user`` tables, T rows, K = 2 arms) reads one row per round and releases it by
randomised response, the next action being the released bit:

    a_0 = 0;  at round t: x_t = d[t, a_t],  y_t = RR_{s_t}(x_t),  a_{t+1} = y_t;  â = y_{T−1},

with P(y = 1 | x) = (1 + x·(e^s − 1))/(1 + e^s) (release family RANDOMISED_RESPONSE of
:mod:`dpaudit.simulation.simulate`). Round ``planted`` uses s = ``eps_planted``, every other round
s = ``eps_other``. Changing row t (0 → 1 on both arms) changes only y_t's distribution, and the
transcript reveals y_t exactly (the next action, or â), while everything after it depends on
the pair only through y_t: row t leaks exactly s_t, so exactly one of the T positions leaks
``eps_planted`` and the others ``eps_other``. The kernel follows the kernel contract (release
log, frozen replay), so both the white-box screen and the black-box rounds apply.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from dpaudit.auditing.whitebox import pair_frozen, pair_next, pair_record
from dpaudit.algorithms.space import Scale, proof, theorem
from dpaudit.algorithms.spec import AlgorithmSpec, Param, Prepared
from dpaudit.core.terms import PrivacyModel
from dpaudit.simulation.simulate import (RANDOMISED_RESPONSE, STOPPED, TRUNCATED, batch_buffers,
                                         batch_record)

S_PLANTED, S_OTHER, ROW = range(3)


@nb.njit(cache=True)
def planted_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                   theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                   releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of ``planted`` (module doc).

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    T = table.shape[0]
    a = 0
    for t in range(T):
        if t >= limit:
            return t, -1, TRUNCATED, t
        x = table[t, a]
        if t < actions.shape[0]:
            actions[t] = a
        s = theta[S_PLANTED] if t == theta[ROW] else theta[S_OTHER]
        u = rng.random()                       # always drawn (kernel contract)
        y = 1.0 if u < (1.0 + x * math.expm1(s)) / (1.0 + math.exp(s)) else 0.0
        if t < frozen.shape[0]:
            y = frozen[t]
        if t < releases.shape[0]:
            r = releases[t]
            r[0], r[1], r[2], r[3] = t + 1, a, 0, 1
            r[4], r[5], r[6], r[7] = x, y, s, RANDOMISED_RESPONSE
        a = int(y)
    return T, a, STOPPED, T


@nb.njit(cache=True, nogil=True)
def planted_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                  theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
                  keep: int) -> tuple:
    """Cached batch loop of :func:`planted_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = planted_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


CONSTANT, HORIZON = range(2)


@nb.njit(cache=True)
def corner_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                  theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                  releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of ``corner`` (:func:`corner_spec`).

    Every round draws a fair bit u and plays it next, except that where ``constant`` ×
    ``horizon`` < 1 the first reward (row 0, arm 0) is played in round 1 instead: a raw read
    that only a short horizon with a small constant exposes. No release log.

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    T = table.shape[0]
    leaks = theta[CONSTANT] * theta[HORIZON] < 1.0
    a = 0
    for t in range(T):
        if t >= limit:
            return t, -1, TRUNCATED, 0
        if t < actions.shape[0]:
            actions[t] = a
        x = table[t, a]
        u = rng.random()                       # always drawn: coupled runs stay in step
        a = int(x > 0.5) if (t == 0 and leaks) else int(u < 0.5)
    return T, a, STOPPED, 0


@nb.njit(cache=True, nogil=True)
def corner_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                 theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
                 keep: int) -> tuple:
    """Cached batch loop of :func:`corner_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = corner_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


@nb.njit(cache=True, nogil=True)
def planted_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
                  table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
                  limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`planted_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = planted_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                           pair_frozen(work, 0))
        r = planted_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                           pair_frozen(work, o[3]))
        pair_record(work, o, r)

@nb.njit(cache=True, nogil=True)
def corner_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
                 table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
                 limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`corner_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = corner_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                          pair_frozen(work, 0))
        r = corner_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                          pair_frozen(work, o[3]))
        pair_record(work, o, r)


# the cached batch loop of each kernel (dpaudit.simulation.simulate.run_batch reads it)
BATCH_LOOPS = {planted_kernel: planted_batch, corner_kernel: corner_batch}
# the cached run/replay loop of each kernel (dpaudit.auditing.whitebox.pair_body)
PAIR_LOOPS = {planted_kernel: planted_pairs, corner_kernel: corner_pairs}


def planted_spec(row: int, *, eps_planted: float = 1.0, eps_other: float = 0.25,
                 horizon: int = 256) -> AlgorithmSpec:
    """An (unregistered) spec of ``planted`` with the worst position at ``row``.

    Args:
        row: the planted row (0 ≤ row < horizon).
        eps_planted: its loss.
        eps_other: every other row's loss.
        horizon: rows.

    Returns:
        The :class:`~dpaudit.algorithms.spec.AlgorithmSpec`.

    Raises:
        ValueError: a row outside the table.
    """
    if not 0 <= row < horizon:
        raise ValueError(f"row={row} is out of range: expected 0 <= row < {horizon}")

    def prepare(eps: float, p: dict) -> Prepared:
        return Prepared(theta=np.array([eps_planted, eps_other, float(row)]), aux=np.zeros(0),
                        means=np.asarray(p["means"], dtype=np.float64))

    return AlgorithmSpec(
        name="planted", title="planted worst position (synthetic)", paper="dpaudit calibration",
        model=PrivacyModel.USER, private=True, kernel=planted_kernel,
        params=(Param("means", (0.9, 0.5), "floats", "instance (base tables)", low=0.0,
                      high=1.0, min_len=2),
                Param("horizon", horizon, "int", "table rows", low=1, high=1 << 20)),
        prepare=prepare, structure=lambda p: [(0, "first row")],
        audit_horizon=lambda p: p["horizon"],
        description=f"row {row} leaks {eps_planted:g}, every other row {eps_other:g}")


def _searched_params(horizon: int, constant: float, means_claim: object) -> tuple:
    """The parameters of the synthetic specs whose claim space is searched.

    The parameters of the synthetic specs whose claim space is searched: two-arm means
    (a dimension when ``means_claim`` is one), the horizon (4–512 searched) and a constant
    nothing in the claim reads (10⁻³–10³ searched), with their defaults.
    """
    return (Param("means", (0.9, 0.5), "floats", "instance (base tables)", low=0.0, high=1.0,
                  min_len=2, claim=means_claim),
            Param("horizon", horizon, "int", "table rows", low=1, high=1 << 20,
                  claim=theorem("planted: every horizon", Scale.INT_LOG, (4, 512))),
            Param("constant", constant, "float", "a constant the claim does not read",
                  low=0.0, high=1e6, open_low=True,
                  claim=proof("planted: unused by the claim", Scale.LOG, (1e-3, 1e3))))


def corner_spec() -> AlgorithmSpec:
    """An (unregistered) spec of ``corner``.

    An (unregistered) spec of ``corner``: claims ε-DP, and is ε-DP wherever
    constant × horizon ≥ 1 (its transcript is fair coin flips), but reads its first reward raw
    where constant × horizon < 1 (:func:`corner_kernel`): a leak in one corner of its claim
    space (horizon in [4, 512], constant in [10⁻³, 10³]), for calibrating the instance screen
    (:mod:`dpaudit.auditing.instances`).
    """

    def prepare(eps: float, p: dict) -> Prepared:
        return Prepared(theta=np.array([p["constant"], float(p["horizon"])]), aux=np.zeros(0),
                        means=np.asarray(p["means"], dtype=np.float64))

    return AlgorithmSpec(
        name="corner", title="planted corner leak (synthetic)", paper="dpaudit calibration",
        model=PrivacyModel.USER, private=True, kernel=corner_kernel,
        params=_searched_params(128, 10.0, None),
        prepare=prepare, structure=lambda p: [(0, "first row")],
        audit_horizon=lambda p: p["horizon"], theorem="ε-DP (planted: broken where "
        "constant x horizon < 1)",
        description="fair coin flips, except a raw first reward where constant x horizon < 1")


def tight_spec() -> AlgorithmSpec:
    """An (unregistered) spec that is ε-DP and no better, over a wide claim space.

    An (unregistered) spec that is ε-DP and no better, over a wide claim space: every row
    is released by randomised response at exactly the audited ε (:func:`planted_kernel` with
    ε_planted = ε_other = ε), so each neighbouring pair loses exactly ε, at every horizon
    (4–512 searched), instance and value of a constant nothing reads (10⁻³–10³). An audit
    that searches this space must call it a violation with probability at most α: the
    soundness check of the instance search (``benchmarks/instance_soundness.py``).
    """

    def prepare(eps: float, p: dict) -> Prepared:
        return Prepared(theta=np.array([eps, eps, 0.0]), aux=np.zeros(0),
                        means=np.asarray(p["means"], dtype=np.float64))

    return AlgorithmSpec(
        name="tight", title="randomised response at exactly eps (synthetic)",
        paper="dpaudit calibration", model=PrivacyModel.USER, private=True,
        kernel=planted_kernel,
        params=_searched_params(32, 1.0, theorem("planted: any instance", Scale.GENERATED,
                                                 (2, 2))),
        prepare=prepare, structure=lambda p: [(0, "first row")],
        audit_horizon=lambda p: p["horizon"], theorem="ε-DP, exactly tight (planted)",
        description="every row released by randomised response at exactly eps")
