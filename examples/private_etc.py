"""Bring-your-own-algorithm example for `dpaudit run --algo examples/private_etc.py:FUNCTION`.

A private explore-then-commit bandit in the ``user`` table model (docs/method/architecture.md): round t pulls
arm t mod K and reads ``table[t, t mod K]``; after the T rounds it releases the arm with the
largest noisy reward sum. Each row enters exactly one arm's sum and moves it by at most 1, so
Laplace(1/ε) noise on every sum makes the released arm ε-DP (report noisy max over disjoint
sums: parallel composition of the Laplace mechanism, then post-processing).

``etc`` is correct; ``etc_half_noise`` uses half the noise (a privacy bug: its loss is up to 2ε).
"""
import numpy as np


def etc(rng, table, eps, noise=1.0):
    T, K = table.shape
    sums = np.zeros(K)
    for t in range(T):
        sums[t % K] += table[t, t % K]
    return int(np.argmax(sums + rng.laplace(0.0, noise / eps, K)))


def etc_half_noise(rng, table, eps):
    return etc(rng, table, eps, noise=0.5)
