"""The ``dpaudit`` command and ``python -m dpaudit``.

The ``dpaudit`` command and ``python -m dpaudit``: Ctrl-C and SIGTERM handled first
(:mod:`dpaudit.core.interrupt`), then the command line's imports (a second or two) and
:func:`dpaudit.commands.cli.main`.
"""
import sys

from dpaudit.core import interrupt


def main() -> int:
    """Install the signal handlers, then run the command line; returns its exit code."""
    interrupt.install()
    from dpaudit.commands.cli import main as command_line   # after the handler: imports take ~1.3 s
    return command_line()


if __name__ == "__main__":
    sys.exit(main())
