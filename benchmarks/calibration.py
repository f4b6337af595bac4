"""Calibration and power suite of the auditor, on mechanisms of known privacy loss.

    python benchmarks/calibration.py [--audits 20] [--soundness 1000] [--workers 2]
                                     [--json calibration.json]
    python benchmarks/calibration.py --verdicts [--audits 1200] [--workers 2]
                                     [--json benchmarks/figures/calibration.json]

``--verdicts`` calibrates the three-verdict rule (docs/method/calibration.md), on the Laplace,
randomised-response and geometric mechanisms at ε = 1, α = β = 0.05, margin 0.25:

0. the tool's budget: a reference audit (seed 0, 200 samples per side) of each correct
   mechanism; when it passes, M = 200, when it names ``runs_needed``, M = that, and when it
   names none (its event cannot carry the loss), again at 4× the budget; M is the budget the
   tool says suffices;
1. ``--audits`` audits of the correct mechanisms (loss exactly ε) at their M: the false
   ``violation`` rate (must be ≤ α) and the ``inconclusive`` rate (stated);
2. ``--audits`` audits of the mutants whose true loss is (1 + margin)·ε (noise × 0.8) at the
   same M: the ``pass`` rate (must be ≤ β).

Each rate with its exact 95 % Clopper–Pearson interval, written to ``--json`` with the counts
per mechanism. Checkpointed: every finished chunk of audits is written at once to the
``.checkpoint.json`` beside it (not kept in git) and a rerun skips the audits already there
(same seeds); delete that file to start afresh.

Prints three markdown tables (docs/method/calibration.md quotes them):

1. tightness: ε_lb/ε of the default audit (10^7 samples per side) of the Laplace mechanism,
   over ``--audits`` seeds per ε ∈ {0.1, 0.5, 1, 2}, with wall time (target ≥ 0.95 in ≤ 60 s);
2. soundness: false violations among ``--soundness`` small audits (2·10^4 samples per side)
   of the six correct mechanisms at α = 0.05, with a 95 % Clopper–Pearson interval (target:
   the rate's upper bound ≤ α);
3. power: the detection rate of every insufficient-noise mutant (noise × 0.5 ... 0.9) at the
   default budget over ``--audits`` audits each (target ≥ 90 % when the true loss ≥ 1.25 ε).
"""
import argparse
import json
import os
import time

import numpy as np

from dpaudit.calibrate.calibration import (Plan, Task, power, rate, run_task, run_tasks, soundness,
                                           tightness)
from dpaudit.verdicts.result import write_json_atomic


def _ci(r):
    return f"{r['rate']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"


VERDICT_FAMILIES = ("laplace", "randomised-response", "geometric")   # loss exactly ε / factor
MARGIN, REFERENCE_N, CHUNK = 0.25, 200, 60


