"""The shared pieces of the reproductions: simultaneous levels, intervals, bands, rows."""
import numpy as np
import pytest

from dpaudit.reproduce.experiment import (ALPHA, Claim, level, mean_interval, ratio_row,
                                          spread)


def test_the_rows_of_a_page_share_alpha():
    assert level(1) == 1 - ALPHA and level(20) == pytest.approx(1 - ALPHA / 20)


def test_the_band_is_mean_plus_minus_sd_cut_to_the_runs_range():
    m, sd, lo, hi = spread([[1.0, 2.0, 3.0], [5.0], [0.0, 0.0, 10.0]])
    np.testing.assert_allclose(m, [2.0, 5.0, 10 / 3])
    np.testing.assert_allclose(sd, [1.0, 0.0, np.std([0, 0, 10], ddof=1)])
    np.testing.assert_allclose(lo, [1.0, 5.0, 0.0])                 # cut at the smallest run
    np.testing.assert_allclose(hi, [3.0, 5.0, 10 / 3 + np.std([0, 0, 10], ddof=1)])


def test_a_mean_interval_is_students_and_a_constant_sample_has_width_zero():
    m, lo, hi = mean_interval([1.0, 2.0, 3.0, 4.0], 0.95)
    assert m == 2.5 and lo == pytest.approx(2.5 - 3.182446 * np.std([1, 2, 3, 4], ddof=1) / 2)
    assert mean_interval([7.0, 7.0], 0.99) == (7.0, 7.0, 7.0)


def test_a_ratio_row_decides_on_its_interval_and_an_undecided_one_differs():
    a, b = np.full(50, 2.0) + np.linspace(-0.1, 0.1, 50), np.ones(50)
    claim = Claim("a / b", "a is at least b", "lower end > 1", lambda v: v[1] > 1, "a is not")
    row = ratio_row(a, b, 1, claim)(0.95)
    assert row.reproduced and row.ours.startswith("2 [")
    row = ratio_row(b, a, 1, claim)(0.95)
    assert not row.reproduced and row.why == "a is not"
    row = ratio_row(a, b, 1, claim, undecided="3 runs were cut")(0.95)
    assert not row.reproduced and row.why == "Not decided: 3 runs were cut. a is not"
