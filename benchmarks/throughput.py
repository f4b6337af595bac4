"""Simulation throughput of every registered algorithm (steps/s and runs/s per core).

    python benchmarks/throughput.py [--seconds 3] [--eps 0.5]

Targets: adap-tt >= 2e7 steps/s per core on mu1 = (0.95, 0.9, 0.9, 0.9, 0.9, 0.5) at
eps = 0.5, risk = 0.01 (the public authors' NumPy code: ~7e4 steps/s on the same machine).
Every other algorithm: >= 1e7 steps/s per core (issues 5, 6).
"""
import argparse

from dpaudit.algorithms import registry
from dpaudit.simulation.bench import bench

TARGETS = {"adap-tt": 2e7}
DEFAULT_TARGET = 1e7

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--eps", type=float, default=0.5)
    a = ap.parse_args()
    print(f"{'algorithm':<24}{'steps/s':>12}{'runs/s':>10}{'target':>10}  status of runs")
    for spec in registry.all_specs():
        r = bench(spec.name, a.eps, seconds=a.seconds)
        target = TARGETS.get(spec.name, DEFAULT_TARGET)
        ok = "ok" if r["steps_per_s"] >= target else "BELOW"
        print(f"{spec.name:<24}{r['steps_per_s']:>12.3g}{r['runs_per_s']:>10.3g}"
              f"{target:>10.0e}  {ok}  {r['status']}", flush=True)
