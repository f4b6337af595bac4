"""Small δ by importance sampling: the (ε, δ) lower bound at δ = 10⁻⁵ against the exact ε(δ).

    python benchmarks/small_delta.py [--runs 1000000] [--seed 1]
                                     [--json benchmarks/figures/small_delta.json]

Cases, each with its exact ε(δ) from a closed form computed here:

* ``gaussian-release``: one classically calibrated Gaussian release, σ = √(2 ln(1.25/δ)) at
  ε = 1, sensitivity 1 (Balle and Wang 2018, arXiv:1805.06530, Thm. 8: exact ε(10⁻⁵) = 0.751);
  tilted runs of :mod:`dpaudit.statistics.tilted` on the event y > c, c chosen on a pilot
  grid by the pilot's own bound (1/4 of the runs), measured on the rest (per side).
* ``dp-bai-gauss-k2``: DP-BAI-GAUSS (Chen et al. 2024, arXiv:2401.09073, Algorithm 2) at
  ε = 1, δ = 10⁻⁵ on two arms (identity features, T = 140: one phase of 69 pulls per arm,
  one Gaussian release per arm, the larger recommended), arm 0 with 44 ones against arm 1's
  69, the pair changing arm 0's next pull 1 → 0. Its transcript's law is closed-form
  (P(recommend 0) = Φ((μ̂₀ − μ̂₁)/(σ√2))): exact ε(10⁻⁵) = 0.514, on an event of mass
  2.3·10⁻⁴. :func:`dpaudit.auditing.importance.small_delta` with ``--runs`` weighted runs per
  direction (a quarter pilots the event and each side's tilt).
* ``dp-bai-gauss-default``: the pair ``dpaudit run --algo dp-bai-gauss --eps 1 --delta 1e-5
  --seed 1`` audits (its instance search picks features 1,0;0,1;0.5,0;0,0.5;0.25,0, means
  0.9,0.7,0.7,0.6,0.6, T = 9: 5 × 8 stream tables, arm 0 all ones, its pull 3 changed 0 → 1).
  Exact ε(10⁻⁵): the certified bounds of :func:`dpaudit.auditing.exact.exact_privacy` (two
  Gaussian releases read the first 8 samples); the ratio is against their upper end.

Printed per case: the exact ε(δ), the lower bound at 95 %, their ratio, the runs and the
seconds. Checkpointed: each finished case is written to ``--json`` at once; a rerun skips
cases already there (same runs and seed).
"""
import argparse
import json
import math
import os
import time

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from dpaudit.algorithms import registry
from dpaudit.auditing import exact, importance
from dpaudit.data.tables import NeighbourPair
from dpaudit.statistics.tilted import Tilt, delta_bounds
from dpaudit.verdicts.result import write_json_atomic

DELTA, ALPHA = 1e-5, 0.05
SIGMA = math.sqrt(2 * math.log(1.25 / DELTA))


def gaussian_release(runs: int, seed: int) -> dict:
    """One release N(1, σ²) against N(0, σ²): event y > c, c from a pilot grid."""
    mu = 1 / SIGMA

    def delta_at(e: float) -> float:
        return norm.cdf(mu / 2 - e / mu) - math.exp(e) * norm.cdf(-mu / 2 - e / mu)

    eps_exact = brentq(lambda e: delta_at(e) - DELTA, 0, 5)
    t = Tilt("gaussian", SIGMA, eps_exact, importance.RHO_NUM, "numerator")
    tp = Tilt("gaussian", SIGMA, eps_exact, importance.RHO_DEN, "denominator")
    highs = (t.max_weight, tp.max_weight)
    rng = np.random.default_rng(seed)
    pilot, meas = runs // 4, runs - runs // 4

    def side(tilt: Tilt, n: int) -> tuple:
        v, vp = np.ones(n), np.zeros(n)
        y = tilt.draw(rng, v, vp)
        return y, tilt.weight(y, v, vp)

    (y, w), (yp, wp) = side(t, pilot), side(tp, pilot)
    grid = np.linspace(10, 20, 41)          # the pilot's own bound, not its plug-in loss, which
    loss = [delta_bounds(w * (y > c), wp * (yp > c), eps_exact, DELTA, highs,    # overfits the
                         ALPHA).eps_lower for c in grid]                           # far tail
    c = float(grid[int(np.argmax(loss))])
    (y, w), (yp, wp) = side(t, meas), side(tp, meas)
    b = delta_bounds(w * (y > c), wp * (yp > c), eps_exact, DELTA, highs, ALPHA)
    return {"eps_exact": eps_exact, "eps_lower": b.eps_lower, "event": f"y > {c:g}"}


