"""The experiments of Hu, Huang, Mehta and Hegde (2021).

Hu, Huang, Mehta and Hegde (2021), *Near-Optimal Algorithms for Differentially Private
Online Learning in a Stochastic Environment*, arXiv:2102.07929: Section 6 (Figures 1 and 2).

The experiment: cumulative pseudo-regret of Anytime-Lazy-UCB (Algorithm 1), Lazy-DP-TS
(Algorithm 3), DP-SE and AdaP-KLUCB over T = 10⁶ rounds on two Bernoulli settings with K = 5
arms, at ε ∈ {0.25, 0.5, 1}, averaged over 20 runs. The paper prints no number; its two
claims are the rows of the page: Lazy-DP-TS performs about as AdaP-KLUCB does, and it always
beats DP-SE and Anytime-Lazy-UCB.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from dpaudit.algorithms.lazy_dp import algorithm as lazy
from dpaudit.reproduce.experiment import (Claim, Context, Figure, RegretRuns, Reproduction, level,
                                          new_figure, ratio_row, save_figure)

KEY = "hu2021"
TITLE = ("Near-Optimal Algorithms for Differentially Private Online Learning in a Stochastic "
         "Environment")
CITATION = "Hu, Huang, Mehta, Hegde (2021, arXiv:2102.07929), Section 6, Figures 1 and 2"
EXPERIMENT = ("Cumulative pseudo-regret of Anytime-Lazy-UCB (Algorithm 1), Lazy-DP-TS "
              "(Algorithm 3), DP-SE and AdaP-KLUCB on two Bernoulli settings with K = 5 arms, "
              "T = 10⁶ rounds, ε ∈ {0.25, 0.5, 1}, averaged over 20 runs.")

SETTINGS = {"setting 1": lazy.SETTING_1, "setting 2": lazy.SETTING_2}
EPS_GRID = (0.25, 0.5, 1.0)


@dataclass(frozen=True)
class Curve:
    """One curve of the figure: its label, registry name and parameters."""

    label: str
    algo: str
    private: bool = True


LAZY_UCB = Curve("Anytime-Lazy-UCB (Algorithm 1)", "lazy-ucb")
LAZY_TS = Curve("Lazy-DP-TS (Algorithm 3)", "lazy-dp-ts")
DP_SE = Curve("DP-SE", "dp-se-regret")
ADAP_KLUCB = Curve("AdaP-KLUCB", "adap-klucb")
TS = Curve("Thompson sampling (non-private, Algorithm 2)", "ts-beta", private=False)
CURVES = (LAZY_UCB, LAZY_TS, DP_SE, ADAP_KLUCB, TS)


@dataclass(frozen=True)
class Settings:
    """What one reproduction runs.

    Args:
        settings: keys of :data:`SETTINGS`.
        eps: privacy budgets, a subset of :data:`EPS_GRID`.
        horizon: rounds T per run.
        runs: independent runs per curve.
        points: rounds at which the regret is read (log- and linearly spaced, at most).
    """
    settings: tuple = tuple(SETTINGS)
    eps: tuple = EPS_GRID
    horizon: int = 10 ** 6
    runs: int = 20
    points: int = 200

    def __post_init__(self) -> None:
        """Check the settings (ValueError naming the bad value)."""
        bad = [e for e in self.eps if e not in EPS_GRID]
        if bad or not self.eps:
            raise ValueError(f"eps {bad or '()'} not in the paper's grid {EPS_GRID}")

    @property
    def checkpoints(self) -> tuple:
        """The rounds at which the regret is recorded: log- and linearly spaced, 1..horizon."""
        t = np.concatenate([np.geomspace(1, self.horizon, self.points // 2),
                            np.linspace(1, self.horizon, self.points // 2)])
        return tuple(int(x) for x in np.unique(np.round(t).astype(np.int64)))


FULL = Settings()
QUICK = FULL          # the paper's own size runs in well under a minute
MODES = {"full": FULL, "quick": QUICK}


def _params(c: Curve, horizon: int) -> tuple:
    # DP-SE in a regret setting runs with the risk 1/T (its analysis' choice for regret)
    return (("risk", 1.0 / horizon),) if c is DP_SE else ()


def _simulate(s: Settings, ctx: Context) -> dict:
    keys, jobs = [], []
    for c_i, c in enumerate(CURVES):
        for s_i, name in enumerate(s.settings):
            for eps in (s.eps if c.private else (1.0,)):
                keys.append((c, name, eps))
                jobs.append(RegretRuns(c.algo, _params(c, s.horizon), eps, SETTINGS[name],
                                       s.horizon, s.runs,
                                       (ctx.seed, c_i, list(SETTINGS).index(name),
                                        EPS_GRID.index(eps)), s.checkpoints))
    return dict(zip(keys, ctx.regret(jobs, KEY)))


def _get(res: dict, c: Curve, name: str, eps: float) -> np.ndarray:
    return res[(c, name, eps if c.private else 1.0)]


def _figure(res: dict, s: Settings, folder: str) -> Figure:
    fig, axes = new_figure(len(s.eps), len(s.settings), width=4.0, height=3.2)
    t = np.asarray(s.checkpoints)
    data = {"checkpoints": list(s.checkpoints), "runs": s.runs, "horizon": s.horizon,
            "panels": []}
    for k, (name, eps) in enumerate((n, e) for n in s.settings for e in s.eps):
        ax = axes[k]
        panel = {"setting": name, "means": SETTINGS[name], "eps": eps, "curves": {}}
        for i, c in enumerate(CURVES):
            x = _get(res, c, name, eps)
            m = x.mean(axis=0)
            sd = x.std(axis=0, ddof=1) if x.shape[0] > 1 else np.zeros_like(m)
            ax.plot(t, m, ls="-" if c.private else "--", color=f"C{i}", label=c.label)
            ax.fill_between(t, m - sd, m + sd, color=f"C{i}", alpha=0.2)
            panel["curves"][c.label] = {"mean": m.tolist(), "std": sd.tolist()}
        data["panels"].append(panel)
        ax.set_title(f"{name} {SETTINGS[name]}, ε = {eps:g}", fontsize=8)
        ax.set_xlabel("round t")
        ax.set_ylabel("cumulative pseudo-regret")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=6)
    return save_figure(fig, data, folder, "figures1-2",
                       "Figures 1 and 2: cumulative pseudo-regret, one row per setting and one "
                       "panel per ε (mean ± one standard deviation over the runs); the "
                       "non-private Thompson sampling (dashed) is the same in every panel.")


def _why_klucb(v: tuple) -> str:
    share = (f"Lazy-DP-TS's regret is {v[0]:.2f} of AdaP-KLUCB's (interval "
             f"[{v[1]:.2f}, {v[2]:.2f}]). ")
    if v[0] < 1:
        return share + ("The paper gives no formula or parameter for AdaP-KLUCB (it cites "
                        "Azize and Basu 2022). Ours adds the privacy term α·ln t/(ε·N/2) to "
                        "the private mean before the KL-UCB bound, with α = 3.1: a reading of "
                        "the sources, which may explore more than the authors' runs did.")
    return share + "The paper gives no parameter of AdaP-KLUCB; ours is α = 3.1."


def _claims(res: dict, s: Settings, seed: int) -> list:
    claims = []
    for name in s.settings:
        for eps in s.eps:
            final = {c: _get(res, c, name, eps)[:, -1] for c in CURVES}
            where = f"{name}, ε = {eps:g}"
            k = 10 * list(SETTINGS).index(name) + EPS_GRID.index(eps)
            claims.append(ratio_row(final[LAZY_TS], final[ADAP_KLUCB], seed + 100 * k, Claim(
                f"{where}: R(T) of Lazy-DP-TS / AdaP-KLUCB",
                "Lazy-DP-TS performs about the same as AdaP-KLUCB (within a factor 2)",
                "interval inside [0.5, 2]", lambda v: 0.5 <= v[1] and v[2] <= 2, _why_klucb)))
            for c in (DP_SE, LAZY_UCB):
                claims.append(ratio_row(
                    final[LAZY_TS], final[c], seed + 100 * k + 1 + (c is LAZY_UCB), Claim(
                        f"{where}: R(T) of Lazy-DP-TS / {c.label}",
                        f"Lazy-DP-TS always beats {c.label.split(' (')[0]} (ratio < 1)",
                        "upper end < 1", lambda v: v[2] < 1,
                        f"Lazy-DP-TS is not significantly better than {c.label} here; the "
                        "runs' spread is in the figure's band.")))
    return claims


def run(s: Settings, ctx: Context, mode: str = "custom") -> Reproduction:
    """Run the experiment of ``s`` and write its figure into ``ctx.folder``.

    Args:
        s: the settings (:data:`FULL` or :data:`QUICK`, or a variant).
        ctx: the seed, workers, progress bars and folder.
        mode: ``full`` or ``quick``, as the page states it.

    Returns:
        The :class:`~dpaudit.reproduce.experiment.Reproduction`: the settings, figures and rows.
    """
    res = _simulate(s, ctx)
    settings = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(s).items()}
    rep = Reproduction(
        KEY, TITLE, CITATION, EXPERIMENT, mode, settings,
        choices=[
            "DP-SE runs with the risk δ = 1/T; the paper states none.",
            "AdaP-KLUCB: the KL-UCB index of the private mean with α = 3.1 (the paper cites "
            "it without formula or parameter).",
            "Rewards are Bernoulli(μ), drawn afresh in every run; the regret is the "
            "pseudo-regret Σ (max μ − μ of the arm played).",
            "The non-private Thompson sampling (Algorithm 2 without noise) is drawn for scale; "
            "the paper names no non-private baseline.",
            "Bands: mean ± one standard deviation over the runs (the paper's figures do not "
            "say what their bands are)."],
        seed=ctx.seed)
    rep.figures.append(_figure(res, s, ctx.folder))
    claims = _claims(res, s, ctx.seed)
    conf = level(len(claims))
    rep.rows = [c(conf) for c in claims]
    rep.tables.append({
        "title": "R(T), mean over the runs, with the rate Σ ln T / min(Δ_j, ε) of Theorems 3 "
                 "and 5 for scale",
        "header": ["setting", "ε", "Σ ln T/min(Δ, ε)"] + [c.label for c in CURVES],
        "rows": [[name, f"{eps:g}", f"{lazy.regret_rate(SETTINGS[name], eps, s.horizon):.0f}"]
                 + [f"{_get(res, c, name, eps)[:, -1].mean():.4g}" for c in CURVES]
                 for name in s.settings for eps in s.eps]})
    return rep
