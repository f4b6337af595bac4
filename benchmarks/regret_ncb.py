"""Seed 002 (DP-NCB): Nash and average regret on the paper's instances (digest §3.3, §4).

    python benchmarks/regret_ncb.py --out benchmarks/figures [--horizon 20000000] [--runs 50]
                                    [--eps 0.2] [--seed 0] [--workers 2]
    python benchmarks/regret_ncb.py --replot benchmarks/figures   # figure/JSON from the .npz

Run (``--out benchmarks/figures``, T = 2·10⁷, 50 runs, 2 workers): 1224 s wall (20.4 min)
with load average 4.2 → 4.0 on the 2 cores (other jobs running). T was chosen from a
T = 2·10⁶ calibration (134 s at load 4.7) scaled linearly: 2·10⁷ fits the 30-minute budget
under that load (≈ 3·10⁷ would have no margin; idle-core throughput suggests ≈ 5·10⁷). The
authors ran T = 10⁸ (digest §4.2). Worker seconds: ncb 649, ldp-ncb scaled 697, ldp-ucb 684
(argmax every round), gdp-ncb 181, ldp-ncb 142, adap-ucb 14, gdp-ncb scaled 10.

Paper's claims (digest §4.1) at this horizon (jackknife NR at T; 95 % CI half-widths ≤ 0.0007):

* (a) AdaP-UCB's NR blows up, GDP-NCB's stays controlled: **reproduced** with C_I = 1.
  AdaP-UCB 0.82–0.90 for every T ≤ 1000 (≥ 1 − 1/(2e) = 0.816: each arm once, deterministic;
  0.838 at T = 1000); GDP-NCB scaled 0.50 → 0.114 at T = 1000 (paper's figure ≈ 0.6 → 0.08);
  as written (C_I = 1600) 0.50 (uniform play).
* (b) GDP-NCB beats AdaP-UCB for larger T: **not reproduced**. At T = 2·10⁷ AdaP-UCB 0.0042,
  GDP-NCB scaled 0.0701, as written 0.5214; AdaP-UCB is below GDP-NCB for every t ≥ 1.8·10⁴.
  (The authors' GDP-NCB caps Phase I at √T + 1 rounds, digest §4.2; not implemented here.)
  LDP-NCB much better than LDP-UCB: **reproduced for C_I = 1 only**, from t ≈ 2·10⁶ on
  (0.107 vs 0.440 at T); as written LDP-NCB is uniform (0.5214) and worse than LDP-UCB.
* (e) decay orders: levels NCB 0.0027 < GDP-NCB 0.070 < LDP-NCB 0.107 (scaled) at T, and
  in this order at every t ≥ 5·10⁴; log-log slopes over the last decade −0.72, −0.69,
  −0.64 (AdaP-UCB −0.87): ordered as claimed, but neither 1/T nor 1/√T at this horizon.
* The plug-in NR lies above the jackknife by 0.0018 for uniform play (0.5232 vs 0.5214 =
  μ* − mean μ, the exact NR), outside the jackknife's interval [0.5213, 0.5214].

Instances (digest §4.1/§4.2):

* ``b``: k = 50 Bernoulli arms, μ = RandomState(42).uniform(0.005, 1, 50) (max 0.9701, mean
  0.4487), ε = 0.2; prefix curves of one horizon-T run set (constants fixed at T, as the
  authors' figures), ``--runs`` runs per configuration;
* ``a``: k = 2, μ = ((2e)^{−T}, 1), ε = 2 (the authors' code), one instance per T ≤ 1000;
  ``--a-reps`` (10) repetitions of ``--runs`` runs per T, as the authors' 50 trials × 10.

Configurations (:data:`CONFIGS`): ``ncb`` (C_I = 1, the authors' code), ``adap-ucb`` (α = 3.1;
included when registered), ``gdp-ncb`` and ``ldp-ncb`` as written (C_I = 1600: uniform play
at these horizons, digest §3.1) and scaled (C_I = 1, no Phase-I cap: not the authors' code),
``ldp-ucb``. Run r of a configuration uses SeedSequence(seed, spawn_key=(instance, config
index, [T,] r)): results do not depend on ``--workers``.

Regret (digest §3.3). μ̄_t = (1/R)Σ_r μ_{I_t^(r)}; NR = μ* − exp(mean_{t≤p} ln μ̄_t),
AR = μ* − mean_{t≤p} μ̄_t. NR is nonlinear in the runs (Jensen: the plug-in is biased
upwards, O(1/R) per round), so its estimate and 95 % interval come from a leave-one-run-out
jackknife (:func:`jackknife`): ln μ̄_t^(−r) from S_t − x_{r,t} (log-sum-exp over arm counts
for instance a, where (2e)^{−T} underflows), θ̂^(−r) = μ* − exp(mean_t ln μ̄_t^(−r)),
estimate R·θ̂ − (R−1)·mean_r θ̂^(−r), s.e. sqrt((R−1)/R·Σ_r(θ̂^(−r) − mean)²), Student t
with R−1 df. Both plug-in and jackknife values are reported. AR is linear: mean of per-run
AR ± t-interval. Check: tests/algorithms/test_regret_ncb.py (bias and coverage on a known law).

Memory. A worker runs one (configuration, run) through its compiled kernel into an int16
buffer and stores the arms as int8 in a per-configuration disk file (R × T bytes, deleted
once summarised); the main process streams it in column chunks through a numba pass
(:func:`_accumulate`) that keeps only the per-run cumulative sums Σ ln μ̄^(−r), Σ x at the
prefix points. Memory is O(T) per worker (3 bytes/round); simulating once (not replaying
each run from its seed for the leave-one-out pass) halves the compute for the same horizon.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import math
import os
import pathlib
import shutil
import tempfile
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numba as nb  # noqa: E402
import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402
from scipy.special import logsumexp  # noqa: E402

from dpaudit.algorithms import registry   # noqa: E402

# (key, registered algorithm, parameters, legend label); the position is part of the seed.
CONFIGS = (("ncb", "ncb", {"phase1_constant": 1.0}, "NCB (non-private, C_I=1)"),
           ("gdp-ncb", "gdp-ncb", {}, "GDP-NCB (C_I=1600, as written)"),
           ("gdp-ncb-scaled", "gdp-ncb", {"phase1_constant": 1.0}, "GDP-NCB (scaled, C_I=1)"),
           ("ldp-ncb", "ldp-ncb", {}, "LDP-NCB (C_I=1600, as written)"),
           ("ldp-ncb-scaled", "ldp-ncb", {"phase1_constant": 1.0}, "LDP-NCB (scaled, C_I=1)"),
           ("ldp-ucb", "ldp-ucb", {}, "LDP-UCB"),
           ("adap-ucb", "adap-ucb", {}, "AdaP-UCB (alpha=3.1)"))
A_HORIZONS = (3, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 440, 600, 800, 1000)
MU_B = np.random.RandomState(42).uniform(0.005, 1, 50)


def available_configs():
    """(index, config) of :data:`CONFIGS` whose algorithm is registered."""
    names = {s.name for s in registry.all_specs()}
    return [(i, c) for i, c in enumerate(CONFIGS) if c[1] in names]


# ------------------------------------------------------------------------ simulation

_BUF: dict = {}


def simulate(name, params, eps, means, T, seed_key, acts_out):
    """One full run (compiled kernel, fresh Bernoulli rewards: empty table) into ``acts_out``
    (length T, any integer dtype)."""
    spec = registry.get(name)
    p = spec.resolve_params({**params, "horizon": T, "means": tuple(means)})
    prep = spec.prepare(eps, p)
    buf = _BUF.get(T)
    if buf is None:
        _BUF.clear()
        buf = _BUF[T] = np.empty(T, np.int16)
    rng = np.random.default_rng(np.random.SeedSequence(seed_key[0], spawn_key=seed_key[1:]))
    tau = spec.kernel(rng, np.zeros((0, len(means))), prep.means, prep.theta, prep.aux, T,
                      buf, np.empty((0, 8)), np.empty(0))[0]
    assert int(tau) == T, (name, tau, T)
    acts_out[:] = buf


def _worker(task):
    """Pool task: run r of a configuration of instance b, arms written to row r of ``path``."""
    name, params, eps, T, seed_key, path, R, r = task
    t0 = time.perf_counter()
    mm = np.memmap(path, np.int8, "r+", shape=(R, T))
    simulate(name, params, eps, MU_B, T, seed_key, mm[r])
    mm.flush()
    del mm
    return r, time.perf_counter() - t0


# ------------------------------------------------------------------------ statistics

# not cache=True: this module runs as a script (__main__) and is imported by the tests, and a
# cache written under one module name fails to load under the other ("No module named
# '<dynamic>'"); compiling takes about a second of a benchmark that runs for minutes
@nb.njit
def _accumulate(acts, mu, t0, points, state, cum_loo, cum_x, out_full, out_loo, out_x):
    """One column chunk (R, C) of arms (rounds t0+1 .. t0+C, 1-based) of instance b: adds
    ln μ̄_t, ln((S_t − x_{r,t})/(R−1)) and x_{r,t} to the running sums (state[0] = Σ ln μ̄,
    state[1] = next prefix index) and copies them out at the prefix points."""
    R, C = acts.shape
    P = points.shape[0]
    for c in range(C):
        S = 0.0
        for r in range(R):
            S += mu[acts[r, c]]
        state[0] += math.log(S / R)
        for r in range(R):
            x = mu[acts[r, c]]
            cum_loo[r] += math.log((S - x) / (R - 1))
            cum_x[r] += x
        t = t0 + c + 1
        pi = int(state[1])
        while pi < P and points[pi] == t:
            out_full[pi] = state[0]
            out_loo[:, pi] = cum_loo
            out_x[:, pi] = cum_x
            pi += 1
        state[1] = pi


def stream_sums(acts, mu, points, chunk=1 << 19):
    """Cumulative sums at ``points`` (1-based, increasing) of an (R, T) int array (memmap ok):
    Σ_{t≤p} ln μ̄_t (P,), Σ_{t≤p} ln μ̄_t^(−r) (R, P), Σ_{t≤p} x_{r,t} (R, P)."""
    R, T = acts.shape
    P = len(points)
    state = np.zeros(2)
    cum_loo, cum_x = np.zeros(R), np.zeros(R)
    full, loo, xs = np.zeros(P), np.zeros((R, P)), np.zeros((R, P))
    pts = np.asarray(points, np.int64)
    for t0 in range(0, T, chunk):
        a = np.ascontiguousarray(acts[:, t0:t0 + chunk])
        _accumulate(a, mu, t0, pts, state, cum_loo, cum_x, full, loo, xs)
    return full, loo, xs


def loo_log_means(acts, log_mu):
    """ln μ̄_t (..., T) and leave-one-run-out ln μ̄_t^(−r) (..., R, T) of arms ``acts``
    (..., R, T), in log space: log-sum-exp over the arm counts (exact when μ underflows)."""
    k, R = len(log_mu), acts.shape[-2]
    counts = np.stack([(acts == j).sum(axis=-2) for j in range(k)], axis=-2)   # (..., k, T)
    lm = np.asarray(log_mu, float)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        full = logsumexp(np.log(counts) + lm, axis=-2) - math.log(R)
        eye = np.eye(k, dtype=counts.dtype)[:, :, None]
        by_arm = np.stack([logsumexp(np.log(counts - eye[j]) + lm, axis=-2)
                           for j in range(k)], axis=-2) - math.log(R - 1)     # (..., k, T)
    return full, np.take_along_axis(by_arm, acts.astype(np.intp), axis=-2)


def sums_at(full, loo, xs, points):
    """Prefix sums at ``points`` of per-round arrays (last axis = rounds)."""
    idx = np.asarray(points) - 1
    return tuple(np.cumsum(v, axis=-1)[..., idx] for v in (full, loo, xs))


def jackknife(theta, theta_loo):
    """Leave-one-out jackknife over the run axis (−2 of ``theta_loo`` (..., R, P), ``theta``
    (..., P)): bias-corrected estimate, standard error and 95 % t-interval (R−1 df)."""
    R = theta_loo.shape[-2]
    m = theta_loo.mean(axis=-2)
    est = R * theta - (R - 1) * m
    se = np.sqrt((R - 1) / R * ((theta_loo - m[..., None, :]) ** 2).sum(axis=-2))
    h = stats.t.ppf(0.975, R - 1) * se
    return est, se, est - h, est + h


def summarise(full, loo, xs, points, mu_star):
    """Plug-in and jackknife Nash regret, average regret with a t-interval, at ``points``
    from the prefix sums of :func:`stream_sums` / :func:`sums_at`."""
    p = np.asarray(points, float)
    nash_plug = mu_star - np.exp(full / p)
    est, se, lo, hi = jackknife(nash_plug, mu_star - np.exp(loo / p))
    ar = mu_star - xs / p
    R = ar.shape[-2]
    am = ar.mean(axis=-2)
    ah = stats.t.ppf(0.975, R - 1) * ar.std(axis=-2, ddof=1) / math.sqrt(R)
    return dict(nash_plugin=nash_plug, nash=est, nash_se=se, nash_lo=lo, nash_hi=hi,
                avg=am, avg_lo=am - ah, avg_hi=am + ah)


# ------------------------------------------------------------------------ instances

def instance_a(configs, runs, reps, eps, seed):
    """k = 2, μ = ((2e)^{−T}, 1): per T, ``reps`` × ``runs`` runs. Reports the authors'
    statistic (mean over the reps of the plug-in NR of ``runs`` runs, t-interval over reps)
    and the jackknife over all reps × runs pooled."""
    out = {}
    for ci, (key, name, params, label) in configs:
        t0 = time.perf_counter()
        rows = []
        for T in A_HORIZONS:
            log_mu = np.array([-T * (1.0 + math.log(2.0)), 0.0])
            acts = np.empty((reps * runs, T), np.int8)
            for r in range(reps * runs):
                simulate(name, params, eps, np.exp(log_mu), T, (seed, 1, ci, T, r), acts[r])
            full, loo = loo_log_means(acts, log_mu)
            F, L, X = sums_at(full, loo, np.exp(log_mu)[acts.astype(np.intp)], [T])
            pooled = summarise(F, L, X, [T], 1.0)
            per_rep = []
            for g in range(reps):
                sl = slice(g * runs, (g + 1) * runs)
                f, _ = loo_log_means(acts[sl], log_mu)
                per_rep.append(1.0 - math.exp(f.mean()))
            per_rep = np.array(per_rep)
            h = (stats.t.ppf(0.975, reps - 1) * per_rep.std(ddof=1) / math.sqrt(reps)
                 if reps > 1 else 0.0)
            rows.append(dict(T=T, nash_authors=float(per_rep.mean()),
                             nash_authors_ci=[float(per_rep.mean() - h),
                                              float(per_rep.mean() + h)],
                             nash=float(pooled["nash"][0]),
                             nash_ci=[float(pooled["nash_lo"][0]), float(pooled["nash_hi"][0])],
                             nash_plugin=float(pooled["nash_plugin"][0]),
                             avg=float(pooled["avg"][0])))
        out[key] = dict(label=label, rows=rows, seconds=round(time.perf_counter() - t0, 1))
        print(f"instance a  {label:<32} NR(T=1000) = {rows[-1]['nash']:.3f} "
              f"[{rows[-1]['nash_ci'][0]:.3f}, {rows[-1]['nash_ci'][1]:.3f}]  authors' "
              f"{rows[-1]['nash_authors']:.3f}  ({out[key]['seconds']} s)", flush=True)
    return out


def instance_b(configs, runs, T, eps, seed, points, workers, tmp):
    """Prefix sums of every configuration on instance b (see the module doc, Memory)."""
    sums, seconds = {}, {}
    done = {c[1][0]: 0 for c in configs}
    busy = {c[1][0]: 0.0 for c in configs}
    with cf.ProcessPoolExecutor(workers) as pool:
        futs = {}
        for ci, (key, name, params, label) in configs:
            path = os.path.join(tmp, f"{key}.int8")
            np.memmap(path, np.int8, "w+", shape=(runs, T)).flush()
            for r in range(runs):
                f = pool.submit(_worker, (name, params, eps, T, (seed, 0, ci, r), path, runs, r))
                futs[f] = (key, path)
        for f in cf.as_completed(futs):
            key, path = futs[f]
            busy[key] += f.result()[1]
            done[key] += 1
            if done[key] == runs:
                t1 = time.perf_counter()
                mm = np.memmap(path, np.int8, "r", shape=(runs, T))
                sums[key] = stream_sums(mm, MU_B, points)
                del mm
                os.remove(path)
                seconds[key] = round(busy[key], 1)
                print(f"instance b  {key:<16} simulated {busy[key]:7.1f} worker-s, summarised "
                      f"{time.perf_counter() - t1:5.1f} s", flush=True)
    return sums, seconds


# ------------------------------------------------------------------------ report

def loglog_slope(x, y, lo_frac=0.1):
    """Least-squares slope of ln y on ln x over x ≥ lo_frac·max x (y > 0 only)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    m = (x >= lo_frac * x.max()) & (y > 0)
    return float(np.polyfit(np.log(x[m]), np.log(y[m]), 1)[0]) if m.sum() >= 3 else None


