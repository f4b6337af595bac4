"""The experiments of Sarkar, Pandey and Ray Chowdhury (2025).

Sarkar, Pandey and Ray Chowdhury (2025), *DP-NCB: Privacy Preserving Fair Bandits*:
Section 8, experiments (a)–(f).

Nash regret NR(t) = μ* − exp(mean_{s≤t} ln μ̄_s), with μ̄_s the mean over the runs of the
mean of the arm played in round s, and average regret AR(t) = μ* − mean_{s≤t} μ̄_s, of the
non-private NCB, AdaP-UCB, LDP-UCB, GDP-NCB (Algorithm 4) and LDP-NCB (Algorithm 5):
(a) AdaP-UCB against GDP-NCB on k = 2 arms with μ = ((2e)^−T, 1), one instance per horizon;
(b)–(e) k = 50 Bernoulli arms with means uniform on (0.005, 1), ε = 0.2 and a grid of ε, as
prefix curves of one horizon-T run set (the authors' figures); (f) mixed reward laws.

Statistics. NR is nonlinear in the runs (Jensen: the plug-in is biased upwards, O(1/R) per
round), so its estimate and interval come from a leave-one-run-out jackknife
(:func:`jackknife`): ln μ̄_t^(−r) from S_t − x_{r,t} (log-sum-exp over arm counts where μ
underflows, instance (a)), bias-corrected estimate R·θ̂ − (R−1)·mean_r θ̂^(−r), standard error
sqrt((R−1)/R·Σ_r(θ̂^(−r) − mean)²), Student t with R−1 df. AR is a mean over runs.

Memory. A worker runs one (configuration, run) through its compiled kernel and stores the arms
as int8 in a per-configuration file (R × T bytes, deleted once summarised); the main process
streams it in column chunks through a compiled pass (:func:`stream_sums`) that keeps only the
per-run cumulative sums at the prefix points.
"""
from __future__ import annotations

import math
import os
import tempfile
from dataclasses import asdict, dataclass

import numba as nb
import numpy as np
from scipy import stats
from scipy.special import logsumexp
from tqdm import tqdm

from dpaudit.algorithms import registry
from dpaudit.core import executor
from dpaudit.reproduce.experiment import (Claim, Context, Figure, Reproduction, Row, level,
                                          new_figure,
                                          save_figure)

KEY = "sarkar2025"
TITLE = "DP-NCB: Privacy Preserving Fair Bandits"
CITATION = "Sarkar, Pandey, Ray Chowdhury (2025), Section 8, experiments (a)–(f)"
EXPERIMENT = ("Nash and average regret of NCB, AdaP-UCB, LDP-UCB, GDP-NCB (Algorithm 4) and "
              "LDP-NCB (Algorithm 5) on the paper's instances: (a) two arms with μ = "
              "((2e)^−T, 1); (b)–(e) fifty Bernoulli arms at ε = 0.2 and across ε.")


@dataclass(frozen=True)
class Config:
    """One curve: its key, registry name, options ((key, value) pairs) and label."""
    key: str
    algo: str
    params: tuple
    label: str


NCB = Config("ncb", "ncb", (("phase1_constant", 1.0),), "NCB (non-private, C_I = 1)")
GDP = Config("gdp-ncb", "gdp-ncb", (), "GDP-NCB (C_I = 1600, as written)")
GDP_1 = Config("gdp-ncb-scaled", "gdp-ncb", (("phase1_constant", 1.0),),
               "GDP-NCB (C_I = 1)")
LDP = Config("ldp-ncb", "ldp-ncb", (), "LDP-NCB (C_I = 1600, as written)")
LDP_1 = Config("ldp-ncb-scaled", "ldp-ncb", (("phase1_constant", 1.0),),
               "LDP-NCB (C_I = 1)")
LDP_UCB = Config("ldp-ucb", "ldp-ucb", (), "LDP-UCB")
ADAP = Config("adap-ucb", "adap-ucb", (), "AdaP-UCB (α = 3.1)")
CONFIGS = (NCB, GDP, GDP_1, LDP, LDP_1, LDP_UCB, ADAP)     # the position is part of the seed
SWEPT = (GDP_1, LDP_1)                                      # experiments (c) and (d)
MU_B = tuple(np.random.RandomState(42).uniform(0.005, 1, 50).tolist())   # the authors' draw
A_CONFIGS = (GDP, GDP_1, ADAP)
F_CONFIGS = (NCB, GDP_1, LDP_1)                             # experiment (f), as (e)
PAPER_A = {"AdaP-UCB": 1.0, "GDP-NCB": 0.08}     # read off Figure (a) at T = 1000 (± 0.02)
READ_OFF = 0.02


