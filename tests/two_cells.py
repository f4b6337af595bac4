"""A measured event on a two-cell output (cell IN or OUT), for tests of the measurement and
the verdict: :data:`EVENT` is {IN} with d′ on the numerator side; :func:`two_cell_counts`
is the :class:`dpaudit.simulation.simulate.Counts` of n runs, k of them in IN."""
import numpy as np

from dpaudit.core.terms import Side
from dpaudit.simulation.simulate import Counts
from dpaudit.statistics.events import Event

IN, OUT = np.uint64(1), np.uint64(2)
EVENT = Event(view=1, view_index=0, cells=np.array([IN], np.uint64), numerator=Side.D_PRIME,
              predicted_lb=1.0, scoring_hits=(0, 0))


def two_cell_counts(k, n):
    return Counts(n_runs=n, views=np.array([1]), cells=[np.array([IN, OUT])],
                  counts=[np.array([k, n - k])], status=np.array([n, 0, 0]), tau_sum=0,
                  rec=np.zeros(0, np.int64))
