"""Learned events (dpaudit.statistics.learned): features, the classifier's cells, the hook."""
import numpy as np
import pytest

from dpaudit.errors import InputError
from dpaudit.statistics import learned


def test_codes_are_indicators_and_the_other_values_a_column():
    y = np.array([[-1000.0, 1.0], [-1000.0, 0.0], [2.5, 1.0], [-2000.0, 0.0]])
    f = learned.Codes(np.repeat(y, 50, axis=0))
    # column 0: three values, each ≥ 1 % of the outputs: all codes, no value column;
    # column 1: two codes
    assert [c.size for c in f.codes] == [3, 2] and f.valued == [False, False] and len(f) == 5
    x = f(y)
    assert x.shape == (4, 5) and (x.sum(axis=1) == 2).all()
    rare = np.concatenate([np.full(990, -1000.0), np.linspace(0, 1, 10)])[:, None]
    g = learned.Codes(rare)
    assert g.codes[0].tolist() == [-1000.0] and g.valued == [True]
    # the other values: a piecewise-linear basis (7 knots, 6 functions), 0 where the code is
    v = np.linspace(-0.5, 1.5, 41)
    x = g(np.r_[-1000.0, v][:, None])
    assert x.shape == (42, 7) == (42, len(g)) and x[0].tolist() == [1.0] + [0.0] * 6
    assert (x[1:, 0] == 0).all()
    # it spans every line in the value, inside the knots and beyond them
    design = np.column_stack([np.ones(v.size), x[1:, 1:]])
    coef = np.linalg.lstsq(design, 3.0 * v - 1.0, rcond=None)[0]
    assert np.allclose(design @ coef, 3.0 * v - 1.0)
    kink = np.maximum(v - 0.5, 0.0)         # and a kink at a knot (0.5 is the median)
    coef = np.linalg.lstsq(design, kink, rcond=None)[0]
    assert np.allclose(design @ coef, kink)


def test_a_score_on_values_follows_a_likelihood_ratio_that_is_not_linear():
    # Laplace(0, 1) on d, Laplace(1, 1) on d': the log-odds of d' is |y| - |y - 1|, flat at
    # -1 below 0 and at 1 above 1. Unpenalised, on the value basis, the score follows it
    # (weights' noise ~ 2/sqrt(40 000) = 0.01 per feature, every margin > 7 sd of the score:
    # false failure < 1e-6); a line in y would not flatten
    rng = np.random.default_rng(7)
    a, b = rng.laplace(0.0, 1.0, (20_000, 2)), rng.laplace(0.0, 1.0, (20_000, 2))
    b[:, 0] += 1.0                                  # the second coordinate: the same on both
    fit = learned.fit(a, b)
    assert fit.model[-1].l1_ratio == 0.0 and "a logistic" in fit.describe(np.zeros(1, np.uint64))
    s = fit.score(np.array([[-5.0, 0], [-3.0, 0], [0.5, 0], [3.0, 0], [5.0, 0]]))
    assert abs(s[1] - s[0]) < 0.2 and abs(s[4] - s[3]) < 0.2
    assert 1.5 < s[3] - s[1] < 2.5 and s[1] < s[2] < s[3]


def test_the_score_orders_the_cells_and_separates_shifted_outputs():
    rng = np.random.default_rng(1)
    a = rng.normal(0.0, 1.0, (4000, 3))
    b = rng.normal(0.0, 1.0, (4000, 3)) + np.array([1.0, 0.0, 0.0])
    fit = learned.fit(a, b)
    assert fit.n_features == 18 and not fit.custom     # 3 coordinates' value bases
    test = np.array([[-3.0, 0, 0], [0.0, 0, 0], [3.0, 0, 0]])
    s, cells = fit.score(test), fit.cells(test)
    assert s[0] < s[1] < s[2] and cells[0] < cells[1] < cells[2]    # bins keep the order
    names = [n for n, _ in fit.orderings(np.sort(np.unique(fit.cells(a))))]
    assert names == ["threshold: score <= t", "threshold: score >= t"]
    assert "s(y) in" in fit.describe(np.sort(cells[2:])) and "logistic" in fit.describe(cells[:1])


