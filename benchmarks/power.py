"""Power check of the detectable loss: is a loss the audit says it detects with probability
1 − β detected that often?

    python benchmarks/power.py [--audits 500] [--workers 2] [--json benchmarks/figures/power.json]

For each configuration (claim ε, δ; the event's probability p on the denominator side; n
measurement samples per side):

1. **reference audit** (seed 0) of a mechanism whose loss on its event is exactly ε: a biased
   coin with P(1 | d) = e^ε·p + δ and P(1 | d′) = p. Its result states ``detectable_loss``
   L* at power 1 − β, computed from its own counts;
2. **planted loss**: ``--audits`` audits (seeds 1, 2, ...) of the same coin with true loss L*
   (P(1 | d) = e^L*·p + δ), each with the same budget and α. The violation rate, with its 95 %
   Clopper–Pearson interval, should be ≥ 1 − β up to sampling error: L* is a lower bound on
   the power of a design, so the rate may exceed it.

Also printed: the power that :class:`dpaudit.statistics.stats.PowerCurve` gives at the *true* p (the
reference's L* was computed at p estimated from its counts).

Checkpointed: each finished configuration is written to ``--json`` at once; a rerun skips the
configurations already there (delete the file to start afresh).
"""
import argparse
import functools
import json
import math
import os
import time

import numpy as np

from dpaudit.auditing.mechanism import audit_mechanism
from dpaudit.calibrate.calibration import rate
from dpaudit.core import executor
from dpaudit.statistics.measure import design
from dpaudit.statistics.stats import PowerCurve
from dpaudit.verdicts.result import write_json_atomic

# (claim ε, claim δ, p = P(event | d′), n samples per side)
CONFIGS = ((0.5, 0.0, 0.1, 100_000), (1.0, 0.0, 0.02, 200_000), (0.25, 0.0, 0.3, 1_000_000),
           (1.0, 1e-3, 0.05, 100_000))
ALPHA, BETA = 0.05, 0.05


def coin(rng, data, n, p_d, p_d_prime):
    """The planted mechanism: 1 with probability p_d on d = [0], p_d_prime on d′ = [1]."""
    return (rng.random(n) < (p_d if int(data[0]) == 0 else p_d_prime)).astype(np.int64)


def audit(args):
    """One audit of the coin with loss ``loss`` on {1}; (verdict, detectable_loss, event)."""
    eps, delta, p, n, loss, seed = args
    mech = functools.partial(coin, p_d=min(1.0, math.exp(loss) * p + delta), p_d_prime=p)
    r = audit_mechanism(mech, [0], [1], eps=eps, delta=delta, alpha=ALPHA, n=n, seed=seed,
                        beta=BETA, name="coin")
    return r.verdict, r.detectable_loss, r.event.get("text", "")


def key(cfg) -> str:
    return "eps={:g} delta={:g} p={:g} n={}".format(*cfg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--audits", type=int, default=500)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "figures",
                                                   "power.json"))
    a = ap.parse_args()
    done = {}
    if os.path.exists(a.json):
        with open(a.json) as f:
            done = json.load(f).get("configs", {})
    print(f"nominal power 1 - beta = {1 - BETA}, alpha = {ALPHA}, {a.audits} audits per row\n")
    print("| ε | δ | p | n | detectable loss L* (reference) | power at true p | violations "
          "| rate [95 % CI] | s |\n|---|---|---|---|---|---|---|---|---|")
    for cfg in CONFIGS:
        eps, delta, p, n = cfg
        row = done.get(key(cfg))
        if row is None or row["audits"] != a.audits:
            t0 = time.time()
            verdict, loss, event = audit((eps, delta, p, n, eps, 0))
            # the planned design: finalists = 1 (audit_mechanism)
            sizes, levels = design(n, ALPHA)
            curve = PowerCurve(p, sizes, eps, levels, delta)
            rows = list(executor.map_tasks(audit, [(eps, delta, p, n, loss, s)
                                                   for s in range(1, a.audits + 1)],
                                           a.workers))
            k = sum(v == "violation" for v, _, _ in rows)
            row = {"eps": eps, "delta": delta, "p": p, "n": n, "audits": a.audits,
                   "reference": {"verdict": verdict, "event": event},
                   "detectable_loss": loss, "power_at_true_p": curve.power(loss),
                   "violations": rate(k, a.audits), "seconds": time.time() - t0}
            done[key(cfg)] = row
            write_json_atomic(a.json, {"alpha": ALPHA, "beta": BETA, "configs": done})
        v = row["violations"]
        print(f"| {eps:g} | {delta:g} | {p:g} | {n} | {row['detectable_loss']:.4f} | "
              f"{row['power_at_true_p']:.3f} | {v['k']}/{v['n']} | {v['rate']:.3f} "
              f"[{v['ci'][0]:.3f}, {v['ci'][1]:.3f}] | {row['seconds']:.0f} |",
              flush=True)


if __name__ == "__main__":
    main()
