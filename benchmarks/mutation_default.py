"""Mutation analysis of the catalogue at the default audit budget, checkpointed (hours).

    python benchmarks/mutation_default.py [--eps 0.5] [--seed 1] [--workers 2] [--algo A ...]
        [--out benchmarks/figures/mutation_default.json]

What ``dpaudit mutate --all --json OUT`` computes (:mod:`dpaudit.calibrate.mutation`: every
noise site of every mutable algorithm × every operator, ground truth, the default audit of
each non-equivalent mutant), one mutant at a time: each mutant's row is appended to
``OUT.partial`` (JSON lines) as its audit ends, and a rerun skips the mutants already there,
so a stopped run resumes where it stopped. At the end the scores are printed and, when every
mutable algorithm was run, the analysis is written atomically to ``OUT`` (the ``dpaudit
mutate`` JSON); a run of some ``--algo`` keeps its rows in the checkpoint.
"""
import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from dpaudit.calibrate import mutation
    ap = argparse.ArgumentParser()
    ap.add_argument("--eps", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--algo", action="append")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/figures/mutation_default.json"))
    a = ap.parse_args()
    ask = mutation.MutationRequest(tuple(a.algo or mutation.mutable()), a.eps, a.seed,
                                   quick=False, workers=a.workers)
    partial = pathlib.Path(a.out + ".partial")
    rows = [json.loads(line) for line in partial.read_text().splitlines()] \
        if partial.exists() else []
    done = {r["mutant"] for r in rows}
    for algo in ask.algorithms:
        for _, text, m in mutation.plan(algo):
            if algo + m.suffix() in done:
                continue
            row = mutation.mutant_row(algo, text, m, ask)
            rows.append(row)
            with partial.open("a") as f:
                f.write(json.dumps(row) + "\n")
            mark = row.get("verdict", row["status"])
            print(f"{row['mutant']:<34} {row['status']:<14} {mark}", flush=True)
    order = {(algo, algo + m.suffix()): i for i, (algo, m) in enumerate(
        (algo, m) for algo in ask.algorithms for _, _, m in mutation.plan(algo))}
    rows = sorted((r for r in rows if (r["algorithm"], r["mutant"]) in order),
                  key=lambda r: order[(r["algorithm"], r["mutant"])])
    result = mutation.summarise(rows, ask)
    if set(ask.algorithms) == set(mutation.mutable()):    # a subset keeps the checkpoint
        tmp = pathlib.Path(a.out + ".tmp")
        tmp.write_text(json.dumps(result, indent=1) + "\n")
        tmp.replace(a.out)
        partial.unlink()
    for algo, p in result["per_algorithm"].items():
        print(f"{algo:<24}{p['killed']:>4} of {p['bugs']:<4}")
    print(f"score {result['score']:.3f}: {result['killed']} of {result['bugs']} bugs killed, "
          f"{result['within_margin']} within the margin (default budget, eps {a.eps:g})")


if __name__ == "__main__":
    main()
