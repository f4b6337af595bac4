"""Scaling of an audit over workers and schedulers: runs per second, efficiency, Dask overhead.

    python benchmarks/scaling.py [--repeats 1] [--json benchmarks/figures/scaling.json]

Each audit is one ``dpaudit run`` command, started afresh (its pool or Dask cluster started
and closed by it, as a user's command does), on ``processes`` and ``dask`` with 1 and 2 workers:

* the README's main job, ``dpaudit run --algo adap-tt --eps 0.5 --seed 1`` (default budget);
* a callable, ``dpaudit run --algo examples/private_etc.py:etc --eps 1 --seed 1 --runs 200000``.

The repeats are interleaved (each round runs every configuration once), so a slow spell of
the machine hits the configurations alike. Printed per audit and configuration: the audit's
time (``runtime_s``, the fastest of ``--repeats``; the JSON keeps every repeat's) and the
command's (from its start to its exit, imports and the workers' start and close included, the
fastest of ``--repeats``), the runs it drew (pilots and measurement,
both sides) per audit second, the parallel efficiency t(1 worker) / (2 × t(2 workers)) and the
Dask overhead t(dask) / t(processes) − 1 at 2 workers, both on either time. Every
configuration's JSON must be identical but for its runtime; the script says so or stops.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from dpaudit.verdicts.result import write_json_atomic

AUDITS = {
    "main job (adap-tt)": ["--algo", "adap-tt", "--eps", "0.5", "--seed", "1"],
    "callable (private_etc.py:etc)": ["--algo", "examples/private_etc.py:etc", "--eps", "1",
                                      "--seed", "1", "--runs", "200000"],
}
CONFIGS = [("processes", 1), ("processes", 2), ("dask", 1), ("dask", 2)]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def runs_drawn(doc: dict) -> int:
    """Runs an audit drew: its pilots and its measurement, both sides."""
    b = doc["search"]["budget"]
    m = doc["counts"]["measurement"]
    return 2 * b["pilot_runs_per_side_used"] + m["finalists"] * (m["runs_d"] + m["runs_d_prime"])


def untimed(x: object) -> object:
    """A result without its run times (``runtime_s`` at any depth)."""
    if isinstance(x, dict):
        return {k: untimed(v) for k, v in x.items() if k != "runtime_s"}
    return [untimed(v) for v in x] if isinstance(x, list) else x


def one(argv: list[str], scheduler: str, workers: int) -> tuple[dict, float]:
    """One fresh ``dpaudit run``: its JSON and the command's wall time (s)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "dpaudit", "run", *argv, "--scheduler", scheduler,
                        "--workers", str(workers), "--json", out], cwd=ROOT, check=False,
                       stdout=subprocess.DEVNULL, env={**os.environ, "DPAUDIT_SCHEDULER": ""})
        wall = time.perf_counter() - t
        with open(out) as f:
            return json.load(f), wall


def ratios(t: dict, sched: str, w: int) -> tuple:
    """(efficiency, Dask overhead) of a configuration's row (None where not defined)."""
    eff = t[sched, 1] / (2 * t[sched, 2]) if w == 2 else None
    over = t["dask", 2] / t["processes", 2] - 1 if (sched, w) == ("dask", 2) else None
    return eff, over


def shown(eff: float | None, over: float | None) -> str:
    """The two ratios as table cells."""
    return (f"{eff:.2f}" if eff is not None else "") + " | " \
        + (f"{100 * over:+.0f} %" if over is not None else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json", default=os.path.join(ROOT, "benchmarks", "figures",
                                                   "scaling.json"))
    a = ap.parse_args()
    rows = {}
    print("| audit | scheduler | workers | audit (s) | command (s) | runs/s | efficiency "
          "(audit) | Dask overhead (audit) | efficiency (command) | Dask overhead (command) |\n"
          "|---|---|---|---|---|---|---|---|---|---|")
    for name, argv in AUDITS.items():
        t, wall, docs, every = {}, {}, {}, {}
        rounds = [[one(argv, sched, w) for sched, w in CONFIGS] for _ in range(a.repeats)]
        for c, (sched, w) in enumerate(CONFIGS):
            got = [r[c] for r in rounds]
            every[sched, w] = [d["runtime_s"] for d, _ in got]
            t[sched, w] = min(every[sched, w])
            wall[sched, w] = min(s for _, s in got)
            docs[sched, w] = untimed(got[0][0])
        same = all(d == docs["processes", 1] for d in docs.values())
        if not same:
            sys.exit(f"{name}: the JSON differs between schedulers or workers")
        runs = runs_drawn(docs["processes", 1])
        for sched, w in CONFIGS:
            eff, over = ratios(t, sched, w)
            eff_c, over_c = ratios(wall, sched, w)
            rows[f"{name}, {sched}, {w}"] = {
                "seconds": t[sched, w], "seconds_every_repeat": every[sched, w],
                "command_seconds": wall[sched, w], "runs": runs,
                "runs_per_s": runs / t[sched, w], "efficiency": eff, "dask_overhead": over,
                "command_efficiency": eff_c, "command_dask_overhead": over_c}
            print(f"| {name} | {sched} | {w} | {t[sched, w]:.1f} | {wall[sched, w]:.1f} | "
                  f"{runs / t[sched, w]:.3g} | {shown(eff, over)} | {shown(eff_c, over_c)} |",
                  flush=True)
    print("\nThe JSON of every configuration is identical but for its runtime.")
    write_json_atomic(a.json, {"cores": os.cpu_count(), "repeats": a.repeats, "rows": rows})


if __name__ == "__main__":
    main()
