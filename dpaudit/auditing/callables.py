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
import importlib
import importlib.util
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import cloudpickle
import numpy as np

from dpaudit.algorithms.space import Dimension, Scale
from dpaudit.auditing.audit import ActionSource, transcript_item
from dpaudit.auditing.mechanism import check_signature, read_only
from dpaudit.core import executor
from dpaudit.core.terms import PrivacyModel, Side
from dpaudit.data.neighbours import select_positions
from dpaudit.data.tables import MODELS, base_tables
from dpaudit.errors import InputError, UserCodeError, code_file, in_user_code
from dpaudit.simulation.simulate import Counts, child_seed, seed_sequence
from dpaudit.simulation.transcript import Transcript, cells, checked

CHUNK = 1 << 9           # runs per chunk: chunk i of a draw uses its seed's i-th child
DECODED_CELLS = 1 << 14  # cells per view kept with the transcript behind them (for the text)
REPLAY_RUNS = 2_000      # coupled runs of the replay
HORIZON_POINTS = 4       # horizons searched over a declared window: its ends and points between
POSITIONS = 64           # positions a callable's search changes per horizon at most
MARK_RUNS = 4            # runs per base table whose last samples before stopping are marked


def load(ref: str) -> Callable:
    """The callable named by ``path/to/file.py:function`` or ``package.module:function``.

    Args:
        ref: the name.

    Returns:
        The callable.

    Raises:
        InputError: a malformed name, a missing file or attribute.
        UserCodeError: the module fails at import (an exception or an exit).
    """
    target, sep, attr = ref.rpartition(":")
    if not sep or not target or not attr:
        raise InputError(f"--algo {ref!r}: expected a registry name, FILE.py:FUNCTION or "
                         "MODULE:FUNCTION")
    try:
        with no_exit(f"importing {target} (--algo {ref})"):
            if target.endswith(".py"):
                if not os.path.isfile(target):
                    raise InputError(f"--algo {ref}: file {target} does not exist")
                spec = importlib.util.spec_from_file_location(
                    "dpaudit_plugin_" + os.path.splitext(os.path.basename(target))[0], target)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            else:
                module = importlib.import_module(target)
    except (InputError, UserCodeError):
        raise
    except Exception as e:   # the user's module failed to import: one line, their message
        raise InputError(f"--algo {ref}: importing {target} failed: {type(e).__name__}: {e}")
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise InputError(f"--algo {ref}: {target} has no callable named {attr!r}")
    check_signature(fn, f"--algo {ref}")
    return fn


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
    ref: str | None = None    # FILE.py:FUNCTION or MODULE:FUNCTION it was loaded from

    def __call__(self, rng: np.random.Generator, data: Any) -> Any:
        """One run on ``data``."""
        return self.fn(rng, data, self.eps)

    def payload(self) -> tuple:
        """What a worker process loads it from.

        Its name when it was loaded by one, else the function pickled
        (:func:`dpaudit.core.executor.by_value`: closures, lambdas and the user's modules by
        value).
        """
        return ("ref", self.ref) if self.ref else ("pickle", executor.by_value(self.fn))


_LOADED: dict = {}     # payload -> callable, in each worker process


def from_payload(payload: tuple) -> Callable:
    """The callable of a :meth:`Call.payload`, loaded once per process.

    Args:
        payload: ("ref", its name) or ("pickle", cloudpickle's bytes).

    Returns:
        The callable.

    Raises:
        InputError, UserCodeError: as :func:`load`.
    """
    if payload not in _LOADED:
        kind, what = payload
        _LOADED[payload] = load(what) if kind == "ref" else cloudpickle.loads(what)
    return _LOADED[payload]


@dataclass(frozen=True)
class _Chunk:
    """A chunk of runs for a worker process: the callable's payload and what it runs on."""

    payload: tuple
    eps: float
    name: str
    data: Any
    views: np.ndarray
    n: int
    seed: np.random.SeedSequence
    origin: str | None = None     # the callable's file (named by an error in code shipped by value)


def _chunk_job(job: _Chunk) -> tuple:
    """:func:`_run_chunk` in a worker process.

    An exception in the user's code becomes one line naming its file and line (the traceback
    stays in the worker).
    """
    with in_user_code(job.origin):
        return _run_chunk(Call(from_payload(job.payload), job.eps, job.name), job.data, job.views,
                          job.n, job.seed)


