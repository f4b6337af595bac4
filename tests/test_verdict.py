"""The verdict rule (dpaudit.verdict): violation, pass only when the audit could have failed,
inconclusive with its reason and fix otherwise."""
import math

import numpy as np
import pytest

import dpaudit
from dpaudit.audit import audit_algorithm
from dpaudit.measure import design, look_sizes
from dpaudit.plugin import audit_callable
from dpaudit.stats import PowerCurve
from dpaudit.tables import NeighbourPair, constant_table
from dpaudit.verdict import decide, runs_needed

READ = {"measured": True, "runs": 200, "runs_read": 200, "runs_read_any_time": 200,
        "horizon": 32}
GOOD = dict(eps_lb=0.48, eps=0.5, margin=0.25, detectable_loss=0.52, measured=True,
            separated=True, coverage=READ)


def test_pass_needs_a_separating_event_a_read_entry_and_power():
    assert decide(**GOOD).verdict == "pass"
    assert decide(**{**GOOD, "coverage": {"measured": False}}).verdict == "pass"  # black box
    assert decide(**{**GOOD, "detectable_loss": 0.625}).verdict == "pass"        # (1 + 0.25)·ε


@pytest.mark.parametrize("change,code", [
    ({"coverage": {**READ, "runs_read": 0, "runs_read_any_time": 0}}, "vacuous"),
    ({"coverage": {**READ, "runs_read": 0}}, "not reached"),
    ({"measured": False, "detectable_loss": math.inf, "eps_lb": 0.0}, "no event"),
    ({"separated": False}, "no event"),
    ({"detectable_loss": 0.6251}, "underpowered"),
    ({"detectable_loss": 0.7, "margin": 0.3}, "underpowered"),
])
def test_each_reason_of_an_inconclusive_verdict(change, code):
    v = decide(**{**GOOD, **change})
    assert v.verdict == "inconclusive" and v.reason.startswith(code + ":")
    assert "\n" not in v.reason


def test_a_violation_is_a_violation_whatever_the_power_or_coverage():
    bad = {**GOOD, "eps_lb": 0.51, "detectable_loss": math.inf, "separated": False,
           "coverage": {**READ, "runs_read": 0, "runs_read_any_time": 0}}
    assert decide(**bad) .verdict == "violation"
    assert decide(**{**GOOD, "eps_lb": 0.5}).verdict == "pass"                   # not above


def test_underpowered_states_the_runs_needed():
    v = decide(**{**GOOD, "detectable_loss": 0.9}, needed=lambda: 12345)
    assert v.runs_needed == 12345 and "(--runs 12345)" in v.reason


def test_no_budget_is_needed_for_a_loss_the_event_cannot_carry():
    # P(event | d') = 0.96: a loss above ln(1/0.96) = 0.04 would need P(event | d) > 1
    design = (lambda n: (look_sizes(n), 0.01))
    assert runs_needed(0.96, 1.0, 0.0, 0.05, 1.25, design, 2500, math.inf) is None
    v = decide(**{**GOOD, "detectable_loss": math.inf, "separated": False},
               needed=lambda: None)
    assert v.reason.startswith("no event:") and v.runs_needed is None


def test_runs_needed_is_the_smallest_budget_that_reaches_the_target():
    def plan(n):
        return design(n, 0.025)
    for runs, loss in ((1, math.inf), (2000, 0.9)):               # with and without a guess
        n = runs_needed(0.1, 0.5, 0.0, 0.05, 0.625, plan, runs, loss)
        sizes, levels = plan(n)
        assert PowerCurve(0.1, sizes, 0.5, levels).detectable_loss(0.05) <= 0.625
        sizes, levels = plan(int(n * 0.85))                        # bisection to within 10 %
        assert PowerCurve(0.1, sizes, 0.5, levels).detectable_loss(0.05) > 0.625


def test_a_callable_that_ignores_its_table_is_inconclusive():
    def blind(rng, data, eps):
        return [0, 1, 0, 1]

    r = audit_callable(blind, 1.0, model="user", runs=2000, seed=1)
    assert r.verdict == "inconclusive" and r.exit_code == 3
    assert r.reason.startswith("no event:")


def test_an_entry_the_algorithm_never_reads_is_vacuous():
    # TTUCB reads row 0 for arm 0 only: a pair differing in arm 1's entry of row 0 changes
    # nothing it ever reads
    K = 6
    d = constant_table(1.0, 32, K)
    dp = d.copy()
    dp[0, 1] = 0.0
    quiet = NeighbourPair.from_tables(d, dp, {"kind": "constant", "name": "ones"},
                                      "unread entry")
    r = audit_algorithm("ttucb", 0.5, pair=quiet, runs=2000, seed=1, workers=1,
                        whitebox_runs=50)
    assert r.verdict == "inconclusive" and r.reason.startswith("vacuous:")
    assert r.coverage["runs_read_any_time"] == 0


def test_identical_tables_never_reach_a_verdict():
    with pytest.raises(dpaudit.errors.InputError, match="identical"):
        dpaudit.audit_mechanism(lambda rng, d, n: np.zeros(n), [1.0], [1.0], eps=1.0)


@pytest.mark.slow
def test_a_tiny_budget_is_inconclusive():
    # at 200 runs nothing separates on the pilot; the raw best likelihood-ratio event is
    # measured anyway, cannot show 1.25 ε at this budget, and is rare enough on d' for a budget
    # to be named: "underpowered", with more runs than it had
    r = audit_algorithm("adap-tt", 0.5, runs=200, seed=1, workers=2)
    assert r.verdict == "inconclusive" and r.reason.startswith("underpowered:")
    assert r.detectable_loss > 1.25 * 0.5
    assert r.runs_needed > 200 and r.to_dict()["runs_needed"] == r.runs_needed
    assert f"--runs {r.runs_needed}" in r.reason
