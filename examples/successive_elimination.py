"""Successive elimination with a privacy bug that hides in plain sight: the noise cancels.

Successive elimination (Even-Dar, Mannor, Mansour 2006) pulls every active arm once per round
and drops an arm whose mean falls more than twice a Hoeffding width below the best one. This
"private" copy adds Laplace noise of scale 1/(ε·r) before the test, but one draw for all arms:
the same number is added to every mean, so it cancels in the differences the test compares,
and every elimination is a deterministic function of the raw rewards. Not ε-DP for any ε:

    dpaudit run --algo examples/successive_elimination.py:noisy_elimination --eps 1 \\
        --param horizon=20

finds a violation at the default means (0.9, 0.5), with no hint of where the bug is.
"""
import math

import numpy as np

from dpaudit import Transcript

RISK = 0.1     # the BAI risk δ of the Hoeffding width sqrt(ln(2K/δ)/(2r))


def noisy_elimination(rng, table, eps):
    """One run on ``table`` (T, K): its actions, and τ and the arm left if one is."""
    T, K = table.shape
    active, sums, actions, r = list(range(K)), np.zeros(K), [], 0
    while len(actions) + len(active) <= T:
        for a in active:                                  # one round: every active arm once
            sums[a] += table[len(actions), a]
            actions.append(a)
        r += 1
        y = rng.laplace(0.0, 1.0 / (eps * r))             # the bug: one draw for every arm
        noisy = {a: sums[a] / r + y for a in active}
        best = max(noisy.values())
        width = math.sqrt(math.log(2 * K / RISK) / (2 * r))
        active = [a for a in active if best - noisy[a] <= 2 * width]
        if len(active) == 1:
            return Transcript(actions, len(actions), active[0])
    return Transcript(actions)
