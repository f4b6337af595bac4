"""The user's own bandit callables: structured transcripts and the coupled replay.

A callable ``fn(rng, data, eps)`` (:mod:`dpaudit.auditing.plugin`) that returns a
:class:`~dpaudit.simulation.transcript.Transcript` per run is audited as the registered
algorithms are (:class:`TranscriptSource`): its runs become the cells of the same views
(:func:`dpaudit.auditing.audit.source_views`: action prefixes, windows of actions and arm
counts after the changed row, τ and â when the run stopped within a view), the same event
search runs on them, and events and loss-table rows print the action sequences behind their
cells.

Every callable, whatever it returns, gets the coupled replay (:func:`replay`): run i on d and
run i on d′ start from one generator state, so a callable that never reads the changed entry
gives the same output on both in every run, and the audit says so (``vacuous``) instead of
passing on nothing.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
from tqdm import tqdm

from dpaudit.auditing.audit import Source, event_description, transcript_item, transcript_text
from dpaudit.core.terms import Side
from dpaudit.errors import UserCodeError
from dpaudit.simulation.simulate import COUNTS, Counts, child_seed, seed_sequence
from dpaudit.simulation.transcript import Transcript, cells, checked
from dpaudit.statistics.events import Event

CHUNK = 1 << 12          # runs per chunk: chunk i of a draw uses its seed's i-th child
DECODED_CELLS = 1 << 14  # cells per view kept with the transcript behind them (for the text)
REPLAY_RUNS = 2_000      # coupled runs of the replay


class _Exit(BaseException):
    """``os._exit`` called by the user's code while :func:`no_exit` runs."""


def _exit(code: int) -> NoReturn:
    raise _Exit(code)


@contextlib.contextmanager
def no_exit(what: str) -> Iterator[None]:
    """Turn ``sys.exit`` and ``os._exit`` in the user's code into errors.

    The user's code runs in dpaudit's process: ``sys.exit`` and ``os._exit`` in it would end
    dpaudit with no verdict and, for code 0, the exit code of a pass. Both become a
    :class:`~dpaudit.errors.UserCodeError` naming ``what`` (``os._exit`` is replaced while the
    block runs).

    Args:
        what: the code that runs, for the message.

    Yields:
        None.

    Raises:
        UserCodeError: the block called ``sys.exit`` or ``os._exit``.
    """
    real, os._exit = os._exit, _exit
    try:
        yield
    except SystemExit as e:
        raise UserCodeError(f"{what} called sys.exit({e.code!r})") from None
    except _Exit as e:
        raise UserCodeError(f"{what} called os._exit({e.args[0]!r})") from None
    finally:
        os._exit = real


@dataclass(frozen=True)
class Call:
    """The user's callable as an audit calls it: ``fn(rng, data, eps)``, named for messages.

    Attributes:
        fn: the callable.
        eps: the ε it is called with (the claim's).
        name: its name, for messages.
    """

    fn: Callable
    eps: float
    name: str

    def __call__(self, rng: np.random.Generator, data: Any) -> Any:
        """One run on ``data``."""
        return self.fn(rng, data, self.eps)


