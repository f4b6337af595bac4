"""Success rates of DP-BAI, BASELINE, DP-OD and OD-LinBAI on the Section 5 instance (seed 000,
Figure 1), next to reference values read off that figure.

    python benchmarks/accuracy_dp_bai.py                 # 1000 trials per cell (the paper's)
    python benchmarks/accuracy_dp_bai.py --runs 20000    # tighter intervals

Instance (digest §3.6 (a)): K = 30, d = 2, θ* = [0.045, 0.5], a_1 = [0, 1], a_2 = [0, 0.9],
a_3 = [10, 0], a_i = [1, ω_i] with ω = default_rng(0).uniform(0, 0.8, 27) (fixed across
trials); arm 1 (index 0) is best. Rewards U[0, 2μ_i] as in the paper: each trial draws a
fresh stream table (K × W, W ≥ the longest run) with NumPy in chunks, so every pull reads
a fixed entry (the kernels' Bernoulli rows beyond a table are never used). All cells of one
(T, trial) share that trial's table (common random numbers; each cell's estimate is still
an unbiased success rate, and comparisons between methods are sharper); each (method, ε, T)
has its own noise stream. Every algorithm runs its registered compiled kernel with the
registered defaults (schedule reading A, overrun ``allow``, MAX-DET exhaustive, ℓ2 norm for
DP-OD), so these are the same implementations the audits check.

Grid: T ∈ {500, 1000, 2000, 5000} × ε ∈ {0.1, 1, 10}; OD-LinBAI (non-private) once per T.
Intervals: exact two-sided 95 % Clopper–Pearson (statsmodels, method "beta"). ``ref`` is
the digest's reference value (20 000 trials, SE ≤ 0.0035, computed for the digest, not
from the paper, whose Figure 1 gives no numbers); ``z`` is (success − ref) over the combined
standard error of both estimates (and the reference's rounding to 3 decimals): |z| > 3 in a
cell would point at a difference between this implementation and the digest's. The summary
checks the paper's qualitative claims (Sec. 5): DP-BAI beats BASELINE and DP-OD, and
DP-BAI ≈ OD-LinBAI as ε grows.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from dpaudit.algorithms import registry
from dpaudit.algorithms.dp_bai.algorithm import (dp_bai_kernel, dp_bai_recommendations,
                                                 od_recommendations)

T_GRID = (500, 1000, 2000, 5000)
EPS_GRID = (0.1, 1.0, 10.0)
METHODS = ("dp-bai", "dp-bai-baseline", "dp-od", "od-linbai")
SHOWN = {"dp-bai": "DP-BAI", "dp-bai-baseline": "BASELINE", "dp-od": "DP-OD",
         "od-linbai": "OD-LinBAI"}
# digest §4.1 reference success rates for ε = 0.1 / 1 / 10 (OD-LinBAI: one value)
REFERENCE = {
    500: {"dp-bai": (0.749, 0.975, 0.980), "dp-bai-baseline": (0.051, 0.274, 0.439),
          "od-linbai": (0.979,), "dp-od": (0.554, 0.829, 0.976)},
    1000: {"dp-bai": (0.890, 0.998, 0.999), "dp-bai-baseline": (0.069, 0.443, 0.567),
           "od-linbai": (0.999,), "dp-od": (0.608, 0.941, 0.998)},
    2000: {"dp-bai": (0.981, 1.000, 1.000), "dp-bai-baseline": (0.115, 0.632, 0.709),
           "od-linbai": (1.000,), "dp-od": (0.690, 0.994, 1.000)},
    5000: {"dp-bai": (1.000, 1.000, 1.000), "dp-bai-baseline": (0.299, 0.876, 0.899),
           "od-linbai": (1.000,), "dp-od": (0.853, 1.000, 1.000)},
}
BEST = 0          # arm 1 of the paper (0-based index 0)
CHUNK = 32        # trials per generated chunk of tables


def cells(T: int):
    """(method, ε or None) cells of one budget."""
    return [(m, e) for m in METHODS if m != "od-linbai" for e in EPS_GRID] + [("od-linbai", None)]


def run(runs: int, seed: int, t_grid=T_GRID, progress=None) -> list[dict]:
    """Success counts for every cell; rows {T, method, eps, wins, runs, ci, ref}."""
    out = []
    for t_i, T in enumerate(t_grid):
        s_tab = np.random.SeedSequence(seed, spawn_key=(t_i, 0))    # tables of budget T
        jobs = []
        for j, (name, eps) in enumerate(cells(T)):
            spec = registry.get(name)
            p = spec.resolve_params({"horizon": T})
            prep = spec.prepare(1.0 if eps is None else eps, p)
            wins_fn = dp_bai_recommendations if spec.kernel is dp_bai_kernel else \
                od_recommendations
            jobs.append([name, eps, prep, spec.audit_horizon(p), wins_fn,
                         np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(t_i, 1, j))),
                         0])
        means = jobs[0][2].means
        width = max(j[3] for j in jobs)            # longest run: no arm reads past the table
        two_mu = (2.0 * means)[None, :, None]
        rng_tab = np.random.default_rng(s_tab)
        done = 0
        while done < runs:
            n = min(CHUNK, runs - done)
            tables = rng_tab.random((n, means.size, width)) * two_mu     # U[0, 2 mu_i]
            for job in jobs:
                _, _, prep, limit, fn, rng, _ = job
                job[6] += int((fn(rng, tables, prep.means, prep.theta, prep.aux, limit)
                               == BEST).sum())
            done += n
            if progress:
                progress(T, done)
        for name, eps, _, _, _, _, wins in jobs:
            lo, hi = proportion_confint(wins, runs, alpha=0.05, method="beta")
            ref = REFERENCE.get(T, {}).get(name)
            ref = None if ref is None else (ref[0] if eps is None else ref[EPS_GRID.index(eps)])
            out.append({"T": T, "method": name, "eps": eps, "wins": wins, "runs": runs,
                        "rate": wins / runs, "ci": (float(lo), float(hi)), "ref": ref})
    return out


REF_RUNS = 20_000   # trials behind each reference value (digest §4.1), rounded to 3 decimals


def z_score(rate: float, n: int, ref: float) -> float:
    """(rate − ref) in units of the combined standard error of this run's rate, the
    reference's own sampling error (20 000 trials) and its rounding to 3 decimals."""
    var = rate * (1 - rate) / n + ref * (1 - ref) / REF_RUNS + 0.0005 ** 2 / 3
    return (rate - ref) / var ** 0.5


