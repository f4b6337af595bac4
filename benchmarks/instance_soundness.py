"""False violations of the claim-space search on a tight, correct mechanism.

``tight`` (:func:`dpaudit.calibrate.planted.tight_spec`) releases every row by randomised
response at exactly the audited ε: it is ε-DP and every neighbouring pair loses exactly ε, at
every instance of its declared space (horizon 4-512, a constant nothing reads, two-arm means).
Each audit searches that space (the default ``--instances search``: proposals, coupled screen,
four instances pooled into the neighbour search) and measures its finalists; a violation is
false. The verdict promises P(violation) <= alpha whatever was searched, since selection draws
on seeds the measurement never reuses. This prints the false-violation count over N audits
(seeds 0..N-1), its rate and the exact Clopper-Pearson 95 % upper bound, against alpha.

    python benchmarks/instance_soundness.py [--audits N] [--runs R] [--alpha A] [--out F]

Results are checkpointed to ``--out`` (JSON) after every audit and resumed from it.
"""
from __future__ import annotations

import argparse
import json
import os
import time

from scipy.stats import beta as beta_dist


def main(argv=None) -> int:
    from dpaudit.auditing.audit import audit_algorithm
    from dpaudit.calibrate.planted import tight_spec
    from dpaudit.verdicts.result import write_json_atomic
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--audits", type=int, default=200)
    ap.add_argument("--runs", type=int, default=50_000)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--out", default="benchmarks/figures/instance_soundness.json")
    a = ap.parse_args(argv)
    done = json.load(open(a.out)) if os.path.exists(a.out) else {"audits": []}
    spec = tight_spec()
    for seed in range(len(done["audits"]), a.audits):
        t0 = time.perf_counter()
        r = audit_algorithm(spec, a.eps, seed=seed, runs=a.runs, alpha=a.alpha, whitebox_runs=0)
        done["audits"].append({"seed": seed, "verdict": str(r.verdict), "eps_lb": r.eps_lb,
                               "instance": r.params, "seconds": time.perf_counter() - t0})
        done.update(runs=a.runs, alpha=a.alpha, eps=a.eps)
        write_json_atomic(a.out, done)
    rows = done["audits"][:a.audits]
    n, k = len(rows), sum(r["verdict"] == "violation" for r in rows)
    upper = float(beta_dist.ppf(0.95, k + 1, n - k)) if k < n else 1.0
    worst = max(r["eps_lb"] for r in rows)
    print(f"tight (eps-DP exactly, eps = {a.eps}): {n} audits searching the claim space, "
          f"{a.runs} runs, alpha = {a.alpha}")
    print(f"false violations: {k}/{n} = {k / n:.4f}; 95% upper bound {upper:.4f} "
          f"({'<=' if upper <= a.alpha else '>'} alpha); largest eps_lb {worst:.4f}; "
          f"{sum(r['seconds'] for r in rows) / n:.1f} s per audit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
