"""The docs cannot go stale: every `dpaudit ...` command line of a code block in the README,
the docs and the examples parses with the CLI as it is (flags, choices and values); an inline
`dpaudit ...` span may be a fragment (a required option left out) but every flag and value it
gives must parse. Synopsis lines (with `[...]`, `|` or `...`) are left out. Paths a line
names need not exist here."""
import pathlib
import re
import shlex

import pytest

from dpaudit.commands.cli import _parser
from dpaudit.errors import InputError

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
         *sorted((ROOT / "examples").rglob("*.md"))]
SYNOPSIS = re.compile(r"\[|\||\.\.\.|…|<|(^| )[A-Z][A-Z_]*( |$)")   # or a placeholder: P, KEY


def command_lines(text: str) -> list[tuple[str, bool]]:
    """The `dpaudit` lines of a page, each with whether it is a whole line: those of its code
    blocks (continuations joined, comments and prompts dropped) and its inline spans."""
    text = re.sub(r"\\\n\s*", " ", text)
    spans = re.findall(r"(?<!`)`(dpaudit [^`]+)`(?!`)", text)
    found = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.strip().removeprefix("$ ")
            for part in re.split(r"&&|;", line):
                part = part.strip()
                if part.startswith("dpaudit ") and not re.match(r"dpaudit \w+: ", part):
                    found.append(part.split(" #")[0])      # "dpaudit gate: ...": its output
    return [(c.strip(), whole) for cs, whole in ((found, True), (spans, False)) for c in cs
            if not SYNOPSIS.search(c)]


CASES = [(p.relative_to(ROOT).as_posix(), c, whole) for p in PAGES
         for c, whole in command_lines(p.read_text())]


def test_the_docs_have_command_lines_to_check():
    assert sum(whole for *_, whole in CASES) >= 5 and len(CASES) > 50


@pytest.mark.parametrize("page,line,whole", CASES)
def test_every_command_line_in_the_docs_parses(page, line, whole):
    argv = shlex.split(line)[1:]
    argv = [a for a in argv if a not in (">", "2>&1")]
    try:
        _parser().parse_args(argv)
    except SystemExit as e:          # --help, --version
        assert e.code == 0 and ("--help" in argv or "--version" in argv), (page, line)
    except InputError as e:
        if not whole and (str(e).startswith("the following arguments are required")
                          or str(e).endswith("expected one argument") and argv[-1][:2] == "--"):
            return                   # a fragment (an option named, not given): it parsed
        pytest.fail(f"{page}: `{line}` does not parse: {e}")


def test_every_page_has_one_title():
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        titles = [line for line in text.splitlines() if line.startswith("# ")]
        assert len(titles) == 1, (page.relative_to(ROOT).as_posix(), titles)
