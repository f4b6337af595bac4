"""Measurement with early stopping (dpaudit.statistics.measure) and the event search's symmetry.

False-failure rates: the validity test counts false violations among 1000 replications whose
true loss is exactly ε; under a valid procedure they are ≤ Binomial(1000, α) and the threshold
is its 1 − 1e-6 quantile. The other assertions are deterministic or have margins > 10 sd.
"""
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta as beta_dist
from scipy.stats import binom
from two_cells import EVENT, OUT, two_cell_counts

from dpaudit.core.request import Budget, Claim
from dpaudit.core.terms import Side
from dpaudit.simulation.simulate import Counts
from dpaudit.statistics.events import CANDIDATE_LEVELS, best_event, candidate_events
from dpaudit.statistics.measure import Finalist, LOOKS, LOOK_WEIGHTS, design, look_sizes, measure
from dpaudit.statistics.stats import eps_lower_bound


def binomial_source(p_d, p_dp):
    """draw(side, n, seed): n runs whose event indicator is Bernoulli(p_d or p_dp)."""
    def draw(side, n, seed):
        k = np.random.default_rng(seed).binomial(n, (p_d, p_dp)[side.index])
        return two_cell_counts(int(k), n)
    return draw


def test_look_sizes():
    assert look_sizes(8_000_000) == [1_000_000, 2_000_000, 4_000_000, 8_000_000]
    assert look_sizes(3) == [1, 3]
    assert len(look_sizes(10 ** 7)) == LOOKS


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 1000, 10 ** 7])
def test_the_looks_levels_sum_to_the_finalists_alpha_and_favour_the_last_look(n):
    sizes, levels = design(n, 0.01)
    assert len(levels) == len(sizes) and math.isclose(sum(levels), 0.01)
    assert levels[-1] == max(levels) and levels == sorted(levels)
    if len(sizes) == LOOKS:
        assert levels[-1] == pytest.approx(0.0075) and levels[0] == pytest.approx(0.000625)


@pytest.mark.statistical
@pytest.mark.slow
def test_early_stopping_keeps_the_false_violation_rate_below_alpha():
    eps, alpha, reps = 0.5, 0.05, 1000
    p_d = 0.2
    draw = binomial_source(p_d, p_d * math.exp(eps))      # true loss exactly ε
    root = np.random.SeedSequence(99)
    false = sum(measure([Finalist(EVENT, draw)], Claim(eps, 0.0), Budget(20_000, alpha), s).stopped
                == "violation" for s in root.spawn(reps))
    assert false <= binom.isf(1e-6, reps, alpha)


@pytest.mark.statistical
def test_a_clear_violation_stops_at_the_first_look_and_a_safe_event_for_futility():
    m = measure([Finalist(EVENT, binomial_source(0.1, 0.1 * math.exp(1.0)))], Claim(0.5, 0.0),
                Budget(800_000, 0.05), np.random.SeedSequence(1))
    assert m.stopped == "violation" and m.best.n == 100_000 and len(m.looks) == 1
    assert m.best.eps_lb > 0.5 and m.p_adjusted <= 0.05
    safe = measure([Finalist(EVENT, binomial_source(0.3, 0.3))], Claim(0.5, 0.0),
                   Budget(800_000, 0.05), np.random.SeedSequence(2))
    assert safe.stopped == "futility" and safe.best.n == 100_000 and safe.p_adjusted == 1.0
    undecided = measure([Finalist(EVENT, binomial_source(0.2, 0.2 * math.exp(0.5)))],
                        Claim(0.5, 0.0), Budget(800_000, 0.05), np.random.SeedSequence(3))
    assert undecided.stopped == "budget" and undecided.best.n == 800_000
    assert undecided.tests == LOOKS and undecided.alpha_per_look == pytest.approx(
        [0.05 * w / sum(LOOK_WEIGHTS) for w in LOOK_WEIGHTS])


