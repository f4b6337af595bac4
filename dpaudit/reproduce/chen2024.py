"""The experiments of Chen, Karthik, Chee and Tan (2024).

Chen, Karthik, Chee and Tan (2024), *Fixed-Budget Differentially Private Best Arm
Identification*, ICLR 2024, arXiv:2401.09073: Section 5 (Figure 1) and Appendix E.2
(Figure 2).

Figure 1: the share of trials that identify the best arm, for DP-BAI (Algorithm 1), its
BASELINE (uniform phases), the non-private OD-LinBAI and DP-OD (Appendix E.1), against the
budget T and the privacy level ε, on the Section 5 instance (K = 30 arms in d = 2, rewards
uniform on [0, 2μ_i]), 1000 trials per point. Figure 2: DP-BAI and DP-OD on the two-arm
instance of Proposition E.1 (a_1 = (x, 0), a_2 = (0, y), gap Δ = 0.05, x = 1) as y grows. The
paper prints no number; its claims are the rows.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from dpaudit.algorithms import registry
from dpaudit.algorithms.dp_bai.algorithm import (dp_bai_kernel, dp_bai_recommendations,
                                                 od_recommendations)
from dpaudit.reproduce.experiment import (Claim, Context, Figure, Reproduction, Row, level,
                                          new_figure, save_figure)

KEY = "chen2024"
TITLE = "Fixed-Budget Differentially Private Best Arm Identification"
CITATION = ("Chen, Karthik, Chee, Tan (ICLR 2024, arXiv:2401.09073), Section 5, Figure 1 and "
            "Appendix E.2, Figure 2")
EXPERIMENT = ("Share of trials that identify the best arm, for DP-BAI (Algorithm 1), BASELINE, "
              "the non-private OD-LinBAI and DP-OD (Appendix E.1), against the budget T and "
              "ε on the Section 5 instance; and DP-BAI against DP-OD on the two-arm instance "
              "of Proposition E.1 as the ratio of its feature norms grows.")

METHODS = {"dp-bai": "DP-BAI", "dp-bai-baseline": "BASELINE", "dp-od": "DP-OD",
           "od-linbai": "OD-LinBAI (non-private)"}
PRIVATE = ("dp-bai", "dp-bai-baseline", "dp-od")
BEST = 0                            # the best arm of both instances (a_1)
CHUNK = 32                          # trials per generated chunk of tables
E1_GAP = 0.05                       # Proposition E.1: mu_1 = 0.5 + gap, mu_2 = 0.5


@dataclass(frozen=True)
class Settings:
    """What one reproduction runs.

    Args:
        budgets: the budgets T of Figure 1.
        eps: the privacy levels ε of Figure 1.
        trials: trials per point (each a fresh reward table).
        ratios: the values of y (x = 1) of Figure 2.
        e1_budget, e1_eps: T and ε of Figure 2.
    """
    budgets: tuple = (500, 1000, 2000, 5000)
    eps: tuple = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
    trials: int = 1000
    ratios: tuple = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0)
    e1_budget: int = 2000
    e1_eps: float = 1.0

    def __post_init__(self) -> None:
        """Check the settings (ValueError naming the bad value)."""
        if not {0.1, 1.0, 10.0} <= set(self.eps):
            raise ValueError(f"eps {self.eps} must hold 0.1, 1 and 10 (the rows' points)")


FULL = Settings()
QUICK = FULL              # the paper's 1000 trials per point take seconds
MODES = {"full": FULL, "quick": QUICK}


def successes(cells: list, trials: int, seed: int | tuple, features: str | None = None,
              means: tuple | None = None) -> list[int]:
    """Trials that recommend the best arm, per cell (method, ε, T).

    Trials that recommend the best arm, per cell (method, ε, T): every trial draws one
    reward table per budget, uniform on [0, 2μ_i] (Section 5), shared by the cells of that
    budget (common random numbers); each cell has its own noise stream.

    Args:
        cells: (registry name, ε, budget T) triples.
        trials: trials per cell.
        seed: entropy of the seeds (an int or a tuple of ints).
        features: the instance's features (``features`` text of the registry); default
            Section 5's.
        means: the instance's means; default Section 5's.

    Returns:
        One count per cell, in order.
    """
    given = {} if features is None else {"features": features, "means": means}
    out = [0] * len(cells)
    for t_i, T in enumerate(sorted({c[2] for c in cells})):
        jobs = []
        for j, (name, eps, budget) in enumerate(cells):
            if budget != T:
                continue
            spec = registry.get(name)
            p = spec.resolve_params({**given, "horizon": T})
            fn = dp_bai_recommendations if spec.kernel is dp_bai_kernel else od_recommendations
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(t_i, 1, j)))
            jobs.append((j, spec.prepare(eps, p), spec.audit_horizon(p), fn, rng))
        mu = jobs[0][1].means
        width = max(job[2] for job in jobs)         # the longest run reads inside the table
        rng_tab = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(t_i, 0)))
        for done in range(0, trials, CHUNK):
            n = min(CHUNK, trials - done)
            tables = rng_tab.random((n, mu.size, width)) * (2.0 * mu)[None, :, None]
            for j, prep, limit, fn, rng in jobs:
                out[j] += int((fn(rng, tables, prep.means, prep.theta, prep.aux, limit)
                               == BEST).sum())
    return out


def band(rates: ArrayLike, trials: int) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % Clopper–Pearson interval of each success rate (the figures' bands).

    Args:
        rates: success rates.
        trials: trials per rate.

    Returns:
        (low, high) arrays of the rates' shape.
    """
    lo, hi = proportion_confint(np.round(np.asarray(rates) * trials), trials, alpha=0.05,
                                method="beta")
    return np.asarray(lo), np.asarray(hi)


