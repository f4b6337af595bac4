"""Runs one hostile case of tests/hostile/cases.toml and checks the command line's contract
(docs/guide/commands.md, "Exit codes"): exit 2 (bad input) or 4 (an error in the user's code) with
exactly one line on stderr and no file created or changed; a verdict or a report otherwise,
writing the files the case names and nothing else; never a traceback; the fixtures unchanged.

A case's placeholders: ``{tmp}`` a fresh folder prepared by :func:`prepare`, ``{fx}`` a fresh
copy of tests/hostile/fixtures, ``{repo}`` the checkout.
"""
from __future__ import annotations

import contextlib
import io
import os
import pathlib
import shutil
import tomllib

HERE = pathlib.Path(__file__).parent
REPO = HERE.parent.parent
CASES = tomllib.loads((HERE / "cases.toml").read_text(encoding="utf-8"))
XSS_DIR = "xss<script>alert(1)<"     # a folder name no repository should hold: made per test


def prepare(root: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """A fresh ``tmp`` folder with the inputs and obstacles the cases name, and a fresh copy
    ``fx`` of the fixtures. Returns (tmp, fx)."""
    fx = root / "fx"
    shutil.copytree(HERE / "fixtures", fx)
    (fx / XSS_DIR).mkdir()
    (fx / XSS_DIR / "script>.py").write_text(
        "def f(rng, data, eps):\n    return int(data[0, 0] + rng.laplace(0, 1 / eps) > 0.5)\n")
    tmp = root / "tmp"
    tmp.mkdir()
    for d in ("adir", "jdir", "bdir", "odir", "mdir", "d.csv"):   # folders where files go
        (tmp / d).mkdir()
    (tmp / "afile").write_text("a file where a folder is expected\n")
    shutil.copy(fx / "user_ok.json", tmp / "pair.json")
    (tmp / "p.json").write_text((fx / "user_ok.json").read_text().replace(
        '"d_prime": [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0',
        '"d_prime": [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1e999'))
    shutil.copy(fx / "gate" / "ok.toml", tmp / "s.toml")
    shutil.copy(fx / "rep" / "audit_local.json", tmp / "in.json")
    shutil.copy(REPO / "examples" / "private_etc.py", tmp / "algo.py")
    (tmp / "ro.json").write_text("{}\n")
    (tmp / "ro.json").chmod(0o444)
    (tmp / "target.json").write_text("{}\n")
    (tmp / "link.json").symlink_to(tmp / "target.json")
    return tmp, fx


def filled(text: str, tmp, fx) -> str:
    """``text`` with its placeholders replaced (braces elsewhere are left alone)."""
    return text.replace("{tmp}", str(tmp)).replace("{fx}", str(fx)).replace("{repo}", str(REPO))


def snapshot(folder: pathlib.Path) -> dict:
    """{relative path: its bytes, or "dir" / "link -> target"} of everything in ``folder``."""
    out = {}
    for p in sorted(folder.rglob("*")):
        key = str(p.relative_to(folder))
        if p.is_symlink():
            out[key] = f"link -> {os.readlink(p)}"
        elif p.is_dir():
            out[key] = "dir"
        else:
            out[key] = p.read_bytes()
    return out


def call(argv: list[str]) -> tuple[int, str, str]:
    """``dpaudit argv`` in this process: (exit code, stdout, stderr)."""
    from dpaudit.commands.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:          # argparse's --help; nothing else may raise
            code = e.code
    return code, out.getvalue(), err.getvalue()


def run(case: dict, root: pathlib.Path) -> dict:
    """Run ``case`` (its ``argv``, or each of its ``argvs``) from the checkout's folder; what
    the contract looks at."""
    tmp, fx = prepare(root)
    before, fixtures = snapshot(tmp), snapshot(fx)
    results = []
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        for argv in case.get("argvs", [case.get("argv")]):
            results.append(call([filled(a, tmp, fx) for a in argv]))
    finally:
        os.chdir(cwd)
    after = snapshot(tmp)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    return {"codes": [r[0] for r in results], "stdout": [r[1] for r in results],
            "stderr": [r[2] for r in results], "changed": changed,
            "fixtures_changed": snapshot(fx) != fixtures, "tmp": tmp, "fx": fx}


def check(case: dict, got: dict) -> None:
    """AssertionError unless ``got`` (from :func:`run`) meets the contract for ``case``."""
    expected = case.get("exits", [case.get("exit")])
    for want, code, err in zip(expected, got["codes"], got["stderr"]):
        allowed = want if isinstance(want, list) else [want]
        assert code in allowed, (case["id"], code, err)
        assert "Traceback" not in err, (case["id"], err)
        if code in (2, 4):
            assert err.count("\n") == 1 and err.startswith("dpaudit: error"), (case["id"], err)
    if got["codes"][-1] in (2, 4) and len(got["codes"]) == 1:
        assert got["changed"] == [], (case["id"], got["changed"])
    else:
        assert got["changed"] == sorted(case.get("writes", [])), (case["id"], got["changed"])
    assert not got["fixtures_changed"], case["id"]
    if "says" in case:
        text = got["stdout"][-1] + got["stderr"][-1]
        assert filled(case["says"], got["tmp"], got["fx"]) in text, (case["id"], text)


def run_api(case: dict, root: pathlib.Path) -> tuple[str, str]:
    """Evaluate the Python API call ``case["call"]`` (names: dpaudit, np, assert_dp, etc from
    examples/private_etc.py, and the mechanisms of tests/hostile/mechanisms.py). Returns
    ("raises", exception type name) or ("returns", the verdict)."""
    import importlib.util

    import numpy as np

    import dpaudit
    from dpaudit.testing import assert_dp
    _, fx = prepare(root)
    names = {"dpaudit": dpaudit, "np": np, "assert_dp": assert_dp}
    for path in (HERE / "mechanisms.py", REPO / "examples" / "private_etc.py"):
        spec = importlib.util.spec_from_file_location(f"hostile_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        names.update({k: v for k, v in vars(module).items() if not k.startswith("_")})
    fixtures = snapshot(fx)
    try:
        result = eval(filled(case["call"], root, fx), names)
    except BaseException as e:          # noqa: BLE001 - SystemExit would be a finding too
        outcome = ("raises", type(e).__name__)
    else:
        outcome = ("returns", result.verdict)
    assert snapshot(fx) == fixtures, case["id"]
    return outcome
