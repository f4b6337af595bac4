"""Errors that the CLI turns into a one-line message and exit code 2 (README "Commands")."""


class InputError(ValueError):
    """Bad user input: an unknown name, an out-of-range or malformed value, an unusable path.

    The message is one line naming the bad value and the accepted range. A ``ValueError``, so
    Python callers may catch either.
    """
