"""The gate's rise test on the suite's own stored events: its real size, the rise it detects,
and how far each passing entry sits from the pass rule.

    python benchmarks/gate_size.py [--baseline audits/baseline.json] [--draws 20000000]
                                   [--json benchmarks/figures/gate_size.json]

For every event the gate re-measures (docs/guide/gate.md), with its stored fixed-n counts
(k_num, k_den on n runs per side) taken as the true probabilities p_num = k_num/n, p_den =
k_den/n:

1. **real size**: ``--draws`` pairs of independent measurements of an unchanged algorithm
   (four binomials of n runs: old and new, numerator and denominator) through
   :func:`dpaudit.statistics.stats.rise_z`; the share that rejects at the baseline's α_i, with its
   95 %
   Clopper–Pearson interval, against α_i. (An asymptotic test: this is its size measured,
   the gate's union bound uses it.)
2. **detectable rise**: the rise r of the log ratio (the numerator's probability times e^r)
   that the test detects at α_i with power 0.95, found by bisection on 20 000 seeded draws
   (common random numbers, so the power is monotone in r).
3. **distance from the pass rule** of each passing entry: its stored ε_ub over (1 + margin)·ε.
   A moved random stream flips such an entry to inconclusive with the probability that the
   bound lands above 1 (not bounded by α).
"""
import argparse
import json
import os
import time

import numpy as np
from scipy.stats import beta as beta_dist
from scipy.stats import binom, norm

from dpaudit.statistics.stats import rise_z
from dpaudit.verdicts.result import write_json_atomic

CHUNK = 1_000_000
POWER, POWER_DRAWS = 0.95, 20_000


def cp(k, n, level=0.95):
    """Two-sided Clopper–Pearson interval for k successes in n trials."""
    a = (1 - level) / 2
    lo = beta_dist.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = beta_dist.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def real_size(n, p_num, p_den, alpha, draws, rng):
    """Share of unchanged-algorithm re-measurements that the rise test rejects at ``alpha``."""
    crit, rejects = norm.isf(alpha), 0
    for start in range(0, draws, CHUNK):
        m = min(CHUNK, draws - start)
        a, b, c, d = (rng.binomial(n, p, m) for p in (p_num, p_den, p_num, p_den))
        rejects += int(np.count_nonzero(rise_z((a, n, b, n), (c, n, d, n)) >= crit))
    return rejects


def detectable_rise(n, p_num, p_den, alpha, rng):
    """The smallest rise r of ln(p_num/p_den) detected with power :data:`POWER`, and the
    power measured there."""
    crit = norm.isf(alpha)
    a, b, d = (rng.binomial(n, p, POWER_DRAWS) for p in (p_num, p_den, p_den))
    u = rng.random(POWER_DRAWS)

    def power(r):
        c = binom.ppf(u, n, min(1.0, p_num * np.exp(r)))
        return float(np.mean(rise_z((a, n, b, n), (c, n, d, n)) >= crit))

    lo, hi = 0.0, min(1.0, np.log(1 / p_num))
    if power(hi) < POWER:
        return None, power(hi)
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if power(mid) < POWER else (lo, mid)
    return hi, power(hi)


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--baseline", default=os.path.join(here, "..", "audits", "baseline.json"))
    ap.add_argument("--draws", type=int, default=20_000_000)
    ap.add_argument("--json", default=os.path.join(here, "figures", "gate_size.json"))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    with open(a.baseline) as f:
        base = json.load(f)
    alpha, margin = base["entry_alpha"], base["margin"]
    rng = np.random.default_rng(a.seed)
    rows, t0 = [], time.perf_counter()
    print(f"alpha_i = {alpha:.3g}, {a.draws} unchanged re-measurements per event\n")
    print("| entry | k_num | k_den | n | rejections | real size [95 % CI] | size / alpha_i "
          "| rise at 95 % power |\n|---|---|---|---|---|---|---|---|")
    for name, b in base["entries"].items():
        ev = b.get("event")
        if not ev or ev.get("counts") != "fixed-n" or ev["saturated"]:
            continue
        n, k_num, k_den = ev["runs"], ev["hits_num"], ev["hits_den"]
        rej = real_size(n, k_num / n, k_den / n, alpha, a.draws, rng)
        lo, hi = cp(rej, a.draws)
        rise, pw = detectable_rise(n, k_num / n, k_den / n, alpha, rng)
        rows.append({"entry": name, "hits_num": k_num, "hits_den": k_den, "runs": n,
                     "draws": a.draws, "rejections": rej, "real_size": rej / a.draws,
                     "real_size_ci95": [lo, hi], "alpha_i": alpha,
                     "rise_at_power_0.95": rise, "power_there": pw})
        print(f"| {name} | {k_num} | {k_den} | {n} | {rej} | {rej / a.draws:.3g} "
              f"[{lo:.3g}, {hi:.3g}] | {rej / a.draws / alpha:.2f} | "
              f"{'> 1' if rise is None else f'{rise:.4f}'} |", flush=True)
    pooled = sum(r["rejections"] for r in rows), a.draws * len(rows)
    plo, phi = cp(*pooled)
    print(f"\npooled: {pooled[0]}/{pooled[1]} = {pooled[0] / pooled[1]:.3g} [{plo:.3g}, "
          f"{phi:.3g}] = {pooled[0] / pooled[1] / alpha:.2f} alpha_i")
    passes = [{"entry": k, "eps_ub": b["eps_ub"], "eps": b["config"]["eps"],
               "ratio": b["eps_ub"] / ((1 + margin) * b["config"]["eps"])}
              for k, b in base["entries"].items() if b["verdict"] == "pass"]
    passes.sort(key=lambda r: -r["ratio"])
    print("\npassing entries, eps_ub / ((1 + margin) eps), largest first:")
    for r in passes:
        print(f"  {r['entry']}: {r['ratio']:.3f}")
    write_json_atomic(a.json, {
        "baseline": os.path.relpath(a.baseline, os.path.join(here, "..")), "alpha_i": alpha,
        "seed": a.seed, "events": rows,
        "pooled": {"rejections": pooled[0], "draws": pooled[1],
                   "real_size": pooled[0] / pooled[1], "ci95": [plo, phi]},
        "pass_distance": passes, "seconds": round(time.perf_counter() - t0, 1)})
    print(f"\n{time.perf_counter() - t0:.0f} s; written {a.json}")


if __name__ == "__main__":
    main()
