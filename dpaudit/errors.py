"""Errors that the command line turns into one line and an exit code.

Errors that the CLI turns into one line (docs/guide/commands.md): :class:`InputError` exit 2,
:class:`UserCodeError` exit 4; :func:`user_frame` finds the user's line in a traceback and
:func:`in_user_code` keeps it when the traceback stays in a worker process.
"""
from __future__ import annotations

import contextlib
import importlib.util
import inspect
import os
import sysconfig
from collections.abc import Iterator
from types import TracebackType


SHIPPED = "<dynamic-code>"    # the file name cloudpickle gives the code it ships by value


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
        (file, line, function), or None when every frame is dpaudit's or a library's. Code
        shipped to a worker process by value (cloudpickle) is the user's: its file is
        :data:`SHIPPED`.
    """
    user = None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename        # "<string>", "<frozen ...>": no file
        if name == SHIPPED or user_file(name):
            user = (name if name == SHIPPED else os.path.abspath(name), tb.tb_lineno,
                    tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return user


def user_file(path: str | None) -> bool:
    """Whether ``path`` is a file of the user's code.

    Args:
        path: a source file (None, ``<string>`` or ``<frozen ...>``: none).

    Returns:
        True unless it is dpaudit's, the standard library's or an installed package's.
    """
    if not path or path.startswith("<"):
        return False
    ours = tuple(os.path.abspath(p) + os.sep for name in ("dpaudit", "dpaudit.algorithms")
                 for p in importlib.util.find_spec(name).submodule_search_locations)
    theirs = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep
                    for k in ("stdlib", "platstdlib", "purelib", "platlib")})
    return not os.path.abspath(path).startswith(ours + theirs)


@contextlib.contextmanager
def in_user_code(origin: str | None = None) -> Iterator[None]:
    """Turn an exception raised in the user's code into a :class:`UserCodeError` naming its line.

    For the user's code run in a worker process: the traceback stays in the worker, so the
    exception comes back as one line with the user's file, line and function
    (:func:`user_frame`). An exception raised outside the user's code, or already a
    :class:`UserCodeError`, is raised as it is.

    Args:
        origin: the file of the user's code when it was shipped by value (its frames then
            name :data:`SHIPPED`); None: unknown.

    Raises:
        UserCodeError: the user's code raised.
    """
    try:
        yield
    except Exception as e:     # noqa: BLE001 (re-raised as it is unless the user's code raised)
        where = user_frame(e.__traceback__)
        if where is None or isinstance(e, UserCodeError):
            raise
        file = origin if where[0] == SHIPPED and origin else where[0]
        raise UserCodeError(f"{type(e).__name__}: {e} (in {where[2]} at {file}:{where[1]})"
                            ) from None


def code_file(obj: object) -> str | None:
    """The file defining ``obj``'s code.

    Args:
        obj: a function, a method or a callable object.

    Returns:
        Its source file, or None (a builtin, an object without source).
    """
    try:
        return inspect.getsourcefile(inspect.unwrap(obj))
    except TypeError:          # a builtin, a callable object without source
        return None
