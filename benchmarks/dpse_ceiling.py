"""The best ε_lb / ε_exact an audit can reach on DP-SE with two arms, and what the audit reaches.

    python benchmarks/dpse_ceiling.py [--eps 2] [--json benchmarks/figures/dpse_ceiling.json]

DP-SE (Sajed and Sheffet 2019, as run by Azize et al. 2023, Sec. 5) with K = 2 releases one
Laplace epoch mean per arm after epoch 1, m_a = x̄_a + L_a with L_a ~ Lap(b) independent, and
eliminates arm a when the other mean exceeds m_a by the threshold θ = 2·(h₁ + c₁). Nothing
else in the transcript reads epoch 1's rewards, so a pair that changes one epoch-1 reward has
three transcripts up to the first action after epoch 1 (arm 0 eliminated, arm 1 eliminated,
neither) whose laws are closed-form: P(L₁ − L₀ > u) = (2 + u/b)·e^(−u/b)/4 for u ≥ 0. The base
table puts the gap ``tail`` noise scales below θ
(:func:`dpaudit.algorithms.adap_tt.baselines.dpse_boundary`); the pair changes row 0 (arm 0's
first sample) from all 0 to all 1, which moves x̄₀ by ε·b. Per tail (0–14 scales, step 1/4):

* ε_exact: the largest loss of the three transcripts (the far elimination, ~2θ/b scales out);
  at the tail the audit is run on, the certified walk (:func:`dpaudit.auditing.exact.
  transcript_laws`) must bracket the closed form, a check of both;
* the **counting ceiling**: over every transcript and union of transcripts, both directions,
  the Clopper–Pearson bound the audit's own measurement would print (the level of its last
  look with one finalist, α/2 per side: :func:`dpaudit.statistics.measure.design`) if its
  counts were the exact probabilities × runs, rounded to the nearest count — the event known
  in advance, nothing spent on choosing it; at 2·10⁶ runs per side (the default budget), 2·10⁷
  and 10⁸;
* the **importance-sampling ceiling**: the bound :func:`dpaudit.statistics.tilted.delta_bounds`
  (betting, α/2 per side) prints when every weighted term is exactly the event's mass (a
  proposal with zero variance) and the weights are bounded by 1 (the least any proposal can
  have: f/r ≥ 1 somewhere since both integrate to 1), at 10⁶ and 2·10⁶ runs per direction.
  Any bounded-weight upper bound on the denominator's mass stays ~ln(2/α)/n above it;

and the real audit of the pair at the counting ceiling's best tail (``dpaudit run --algo dp-se
--pair``, default budget, seed 1, 2 workers): with ``--no-early-stop`` (every look made) and
as the default command runs it (the pass settles early); and the **stratified bound**
(``dpaudit run --stratified-runs 2000000``, :mod:`dpaudit.auditing.strata`) on the pair whose
closed-form laws suit it best (:func:`stratified_case`), which is not held to the counting
ceiling: the stratum's mass is exact and only the rest is counted. Checkpointed per ε in
``--json``.
"""
import argparse
import itertools
import json
import math
import os
import time

import numpy as np

from dpaudit.algorithms import registry
from dpaudit.algorithms.adap_tt.baselines import dpse_boundary
from dpaudit.auditing import exact
from dpaudit.auditing.audit import audit_algorithm
from dpaudit.auditing import strata
from dpaudit.auditing.strata import diff_logsf
from dpaudit.data.tables import NeighbourPair
from dpaudit.statistics.measure import design
from dpaudit.statistics.stats import eps_lower_bound
from dpaudit.statistics.tilted import delta_bounds
from dpaudit.verdicts.result import write_json_atomic

TAILS = np.arange(0.0, 14.01, 0.25)
COUNTING_RUNS = (2_000_000, 20_000_000, 100_000_000)
IS_RUNS = (1_000_000, 2_000_000)
HORIZON, ALPHA = 2000, 0.05


