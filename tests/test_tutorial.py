"""The tutorial (docs/tutorial.md) shows what the tool prints: each `dpaudit run` command
followed by an output block is run (from a copy of examples/, so nothing is written in the
checkout) and its output compared with the block, line by line, the wall time masked. The runs
are seeded and deterministic whatever the workers, so the comparison cannot fail by chance."""
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tutorial.md"
TIME = re.compile(r"(seed \d+), [\d.]+ s$")
PAIRS = re.findall(r"```bash\n(dpaudit run [^\n]+)\n```\n\n```\n(dpaudit: .*?)```",
                   PAGE.read_text(), re.S)


def _masked(lines):
    return [TIME.sub(r"\1, <time> s", line.rstrip()) for line in lines]


def test_the_tutorial_shows_a_violation_and_its_fix():
    assert [block.split("verdict: ")[1].split("\n")[0] for _, block in PAIRS] == [
        "VIOLATION", "PASS"]


@pytest.mark.slow       # two audits of about 5 s
@pytest.mark.cli
@pytest.mark.parametrize("command, block", PAIRS, ids=["violation", "fix"])
def test_each_tutorial_command_prints_its_block(command, block, tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    p = subprocess.run([sys.executable, "-m", "dpaudit", *shlex.split(command)[1:]],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert p.returncode == (1 if "VIOLATION" in block else 0), p.stderr
    assert _masked(p.stdout.rstrip("\n").split("\n")) == _masked(block.rstrip("\n").split("\n"))
