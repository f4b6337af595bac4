"""Errors that the command line turns into one line and an exit code.

Errors that the CLI turns into one line (docs/guide/commands.md): :class:`InputError` exit 2,
:class:`UserCodeError` exit 4.
"""


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
