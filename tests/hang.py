"""A compiled call that does not return for hours, for the tests of signals and timeouts.

Run 0 of seed 7 of AdaP-TT on its default instance (ε = 0.5) never stops: its best arm's
phase-1 release is about −8 and the arm is never pulled again (docs/papers/azize2023.md, "runs that
never stop"); with ``max_steps`` = 2⁶² the batch loop goes on for years. ``python tests/hang.py``
installs the command line's signal handling first (:func:`dpaudit.core.interrupt.install`), as the
``dpaudit`` command does, then makes the call.
"""
import numpy as np

from dpaudit.algorithms import registry
from dpaudit.simulation.simulate import run_batch


def hang():
    """Call AdaP-TT's batch loop on a run that never stops (does not return)."""
    spec = registry.get("adap-tt")
    p, _ = spec.resolve_claim({"max_steps": 1 << 62}, None)
    prep = spec.prepare(0.5, p)
    return run_batch(spec.request(prep, np.zeros((0, len(prep.means))), 1, 7, limit=1 << 62))


if __name__ == "__main__":
    from dpaudit.core import interrupt
    interrupt.install()
    hang()
