"""Pure ε on a pair by stratifying two releases of one phase (registered Laplace kernels).

A counting audit bounds the lighter table's mass of an event from above by at least
~ln(1/α)/n: n runs cannot rule out an unseen region of that mass, whatever proposal draws them.
An event whose loss nears ε is rare on both tables (e.g. an elimination that compares two Laplace
means: loss ε − ln(1 + ε/(2 + u)) at mass ~(2 + u)·e^(−u)/4, u noise scales out), so that floor
is what keeps the bound below ε. Here most of the event's mass is taken from the noise law:

* h: the first release that reads the changed entry (the replay of
  :mod:`dpaudit.auditing.importance`); j: the release next to it (h ± 1), Laplace of h's scale,
  whose exact value is the same on both tables (e.g. the other arm's mean of the same epoch);
* Δ = s·(y_j − y_h) on the released values (s = ±1) and the stratum C = {Δ > t}. On table T,
  with exact values v_h, v_j (checked the same in every run) its mass is closed-form,
  π_T = P(L_j − L_h > t − s·(v_j − v_h)) for L ~ Lap(b) independent (:func:`diff_logsf`), and
  the releases can be drawn from their law given C (:func:`draw_given`);
* P_T(E) = π_T·P_T(E | C) + P_T(E, Δ ≤ t) for every transcript event E, so with one-sided
  Clopper–Pearson bounds (levels α₁ + α₂ + α₃ = α)

      P_N(E) ≥ π_N·CP_lower(E among runs of N drawn in C; α₁)
      P_D(E) ≤ π_D·CP_upper(E among runs of D drawn in C; α₂) + CP_upper(E and Δ ≤ t among the
               kernel's own runs on D; α₃)

  and ε_lb = ln of their ratio holds with probability ≥ 1 − α. When C holds E's mass, the
  floor ~ln(1/α₃)/n is paid once, on a region with none of it.

Each run in C: the releases before min(h, j) from a plain run on T (same law on both tables),
then the pair drawn given C, frozen, and the kernel continued on a fresh generator. The
stratum (j, s, t), the event (one transcript) and the direction are chosen on pilot runs whose
Δ is drawn uniformly over a window (two stages: wide, then around the chosen t), weighted by
Δ's exact density: a forecast to choose by; the measurement's runs are fresh.

What it is: a statistical lower bound on the transcript's pure privacy loss on this pair, for
registered kernels with two Laplace releases of one scale next to the reading one. The stratum
probabilities are exact (the noise law is the kernel's logged one: gray-box knowledge); the
rest is counting. Not for callables (no logged releases), not for δ > 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dpaudit.auditing.exact import frozen_run, horizon_of
from dpaudit.auditing.importance import NotApplicable
from dpaudit.simulation.simulate import LAPLACE
from dpaudit.statistics.stats import cp_lower, cp_upper

if TYPE_CHECKING:
    from dpaudit.algorithms.spec import AlgorithmSpec, Prepared
    from dpaudit.data.tables import NeighbourPair

WIDE, WIDE_RUNS = 30.0, 4000        # first pilot: Δ uniform over ± WIDE scales, per table
NARROW, NARROW_RUNS = 0.05, 4000    # second: ± NARROW scales around the chosen t
COND_SHARE = 0.025                  # of the runs, per table, drawn in the stratum
ALPHA_COND = 1 / 40                 # α₁ = α₂ = this × α; the floor's α₃ takes the rest
EVENTS = 8                          # transcripts the pilot compares per candidate


def diff_logsf(c: np.ndarray | float, b: float) -> np.ndarray:
    """The log-probability ln P(L₁ − L₀ > c) for independent L ~ Lap(b), any real c (no underflow far out).

    Args:
        c: thresholds, any shape.
        b: the Laplace scale (> 0).

    Returns:
        float64 array of c's shape: (2 + |c|/b)·e^(−|c|/b)/4 for c ≥ 0, one minus it below.
    """
    c = np.asarray(c, dtype=float)
    x = np.abs(c) / b
    s = np.log1p(x / 2.0) - math.log(2.0) - x
    return np.where(c >= 0, s, np.log1p(-np.exp(s)))


def diff_logpdf(w: np.ndarray, b: float) -> np.ndarray:
    """The log-density of L₁ − L₀ (L ~ Lap(b) independent): (1 + |w|/b)·e^(−|w|/b)/(4b).

    Args:
        w: points, any shape.
        b: the Laplace scale (> 0).

    Returns:
        float64 array of w's shape.
    """
    x = np.abs(np.asarray(w, dtype=float)) / b
    return np.log1p(x) - x - math.log(4 * b)


def _given_difference(a: np.ndarray, b: float, rng: np.random.Generator) -> np.ndarray:
    """Draws of L₀ given L₁ − L₀ = a (L ~ Lap(b)), one per entry of a.

    Uniform between −a and 0 w.p. |a|/(|a| + b), else an Exp(b/2) beyond either end (the
    density ∝ e^(−(|x| + |x + a|)/b)).
    """
    lo, hi = np.minimum(0.0, -a), np.maximum(0.0, -a)
    u = rng.random(a.shape)
    inner = u < np.abs(a) / (np.abs(a) + b)
    tail = rng.exponential(b / 2, a.shape)
    left = rng.random(a.shape) < 0.5
    x = np.where(left, lo - tail, hi + tail)
    return np.where(inner, lo + rng.random(a.shape) * (hi - lo), x)


def draw_given(c: float, b: float, n: int, rng: np.random.Generator) -> tuple:
    """Exact draws (n) of independent L₀, L₁ ~ Lap(b) given L₁ − L₀ > c.

    Beyond c ≥ 0 the difference is c + Exp(b) w.p. (1 + c/b)/(2 + c/b), else c + Gamma(2, b);
    below 0 it is drawn by rejection (acceptance ≥ ½). L₀ given the difference:
    :func:`_given_difference`.

    Args:
        c: the threshold on L₁ − L₀.
        b: the scale (> 0).
        n: draws.
        rng: the generator.

    Returns:
        (L₀, L₁), float64 arrays (n,).
    """
    if c >= 0:
        x = c / b
        first = rng.random(n) < (1 + x) / (2 + x)
        w = c + np.where(first, rng.exponential(b, n), rng.gamma(2.0, b, n))
    else:
        w = np.empty(0)
        while w.size < n:
            z = rng.laplace(0.0, b, (2, 2 * (n - w.size) + 8))
            d = z[1] - z[0]
            w = np.concatenate([w, d[d > c]])
        w = w[:n]
    l0 = _given_difference(w, b, rng)
    return l0, l0 + w


@dataclass(frozen=True)
class Stratum:
    """C = {sign·(y_j − y_h) > t} on the released values of releases h and j (Laplace, scale b)."""

    h: int
    j: int
    sign: int
    t: float
    b: float

    def noise_threshold(self, v: tuple) -> float:
        """The threshold on s·(L_j − L_h) that C sets on a table.

        Args:
            v: the table's exact values (v_h, v_j).

        Returns:
            t − s·(v_j − v_h).
        """
        return self.t - self.sign * (v[1] - v[0])

    def logmass(self, v: tuple) -> float:
        """The log-mass ln π_T of the stratum on a table.

        Args:
            v: the table's exact values (v_h, v_j).

        Returns:
            ln P(C), closed-form (:func:`diff_logsf`).
        """
        return float(diff_logsf(self.noise_threshold(v), self.b))

    def delta(self, rel: np.ndarray) -> float:
        """Δ of a run.

        Args:
            rel: the run's release log, float (n, 8).

        Returns:
            s·(y_j − y_h) on the released values; −inf when the run stopped before both.
        """
        if rel.shape[0] <= max(self.h, self.j):
            return -math.inf
        return self.sign * (float(rel[self.j, 5]) - float(rel[self.h, 5]))


class _Table:
    """One table of the pair: its kernel runs, with release h and j's exact values checked."""

    def __init__(self, spec: AlgorithmSpec, prep: Prepared, table: np.ndarray, v: tuple,
                 limit: int) -> None:
        self.spec, self.prep, self.table, self.v, self.limit = spec, prep, table, v, limit

    def _check(self, rel: np.ndarray, st: Stratum) -> None:
        n = rel.shape[0]
        if n > max(st.h, st.j) and (rel[st.h, 4] != self.v[0] or rel[st.j, 4] != self.v[1]
                                    or rel[st.h, 6] != st.b or rel[st.j, 6] != st.b):
            raise NotApplicable(f"{self.spec.name}: releases {st.h} and {st.j} changed their "
                                "exact values or scale between runs (they depend on earlier "
                                "randomness): their stratum has no fixed probability")

    def plain(self, st: Stratum, runs: int, rng: np.random.Generator) -> tuple[list, np.ndarray]:
        """``runs`` runs of the kernel's own law: (transcripts, Δ per run)."""
        keys, deltas = [], np.empty(runs)
        for i in range(runs):
            key, rel = frozen_run(self.spec, self.prep, self.table, self.limit, np.zeros(0), rng)
            self._check(rel, st)
            keys.append(key)
            deltas[i] = st.delta(rel)
        return keys, deltas

    def given(self, st: Stratum, noise: tuple, rng: np.random.Generator) -> list:
        """Runs whose releases h and j carry the given noise (L_h, L_j), arrays (n,)."""
        first = min(st.h, st.j)
        keys = []
        for lh, lj in zip(*noise):
            prefix = np.zeros(0)
            if first > 0:
                _, rel = frozen_run(self.spec, self.prep, self.table, self.limit, np.zeros(0),
                                    rng)
                prefix = rel[:first, 5].copy()
            pair = [self.v[0] + lh, self.v[1] + lj]
            frozen = np.append(prefix, pair if st.h < st.j else pair[::-1])
            key, rel = frozen_run(self.spec, self.prep, self.table, self.limit, frozen, rng)
            if rel.shape[0] <= max(st.h, st.j):
                raise NotApplicable(f"{self.spec.name}: a run stopped before releases {st.h} "
                                    f"and {st.j}")
            self._check(rel, st)
            keys.append(key)
        return keys

    def at(self, st: Stratum, deltas: np.ndarray, rng: np.random.Generator) -> list:
        """Runs with Δ fixed per run (the pilot): L_h given the difference, exactly."""
        w = deltas - st.sign * (self.v[1] - self.v[0])     # s·(L_j − L_h)
        lh = _given_difference(st.sign * w, st.b, rng)
        return self.given(st, (lh, lh + st.sign * w), rng)

    def in_stratum(self, st: Stratum, runs: int, rng: np.random.Generator) -> list:
        """``runs`` runs drawn from the kernel's law given C."""
        l0, l1 = draw_given(st.noise_threshold(self.v), st.b, runs, rng)   # s·L_j − s·L_h
        lh, lj = (l0, l1) if st.sign > 0 else (-l0, -l1)
        return self.given(st, (lh, lj), rng)