def dp_bai_gauss_k2(runs: int, seed: int) -> dict:
    """DP-BAI-GAUSS on two arms (module doc)."""
    spec = registry.get("dp-bai-gauss")
    p, _ = spec.resolve_claim({"features": "identity", "means": "0.6,0.4", "horizon": "140"},
                              DELTA)
    prep = spec.prepare(1.0, p)
    H = spec.audit_horizon(p)
    n = H // 2
    base = np.zeros((2, H))
    base[1] = 1.0
    base[0, :44] = 1.0
    pair = NeighbourPair.change("stream", base, (0, 44), 1.0, 0.0, {}, "benchmark")
    sigma = exact.frozen_run(spec, prep, pair.d, H, np.zeros(0), 1)[1][0, 6]

    def law(table: np.ndarray) -> np.ndarray:
        p0 = norm.cdf((table[0, :n].mean() - table[1, :n].mean()) / (sigma * math.sqrt(2)))
        return np.array([p0, 1 - p0])

    eps_exact = exact.eps_at_delta(law(pair.d), law(pair.d_prime), DELTA)
    r = importance.small_delta(spec, prep, pair, importance.SmallDelta(DELTA, runs, seed, ALPHA))
    return {"eps_exact": eps_exact, "eps_lower": r["eps_lower"], "detail": r}


def dp_bai_gauss_default(runs: int, seed: int) -> dict:
    """DP-BAI-GAUSS on the default command's audited pair (module doc)."""
    spec = registry.get("dp-bai-gauss")
    p, _ = spec.resolve_claim({"features": "1,0;0,1;0.5,0;0,0.5;0.25,0",
                               "means": "0.9,0.7,0.7,0.6,0.6", "horizon": "9"}, DELTA)
    prep = spec.prepare(1.0, p)
    base = np.zeros((5, 8))
    base[0] = 1.0
    pair = NeighbourPair.change("stream", base, (0, 3), 0.0, 1.0, {}, "benchmark")
    x = exact.exact_privacy(spec, prep, pair, 1.0, DELTA)
    r = importance.small_delta(spec, prep, pair, importance.SmallDelta(DELTA, runs, seed, ALPHA))
    return {"eps_exact": x["eps_exact"], "eps_exact_bounds": x["eps_exact_bounds"],
            "eps_lower": r["eps_lower"], "detail": r}


CASES = {"gaussian-release": gaussian_release, "dp-bai-gauss-k2": dp_bai_gauss_k2,
         "dp-bai-gauss-default": dp_bai_gauss_default}


def main() -> None:
    """Run the cases not yet in ``--json`` and print every case's figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default="benchmarks/figures/small_delta.json")
    a = ap.parse_args()
    done = json.load(open(a.json)) if os.path.exists(a.json) else {}
    for name, case in CASES.items():
        key = f"{name} runs={a.runs} seed={a.seed}"
        if key not in done:
            t0 = time.perf_counter()
            out = case(a.runs, a.seed)
            done[key] = {**out, "runs": a.runs, "seconds": round(time.perf_counter() - t0, 1)}
            write_json_atomic(a.json, done)
        r = done[key]
        print(f"{key}: exact eps({DELTA:g}) = {r['eps_exact']:.4f}, lower bound at "
              f"{1 - ALPHA:.0%} = {r['eps_lower']:.4f}, ratio {r['eps_lower'] / r['eps_exact']:.3f}"
              f" ({r['seconds']} s)")


if __name__ == "__main__":
    main()
