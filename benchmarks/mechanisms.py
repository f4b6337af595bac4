"""Generic audits of the textbook mechanisms of the DP-testing literature, beside DP-Sniper's.

    python benchmarks/mechanisms.py [--n 2000000] [--seed 1] [--calibration 200]
                                    [--calibration-n 100000] [--json benchmarks/figures/mechanisms.json]

1. **Table**: each mechanism of :func:`dpaudit.calibrate.textbook.catalogue` (claimed ε = 0.1,
   RAPPOR's from its parameters) audited by ``audit_mechanism(..., pairs="search")`` around
   its base input, every look measured (``early_stop=False``: a tightness figure; a pass
   would otherwise stop at the first look whose upper bound is ≤ ε), ``--n`` measurement
   samples per side (the pair search's pilot draws each input 3n/8 more times, in one round:
   1.375·n = 2.75·10⁶ outputs of any one input at the default, the base input's runs
   shared by the seven patterns around it): verdict, ε_lb/ε, the pattern measured, whether
   the event was learned, the time, and DP-Sniper's published lower bound over ε
   (Bichsel et al. 2021, their reference results with logistic regression, ~10⁷ samples per
   side and 2·10⁸ for the final estimate). Targets: every non-private one a violation; the
   median ε_lb/ε of the private ones ≥ 0.85.
2. **Calibration**: ``--calibration`` audits of the private mechanisms (round robin, seeds
   1000, 1001, ...) at ``--calibration-n`` samples per side, α = 0.05: false violations
   (target: their rate's 95 % Clopper–Pearson upper bound ≤ α, i.e. consistent with ≤ α).
   Checkpointed in ``<json>.checkpoint.json`` (not kept in git): a rerun skips finished audits.

Prints both tables (markdown) and writes ``--json``.
"""
import argparse
import json
import os
import statistics
import time

from scipy.stats import beta as beta_dist

import dpaudit
from dpaudit.auditing.mechanism import PAIRS_PILOT_SHARE, PILOT_FRACTION
from dpaudit.calibrate.textbook import catalogue
from dpaudit.verdicts.result import write_json_atomic

ALPHA = 0.05


def audit(t, n: int, seed: int) -> dict:
    """One audit of a catalogue entry: its figures."""
    t0 = time.perf_counter()
    r = dpaudit.audit_mechanism(t.mechanism, list(t.base), pairs="search", changes=t.changes,
                                eps=t.eps, n=n, seed=seed, alpha=ALPHA, name=t.name,
                                early_stop=False)
    return {"name": t.name, "private": t.private, "eps": t.eps, "verdict": str(r.verdict),
            "eps_lb": r.eps_lb, "ratio": r.eps_lb / t.eps,
            "pattern": r.to_dict()["neighbours"].get("pattern"),
            "learned": bool(r.event.get("learned")), "seconds": time.perf_counter() - t0,
            "peer_ratio": None if t.peer is None else t.peer / t.eps, "source": t.source,
            "seed": seed}


def table(n: int, seed: int) -> list:
    """Part 1 (module doc)."""
    rows = []
    print("| mechanism | private | verdict | ε_lb/ε | DP-Sniper | pair | learned | s |")
    print("|---|---|---|---|---|---|---|---|")
    for t in catalogue():
        row = audit(t, n, seed)
        rows.append(row)
        peer = "" if row["peer_ratio"] is None else f"{row['peer_ratio']:.2f}"
        print(f"| {t.name} | {'yes' if t.private else 'no'} | {row['verdict']} | "
              f"{row['ratio']:.3f} | {peer} | {row['pattern']} | "
              f"{'yes' if row['learned'] else ''} | {row['seconds']:.1f} |", flush=True)
    return rows


def calibration(count: int, n: int, path: str) -> dict:
    """Part 2 (module doc), checkpointed beside ``path``."""
    checkpoint = path.removesuffix(".json") + ".checkpoint.json"
    done = json.load(open(checkpoint)) if os.path.exists(checkpoint) else []
    private = [t for t in catalogue() if t.private]
    for k in range(len(done), count):
        done.append(audit(private[k % len(private)], n, 1000 + k))
        if len(done) % 10 == 0 or len(done) == count:
            write_json_atomic(checkpoint, done)
    false = sum(r["verdict"] == "violation" for r in done)
    hi = float(beta_dist.ppf(0.975, false + 1, count - false)) if false < count else 1.0
    out = {"audits": count, "n": n, "alpha": ALPHA, "false_violations": false,
           "rate": false / count, "ci95_upper": hi,
           "per_mechanism": {t.name: sum(r["verdict"] == "violation" for r in done
                                         if r["name"] == t.name) for t in private}}
    print(f"\n{count} audits of the private mechanisms at n = {n}: {false} false violations "
          f"(rate {false / count:.3f}, 95 % upper bound {hi:.3f}; α = {ALPHA})")
    return out


def main() -> None:
    """Run both parts and write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--calibration", type=int, default=200)
    ap.add_argument("--calibration-n", type=int, default=100_000)
    ap.add_argument("--json", default="benchmarks/figures/mechanisms.json")
    a = ap.parse_args()
    rows = table(a.n, a.seed)
    ratios = [r["ratio"] for r in rows if r["private"]]
    caught = [r["verdict"] == "violation" for r in rows if not r["private"]]
    summary = {"median_ratio_private": statistics.median(ratios),
               "violations_non_private": f"{sum(caught)}/{len(caught)}",
               "samples_per_input": a.n + int(a.n // PILOT_FRACTION * PAIRS_PILOT_SHARE)}
    print(f"\nmedian ε_lb/ε of the private mechanisms: {summary['median_ratio_private']:.3f}; "
          f"non-private found: {summary['violations_non_private']}")
    cal = calibration(a.calibration, a.calibration_n, a.json) if a.calibration else None
    write_json_atomic(a.json, {"n": a.n, "seed": a.seed, "alpha": ALPHA, "rows": rows,
                               "summary": summary, "calibration": cal})


if __name__ == "__main__":
    main()