def _run_chunk(call: Call, data: Any, views: np.ndarray, n: int,
               seed: np.random.SeedSequence) -> tuple:
    """``n`` runs from one generator: (cells (n, V), τ (n,), status (n,), decoded per view)."""
    out = np.empty((n, len(views)), np.uint64)
    taus, status = np.empty(n, np.int64), np.empty(n, np.int8)
    buffer = np.empty(int(views[:, 1].max()), np.int16)
    decoded: list[dict] = [{} for _ in range(len(views))]
    rng = np.random.default_rng(seed)
    with no_exit(call.name):
        for i in range(n):
            run = checked(call(rng, data), call.name)
            cells(run, views, buffer, out[i])
            taus[i], status[i] = run[1], run[3]
            for v, known in enumerate(decoded):      # the transcript behind each new cell
                key = int(out[i, v])
                if key not in known and len(known) < DECODED_CELLS:
                    known[key] = transcript_item(run[0], int(views[v, 0]), int(views[v, 1]),
                                                 run[1], run[2], run[3])
    return out, taus, status, decoded


def _counts(views: np.ndarray, n: int, parts: list) -> Counts:
    """The counts of a draw's chunks (:func:`_run_chunk` results, in chunk order)."""
    cells_ = (np.concatenate([p[0] for p in parts]) if parts
              else np.empty((0, len(views)), np.uint64))
    status = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.int8)
    per_view = [np.unique(cells_[:, v], return_counts=True) for v in range(len(views))]
    return Counts(n_runs=n, views=views, cells=[u for u, _ in per_view],
                  counts=[c.astype(np.int64) for _, c in per_view],
                  status=np.bincount(status, minlength=3).astype(np.int64),
                  tau_sum=int(sum(p[1].sum() for p in parts)), rec=np.zeros(0, np.int64))


