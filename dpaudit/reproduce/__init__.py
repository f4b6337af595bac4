"""``dpaudit reproduce``: each paper's experiments, side by side with the paper.

``dpaudit reproduce``: each paper's experiments, run on dpaudit's reference implementations
and shown side by side with the paper.

Every paper has a module named by its key (first author and year) with ``KEY``, ``TITLE``,
``MODES`` ({"quick": settings, "full": settings}) and ``run(settings, context, mode)``,
which returns a :class:`~dpaudit.reproduce.experiment.Reproduction`. :func:`reproduce`
runs one into ``OUT/KEY/`` (page, figures, data) and refreshes ``OUT/index.html``.
"""
from __future__ import annotations

import argparse
import importlib
import os
import time
from collections.abc import Callable
from dataclasses import replace
from types import ModuleType

from dpaudit.errors import InputError
from dpaudit.reproduce.experiment import MODES, Context, Reproduction, write_index, write_page

PAPERS = ("azize2023", "barbara2025", "chen2024", "hu2021", "sarkar2025")
DEFAULT_OUT = os.path.join("reports", "reproduce")


def paper(key: str) -> ModuleType:
    """The module of a paper's reproduction.

    Args:
        key: one of :data:`PAPERS`.

    Returns:
        The module (``run``, ``MODES``, ``TITLE``, ``CITATION``).

    Raises:
        InputError: an unknown key (the message lists the known ones).
    """
    if key not in PAPERS:
        raise InputError(f"paper {key!r}: expected one of {', '.join(PAPERS)} or all")
    return importlib.import_module(f"dpaudit.reproduce.{key}")


def reproduce(key: str, mode: str, ctx: Context) -> Reproduction:
    """Run a paper's experiments and write its page.

    Args:
        key: one of :data:`PAPERS`.
        mode: ``quick`` or ``full``.
        ctx: the seed, workers, progress bars and output folder (:class:`Context`).

    Returns:
        The :class:`Reproduction` written into ``ctx.folder``/``key`` (page, figures and data),
        listed in the index of ``ctx.folder``.

    Raises:
        InputError: an unknown key or mode, or an output folder that cannot be made.
    """
    if mode not in MODES:
        raise InputError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
    module = paper(key)
    folder = os.path.join(ctx.folder, key)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise InputError(f"--out {ctx.folder}: cannot make {folder} ({e.strerror})") from None
    t0 = time.perf_counter()
    rep = module.run(module.MODES[mode], replace(ctx, folder=folder), mode)
    rep.runtime_s = time.perf_counter() - t0
    rep.reduced = module.MODES[mode] != module.MODES["full"]
    write_page(rep, folder)
    write_index([rep], ctx.folder)
    return rep


def main(args: argparse.Namespace, echo: Callable[[str], object] = print) -> int:
    """Run ``dpaudit reproduce PAPER|all [--quick] [--out DIR] [--seed S] [--workers N]``.

    Args:
        args: the parsed arguments.
        echo: receives a line per page written.

    Returns:
        The exit code (0).

    Raises:
        InputError: an unknown paper, an unusable ``--out``.
    """
    keys = PAPERS if args.paper == "all" else (paper(args.paper).KEY,)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise InputError(f"--out {args.out} is a file: expected a folder")
    ctx = Context(args.out, seed=args.seed, workers=args.workers, progress=True)
    mode = "quick" if args.quick else "full"
    for key in keys:
        rep = reproduce(key, mode, ctx)
        echo(f"dpaudit reproduce {key}: {sum(r.reproduced for r in rep.rows)} of "
             f"{len(rep.rows)} rows reproduced, {len(rep.figures)} figures, "
             f"{rep.runtime_s:.0f} s: {os.path.join(args.out, key, 'index.html')}")
    return 0
