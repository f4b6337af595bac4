"""Your team's bandit, gated in your own CI (examples/gate-your-own/README.md).

A private explore-then-commit bandit in the ``user`` table model: the first ``EXPLORE`` rounds
pull the arms in turn (round t pulls arm t mod K and reads ``table[t, t mod K]``); then it
releases each arm's reward sum with Laplace noise of scale ``NOISE``/ε and plays the largest
until the table ends. Each row enters one sum and moves it by at most 1, so with ``NOISE`` = 1
the commit is ε-DP (parallel composition, then post-processing), and so is the whole
transcript: the exploration does not read the data. ``commit_half_noise`` is the privacy bug
a commit could bring: half the noise, a loss up to 2ε.
"""
import numpy as np

from dpaudit import Transcript

EXPLORE = 4      # rounds of exploration
NOISE = 1.0      # Laplace scale, in units of 1/eps


def commit(rng, table, eps, noise=None):
    """One run: the actions played, exploring then committing to the noisy best arm."""
    T, K = table.shape
    sums = np.zeros(K)
    for t in range(min(EXPLORE, T)):
        sums[t % K] += table[t, t % K]
    best = int(np.argmax(sums + rng.laplace(0.0, (noise or NOISE) / eps, K)))
    return Transcript([t % K for t in range(min(EXPLORE, T))] + [best] * max(T - EXPLORE, 0))


def commit_half_noise(rng, table, eps):
    """The mutant: half the noise."""
    return commit(rng, table, eps, noise=0.5 * NOISE)
