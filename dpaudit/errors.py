"""Errors that the command line turns into one line and an exit code.

Errors that the CLI turns into one line (docs/guide/commands.md): :class:`InputError` exit 2,
:class:`UserCodeError` exit 4; :func:`user_frame` finds the user's line in a traceback.
"""
from __future__ import annotations

import importlib.util
import os
import sysconfig
from types import TracebackType


class InputError(ValueError):
    """Bad user input: an unknown name, an out-of-range or malformed value, an unusable path.

    The message is one line naming the bad value and the accepted range. A ``ValueError``, so
    Python callers may catch either.
    """


class UserCodeError(Exception):
    """The user's callable did something an audit cannot use.

    The user's callable did something an audit cannot use (e.g. returned None, a complex
    number, a string or NaN): one line naming the callable and what it returned.
    """


def user_frame(tb: TracebackType | None) -> tuple[str, int, str] | None:
    """The user's frame in a traceback.

    The last frame outside dpaudit, the standard library and installed packages.

    Args:
        tb: a traceback (``exception.__traceback__``).

    Returns:
        (file, line, function), or None when every frame is dpaudit's or a library's.
    """
    ours = tuple(os.path.abspath(p) + os.sep for name in ("dpaudit", "dpaudit.algorithms")
                 for p in importlib.util.find_spec(name).submodule_search_locations)
    theirs = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep
                    for k in ("stdlib", "platstdlib", "purelib", "platlib")})
    user = None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename        # "<string>", "<frozen ...>": no file
        f = os.path.abspath(name)
        if not (f.startswith(ours) or f.startswith(theirs) or name.startswith("<")):
            user = (f, tb.tb_lineno, tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return user