def build(sums_b, meta, res_a):
    """JSON summary from the saved prefix sums."""
    points = np.asarray(meta["points"])
    mu_star = float(MU_B.max())
    b = {}
    for key, (full, loo, xs) in sums_b.items():
        s = summarise(full, loo, xs, points, mu_star)
        label = next(c[3] for c in CONFIGS if c[0] == key)
        b[key] = dict(label=label, **{k: v.tolist() for k, v in s.items()},
                      final=dict(T=int(points[-1]), nash=float(s["nash"][-1]),
                                 nash_ci=[float(s["nash_lo"][-1]), float(s["nash_hi"][-1])],
                                 nash_plugin=float(s["nash_plugin"][-1]),
                                 avg=float(s["avg"][-1]),
                                 avg_ci=[float(s["avg_lo"][-1]), float(s["avg_hi"][-1])]),
                      slope_nash_last_decade=loglog_slope(points, s["nash"]),
                      slope_avg_last_decade=loglog_slope(points, s["avg"]),
                      worker_seconds=meta["seconds"].get(key))
    return dict(meta={k: v for k, v in meta.items() if k != "seconds"}, mu_star=mu_star,
                mu_mean=float(MU_B.mean()), instance_b=b, instance_a=res_a)


def plot(res, path):
    m = res["meta"]
    colors = {c[0]: f"C{i}" for i, c in enumerate(CONFIGS)}
    fig, ax = plt.subplots(1, 3, figsize=(17, 5.2))
    pts = m["points"]
    style = {c[0]: "--" if "as written" in c[3] else "-" for c in CONFIGS}
    for i in (0, 1):
        ax[i].axhline(res["mu_star"] - res["mu_mean"], color="0.5", lw=0.8, ls=":",
                      label="uniform play (mu* - mean mu)")
    ax[2].axhline(1 - 1 / (2 * math.e), color="0.5", lw=0.8, ls=":",
                  label="1 - 1/(2e): each arm once, deterministically")
    for key, r in res["instance_b"].items():
        c = colors[key]
        ax[0].plot(pts, r["nash"], style[key], color=c, label=r["label"])
        ax[0].fill_between(pts, np.maximum(r["nash_lo"], 1e-4), r["nash_hi"], color=c,
                           alpha=0.25)
        ax[1].plot(pts, r["avg"], style[key], color=c, label=r["label"])
        ax[1].fill_between(pts, np.maximum(r["avg_lo"], 1e-4), r["avg_hi"], color=c, alpha=0.25)
    for key, r in res["instance_a"].items():
        T = [x["T"] for x in r["rows"]]
        ax[2].plot(T, [x["nash"] for x in r["rows"]], style[key], marker="o", ms=3,
                   color=colors[key], label=r["label"])
        ax[2].fill_between(T, [x["nash_ci"][0] for x in r["rows"]],
                           [x["nash_ci"][1] for x in r["rows"]], color=colors[key], alpha=0.25)
    ax[0].set(xscale="log", yscale="log", xlabel="round t (prefix of one horizon-T run set)",
              ylabel="Nash regret (jackknife, 95% CI)",
              title=f"(b) k=50, eps={m['eps']:g}, T={m['horizon']:.3g}, {m['runs']} runs")
    ax[1].set(xscale="log", yscale="log", xlabel="round t", ylabel="average regret (95% CI)",
              title="(b) average regret")
    ax[2].set(xscale="log", xlabel="T", ylabel="Nash regret at T (jackknife, 95% CI)",
              title=f"(a) k=2, mu=((2e)^-T, 1), eps={m['eps_a']:g}, "
                    f"{m['a_reps']}x{m['runs']} runs per T")
    ax[0].legend(fontsize=7, loc="lower left")
    ax[2].legend(fontsize=7)
    for a in ax:
        a.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def save(out, sums_b, meta, res_a):
    np.savez_compressed(out / "regret_ncb.npz", meta=json.dumps(meta),
                        instance_a=json.dumps(res_a),
                        **{f"{k}:{n}": v for k, t in sums_b.items()
                           for n, v in zip(("full", "loo", "x"), t)})