@dataclass(frozen=True)
class Settings:
    """What one reproduction runs.

    Args:
        horizon: T of instance (b)'s run set (the authors ran 10⁸ for (b), 10⁷ for (c)–(f)).
        runs: runs per configuration of (b)–(e) (the paper: 50).
        eps: ε of (b) and (e).
        eps_grid: ε of (c) and (d).
        points: prefix points (log-spaced from t = 100).
        a_horizons: the horizons T of (a), each its own instance.
        a_runs, a_reps: runs per repetition and repetitions of (a) (the authors: 50 × 10).
        a_eps: ε of (a) (the authors' code: 2).
        f_horizon: T of (f)'s run set (a reward table of f_horizon × 50 float64 per run is
            drawn, 8 bytes each: 800 MB at 2·10⁶; the authors ran 10⁷).
    """
    horizon: int = 2 * 10 ** 7
    runs: int = 50
    eps: float = 0.2
    eps_grid: tuple = (0.2, 0.5, 1.0, 2.0)
    points: int = 60
    a_horizons: tuple = (3, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 440, 600, 800, 1000)
    a_runs: int = 50
    a_reps: int = 10
    a_eps: float = 2.0
    f_horizon: int = 2 * 10 ** 6

    def __post_init__(self) -> None:
        """Check the settings (ValueError naming the bad value)."""
        if self.eps not in self.eps_grid or self.runs < 2 or self.a_reps * self.a_runs < 2:
            raise ValueError("eps must be in eps_grid, and every estimate needs 2 runs")


FULL = Settings()
QUICK = Settings(horizon=4 * 10 ** 6, runs=30, a_reps=4, points=40, f_horizon=10 ** 6)
MODES = {"full": FULL, "quick": QUICK}


# ------------------------------------------------------------------------ statistics

@nb.njit(cache=True)
def _accumulate(acts: np.ndarray, mu: np.ndarray, t0: int, points: np.ndarray, state: np.ndarray,
                cum_loo: np.ndarray, cum_x: np.ndarray, out_full: np.ndarray, out_loo: np.ndarray,
                out_x: np.ndarray) -> None:
    """Add one column chunk of arms to the running sums.

    One column chunk (R, C) of arms (rounds t0+1 .. t0+C, 1-based): adds ln μ̄_t,
    ln((S_t − x_{r,t})/(R−1)) and x_{r,t} to the running sums (state[0] = Σ ln μ̄,
    state[1] = next prefix index) and copies them out at the prefix points.
    """
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


def stream_sums(acts: np.ndarray, mu: np.ndarray, points: np.ndarray,
                chunk: int = 1 << 19) -> tuple:
    """Cumulative sums at ``points`` of an (R, T) int array of arms (a memmap works).

    Args:
        acts: the arms, shape (R, T).
        mu: the arms' means.
        points: rounds (1-based, increasing).
        chunk: columns read at once.

    Returns:
        (Σ_{t≤p} ln μ̄_t of shape (P,), Σ_{t≤p} ln μ̄_t^(−r) of shape (R, P),
        Σ_{t≤p} x_{r,t} of shape (R, P)), float64.
    """
    R, T = acts.shape
    P = len(points)
    state = np.zeros(2)
    cum_loo, cum_x = np.zeros(R), np.zeros(R)
    full, loo, xs = np.zeros(P), np.zeros((R, P)), np.zeros((R, P))
    pts = np.asarray(points, np.int64)
    mu = np.asarray(mu, np.float64)
    for t0 in range(0, T, chunk):
        a = np.ascontiguousarray(acts[:, t0:t0 + chunk])
        _accumulate(a, mu, t0, pts, state, cum_loo, cum_x, full, loo, xs)
    return full, loo, xs


def loo_log_means(acts: np.ndarray, log_mu: np.ndarray) -> tuple:
    """Ln μ̄_t and the leave-one-run-out ln μ̄_t^(−r) of arms ``acts``, in log space.

    A log-sum-exp over the arm counts (exact when μ underflows).

    Args:
        acts: arms, shape (..., R, T).
        log_mu: the arms' log means.

    Returns:
        (ln μ̄_t of shape (..., T), ln μ̄_t^(−r) of shape (..., R, T)).
    """
    k, R = len(log_mu), acts.shape[-2]
    counts = np.stack([(acts == j).sum(axis=-2) for j in range(k)], axis=-2)   # (..., k, T)
    lm = np.asarray(log_mu, float)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        full = logsumexp(np.log(counts) + lm, axis=-2) - math.log(R)
        eye = np.eye(k, dtype=counts.dtype)[:, :, None]
        by_arm = np.stack([logsumexp(np.log(counts - eye[j]) + lm, axis=-2)
                           for j in range(k)], axis=-2) - math.log(R - 1)     # (..., k, T)
    return full, np.take_along_axis(by_arm, acts.astype(np.intp), axis=-2)


