"""The ``dpaudit`` command and ``python -m dpaudit``.

The ``dpaudit`` command and ``python -m dpaudit``: Ctrl-C and SIGTERM handled first
(:mod:`dpaudit.core.interrupt`), then, for a command that runs audits on a pool of processes
(or a Dask ``LocalCluster``), that pool's workers started
(:func:`dpaudit.core.executor.prestart`: they import while this process does), then the
command line's imports (a second or two) and :func:`dpaudit.commands.cli.main`.
"""
import sys

from dpaudit.core import executor, interrupt
from dpaudit.errors import InputError

AUDITING = ("run", "gate", "reproduce", "check correctness")   # commands mapping on --workers
# the simulation, the screens and the instance screen (with scipy.stats) every audit maps
# first: a worker importing them at its first task delayed the first map by about 0.8 s
PRELOAD = ("dpaudit.auditing.search", "dpaudit.auditing.instances")


def main() -> int:
    """Install the signal handlers, then run the command line; returns its exit code."""
    interrupt.install()
    start_workers(sys.argv[1:])
    from dpaudit.commands.cli import main as command_line   # after the handler: imports take ~1.3 s
    return command_line()


def start_workers(argv: list[str]) -> None:
    """Start the pool (or Dask cluster) an auditing command line will use, before its imports.

    Read from ``argv`` before it is parsed: the command (one of :data:`AUDITING`), its
    ``--workers`` (default: every core) and ``--scheduler``. Another command, ``--help``, or
    a value that is no number of workers or no scheduler starts nothing; the parser has the
    last word (a pool left unused by a command line it refuses is closed at exit).

    Args:
        argv: the arguments after ``dpaudit``.
    """
    words = [x for x in argv if not x.startswith("-")]
    if not {" ".join(words[:1]), " ".join(words[:2])} & set(AUDITING) or "--help" in argv \
            or "-h" in argv:
        return
    flags = {}
    for i, x in enumerate(argv):
        key, eq, value = x.partition("=")
        if key in ("--workers", "--scheduler"):
            flags[key] = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
    try:
        workers = int(flags.get("--workers") or executor.default_workers())
        with executor.use(flags.get("--scheduler")):
            executor.prestart(workers, PRELOAD)
    except (ValueError, InputError):
        return


if __name__ == "__main__":
    sys.exit(main())
