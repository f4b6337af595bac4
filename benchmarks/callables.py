"""Your own algorithm against ours: tightness and speed of a plain Python callable.

    python benchmarks/callables.py [--runs 50000] [--seed 1] [--speed-runs 40000]
                                   [--json benchmarks/figures/callables.json]

1. **Tightness**: AdaP-TT written in plain Python from the paper (examples/adap_tt_python.py,
   returning a ``dpaudit.Transcript``) audited as a callable, against the catalogue's compiled
   ``adap-tt`` on the same instance (K = 4, means 0.9, 0.7, 0.5, 0.3, horizon 8, ε = 0.5, model
   user, ``--instances fixed``) at the same budget and seed: both ε_lb, their difference, and
   the callable's event (action sequences). The registered audit searches its pairs with the
   white-box screen, the callable's with the black-box search over every row × value pattern ×
   base table.
2. **Speed**: the callable's runs per second drawn by 1 and by 2 worker processes (the draws of
   a search round: 16 candidate pairs × 4 pilot draws, pooled), the pool warmed first; and the
   JSON of one audit on 1 and on 2 workers compared (identical but for its runtime).
"""
import argparse
import json
import os
import pathlib
import time

import numpy as np

from dpaudit import audit_algorithm, audit_callable
from dpaudit.auditing.audit import source_views
from dpaudit.auditing.callables import Call, TranscriptSource, load
from dpaudit.core.terms import Side
from dpaudit.data.neighbours import structured
from dpaudit.verdicts.result import write_json_atomic

ROOT = pathlib.Path(__file__).resolve().parents[1]
REF = f"{ROOT / 'examples' / 'adap_tt_python.py'}:adap_tt"
MEANS, HORIZON, EPS = (0.9, 0.7, 0.5, 0.3), 8, 0.5


def tightness(runs: int, seed: int) -> dict:
    """Both audits' ε_lb and the callable's event."""
    t = time.perf_counter()
    ours = audit_algorithm("adap-tt", EPS, params={"means": MEANS, "horizon": HORIZON},
                           runs=runs, seed=seed, instances="fixed")
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    theirs = audit_callable(REF, EPS, model="user", means=MEANS, horizon=HORIZON, runs=runs,
                            seed=seed)
    t_theirs = time.perf_counter() - t
    return {"runs": runs, "seed": seed, "registered_eps_lb": ours.eps_lb,
            "registered_verdict": ours.verdict, "registered_s": round(t_ours, 1),
            "callable_eps_lb": theirs.eps_lb, "callable_verdict": theirs.verdict,
            "callable_s": round(t_theirs, 1),
            "difference": round(ours.eps_lb - theirs.eps_lb, 4),
            "callable_event": theirs.event["text"], "callable_coverage": theirs.coverage}


def speed(runs: int) -> dict:
    """Runs per second of the callable's pooled draws on 1 and 2 workers."""
    call = Call(load(REF), EPS, "adap_tt", REF)
    pairs = structured("user", list(MEANS), HORIZON, 7)[:16]
    out = {}
    for workers in (1, 2):
        srcs = [TranscriptSource(call, (p.d, p.d_prime), source_views(p, len(MEANS), HORIZON),
                                 p, HORIZON, workers) for p in pairs]
        per = max(runs // (4 * len(srcs)), 1)
        warm = [(srcs[0], Side.D, 2 * 512, np.random.SeedSequence(0))]
        TranscriptSource.draw_many(warm)                    # start and warm the pool
        plans = [(s, side, per, np.random.SeedSequence(j)) for j, s in enumerate(srcs)
                 for side in (*Side, *Side)]
        t = time.perf_counter()
        TranscriptSource.draw_many(plans)
        out[workers] = per * len(plans) / (time.perf_counter() - t)
    return {"runs": runs, "runs_per_s_1_worker": round(out[1]), "runs_per_s_2_workers":
            round(out[2]), "speedup": round(out[2] / out[1], 3), "cores": os.cpu_count()}


def same_json(runs: int, seed: int) -> bool:
    """One audit's JSON on 1 and on 2 workers, timings aside."""
    docs = []
    for workers in (1, 2):
        d = audit_callable(REF, EPS, means=MEANS, horizon=HORIZON, runs=runs, seed=seed,
                           workers=workers).to_dict()
        d.pop("runtime_s")
        docs.append(d)
    return docs[0] == docs[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--speed-runs", type=int, default=40_000)
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "figures" / "callables.json"))
    a = ap.parse_args()
    fig = {"command": "python benchmarks/callables.py", "instance": {
        "means": MEANS, "horizon": HORIZON, "eps": EPS, "model": "user"}}
    fig["tightness"] = tightness(a.runs, a.seed)
    print(json.dumps(fig["tightness"], indent=1), flush=True)
    fig["speed"] = speed(a.speed_runs)
    print(json.dumps(fig["speed"], indent=1), flush=True)
    fig["json_identical_1_and_2_workers"] = same_json(20_000, a.seed)
    print("JSON identical on 1 and 2 workers:", fig["json_identical_1_and_2_workers"])
    write_json_atomic(a.json, fig)


if __name__ == "__main__":
    main()