@pytest.mark.statistical
def test_without_early_stopping_every_look_is_made_and_the_bound_tightens():
    # the clear violation and the safe event above stop at the first look; without early
    # stopping both measure all four looks, and the violation's bound at 800k runs per side
    # exceeds its first look's (sd of the log ratio 0.011 at 100k vs 0.004: > 10 sd apart)
    for (p_d, p_dp), eps, seed in (((0.1, 0.1 * math.exp(1.0)), 0.5, 1), ((0.3, 0.3), 0.5, 2)):
        draw = binomial_source(p_d, p_dp)
        early = measure([Finalist(EVENT, draw)], Claim(eps, 0.0), Budget(800_000, 0.05),
                        np.random.SeedSequence(seed))
        full = measure([Finalist(EVENT, draw)], Claim(eps, 0.0),
                       Budget(800_000, 0.05, early_stop=False), np.random.SeedSequence(seed))
        assert len(early.looks) == 1 and early.best.n == 100_000
        assert full.stopped == "budget" and len(full.looks) == LOOKS and full.best.n == 800_000
        assert full.looks[0] == early.looks[0]         # the same draws at the first look
    assert full.looks[-1]["eps_ub"][0] < early.best.eps_ub     # the safe event's bound tightens
    violation = measure([Finalist(EVENT, binomial_source(0.1, 0.1 * math.exp(1.0)))],
                        Claim(0.5, 0.0), Budget(800_000, 0.05, early_stop=False),
                        np.random.SeedSequence(1))
    assert violation.looks[-1]["eps_lb"][0] > violation.looks[0]["eps_lb"][0]


def test_the_adjusted_p_value_is_the_weighted_bonferroni_one():
    # the event is twice as likely on d': the first look, at level α/16, stops for violation;
    # its p-value counts 16 times (4 times under an even split)
    m = measure([Finalist(EVENT, binomial_source(0.1, 0.2))], Claim(0.05, 0.0),
                Budget(40_000, 0.05), np.random.SeedSequence(6))
    assert m.stopped == "violation" and len(m.looks) == 1
    assert m.p_adjusted == pytest.approx(16 * m.best.p_values[0]) and m.p_adjusted < 0.05


@pytest.mark.statistical
def test_delta_claims_tolerate_delta_extra_mass():
    # P_d'(S) = e^0.5·P_d(S) + 0.05: a violation of (0.5, 0)-DP, not of (0.5, 0.06)-DP
    draw = binomial_source(0.2, 0.2 * math.exp(0.5) + 0.05)
    pure = measure([Finalist(EVENT, draw)], Claim(0.5, 0.0), Budget(400_000, 0.05),
                   np.random.SeedSequence(4))
    approx = measure([Finalist(EVENT, draw)], Claim(0.5, 0.06), Budget(400_000, 0.05),
                     np.random.SeedSequence(4))
    assert pure.stopped == "violation"
    assert approx.stopped != "violation" and approx.best.eps_lb < 0.5


def test_measurement_is_deterministic_for_a_seed():
    draw = binomial_source(0.2, 0.3)
    a = measure([Finalist(EVENT, draw)] * 2, Claim(0.5, 0.0), Budget(10_000, 0.05),
                np.random.SeedSequence(5))
    b = measure([Finalist(EVENT, draw)] * 2, Claim(0.5, 0.0), Budget(10_000, 0.05),
                np.random.SeedSequence(5))
    assert a.looks == b.looks and [m.hits for m in a.measured] == [m.hits for m in b.measured]
    assert a.tests == 2 * LOOKS


def _counts(values, n):
    cells = np.arange(1, len(values) + 1, dtype=np.uint64)
    return Counts(n_runs=n, views=np.array([1]), cells=[cells], counts=[np.array(values)],
                  status=np.array([n, 0, 0]), tau_sum=0, rec=np.zeros(0, np.int64))


cell_counts = st.lists(st.integers(0, 300), min_size=4, max_size=4)


