"""The theorems of Barbara, Lazzaro and Pike-Burke (2025), set against their algorithms.

Barbara, Lazzaro and Pike-Burke (2025), *Locally Differentially Private Thresholding
Bandits*: the paper has no experiment, so its theory is the page.

Algorithm 1 (fixed budget, PrivBern rewards into APT) against Theorem 3.1's upper bound on the
expected loss E[L(T)] of eq. (2), exp(−T/(4H_ε) + 2K ln(log T + 1)); Algorithm 2 (fixed
confidence) against Theorem 4.1's bound on the stopping time (on an event of probability
≥ 1 − δ; Appendix D's implicit form) and Theorem 4.2's lower bound (Appendix E's explicit
form), and its δ-correctness. H_ε = c_ε^{−2}·H with c_ε = (e^ε − 1)/(e^ε + 1) (eq. (8)): the
privacy cost the paper proves, visible in both figures.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy.optimize import brentq
from statsmodels.stats.proportion import proportion_confint

from dpaudit.algorithms import registry
from dpaudit.algorithms.ldp_thresholding import algorithm as lt
from dpaudit.reproduce.experiment import (Context, Figure, Reproduction, Row, level,
                                          mean_interval,
                                          new_figure, save_figure, spread)
from dpaudit.simulation.simulate import STOPPED

KEY = "barbara2025"
TITLE = "Locally Differentially Private Thresholding Bandits"
CITATION = ("Barbara, Lazzaro, Pike-Burke (2025): Algorithms 1 and 2, Theorems 3.1, 4.1 and "
            "4.2 (the paper has no experiments)")
EXPERIMENT = ("The paper states bounds and no experiment: Algorithm 1's expected loss against "
              "the budget T next to Theorem 3.1, Algorithm 2's stopping time against ε next to "
              "Theorems 4.1 and 4.2, on two instances of our choice.")
A, B = lt.INSTANCE_A, lt.INSTANCE_B
CHECK_BOUND = 0.05      # Theorem 3.1 is checked where its bound is this small


@dataclass(frozen=True)
class Settings:
    """What one reproduction runs.

    Args:
        budget_eps: ε of Algorithm 1's curves.
        budgets: budgets T of Algorithm 1's curves.
        budget_runs: runs per (ε, T) point of Algorithm 1.
        check_runs: runs of Algorithm 1 at the smallest T where Theorem 3.1 is below 1.
        confidence_eps: ε of Algorithm 2's points.
        confidence_runs: runs per ε of Algorithm 2.
        risk: Algorithm 2's δ.
    """
    budget_eps: tuple = (0.5, 1.0, 2.0)
    budgets: tuple = (200, 500, 1000, 2000, 5000)
    budget_runs: int = 20000
    check_runs: int = 1000
    confidence_eps: tuple = (0.5, 1.0, 2.0, 4.0)
    confidence_runs: int = 1000
    risk: float = 0.05


FULL = Settings()
QUICK = Settings(budget_runs=5000, check_runs=200, confidence_runs=300)
MODES = {"full": FULL, "quick": QUICK}


def h_eps(inst: dict, eps: float) -> float:
    """H_ε of eq. (8) on an instance.

    Args:
        inst: the instance (means, threshold, tolerance).
        eps: ε.

    Returns:
        H_ε.
    """
    return lt.complexity_eps(inst["means"], inst["threshold"], inst.get("tolerance", 0.0), eps)


def crossing(eps: float) -> int:
    """The smallest whole budget at which Theorem 3.1's bound on instance A is below 1.

    Args:
        eps: ε.

    Returns:
        The budget T.
    """
    return math.ceil(lt.thm31_crossing(A["means"], A["threshold"], A["tolerance"], eps))


def check_budget(eps: float) -> int:
    """The smallest budget at which Theorem 3.1's bound reaches :data:`CHECK_BOUND`.

    Brent's method above the crossing (the bound falls there).

    Args:
        eps: ε.

    Returns:
        The whole budget T on instance A.
    """
    def f(T: float) -> float:
        return math.log(float(lt.thm31_bound(T, A["means"], A["threshold"], A["tolerance"],
                                             eps))) - math.log(CHECK_BOUND)
    lo = float(crossing(eps))
    hi = 2.0 * lo
    while f(hi) > 0:
        hi *= 2.0
    return math.ceil(brentq(f, lo, hi))


def _requests(s: Settings, seed: int):
    keys, reqs = [], []
    budget, conf = registry.get("ldp-tb-budget"), registry.get("ldp-tb-confidence")
    for e_i, e in enumerate(s.budget_eps):
        for T_i, T in enumerate(s.budgets + (check_budget(e),)):
            p = budget.resolve_params({**A, "horizon": T})
            runs = s.budget_runs if T_i < len(s.budgets) else s.check_runs
            keys.append(("budget", e, T))
            reqs.append(budget.fresh_request(budget.prepare(e, p), runs, [seed, 1, e_i, T_i],
                                             T))
    for e_i, e in enumerate(s.confidence_eps):
        p = conf.resolve_params({**B, "risk": s.risk})
        keys.append(("confidence", e, None))
        reqs.append(conf.fresh_request(conf.prepare(e, p), s.confidence_runs, [seed, 2, e_i],
                                       p["max_steps"]))
    return keys, reqs


def _figures(res: dict, s: Settings, folder: str) -> Figure:
    fig, axes = new_figure(2, 1, width=4.8, height=3.6)
    ax = axes[0]
    T = np.asarray(s.budgets, dtype=float)
    grid = np.geomspace(T[0], max(check_budget(e) for e in s.budget_eps) * 2, 200)
    data1 = {"budgets": list(s.budgets), "runs": s.budget_runs, "curves": {}}
    for i, e in enumerate(s.budget_eps):
        k = np.array([res[("budget", e, b)]["loss"].sum() for b in s.budgets])
        lo, hi = proportion_confint(k, s.budget_runs, alpha=0.05, method="beta")
        ax.plot(T, k / s.budget_runs, marker="o", ms=3, color=f"C{i}", label=f"ε = {e:g}")
        ax.fill_between(T, lo, hi, color=f"C{i}", alpha=0.2)
        bound = np.minimum(lt.thm31_bound(grid, A["means"], A["threshold"], A["tolerance"], e),
                           1.0)
        ax.plot(grid, bound, ls="--", color=f"C{i}", lw=1)
        data1["curves"][f"{e:g}"] = {"loss": (k / s.budget_runs).tolist(),
                                     "ci95": [list(lo), list(hi)],
                                     "thm31_crossing": crossing(e)}
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(0.5 / s.budget_runs, 1.5)           # a point with no wrong set is not drawn
    ax.set_xlabel("budget T")
    ax.set_ylabel("P(L(T) = 1)")
    ax.set_title(f"Algorithm 1, instance A = {A['means']}", fontsize=8)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax = axes[1]
    eps = np.asarray(s.confidence_eps)
    m, sd, lo, hi = spread([res[("confidence", e, None)]["tau"] for e in s.confidence_eps])
    up = [lt.thm41_implicit(B["means"], B["threshold"], e, s.risk) for e in s.confidence_eps]
    low = [lt.thm42_bound(B["means"], B["threshold"], e, s.risk) for e in s.confidence_eps]
    ax.plot(eps, m, marker="o", ms=3, color="C0", label="Algorithm 2, mean τ")
    ax.fill_between(eps, lo, hi, color="C0", alpha=0.2)
    ax.plot(eps, up, "k--", lw=1, label="Theorem 4.1 (App. D), prob. ≥ 1 − δ")
    ax.plot(eps, low, "k:", lw=1, label="Theorem 4.2 lower bound")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("stopping time τ")
    ax.set_title(f"Algorithm 2, instance B = {B['means']}, δ = {s.risk:g}", fontsize=8)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    data2 = {"eps": list(s.confidence_eps), "runs": s.confidence_runs, "mean": m.tolist(),
             "std": sd.tolist(), "thm41_implicit": up, "thm42": low}
    return save_figure(fig, {"algorithm_1": data1, "algorithm_2": data2}, folder, "bounds",
                       "Left: Algorithm 1's probability of a wrong set (eq. (2)) against T, "
                       "95 % Clopper–Pearson bands, with Theorem 3.1's bound (dashed, cut at "
                       "1). Right: Algorithm 2's stopping time (mean ± one standard deviation, "
                       "cut to the runs' range) with Theorems 4.1 and 4.2.")


def _claims(res: dict, s: Settings) -> list:
    claims = []
    for e in s.budget_eps:
        T = check_budget(e)

        def row(conf: float, e: float = e, T: int = T) -> Row:
            k = int(res[("budget", e, T)]["loss"].sum())
            n = res[("budget", e, T)]["loss"].size
            lo, hi = proportion_confint(k, n, alpha=1 - conf, method="beta")
            bound = float(lt.thm31_bound(T, A["means"], A["threshold"], A["tolerance"], e))
            ok = lo <= bound
            return Row(f"Algorithm 1, ε = {e:g}: P(L(T) = 1) at T = {T}, the smallest budget "
                       f"where Theorem 3.1 gives {CHECK_BOUND:g}",
                       f"E[L(T)] ≤ {bound:.3g} (Theorem 3.1)",
                       f"{k}/{n}, [{lo:.3g}, {hi:.3g}]", ok, "lower end ≤ the bound",
                       "" if ok else "more wrong sets than Theorem 3.1 allows")
        claims.append(row)
    for e in s.confidence_eps:
        claims += [lambda conf, e=e: _correct_row(res, s, e, conf),
                   lambda conf, e=e: _upper_row(res, s, e, conf),
                   lambda conf, e=e: _lower_row(res, s, e, conf)]
    return claims


def _correct_row(res: dict, s: Settings, e: float, conf: float) -> Row:
    r = res[("confidence", e, None)]
    k, n = int(r["wrong"].sum()), r["wrong"].size
    lo, hi = proportion_confint(k, n, alpha=1 - conf, method="beta")
    ok = lo <= s.risk
    return Row(f"Algorithm 2, ε = {e:g}: share of wrong sets", f"δ-correct: ≤ δ = {s.risk:g} "
               "(Theorem 4.1)", f"{k}/{n}, [{lo:.3g}, {hi:.3g}]", ok, "lower end ≤ δ",
               "" if ok else "more wrong sets than δ allows")


def _upper_row(res: dict, s: Settings, e: float, conf: float) -> Row:
    r = res[("confidence", e, None)]
    bound = lt.thm41_implicit(B["means"], B["threshold"], e, s.risk)
    k, n = int((r["tau"] > bound).sum() + (~r["stopped"]).sum()), r["tau"].size
    lo, hi = proportion_confint(k, n, alpha=1 - conf, method="beta")
    ok = lo <= s.risk
    return Row(f"Algorithm 2, ε = {e:g}: share of runs with τ above Theorem 4.1's bound "
               f"{bound:.4g}", f"τ ≤ the bound with probability ≥ 1 − δ = {1 - s.risk:g}",
               f"{k}/{n}, [{lo:.3g}, {hi:.3g}]", ok, "lower end ≤ δ",
               "" if ok else "more runs beyond the bound than δ allows")


def _lower_row(res: dict, s: Settings, e: float, conf: float) -> Row:
    r = res[("confidence", e, None)]
    bound = lt.thm42_bound(B["means"], B["threshold"], e, s.risk)
    v = mean_interval(r["tau"], conf)
    ok = v[2] >= bound
    return Row(f"Algorithm 2, ε = {e:g}: mean τ", f"E[τ] ≥ {bound:.4g} (Theorem 4.2)",
               f"{v[0]:.4g} [{v[1]:.4g}, {v[2]:.4g}]", ok, "upper end ≥ the bound",
               "" if ok else "mean τ significantly below the lower bound")


def run(s: Settings, ctx: Context, mode: str = "custom") -> Reproduction:
    """Run the experiments of ``s`` and write the figure into ``ctx.folder``.

    Args:
        s: the settings (:data:`FULL` or :data:`QUICK`, or a variant).
        ctx: the seed, workers, progress bars and folder.
        mode: ``full`` or ``quick``, as the page states it.

    Returns:
        The :class:`~dpaudit.reproduce.experiment.Reproduction`: the settings, figures and rows.
    """
    keys, reqs = _requests(s, ctx.seed)
    res = {}
    for (kind, e, T), (tau, rec, status) in zip(keys, ctx.outcomes(reqs, KEY)):
        stopped = status == STOPPED
        if kind == "budget":
            res[(kind, e, T)] = {"loss": lt.budget_loss(rec, A["means"], A["threshold"],
                                                        A["tolerance"]).astype(bool)}
        else:
            res[(kind, e, T)] = {"tau": tau.astype(float), "stopped": stopped,
                                 "wrong": stopped & (rec != lt.target_mask(B["means"],
                                                                           B["threshold"]))}
    rep = Reproduction(
        KEY, TITLE, CITATION, EXPERIMENT, mode,
        {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(s).items()},
        choices=[
            f"Instance A (Algorithm 1): means {A['means']}, threshold {A['threshold']}, "
            f"tolerance {A['tolerance']}; instance B (Algorithm 2): means {B['means']}, "
            f"threshold {B['threshold']}. The paper has no instance.",
            "Rewards Bernoulli(μ), privatised by PrivBern(ε) (Definition 2.1) before the "
            "algorithm sees them.",
            "Theorem 3.1's inner log T read as the natural logarithm; Theorem 4.1 in "
            "Appendix D's implicit form, T = K + (H_ε/2)·ln(4K·T³/δ), which eq. (24) "
            "bounds; Theorem 4.2 in Appendix E's explicit form.",
            f"Theorem 3.1 is checked at the smallest budget where it gives {CHECK_BOUND:g}; "
            "at the budgets of the figure it is above 1 (vacuous)."],
        seed=ctx.seed)
    rep.figures.append(_figures(res, s, ctx.folder))
    T = max(s.budgets)
    rep.notes += [f"Theorem 3.1 is loose on instance A: at ε = {e:g} it is above 1 up to "
                  f"T = {crossing(e)}, while the measured P(L(T) = 1) at T = {T} is "
                  f"{res[('budget', e, T)]['loss'].mean():.4g}." for e in s.budget_eps]
    claims = _claims(res, s)
    conf = level(len(claims))
    rep.rows = [c(conf) for c in claims]
    rep.tables.append({
        "title": "The privacy cost: H_ε = c_ε^−2·H (eq. (8)) and Algorithm 2's mean τ / H_ε",
        "header": ["ε", "c_ε", "H_ε (instance B)", "mean τ", "mean τ / H_ε"],
        "rows": [[f"{e:g}", f"{float(lt.c_eps(e)):.4g}", f"{h_eps(B, e):.4g}",
                  f"{res[('confidence', e, None)]['tau'].mean():.4g}",
                  f"{res[('confidence', e, None)]['tau'].mean() / h_eps(B, e):.3g}"]
                 for e in s.confidence_eps]})
    return rep
