"""Textbook mechanisms of the DP-testing literature and their non-private variants.

The benchmark of generic audits (``benchmarks/mechanisms.py``): mechanisms that StatDP (Ding,
Wang, Wang, Zhang and Kifer 2018, ACM CCS, arXiv:1805.10277) and DP-Sniper (Bichsel, Steffen,
Bogunovic and Vechev 2021, IEEE S&P) test, written here from their papers' pseudo-code, each a
vectorised ``mechanism(rng, data, n)`` drawing from ``rng`` only. Every entry is a
:class:`Textbook`: the sampler at its claimed ε, whether the claim holds (``private``), the base
input its neighbours are searched around (``pairs="search"``) and which entries move.

Sparse vector (Lyu, Su and Li 2017, "Understanding the Sparse Vector Technique for Differential
Privacy", PVLDB, arXiv:1603.01699), on query answers q (sensitivity 1), threshold T, cutoff c,
ε₁ = ε/2 and ε₂ = ε − ε₁ unless said otherwise; ⊤/⊥/aborted are coded 1/0/−1, or
−1000/−2000 where a value is released:

* ``svt1`` Alg. 1: ρ ~ Lap(1/ε₁), ν_i ~ Lap(2c/ε₂); ⊤ iff q_i + ν_i ≥ T + ρ; abort after c ⊤.
  ε-DP (T = 0.5, c = 1).
* ``svt2`` Alg. 2 (Dwork and Roth 2014): ρ ~ Lap(c/ε₁), redrawn after each ⊤. ε-DP.
* ``svt3`` Alg. 3: ν_i ~ Lap(c/ε₂) and the noisy answer q_i + ν_i released for ⊤, −1000 for
  ⊥: not ε-DP (releasing the answer costs privacy the analysis does not count).
* ``svt4`` Alg. 4: ε₁ = ε/4, ν_i ~ Lap(1/ε₂): ((1 + 6c)/4)·ε-DP, not ε-DP.
* ``svt5`` Alg. 5: threshold noise only, no query noise and no cutoff: not ε-DP for any ε.
* ``svt6`` Alg. 6: ν_i ~ Lap(1/ε₂), no cutoff: not ε-DP for any ε.
* ``numerical-svt`` (Wang, Ding, Wang, Kifer and Zhang 2019, "Proving differential privacy with
  shadow execution", PLDI, arXiv:1903.12254): ρ₁ ~ Lap(3/ε), ⊤ iff q_i + Lap(6c/ε) ≥ T + ρ₁,
  releasing q_i + Lap(3c/ε) (0 for ⊥, −1000 once aborted). ε-DP.

Histograms, report noisy max (Ding et al. 2018), randomised response and composition:

* ``noisy-hist`` each bin + Lap(1/ε), one bin changes by 1: ε-DP; ``noisy-hist-wrong-scale``
  the noise Lap(ε): not ε-DP.
* ``rnm-laplace`` argmax of q_i + Lap(2/ε) (every answer moves by ≤ 1): ε-DP;
  ``rnm-exponential`` the same with Exp(scale 2/ε) noise: ε-DP; ``rnm-laplace-value`` and
  ``rnm-exponential-value`` release the noisy maximum instead of its index: not ε-DP.
* ``one-time-rappor``, ``rappor`` (Erlingsson, Pihur and Korolova 2014, "RAPPOR", ACM CCS,
  arXiv:1407.6981, steps 1–2 and 1–3): a value's Bloom filter of k = 20 bits set by h = 4
  hashes, permanent randomised response with f, then (``rappor``) instantaneous randomised
  response with p, q. ε = 2h·ln((1 − f/2)/(f/2)) for the permanent response (f = 0.95: 0.80)
  and h·ln(q*(1 − p*)/(p*(1 − q*))) for one report (f = 0.75, p = 0.45, q = 0.55: 0.40), as the
  paper states; they hold with equality only when the two values' 2h bits are distinct.
* ``laplace`` x + Lap(1/ε); ``laplace-parallel`` 20 releases of x, each + Lap(20/ε): ε-DP by
  sequential composition (Dwork and Roth 2014, Thm. 3.14).
"""
from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

