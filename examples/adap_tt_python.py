"""AdaP-TT in plain Python, written from the paper, audited as your own algorithm.

AdaP-TT: Azize, Al Marjani, Jourdan, Basu, "On the Complexity of Differentially Private
Best-Arm Identification with Fixed Confidence" (NeurIPS 2023, arXiv:2309.02202), Algorithm 2
with the private GLR stopping rule of eq. (4) and the UCB leader of eq. (22). One function call
is one run on a reward table (row t = user t's potential rewards); it returns the released
transcript as a :class:`dpaudit.Transcript`, so the audit reads its actions as it reads the
catalogue's compiled ``adap-tt``:

    dpaudit run --algo examples/adap_tt_python.py:adap_tt --eps 0.5 --model user \\
        --param means=0.9,0.7,0.5,0.3 --param horizon=8 --runs 50000

Not a wrapper of the catalogue's kernel: a reimplementation a researcher could have written.
Readings where the paper is silent follow the catalogue's (the phase-1 estimate is the initial
sample plus Lap(1/ε); s = 2; β = 1/2; ties go to the lowest index).
"""
import math
from functools import lru_cache

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import zeta

from dpaudit import Transcript

RISK, BETA, S = 0.01, 0.5, 2.0     # the BAI risk δ, the Top Two proportion β, the exponent s


@lru_cache(maxsize=None)
def c_g(x):
    """C_G(x) = min over λ in (1/2, 1) of (g_G(λ) + x)/λ (eq. 15)."""
    def g(lam):
        return (2 * lam - 2 * lam * math.log(4 * lam) + math.log(zeta(2 * lam))
                - 0.5 * math.log(1 - lam))
    res = minimize_scalar(lambda lam: (g(lam) + x) / lam, bounds=(0.5 + 1e-9, 1 - 1e-12),
                          method="bounded", options={"xatol": 1e-12})
    return float(res.fun)


def threshold(K, eps, k1, k2, n1, n2):
    """2·c_{ε,k1,k2}(n1, n2, δ) of eq. (4), with c_k of eq. (14) at δ/2."""
    arg = 0.5 * (math.log(K - 1) + 2 * math.log(zeta(S)) + S * math.log(k1 * k2)
                 - math.log(RISK / 2))
    c_np = 2 * c_g(arg) + 2 * math.log(4 + math.log(n1)) + 2 * math.log(4 + math.log(n2))
    lz = math.log(2 * K * zeta(S) / RISK)
    lap = ((lz + S * math.log(k1)) ** 2 / (n1 * eps * eps)
           + (lz + S * math.log(k2)) ** 2 / (n2 * eps * eps))
    return 2 * (2 * c_np + lap)


def stop(mu, ntil, k, eps):
    """The private GLR stopping rule (Algorithm 2, Lines 11-12): the answer, or None."""
    K = len(mu)
    best = int(np.argmax(mu))
    for b in range(K):
        if b != best:
            z = (mu[best] - mu[b]) ** 2 / (1 / ntil[best] + 1 / ntil[b])
            if z < threshold(K, eps, k[best], k[b], ntil[best], ntil[b]):
                return None
    return best


def leader(mu, ntil, k, eps):
    """The private UCB leader of eq. (22)."""
    return int(np.argmax([mu[a] + math.sqrt(k[a] / ntil[a]) + k[a] / (eps * ntil[a])
                          for a in range(len(mu))]))


def adap_tt(rng, table, eps):
    """One run of AdaP-TT on ``table`` (T, K): its actions, and τ and â if it stopped."""
    T, K = table.shape
    N = [1] * K                    # global counts
    k = [1] * K                    # phase indices
    start = [1] * K                # global count at the start of the current phase
    ntil = [1.0] * K               # local count of the last completed phase
    S_, C = [0.0] * K, [0] * K     # reward sum and count of the phase in progress
    L, M = [0] * K, [0] * K        # rounds as leader; rounds as leader and pulled
    actions = list(range(K))       # initialisation: rows 0..K-1, arm t at row t
    mu = [table[a, a] + rng.laplace(0.0, 1 / eps) for a in range(K)]    # phase 1
    ahat = stop(mu, ntil, k, eps)
    if ahat is not None:
        return Transcript(actions, len(actions), ahat)
    B, last = leader(mu, ntil, k, eps), None
    while True:
        if last is not None and C[last] >= start[last]:      # the count doubled (eq. 10)
            a = last
            k[a] += 1
            ntil[a] = C[a]
            mu[a] = S_[a] / C[a] + rng.laplace(0.0, 1 / (eps * ntil[a]))   # eqs. (11), (12)
            start[a], S_[a], C[a] = N[a], 0.0, 0
            ahat = stop(mu, ntil, k, eps)
            if ahat is not None:
                return Transcript(actions, len(actions), ahat)
            B = leader(mu, ntil, k, eps)
        t = len(actions)
        if t >= T:                                           # the table's end: no decision
            return Transcript(actions)
        if M[B] <= BETA * (L[B] + 1):                        # tracking
            i = B
        else:                                                # TC challenger (eq. 23)
            i = min((a for a in range(K) if a != B),
                    key=lambda a: (mu[B] - mu[a]) / math.sqrt(1 / N[B] + 1 / N[a]))
        actions.append(i)
        N[i] += 1
        S_[i] += table[t, i]
        C[i] += 1
        L[B] += 1
        M[B] += i == B
        last = i