def _setup(spec: AlgorithmSpec, prep: Prepared, tables: tuple, limit: int,
           rng: np.random.Generator) -> list:
    """The candidate strata (t unset), each with both tables' exact values (v_h, v_j)."""
    N, D = tables
    _, rel = frozen_run(spec, prep, N, limit, np.zeros(0), rng)
    _, rel_p = frozen_run(spec, prep, D, limit, rel[:, 5].copy(), rng)
    n = min(rel.shape[0], rel_p.shape[0])
    diff = np.flatnonzero(rel[:n, 4] != rel_p[:n, 4])
    if not diff.size:
        raise NotApplicable(f"{spec.name}: no release reads the changed entry on this pair")
    h = int(diff[0])
    if not rel[h, 6] > 0:
        raise NotApplicable(f"{spec.name}: the release reading the changed entry has no noise "
                            "(scale 0): its loss is unbounded, nothing to stratify")
    if int(rel[h, 7]) != LAPLACE or int(rel_p[h, 7]) != LAPLACE or rel[h, 6] != rel_p[h, 6]:
        raise NotApplicable(f"{spec.name}: the release reading the changed entry is not a "
                            "Laplace release of one scale on both tables")
    cands = []
    for j in (h - 1, h + 1):
        if 0 <= j < n and int(rel[j, 7]) == LAPLACE and rel[j, 6] == rel[h, 6] \
                and rel[j, 4] == rel_p[j, 4]:
            v = [(float(r[h, 4]), float(r[j, 4])) for r in (rel, rel_p)]
            cands += [(Stratum(h, j, s, 0.0, float(rel[h, 6])), v) for s in (1, -1)]
    if not cands:
        raise NotApplicable(f"{spec.name}: no Laplace release of the reading release's scale "
                            "next to it to stratify on")
    return cands


