"""Cumulative pseudo-regret of the seed 003 bandit algorithms on the paper's two settings
(Sec. 6, Figures 1–2). The paper prints no numbers, so this
reproduces the experiment's design, not values.

    python benchmarks/regret_lazy.py [--horizon T] [--runs R] [--eps 0.25,0.5,1] [--seed S]
                                     [--algos lazy-ucb,lazy-dp-ts,dp-se-regret,adap-klucb,ts-beta]
                                     [--out DIR]

* K = 5, Setting 1 μ = (0.75, 0.625, 0.5, 0.375, 0.25), Setting 2 μ = (0.5, 0.4, 0.4, 0.4, 0.4);
  T = 10^6, ε ∈ {0.25, 0.5, 1}, 20 runs per curve (the paper's defaults).
* Algorithms: ``lazy-ucb`` (Alg. 1), ``lazy-dp-ts`` (Alg. 3), ``dp-se-regret`` (DP-SE with
  δ = 1/T, seed 004's constants), ``adap-klucb`` (AdaP-KLUCB as far as the sources specify
  it, α = 3.1: algorithms/lazy_dp/adap_ucb.py) and the non-private ``ts-beta`` (Alg. 2) as a
  reference (ε-free: one curve per setting).
* Pseudo-regret R(t) = Σ_{s ≤ t} Δ_{J_s} (eq. 7, expectation over the rewards taken as the
  gap of the pulled arm), at 200 log-spaced checkpoints; mean over runs with a 95 % Student-t
  interval (scipy). Rewards are Bernoulli(μ) drawn afresh in the compiled kernel (empty
  table); one reusable action buffer, nothing allocated per step.

Writes ``regret_lazy.json`` (curves and final regret with intervals) and ``regret_lazy.png``
(one row per setting, one panel per ε; matplotlib, Agg backend) to ``--out`` and prints the
final regret R(T) of every curve with its interval and the digest's rate Σ ln T/min{Δ_j, ε}
for scale. Seeded: run r of a curve uses SeedSequence(seed, spawn_key=(setting, algo, ε, r)).
"""
import argparse
import json
import pathlib
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from dpaudit.algorithms import registry   # noqa: E402
from dpaudit.algorithms.lazy_dp import algorithm as ld  # noqa: E402

SETTINGS = {"setting 1": ld.SETTING_1, "setting 2": ld.SETTING_2}
ALGOS = ("lazy-ucb", "lazy-dp-ts", "dp-se-regret", "adap-klucb", "ts-beta")


def curves(name, means, eps, T, runs, seed_key, checkpoints):
    """(runs, len(checkpoints)) pseudo-regret at the checkpoints (1-based rounds)."""
    spec = registry.get(name)
    given = {"means": means, "horizon": T}
    if name == "dp-se-regret":
        given["risk"] = 1.0 / T          # the paper's δ = 1/T (the registry default is 0.01)
    p = spec.resolve_params(given)
    prep = spec.prepare(eps, p)
    gap = ld.gaps(means)
    actions = np.empty(T, np.int16)
    releases = np.empty((0, 8))
    out = np.empty((runs, len(checkpoints)))
    for r in range(runs):
        rng = np.random.default_rng(np.random.SeedSequence(seed_key[0],
                                                           spawn_key=seed_key[1:] + (r,)))
        tau, _, _, _ = spec.kernel(rng, np.zeros((0, len(means))), prep.means, prep.theta,
                                   prep.aux, T, actions, releases, np.empty(0))
        assert int(tau) == T
        out[r] = np.cumsum(gap[actions])[checkpoints - 1]
    return out


def summary(x):
    m = x.mean(axis=0)
    if x.shape[0] < 2:
        return m, m, m
    h = stats.t.ppf(0.975, x.shape[0] - 1) * x.std(axis=0, ddof=1) / np.sqrt(x.shape[0])
    return m, m - h, m + h


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--horizon", type=int, default=10 ** 6)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--eps", default="0.25,0.5,1")
    ap.add_argument("--algos", default=",".join(ALGOS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=".")
    a = ap.parse_args(argv)
    T, eps_list, algos = a.horizon, [float(e) for e in a.eps.split(",")], a.algos.split(",")
    for n in algos:
        registry.get(n)                              # InputError for an unknown name
    checkpoints = np.unique(np.geomspace(1, T, 200).astype(np.int64))
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    res = {"horizon": T, "runs": a.runs, "seed": a.seed, "checkpoints": checkpoints.tolist(),
           "curves": []}
    fig, axes = plt.subplots(len(SETTINGS), len(eps_list), figsize=(4.2 * len(eps_list), 7),
                             squeeze=False, sharex=True)
    t0 = time.perf_counter()
    for si, (sname, means) in enumerate(SETTINGS.items()):
        for ei, eps in enumerate(eps_list):
            ax = axes[si, ei]
            for ai, name in enumerate(algos):
                private = registry.get(name).private
                if not private and ei > 0:           # ε-free reference: reuse its curve
                    prev = next(c for c in res["curves"] if c["setting"] == sname
                                and c["algorithm"] == name)
                    m, lo, hi = (np.array(prev[k]) for k in ("mean", "lo", "hi"))
                else:
                    t1 = time.perf_counter()
                    x = curves(name, means, eps, T, a.runs, (a.seed, si, ai, ei), checkpoints)
                    m, lo, hi = summary(x)
                    res["curves"].append({"setting": sname, "means": list(means),
                                          "algorithm": name, "eps": eps if private else None,
                                          "mean": m.tolist(), "lo": lo.tolist(),
                                          "hi": hi.tolist(), "final": x[:, -1].tolist(),
                                          "seconds": round(time.perf_counter() - t1, 2)})
                    print(f"{sname}  eps={eps:<5g} {name:<13} R(T) = {m[-1]:10.1f}  "
                          f"95% CI [{lo[-1]:.1f}, {hi[-1]:.1f}]  "
                          f"({time.perf_counter() - t1:.1f} s)", flush=True)
                style = "--" if not private else "-"
                ax.plot(checkpoints, m, style, label=name, color=f"C{ai}")
                ax.fill_between(checkpoints, lo, hi, alpha=0.25, color=f"C{ai}")
            rate = ld.regret_rate(means, eps, T)
            ax.set_title(f"{sname}, ε = {eps:g} (Σ ln T/min(Δ, ε) = {rate:.0f})", fontsize=9)
            ax.set_xscale("log")
            if si == len(SETTINGS) - 1:
                ax.set_xlabel("round t")
            if ei == 0:
                ax.set_ylabel("cumulative pseudo-regret")
            ax.legend(fontsize=7)
    fig.suptitle(f"seed 003, K = 5, T = {T:g}, {a.runs} runs, mean and 95% t-interval")
    fig.tight_layout()
    fig.savefig(out / "regret_lazy.png", dpi=120)
    res["seconds"] = round(time.perf_counter() - t0, 1)
    (out / "regret_lazy.json").write_text(json.dumps(res))
    print(f"wrote {out / 'regret_lazy.png'} and {out / 'regret_lazy.json'} "
          f"({res['seconds']} s)")


if __name__ == "__main__":
    main()
