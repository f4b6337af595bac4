"""What the command line says and writes, collected into a folder, so that two commits can be
compared with ``diff -r`` (a refactor must change nothing a user sees).

    python benchmarks/snapshot.py OUT_DIR [--runs 2000] [--quick]

Collected, each command run in this process from the checkout's folder (stdout, stderr and
exit code in ``<name>.out``, the files it writes beside it):

* ``dpaudit list`` and every ``--help`` (the command, each subcommand, each ``check`` kind);
* ``dpaudit run --json`` for every registered algorithm at ε = 1 (its default δ), seed 1,
  ``--runs`` runs, one worker;
* ``dpaudit check constants --json`` and ``check correctness --json`` for one algorithm of
  each family at a small budget;
* ``dpaudit report`` of every result JSON in tests/data (HTML and Markdown);
* every command-line case of tests/hostile/cases.toml not marked slow (its exit codes, stdout,
  stderr and the files it changed, through tests/hostile/runner.py).

Masked so that two runs of one commit are identical: ``runtime_s`` (and the JSON's other
wall times), durations printed as "N s" and "N.N s", the temporary folders' paths.
``--quick`` runs three algorithms instead of all (a check of the script itself).
"""
import argparse
import contextlib
import io
import json
import os
import pathlib
import re
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIMING_KEYS = {"runtime_s", "seconds", "wall_s", "elapsed_s"}
CORRECTNESS = (("adap-tt", ["--risk", "0.1", "--runs", "30", "--param", "max_steps=1048576"]),
               ("dp-bai", ["--risk", "0.5", "--runs", "30"]),
               ("ldp-tb-budget", ["--risk", "0.5", "--runs", "30"]))
PAPERS = ("azize2023", "barbara2025", "chen2024")


def masked_json(obj):
    """``obj`` with every timing value set to 0."""
    if isinstance(obj, dict):
        return {k: (0 if k in TIMING_KEYS else masked_json(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [masked_json(v) for v in obj]
    return obj


def masked_text(text: str, tmp: str | None = None) -> str:
    """``text`` with durations and the temporary folder masked."""
    if tmp:
        text = text.replace(tmp, "<tmp>")
    text = re.sub(r"\b\d+(\.\d+)? ?s\b", "<t> s", text)
    return re.sub(r'"runtime_s": [0-9.e+-]+', '"runtime_s": 0', text)


def call(argv: list[str]) -> tuple[int, str, str]:
    """``dpaudit argv`` in this process: (exit code, stdout, stderr)."""
    from dpaudit.commands.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


def record(out: pathlib.Path, name: str, argv: list[str], tmp: str | None = None) -> int:
    """Run ``argv`` and write ``name.out`` (the command, its exit code, stdout, stderr)."""
    code, so, se = call(argv)
    text = f"$ dpaudit {' '.join(argv)}\nexit {code}\n--- stdout\n{so}--- stderr\n{se}"
    (out / f"{name}.out").write_text(masked_text(text, tmp))
    return code


def keep_json(src: str, dst: pathlib.Path) -> None:
    """Copy a JSON result with its timings masked (missing: nothing)."""
    if os.path.exists(src):
        with open(src) as f:
            dst.write_text(json.dumps(masked_json(json.load(f)), indent=1, sort_keys=True))


def helps(out: pathlib.Path) -> None:
    d = out / "help"
    d.mkdir()
    record(d, "dpaudit", ["--help"])
    for sub in ("list", "run", "bench", "gate", "report", "check"):
        record(d, sub, [sub, "--help"])
    for kind in ("constants", "correctness"):
        record(d, f"check-{kind}", ["check", kind, "--help"])
    record(out, "list", ["list"])


def runs(out: pathlib.Path, n: int, quick: bool, tmp: str) -> None:
    from dpaudit.algorithms import registry
    d = out / "run"
    d.mkdir()
    names = [s.name for s in registry.all_specs()]
    for name in names[:3] if quick else names:
        j = os.path.join(tmp, f"{name}.json")
        record(d, name, ["run", "--algo", name, "--eps", "1", "--seed", "1", "--runs", str(n),
                         "--workers", "1", "--json", j], tmp)
        keep_json(j, d / f"{name}.json")


def checks(out: pathlib.Path, tmp: str) -> None:
    d = out / "check"
    d.mkdir()
    for paper in PAPERS:
        j = os.path.join(tmp, f"constants-{paper}.json")
        record(d, f"constants-{paper}", ["check", "constants", "--paper", paper, "--json", j],
               tmp)
        keep_json(j, d / f"constants-{paper}.json")
    for name, args in CORRECTNESS:
        j = os.path.join(tmp, f"correctness-{name}.json")
        record(d, f"correctness-{name}", ["check", "correctness", "--algo", name, "--eps", "1",
                                          *args, "--seed", "1", "--workers", "1", "--json", j],
               tmp)
        keep_json(j, d / f"correctness-{name}.json")


def reports(out: pathlib.Path, tmp: str) -> None:
    d = out / "report"
    d.mkdir()
    for f in sorted((ROOT / "tests" / "data").glob("*.json")):
        html, md = os.path.join(tmp, f.stem + ".html"), os.path.join(tmp, f.stem + ".md")
        record(d, f.stem, ["report", str(f.relative_to(ROOT)), "-o", html, "--markdown", md],
               tmp)
        for p in (html, md):
            if os.path.exists(p):
                (d / os.path.basename(p)).write_text(masked_text(open(p).read(), tmp))


def hostile(out: pathlib.Path) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from hostile import runner
    d = out / "hostile"
    d.mkdir()
    for case in runner.CASES["cli"]:
        if case.get("slow"):
            continue
        with tempfile.TemporaryDirectory() as root:
            got = runner.run(case, pathlib.Path(root))
            text = json.dumps({k: got[k] for k in ("codes", "stdout", "stderr", "changed",
                                                   "fixtures_changed")}, indent=1)
            text = masked_text(text.replace(str(got["fx"]), "<fx>"), str(got["tmp"]))
        (d / f"{case['id']}.json").write_text(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    out = pathlib.Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=False)
    os.chdir(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        helps(out)
        checks(out, tmp)
        reports(out, tmp)
        hostile(out)
        runs(out, a.runs, a.quick, tmp)
    print(f"written {out}")


if __name__ == "__main__":
    main()