@dataclass(frozen=True)
class _Pilot:
    """Pilot runs at Δ drawn uniformly over windows, on both tables."""

    deltas: np.ndarray      # Δ per run
    keys: tuple             # (transcripts on N, transcripts on D), aligned with deltas
    windows: tuple          # (centre, half width, runs) per stage

    def density(self) -> np.ndarray:
        """The draws' density at each Δ: the stages' uniforms, weighted by their runs."""
        dens = np.zeros(self.deltas.size)
        for c, half, n in self.windows:
            dens += (np.abs(self.deltas - c) <= half) * (n / self.deltas.size) / (2 * half)
        return dens

    def more(self, tabs: tuple, st: Stratum, window: tuple, rng: np.random.Generator) -> _Pilot:
        """This pilot and ``window[2]`` runs more at Δ uniform on centre ± half."""
        c, half, n = window
        deltas = c + half * (2 * rng.random(n) - 1)
        keys = tuple(list(old) + t.at(st, deltas, rng) for old, t in zip(self.keys, tabs))
        return _Pilot(np.concatenate([self.deltas, deltas]), keys, self.windows + (window,))


def _forecast(st: Stratum, v: list, pilot: _Pilot, event: tuple, sizes: tuple,
              alpha: float) -> tuple[float, float]:
    """The bound's forecast at each threshold t among the pilot's Δ: (the best, its t).

    Each table's P(E | Δ > t) and P(E | Δ ≤ t) are the pilot's self-normalised estimates
    (weights: Δ's exact density over the draws'), times the exact π_T(t) and 1 − π_T(t); each
    Clopper–Pearson bound is taken as its normal width: a forecast to choose by, never a bound.
    """
    order = np.argsort(pilot.deltas)
    d = pilot.deltas[order]
    dens = pilot.density()[order]
    n_cond, n_plain = sizes
    a1, a3 = ALPHA_COND * alpha, (1 - 2 * ALPHA_COND) * alpha
    est = []
    for keys, vv in zip(pilot.keys, v):
        shift = st.sign * (vv[1] - vv[0])
        w = np.exp(diff_logpdf(d - shift, st.b)) / dens
        hit = np.fromiter((keys[k] == event for k in order), dtype=bool, count=d.size)
        up_w, up_h = (np.cumsum(x[::-1])[::-1] for x in (w, w * hit))     # over Δ ≥ d_i
        lo_w, lo_h = np.cumsum(w) - w, np.cumsum(w * hit) - w * hit      # over Δ < d_i
        pi = np.exp(diff_logsf(d - shift, st.b))
        est.append((pi, up_h / np.maximum(up_w, 1e-300),
                    (1 - pi) * lo_h / np.maximum(lo_w, 1e-300)))
    (pi_n, q_n, _), (pi_d, q_d, out_d) = est
    t1, t3 = math.log(1 / a1), math.log(1 / a3)
    num = pi_n * np.clip(q_n - np.sqrt(2 * t1 * q_n * (1 - q_n) / n_cond), 0, 1)
    den = (pi_d * np.minimum(q_d + np.sqrt(2 * t1 * q_d * (1 - q_d) / n_cond) + t1 / n_cond, 1)
           + out_d + np.sqrt(2 * t3 * out_d / n_plain) + t3 / n_plain)
    with np.errstate(divide="ignore"):
        f = np.where(num > 0, np.log(num / den), -np.inf)
    i = int(np.argmax(f))
    return float(f[i]), float(np.nextafter(d[i], -np.inf))   # C starts at that run's Δ