def instance(eps: float, tail: float) -> tuple:
    """(spec, params, prepared arrays, the pair) of a tail."""
    spec = registry.get("dp-se")
    p = spec.resolve_params({"means": (0.7, 0.3), "horizon": HORIZON})
    prep = spec.prepare(eps, p)
    table, recipe = dpse_boundary(prep, HORIZON, tail=tail)[0]
    return spec, p, prep, NeighbourPair.change_row(table, 0, np.zeros(2), np.ones(2), recipe,
                                                   "row 0")


def laws(eps: float, tail: float) -> np.ndarray:
    """Closed-form log-laws, shape (2, 3): rows d, d′; columns arm 0 eliminated, arm 1, neither.
    """
    spec, _, prep, pair = instance(eps, tail)
    out = []
    for table in (pair.d, pair.d_prime):
        _, rel = exact.frozen_run(spec, prep, np.ascontiguousarray(table, dtype=np.float64),
                                  HORIZON, np.zeros(0), 0)
        b, gap = float(rel[0, 6]), float(rel[0, 4]) - float(rel[1, 4])
        theta = (pair.base["row"][0] - pair.base["row"][1]) + tail * b
        drop0, drop1 = float(diff_logsf(theta + gap, b)), float(diff_logsf(theta - gap, b))
        out.append([drop0, drop1, math.log1p(-math.exp(drop0) - math.exp(drop1))])
    return np.array(out)


def counting_ceiling(law: np.ndarray, runs: int) -> float:
    """The audit's last-look Clopper–Pearson bound on counts = exact probabilities × runs."""
    level = design(runs, ALPHA)[1][-1]
    best = 0.0
    for size in (1, 2):
        for union in itertools.combinations(range(3), size):
            p, q = law[0, list(union)].sum(), law[1, list(union)].sum()
            for a, c in ((p, q), (q, p)):
                best = max(best, float(eps_lower_bound(round(a * runs), runs, round(c * runs),
                                                       runs, level)))
    return best


def is_ceiling(law: np.ndarray, runs: int) -> float:
    """The importance-sampled bound with zero-variance terms and weights bounded by 1."""
    best = 0.0
    for j in range(2):          # each elimination, both directions
        p, q = law[0, j], law[1, j]
        if min(p, q) < 1e-30:   # the far elimination: no run of either kind sees it
            continue
        for a, c in ((p, q), (q, p)):
            b = delta_bounds(np.full(runs, a), np.full(runs, c), 0.0, 0.0, (1.0, 1.0), ALPHA)
            best = max(best, b.eps_lower)
    return best


def case(eps: float) -> dict:
    t0 = time.time()
    logs = {float(t): laws(eps, float(t)) for t in TAILS}
    loss = {t: float(np.abs(g[0] - g[1]).max()) for t, g in logs.items()}
    grid = {t: np.exp(g) for t, g in logs.items()}
    out: dict = {"eps": eps, "alpha": ALPHA, "tails": [float(t) for t in TAILS]}
    for runs in COUNTING_RUNS:
        bounds = {t: counting_ceiling(g, runs) / loss[t] for t, g in grid.items()}
        t = max(bounds, key=bounds.get)
        out[f"counting runs={runs}"] = {"ratio": bounds[t], "tail": t, "eps_exact": loss[t]}
    for runs in IS_RUNS:
        bounds = {t: is_ceiling(g, runs) / loss[t] for t, g in list(grid.items())[::4]}
        t = max(bounds, key=bounds.get)
        out[f"importance runs={runs}"] = {"ratio": bounds[t], "tail": t, "eps_exact": loss[t]}
    tail = out[f"counting runs={COUNTING_RUNS[0]}"]["tail"]
    spec, p, prep, pair = instance(eps, tail)
    _, (p_lo, q_lo, p_hi, q_hi), _, _ = exact.transcript_laws(
        spec, prep, (pair.d, pair.d_prime), HORIZON)
    g = grid[tail]
    for lo, hi, row in ((p_lo, p_hi, g[0]), (q_lo, q_hi, g[1])):   # the walk brackets the law
        assert np.all(np.sort(lo) <= np.sort(row) + 1e-12) and \
            np.all(np.sort(row) <= np.sort(hi) + 1e-12), (lo, row, hi)
    audits = {}
    for early in (False, True):
        r = audit_algorithm("dp-se", eps, params=p, pair=pair, seed=1, workers=2,
                            early_stop=early)
        audits["default" if early else "no_early_stop"] = r.eps_lb
    out["audit"] = {"tail": tail, "eps_exact": loss[tail], "law_d": g[0].tolist(),
                    "law_d_prime": g[1].tolist(), **audits}
    out["seconds"] = round(time.time() - t0, 1)
    return out


