"""Njit helpers shared by the kernels.

njit helpers shared by the kernels: reward reads of the kernel contract, white-box release
logging, the mutation switch at every noise site (:func:`site_switch`, :func:`site_release`), argmax with lowest-index
ties, a uniform arm (and the length of a run on a stream of users).

Kernel contract: :mod:`dpaudit.simulation.simulate`. Every helper is ``@njit(cache=True)``; the
kernels of
:mod:`adap_tt`, :mod:`baselines`, :mod:`dp_ncb`, :mod:`lazy_dp` and :mod:`ldp_thresholding`
import them from here.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from dpaudit.simulation.simulate import COIN, GAUSSIAN, LAPLACE, STOPPED, TRUNCATED


@nb.njit(cache=True)
def reward(rng: np.random.Generator, table: np.ndarray, means: np.ndarray, t: int,
           a: int) -> float:
    """The reward of the t-th sample on arm a.

    Reward of the t-th sample (0-based) on arm a: ``table[t, a]``, or Bernoulli(means[a])
    beyond the table (kernel contract, dpaudit.simulation.simulate). Kernels record the action
    inline
    after this call: a shared "pull and record" helper measured 1.4–4x slower.

    Args:
        rng: the generator.
        table: the reward table.
        means: the arms' means, in [0, 1].
        t: the sample (0-based).
        a: the arm.

    Returns:
        ``table[t, a]``, or a Bernoulli(means[a]) draw beyond the table.
    """
    if t < table.shape[0]:
        return table[t, a]
    return 1.0 if rng.random() < means[a] else 0.0


# The mutation switch (:mod:`dpaudit.algorithms.mutation`): a mutant's theta ends with the tail
# (MUTATION_MARK, operator, site, factor); a theta without it (every registered algorithm's)
# runs unmutated. The mark is a value no kernel parameter takes. Operators:
MUTATION_MARK = -7.0e300
MUTATION_TAIL = 4
SCALE = 1.0         # the site's noise × factor (0: the raw value)
REUSE = 2.0         # the site's first draw (in noise scales) reused by its every later release
FROZEN = 3.0        # the same noise in every run (a generator seeded with a constant)
GAUSS = 4.0         # a Gaussian draw with the Laplace scale: normal(0, b) for laplace(0, b)
COUNT = 5.0         # sensitivity off by one: noise for a mean of n + 1 samples, × n/(n + 1)
FROZEN_DRAW = 0.6931471805599453    # the frozen noise in scales: ln 2, Lap(1)'s 75th percentile


@nb.njit(cache=True)
def mutant(theta: np.ndarray) -> bool:
    """Whether ``theta`` carries a mutation (ends with the mutation tail).

    A kernel that skips :func:`site_release` on unlogged runs (its noise added inline: the
    fast path) takes the logged path for a mutant, so the unmutated runs pay nothing for the
    switch.

    Args:
        theta: the kernel's parameters, float64.

    Returns:
        True for a mutant's parameters.
    """
    n = theta.shape[0]
    return n >= MUTATION_TAIL and theta[n - 4] == MUTATION_MARK


@nb.njit(cache=True)
def site_switch(theta: np.ndarray, site: int) -> tuple:
    """The mutation state of a kernel's noise site ``site`` (the mutation switch).

    A kernel reads it once per run and threads it through every release at the site
    (:func:`site_release`, which returns it updated): operator 0 when ``theta``
    carries no mutation or one at another site, and then every release is the one it always
    was. A tuple of floats, so no run allocates for it.

    Args:
        theta: the kernel's parameters, float64, possibly ending with the mutation tail.
        site: the site's number within its kernel (the module's ``NOISE_SITES``).

    Returns:
        (operator, factor, the stored draw in noise scales: NaN until a ``REUSE`` site draws).
    """
    n = theta.shape[0]
    if mutant(theta) and theta[n - 2] == site:
        return theta[n - 3], theta[n - 1], np.nan
    return 0.0, 1.0, np.nan


@nb.njit(cache=True, inline="always")
def _mutated(m: tuple, rng: np.random.Generator, noise: float, scale: float, count: float,
            dist: int) -> tuple:
    """The noise a release at a noise site adds under the site's mutation.

    Args:
        m: the site's state (:func:`site_switch`).
        rng: the generator (the ``GAUSS`` operator draws from it).
        noise: the noise drawn as the algorithm draws it (drawn in every case, so the
            generator's stream is the algorithm's up to the mutation's own draws).
        scale: its scale (Laplace b or Gaussian σ).
        count: the samples the released statistic averages.
        dist: its family (LAPLACE or GAUSSIAN).

    Returns:
        (the noise: ``noise`` itself without a mutation, else the mutant's; the state).
    """
    op = m[0]
    if op == 0.0:
        return noise, m
    if op == SCALE:
        return m[1] * noise, m
    if op == COUNT:
        return noise * count / (count + 1.0), m
    if op == REUSE:
        if m[2] != m[2]:                        # NaN: the site's first draw
            m = (op, m[1], noise / scale if scale > 0.0 else 0.0)
        return m[2] * scale, m
    if op == FROZEN:
        return FROZEN_DRAW * scale, m
    if op == GAUSS and dist == LAPLACE:
        return rng.normal(0.0, scale), m
    return noise, m


@nb.njit(cache=True)
def site_release(m: tuple, rng: np.random.Generator, releases: np.ndarray,
                 frozen: np.ndarray, i: int, t: int, arm: int, phase: int, count: float,
                 value: float, noise: float, scale: float, dist: int) -> tuple:
    """:func:`release` at a noise site, under its mutation, logged as what the mutant releases.

    The log records the scale and family the mutant draws with (× factor, × n/(n + 1), or a
    Gaussian's σ = b); a ``FROZEN`` release is a point mass at value + its fixed noise
    (logged with that value and scale 0); a ``REUSE`` release logs its marginal law (Laplace
    of its scale: the dependence between releases is not in a per-release log).

    Args:
        m: the site's state (:func:`site_switch`).
        rng: the generator.
        releases: the release log (R, 8).
        frozen: released values to replay.
        i: the release's index.
        t: samples taken when released.
        arm: the arm.
        phase: the phase.
        count: the samples the statistic averages.
        value: the exact statistic.
        noise: the noise as the algorithm draws it.
        scale: its scale.
        dist: its family.

    Returns:
        (the released value, the site's state).
    """
    z, m = _mutated(m, rng, noise, scale, count, dist)
    op = m[0]
    if op == FROZEN:
        return release(releases, frozen, i, t, arm, phase, count, value + z, 0.0, 0.0, dist), m
    if op == SCALE:
        scale = m[1] * scale
    elif op == COUNT:
        scale = scale * count / (count + 1.0)
    elif op == GAUSS and dist == LAPLACE:
        dist = GAUSSIAN
    return release(releases, frozen, i, t, arm, phase, count, value, z, scale, dist), m


@nb.njit(cache=True)
def user_reward(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                u: int) -> float:
    """The reward of user u of a stream of users.

    Reward of user u (0-based) of a stream of users (one local reward each): the flat
    ``table.flat[u]`` for u < ``table.size`` (the audit: a 0-d or (1,) table), else a fresh
    Bernoulli(``means[0]``) (``means`` shape (1,)).

    Args:
        rng: the generator.
        table: the reward table.
        means: the arms' means, in [0, 1].
        u: the user (0-based).

    Returns:
        ``table.flat[u]``, or a Bernoulli(means[0]) draw beyond the table.
    """
    if u < table.size:
        return table.flat[u]
    return 1.0 if rng.random() < means[0] else 0.0


@nb.njit(cache=True)
def user_stream_end(n_users: int, limit: int) -> tuple[int, int]:
    """The (users, status) of a run on a stream of users.

    (users, status) of a run on a stream of users that stops after ``n_users`` users or is
    truncated at ``limit`` users, whichever comes first (STOPPED when both coincide): the
    first u ≥ 0 with u ≥ n_users (STOPPED) or u ≥ limit (TRUNCATED). Users 0 .. users−1 are
    privatised, user u reading :func:`user_reward`.

    Args:
        n_users: users the run serves.
        limit: samples per run at most.

    Returns:
        (users, STOPPED or TRUNCATED).
    """
    users = max(0, min(n_users, limit))
    return users, STOPPED if users >= n_users else TRUNCATED


@nb.njit(cache=True)
def release(releases: np.ndarray, frozen: np.ndarray, i: int, t: int, arm: int, phase: int,
            count: float, value: float, noise: float, scale: float, dist: int) -> float:
    """Release i of a statistic with additive noise, logged for the white-box check.

    Release i (0-based) of a statistic with additive noise of family ``dist``
    (:data:`dpaudit.simulation.simulate.LAPLACE` or ``GAUSSIAN``): returns the released value and
    logs it.

    ``noise`` is already drawn (kernel contract: every release draws its noise, frozen or
    not). The released value is ``frozen[i]`` when ``i < len(frozen)`` (gray-box replay) and
    ``value + noise`` otherwise; it is logged to ``releases`` row i while rows remain.

    Args:
        releases: the release log (R, 8).
        frozen: released values to replay.
        i: the release's index.
        t: samples taken when released.
        arm: the arm.
        phase: the phase.
        count: the samples the statistic averages.
        value: the exact statistic.
        noise: the noise, already drawn.
        scale: the noise scale.
        dist: the noise family.

    Returns:
        The released value.
    """
    y = frozen[i] if i < frozen.shape[0] else value + noise
    if i < releases.shape[0]:
        r = releases[i]
        r[0], r[1], r[2], r[3] = t, arm, phase, count
        r[4], r[5], r[6], r[7] = value, y, scale, dist
    return y


@nb.njit(cache=True)
def log_release(releases: np.ndarray, frozen: np.ndarray, i: int, t: int, arm: int, phase: int,
                count: float, value: float, noise: float, scale: float) -> float:
    """:func:`release` of a Laplace statistic (``scale`` = the Laplace scale).

    Args:
        releases: the release log (R, 8).
        frozen: released values to replay.
        i: the release's index.
        t: samples taken when released.
        arm: the arm.
        phase: the phase.
        count: the samples the statistic averages.
        value: the exact statistic.
        noise: the Laplace noise, already drawn.
        scale: the Laplace scale.

    Returns:
        The released value.
    """
    return release(releases, frozen, i, t, arm, phase, count, value, noise, scale, LAPLACE)


TWO53 = float(1 << 53)


@nb.njit(cache=True)
def uniform_index(rng: np.random.Generator, K: int) -> int:
    """An exact uniform draw from {0, ..., K−1}.

    A uniform draw from {0, ..., K−1}, exact: the 53 random bits of one ``rng.random()``
    as the integer k = u·2⁵³ (exact in double precision), rejected (redrawn) when
    k ≥ 2⁵³ − (2⁵³ mod K), which has probability < K/2⁵³, then k mod K. numba's
    ``rng.integers(0, K)`` draws the same law and measured 30 ns per call against ~6 ns here
    (uniform exploration of DP-NCB's Phase I).

    Args:
        rng: the generator.
        K: arms.

    Returns:
        k in {0, ..., K−1}.
    """
    lim = np.int64(TWO53) - np.int64(TWO53) % K
    while True:
        k = np.int64(rng.random() * TWO53)
        if k < lim:
            return k % K


@nb.njit(cache=True)
def coin_index(rng: np.random.Generator, K: int, releases: np.ndarray, frozen: np.ndarray,
               i: int, t: int) -> int:
    """:func:`uniform_index` logged as release i of family ``COIN`` (a white-box run's draw).

    The index is drawn whether or not it is frozen (kernel contract: every release draws its
    randomness), then replaced by ``frozen[i]`` when ``i < len(frozen)``, so an exact walk
    (:mod:`dpaudit.auditing.exact`) can branch on it; logged to ``releases`` row i while rows
    remain (value 0, noisy = the index, scale = K). Its privacy loss is 0: it reads no data.

    Args:
        rng: the generator.
        K: arms.
        releases: the release log (R, 8).
        frozen: released values to replay.
        i: the release's index.
        t: samples taken when drawn.

    Returns:
        k in {0, ..., K−1}.
    """
    k = release(releases, frozen, i, t, -1, 0, 0.0, 0.0, float(uniform_index(rng, K)),
                float(K), COIN)
    return np.int64(k)


@nb.njit(cache=True)
def argmax(x: np.ndarray) -> int:
    """The index of the largest entry of ``x``, lowest on ties.

    Index of the largest entry of the 1-D array ``x`` (strict ``>`` scan from index 0);
    ties: lowest index.

    Args:
        x: a 1-D array.

    Returns:
        The index.
    """
    best = 0
    for a in range(1, x.shape[0]):
        if x[a] > x[best]:
            best = a
    return best
