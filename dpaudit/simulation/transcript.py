"""The transcript a bandit run releases, as a public type for the user's own algorithms.

A registered algorithm's kernel writes its actions into a buffer and returns (τ, â, status)
(kernel contract: :mod:`dpaudit.simulation.simulate`); a plain Python callable
(``dpaudit run --algo FILE.py:FUNCTION``) returns a :class:`Transcript` to be audited the same
way: its cells are the same views (action prefixes, windows of actions and of arm counts, τ and
â when the run stopped within a view), hashed by the same function, so the event search and the
reports treat both alike and print action sequences.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpaudit.errors import UserCodeError
from dpaudit.simulation.simulate import STOPPED, TRUNCATED, _hash_views

MAX_ARM = np.iinfo(np.int16).max - 1   # actions are stored as int16, as the kernels' are


@dataclass(frozen=True)
class Transcript:
    """What one run of a bandit algorithm releases: its actions and where it stopped.

    Attributes:
        actions: the arms played, in order, one per sample taken (0-based ints in
            [0, 32766]); the audit reads at most its horizon of them.
        stopping_time: τ, the samples taken when the run stopped and recommended
            (None: it did not stop within its actions, e.g. the horizon ended it).
        recommendation: â, the arm recommended at τ (0-based; None: none, or not stopped).
    """

    actions: Sequence[int]
    stopping_time: int | None = None
    recommendation: int | None = None


def checked(out: object, name: str) -> tuple[np.ndarray, int, int, int]:
    """A callable's :class:`Transcript` as the kernels' outputs.

    Args:
        out: what one run returned.
        name: the callable's name, for the message.

    Returns:
        (actions int16 array, τ, â (−1: none), status): τ is ``stopping_time``, or the number
        of actions with status :data:`~dpaudit.simulation.simulate.TRUNCATED` when it is None.

    Raises:
        UserCodeError: ``out`` is not a Transcript, or its actions are not ints in
            [0, :data:`MAX_ARM`], or τ or â is not a non-negative int.
    """
    if not isinstance(out, Transcript):
        raise UserCodeError(f"{name} returned {out!r:.80} after returning a Transcript: expected "
                         "every run to return a Transcript")
    a = np.asarray(out.actions)
    if a.ndim != 1 or (a.size and (a.dtype.kind not in "iu" or a.min() < 0 or a.max() > MAX_ARM)):
        raise UserCodeError(f"{name} returned Transcript(actions={out.actions!r:.80}): expected a "
                         f"sequence of arms, ints in [0, {MAX_ARM}]")
    for field, v in (("stopping_time", out.stopping_time),
                     ("recommendation", out.recommendation)):
        if v is not None and (not isinstance(v, (int, np.integer)) or isinstance(v, bool)
                              or v < 0):
            raise UserCodeError(f"{name} returned Transcript({field}={v!r:.40}): expected None or "
                             "an int >= 0")
    if out.stopping_time is None:
        return a.astype(np.int16), int(a.size), -1, TRUNCATED
    rec = -1 if out.recommendation is None else int(out.recommendation)
    return a.astype(np.int16), int(out.stopping_time), rec, STOPPED


def cells(run: tuple, views: np.ndarray, buffer: np.ndarray, out: np.ndarray) -> None:
    """Write a transcript's view cells into ``out``, as the kernels' batch loop does.

    Args:
        run: (actions int16, τ, â (−1: none), status), as :func:`checked` gives it.
        views: the views, int64 (V, 3) (:func:`~dpaudit.simulation.simulate.as_views`).
        buffer: int16 scratch of length ≥ the views' largest end.
        out: uint64 (V,), the cells.
    """
    actions, tau, rec, status = run
    m = min(actions.size, buffer.size)
    buffer[:m] = actions[:m]
    buffer[m:] = -1
    _hash_views(buffer, tau, rec, status, views, out)