def load(out):
    z = np.load(out / "regret_ncb.npz")
    sums = {}
    for name in z.files:
        if ":" in name:
            k, n = name.split(":")
            sums.setdefault(k, {})[n] = z[name]
    return ({k: (d["full"], d["loo"], d["x"]) for k, d in sums.items()},
            json.loads(str(z["meta"])), json.loads(str(z["instance_a"])))


def report(res):
    print(f"{'instance b, T = ' + format(res['meta']['horizon'], '.3g'):<34} {'NR jackknife':>12}"
          f" {'95% CI':>19} {'NR plug-in':>10} {'AR':>8} {'95% CI':>19} {'slope NR':>8}")
    for key, r in res["instance_b"].items():
        f = r["final"]
        sl = r["slope_nash_last_decade"]
        print(f"{r['label']:<34} {f['nash']:12.4f} [{f['nash_ci'][0]:8.4f}, {f['nash_ci'][1]:8.4f}]"
              f" {f['nash_plugin']:10.4f} {f['avg']:8.4f} [{f['avg_ci'][0]:8.4f}, "
              f"{f['avg_ci'][1]:8.4f}] {sl if sl is None else round(sl, 2)!s:>8}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--horizon", type=int, default=2 * 10 ** 7)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--eps", type=float, default=0.2)
    ap.add_argument("--eps-a", type=float, default=2.0, help="ε of instance a (authors: 2)")
    ap.add_argument("--a-reps", type=int, default=10)
    ap.add_argument("--points", type=int, default=60, help="prefix points (log-spaced, t ≥ 100)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tmp", default=None, help="directory of the R × T int8 arm files")
    ap.add_argument("--out", default=".")
    ap.add_argument("--replot", default=None, help="directory with regret_ncb.npz: rebuild "
                    "the JSON and the figure without simulating")
    a = ap.parse_args(argv)
    if a.replot:
        out = pathlib.Path(a.replot)
        sums_b, meta, res_a = load(out)
    else:
        out = pathlib.Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        configs = available_configs()
        T = a.horizon
        points = np.unique(np.geomspace(100, T, a.points).astype(np.int64))
        t0 = time.perf_counter()
        load0 = os.getloadavg()
        res_a = instance_a(configs, a.runs, a.a_reps, a.eps_a, a.seed)
        tmp = tempfile.mkdtemp(prefix="regret_ncb_", dir=a.tmp)
        try:
            sums_b, secs = instance_b(configs, a.runs, T, a.eps, a.seed, points, a.workers, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        meta = dict(horizon=T, runs=a.runs, eps=a.eps, eps_a=a.eps_a, a_reps=a.a_reps,
                    seed=a.seed, workers=a.workers, points=points.tolist(), seconds=secs,
                    wall_seconds=round(time.perf_counter() - t0, 1),
                    loadavg_start=load0, loadavg_end=os.getloadavg(),
                    configs=[c[0] for _, c in configs])
        save(out, sums_b, meta, res_a)
    res = build(sums_b, meta, res_a)
    (out / "regret_ncb.json").write_text(json.dumps(res))
    plot(res, out / "regret_ncb.png")
    report(res)
    print(f"wrote {out / 'regret_ncb.png'}, .json, .npz (wall {meta['wall_seconds']} s)")


if __name__ == "__main__":
    main()
