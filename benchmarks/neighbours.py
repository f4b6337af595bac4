"""Neighbour search benchmark: does the default search find the worst pair, and at what cost?

    python benchmarks/neighbours.py [--planted 20] [--blackbox] [--adap-tt 8] [--runs N]

1. **Planted worst position** (:mod:`dpaudit.calibrate.planted`): 256 rows, one (drawn per seed)
leaks
   ε = 1 and every other ε/4, claim ε/2. Prints how often the default search (default budget
   unless ``--runs``) returns the planted row, with a Clopper–Pearson interval, and the time
   per audit; ``--blackbox``: also for ``--neighbours blackbox`` (no white-box screen).
2. **AdaP-TT at ε = 0.5**: ε_lb and wall time of the default search and of the hand-written
   v1 candidates (``--neighbours structure``) on the same seeds, and their paired difference.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def planted(n_seeds: int, runs: int | None, strategy: str) -> None:
    from dpaudit.auditing.audit import audit_algorithm
    from dpaudit.calibrate.planted import planted_spec
    from dpaudit.statistics.stats import cp_lower, cp_upper
    found, times = 0, []
    for seed in range(n_seeds):
        row = int(np.random.default_rng(seed).integers(256))
        t = time.perf_counter()
        r = audit_algorithm(planted_spec(row), 0.5, seed=seed, runs=runs, neighbours=strategy,
                            whitebox_runs=0)
        times.append(time.perf_counter() - t)
        found += r.neighbours["changed_row"] == row and r.verdict == "violation"
    lo, hi = cp_lower(found, n_seeds, 0.025), cp_upper(found, n_seeds, 0.025)
    print(f"planted ({strategy}, runs={runs or 'default'}): found {found}/{n_seeds} "
          f"(95% CI [{float(lo):.3f}, {float(hi):.3f}]); {statistics.mean(times):.1f} s per "
          f"audit (max {max(times):.1f} s)", flush=True)


def adap_tt(n_seeds: int, runs: int | None) -> None:
    from dpaudit.auditing.audit import audit_algorithm
    out = {}
    for seed in range(1, n_seeds + 1):
        for strategy in ("structure", "search"):
            t = time.perf_counter()
            r = audit_algorithm("adap-tt", 0.5, seed=seed, runs=runs, neighbours=strategy)
            out[strategy, seed] = (r.eps_lb, time.perf_counter() - t)
            nb = r.neighbours
            print(f"adap-tt seed {seed} {strategy:9s}: eps_lb {r.eps_lb:.4f} in "
                  f"{out[strategy, seed][1]:.1f} s (row {nb['changed_row']}, "
                  f"{nb['base']['name']}, {nb['pattern']})", flush=True)
    for strategy in ("structure", "search"):
        lbs = [out[strategy, s][0] for s in range(1, n_seeds + 1)]
        ts = [out[strategy, s][1] for s in range(1, n_seeds + 1)]
        print(f"adap-tt {strategy:9s}: eps_lb mean {statistics.mean(lbs):.4f} "
              f"(sd {statistics.stdev(lbs):.4f}), time mean {statistics.mean(ts):.1f} s")
    diff = [out["search", s][0] - out["structure", s][0] for s in range(1, n_seeds + 1)]
    se = statistics.stdev(diff) / len(diff) ** 0.5
    print(f"adap-tt search - structure: mean {statistics.mean(diff):+.4f} (se {se:.4f})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--planted", type=int, default=20, help="seeds of the planted test")
    p.add_argument("--blackbox", action="store_true", help="also the black-box strategy")
    p.add_argument("--adap-tt", type=int, default=8, help="seeds of the AdaP-TT comparison")
    p.add_argument("--runs", type=int, default=None, help="measurement runs (default: default)")
    a = p.parse_args()
    if a.planted:
        planted(a.planted, a.runs, "search")
        if a.blackbox:
            planted(a.planted, a.runs, "blackbox")
    if a.adap_tt:
        adap_tt(a.adap_tt, a.runs)


if __name__ == "__main__":
    main()