EPS = 0.1              # the claimed ε of every entry (DP-Sniper's and StatDP's setting)
QUERIES = 10           # query answers of the sparse vectors
ABOVE, BELOW, ABORTED = 1, 0, -1           # a sparse vector's answers ...
BELOW_CODE, ABORTED_CODE = -1000.0, -2000.0   # ... where values are released


@dataclass(frozen=True)
class Textbook:
    """One benchmark mechanism.

    Attributes:
        name: its name.
        mechanism: ``mechanism(rng, data, n)`` at the claimed ε.
        eps: the claimed ε.
        private: whether the claim holds.
        base: the input whose neighbours are searched (``pairs="search"``).
        changes: ``"each"`` (every entry may move by 1) or ``"one"`` (one entry moves).
        source: the paper and algorithm it follows.
        peer: DP-Sniper's published lower bound on ε for it (its reference results with
            logistic regression, ``eps_lcb``), or None where it was not tested.
    """

    name: str
    mechanism: Callable
    eps: float
    private: bool
    base: tuple
    changes: str
    source: str
    peer: float | None = None


def _answers(data: object, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(data, dtype=np.float64), (n, np.size(data)))


def _cut(above: np.ndarray, c: int) -> np.ndarray:
    """Per output and query: whether the sparse vector has aborted before it (c ⊤ seen)."""
    seen = np.cumsum(above, axis=1) - above
    return seen >= c


@dataclass(frozen=True)
class Sparse:
    """A sparse vector's settings: ε, the cutoff c (⊤ answers before aborting) and threshold T."""

    eps: float
    c: int = 1
    t: float = 1.0


def svt(rng: np.random.Generator, data: object, n: int, *, variant: int,
        sv: Sparse) -> np.ndarray:
    """The sparse vector of Lyu, Su and Li 2017, Alg. ``variant`` (module doc).

    Args:
        rng: the generator.
        data: the query answers q, shape (m,).
        n: outputs.
        variant: 1 to 6.
        sv: ε, the cutoff (Alg. 1–4) and the threshold.

    Returns:
        int64 (n, m) of 1/0/−1 (⊤/⊥/aborted), or float64 (n, m) for Alg. 3 (the noisy
        answer for ⊤, −1000 for ⊥, −2000 once aborted).
    """
    q = _answers(data, n)
    eps, c, t = sv.eps, sv.c, sv.t
    e1 = eps / 4 if variant == 4 else eps / 2
    e2 = eps - e1
    rho = rng.laplace(0.0, (c if variant == 2 else 1) / e1, (n, 1))
    query_scale = {1: 2 * c / e2, 2: 2 * c / e2, 3: c / e2, 4: 1 / e2, 6: 1 / e2}
    noisy = q + (rng.laplace(0.0, query_scale[variant], q.shape) if variant != 5 else 0.0)
    if variant == 2:        # the threshold's noise is drawn again after each ⊤
        m = q.shape[1]
        above = np.zeros(q.shape, bool)
        redraw = rng.laplace(0.0, c / e1, (n, m))
        level = rho[:, 0].copy()
        for i in range(m):
            above[:, i] = noisy[:, i] >= t + level
            level = np.where(above[:, i], redraw[:, i], level)
    else:
        above = noisy >= t + rho
    if variant in (5, 6):   # no cutoff
        return above.astype(np.int64)
    stop = _cut(above, c)
    if variant == 3:
        return np.where(stop, ABORTED_CODE, np.where(above, noisy, BELOW_CODE))
    return np.where(stop, ABORTED, above.astype(np.int64))


def numerical_svt(rng: np.random.Generator, data: object, n: int, *, sv: Sparse) -> np.ndarray:
    """Numerical sparse vector (Wang et al. 2019; module doc).

    Args:
        rng: the generator.
        data: the query answers, shape (m,).
        n: outputs.
        sv: ε, the cutoff and the threshold.

    Returns:
        float64 (n, m): q_i + Lap(3c/ε) for ⊤, 0 for ⊥, −1000 once aborted.
    """
    q = _answers(data, n)
    eps, c, t = sv.eps, sv.c, sv.t
    rho = rng.laplace(0.0, 3 / eps, (n, 1))
    above = q + rng.laplace(0.0, 6 * c / eps, q.shape) >= t + rho
    value = q + rng.laplace(0.0, 3 * c / eps, q.shape)
    return np.where(_cut(above, c), BELOW_CODE, np.where(above, value, 0.0))


