"""A time limit becomes a counted samples cap once (dpaudit.core.allowance): no clock is read
after that, so a ``--max-samples`` rerun at that count makes the same decisions. Exact: the
times are arithmetic on perf_counter values the test sets."""
import math
import time

from dpaudit.core.allowance import Allowance


def test_a_time_limit_is_counted_as_the_samples_the_time_left_affords():
    start = time.perf_counter()
    a = Allowance.of(None, None, 500).counted_time(100.0, start + 50.0, rate=1e6, spent=500)
    # about 150 s left at 1e6 samples/s (the clock starts 50 s from now): 1.5e8 samples
    assert 1.49e8 <= a.samples <= 1.5e8 and a.cap == 500 + a.samples
    assert math.isinf(a.deadline) and a.rate == 1e6
    assert a.refusal(a.samples) == ""
    why = a.refusal(a.samples + 1)
    assert why.startswith("the time limit (100 s; --time-limit), counted as a cap of "
                          f"{a.cap} samples at the 1e+06 samples/s"), why
    # the rerun the message names: the same cap, counted, no clock
    again = Allowance.of(a.cap, None, 500)
    assert again.samples == a.samples and again.refusal(a.samples + 1).startswith(
        "the samples cap")


def test_a_smaller_samples_cap_stays_and_no_limit_changes_nothing():
    start = time.perf_counter()
    capped = Allowance.of(1000, None).counted_time(100.0, start, rate=1e6)
    assert capped.samples == 1000 and capped.rate is None and math.isinf(capped.deadline)
    assert capped.refusal(1001).startswith("the samples cap")
    free = Allowance.of(None, None)
    assert free.counted_time(None, start, rate=1e6) is free
    past = Allowance.of(None, None).counted_time(1.0, start - 10.0, rate=1e6)
    assert past.samples == 1 and past.refusal(2).startswith("the time limit")
