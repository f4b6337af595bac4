"""Stopping times of the fixed-confidence algorithms on AdaP-TT's default instance: how many
runs never stop, and the quantiles of τ (docs/papers/azize2023.md).

    python benchmarks/stopping_times.py [--runs 1000] [--workers 2]
                                        [--json benchmarks/figures/stopping_times.json]

Instance μ1 = (0.95, 0.9, 0.9, 0.9, 0.9, 0.5) of Azize, Al Marjani, Jourdan and Basu (2023, arXiv:2309.02202, Section 5),
ε = 0.5, risk δ = 0.01, β = 1/2, fresh Bernoulli rewards. Every run goes until it stops or
reaches the cap of 2²⁶ samples (``max_steps``; such a run is *unstopped*). Configurations:
AdaP-TT as Algorithm 2 writes it (the faithful default: leader bonus k_a of eq. 22, threshold
of eq. 4), with the ln n bonus (option ``bonus=log``), with the ln n bonus and the draft code's
threshold (``threshold=heuristic``), TTUCB and DP-SE (the paper's baselines).

Printed per configuration: runs, unstopped share at 2²⁶ with its 95 % Clopper–Pearson interval,
the median, 90 % and 99 % quantiles of τ over *all* runs (an unstopped run counts as τ > 2²⁶,
so a quantile in that region prints as "> 2^26" and is null in the JSON), the mean τ of stopped runs and their wrong
recommendations. Deterministic for a seed whatever ``--workers``
(:func:`dpaudit.simulation.simulate.outcomes`). Checkpointed: each finished configuration is
written
to ``--json`` at once; a rerun skips configurations already there (same runs and seed).
"""
import argparse
import json
import math
import os
import time

import numpy as np

from dpaudit.algorithms import registry
from dpaudit.checks.correctness import cp_bounds
from dpaudit.simulation.simulate import outcomes
from dpaudit.simulation.simulate import STOPPED
from dpaudit.verdicts.result import write_json_atomic

CAP = 1 << 26
EPS = 0.5
CONFIGS = (("adap-tt", "faithful (bonus k_a, eq. 4 threshold)", {}),
           ("adap-tt", "bonus=log", {"bonus": "log"}),
           ("adap-tt", "bonus=log, threshold=heuristic", {"bonus": "log", "threshold": "heuristic"}),
           ("ttucb", "TTUCB", {}),
           ("dp-se", "DP-SE", {}))
QUANTILES = (0.5, 0.9, 0.99)


def order_quantile(tau: np.ndarray, q: float) -> float:
    """The q-quantile of τ as an order statistic (the ⌈q·n⌉-th smallest; inf = unstopped)."""
    s = np.sort(tau)
    return float(s[max(0, math.ceil(q * s.size) - 1)])


def measure(algo: str, params: dict, runs: int, seed: int, workers: int) -> dict:
    spec = registry.get(algo)
    p = spec.resolve_params({**params, "max_steps": CAP})
    prep = spec.prepare(EPS, p)
    t0 = time.perf_counter()
    tau, rec, status = outcomes(spec.fresh_request(prep, runs, seed, CAP), workers)
    stopped = status == STOPPED
    tau_all = np.where(stopped, tau.astype(float), np.inf)
    lo, hi = cp_bounds(int((~stopped).sum()), runs, 0.025)
    best = int(np.argmax(prep.means))
    return {"algorithm": algo, "params": params, "eps": EPS, "means": list(prep.means),
            "runs": runs, "seed": seed, "cap": CAP, "unstopped": int((~stopped).sum()),
            "unstopped_share": float((~stopped).mean()), "unstopped_ci95": [lo, hi],
            "quantiles": {f"{round(q * 100)}%": _finite(order_quantile(tau_all, q))
                          for q in QUANTILES},
            "mean_stopped": float(tau[stopped].mean()) if stopped.any() else None,
            "wrong_recommendations": int((rec[stopped] != best).sum()),
            "seconds": time.perf_counter() - t0}


def _finite(x: float) -> float | None:
    """A quantile for the JSON: None where it falls among the unstopped runs (τ > the cap)."""
    return None if math.isinf(x) else x


def _shown(x: float | None) -> str:
    return "> 2^26" if x is None else f"{x:.4g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "figures",
                                                   "stopping_times.json"))
    a = ap.parse_args()
    done = {}
    if os.path.exists(a.json):
        with open(a.json) as f:
            done = {r["label"]: r for r in json.load(f)["configs"]
                    if r["runs"] == a.runs and r["seed"] == a.seed}
    out = []
    print(f"{'configuration':<42} {'runs':>5} {'unstopped at 2^26 (95% CI)':>30} "
          f"{'median':>8} {'90%':>8} {'99%':>8} {'mean stopped':>12} {'wrong':>5}")
    for algo, label, params in CONFIGS:
        label = f"{algo}: {label}"
        r = done.get(label) or {"label": label, **measure(algo, params, a.runs, a.seed,
                                                           a.workers)}
        out.append(r)
        write_json_atomic(a.json, {"command": "python benchmarks/stopping_times.py "
                                              f"--runs {a.runs} --seed {a.seed}",
                                   "configs": out + [v for k, v in done.items()
                                                     if k not in {o["label"] for o in out}]})
        q = r["quantiles"]
        ci = f"{r['unstopped']}/{r['runs']} [{r['unstopped_ci95'][0]:.3f}, " \
             f"{r['unstopped_ci95'][1]:.3f}]"
        ms = "-" if r["mean_stopped"] is None else f"{r['mean_stopped']:.3g}"
        print(f"{label:<42} {r['runs']:>5} {ci:>30} {_shown(q['50%']):>8} "
              f"{_shown(q['90%']):>8} {_shown(q['99%']):>8} {ms:>12} "
              f"{r['wrong_recommendations']:>5}  ({r['seconds']:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