def _noisy_hist(rng: np.random.Generator, data: object, n: int, *, scale: float) -> np.ndarray:
    """Each bin + Lap(``scale``): float64 (n, m)."""
    q = _answers(data, n)
    return q + rng.laplace(0.0, scale, q.shape)


def report_noisy_max(rng: np.random.Generator, data: object, n: int, *, eps: float,
                     noise: str, value: bool) -> np.ndarray:
    """Report noisy max with Lap(2/ε) or Exp(2/ε) noise: the index, or the noisy maximum.

    Args:
        rng: the generator.
        data: the query answers, shape (m,).
        n: outputs.
        eps: ε.
        noise: ``"laplace"`` or ``"exponential"``.
        value: release the noisy maximum (not ε-DP) instead of its index.

    Returns:
        int64 (n,) indices, or float64 (n,) values.
    """
    q = _answers(data, n)
    draw = rng.laplace(0.0, 2 / eps, q.shape) if noise == "laplace" else \
        rng.exponential(2 / eps, q.shape)
    noisy = q + draw
    return noisy.max(axis=1) if value else noisy.argmax(axis=1)


def bloom_bits(value: float, hashes: int, size: int) -> np.ndarray:
    """The Bloom filter of a value (RAPPOR's step 1), its hashes SHA-256 of the value's text.

    Args:
        value: the value.
        hashes: h, the hash functions.
        size: k, the filter's bits.

    Returns:
        bool array of shape (k,), at most h bits set.
    """
    bits = np.zeros(size, bool)
    for i in range(hashes):
        text = ":".join((repr(float(value)), str(i)))     # the value's text and the hash's index
        h = hashlib.sha256(text.encode()).digest()
        bits[int.from_bytes(h[:8], "little") % size] = True
    return bits


@dataclass(frozen=True)
class Rappor:
    """RAPPOR's parameters.

    f for the permanent response, p and q for the instantaneous one (P(1) for a bit 0 and
    for a bit 1; None: one-time RAPPOR), h hashes into k bits.
    """

    f: float
    p: float | None = None
    q: float | None = None
    hashes: int = 4
    size: int = 20

    @property
    def eps(self) -> float:
        """The ε the paper states: the permanent response's, or one report's (module doc)."""
        f, p, q, h = self.f, self.p, self.q, self.hashes
        if p is None:
            return 2 * h * math.log((1 - f / 2) / (f / 2))
        q1, p1 = f / 2 * (p + q) + (1 - f) * q, f / 2 * (p + q) + (1 - f) * p
        return h * math.log(q1 * (1 - p1) / (p1 * (1 - q1)))


def rappor(rng: np.random.Generator, data: object, n: int, *, rr: Rappor) -> np.ndarray:
    """RAPPOR's report of one value (Erlingsson et al. 2014, steps 1–3; module doc).

    Args:
        rng: the generator.
        data: the value (a number or a 1-element array).
        n: outputs.
        rr: the parameters.

    Returns:
        int64 (n, k) of bits.
    """
    f, p, q, size = rr.f, rr.p, rr.q, rr.size
    bits = bloom_bits(float(np.asarray(data).ravel()[0]), rr.hashes, size)
    u = rng.random((n, size))
    permanent = np.where(u < f / 2, True, np.where(u < f, False, bits[None, :]))
    if p is None:
        return permanent.astype(np.int64)
    v = rng.random((n, size))
    return (v < np.where(permanent, q, p)).astype(np.int64)


def _laplace_parallel(rng: np.random.Generator, data: object, n: int, *, eps: float,
                      k: int = 20) -> np.ndarray:
    """``k`` releases of x, each + Lap(k/ε): float64 (n, k)."""
    x = float(np.asarray(data).ravel()[0])
    return x + rng.laplace(0.0, k / eps, (n, k))


