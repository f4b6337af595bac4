"""Simulation speed of this commit against a base commit, interleaved (a speed regression check).

    python benchmarks/speed_versus.py BASE [--reps 10] [--seconds 4] [--algo A ...]
        [--out benchmarks/figures/speed_versus.json]

Both commits' ``dpaudit`` and ``algorithms`` are exported with ``git archive`` into temporary
trees (HEAD, not the working tree: edits during the run change nothing measured), and each
measurement is ``python -m dpaudit bench --algo A --seconds S`` in a fresh process on one of
them (its own numba cache). Repetition r measures each algorithm on HEAD, then at once on
BASE, so a slow spell of a shared machine falls on both. Default algorithms: those ``dpaudit mutate
--all`` mutates (the private registered algorithms with a noise site).

Per algorithm: the mean steps/s of each commit, ``ratio`` = mean(HEAD) / mean(BASE), the
median of the per-repetition ratios, and ``best_ratio`` = max(HEAD) / max(BASE), the fastest
repetition of each (as ``timeit`` takes the fastest: on a shared machine a slow spell only
lowers a measurement, so the best is the least disturbed). Each measurement is appended to ``OUT.partial``
(JSON lines) as it ends; a rerun resumes from it. The figures are written atomically to
``OUT`` at the end.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tarfile
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def export(commit: str, into: pathlib.Path) -> pathlib.Path:
    """The commit's ``dpaudit`` package (``algorithms`` as ``dpaudit/algorithms``) in ``into``."""
    sha = subprocess.run(["git", "rev-parse", commit], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    tree = into / sha[:12]
    if not (tree / "dpaudit" / "algorithms").is_dir():
        tar = subprocess.run(["git", "archive", sha, "dpaudit", "algorithms"], cwd=ROOT,
                             check=True, capture_output=True).stdout
        tree.mkdir(parents=True, exist_ok=True)
        path = tree / "src.tar"
        path.write_bytes(tar)
        with tarfile.open(path) as t:
            t.extractall(tree, filter="data")
        path.unlink()
        (tree / "algorithms").rename(tree / "dpaudit" / "algorithms")
    return tree


def measure(tree: pathlib.Path, algo: str, seconds: float) -> float | None:
    """Steps/s of ``dpaudit bench`` of ``algo`` on the tree (None: the tree lacks it)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "bench.json"
        env = dict(os.environ, PYTHONPATH=str(tree))
        done = subprocess.run([sys.executable, "-m", "dpaudit", "bench", "--algo", algo,
                               "--seconds", str(seconds), "--json", str(out)], env=env,
                              cwd=tmp, capture_output=True, text=True)
        if done.returncode != 0:
            return None
        return json.loads(out.read_text())["steps_per_s"]


def summary(rows: list[dict], algos: list[str], base: str) -> dict:
    """Per algorithm: each commit's mean steps/s, the ratio of means, the median paired ratio."""
    out = {}
    for a in algos:
        new = {r["rep"]: r["steps_per_s"] for r in rows if r["algo"] == a and r["ver"] == "head"}
        old = {r["rep"]: r["steps_per_s"] for r in rows if r["algo"] == a and r["ver"] == "base"}
        pairs = [(new[k], old[k]) for k in new if k in old and new[k] and old[k]]
        if not pairs:
            out[a] = {"reps": 0}
            continue
        mn, mo = statistics.fmean(p[0] for p in pairs), statistics.fmean(p[1] for p in pairs)
        out[a] = {"reps": len(pairs), "head_steps_per_s": mn, "base_steps_per_s": mo,
                  "ratio": mn / mo, "median_paired_ratio": statistics.median(n / o for n, o in pairs),
                  "best_ratio": max(p[0] for p in pairs) / max(p[1] for p in pairs)}
    return {"base": base, "algorithms": out}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--algo", action="append")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/figures/speed_versus.json"))
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from dpaudit.calibrate.mutation import mutable
    algos = a.algo or mutable()
    work = pathlib.Path(tempfile.gettempdir()) / "dpaudit-speed-versus"
    trees = {"head": export("HEAD", work), "base": export(a.base, work)}
    partial = pathlib.Path(a.out + ".partial")
    rows = [json.loads(line) for line in partial.read_text().splitlines()] \
        if partial.exists() else []
    done = {(r["rep"], r["ver"], r["algo"]) for r in rows}
    for rep in range(a.reps):
        for algo in algos:
            for ver in ("head", "base"):
                if (rep, ver, algo) in done:
                    continue
                row = {"rep": rep, "ver": ver, "algo": algo,
                       "steps_per_s": measure(trees[ver], algo, a.seconds)}
                rows.append(row)
                with partial.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)
    result = summary(rows, algos, a.base)
    result.update(reps=a.reps, seconds=a.seconds)
    tmp = pathlib.Path(a.out + ".tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    tmp.replace(a.out)
    partial.unlink()
    for algo, s in result["algorithms"].items():
        if s["reps"]:
            print(f"{algo:<24}{s['head_steps_per_s']:>12.3g}{s['base_steps_per_s']:>12.3g}"
                  f"{s['ratio']:>8.3f}{s['median_paired_ratio']:>8.3f}{s['best_ratio']:>8.3f}")


if __name__ == "__main__":
    main()
