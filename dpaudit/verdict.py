"""The verdict of a privacy audit: ``violation``, ``pass`` or ``inconclusive`` (with a reason).

* ``violation`` (exit 1): the lower confidence bound ε_lb on the measured event's privacy loss
  exceeds the claimed ε; wrong with probability ≤ α.
* ``pass`` (exit 0): no violation, *and* the audit could have failed: an event was measured
  that separated d from d′ on the pilot, the changed entry reached the audited transcript,
  and a true loss of (1 + margin)·ε on the event would have been flagged with probability
  ≥ 1 − β (its detectable loss at power 1 − β is ≤ (1 + margin)·ε; :mod:`dpaudit.stats`).
* ``inconclusive`` (exit 3) otherwise, with the first reason that applies, in this order:

  - ``vacuous``: no white-box run's transcript depended on the changed entry at all;
  - ``not reached``: runs read the entry, but only after the audited horizon;
  - ``no event``: no pilot output was more frequent on one table, so nothing was measured;
  - ``underpowered``: the detectable loss exceeds (1 + margin)·ε; ``runs_needed`` says how
    many measurement runs per side would bring it under;
  - ``no event`` too when the event measured did not separate d from d′ on the pilot (it is
    measured anyway, :func:`dpaudit.events.best_event`'s fallback, and can still show a
    violation, but a loss the pilot did not favour is no evidence the audit could fail).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from dpaudit.stats import PowerCurve

DEFAULT_MARGIN = 0.25
MAX_RUNS = 1 << 40          # runs_needed beyond this is reported as None (out of reach)


@dataclass(frozen=True)
class Verdict:
    verdict: str                  # "violation", "pass" or "inconclusive"
    reason: str | None = None     # inconclusive: "<code>: <one line with the fix>"
    runs_needed: int | None = None


def runs_needed(p_den: float, eps: float, delta: float, beta: float, target: float, design,
                runs: int = 1, loss: float = float("inf")) -> int | None:
    """A measurement budget n (runs per side) whose design detects a loss of ``target`` on an
    event of probability ``p_den`` with probability ≥ 1 − β, within 10 % of the smallest such
    n; None beyond :data:`MAX_RUNS`.

    ``design(n)`` gives the looks' cumulative sizes and their tests' levels for a budget n
    (:func:`dpaudit.measure.design` at the finalist's α). ``runs`` and ``loss``: the budget
    that fell short and its detectable loss. The excess of the detectable loss over ε shrinks
    about as 1/√n, which gives the first guess; the search (doubling, then bisection) checks
    each candidate with :class:`PowerCurve` on a coarse grid (conservative), so the n
    returned suffices."""
    def ok(n: int) -> bool:        # detectable loss ≤ target ⟺ power at target ≥ 1 − β
        sizes, levels = design(n)
        return PowerCurve(p_den, sizes, eps, levels, delta, grid=64).power(target) >= 1 - beta

    if delta >= 1 or target > math.log((1 - delta) / p_den):
        return None                  # no loss of ``target`` fits on an event this likely
    lo = runs
    hi = max(runs + 1, int(4 / p_den))
    if loss < float("inf"):
        hi = max(hi, int(runs * ((loss - eps) / (target - eps)) ** 2))
    while not ok(hi):
        lo, hi = hi, 2 * hi
        if hi > MAX_RUNS:
            return None
    while hi - lo > max(1, hi // 10):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def decide(*, eps_lb: float, eps: float, margin: float, detectable_loss: float,
           measured: bool, separated: bool, coverage: dict, needed=None) -> Verdict:
    """The verdict (module doc) from what the audit observed.

    Args:
        eps_lb: the largest lower confidence bound over the tests performed.
        eps: the claimed ε.
        margin: pass needs detectable_loss ≤ (1 + margin)·ε.
        detectable_loss: of the reported event at power 1 − β (inf if none was measured).
        measured: an event was measured.
        separated: a measured event separated d from d′ on the pilot (predicted ε_lb > 0).
        coverage: the result's ``coverage`` (``measured`` False: nothing is known of it).
        needed: a callable () -> runs needed for an underpowered result (None: not computed).
    """
    if eps_lb > eps:
        return Verdict("violation")
    target = (1 + margin) * eps
    if coverage.get("measured"):
        if coverage.get("runs_read_any_time", coverage["runs_read"]) == 0:
            return Verdict("inconclusive", (
                f"vacuous: in none of {coverage['runs']} white-box runs did the transcript "
                "depend on the changed entry; choose a pair whose entry the algorithm reads "
                "(the default --neighbours search does)"))
        if coverage["runs_read"] == 0:
            return Verdict("inconclusive", (
                f"not reached: the entry is read only after the audited horizon "
                f"({coverage['horizon']} samples); choose an earlier position or a longer "
                "horizon"))
    if not measured:
        return Verdict("inconclusive", (
            "no event: no output of the pilot runs was more frequent on one table than on "
            "the other; more runs (--runs) or another pair"))
    if detectable_loss > target:
        n = needed() if needed is not None else None
        if n is None and not separated:
            return Verdict("inconclusive", (
                "no event: nothing separated d from d' on the pilot sample, and the event "
                "measured anyway cannot carry a loss of (1 + margin)·eps; more runs (--runs) "
                "or another pair"))
        fix = (f"about {n} measurement runs per side would do (--runs {n})" if n else
               "no feasible number of runs would do on this event")
        return Verdict("inconclusive", (
            f"underpowered: the detectable loss {detectable_loss:.4f} exceeds (1 + margin)·eps "
            f"= {target:.4g}; {fix}"), n)
    if not separated:
        return Verdict("inconclusive", (
            "no event: nothing separated d from d' on the pilot sample (the event measured "
            "anyway is the pilot's raw best); more runs (--runs) or another pair"))
    return Verdict("pass")
