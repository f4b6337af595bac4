"""The verdict of a privacy audit: ``violation``, ``pass`` or ``inconclusive`` (with a reason).

* ``violation`` (exit 1): the lower confidence bound ε_lb on the measured event's privacy loss
  exceeds the claimed ε; wrong with probability ≤ α. Or (``evidence`` "white-box proof") an
  ε-local-DP claim's report lost more than ε on its logged law in a white-box run
  (:func:`dpaudit.auditing.whitebox.reports_proof`): exact, no confidence level.
* ``pass`` (exit 0): no violation, *and* the audit could have failed: an event was measured
  that separated d from d′ on the pilot, the changed entry reached the audited transcript, and
  **every** measured finalist's upper confidence bound on its event's loss (``eps_ub``, level
  1 − β with β split over the looks: :func:`dpaudit.statistics.measure.measure`) is ≤ (1 +
  margin)·ε.
  Hence P(pass and a measured event's true loss ≥ (1 + margin)·ε) ≤ β, for any event the
  pilot chose: the promise is "the measured event's loss is below eps_ub with confidence
  1 − β"; it says nothing of events that were not measured. (The detectable loss of
  :mod:`dpaudit.statistics.stats` is computed from the counts it would judge, observed power, so it
  is
  reported as a planning figure only and never decides.)
* ``inconclusive`` (exit 3) otherwise, with the first reason that applies, in this order:

  - ``vacuous``: no white-box run's transcript depended on the changed entry at all;
  - ``not reached``: runs read the entry, but only after the audited horizon;
  - ``no event``: no pilot output was more frequent on one table, so nothing was measured;
  - ``underpowered``: an upper bound exceeds (1 + margin)·ε; ``runs_needed`` says how many
    measurement runs per side would bring it under if the event's frequencies stayed those
    measured (an assumption, stated; α and β hold per invocation: a re-run is a new audit);
  - ``no event`` too when the event measured did not separate d from d′ on the pilot (it is
    measured anyway, :func:`dpaudit.statistics.events.best_event`'s fallback, and can still show a
    violation, but a loss the pilot did not favour is no evidence the audit could fail).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from dpaudit.core.terms import Verdict
from dpaudit.statistics.measure import design
from dpaudit.statistics.stats import eps_upper_bound


MAX_RUNS = 1 << 40          # runs_needed beyond this is reported as None (out of reach)

# The one statement of each verdict's promise and of each inconclusive reason: the CLI's help,
# the docs (a test checks they name each) and the reports render these.
PROMISES = {
    Verdict.VIOLATION: "eps_lb > eps: the privacy loss of the measured event exceeds eps; "
                       "wrong with probability <= alpha (or, evidence white-box proof, a "
                       "report under an eps-local-DP claim lost more than eps: exact)",
    Verdict.PASS: "no violation, the audit could have failed (an event separated d from d' "
                  "on the pilot and the changed entry reached the audited transcript), and "
                  "eps_ub <= (1 + margin) * eps: every measured event's loss is below eps_ub "
                  "with confidence 1 - beta; nothing is said of events not measured",
    Verdict.INCONCLUSIVE: "neither; the reason and what would change it are given",
}
REASONS = {
    "vacuous": "no white-box run's transcript depended on the changed entry",
    "not reached": "runs read the changed entry only after the audited horizon",
    "no event": "nothing separated d from d' on the pilot sample",
    "underpowered": "an upper bound eps_ub exceeds (1 + margin) * eps; runs_needed says how "
                    "many runs would bring it under at the frequencies measured",
    "cut short": "the samples cap (--max-samples) or the time limit (--time-limit) stopped a "
                 "pilot round or a measurement look (said of any verdict it cut; an "
                 "inconclusive reason starts with it)",
}


@dataclass(frozen=True)
class Decision:
    """A verdict, with the reason and the budget that would change an inconclusive one."""

    verdict: Verdict
    reason: str | None = None     # inconclusive: "<code>: <one line with the fix>"
    runs_needed: int | None = None


def runs_needed(p_num: float, p_den: float, delta: float, beta: float, target: float,
                runs: int = 1) -> int | None:
    """The measurement runs at which the pass bound would reach ``target``.

    The measurement budget n (runs per side, within 10 % of the smallest) at which the pass
    bound would be ≤ ``target``, *assuming the event's frequencies are* ``p_num`` *and*
    ``p_den`` (those measured): the β-level upper bound of the last look
    (:func:`dpaudit.statistics.measure.design` of n at ``beta``) at the expected counts n·p. None
    when no
    n does (the assumed loss ln((p_num − δ)/p_den) is not below ``target``, p_den = 0) or n
    would exceed :data:`MAX_RUNS`.

    Args:
        p_num: the event's assumed probability on the numerator side.
        p_den: its assumed probability on the denominator side.
        delta: the claimed DP δ.
        beta: the pass bound's level, split over the looks.
        target: (1 + margin)·ε.
        runs: the budget that fell short (the search starts above it).

    Returns:
        The runs per side, or None.
    """
    if p_den <= 0 or p_num - delta <= 0:
        return None if p_den <= 0 else runs
    if math.log((p_num - delta) / p_den) >= target:
        return None

    def ok(n: int) -> bool:
        level = design(n, beta)[1][-1]
        return float(eps_upper_bound(n * p_num, n, n * p_den, n, level, delta)) <= target

    lo, hi = runs, max(runs + 1, 2 * runs)
    while not ok(hi):
        lo, hi = hi, 2 * hi
        if hi > MAX_RUNS:
            return None
    while hi - lo > max(1, hi // 10):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


@dataclass(frozen=True)
class Observation:
    """What an audit observed, from which :func:`decide` concludes.

    Attributes:
        eps_lb: the largest lower confidence bound over the tests performed.
        eps: the claimed ε.
        margin: pass needs eps_ub ≤ (1 + margin)·ε.
        eps_ub: the largest of the measured finalists' upper confidence bounds (level 1 − β
            each) on their events' loss (inf if none was measured).
        measured: an event was measured.
        separated: a measured event separated d from d′ on the pilot (predicted ε_lb > 0).
        coverage: the result's ``coverage`` (``measured`` False: nothing is known of it).
        needed: a callable () -> runs needed for an underpowered result (None: not computed).
        informative: a measured event can carry a loss of (1 + margin)·ε at all (at its
            measured frequency on the denominator side, ln((1 − δ)/p̂_den) > (1 + margin)·ε);
            if none can, a small upper bound is no evidence the audit could fail (an empty
            pass), and the verdict is ``underpowered`` with no budget named.
        capped: where the samples cap or the time limit stopped the audit, with the flag
            that raises it ("" if neither did); an inconclusive verdict names it first.
        runs_option: what sets the measurement runs where the audit was asked for: the CLI's
            ``--runs`` or a Python parameter's name (``n`` of ``audit_mechanism``); the reasons
            name it.
        proof: a white-box proof refutes the claim (an ε-local-DP claim whose user's report
            lost more than ε on its logged law: :func:`dpaudit.auditing.whitebox.reports_proof`).
    """

    eps_lb: float
    eps: float
    margin: float
    eps_ub: float
    measured: bool
    separated: bool
    coverage: dict
    needed: object = None
    informative: bool = True
    capped: str = ""
    runs_option: str = "--runs"
    proof: bool = False

    def runs_set(self, n: int | None = None) -> str:
        """The option that sets the runs, for a reason's fix.

        Args:
            n: the runs to name, or None.

        Returns:
            ``--runs`` or the parameter's name, with ``n`` (``--runs 500``, ``n=500``) if given.
        """
        if n is None:
            return self.runs_option
        return f"{self.runs_option} {n}" if self.runs_option.startswith("-") else \
            f"{self.runs_option}={n}"


def rules_text(exit_codes: dict) -> str:
    """The verdicts, their exit codes, promises and reasons, in one paragraph (``--help``).

    Args:
        exit_codes: the exit code of each verdict.

    Returns:
        The text, from :data:`PROMISES` and :data:`REASONS`.
    """
    parts = [f"{v} (exit {exit_codes[v]}): {PROMISES[v]}" for v in
             (Verdict.VIOLATION, Verdict.PASS, Verdict.INCONCLUSIVE)]
    reasons = "; ".join(f"{k}: {why}" for k, why in REASONS.items())
    return f"Verdicts: {'. '.join(parts)}. Reasons: {reasons}."


def decide(observed: Observation) -> Decision:
    """The verdict from what the audit observed (module doc).

    Args:
        observed: the bounds, coverage, event and budget the audit measured.

    Returns:
        The :class:`Decision`: verdict, reason (inconclusive only, with its fix) and the runs
        that would do. An inconclusive verdict the samples cap or the time limit cut short says
        so first.
    """
    d = _decide(observed)
    if d.verdict == Verdict.INCONCLUSIVE and observed.capped:
        return Decision(d.verdict, f"cut short: {observed.capped}; {d.reason}", d.runs_needed)
    return d


def _decide(observed: Observation) -> Decision:
    o = observed
    eps_lb, eps, margin, eps_ub, coverage = o.eps_lb, o.eps, o.margin, o.eps_ub, o.coverage
    measured, separated, needed, informative = o.measured, o.separated, o.needed, o.informative
    if eps_lb > eps or o.proof:
        return Decision(Verdict.VIOLATION)
    target = (1 + margin) * eps
    if coverage.get("measured"):
        if coverage.get("runs_read_any_time", coverage["runs_read"]) == 0:
            return Decision(Verdict.INCONCLUSIVE, (
                f"vacuous: in none of {coverage['runs']} "
                f"{coverage.get('kind', 'white-box').split(' (')[0]} runs did the transcript "
                "depend on the changed entry; choose a pair whose entry the algorithm reads "
                "(the default --neighbours search does)"))
        if coverage["runs_read"] == 0:
            return Decision(Verdict.INCONCLUSIVE, (
                f"not reached: the entry is read only after the audited horizon "
                f"({coverage['horizon']} samples); choose an earlier position or a longer "
                "horizon"))
    if not measured:
        return Decision(Verdict.INCONCLUSIVE, (
            "no event: no output of the pilot runs was more frequent on one table than on "
            f"the other; more runs ({o.runs_set()}) or another pair"))
    if eps_ub > target or not informative:
        n = needed() if needed is not None and informative else None
        if n is None and not separated:
            why = ("cannot carry a loss of (1 + margin)·eps" if not informative else
                   "has an upper bound no budget would bring under (1 + margin)·eps at the "
                   "frequencies measured")
            return Decision(Verdict.INCONCLUSIVE, (
                f"no event: nothing separated d from d' on the pilot sample, and the event "
                f"measured anyway {why}; more runs ({o.runs_set()}) or another pair"))
        what = (f"the upper bound {eps_ub:.4f} on the measured event's loss exceeds "
                f"(1 + margin)·eps = {target:.4g}" if informative else
                f"no measured event can carry a loss of (1 + margin)·eps = {target:.4g} (it is "
                "too likely on the denominator side), so the audit could not fail")
        fix = (f"if the event's frequencies stay those measured, about {n} measurement runs "
               f"per side would bring it under ({o.runs_set(n)}; a new audit, with its own alpha "
               "and beta)" if n else
               "no feasible number of runs would do on this event at the frequencies measured")
        return Decision(Verdict.INCONCLUSIVE, f"underpowered: {what}; {fix}", n)
    if not separated:
        return Decision(Verdict.INCONCLUSIVE, (
            "no event: nothing separated d from d' on the pilot sample (the event measured "
            f"anyway is the pilot's raw best); more runs ({o.runs_set()}) or another pair"))
    return Decision(Verdict.PASS)
