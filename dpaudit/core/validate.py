"""The one validation layer for every value a user gives.

The one validation layer: every value a user gives (command line, suite file, Python API)
is checked here, before any computation, against the range the code can compute.

A bad value raises :class:`~dpaudit.errors.InputError` (a ``ValueError``) whose message is one
line naming the value and the accepted range; the command line turns it into exit code 2 with
nothing written (docs/guide/commands.md). Each check takes the ``name`` to print: a command-line
flag (``--eps``) is printed as ``--eps 0``, any other name (a Python argument, a suite entry's
key, possibly prefixed with where it was found) as ``eps=0``.
"""
from __future__ import annotations

import math
import numbers
import os
import tempfile

from collections.abc import Callable

from dpaudit.errors import InputError

SEED_END = 2 ** 63          # seeds are integers in [0, 2^63)
# The claims dpaudit audits: below EPS_MIN the registered bandit algorithms' stopping times
# (which grow as ε shrinks) make one run take minutes to hours; above EPS_MAX no feasible
# sample can refute the claim (n runs per side bound ε_lb by about ln n < 30), while e^ε and
# the kernels' noise scales 1/ε would still overflow or vanish in float64 (ε = 1e308, 1e-300).
EPS_MIN, EPS_MAX = 1e-3, 100.0


def _label(name: str, value: object) -> str:
    return f"{name} {value}" if name.startswith("--") else f"{name}={value!r}"


def fail(name: str, value: object, expected: str, how: str = "is out of range") -> InputError:
    """The InputError for a bad value.

    Args:
        name: the option or parameter (``--eps`` or ``eps``).
        value: the bad value.
        expected: the accepted range, in words.
        how: what is wrong with it.

    Returns:
        InputError("<name> <value> <how>: expected <expected>").
    """
    return InputError(f"{_label(name, value)} {how}: expected {expected}")


def parsed(text: str, name: str, convert: Callable[[str], object],
           check: Callable) -> object:
    """A command-line value, converted and checked.

    Args:
        text: the text given.
        name: the option, for the message.
        convert: text to value (ValueError when it cannot).
        check: ``check(value, name)``, a checker of this module.

    Returns:
        What the check returns.

    Raises:
        InputError: the text is not valid, or the value is out of range.
    """
    try:
        value = convert(text)
    except ValueError:
        raise InputError(f"{name} {text!r} is not valid: expected "
                         f"{check.expected}") from None
    try:
        return check(value, name)
    except InputError:
        raise fail(name, text, check.expected) from None


def _real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _checker(expected: str, ok: Callable[[float], bool],
             convert: Callable = float) -> Callable:
    def check(value: object, name: str) -> object:
        if not (_real(value) and ok(value)):
            raise fail(name, value, expected)
        return convert(value)
    check.expected = expected
    return check


eps = _checker(f"a number in [{EPS_MIN:g}, {EPS_MAX:g}]", lambda v: EPS_MIN <= v <= EPS_MAX)
delta = _checker("a number in [0, 1)", lambda v: 0 <= v < 1)
probability = _checker("a number in (0, 1)", lambda v: 0 < v < 1)       # alpha, beta, risk
correctness_alpha = _checker("a number in (0, 0.5)", lambda v: 0 < v < 0.5)  # two-sided 1 − 2α
margin = _checker("a finite number > 0", lambda v: math.isfinite(v) and v > 0)
seed = _checker("an integer in [0, 2^63)", lambda v: int(v) == v and 0 <= v < SEED_END, int)


def integer(low: int) -> Callable:
    """A check for an integer ≥ ``low`` (runs, workers, white-box runs).

    Args:
        low: the smallest accepted value.

    Returns:
        A checker ``check(value, name) -> int`` (InputError otherwise).
    """
    return _checker(f"an integer >= {low}",
                    lambda v: math.isfinite(v) and int(v) == v and v >= low, int)


positive = integer(1)
RUNS_MAX = 1 << 40          # runs per side beyond this would not finish (and overflow buffers)
runs = _checker("an integer in [1, 2^40]",
                lambda v: math.isfinite(v) and int(v) == v and 1 <= v <= RUNS_MAX, int)