def sums_at(full: np.ndarray, loo: np.ndarray, xs: np.ndarray, points: np.ndarray) -> tuple:
    """Prefix sums at ``points`` of per-round arrays (last axis = rounds).

    Args:
        full: ln μ̄_t.
        loo: ln μ̄_t^(−r).
        xs: the runs' per-round rewards.
        points: rounds (1-based).

    Returns:
        The three prefix sums at ``points``.
    """
    idx = np.asarray(points) - 1
    return tuple(np.cumsum(v, axis=-1)[..., idx] for v in (full, loo, xs))


def jackknife(theta: np.ndarray, theta_loo: np.ndarray, confidence: float = 0.95) -> tuple:
    """Leave-one-out jackknife over the run axis.

    Args:
        theta: the estimate on all runs, shape (..., P).
        theta_loo: the estimates leaving one run out, shape (..., R, P).
        confidence: the interval's level.

    Returns:
        (bias-corrected estimate, standard error, low, high): a two-sided t-interval (R − 1
        degrees of freedom).
    """
    R = theta_loo.shape[-2]
    m = theta_loo.mean(axis=-2)
    est = R * theta - (R - 1) * m
    se = np.sqrt((R - 1) / R * ((theta_loo - m[..., None, :]) ** 2).sum(axis=-2))
    h = stats.t.ppf(0.5 + confidence / 2, R - 1) * se
    return est, se, est - h, est + h


def summarise(full: np.ndarray, loo: np.ndarray, xs: np.ndarray, points: np.ndarray,
              mu_star: float) -> dict:
    """Plug-in and jackknife Nash regret, and average regret, at ``points``.

    Args:
        full: prefix sums of ln μ̄_t (:func:`stream_sums` / :func:`sums_at`).
        loo: prefix sums of ln μ̄_t^(−r).
        xs: prefix sums of the rewards.
        points: rounds.
        mu_star: the best mean.

    Returns:
        Nash regret (plug-in, jackknife with 95 % interval) and average regret with its standard
        error and 95 % t-interval, per point.
    """
    p = np.asarray(points, float)
    nash_plug = mu_star - np.exp(full / p)
    est, se, lo, hi = jackknife(nash_plug, mu_star - np.exp(loo / p))
    ar = mu_star - xs / p
    R = ar.shape[-2]
    am = ar.mean(axis=-2)
    ase = ar.std(axis=-2, ddof=1) / math.sqrt(R)
    ah = stats.t.ppf(0.975, R - 1) * ase
    return dict(nash_plugin=nash_plug, nash=est, nash_se=se, nash_lo=lo, nash_hi=hi,
                avg=am, avg_se=ase, avg_lo=am - ah, avg_hi=am + ah, runs=R)


# ------------------------------------------------------------------------ simulation

def mixed_table(rng: np.random.Generator, T: int) -> np.ndarray:
    """Experiment (f)'s rewards, a (T, 50) float64 table.

    Arm i draws Bernoulli(μ_i) if μ_i ≥ 0.75, Beta(4, 1) if μ_i ∈ [0.5, 0.75), 0.4 or 1 with
    probability ½ each if μ_i ∈ [0.25, 0.5), uniform on [0, 1] otherwise (μ = :data:`MU_B`).

    Args:
        rng: the generator.
        T: rounds.

    Returns:
        The table.
    """
    mu = np.asarray(MU_B)
    u = rng.random((T, mu.size))
    out = np.where(mu >= 0.75, (u < mu).astype(np.float64),
                   np.where(mu >= 0.5, u ** 0.25,                # Beta(4, 1) by inversion
                            np.where(mu >= 0.25, np.where(u < 0.5, 0.4, 1.0), u)))
    return np.ascontiguousarray(out)


def law_means() -> tuple:
    """The means of experiment (f)'s reward laws.

    The means of experiment (f)'s reward laws (:func:`mixed_table`): μ_i, 0.8, 0.7, 0.5 by
    bucket.
    """
    return tuple(m if m >= 0.75 else 0.8 if m >= 0.5 else 0.7 if m >= 0.25 else 0.5
                 for m in MU_B)