def _events(pilot: _Pilot, v: list, st: Stratum) -> list:
    """The pilot's transcripts of N with the largest weighted ratio N : D (:data:`EVENTS`)."""
    mass = []
    for keys, vv in zip(pilot.keys, v):
        w = np.exp(diff_logpdf(pilot.deltas - st.sign * (vv[1] - vv[0]), st.b))
        m: dict = {}
        for k, x in zip(keys, w):
            m[k] = m.get(k, 0.0) + x
        mass.append(m)
    ratio = {k: x / mass[1].get(k, 0.0) if mass[1].get(k, 0.0) > 0 else math.inf
             for k, x in mass[0].items()}
    return sorted(ratio, key=lambda k: -ratio[k])[:EVENTS]


@dataclass(frozen=True)
class Stratified:
    """What :func:`stratified_bound` spends.

    Attributes:
        runs: runs per table (the pilot's and both measurements').
        seed: an int or a SeedSequence.
        alpha: the bound holds at confidence 1 − α.
    """

    runs: int
    seed: int | np.random.SeedSequence
    alpha: float = 0.05


def stratified_bound(spec: AlgorithmSpec, prep: Prepared, pair: NeighbourPair,
                     ask: Stratified) -> dict:
    """A lower bound on the transcript's pure privacy loss on a pair, by stratified sampling.

    Args:
        spec: a registered algorithm.
        prep: its prepared arrays (at the claimed ε).
        pair: the neighbouring pair; runs are cut at its table's horizon.
        ask: runs, seed and level (:class:`Stratified`).

    Returns:
        JSON-ready: ``eps_lower``, ``alpha``, ``direction`` (the numerator: ``d`` or
        ``d_prime``), ``stratum`` (h, j, sign, t, the log-masses on N and D), ``forecast``,
        ``counts`` (in the stratum on N and on D, and the event outside it among the kernel's
        own runs on D, each [hits, runs]), ``p_lower``, ``p_prime_upper``, ``runs`` per table,
        ``pilot_runs`` per table and ``method``.

    Raises:
        NotApplicable: no Laplace release of one scale next to the reading one, or their exact
            values depend on earlier randomness (module doc).
    """
    alpha, runs = ask.alpha, ask.runs
    d = np.ascontiguousarray(pair.d, dtype=np.float64)
    dp = np.ascontiguousarray(pair.d_prime, dtype=np.float64)
    limit = horizon_of(d, spec.model)
    root = (ask.seed if isinstance(ask.seed, np.random.SeedSequence)
            else np.random.SeedSequence(ask.seed))
    s_pilot, s_meas = root.spawn(2)
    rng = np.random.default_rng(s_pilot)
    n_cond = max(int(COND_SHARE * runs), 1)
    setups = [(name, tables, _setup(spec, prep, tables, limit, rng))
              for name, tables in (("d", (d, dp)), ("d_prime", (dp, d)))]
    pilot_runs = sum(len(c) for *_, c in setups) * WIDE_RUNS + NARROW_RUNS
    n_plain = runs - n_cond - pilot_runs
    if n_plain < 1000:
        raise NotApplicable(f"runs={runs} leave no room for the stratified measurement: give "
                            f"at least {pilot_runs + n_cond + 1000} runs per table")
    best = None
    for name, tables, cands in setups:
        for st, v in cands:
            tabs = tuple(_Table(spec, prep, t, vv, limit) for t, vv in zip(tables, v))
            window = (st.sign * (v[0][1] - v[0][0]), WIDE * st.b, WIDE_RUNS)
            pilot = _Pilot(np.zeros(0), ([], []), ()).more(tabs, st, window, rng)
            for event in _events(pilot, v, st):
                f, t = _forecast(st, v, pilot, event, (n_cond, n_plain), alpha)
                if best is None or f > best[0]:
                    best = (f, t, event, name, st, v, tabs, pilot)
    _, t, event, name, st, v, tabs, pilot = best
    pilot = pilot.more(tabs, st, (t, NARROW * st.b, NARROW_RUNS), rng)
    forecast, t = _forecast(st, v, pilot, event, (n_cond, n_plain), alpha)
    st = Stratum(st.h, st.j, st.sign, t, st.b)
    g_n, g_d, g_plain = (np.random.default_rng(s) for s in s_meas.spawn(3))
    k_n = sum(k == event for k in tabs[0].in_stratum(st, n_cond, g_n))
    k_d = sum(k == event for k in tabs[1].in_stratum(st, n_cond, g_d))
    keys, deltas = tabs[1].plain(st, n_plain, g_plain)
    k_out = sum(k == event and x <= t for k, x in zip(keys, deltas))
    a1, a3 = ALPHA_COND * alpha, (1 - 2 * ALPHA_COND) * alpha
    log_n, log_d = st.logmass(v[0]), st.logmass(v[1])
    lo = math.exp(log_n) * float(cp_lower(k_n, n_cond, a1))
    hi = math.exp(log_d) * float(cp_upper(k_d, n_cond, a1)) + float(cp_upper(k_out, n_plain, a3))
    eps = max(math.log(lo / hi), 0.0) if lo > 0 else 0.0
    return {"eps_lower": eps, "alpha": alpha, "direction": name,
            "stratum": {"h": st.h, "j": st.j, "sign": st.sign, "t": t, "scale": st.b,
                        "log_mass": log_n, "log_mass_prime": log_d},
            "forecast": forecast,
            "counts": {"in_stratum": [int(k_n), n_cond], "in_stratum_prime": [int(k_d), n_cond],
                       "outside_prime": [int(k_out), n_plain]},
            "p_lower": lo, "p_prime_upper": hi, "runs": runs, "pilot_runs": pilot_runs,
            "method": "stratified on two Laplace releases of one phase: the stratum's mass "
                      "exact from the logged noise law, the rest Clopper-Pearson (levels "
                      f"{a1:g}, {a1:g}, {a3:g})"}