def report(rows: list[dict]) -> str:
    lines = [f"{'T':>5} {'eps':>5}  {'method':<10} {'success':>7}  {'95% CP interval':<17} "
             f"{'ref':>6}  {'z':>5}"]
    for r in rows:
        eps = "-" if r["eps"] is None else f"{r['eps']:g}"
        ref = z = ""
        if r["ref"] is not None:
            ref, z = f"{r['ref']:.3f}", f"{z_score(r['rate'], r['runs'], r['ref']):+.1f}"
        lines.append(f"{r['T']:>5} {eps:>5}  {SHOWN[r['method']]:<10} {r['rate']:>7.3f}  "
                     f"[{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]   {ref:>6}  {z:>5}")
    zs = [z_score(r["rate"], r["runs"], r["ref"]) for r in rows if r["ref"] is not None]
    lines.append(f"agreement with the digest's reference values: |z| <= 2 in "
                 f"{sum(abs(z) <= 2 for z in zs)} of {len(zs)} cells, |z| <= 3 in "
                 f"{sum(abs(z) <= 3 for z in zs)} (max |z| = {max(map(abs, zs)):.1f})")
    return "\n".join(lines)


def claims(rows: list[dict]) -> str:
    """The paper's qualitative claims (Sec. 5), checked cell by cell."""
    get = {(r["T"], r["method"], r["eps"]): r["rate"] for r in rows}
    budgets = sorted({r["T"] for r in rows})
    out = []
    for other in ("dp-bai-baseline", "dp-od"):
        diff = [get[(T, "dp-bai", e)] - get[(T, other, e)] for T in budgets for e in EPS_GRID]
        out.append(f"DP-BAI vs {SHOWN[other]}: higher in {sum(x > 0 for x in diff)}, equal in "
                   f"{sum(x == 0 for x in diff)}, lower in {sum(x < 0 for x in diff)} of "
                   f"{len(diff)} cells (largest gap {max(diff):.3f})")
    for e in EPS_GRID:
        gap = max(abs(get[(T, "dp-bai", e)] - get[(T, "od-linbai", None)]) for T in budgets)
        out.append(f"max over T of |DP-BAI - OD-LinBAI| at eps = {e:g}: {gap:.3f}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1000, help="trials per cell (default 1000)")
    ap.add_argument("--seed", type=int, default=12345, help="root seed (default 12345)")
    ap.add_argument("--T", default=",".join(map(str, T_GRID)),
                    help="budgets, comma-separated (default 500,1000,2000,5000)")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = run(a.runs, a.seed, tuple(int(x) for x in a.T.split(",")))
    print(report(rows))
    print(claims(rows))
    print(f"{a.runs} trials per cell, seed {a.seed}, {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