def verdicts(audits: int, workers: int, path: str) -> dict:
    """Part ``--verdicts`` (module doc), checkpointed in ``path``."""
    checkpoint = path.removesuffix(".json") + ".checkpoint.json"   # every audit (not in git)
    doc = {"alpha": 0.05, "beta": 0.05, "margin": MARGIN, "eps": 1.0, "budgets": {},
           "rows": {}}
    if os.path.exists(checkpoint):
        with open(checkpoint) as f:
            doc = json.load(f)
    t0 = time.time()
    for f in VERDICT_FAMILIES:
        n, tried = REFERENCE_N, []
        while f not in doc["budgets"]:        # pass: n suffices; else the runs it names
            ref = run_task(Task(f, 1.0, 1.0, n, 0.05, 0))
            tried.append(ref)
            if ref["verdict"] == "pass" or ref["runs_needed"] or n >= 10 ** 6:
                doc["budgets"][f] = {"references": tried,
                                     "runs": n if ref["verdict"] == "pass" else
                                     int(ref["runs_needed"] or n)}
                write_json_atomic(checkpoint, doc)
            n *= 4                             # no budget named on this event: a larger pilot
        b = doc["budgets"][f]
        print(f"{f}: reference audits at " + ", ".join(
            f"{r['n']} -> {r['verdict']} ({(r['reason'] or '').split(':')[0] or '-'})"
            for r in b["references"]) + f"; the budget the tool names M = {b['runs']}",
            flush=True)
    factor = 1 / (1 + MARGIN)
    todo = [(part, Task(fam, 1.0, x, doc["budgets"][fam]["runs"], 0.05, 1 + i))
            for part, x in (("correct", 1.0), ("mutant", factor))
            for i in range(audits // len(VERDICT_FAMILIES))
            for fam in VERDICT_FAMILIES]
    todo = [(p, t) for p, t in todo if f"{p} {t.family} {t.seed}" not in doc["rows"]]
    for c in range(0, len(todo), CHUNK):
        part = todo[c:c + CHUNK]
        for (p, t), row in zip(part, run_tasks([t for _, t in part], workers)):
            doc["rows"][f"{p} {t.family} {t.seed}"] = {
                "part": p, "family": t.family, "verdict": row["verdict"],
                "eps_lb": row["eps_lb"], "reason": (row["reason"] or "").split(":")[0],
                "seconds": row["seconds"]}
        doc["seconds"] = doc.get("seconds", 0.0) + time.time() - t0
        t0 = time.time()
        write_json_atomic(checkpoint, doc)
        print(f"{len(doc['rows'])} audits done", flush=True)
    rows = list(doc["rows"].values())
    correct = [r for r in rows if r["part"] == "correct"]
    mutant = [r for r in rows if r["part"] == "mutant"]
    out = {"false_violation": rate(sum(r["verdict"] == "violation" for r in correct),
                                   len(correct)),
           "inconclusive_at_eps": rate(sum(r["verdict"] == "inconclusive" for r in correct),
                                       len(correct)),
           "pass_at_loss_1_25_eps": rate(sum(r["verdict"] == "pass" for r in mutant),
                                         len(mutant))}
    print("\n| audits | true loss | budget | rate | k/n | 95 % CP |\n|---|---|---|---|---|---|")
    for name, what, loss in (("false_violation", "violation", "ε"),
                             ("inconclusive_at_eps", "inconclusive", "ε"),
                             ("pass_at_loss_1_25_eps", "pass", "1.25 ε")):
        r = out[name]
        print(f"| {'correct' if loss == 'ε' else 'noise × 0.8'} | {loss} | M | {what} | "
              f"{r['k']}/{r['n']} | {_ci(r)} |")
    print("\nby family (violation / inconclusive / pass):")
    by_family = {}
    for fam in VERDICT_FAMILIES:
        for p in ("correct", "mutant"):
            rs = [r for r in rows if r["part"] == p and r["family"] == fam]
            counts = {v: sum(r["verdict"] == v for r in rs)
                      for v in ("violation", "inconclusive", "pass")}
            key = "pass" if p == "mutant" else "violation"      # the rate the promise bounds
            by_family[f"{fam} {p}"] = {"budget": doc["budgets"][fam]["runs"], "audits": len(rs),
                                       **counts, f"{key}_rate": rate(counts[key], len(rs))}
            print(f"  {fam} {p} (M = {doc['budgets'][fam]['runs']}): " + " / ".join(
                str(c) for c in counts.values()) + f" of {len(rs)}; {key} "
                + _ci(by_family[f"{fam} {p}"][f"{key}_rate"]))
    print(f"compute {doc.get('seconds', 0):.0f} s")
    write_json_atomic(path, {k: doc[k] for k in ("alpha", "beta", "margin", "eps")} | {
        "budgets": {f: {"runs": b["runs"], "references": [
            {k: r[k] for k in ("n", "verdict", "reason", "runs_needed")}
            for r in b["references"]]} for f, b in doc["budgets"].items()},
        "summary": out, "by_family": by_family, "compute_seconds": doc.get("seconds"),
        "command": "python benchmarks/calibration.py --verdicts --audits "
                   f"{len(rows) // 2} --workers {workers}"})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--audits", type=int, default=None)
    ap.add_argument("--soundness", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--verdicts", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.verdicts:
        verdicts(a.audits or 1200, a.workers, a.json or os.path.join(
            os.path.dirname(__file__), "figures", "calibration.json"))
        return
    a.audits = a.audits or 20
    out = {}

    t0 = time.time()
    rows = tightness(seeds=tuple(range(1, a.audits + 1)))
    out["tightness"] = rows
    print("| ε | ε_lb/ε mean | min | max | seconds (max) |\n|---|---|---|---|---|")
    for e in sorted({r["eps"] for r in rows}):
        q = np.array([r["ratio"] for r in rows if r["eps"] == e])
        s = max(r["seconds"] for r in rows if r["eps"] == e)
        print(f"| {e:g} | {q.mean():.4f} (sd {q.std(ddof=1):.4f}) | {q.min():.4f} | "
              f"{q.max():.4f} | {s:.1f} |", flush=True)

    s = soundness(a.soundness, Plan(n=20_000, workers=a.workers))
    out["soundness"] = s
    print(f"\nsoundness: {s['overall']['k']} false violations in {s['overall']['n']} audits at "
          f"alpha = {s['alpha']}: rate {_ci(s['overall'])} (95 % CP)")
    print("| mechanism | audits | false violations |\n|---|---|---|")
    for f, r in s["by_family"].items():
        print(f"| {f} | {r['n']} | {r['k']} |", flush=True)

    rows = power(a.audits, plan=Plan(workers=a.workers))
    out["power"] = rows
    print("\n| mechanism | noise × | true ε / claim | detected | rate [95 % CI] | median ε_lb | "
          "s per audit |\n|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['family']} | {r['factor']:g} | {r['ratio']:.3f} | {r['k']}/{r['n']} | "
              f"{_ci(r)} | {r['median_eps_lb']:.3f} | {r['mean_seconds']:.1f} |", flush=True)
    print(f"\ntotal {time.time() - t0:.0f} s")
    if a.json:
        write_json_atomic(a.json, json.loads(json.dumps(out, default=float)))


if __name__ == "__main__":
    main()