class TranscriptSource(Source):
    """Runs of a callable returning :class:`Transcript` on one neighbouring pair, as view cells.

    Draws are cut in chunks of :data:`CHUNK` runs, chunk i drawing from the i-th child of the
    draw's seed (as the compiled kernels' chunks do).
    """

    stable_cells = True   # transcript hashes

    def __init__(self, call: Call, data: tuple, views: np.ndarray, neighbours: dict,
                 bar: tqdm | None = None) -> None:
        """Runs of ``call`` on ``data`` = (d, d′), counted in ``views``.

        Args:
            call: the callable.
            data: (d, d′) as it receives them (read-only arrays).
            views: the views, int64 (V, 3).
            neighbours: the pair's JSON.
            bar: a tqdm bar or None.
        """
        self.call, self.data, self.views = call, data, views
        self.nb, self.bar = neighbours, bar
        self.decoded: list[dict] = [{} for _ in range(len(views))]

    def draw(self, side: Side, n: int, seed: np.random.SeedSequence) -> Counts:
        """Counts of ``n`` runs on the input of ``side``.

        Args:
            side: d or d′.
            n: runs.
            seed: their seed.

        Returns:
            The :class:`~dpaudit.simulation.simulate.Counts` of every view.

        Raises:
            UserCodeError: a run returned something other than a valid Transcript, or exited.
        """
        n_views = len(self.views)
        out = np.empty((n, n_views), np.uint64)
        taus, status = np.zeros(n, np.int64), np.zeros(3, np.int64)
        buffer = np.empty(int(self.views[:, 1].max()), np.int16)
        data = self.data[side.index]
        sizes = [CHUNK] * (n // CHUNK) + ([n % CHUNK] if n % CHUNK else [])
        i = 0
        with no_exit(self.call.name):
            for size, child in zip(sizes, seed.spawn(len(sizes))):
                rng = np.random.default_rng(child)
                for _ in range(size):
                    run = checked(self.call(rng, data), self.call.name)
                    cells(run, self.views, buffer, out[i])
                    self._keep(out[i], *run)
                    taus[i], status[run[3]] = run[1], status[run[3]] + 1
                    i += 1
                if self.bar is not None:
                    self.bar.update(size)
        per_view = [np.unique(out[:, v], return_counts=True) for v in range(n_views)]
        return Counts(n_runs=n, views=self.views, cells=[u for u, _ in per_view],
                      counts=[c.astype(np.int64) for _, c in per_view], status=status,
                      tau_sum=int(taus.sum()), rec=np.zeros(0, np.int64))

    def _keep(self, row: np.ndarray, actions: np.ndarray, tau: int, rec: int,
              status: int) -> None:
        """Remember the transcript behind each view's cell, the first time it is met."""
        for v, decoded in enumerate(self.decoded):
            key = int(row[v])
            if key not in decoded and len(decoded) < DECODED_CELLS:
                start, end = (int(x) for x in self.views[v, :2])
                decoded[key] = transcript_item(actions, start, end, tau, rec, status)

    def neighbours(self) -> dict:
        """The pair's JSON."""
        return self.nb

    def describe(self, ev: Event) -> dict:
        """The event as the transcripts behind a few of its cells.

        Args:
            ev: the event.

        Returns:
            {"text": ..., "view": ..., "examples": ...}.
        """
        return event_description(ev, self.decoded[ev.view_index])

    def cell_text(self, v: int, key: int) -> str:
        """The transcript behind a cell of a view (its hash if no run kept met it).

        Args:
            v: the view's index.
            key: the cell.

        Returns:
            The transcript in one line.
        """
        item = self.decoded[v].get(int(key))
        if item is None:
            return super().cell_text(v, key)
        return transcript_text(item, counts=int(self.views[v, 2]) == COUNTS)


def _keys(out: Any, horizon: int) -> tuple:
    """(the whole output, what of it falls within ``horizon`` samples), comparable with ==."""
    if isinstance(out, Transcript):
        actions = tuple(int(a) for a in out.actions)
        end = (out.stopping_time, out.recommendation)
        stopped = out.stopping_time is not None and out.stopping_time <= horizon
        return (actions, end), (actions[:horizon], end if stopped else None)
    try:
        a = np.asarray(out)
        key = (a.dtype.str, a.shape, a.tobytes()) if a.dtype.kind in "iufb" else repr(out)
    except (TypeError, ValueError):            # e.g. ragged sequences
        key = repr(out)
    return key, key


def replay(call: Call, data: tuple, horizon: int, runs: int,
           seed: int | np.random.SeedSequence) -> dict:
    """The coupled replay of a callable on a pair: its ``coverage`` JSON.

    Run i on d and run i on d′ draw from generators with one seed (``child_seed(seed, i)``): a
    run whose output differs read the changed entry, and a callable whose outputs never differ
    did not read it at all (or read it without effect) in these runs. Within the horizon: the
    first ``horizon`` actions, and τ and â when the run stopped by then (a Transcript); the
    whole output otherwise.

    Args:
        call: the callable.
        data: (d, d′) as it receives them.
        horizon: the audited samples.
        runs: coupled runs.
        seed: the replay's seed.

    Returns:
        ``measured``, ``kind``, ``horizon``, ``runs``, ``runs_read`` (outputs that differ
        within the horizon), ``fraction_read``, ``runs_read_any_time`` (outputs that differ at
        all) and a ``note``.

    Raises:
        UserCodeError: the callable exited.
    """
    root = seed_sequence(seed)
    within = anywhere = 0
    with no_exit(call.name):
        for i in range(runs):
            child = child_seed(root, i)
            a, b = (_keys(call(np.random.default_rng(child), x), horizon) for x in data)
            anywhere += a[0] != b[0]
            within += a[1] != b[1]
    return {"measured": True, "kind": "replay (run i on d and on d' from one generator state)",
            "horizon": int(horizon), "runs": int(runs), "runs_read": int(within),
            "fraction_read": within / runs, "runs_read_any_time": int(anywhere),
            "note": (f"{runs} coupled runs: run i on d and run i on d' draw from generators "
                     "with one seed, so an output that differs read the changed entry; "
                     "runs_read counts outputs that differ within the audited horizon "
                     "(actions, and tau and the recommendation when the run stopped by then), "
                     "runs_read_any_time those that differ at all")}
