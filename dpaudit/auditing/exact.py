"""The exact privacy loss of the released transcript on small instances.

A kernel's releases are its only randomness when every other draw (tie-breaking coins, rewards
beyond the table) is absent; the transcript (actions, τ, recommendation, status) is then a
function of the released values. When those values are discrete (randomised response: bits),
the transcript's law on a table is a finite sum: walk the tree of release values, running the
kernel with the values so far frozen (the kernel contract's gray-box replay,
:mod:`dpaudit.simulation.simulate`) until a run makes no release beyond them; that run's
transcript has probability Π_j P(y_j | v_j), the exact values v_j as the run logged them
(:func:`dpaudit.auditing.whitebox.log_density`). Both tables of a neighbouring pair give their
laws P_d and P_d′ over transcripts, and from them the exact figures:

* ε_exact = max over transcripts of |ln P_d(t) − ln P_d′(t)| (inf when one law puts mass where
  the other does not): the smallest ε for which the transcript is ε-DP on this pair;
* δ(ε) = max of Σ_t (P_d(t) − e^ε P_d′(t))⁺ and its mirror (the hockey-stick divergence), and
  ε(δ) the smallest ε with δ(ε) ≤ δ.

Scope: discrete releases only (a Laplace or Gaussian release is refused: its law needs an
integral, not a sum), runs cut at the table's horizon (no reward beyond it), at most
:data:`MAX_TRANSCRIPTS` leaves. A kernel that draws other randomness is refused when a leaf
replayed under another generator (seed i + 1 for leaf i) gives another transcript: a fair coin
that decides the transcript escapes this with probability 2^−(leaves).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import brentq

from dpaudit.auditing.whitebox import log_density
from dpaudit.core.terms import PrivacyModel
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import GAUSSIAN, LAPLACE, RANDOMISED_RESPONSE

if TYPE_CHECKING:
    from dpaudit.algorithms.spec import AlgorithmSpec, Prepared
    from dpaudit.data.tables import NeighbourPair

MAX_TRANSCRIPTS = 1 << 17   # leaves of the release tree walked per table at most
SEED = 0                    # the generator of the walk; leaf i is run again under seed i + 1


class Infeasible(InputError):
    """The exact law cannot be computed on this instance (the message says why)."""


def frozen_run(spec: AlgorithmSpec, prep: Prepared, table: np.ndarray, limit: int,
               frozen: np.ndarray, seed: int | np.random.Generator) -> tuple:
    """One run with its first releases' values frozen (the kernel contract's replay).

    Args:
        spec: the algorithm (its kernel).
        prep: its prepared arrays.
        table: the reward table, float64 (the kernel's layout).
        limit: samples per run.
        frozen: float64 (k,): the values of its first k releases.
        seed: an int seed or a Generator (used as is).

    Returns:
        (transcript key: (actions bytes, τ, recommendation, status), releases float (n, 8)).
    """
    rows = max(64, 2 * frozen.shape[0] + 2)
    while True:
        actions, releases = np.zeros(limit, np.int16), np.zeros((rows, 8))
        tau, rec, status, n = (int(x) for x in spec.kernel(
            np.random.default_rng(seed), table, prep.means, prep.theta, prep.aux, limit,
            actions, releases, frozen))
        if n <= rows:
            return (actions[:min(tau, limit)].tobytes(), tau, rec, status), releases[:n]
        rows = n


def transcript_law(spec: AlgorithmSpec, prep: Prepared, table: np.ndarray,
                   limit: int) -> dict:
    """The exact law of the transcript on one table.

    Args:
        spec: the algorithm (its kernel).
        prep: its prepared arrays.
        table: the reward table (the kernel's layout).
        limit: samples per run (at most the table's horizon: no reward beyond it).

    Returns:
        {transcript key: probability}, the probabilities summing to 1 up to rounding.

    Raises:
        Infeasible: a release that is not randomised response, more than
            :data:`MAX_TRANSCRIPTS` leaves, or a transcript that changes with the generator
            (randomness besides the releases).
    """
    table = np.ascontiguousarray(table, dtype=np.float64)
    law: dict = {}
    stack = [np.zeros(0)]
    leaves = 0
    while stack:
        frozen = stack.pop()
        key, rel = frozen_run(spec, prep, table, limit, frozen, SEED)
        k = frozen.shape[0]
        if rel.shape[0] > k:                        # a release beyond the frozen ones: branch
            if rel[k, 7] != RANDOMISED_RESPONSE:
                raise Infeasible(_continuous(spec, rel, k))
            stack.extend(np.append(frozen, b) for b in (1.0, 0.0))
            continue
        leaves += 1
        if leaves > MAX_TRANSCRIPTS:
            raise Infeasible(f"--exact: {spec.name} has more than {MAX_TRANSCRIPTS} release "
                             f"sequences within {limit} samples; audit a smaller instance "
                             "(K = 2, a shorter horizon)")
        if frozen_run(spec, prep, table, limit, frozen, SEED + leaves)[0] != key:
            raise Infeasible(f"--exact: {spec.name}'s transcript changes with the generator "
                             "when every release is fixed: it draws randomness besides its "
                             "releases (coins), which --exact does not sum over")
        logp = log_density(rel[:, 7], rel[:, 5], rel[:, 4], rel[:, 6]).sum() if k else 0.0
        law[key] = law.get(key, 0.0) + float(np.exp(logp))
    return law


def horizon_of(table: np.ndarray, model: str) -> int:
    """Samples per run on a table: its horizon (a local pair's one reward: 1).

    Args:
        table: a table of the model's layout.
        model: its privacy model.

    Returns:
        The samples.
    """
    d = np.asarray(table)
    if d.ndim == 0:
        return 1
    return int(d.shape[1] if model == PrivacyModel.STREAM else d.shape[0])


def _limit(pair: NeighbourPair) -> int:
    """Samples per run: the pair's table horizon (:func:`horizon_of`)."""
    return horizon_of(pair.d, pair.model)


def precheck(spec: AlgorithmSpec, prep: Prepared, pair: NeighbourPair) -> None:
    """Refuse an instance whose one run already shows the law infeasible, before an audit.

    Args:
        spec: the algorithm.
        prep: its prepared arrays.
        pair: a neighbouring pair of the instance.

    Raises:
        Infeasible: the run makes a continuous release, or more releases than
            :data:`MAX_TRANSCRIPTS` leaves allow (2^releases sequences).
    """
    limit = _limit(pair)
    table = np.ascontiguousarray(pair.d, dtype=np.float64)
    rel = frozen_run(spec, prep, table, limit, np.zeros(0), SEED)[1]
    continuous = np.flatnonzero(rel[:, 7] != RANDOMISED_RESPONSE)
    if continuous.size:
        raise Infeasible(_continuous(spec, rel, int(continuous[0])))
    if 2.0 ** rel.shape[0] > MAX_TRANSCRIPTS:
        raise Infeasible(f"--exact: a run of {spec.name} makes {rel.shape[0]} releases within "
                         f"{limit} samples, up to 2^{rel.shape[0]} release sequences (at most "
                         f"{MAX_TRANSCRIPTS}); audit a smaller instance (K = 2, a shorter "
                         "horizon)")


def _continuous(spec: AlgorithmSpec, rel: np.ndarray, k: int) -> str:
    family = {LAPLACE: "Laplace", GAUSSIAN: "Gaussian"}.get(int(rel[k, 7]), int(rel[k, 7]))
    return (f"--exact: {spec.name} makes a continuous release ({family} noise, release {k}); "
            "exact laws are summed for randomised-response (bit) releases only")


def hockey_stick(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """δ(ε) of a pair of laws on the same transcripts, the larger direction.

    Args:
        p: float (n,) probabilities on d.
        q: float (n,) on d′, the same transcripts.
        eps: ε ≥ 0.

    Returns:
        max(Σ (p − e^ε q)⁺, Σ (q − e^ε p)⁺).
    """
    w = np.exp(eps)
    return float(max(np.maximum(p - w * q, 0.0).sum(), np.maximum(q - w * p, 0.0).sum()))


EPS_CEILING = 50.0    # nats: ε(δ) above it is reported as inf


def eps_at_delta(p: np.ndarray, q: np.ndarray, delta: float) -> float:
    """The smallest ε ≥ 0 with δ(ε) ≤ δ (:func:`hockey_stick`, nonincreasing in ε).

    Args:
        p: float (n,) probabilities on d.
        q: float (n,) on d′.
        delta: δ in (0, 1).

    Returns:
        ε(δ) to 1e-12 nats; inf when even :data:`EPS_CEILING` leaves δ(ε) above δ.
    """
    if hockey_stick(p, q, 0.0) <= delta:
        return 0.0
    if hockey_stick(p, q, EPS_CEILING) > delta:
        return float("inf")
    return float(brentq(lambda e: hockey_stick(p, q, e) - delta, 0.0, EPS_CEILING,
                        xtol=1e-12))


def exact_privacy(spec: AlgorithmSpec, prep: Prepared, pair: NeighbourPair, eps: float,
                  delta: float = 0.0) -> dict:
    """The transcript's exact ε and δ(ε) on a neighbouring pair (module doc).

    Args:
        spec: the algorithm.
        prep: its prepared arrays at the claimed ε.
        pair: the neighbouring pair; runs are cut at its table's horizon.
        eps: the claimed ε.
        delta: the claimed δ (0: pure DP).

    Returns:
        JSON-ready: the claim's ``eps`` and ``delta``, ``eps_exact`` (pure DP: the largest
        |log ratio|; with δ > 0: ε(δ)),
        ``max_log_ratio``, ``delta_at_eps`` (δ at the claimed ε), ``transcripts`` (distinct,
        over both tables), ``limit`` and ``method``.

    Raises:
        Infeasible: as :func:`transcript_law`.
    """
    limit = _limit(pair)
    laws = [transcript_law(spec, prep, t, limit) for t in (pair.d, pair.d_prime)]
    keys = sorted(set(laws[0]) | set(laws[1]))
    p, q = (np.array([law.get(k, 0.0) for k in keys]) for law in laws)
    with np.errstate(divide="ignore"):
        ratio = np.abs(np.log(p) - np.log(q))
    worst = float(ratio.max())
    at = worst if delta == 0 else eps_at_delta(p, q, delta)
    return {"eps": eps, "delta": delta, "eps_exact": at, "max_log_ratio": worst,
            "delta_at_eps": hockey_stick(p, q, eps),
            "transcripts": len(keys), "limit": limit,
            "method": "exact sum over release sequences (randomised-response releases)"}