def _kernel_run(algo: str, params: dict, eps: float, means: tuple, T: int, seed: tuple,
                out: np.ndarray, mixed: bool = False) -> None:
    """One full run (compiled kernel) into ``out``.

    One full run (compiled kernel) into ``out`` (length T): fresh Bernoulli(``means``)
    rewards, or a :func:`mixed_table` drawn from its own stream when ``mixed``.
    """
    spec = registry.get(algo)
    p = spec.resolve_params({**dict(params), "horizon": T, "means": tuple(means)})
    prep = spec.prepare(eps, p)
    buf = np.empty(T, np.int16)
    table = (mixed_table(np.random.default_rng(np.random.SeedSequence(
        seed[0], spawn_key=tuple(seed[1:]) + (1,))), T) if mixed else
        np.zeros((0, len(means))))
    rng = np.random.default_rng(np.random.SeedSequence(seed[0], spawn_key=tuple(seed[1:])))
    tau = spec.kernel(rng, table, prep.means, prep.theta, prep.aux, T, buf, np.empty((0, 8)),
                      np.empty(0))[0]
    if int(tau) != T:
        raise RuntimeError(f"{algo} stopped at {tau} of {T} rounds")
    out[:] = buf


def run_into_file(task: tuple) -> int:
    """Pool task: one run of a configuration on the 50-arm instance, written to a file.

    Args:
        task: (algo, params, eps, T, seed, path, R, r, mixed): run ``r``'s arms go to row r of
            the int8 file ``path`` (R × T).

    Returns:
        r.
    """
    algo, params, eps, T, seed, path, R, r, mixed = task
    mm = np.memmap(path, np.int8, "r+", shape=(R, T))
    _kernel_run(algo, params, eps, MU_B, T, seed, mm[r], mixed)
    mm.flush()
    del mm
    return r


@dataclass(frozen=True)
class RunSet:
    """Runs of (configuration, ε) cells on the 50-arm instance.

    Runs of (configuration, ε) cells on the 50-arm instance: ``runs`` runs of ``horizon``
    rounds each, read at ``points``; ``mixed``: experiment (f)'s reward laws; ``tag``: the
    first key of their seeds (one per experiment).
    """
    cells: tuple
    runs: int
    horizon: int
    points: tuple
    mixed: bool = False
    tag: int = 0


