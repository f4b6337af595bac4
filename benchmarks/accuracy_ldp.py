"""Accuracy of the LDP thresholding algorithms (seed 001) against the digest's Monte Carlo
reference values (computed from the paper's bounds; the paper has no experiments).

    python benchmarks/accuracy_ldp.py [--runs N] [--confidence-runs M] [--seed S]

* Algorithm 1 (``ldp-tb-budget``) on instance A (μ = (0.1, 0.3, 0.5, 0.7, 0.9), τ = 0.5,
  ζ = 0.05): P(L(T) = 1) (eq. 2) over N runs (default 20000, as the digest) for
  ε ∈ {0.5, 1, 2} and T ∈ {200, 500, 1000, 2000}, with exact 95 % Clopper–Pearson intervals
  (statsmodels), next to the digest's value ± its 95 % half-width, and the mean pulls per arm
  at ε = 1, T = 2000.
* Algorithm 2 (``ldp-tb-confidence``) on instance B (μ = (0.2, 0.45, 0.55, 0.8), τ = 0.5) at
  ε = 1, δ = 0.05: stopping times (mean with a normal 95 % interval, median, max), runs not
  stopped within ``max_steps`` = 2^24, and wrong returned sets with a Clopper–Pearson
  interval, over M runs (default 1000, as the digest).

Rewards are Bernoulli(μ) drawn afresh in the compiled kernels (an empty reward table, kernel
contract of dpaudit.simulation.simulate) and privatised by PrivBern(ε): one compiled batch call per
setting, no Python object per step. Seeded: the same seed prints the same numbers.
"""
import argparse
import time

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from dpaudit.algorithms import registry
from dpaudit.algorithms.ldp_thresholding import algorithm as lt
from dpaudit.simulation.simulate import CAPPED, STOPPED, run_batch

EPS = (0.5, 1.0, 2.0)
BUDGETS = (200, 500, 1000, 2000)
# digest §3.6: P(L(T) = 1), R = 20000, (value, 95 % half-width)
DIGEST_LOSS = {
    0.5: ((0.5696, 0.0069), (0.3649, 0.0067), (0.2183, 0.0057), (0.1263, 0.0046)),
    1.0: ((0.2215, 0.0058), (0.0905, 0.0040), (0.0351, 0.0026), (0.0066, 0.0011)),
    2.0: ((0.0491, 0.0030), (0.0091, 0.0013), (0.0006, 0.0004), (0.0, 0.0)),
}
DIGEST_PULLS = (53.6, 164.9, 1562.7, 165.5, 53.3)          # ε = 1, T = 2000
DIGEST_STOP = {"errors": 0, "mean": 15454, "median": 14889, "max": 37425}   # R = 1000


def cp(k: int, n: int):
    lo, hi = proportion_confint(k, n, alpha=0.05, method="beta")
    return float(lo), float(hi)


def mean_pulls(eps: float, T: int, runs: int, seed: int) -> np.ndarray:
    """Mean pulls per arm of Algorithm 1 on instance A over ``runs`` runs (their action
    sequences are kept: runs × T int16)."""
    spec = registry.get("ldp-tb-budget")
    p = spec.resolve_params({**lt.INSTANCE_A, "horizon": T})
    prep = spec.prepare(eps, p)
    K = prep.means.size
    *_, kept = run_batch(spec.request(prep, np.zeros((0, K)), runs, seed, [[0, T]], T), runs)
    return np.stack([(kept == a).sum(axis=1) for a in range(K)], axis=1).mean(axis=0)


def budget_table(runs: int, seed: int) -> None:
    A = lt.INSTANCE_A
    print(f"Algorithm 1 (ldp-tb-budget), instance A: P(L(T) = 1) over {runs} runs per cell, "
          "95 % Clopper-Pearson interval; digest value +- its 95 % half-width")
    print(f"{'eps':>4} {'T':>5}  {'P(L=1)':>8}  {'95% CI':>17}  {'digest':>16}  agree")
    for eps in EPS:
        for T, (ref, half) in zip(BUDGETS, DIGEST_LOSS[eps]):
            tau, rec, status = lt.fresh_runs(registry.get("ldp-tb-budget"), eps,
                                             {**A, "horizon": T}, runs,
                                             seed=seed + int(100 * eps) + T)
            assert (tau == T).all() and (status == STOPPED).all()
            k = int(lt.budget_loss(rec, A["means"], A["threshold"], A["tolerance"]).sum())
            lo, hi = cp(k, runs)
            agree = "yes" if lo <= ref + half and ref - half <= hi else "NO"
            print(f"{eps:>4g} {T:>5}  {k / runs:>8.4f}  [{lo:.4f}, {hi:.4f}]  "
                  f"{ref:>7.4f} +- {half:.4f}  {agree}", flush=True)
    n = min(runs, 2000)
    pulls = mean_pulls(1.0, 2000, n, seed)
    print(f"mean pulls per arm at eps = 1, T = 2000 ({n} runs): "
          f"{' '.join(f'{x:.1f}' for x in pulls)}  (digest: "
          f"{' '.join(map(str, DIGEST_PULLS))})")


def confidence_table(runs: int, seed: int) -> None:
    B = lt.INSTANCE_B
    tau, rec, status = lt.fresh_runs(registry.get("ldp-tb-confidence"), 1.0,
                                     {**B, "risk": 0.05}, runs, seed=seed + 7)
    stopped = status == STOPPED
    t = tau[stopped]
    errors = int((rec[stopped] != lt.target_mask(B["means"], B["threshold"])).sum())
    lo, hi = cp(errors, runs)
    half = 1.96 * t.std(ddof=1) / np.sqrt(t.size)
    print(f"\nAlgorithm 2 (ldp-tb-confidence), instance B, eps = 1, delta = 0.05, {runs} runs:")
    print(f"  stopping time: mean {t.mean():.0f} (95 % CI {t.mean() - half:.0f}.."
          f"{t.mean() + half:.0f}), median {np.median(t):.0f}, max {t.max()}  "
          f"(digest: mean {DIGEST_STOP['mean']}, "
          f"median {DIGEST_STOP['median']}, max {DIGEST_STOP['max']})")
    print(f"  not stopped within max_steps = 2^24: {int((status == CAPPED).sum())}")
    print(f"  wrong returned set: {errors}/{runs} (95 % CI [{lo:.4f}, {hi:.4f}]; delta = 0.05; "
          f"digest: {DIGEST_STOP['errors']})")
    print(f"  bounds: implicit App. D bound {lt.thm41_implicit(B['means'], 0.5, 1.0, 0.05):.0f}, "
          f"Thm 4.2 lower bound {lt.thm42_bound(B['means'], 0.5, 1.0, 0.05):.1f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20000, help="Algorithm 1 runs per cell")
    ap.add_argument("--confidence-runs", type=int, default=1000, help="Algorithm 2 runs")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    t0 = time.perf_counter()
    budget_table(a.runs, a.seed)
    confidence_table(a.confidence_runs, a.seed)
    print(f"\n{time.perf_counter() - t0:.1f} s")