def _laplace(rng: np.random.Generator, data: object, n: int, *, eps: float) -> np.ndarray:
    """The Laplace mechanism x + Lap(1/ε): float64 (n,)."""
    return float(np.asarray(data).ravel()[0]) + rng.laplace(0.0, 1 / eps, n)


def catalogue(eps: float = EPS) -> list[Textbook]:
    """The benchmark's mechanisms at the claimed ``eps`` (module doc).

    Args:
        eps: the claimed ε (RAPPOR's is fixed by its parameters).

    Returns:
        The :class:`Textbook` entries, private ones first.
    """
    P = functools.partial
    queries, five = (1.0,) * QUERIES, (1.0,) * 5
    lyu = "Lyu, Su and Li 2017, Alg. {}"
    dp_sniper = {"laplace": 0.0968, "noisy-hist": 0.0978, "rnm-laplace": 0.0923,
                 "rnm-exponential": 0.0975, "svt1": 0.0858, "svt2": 0.0859,
                 "numerical-svt": 0.0343, "one-time-rappor": 0.598, "rappor": 0.293,
                 "laplace-parallel": 0.0350, "noisy-hist-wrong-scale": 4.602,
                 "rnm-laplace-value": 0.2478, "rnm-exponential-value": 0.3463,
                 "svt3": 0.1716, "svt4": 0.1687, "svt5": 1.761, "svt6": 0.2720}
    otr, rep = Rappor(f=0.95), Rappor(f=0.75, p=0.45, q=0.55)
    rows = [
        ("laplace", P(_laplace, eps=eps), eps, True, (1.0,), "each",
         "Dwork and Roth 2014, Def. 3.3"),
        ("noisy-hist", P(_noisy_hist, scale=1 / eps), eps, True, five, "one",
         "Ding et al. 2018 (NoisyHist1)"),
        ("rnm-laplace", P(report_noisy_max, eps=eps, noise="laplace", value=False), eps, True,
         five, "each", "Ding et al. 2018 (ReportNoisyMax1)"),
        ("rnm-exponential", P(report_noisy_max, eps=eps, noise="exponential", value=False),
         eps, True, five, "each", "Ding et al. 2018 (ReportNoisyMax2)"),
        ("svt1", P(svt, variant=1, sv=Sparse(eps, t=0.5)), eps, True, queries, "each", lyu.format(1)),
        ("svt2", P(svt, variant=2, sv=Sparse(eps)), eps, True, queries, "each", lyu.format(2)),
        ("numerical-svt", P(numerical_svt, sv=Sparse(eps)), eps, True, queries, "each",
         "Wang et al. 2019"),
        ("one-time-rappor", P(rappor, rr=otr), otr.eps, True, (1.0,), "each",
         "Erlingsson et al. 2014, steps 1-2"),
        ("rappor", P(rappor, rr=rep), rep.eps, True, (1.0,), "each",
         "Erlingsson et al. 2014, steps 1-3"),
        ("laplace-parallel", P(_laplace_parallel, eps=eps), eps, True, (1.0,), "each",
         "Dwork and Roth 2014, Thm. 3.14"),
        ("noisy-hist-wrong-scale", P(_noisy_hist, scale=eps), eps, False, five, "one",
         "Ding et al. 2018 (NoisyHist2)"),
        ("rnm-laplace-value", P(report_noisy_max, eps=eps, noise="laplace", value=True), eps,
         False, five, "each", "Ding et al. 2018 (ReportNoisyMax3)"),
        ("rnm-exponential-value", P(report_noisy_max, eps=eps, noise="exponential",
                                    value=True), eps, False, five, "each",
         "Ding et al. 2018 (ReportNoisyMax4)"),
        *[(f"svt{v}", P(svt, variant=v, sv=Sparse(eps)), eps, False, queries, "each", lyu.format(v))
          for v in (3, 4, 5, 6)],
    ]
    peers = dp_sniper if math.isclose(eps, EPS) else {}
    return [Textbook(name, mech, e, private, base, changes, source, peers.get(name))
            for name, mech, e, private, base, changes, source in rows]