SECONDS_MAX = 3600.0
seconds = _checker(f"a number in (0, {SECONDS_MAX:g}]", lambda v: 0 < v <= SECONDS_MAX)


def positive_real(value: object, name: str, upper: float = math.inf,
                  closed_upper: bool = False) -> float:
    """A value as a float in (0, ``upper``).

    Used for the constants of the papers' theory (ε, σ², β, the risk) and an algorithm's ε.

    Args:
        value: the value.
        name: its name, for the message.
        upper: the upper end.
        closed_upper: accept ``upper`` itself.

    Returns:
        ``value`` as a float.

    Raises:
        InputError: ``value`` is not a number or out of that range (the message names both).
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}={value!r} is not valid: expected a number") from None
    ok = math.isfinite(v) and v > 0 and (v <= upper if closed_upper else v < upper)
    if not ok:
        rng = (f"(0, {upper:g}{']' if closed_upper else ')'}" if math.isfinite(upper)
               else "(0, inf)")
        raise InputError(f"{name}={value!r} is out of range: expected a number in {rng}")
    return v


def memory(what: str, nbytes: float, fix: str) -> None:
    """Refuse what would need more than half of this machine's memory.

    Args:
        what: what would need it, for the message.
        nbytes: the bytes it would need.
        fix: what to do instead, for the message.

    Raises:
        InputError: more than half of the physical memory (where the operating system tells
            it), with both figures and the ``fix``.
    """
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return
    if nbytes > total / 2:
        raise InputError(f"{what} would need about {nbytes / 1e9:.3g} GB of memory, more than "
                         f"half of this machine's {total / 1e9:.3g} GB; {fix}")


def unit_list(value: object, name: str, min_len: int = 2) -> list[float]:
    """A list of at least ``min_len`` numbers in [0, 1] (e.g. the arms' means).

    Args:
        value: the list.
        name: its name, for the message.
        min_len: the shortest accepted length.

    Returns:
        The numbers as floats.

    Raises:
        InputError: not such a list.
    """
    ok = (not isinstance(value, (str, bytes)) and hasattr(value, "__len__")
          and len(value) >= min_len and all(_real(v) and 0 <= v <= 1 for v in value))
    if not ok:
        raise fail(name, value, f"a list of at least {min_len} numbers, each in [0, 1]")
    return [float(v) for v in value]


def shown(text: object) -> str:
    r"""``text`` with its control characters escaped.

    A newline becomes ``\\n``, so that an echoed value cannot break a one-line message or forge
    another line.

    Args:
        text: any value; its ``str`` is escaped.

    Returns:
        The escaped text.
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def output_path(flag: str, path: str | None, inputs: dict | None = None) -> str | None:
    """Check an output file before any computation.

    Check an output file before any computation, so that a result is never lost at the end
    of a run and never overwrites an input.

    Args:
        flag: the option that named it (``--json``), for the message.
        path: the file to write, or None (no output).
        inputs: what the command reads, {description: path or None}, e.g.
            ``{"the --pair file": "pair.json"}``.

    Returns:
        ``path``.

    Raises:
        InputError: ``path`` is empty, a folder, in a missing or unwritable folder, not
            writable, or the same file as one of ``inputs``.
    """
    if path is None:
        return None
    if path == "":
        raise InputError(f"{flag} '': expected a file path")
    if os.path.isdir(path):
        raise InputError(f"{flag} {path} is a folder: expected a file path")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{flag} {path}: folder {folder} does not exist")
    for what, other in (inputs or {}).items():
        if other and (os.path.abspath(other) == os.path.abspath(path) or (
                os.path.exists(other) and os.path.exists(path)
                and os.path.samefile(path, other))):
            raise InputError(f"{flag} {path} is {what}: expected another file (an output "
                             "never overwrites an input)")
    try:                 # the atomic writer creates its temporary file in that folder
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".dpaudit-", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise InputError(f"{flag} {path}: cannot write in folder {folder} "
                         f"({e.strerror})") from None
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise InputError(f"{flag} {path}: the file is not writable")
    return path