def _figure1(rate: dict, s: Settings, folder: str) -> Figure:
    fig, axes = new_figure(2, 1, width=5.0, height=3.6)
    eps_mid = 1.0
    for i, (m, label) in enumerate(METHODS.items()):
        e = None if m == "od-linbai" else eps_mid
        T = s.budgets[0]
        for ax, x, r in ((axes[0], s.budgets, [rate[(m, e, b)] for b in s.budgets]),
                         (axes[1], s.eps, [rate[(m, None if m == "od-linbai" else v, T)]
                                           for v in s.eps])):
            ax.plot(x, r, marker="o", ms=3, color=f"C{i}", label=label)
            ax.fill_between(x, *band(r, s.trials), color=f"C{i}", alpha=0.2)
    axes[0].set_xlabel("budget T")
    axes[0].set_title(f"varying T, ε = {eps_mid:g}", fontsize=9)
    axes[1].set_xlabel("ε")
    axes[1].set_xscale("log")
    axes[1].set_title(f"varying ε, T = {s.budgets[0]}", fontsize=9)
    for ax in axes:
        ax.set_ylabel("success rate")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    data = {"trials": s.trials, "budgets": list(s.budgets), "eps": list(s.eps),
            "success": [{"method": m, "eps": e, "T": T, "rate": r}
                        for (m, e, T), r in rate.items()]}
    return save_figure(fig, data, folder, "figure1",
                       f"Figure 1: success rate against T at ε = {eps_mid:g} (left) and against "
                       f"ε at T = {s.budgets[0]} (right), {s.trials} trials per point, "
                       "bands: 95 % Clopper–Pearson intervals; OD-LinBAI ignores ε. Every point's count is in the data.")