@settings(max_examples=100, deadline=None)
@given(a=cell_counts, b=cell_counts, c=cell_counts, e=cell_counts)
def test_swapping_d_and_d_prime_mirrors_the_chosen_event(a, b, c, e):
    n = 1200
    rank, score = (_counts(a, n), _counts(b, n)), (_counts(c, n), _counts(e, n))
    ev = best_event((rank, score), 10 ** 5, 0.05)
    ev2 = best_event((rank[::-1], score[::-1]), 10 ** 5, 0.05)
    assert (ev is None) == (ev2 is None)
    if ev is not None:
        assert ev.predicted_lb == ev2.predicted_lb
        if not np.array_equal(ev.cells, ev2.cells):   # ties between directions: same bound
            return
        assert {ev.numerator, ev2.numerator} == {"d", "d_prime"}
        assert ev.scoring_hits == ev2.scoring_hits


def test_the_fallback_event_is_the_raw_best_likelihood_ratio():
    # 100 runs per half: nothing separates (a 3-vs-1 cell is noise at alpha 0.05), so only
    # the fallback measures something; it is the cell with the largest smoothed ratio
    # (3.5/1.5 for "d"), not the union with the most excess hits (7 on either side)
    n, d, dp = 100, [50, 3, 47], [45, 1, 54]
    halves = (_counts(d, n), _counts(dp, n))
    assert best_event((halves, halves), n, 0.05) is None
    ev = best_event((halves, halves), n, 0.05, fallback="raw")
    assert ev.predicted_lb == 0.0 and ev.numerator == "d"
    assert ev.cells.tolist() == [2] and ev.scoring_hits == (3, 1)
    mirrored = best_event((halves[::-1], halves[::-1]), n, 0.05, fallback="raw")
    assert mirrored.numerator == "d_prime" and mirrored.cells.tolist() == [2]
    assert best_event(((halves[0],) * 2, (halves[0],) * 2), n, 0.05, fallback="raw") is None


def test_a_fallback_event_carries_the_bound_its_pilot_predicts_at_the_frequencies():
    # 3 vs 1 and 6 vs 1 hits in 100 runs: neither separates at three sigma (predicted 0), but
    # at the frequencies themselves 6 vs 1 promises more than 3 vs 1: a search ranks by it,
    # and the fallback is the union best there (the raw best ratio, 3 vs 1, when none is
    # positive there: a measurement of 100 runs, the test above)
    n, n_meas = 100, 10 ** 5
    weak = (_counts([50, 3, 47], n), _counts([45, 1, 54], n))
    strong = (_counts([50, 6, 44], n), _counts([45, 1, 54], n))
    a = best_event((weak, weak), n_meas, 0.05, fallback="median")
    b = best_event((strong, strong), n_meas, 0.05, fallback="median")
    assert a.predicted_lb == b.predicted_lb == 0.0
    assert b.median_lb > a.median_lb > 0.0 and a.cells.tolist() == b.cells.tolist() == [2]
    even = (_counts([50, 3, 47], n), _counts([50, 3, 47], n))
    assert best_event((even, even), n_meas, 0.05, fallback="median") is None
    # without median (the registered algorithms' audits) the fallback carries no median bound
    raw = best_event((strong, strong), n_meas, 0.05, fallback="raw")
    assert raw.median_lb == 0.0 and raw.cells.tolist() == [2] and raw.predicted_lb == 0.0


# RAPPOR-like hits on a third of 166 666 runs: cell 1 "every differing bit favours d" (loss
# 0.40, mass 0.5 %), cell 2 "all but one" (loss 0.30, mass 3.6 %), cell 3 the rest
RAPPOR_THIRD, RAPPOR_HITS = 166_666, ([793, 6010, 159_863], [532, 4454, 161_680])


def plug_in(a, b, n, level, n_meas=2 * 10 ** 6, alpha=0.0375):
    """The measurement's bound if the hits' one-sided level-``level`` CP bounds were true."""
    p_num = beta_dist.ppf(level, a, n - a + 1)
    p_den = beta_dist.ppf(1 - level, b + 1, n - b) if b < n else 1.0
    return float(eps_lower_bound(p_num * n_meas, n_meas, p_den * n_meas, n_meas, alpha))