def test_the_callers_features_replace_the_codes_and_are_checked():
    rng = np.random.default_rng(2)
    a, b = rng.normal(0, 1, (2000, 2)), rng.normal(0.5, 1, (2000, 2))
    seen = []

    def total(y):
        seen.append(y.shape)
        return y.sum(axis=1)        # one feature, as a vector
    fit = learned.fit(a, b, total)
    assert fit.custom and fit.n_features == 1 and seen == [(4000, 2)]
    assert "your features" in fit.describe(np.sort(fit.cells(a[:5])))
    with pytest.raises(InputError, match=r"features\(y\) returned shape \(3, 1\) for 4000"):
        learned.fit(a, b, lambda y: np.zeros((3, 1)))
    with pytest.raises(InputError, match="finite"):
        learned.fit(a, b, lambda y: np.full((y.shape[0], 1), np.nan))


def test_the_penalty_zeroes_the_features_that_do_not_separate_the_inputs():
    # 2 bits with P(1) = 0.4 on d and 0.6 on d', 16 bits at 1/2 on both: the 32 code features
    # of the 16 (the penalty's threshold is 2.88 sd: each such bit's weight is non-zero with
    # probability ~0.004, at least 8 of 16 with probability < 1e-15), the 2 separating bits far
    # above it (about 40 sd); their four levels keep their order (the score is a log-odds of d')
    rng = np.random.default_rng(5)
    n = 20_000
    p_d = np.r_[0.4, 0.4, np.full(16, 0.5)]
    p_dp = np.r_[0.6, 0.6, np.full(16, 0.5)]
    a, b = (rng.random((n, 18)) < p_d).astype(int), (rng.random((n, 18)) < p_dp).astype(int)
    fit = learned.fit(a, b)
    w = fit.model[-1].coef_[0].reshape(18, 2)       # per bit: the indicators of its two codes
    assert (np.abs(w[:2]).sum(axis=1) > 0).all()
    assert (np.abs(w[2:]).sum(axis=1) == 0).sum() >= 8
    levels = fit.score(np.array([[0, 0] + [0] * 16, [1, 0] + [0] * 16, [1, 1] + [0] * 16]))
    assert levels[0] < levels[1] < levels[2]


def test_a_score_of_few_values_is_cut_into_its_levels():
    # 4 bits, 2 with P(1) = 0.4 on d and 0.6 on d' and 2 the other way round, 8 unrelated
    # bits: the score's level is how many of the 4 favour d' (0 to 4). The 16 patterns of the
    # 4 bits score 16 near values in 5 groups; the cells merge values within a group (their
    # weights' noise) and never across (levels ~0.8 apart, the cut at ~0.06: > 10 sd)
    rng = np.random.default_rng(6)
    n = 20_000
    p_d = np.r_[0.4, 0.4, 0.6, 0.6, np.full(8, 0.5)]
    a = (rng.random((n, 12)) < p_d).astype(int)
    b = (rng.random((n, 12)) < np.r_[1 - p_d[:4], p_d[4:]]).astype(int)
    fit = learned.fit(a, b)
    patterns = np.array([[(k >> j) & 1 for j in range(4)] + [0] * 8 for k in range(16)])
    level = patterns[:, 0] + patterns[:, 1] + (1 - patterns[:, 2]) + (1 - patterns[:, 3])
    cells = fit.cells(patterns).astype(np.int64)
    assert fit.bins.kind == "continuous" and np.unique(fit.score(patterns)).size == 16
    assert np.unique(cells).size <= 10          # 16 without the merge
    for lv in range(4):     # every cell of a level lies below every cell of the next
        assert cells[level == lv].max() < cells[level == lv + 1].min()
    assert np.unique(cells[level == 0]).size == np.unique(cells[level == 4]).size == 1
