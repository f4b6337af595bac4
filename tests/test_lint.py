"""ruff passes on the whole repository with the project's rules (pyproject.toml [tool.ruff]):
its default rules everywhere, Google-style docstrings and type annotations on the public API.
Deterministic."""
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