def run_set(rs: RunSet, ctx: Context, means: tuple = (MU_B,)) -> dict:
    """Prefix sums (:func:`stream_sums`) of every cell of ``rs``.

    Args:
        rs: the runs of (configuration, ε) cells.
        ctx: seed, workers, progress bars.
        means: the means the regret is computed with (one triple per entry).

    Returns:
        {(cell, index in ``means``): the three prefix sums}.
    """
    out = {}
    with tempfile.TemporaryDirectory(prefix="dpaudit-ncb-") as tmp:
        tasks, paths = [], {}
        for c, eps in rs.cells:
            path = paths[(c, eps)] = os.path.join(tmp, f"{c.key}-{eps:g}.int8")
            np.memmap(path, np.int8, "w+", shape=(rs.runs, rs.horizon)).flush()
            seed = (ctx.seed, rs.tag, CONFIGS.index(c), int(round(eps * 1000)))
            tasks += [(c.algo, c.params, eps, rs.horizon, seed + (r,), path, rs.runs, r,
                       rs.mixed) for r in range(rs.runs)]
        stream = executor.map_tasks(run_into_file, tasks, ctx.workers) if ctx.workers > 1 else \
            map(run_into_file, tasks)
        with tqdm(total=len(tasks), unit="run", desc=KEY, leave=False,
                  disable=not ctx.progress) as bar:
            for i, _ in enumerate(stream):
                bar.update(1)
                if (i + 1) % rs.runs == 0:         # the last run of a cell: summarise it
                    key = rs.cells[i // rs.runs]
                    mm = np.memmap(paths[key], np.int8, "r", shape=(rs.runs, rs.horizon))
                    for j, mu in enumerate(means):
                        out[(key, j)] = stream_sums(mm, mu, rs.points)
                    del mm
                    os.remove(paths[key])
    return out


def instance_a(s: Settings, ctx: Context) -> dict:
    """Experiment (a) per configuration and T.

    Args:
        s: the settings.
        ctx: seed, workers, progress bars.

    Returns:
        Per configuration and T: the jackknife Nash regret over all repetitions × runs pooled,
        and the authors' statistic (the mean over repetitions of the plug-in value).
    """
    out = {}
    n = s.a_reps * s.a_runs
    bar = tqdm(total=len(A_CONFIGS) * len(s.a_horizons) * n, unit="run", desc=f"{KEY} (a)",
               leave=False, disable=not ctx.progress)
    with bar:
        for c in A_CONFIGS:
            rows = []
            for T in s.a_horizons:
                log_mu = np.array([-T * (1.0 + math.log(2.0)), 0.0])
                acts = np.empty((n, T), np.int8)
                for r in range(n):
                    _kernel_run(c.algo, c.params, s.a_eps, np.exp(log_mu), T,
                                (ctx.seed, 1, CONFIGS.index(c), T, r), acts[r])
                bar.update(n)
                full, loo = loo_log_means(acts, log_mu)
                F, L, X = sums_at(full, loo, np.exp(log_mu)[acts.astype(np.intp)], [T])
                pooled = summarise(F, L, X, [T], 1.0)
                per_rep = np.array([1.0 - math.exp(loo_log_means(
                    acts[g * s.a_runs:(g + 1) * s.a_runs], log_mu)[0].mean())
                    for g in range(s.a_reps)])
                rows.append(dict(T=T, nash=float(pooled["nash"][0]),
                                 nash_se=float(pooled["nash_se"][0]),
                                 nash_ci=[float(pooled["nash_lo"][0]),
                                          float(pooled["nash_hi"][0])],
                                 nash_authors=float(per_rep.mean())))
            out[c] = rows
    return out


# ------------------------------------------------------------------------ page

def _figures(res_b: dict, res_a: dict, s: Settings, points: np.ndarray, folder: str) -> list:
    mu_star, mu_mean = max(MU_B), float(np.mean(MU_B))
    figs = []
    fig, axes = new_figure(2, 1, width=5.2, height=4.0)
    data = {"points": list(map(int, points)), "runs": s.runs, "eps": s.eps,
            "horizon": s.horizon, "curves": {}}
    for i, c in enumerate(CONFIGS):
        r = res_b[(c, s.eps)]
        ls = "--" if "as written" in c.label else "-"
        for ax, k in ((axes[0], "nash"), (axes[1], "avg")):
            ax.plot(points, r[k], ls, color=f"C{i}", label=c.label)
            ax.fill_between(points, np.maximum(r[f"{k}_lo"], 1e-5), r[f"{k}_hi"],
                            color=f"C{i}", alpha=0.2)
        data["curves"][c.label] = {k: r[k].tolist() for k in ("nash", "nash_lo", "nash_hi",
                                                             "nash_plugin", "avg", "avg_lo",
                                                             "avg_hi")}
    for ax, what in ((axes[0], "Nash regret"), (axes[1], "average regret")):
        ax.axhline(mu_star - mu_mean, color="0.5", lw=0.8, ls=":", label="uniform play")
        ax.set(xscale="log", yscale="log", xlabel="round t", ylabel=what)
        ax.grid(alpha=0.3, which="both")
        ax.set_title(f"(b), (e): k = 50, ε = {s.eps:g}, {s.runs} runs", fontsize=9)
    axes[0].legend(fontsize=6, loc="lower left")
    figs.append(save_figure(fig, data, folder, "figure_b",
                            "Experiments (b) and (e): Nash regret (jackknife, 95 % band) and "
                            "average regret (95 % t-band) against t, as prefix curves of one "
                            f"run set of horizon {s.horizon:.3g} (the constants fixed at it)."))
    fig, axes = new_figure(len(SWEPT), 1, width=5.0, height=3.8)
    data = {"points": list(map(int, points)), "eps": list(s.eps_grid), "curves": {}}
    for ax, c in zip(axes, SWEPT):
        for j, e in enumerate(s.eps_grid):
            r = res_b[(c, e)]
            ax.plot(points, r["nash"], color=f"C{j}", label=f"ε = {e:g}")
            ax.fill_between(points, np.maximum(r["nash_lo"], 1e-5), r["nash_hi"],
                            color=f"C{j}", alpha=0.2)
            data["curves"][f"{c.label}, ε = {e:g}"] = r["nash"].tolist()
        ax.plot(points, res_b[(NCB, s.eps)]["nash"], "k--", lw=1, label="NCB (non-private)")
        ax.set(xscale="log", yscale="log", xlabel="round t", ylabel="Nash regret")
        ax.set_title(f"({'c' if c is GDP_1 else 'd'}) {c.label}", fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    figs.append(save_figure(fig, data, folder, "figure_cd",
                            "Experiments (c) and (d): Nash regret of GDP-NCB and LDP-NCB "
                            "across ε, with the non-private NCB."))
    fig, axes = new_figure(1, 1, width=5.2, height=3.8)
    ax = axes[0]
    data = {"T": list(s.a_horizons), "eps": s.a_eps, "runs": s.a_runs, "reps": s.a_reps,
            "curves": {}}
    for i, c in enumerate(A_CONFIGS):
        rows = res_a[c]
        ax.plot(s.a_horizons, [x["nash"] for x in rows], marker="o", ms=3, color=f"C{i}",
                label=c.label)
        ax.fill_between(s.a_horizons, [x["nash_ci"][0] for x in rows],
                        [x["nash_ci"][1] for x in rows], color=f"C{i}", alpha=0.2)
        data["curves"][c.label] = rows
    ax.axhline(1 - 1 / (2 * math.e), color="0.5", lw=0.8, ls=":",
               label="1 − 1/(2e): each arm once, deterministically")
    ax.set(xscale="log", xlabel="T", ylabel="Nash regret at T")
    ax.set_title(f"(a) k = 2, μ = ((2e)^−T, 1), ε = {s.a_eps:g}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    figs.append(save_figure(fig, data, folder, "figure_a",
                            "Experiment (a): Nash regret at T of AdaP-UCB and GDP-NCB, one "
                            "instance per T (jackknife over all runs, 95 % band)."))
    return figs


def _nr(res_b: dict, c: Config, eps: float) -> tuple:
    """(estimate, standard error, runs) of NR at the horizon."""
    r = res_b[(c, eps)]
    return float(r["nash"][-1]), float(r["nash_se"][-1]), int(r["runs"])


def _less(a: tuple, b: tuple, conf: float, claim: Claim) -> Row:
    """A row on NR(a) − NR(b) at the horizon.

    A row on NR(a) − NR(b) at the horizon (two independent jackknife estimates, normal
    interval at ``conf``).
    """
    d = a[0] - b[0]
    h = stats.norm.ppf(0.5 + conf / 2) * math.hypot(a[1], b[1])
    v = (d, d - h, d + h)
    ok = bool(claim.holds(v))
    return Row(claim.quantity, claim.paper, f"{v[0]:+.4f} [{v[1]:+.4f}, {v[2]:+.4f}]", ok,
               claim.rule, "" if ok else (claim.why(v) if callable(claim.why) else claim.why))


def figure_a_row(x: dict, c: Config, ref: float, s: Settings, conf: float) -> Row:
    """Experiment (a) at its largest T against the value read off the paper's figure.

    The interval from the runs (t, ``conf``) is widened by the reading precision
    :data:`READ_OFF`; the row is reproduced when it holds ``ref``.

    Args:
        x: our Nash regret (``nash``, ``nash_se`` of the jackknife over all runs).
        c: the configuration.
        ref: the value read off the figure.
        s: the settings.
        conf: the interval's level.

    Returns:
        The :class:`~dpaudit.reproduce.experiment.Row`.
    """
    h = stats.t.ppf(0.5 + conf / 2, s.a_reps * s.a_runs - 1) * x["nash_se"]
    lo, hi = x["nash"] - h, x["nash"] + h
    ok = lo - READ_OFF <= ref <= hi + READ_OFF
    why = ("" if ok else
           "The authors' GDP-NCB caps Phase I at ⌊√T⌋ + 1 rounds, resets the private mean at "
           "Phase II and uses ln W in its bonuses; ours is Algorithm 4 with only C_I = 1 taken "
           "from their code, so it explores longer." if c is GDP_1 else
           "Ours is just above 1 − 1/(2e) ≈ 0.82, the floor of any algorithm that pulls each "
           "arm once deterministically, so it rarely pulls the bad arm again; the figure's ≈ 1 "
           "needs many more such pulls. The paper does not give the AdaP-UCB it ran; ours "
           "reads Azize and Basu (2022) from the sources, with α = 3.1.")
    return Row(f"(a) Nash regret of {c.label} at T = {s.a_horizons[-1]}, ε = {s.a_eps:g}",
               f"≈ {ref:g} (read off the figure, ± {READ_OFF:g})",
               f"{x['nash']:.3f} [{lo:.3f}, {hi:.3f}]", ok,
               "the interval widened by the reading precision holds the paper's value", why)


def _claims(res_b: dict, res_a: dict, s: Settings) -> list:
    e, T = s.eps, s.horizon
    nr = {c: _nr(res_b, c, e) for c in CONFIGS}
    claims = []
    a_last = {c: res_a[c][-1] for c in A_CONFIGS}
    for c, paper_key in ((ADAP, "AdaP-UCB"), (GDP_1, "GDP-NCB")):
        claims.append(lambda conf, c=c, paper_key=paper_key: figure_a_row(
            a_last[c], c, PAPER_A[paper_key], s, conf))
    claims.append(lambda conf: _less(nr[GDP_1], nr[ADAP], conf, Claim(
        f"(b) NR(T) of {GDP_1.label} − {ADAP.label}, T = {T:.3g}",
        "GDP-NCB beats AdaP-UCB for larger T", "upper end < 0", lambda v: v[2] < 0,
        "AdaP-UCB's Nash regret is below GDP-NCB's at this horizon: Algorithm 4's Phase I "
        "(uniform play until the private means cross a threshold) costs more than AdaP-UCB's "
        "one pull per arm; the authors' code caps Phase I at ⌊√T⌋ + 1 rounds, ours does "
        "not.")))
    claims.append(lambda conf: _less(nr[LDP_1], nr[LDP_UCB], conf, Claim(
        f"(b) NR(T) of {LDP_1.label} − LDP-UCB, T = {T:.3g}",
        "LDP-NCB is much better than LDP-UCB", "upper end < 0", lambda v: v[2] < 0,
        "LDP-NCB is not below LDP-UCB at this horizon: its uniform Phase I, as Algorithm 5 "
        "writes it (no cap on its length), still dominates; the authors ran 10⁸ rounds.")))
    claims.append(lambda conf: _less(nr[LDP], nr[LDP_UCB], conf, Claim(
        f"(b) NR(T) of {LDP.label} − LDP-UCB, T = {T:.3g}",
        "LDP-NCB is much better than LDP-UCB", "upper end < 0", lambda v: v[2] < 0,
        "With the paper's C_I = 1600 Phase I never ends at this horizon: LDP-NCB plays "
        "uniformly, so its Nash regret is that of uniform play.")))
    lo_e, hi_e = min(s.eps_grid), max(s.eps_grid)
    for c in SWEPT:
        claims.append(lambda conf, c=c: _less(
            _nr(res_b, c, hi_e), _nr(res_b, c, lo_e), conf, Claim(
                f"({'c' if c is GDP_1 else 'd'}) NR(T) of {c.label} at ε = {hi_e:g} − at "
                f"ε = {lo_e:g}", "regret rises as ε falls", "upper end < 0",
                lambda v: v[2] < 0,
                "The Nash regret at the horizon does not fall significantly with ε here: "
                "Phase I's length depends on ε only through its noise, which is small "
                "against the threshold at this horizon.")))
        claims.append(lambda conf, c=c: _less(nr[NCB], _nr(res_b, c, hi_e), conf, Claim(
            f"({'c' if c is GDP_1 else 'd'}) NR(T) of NCB − {c.label} at ε = {hi_e:g}",
            "the non-private NCB is lowest", "upper end < 0", lambda v: v[2] < 0,
            "NCB is not significantly below the private algorithm at its largest ε.")))
    claims.append(lambda conf: _less(nr[NCB], nr[GDP_1], conf, Claim(
        f"(e) NR(T) of NCB − {GDP_1.label}, ε = {e:g}",
        "GDP-NCB's regret decays more slowly than NCB's (above it)", "upper end < 0",
        lambda v: v[2] < 0, "NCB is not significantly below GDP-NCB here.")))
    claims.append(lambda conf: _less(nr[GDP_1], nr[LDP_1], conf, Claim(
        f"(e) NR(T) of {GDP_1.label} − {LDP_1.label}, ε = {e:g}",
        "LDP-NCB decays slowest (above GDP-NCB)", "upper end < 0", lambda v: v[2] < 0,
        "GDP-NCB is not significantly below LDP-NCB at this horizon.")))
    return claims


def _figure_f(res_f: dict, s: Settings, points: np.ndarray, folder: str) -> Figure:
    fig, axes = new_figure(1, 1, width=5.2, height=4.0)
    ax = axes[0]
    data = {"points": list(map(int, points)), "runs": s.runs, "eps": s.eps,
            "horizon": s.f_horizon, "curves": {}}
    for i, c in enumerate(F_CONFIGS):
        for j, (what, ls) in enumerate((("the laws' means", "-"), ("nominal μ", "--"))):
            r = res_f[(c, j)]
            ax.plot(points, r["nash"], ls, color=f"C{i}", label=f"{c.label}, {what}")
            if j == 0:
                ax.fill_between(points, np.maximum(r["nash_lo"], 1e-5), r["nash_hi"],
                                color=f"C{i}", alpha=0.2)
            data["curves"][f"{c.label}, {what}"] = {k: r[k].tolist() for k in
                                                    ("nash", "nash_lo", "nash_hi", "avg")}
    ax.set(xscale="log", yscale="log", xlabel="round t", ylabel="Nash regret")
    ax.set_title(f"(f) mixed reward laws, k = 50, ε = {s.eps:g}, {s.runs} runs", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=6, loc="lower left")
    return save_figure(fig, data, folder, "figure_f",
                       "Experiment (f): Nash regret with mixed reward laws (Bernoulli, "
                       "Beta(4, 1), two-point, uniform by the arm's μ), computed with the laws' "
                       "own means (solid, 95 % band) and with the nominal μ as the authors' "
                       "code (dashed).")


def _claims_f(res_f: dict, s: Settings) -> list:
    nr = {c: (float(res_f[(c, 0)]["nash"][-1]), float(res_f[(c, 0)]["nash_se"][-1]))
          for c in F_CONFIGS}
    T = f"T = {s.f_horizon:.3g}"
    return [lambda conf: _less(nr[NCB], nr[GDP_1], conf, Claim(
                f"(f) NR(T) of NCB − {GDP_1.label}, mixed laws, {T}",
                "the same trends as (e): GDP-NCB above NCB", "upper end < 0",
                lambda v: v[2] < 0, "NCB is not significantly below GDP-NCB here.")),
            lambda conf: _less(nr[GDP_1], nr[LDP_1], conf, Claim(
                f"(f) NR(T) of {GDP_1.label} − {LDP_1.label}, mixed laws, {T}",
                "the same trends as (e): LDP-NCB above GDP-NCB", "upper end < 0",
                lambda v: v[2] < 0, "GDP-NCB is not significantly below LDP-NCB here."))]


def run(s: Settings, ctx: Context, mode: str = "custom") -> Reproduction:
    """Run the experiments of ``s`` and write their figures into ``ctx.folder``.

    Args:
        s: the settings (:data:`FULL` or :data:`QUICK`, or a variant).
        ctx: the seed, workers, progress bars and folder.
        mode: ``full`` or ``quick``, as the page states it.

    Returns:
        The :class:`~dpaudit.reproduce.experiment.Reproduction`: the settings, figures and rows.
    """
    points = tuple(int(t) for t in np.unique(np.geomspace(100, s.horizon, s.points)
                                                .astype(np.int64)))
    cells = tuple([(c, s.eps) for c in CONFIGS] + [(c, e) for c in SWEPT for e in s.eps_grid
                                                   if e != s.eps])
    sums = run_set(RunSet(cells, s.runs, s.horizon, points), ctx)
    res_b = {k: summarise(*sums[(k, 0)], points, max(MU_B)) for k in cells}
    f_points = tuple(int(t) for t in np.unique(np.geomspace(100, s.f_horizon, s.points)
                                                  .astype(np.int64)))
    f_cells = tuple((c, s.eps) for c in F_CONFIGS)
    f_sums = run_set(RunSet(f_cells, s.runs, s.f_horizon, f_points, mixed=True, tag=3), ctx,
                     means=(law_means(), MU_B))
    res_f = {(c, j): summarise(*f_sums[((c, s.eps), j)], f_points,
                               max((law_means(), MU_B)[j])) for c in F_CONFIGS for j in (0, 1)}
    res_a = instance_a(s, ctx)
    rep = Reproduction(
        KEY, TITLE, CITATION, EXPERIMENT, mode,
        {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(s).items()},
        choices=[
            "Instance (b): the authors' draw, RandomState(42).uniform(0.005, 1, 50).",
            f"Horizon of (b)–(e): {s.horizon:.3g} rounds (the authors ran 10⁸ for (b) and "
            "10⁷ for (c)–(f)); prefix curves of one run set, the constants fixed at T, as the "
            "authors' figures.",
            "GDP-NCB and LDP-NCB as Algorithms 4 and 5 write them (C_I = 1600: at these "
            "horizons Phase I never ends, so they play uniformly) and with C_I = 1, the "
            "multiplier of the authors' code, without its other changes (Phase-I cap "
            "⌊√T⌋ + 1, reset of the private mean, ln W in the bonuses).",
            "NCB with C_I = 1; AdaP-UCB with α = 3.1 and the paper's index (its source, Azize "
            "and Basu 2022, gives the exact form).",
            f"(a) with ε = {s.a_eps:g} and GDP-NCB's C_I = 1, as the authors' code; "
            f"{s.a_reps} × {s.a_runs} runs per T.",
            "(f): rewards by the arm's μ as the paper's table, Beta(4, 1) drawn by inversion "
            "(u^(1/4)), the two-point law equiprobable on {0.4, 1}; the rows use the laws' own "
            "means (the authors' code used the nominal μ, the dashed curves).",
            "Nash regret by a leave-one-run-out jackknife (the plug-in is biased upwards), "
            "average regret by a t-interval; a difference of two curves at the horizon by a "
            "normal interval on the two standard errors."],
        seed=ctx.seed)
    rep.figures += _figures(res_b, res_a, s, np.asarray(points), ctx.folder)
    rep.figures.append(_figure_f(res_f, s, np.asarray(f_points), ctx.folder))
    claims = _claims(res_b, res_a, s) + _claims_f(res_f, s)
    conf = level(len(claims))
    rep.rows = [c(conf) for c in claims]
    rep.tables.append({
        "title": f"At the horizon T = {s.horizon:.3g}, ε = {s.eps:g}",
        "header": ["algorithm", "Nash regret (jackknife)", "plug-in", "average regret"],
        "rows": [[c.label, f"{res_b[(c, s.eps)]['nash'][-1]:.4f}",
                  f"{res_b[(c, s.eps)]['nash_plugin'][-1]:.4f}",
                  f"{res_b[(c, s.eps)]['avg'][-1]:.4f}"] for c in CONFIGS]})
    return rep
