"""ruff passes on the whole repository with the project's rules (pyproject.toml [tool.ruff]):
its default rules everywhere, Google-style docstrings and type annotations on the package
(dpaudit/ and algorithms/), where every public function documents its arguments.
Deterministic."""
import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def ruff(*args: str, cwd: pathlib.Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def test_ruff_passes_on_the_repository():
    r = ruff(".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_docstring_and_annotation_rules_apply_where_the_config_says(tmp_path):
    # the same undocumented, unannotated function in an API module and in an internal one
    bad = "\n\ndef oops(x):\n    return x\n"
    for rel, expect in (("dpaudit/errors.py", {"D103", "ANN001", "ANN201"}),
                        ("algorithms/adap_tt/glr.py", {"D103", "ANN001", "ANN201"}),
                        ("benchmarks/power.py", set()),
                        ("tests/conftest.py", set())):
        copy = tmp_path / rel
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text((ROOT / rel).read_text() + bad)
        (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
        r = ruff("--output-format", "concise", rel, cwd=tmp_path)
        found = {word for line in r.stdout.splitlines() for word in line.split()
                 if word[:1].isupper() and word[1:].isdigit() or word[:3] == "ANN"}
        assert found == expect, (rel, r.stdout)


# Every public function and method of the package documents its arguments in a Google "Args:"
# section (ruff's D417 then checks that every argument is in it). Kernels and their batch loops
# share one signature each, documented once: the kernel contract in dpaudit.simulation.simulate,
# simulate.batch_body's Args and dpaudit.auditing.whitebox.pair_body's (run/replay loops).
PACKAGE = sorted([*(ROOT / "dpaudit").rglob("*.py"), *(ROOT / "algorithms").rglob("*.py")])
CONTRACTS = {("rng", "table", "means", "theta", "aux", "limit", "actions", "releases", "frozen"):
             "the kernel contract", ("rng", "table", "means", "theta", "aux", "limit", "n_runs",
                                     "views", "keep"): "batch_body",
             ("rng", "rng2", "table", "table2", "means", "theta", "aux", "limit", "work"):
             "pair_body"}


def _public_functions(tree):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            yield node
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            yield from (f for f in node.body
                        if isinstance(f, ast.FunctionDef) and not f.name.startswith("_"))


def test_every_public_function_of_the_package_documents_its_arguments():
    assert len(PACKAGE) > 50
    missing = []
    for path in PACKAGE:
        rel = path.relative_to(ROOT)
        for f in _public_functions(ast.parse(path.read_text())):
            args = [a.arg for a in f.args.args + f.args.kwonlyargs if a.arg not in ("self", "cls")]
            doc = ast.get_docstring(f) or ""
            contract = CONTRACTS.get(tuple(args))
            if contract and f.name not in ("batch_body", "pair_body"):
                if contract not in doc:                # points to where its arguments are
                    missing.append(f"{rel}:{f.lineno} {f.name} (no reference to {contract})")
            elif args and "Args:" not in doc:
                missing.append(f"{rel}:{f.lineno} {f.name}")
    assert not missing, missing