def stratified_case(eps: float, runs: int = 2_000_000) -> dict:
    """The stratified bound (``dpaudit run --stratified-runs``) on the pair it suits best.

    The tail is the one whose closed-form laws give the largest ln(P_N/(P_D + floor)) / loss
    over both eliminations and directions, floor = ln(1/α₃)/(runs on D's own law): the bound
    the stratified measurement reaches when its stratum is the elimination. The audit (default
    budget for the count, ``runs`` per table for the stratified bound, seed 1, 2 workers) then
    measures it there.
    """
    t0 = time.time()
    a3 = (1 - 2 * strata.ALPHA_COND) * ALPHA
    floor = math.log(1 / a3) / (runs * (1 - strata.COND_SHARE) - 5 * strata.WIDE_RUNS)
    best = (-math.inf, 0.0, 0.0)
    for tail in TAILS:
        g = laws(eps, float(tail))
        loss = float(np.abs(g[0] - g[1]).max())
        for j in range(2):
            for n, d in ((0, 1), (1, 0)):
                f = (g[n, j] - math.log(math.exp(g[d, j]) + floor)) / loss
                best = max(best, (f, float(tail), loss))
    forecast, tail, loss = best
    spec, p, prep, pair = instance(eps, tail)
    r = audit_algorithm("dp-se", eps, params=p, pair=pair, seed=1, workers=2,
                        stratified_runs=runs).to_dict()
    st = r["stratified"]
    return {"tail": tail, "eps_exact": loss, "closed_form_forecast": forecast,
            "eps_lower": st["eps_lower"], "ratio": st["eps_lower"] / loss,
            "counts": st["counts"], "stratum": st["stratum"], "direction": st["direction"],
            "runs": runs, "audit_eps_lb": r["eps_lb"], "seconds": round(time.time() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps", type=float, default=2.0)
    ap.add_argument("--json", default="benchmarks/figures/dpse_ceiling.json")
    a = ap.parse_args()
    done = json.load(open(a.json)) if os.path.exists(a.json) else {}
    name = f"eps={a.eps:g}"
    if name not in done:
        done[name] = case(a.eps)
        write_json_atomic(a.json, done)
    if "stratified" not in done[name]:
        done[name]["stratified"] = stratified_case(a.eps)
        write_json_atomic(a.json, done)
    r = done[name]
    for key in [k for k in r if k.startswith(("counting", "importance"))]:
        c = r[key]
        print(f"{name} {key}: ceiling {c['ratio']:.3f} of eps_exact {c['eps_exact']:.4f} "
              f"(tail {c['tail']:g} scales)")
    au = r["audit"]
    print(f"{name} audit at tail {au['tail']:g} (default budget, seed 1): eps_lb "
          f"{au['no_early_stop']:.4f} with --no-early-stop "
          f"({au['no_early_stop'] / au['eps_exact']:.3f} of eps_exact {au['eps_exact']:.4f}), "
          f"{au['default']:.4f} as run by default ({au['default'] / au['eps_exact']:.3f})")
    st = r["stratified"]
    print(f"{name} stratified bound (--stratified-runs {st['runs']}) at tail {st['tail']:g}: "
          f"eps_lb {st['eps_lower']:.4f} = {st['ratio']:.3f} of eps_exact {st['eps_exact']:.4f} "
          f"(closed-form forecast {st['closed_form_forecast']:.3f}; counts {st['counts']}; "
          f"{st['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