def _figure2(rate: dict, s: Settings, folder: str) -> Figure:
    fig, axes = new_figure(1, 1, width=5.0, height=3.6)
    ax = axes[0]
    for i, m in enumerate(("dp-bai", "dp-od")):
        r = [rate[(m, y)] for y in s.ratios]
        ax.plot(s.ratios, r, marker="o", ms=3, color=f"C{2 * i}", label=METHODS[m])
        ax.fill_between(s.ratios, *band(r, s.trials), color=f"C{2 * i}", alpha=0.2)
    ax.set_xscale("log")
    ax.set_xlabel("(x ∨ y)/(x ∧ y)")
    ax.set_ylabel("success rate")
    ax.set_title(f"Proposition E.1 instance, Δ = {E1_GAP:g}, T = {s.e1_budget}, "
                 f"ε = {s.e1_eps:g}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    data = {"trials": s.trials, "ratios": list(s.ratios), "T": s.e1_budget, "eps": s.e1_eps,
            "success": {METHODS[m]: [rate[(m, y)] for y in s.ratios] for m in ("dp-bai",
                                                                                 "dp-od")}}
    return save_figure(fig, data, folder, "figure2",
                       "Figure 2: success rate of DP-BAI and DP-OD on the two-arm instance of "
                       "Proposition E.1 (a_1 = (1, 0), a_2 = (0, y)) as y grows; bands: 95 % "
                       "Clopper–Pearson intervals.")


def _diff_row(a: int, b: int, n: int, conf: float, claim: Claim) -> Row:
    """A row on the difference a/n − b/n of two success rates (Newcombe's interval)."""
    lo, hi = confint_proportions_2indep(a, n, b, n, method="newcomb", compare="diff",
                                        alpha=1 - conf)
    v = (a / n - b / n, float(lo), float(hi))
    ok = bool(claim.holds(v))
    return Row(claim.quantity, claim.paper, f"{v[0]:+.3f} [{v[1]:+.3f}, {v[2]:+.3f}]", ok,
               claim.rule, "" if ok else claim.why)


def _claims(wins: dict, e1: dict, s: Settings) -> list:
    n, T0 = s.trials, s.budgets[0]
    claims = []
    for other in ("dp-bai-baseline", "dp-od"):
        for e in (0.1, 1.0, 10.0):
            why = ("At ε = 10 the privacy noise is small and both methods are near the "
                   "non-private OD-LinBAI on this instance, so neither is ahead."
                   if e >= 10 and other == "dp-od" else
                   "DP-BAI is not significantly ahead at this point.")
            claims.append(lambda conf, other=other, e=e, why=why: _diff_row(
                wins[("dp-bai", e, T0)], wins[(other, e, T0)], n, conf, Claim(
                    f"success of DP-BAI − {METHODS[other]} at T = {T0}, ε = {e:g}",
                    f"DP-BAI significantly outperforms {METHODS[other]} (Section 5)",
                    "lower end > 0", lambda v: v[1] > 0, why)))
    for T in s.budgets:
        claims.append(lambda conf, T=T: _diff_row(
            wins[("dp-bai", 10.0, T)], wins[("od-linbai", None, T)], n, conf, Claim(
                f"success of DP-BAI at ε = 10 − OD-LinBAI at T = {T}",
                "as ε grows, DP-BAI approaches the non-private OD-LinBAI (Section 5)",
                "interval inside ±0.03", lambda v: -0.03 <= v[1] and v[2] <= 0.03,
                "DP-BAI at ε = 10 is further than 0.03 from OD-LinBAI here.")))
    claims.append(lambda conf: _diff_row(
        wins[("dp-bai-baseline", 10.0, T0)], wins[("od-linbai", None, T0)], n, conf, Claim(
            f"success of BASELINE at ε = 10 − OD-LinBAI at T = {T0}",
            "BASELINE does poorly because it ignores the linear structure (Section 5)",
            "upper end < 0", lambda v: v[2] < 0,
            "BASELINE is not significantly below OD-LinBAI at this point.")))
    lo_y, hi_y = s.ratios[0], s.ratios[-1]
    claims.append(lambda conf: _diff_row(
        e1[("dp-od", hi_y)], e1[("dp-od", lo_y)], n, conf, Claim(
            f"success of DP-OD at y = {hi_y:g} − at y = {lo_y:g} (Figure 2)",
            "DP-OD degrades as (x ∨ y)/(x ∧ y) grows (Appendix E.2)", "upper end < 0",
            lambda v: v[2] < 0, "DP-OD does not degrade over this range at this T and ε.")))
    claims.append(lambda conf: _diff_row(
        e1[("dp-bai", hi_y)], e1[("dp-bai", lo_y)], n, conf, Claim(
            f"success of DP-BAI at y = {hi_y:g} − at y = {lo_y:g} (Figure 2)",
            "DP-BAI stays flat as the ratio grows (Appendix E.2)", "interval inside ±0.05",
            lambda v: -0.05 <= v[1] and v[2] <= 0.05,
            "DP-BAI's success moves by more than 0.05 over this range.")))
    return claims


