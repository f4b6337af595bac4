"""Ctrl-C and SIGTERM on the command line (docs/reference/cli.md): stop at once, whatever runs.

:func:`install` (the CLI calls it before its heavy imports) makes SIGINT and SIGTERM, sent to
dpaudit or to its process group, end the process within a moment: one line on stderr, worker
processes killed and reaped, no partial output file (writes hold the signals: :func:`held`),
exit code 130 (SIGINT) or 143 (SIGTERM). The handler does not raise: a ``KeyboardInterrupt`` raised between
two bytecodes can land in an import, in numba's dispatcher (which turns it into a
``SystemError``) or in ``concurrent.futures``' generator clean-up (whose manager thread then
fails on cancelled futures), and the interpreter's exit would then wait for workers. Instead the
handler finishes the process itself.

Python runs signal handlers in the main thread only, between two bytecodes, so a compiled call
that held the main thread would hold every signal until it returned (a run that never stops:
forever). Compiled batch loops are therefore called through :func:`call`: they run without the
GIL (``nogil=True``) in a helper thread while the main thread waits, where a handler runs at
once; the handler ends the process, helper thread included.

Worker processes (:mod:`dpaudit.core.executor`) are launched with both signals blocked and
ignore SIGINT; a hook (:func:`on_stop`) kills and reaps them: a Ctrl-C at the terminal reaches the whole group, and the parent alone
decides. Python callers of the library keep Python's usual ``KeyboardInterrupt``.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
_MESSAGES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
_exit = os._exit             # the process's own (bring-your-own code runs with a stand-in)
_held = 0                    # held() blocks running
_pending: list[int] = []     # signals received meanwhile
_HELPER_BLOCKS = {signal.SIGINT, signal.SIGTERM, signal.SIGALRM}   # see call()
_ON_STOP: list[Callable[[], None]] = []   # on_stop()'s hooks


def install() -> None:
    """Handle SIGINT and SIGTERM in this process as the module doc says (main thread only)."""
    for s in EXIT_CODES:
        signal.signal(s, _stop)


def installed() -> bool:
    """Whether :func:`install` handles SIGINT in this process."""
    return signal.getsignal(signal.SIGINT) is _stop


def on_stop(hook: Callable[[], None]) -> None:
    """Run ``hook()`` when a signal ends the process, before the message (its errors ignored).

    Args:
        hook: e.g. :mod:`dpaudit.core.executor`'s, which kills and reaps the worker processes.
    """
    _ON_STOP.append(hook)


def _stop(signum: int, frame: FrameType | None) -> None:
    if _held:
        _pending.append(signum)
    else:
        _finish(signum)


def _finish(signum: int) -> None:
    """Run the stop hooks (workers killed), say why on stderr, end the process (never returns)."""
    for s in EXIT_CODES:                     # a second signal does not interrupt the clean-up
        signal.signal(s, signal.SIG_IGN)
    threading.excepthook = _quiet            # the pools' threads fail as their workers die
    for hook in _ON_STOP:                    # the executor kills and reaps its workers
        with contextlib.suppress(Exception):
            hook()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.write(("\n" if sys.stderr.isatty() else "")
                         + f"dpaudit: {_MESSAGES[signum]} ({signal.Signals(signum).name})\n")
        sys.stderr.flush()
    _exit(EXIT_CODES[signum])


def _quiet(args: threading.ExceptHookArgs) -> None:
    """Thread exceptions while the process ends: not reported (they are its consequence)."""


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while the block runs.

    SIGINT and SIGTERM held back while the block runs and acted on when it ends: around an
    output file's write (the whole file or none of it) and, through
    :func:`dpaudit.core.executor.launching`, the start of worker processes. The signals are blocked in this thread, whose mask new
    processes inherit; the mask alone does not hold the process's signals (the kernel hands a
    signal to any thread that does not block it, and Python runs the handler in the main
    thread), so the handler itself defers while a block runs.
    """
    global _held
    old = signal.pthread_sigmask(signal.SIG_BLOCK, EXIT_CODES)
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
        if not _held and _pending:
            if threading.current_thread() is threading.main_thread():
                _finish(_pending[0])
            else:       # a helper thread's block (a Dask cluster started beside the imports):
                os.kill(os.getpid(), _pending.pop(0))    # the main thread's handler ends it


def call(fn: Callable, *args: object) -> object:
    """Call ``fn(*args)`` in a helper thread, so that signal handlers run meanwhile.

    This thread waits while the helper runs the call, so signal handlers (this module's,
    Python's ``KeyboardInterrupt``, pytest-timeout's alarm) run during it: for long compiled
    calls that release the GIL (numba ``nogil=True``). Off the main thread it is a plain call
    (handlers never run there). If a handler raises while the call runs (a library caller's
    Ctrl-C), the exception propagates at once and the helper thread (a daemon) runs on until
    ``fn`` returns; its result is dropped. The command line's handler ends the process instead
    (helper thread included).

    Args:
        fn: the function.
        *args: its arguments.

    Returns:
        What ``fn`` returns; its exception is raised here.
    """
    if threading.current_thread() is not threading.main_thread():
        return fn(*args)
    out: list = []
    done = threading.Event()

    def target():
        signal.pthread_sigmask(signal.SIG_BLOCK, _HELPER_BLOCKS)   # delivered to the main thread
        try:
            out.append((True, fn(*args)))
        except BaseException as e:        # noqa: BLE001 - handed to the caller below
            out.append((False, e))
        finally:
            done.set()

    threading.Thread(target=target, name="dpaudit-kernel", daemon=True).start()
    while not done.wait(0.05):             # handlers run between two waits (at once, if the
        pass                               # signal interrupts the wait itself)
    ok, value = out[0]
    if ok:
        return value
    raise value