@dataclass(eq=False)
class TranscriptSource(ActionSource):
    """Runs of a callable returning :class:`Transcript` on one neighbouring pair, as view cells.

    Runs of ``call`` on ``data`` = (d, d′) as it receives them (read-only arrays) of the
    :class:`~dpaudit.data.tables.NeighbourPair` ``pair``, counted in ``views`` (int64 (V, 3))
    over the audit's ``limit`` samples. Draws are cut in chunks of
    :data:`CHUNK` runs, chunk i drawing from the i-th child of the draw's seed (as the compiled
    kernels' chunks do), run by ``workers`` processes: the counts do not depend on ``workers``.
    """

    stable_cells = True   # transcript hashes

    call: Call
    data: tuple
    views: np.ndarray
    pair: object
    limit: int
    workers: int = 1
    bar: object = None
    decoded: list = field(default_factory=list, repr=False)   # view -> cell -> transcript

    def draw(self, side: Side, n: int, seed: np.random.SeedSequence) -> Counts:
        """Counts of ``n`` runs on the input of ``side``.

        Args:
            side: d or d′.
            n: runs.
            seed: their seed.

        Returns:
            The :class:`~dpaudit.simulation.simulate.Counts` of every view.

        Raises:
            UserCodeError: a run raised, returned something other than a valid Transcript, or
                exited.
        """
        return self.draw_many([(self, side, n, seed)])[0]

    @staticmethod
    def draw_many(plans: list) -> list:
        """The plans' runs, cut in chunks pooled over the worker processes.

        Args:
            plans: (source, side, runs, seed) tuples, sources of one audit.

        Returns:
            The :class:`~dpaudit.simulation.simulate.Counts` of each plan, in order.

        Raises:
            UserCodeError: as :meth:`draw`.
        """
        first = plans[0][0]
        jobs, owner = [], []
        payload = first.call.payload() if first.workers > 1 else None
        origin = code_file(first.call.fn)
        for j, (src, side, n, seed) in enumerate(plans):
            sizes = [CHUNK] * (n // CHUNK) + ([n % CHUNK] if n % CHUNK else [])
            data = src.data[side.index]
            jobs += [_Chunk(payload, src.call.eps, src.call.name, data, src.views, m, sd, origin)
                     for m, sd in zip(sizes, seed.spawn(len(sizes)))]
            owner += [j] * len(sizes)
        if payload is not None and len(jobs) > 1:
            parts = executor.map_tasks(_chunk_job, jobs, first.workers)
        else:
            parts = (_run_chunk(first.call, job.data, job.views, job.n, job.seed) for job in jobs)
        got: list[list] = [[] for _ in plans]
        for j, job, part in zip(owner, jobs, parts):
            got[j].append(part)
            plans[j][0]._remember(part[3])
            if first.bar is not None:
                first.bar.update(job.n)
        return [_counts(src.views, n, parts) for (src, _, n, _), parts in zip(plans, got)]

    def _remember(self, decoded: list) -> None:
        """Keep the transcripts behind a chunk's cells (the first met, up to a cap per view)."""
        if not self.decoded:
            self.decoded.extend({} for _ in range(len(self.views)))
        for known, new in zip(self.decoded, decoded):
            for key, item in new.items():
                if len(known) >= DECODED_CELLS:
                    break
                known.setdefault(key, item)

    def items(self, v: int, side: Side | None = None) -> dict:
        """The transcripts behind view ``v``'s cells, kept from the runs drawn (either side).

        Args:
            v: the view's index.
            side: ignored: the cells met on d and on d′ are kept together.

        Returns:
            Cell → transcript, the first met of each (up to :data:`DECODED_CELLS`).
        """
        return self.decoded[v] if self.decoded else {}


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


def inputs(pair: object) -> tuple:
    """(d, d′) of a neighbouring pair as a callable receives them.

    Args:
        pair: a :class:`~dpaudit.data.tables.NeighbourPair`.

    Returns:
        Read-only copies of its tables, or its two rewards as floats (``local``).
    """
    if pair.model == PrivacyModel.LOCAL:
        return float(pair.d), float(pair.d_prime)
    return read_only(pair.d), read_only(pair.d_prime)


def declared_horizons(fn: Callable, given: int) -> list[int] | None:
    """The horizons an audit searches for a callable that declares its claim's space.

    A callable declares the horizons its privacy claim covers next to its definition, with the
    catalogue's dimensions (:mod:`dpaudit.algorithms.space`)::

        run.claim_space = {"horizon": theorem("Thm 1: every horizon", Scale.INT_LOG, (4, 64))}

    Args:
        fn: the callable.
        given: the horizon of the request (searched first).

    Returns:
        The given horizon, then :data:`HORIZON_POINTS` horizons spread over the window
        (geometric for ``INT_LOG``, arithmetic for ``LINEAR``), each once; None when ``fn``
        declares no claim space.

    Raises:
        InputError: a declaration other than {"horizon": a Dimension with an integer window
            2 ≤ low < high}.
    """
    space = getattr(fn, "claim_space", None)
    if space is None:
        return None
    dim = space.get("horizon") if isinstance(space, dict) else None
    window = getattr(dim, "window", None)
    if (not isinstance(dim, Dimension) or set(space) != {"horizon"}
            or dim.scale not in (Scale.INT_LOG, Scale.LINEAR) or window is None
            or not all(isinstance(v, int) for v in window) or not 2 <= window[0] < window[1]):
        raise InputError(f"claim_space = {space!r:.120} is not valid: expected {{'horizon': "
                         "theorem(source, Scale.INT_LOG or Scale.LINEAR, (low, high))}} with "
                         "integers 2 <= low < high (dpaudit.algorithms.space)")
    spread = np.geomspace if dim.scale == Scale.INT_LOG else np.linspace
    points = [int(round(h)) for h in spread(window[0], window[1], HORIZON_POINTS)]
    return list(dict.fromkeys([int(given), *points]))


def positions(call: Call, model: str, means: Sequence[float], horizon: int, table_seed: int,
              seed: np.random.SeedSequence) -> list[tuple] | None:
    """The positions a callable's search changes at one horizon.

    Every position of a table that has at most :data:`POSITIONS`; else :data:`POSITIONS` of
    them by the priority of :func:`~dpaudit.data.neighbours.select_positions`: the first 2K
    rows, the rows the callable's own runs mark, a geometric grid. A run that returns a
    :class:`~dpaudit.simulation.transcript.Transcript` with a stopping time τ marks its last K
    samples (rows τ − K to τ − 1, where the data that decided to stop was read, as τ − 1 is in
    the catalogue's release log), :data:`MARK_RUNS` runs on each base table of
    :func:`~dpaudit.data.tables.base_tables` (``user`` and ``full`` tables; ``stream``: the
    first pulls and the grid). The search's cost then grows with the horizon only through the
    samples per run.

    Args:
        call: the callable.
        model: its privacy model.
        means: the arms' means.
        horizon: rows T.
        table_seed: the seed of the ``instance`` base table.
        seed: the marking runs' seed (a stream no other stage draws).

    Returns:
        The positions, or None for every one.
    """
    m = MODELS[model]
    shape = m.shape(len(means), horizon)
    if len(m.positions(shape)) <= POSITIONS:
        return None
    marks = set()
    if model in (PrivacyModel.USER, PrivacyModel.FULL):
        for j, (table, _) in enumerate(base_tables(model, means, horizon, table_seed)):
            data = read_only(table)
            for i in range(MARK_RUNS):
                with no_exit(call.name):
                    out = call(np.random.default_rng(child_seed(seed, j, i)), data)
                if isinstance(out, Transcript) and out.stopping_time:
                    tau = min(int(out.stopping_time), horizon)
                    marks |= {(t,) for t in range(max(tau - len(means), 0), tau)}
    return select_positions(model, shape, sorted(marks), limit=POSITIONS)