def run(s: Settings, ctx: Context, mode: str = "custom") -> Reproduction:
    """Run the experiments of ``s`` and write their figures into ``ctx.folder``.

    Args:
        s: the settings (:data:`FULL` or :data:`QUICK`, or a variant).
        ctx: the seed, workers, progress bars and folder.
        mode: ``full`` or ``quick``, as the page states it.

    Returns:
        The :class:`~dpaudit.reproduce.experiment.Reproduction`: the settings, figures and rows.
    """
    cells = [(m, e, T) for T in s.budgets for m in PRIVATE for e in s.eps] + \
        [("od-linbai", 1.0, T) for T in s.budgets]
    counts = successes(cells, s.trials, (ctx.seed, 1))
    wins = {(m, None if m == "od-linbai" else e, T): c for (m, e, T), c in zip(cells, counts)}
    e1 = {}
    for y_i, y in enumerate(s.ratios):
        c2 = [(m, s.e1_eps, s.e1_budget) for m in ("dp-bai", "dp-od")]
        got = successes(c2, s.trials, (ctx.seed, 2, y_i), features=f"1,0;0,{y:g}",
                        means=(0.5 + E1_GAP, 0.5))
        e1.update({(m, y): c for (m, _, _), c in zip(c2, got)})
    rate = {k: v / s.trials for k, v in wins.items()}
    rep = Reproduction(
        KEY, TITLE, CITATION, EXPERIMENT, mode,
        {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(s).items()},
        choices=[
            "Budgets T ∈ {500, 1000, 2000, 5000} and ε from 0.05 to 10: the paper says "
            "\"several\" without the grid.",
            "The Section 5 features ω_i ~ U[0, 0.8] are drawn once (seed 0) and kept for every "
            "trial; the paper does not say whether they are redrawn.",
            "DP-BAI with the phase schedule of eqs. (7)–(8) read literally, a phase may "
            "overrun the budget, MAX-DET by the registry's default (maxdet=auto); DP-OD with L the largest ℓ2 norm of the "
            "features (the paper does not name the norm).",
            f"Figure 2 at T = {s.e1_budget}, ε = {s.e1_eps:g}, y from {s.ratios[0]:g} to "
            f"{s.ratios[-1]:g} (the paper gives neither); rewards uniform on [0, 2μ_i], so arm "
            "1's exceed 1 as in the paper.",
            "Intervals of a difference of two success rates: Newcombe's hybrid score "
            "(statsmodels)."],
        seed=ctx.seed)
    rep.figures += [_figure1(rate, s, ctx.folder),
                    _figure2({k: v / s.trials for k, v in e1.items()}, s, ctx.folder)]
    claims = _claims(wins, e1, s)
    conf = level(len(claims))
    rep.rows = [c(conf) for c in claims]
    rep.tables.append(_table(wins, s, conf))
    return rep


def _table(wins: dict, s: Settings, conf: float) -> dict:
    rows = []
    for T in s.budgets:
        for e in s.eps:
            cells = []
            for m in METHODS:
                k = wins[(m, None if m == "od-linbai" else e, T)]
                lo, hi = proportion_confint(k, s.trials, alpha=1 - conf, method="beta")
                cells.append(f"{k / s.trials:.3f} [{lo:.3f}, {hi:.3f}]")
            rows.append([str(T), f"{e:g}"] + cells)
    return {"title": "Success rates with Clopper–Pearson intervals at the page's level",
            "header": ["T", "ε"] + list(METHODS.values()), "rows": rows}
