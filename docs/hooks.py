"""MkDocs hooks.

* Publish the committed outputs the pages link to, without copying them: the reproduction
  pages (``reports/reproduce/``), the report screenshot, the benchmark figures
  (``benchmarks/figures/*.json``) and the verdict JSON Schema live where the code writes or
  reads them; they join the site under ``reports/``, ``figures/`` and ``reference/``, so the
  docs can link them and ``mkdocs build --strict`` checks those links.
* Write the help of every command into the CLI reference (the ``<!-- cli-help -->`` marker),
  as ``dpaudit COMMAND --help`` prints it, so the page is always that of the code.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

from mkdocs.structure.files import File, Files

ROOT = pathlib.Path(__file__).resolve().parent.parent
PUBLISHED = ((ROOT / "reports" / "reproduce", "reports/reproduce"),
             (ROOT / "reports" / "screenshot.png", "reports/screenshot.png"),
             (ROOT / "benchmarks" / "figures", "figures"),
             (ROOT / "dpaudit" / "verdicts" / "verdict.schema.json",
              "reference/verdict.schema.json"))
COMMANDS = (("list",), ("run",), ("bench",), ("check", "constants"), ("check", "correctness"),
            ("gate",), ("report",), ("reproduce",))
MARKER = "<!-- cli-help -->"


def on_files(files: Files, config) -> Files:
    """Add every file of :data:`PUBLISHED` to the site's files."""
    for source, target in PUBLISHED:
        paths = [source] if source.is_file() else sorted(p for p in source.rglob("*")
                                                         if p.is_file())
        for path in paths:
            uri = target if source.is_file() else f"{target}/{path.relative_to(source).as_posix()}"
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Replace :data:`MARKER` by the help of each command of :data:`COMMANDS`."""
    if MARKER not in markdown:
        return markdown
    env = dict(os.environ, COLUMNS="100")
    blocks = []
    for command in COMMANDS:
        out = subprocess.run([sys.executable, "-m", "dpaudit", *command, "--help"], env=env,
                             capture_output=True, text=True, check=True).stdout
        blocks.append(f"### dpaudit {' '.join(command)}\n\n```text\n{out.rstrip()}\n```\n")
    return markdown.replace(MARKER, "\n".join(blocks))