def test_candidate_events_trade_mass_for_loss_level_by_level():
    # three sigma prefers cells 1 + 2 (0.218 vs 0.115 at 2·10⁶ runs), one sigma cell 1 alone
    # (0.272 vs 0.269): both are candidates, the three-sigma one first, as best_event has it
    n, (d, dp) = RAPPOR_THIRD, RAPPOR_HITS
    halves = (_counts(d, n), _counts(dp, n))
    got = candidate_events((halves, halves), 2 * 10 ** 6, 0.0375)
    assert [e.cells.tolist() for e in got] == [[1, 2], [1]]
    assert all(e.numerator == "d" for e in got) and len(CANDIDATE_LEVELS) == 5
    first = best_event((halves, halves), 2 * 10 ** 6, 0.0375)
    assert first.cells.tolist() == [1, 2] and first.predicted_lb == got[0].predicted_lb
    # every candidate's predicted_lb is its three-sigma prediction
    assert got[1].predicted_lb == pytest.approx(plug_in(793, 532, n, 1.35e-3))
    assert plug_in(793, 532, n, 0.1587) > plug_in(793 + 6010, 532 + 4454, n, 0.1587)
    assert got[1].scoring_hits == (793, 532)
    mirrored = candidate_events((halves[::-1], halves[::-1]), 2 * 10 ** 6, 0.0375)
    assert [(e.cells.tolist(), e.numerator) for e in mirrored] == [([1, 2], "d_prime"),
                                                                   ([1], "d_prime")]
    flat = (_counts(d, n), _counts(d, n))       # nothing to find: no candidate
    assert candidate_events((flat, flat), 2 * 10 ** 6, 0.0375) == []
    # the small event unlucky on the scoring half (720 hits instead of 793): one sigma and the
    # frequencies prefer the union; only the optimistic level keeps cell 1 a candidate
    unlucky = (_counts([720, 6010, n - 6730], n), _counts(dp, n))
    assert plug_in(720, 532, n, 0.5) < plug_in(6730, 4986, n, 0.5)
    assert plug_in(720, 532, n, 0.8413) > plug_in(6730, 4986, n, 0.8413)
    got = candidate_events((unlucky, unlucky), 2 * 10 ** 6, 0.0375)
    assert [e.cells.tolist() for e in got] == [[1, 2], [1]]


def test_events_of_one_group_share_their_runs_and_split_alpha():
    """Two events of one pair (a group) are measured on one set of runs, two tests each look."""
    calls = []
    source = binomial_source(0.2, 0.2 * math.exp(0.3))

    def draw(side, n, seed):
        calls.append(side.index)
        return source(side, n, seed)
    out = replace(EVENT, cells=np.array([OUT], np.uint64), numerator=Side.D)
    fs = [Finalist(EVENT, draw, 0, group=0), Finalist(out, draw, 0, group=0)]
    m = measure(fs, Claim(0.5, 0.0), Budget(40_000, 0.05), np.random.SeedSequence(4))
    looks = len(m.looks)
    assert calls == [0, 1] * looks          # one draw per side and look, not two
    (a, b) = m.measured
    assert a.n == b.n and b.hits == (b.n - a.hits[0], b.n - a.hits[1])   # the same runs
    assert m.tests == 2 * len(look_sizes(40_000))
    assert m.alpha_per_look == design(40_000, 0.05 / 2)[1]


def test_a_looks_draws_made_together_are_those_made_one_by_one():
    """measure(draws=...) gets each look's plans at once, seeded as the one-by-one draws are."""
    fs = [Finalist(EVENT, binomial_source(0.2, 0.3), 0),
          Finalist(EVENT, binomial_source(0.1, 0.4), 1)]
    looks = []

    def together(plans):
        looks.append([(f.label, side.index) for f, side, _, _ in plans])
        return [f.draw(side, r, sd) for f, side, r, sd in plans]

    args = (Claim(0.5, 0.0), Budget(10_000, 0.05))
    one_by_one = measure(fs, *args, np.random.SeedSequence(5))
    pooled = measure(fs, *args, np.random.SeedSequence(5), draws=together)
    assert [m.hits for m in pooled.measured] == [m.hits for m in one_by_one.measured]
    assert pooled.looks == one_by_one.looks and pooled.stopped == one_by_one.stopped
    assert looks == [[(0, 0), (0, 1), (1, 0), (1, 1)]] * len(pooled.looks)
