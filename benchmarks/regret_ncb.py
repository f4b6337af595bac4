"""Seed 002 (DP-NCB): Nash regret and average regret on the paper's instances (digest §3.3, §4).

Instances (digest §4.1/§4.2):

* ``b``: k = 50 Bernoulli arms, μ = RandomState(42).uniform(0.005, 1, 50) (the authors'
  instance: max 0.9701, mean 0.4487), ε = 0.2 (the paper's "wherever applicable");
* ``a``: k = 2, μ = ((2e)^{−T}, 1) for a few T < 1000 (a separate instance per T).

Algorithms: ``ncb`` (C_I = 1, the authors' code), ``gdp-ncb`` and ``ldp-ncb`` as written
(C_I = 1600: uniform play at these horizons, digest §3.1) and in the ``scaled`` mode (C_I = 1),
and ``ldp-ucb``. Each run is one compiled kernel call on fresh Bernoulli rewards (an empty
table); its actions are kept (int16, R × T) to form μ̄_t = (1/R)·Σ_r μ_{I_t^(r)}.

Regret (digest §3.3): NR = μ* − exp(mean_t ln μ̄_t) (log space; ln μ₁ = −T(1 + ln 2) for
instance a, where (2e)^{−T} underflows), AR = μ* − mean_t μ̄_t. Curves are prefix curves of one
horizon-T run set (constants fixed at T, as the authors' figures). 95 % intervals: AR by the
normal interval over runs; NR by a percentile bootstrap over runs (200 resamples).

    python benchmarks/regret_ncb.py [--runs 50] [--horizon 100000] [--out regret_ncb.png]
"""
from __future__ import annotations

import argparse
import json
import math
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.special import logsumexp  # noqa: E402

from dpaudit import registry  # noqa: E402

CONFIGS = (("ncb", {"phase1_constant": 1.0}, "NCB (non-private, C_I=1)"),
           ("gdp-ncb", {}, "GDP-NCB (C_I=1600, as written)"),
           ("gdp-ncb", {"phase1_constant": 1.0}, "GDP-NCB (scaled, C_I=1)"),
           ("ldp-ncb", {}, "LDP-NCB (C_I=1600, as written)"),
           ("ldp-ncb", {"phase1_constant": 1.0}, "LDP-NCB (scaled, C_I=1)"),
           ("ldp-ucb", {}, "LDP-UCB"))


def actions_of(name, params, eps, means, T, runs, seed):
    """(runs, T) int16 actions of ``runs`` full runs on fresh Bernoulli(means) rewards."""
    spec = registry.get(name)
    p = spec.resolve_params({**params, "horizon": T, "means": tuple(means)})
    prep = spec.prepare(eps, p)
    table = np.zeros((0, len(means)))
    out = np.empty((runs, T), np.int16)
    rng = np.random.default_rng(seed)
    for r in range(runs):
        spec.kernel(rng, table, prep.means, prep.theta, prep.aux, T, out[r], np.empty((0, 8)),
                    np.empty(0))
    return out


def log_mu_bar(acts, log_mu):
    """ln μ̄_t for every round (log-sum-exp over runs)."""
    return logsumexp(log_mu[acts], axis=0) - math.log(acts.shape[0])


def prefix_regrets(acts, log_mu, mu_star, points):
    lmb = log_mu_bar(acts, log_mu)
    c = np.cumsum(lmb)
    cm = np.cumsum(np.exp(lmb))
    idx = np.asarray(points) - 1
    nr = mu_star - np.exp(c[idx] / points)
    ar = mu_star - cm[idx] / points
    return nr, ar


def bootstrap_nr(acts, log_mu, mu_star, points, reps=200, seed=0):
    rng = np.random.default_rng(seed)
    R = acts.shape[0]
    out = np.empty((reps, len(points)))
    for b in range(reps):
        out[b] = prefix_regrets(acts[rng.integers(0, R, R)], log_mu, mu_star, points)[0]
    return np.percentile(out, [2.5, 97.5], axis=0)


def instance_b(runs, T, eps, seed):
    mu = np.random.RandomState(42).uniform(0.005, 1, 50)
    log_mu = np.log(mu)
    points = np.unique(np.geomspace(100, T, 40).astype(int))
    res = {}
    for name, params, label in CONFIGS:
        t0 = time.perf_counter()
        acts = actions_of(name, params, eps, mu, T, runs, seed)
        nr, ar = prefix_regrets(acts, log_mu, mu.max(), points)
        lo, hi = bootstrap_nr(acts, log_mu, mu.max(), points)
        per_run_ar = mu.max() - mu[acts].mean(axis=1)
        res[label] = dict(points=points.tolist(), nash=nr.tolist(), avg=ar.tolist(),
                          nash_ci=[lo.tolist(), hi.tolist()],
                          avg_final_ci=[float(per_run_ar.mean() - 1.96 * per_run_ar.std(ddof=1)
                                              / math.sqrt(runs)),
                                        float(per_run_ar.mean() + 1.96 * per_run_ar.std(ddof=1)
                                              / math.sqrt(runs))],
                          seconds=time.perf_counter() - t0)
    return mu, res


def instance_a(runs, eps, seed, horizons=(10, 30, 100, 300, 999)):
    """k = 2, μ = ((2e)^{−T}, 1): Nash regret at the horizon, per T (digest §4.1 (a))."""
    res = {}
    for name, params, label in CONFIGS:
        row = []
        for T in horizons:
            log_mu = np.array([-T * (1.0 + math.log(2.0)), 0.0])
            means = np.exp(log_mu)
            acts = actions_of(name, params, eps, means, T, runs, seed)
            nr, ar = prefix_regrets(acts, log_mu, 1.0, np.array([T]))
            row.append((T, float(nr[0]), float(ar[0])))
        res[label] = row
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--horizon", type=int, default=100_000)
    ap.add_argument("--eps", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="regret_ncb.png")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    mu, res_b = instance_b(a.runs, a.horizon, a.eps, a.seed)
    res_a = instance_a(a.runs, 2.0, a.seed)     # the authors ran (a) at ε = 2 (digest §4.2)
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.5))
    for label, r in res_b.items():
        ax[0].plot(r["points"], r["nash"], label=label)
        ax[0].fill_between(r["points"], r["nash_ci"][0], r["nash_ci"][1], alpha=0.2)
        ax[1].plot(r["points"], r["avg"], label=label)
    for label, row in res_a.items():
        ax[2].plot([x[0] for x in row], [x[1] for x in row], marker="o", label=label)
    ax[0].set(xscale="log", xlabel="rounds t (prefix of one horizon-T run)",
              ylabel="Nash regret", title=f"instance b: k=50, eps={a.eps}, {a.runs} runs")
    ax[1].set(xscale="log", xlabel="rounds t", ylabel="average regret", title="instance b")
    ax[2].set(xscale="log", xlabel="T", ylabel="Nash regret at T",
              title="instance a: mu=((2e)^-T, 1), eps=2")
    ax[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    summary = {"instance_b": {k: {"T": v["points"][-1], "nash": v["nash"][-1],
                                  "nash_ci": [v["nash_ci"][0][-1], v["nash_ci"][1][-1]],
                                  "avg": v["avg"][-1], "avg_ci": v["avg_final_ci"],
                                  "seconds": round(v["seconds"], 2)}
                              for k, v in res_b.items()},
               "instance_a": res_a, "mu_star": float(mu.max()), "mu_mean": float(mu.mean())}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
