"""The README's worked example is what the tool prints: the command the README names is run at
the README's budget and its output compared with the README's excerpt and with the whole block
of docs/getting-started.md, line by line, the wall time masked. The run is deterministic for
its seed (same seed, same result, whatever the workers), so the comparison cannot fail by
chance. Running the main job takes a minute or more: it runs with ``pytest --worked-example``,
a step of its own in CI (``.ci/run``)."""
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", ROOT / "docs" / "getting-started.md")
TIME = re.compile(r"(seed \d+), [\d.]+ s$")


def worked_example(page: pathlib.Path) -> tuple[str, list[str]]:
    """(the command, the lines of its output block) of a page's worked example."""
    text = page.read_text()
    section = text[text.index("Worked example"):]
    command = re.search(r"`(dpaudit run [^`]+)`", section).group(1)
    block = re.search(r"```\n(dpaudit: .*?)```", section, re.S).group(1)
    return command, block.rstrip("\n").split("\n")


def _masked(line: str) -> str:
    return TIME.sub(r"\1, <time> s", line.rstrip())


def test_both_pages_show_the_same_command_and_the_readme_an_excerpt_of_the_guide():
    (c1, readme), (c2, guide) = (worked_example(p) for p in PAGES)
    assert c1 == c2
    assert readme[-1].strip() == "..." and readme[:-1] == guide[:len(readme) - 1]


@pytest.mark.slow     # the README's budget: 45-70 s on 2 idle cores
@pytest.mark.worked_example    # pytest --worked-example (CI's own step)
@pytest.mark.cli
def test_the_worked_example_prints_what_the_pages_show(tmp_path):
    command, _ = worked_example(PAGES[1])
    argv = shlex.split(command)
    p = subprocess.run([sys.executable, "-m", "dpaudit", *argv[1:]], capture_output=True,
                       text=True, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr
    printed = [_masked(line) for line in p.stdout.rstrip("\n").split("\n")]
    for page in PAGES:
        _, shown = worked_example(page)
        shown = [_masked(line) for line in shown]
        if shown[-1].strip() == "...":
            shown, printed_part = shown[:-1], printed[:len(shown) - 1]
        else:
            printed_part = printed
        assert printed_part == shown, (page.name, [
            (a, b) for a, b in zip(printed_part, shown) if a != b][:3])
