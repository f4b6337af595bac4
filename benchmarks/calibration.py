"""Calibration and power suite of the auditor (issue 3), on mechanisms of known privacy loss.

    python benchmarks/calibration.py [--audits 20] [--soundness 1000] [--workers 2]
                                     [--json calibration.json]

Prints three markdown tables (the README quotes them):

1. tightness: ε_lb/ε of the default audit (10^7 samples per side) of the Laplace mechanism,
   over ``--audits`` seeds per ε ∈ {0.1, 0.5, 1, 2}, with wall time (target ≥ 0.95 in ≤ 60 s);
2. soundness: false violations among ``--soundness`` small audits (2·10^4 samples per side)
   of the six correct mechanisms at α = 0.05, with a 95 % Clopper–Pearson interval (target:
   the rate's upper bound ≤ α);
3. power: the detection rate of every insufficient-noise mutant (noise × 0.5 ... 0.9) at the
   default budget over ``--audits`` audits each (target ≥ 90 % when the true loss ≥ 1.25 ε).
"""
import argparse
import json
import time

import numpy as np

from dpaudit.calibration import power, soundness, tightness
from dpaudit.result import write_json_atomic


def _ci(r):
    return f"{r['rate']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--audits", type=int, default=20)
    ap.add_argument("--soundness", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json")
    a = ap.parse_args()
    out = {}

    t0 = time.time()
    rows = tightness(seeds=tuple(range(1, a.audits + 1)))
    out["tightness"] = rows
    print("| ε | ε_lb/ε mean | min | max | seconds (max) |\n|---|---|---|---|---|")
    for e in sorted({r["eps"] for r in rows}):
        q = np.array([r["ratio"] for r in rows if r["eps"] == e])
        s = max(r["seconds"] for r in rows if r["eps"] == e)
        print(f"| {e:g} | {q.mean():.4f} (sd {q.std(ddof=1):.4f}) | {q.min():.4f} | "
              f"{q.max():.4f} | {s:.1f} |", flush=True)

    s = soundness(a.soundness, n=20_000, workers=a.workers)
    out["soundness"] = s
    print(f"\nsoundness: {s['overall']['k']} false violations in {s['overall']['n']} audits at "
          f"alpha = {s['alpha']}: rate {_ci(s['overall'])} (95 % CP)")
    print("| mechanism | audits | false violations |\n|---|---|---|")
    for f, r in s["by_family"].items():
        print(f"| {f} | {r['n']} | {r['k']} |", flush=True)

    rows = power(a.audits, workers=a.workers)
    out["power"] = rows
    print("\n| mechanism | noise × | true ε / claim | detected | rate [95 % CI] | median ε_lb | "
          "s per audit |\n|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['family']} | {r['factor']:g} | {r['ratio']:.3f} | {r['k']}/{r['n']} | "
              f"{_ci(r)} | {r['median_eps_lb']:.3f} | {r['mean_seconds']:.1f} |", flush=True)
    print(f"\ntotal {time.time() - t0:.0f} s")
    if a.json:
        write_json_atomic(a.json, json.loads(json.dumps(out, default=float)))


if __name__ == "__main__":
    main()
