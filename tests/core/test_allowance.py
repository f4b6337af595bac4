"""A time limit becomes a counted samples cap (dpaudit.core.allowance): rate × limit, over every
counted stage; no clock is read after that, so a ``--max-samples`` rerun at that count makes
the same decisions. Exact arithmetic: no clock is involved."""
import math

from dpaudit.core.allowance import Allowance


def test_a_time_limit_is_counted_as_the_samples_it_affords_at_the_rate():
    a = Allowance.of(None, None, 500).counted_time(100.0, rate=1e6, spent=500)
    assert a.cap == 10 ** 8 and a.samples == 10 ** 8 - 500      # the screen's 500 counted
    assert math.isinf(a.deadline) and a.rate == 1e6
    assert a.refusal(a.samples) == ""
    why = a.refusal(a.samples + 1)
    assert why == ("the time limit (100 s; --time-limit), counted as a cap of 100000000 samples "
                   "at the 1e+06 samples/s measured before the audit (--max-samples "
                   "reproduces it)"), why
    # the rerun the message names: the same samples left, counted, no clock
    again = Allowance.of(a.cap, None, 500)
    assert again.samples == a.samples and again.refusal(a.samples + 1).startswith(
        "the samples cap")


def test_a_smaller_samples_cap_stays_and_no_limit_changes_nothing():
    capped = Allowance.of(1000, None).counted_time(100.0, rate=1e6)
    assert capped.samples == 1000 and capped.rate is None and math.isinf(capped.deadline)
    assert capped.refusal(1001).startswith("the samples cap")
    free = Allowance.of(None, None)
    assert free.counted_time(None, rate=1e6) is free
    spent = Allowance.of(None, None, 10 ** 6).counted_time(0.5, rate=1e6, spent=10 ** 6)
    assert spent.samples == 1 and spent.cap == 10 ** 6 + 1       # the screen spent it all
    assert spent.refusal(2).startswith("the time limit")
