"""Output features of generic mechanisms (dpaudit.statistics.features): deterministic unit tests."""
import numpy as np
import pytest

from dpaudit.errors import InputError
from dpaudit.statistics import features


def test_discrete_integer_outputs_keep_their_order():
    y = np.array([-3, -1, 0, 2, 7, 2, -1])
    f = features.fit(y, y[::-1])
    assert f.kind == "discrete" and f.dim == 1
    cells = f.cells(y)
    assert np.array_equal(np.argsort(cells, kind="stable"), np.argsort(y, kind="stable"))
    assert f.describe(np.unique(f.cells(np.array([2, 7])))) == "y in {2, 7} (2 values)"


def test_float_codes_are_order_preserving_and_reversible():
    x = np.array([-np.inf, -2.5, -0.0, 0.0, 1e-300, 3.0, np.inf])
    codes = features._ordered_code(x)
    assert np.all(np.diff(codes.astype(object)) >= 0)     # monotone (−0 and +0 share a code)
    assert codes[2] == codes[3]
    assert np.array_equal(features._decode(codes, "f")[[1, 4, 5]], x[[1, 4, 5]])


def test_continuous_outputs_get_quantile_bins_and_interval_descriptions():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 50_000), rng.normal(1, 1, 50_000)
    f = features.fit(a, b)
    e = f.edges[0]
    assert f.kind == "continuous" and e.size == f.bins - 1 >= features.BINS - 1
    pooled = np.concatenate([a, b])
    # tails are refined: edges below the 1/BINS quantile, down to ~PER_BIN outputs
    assert np.sum(pooled < e[0]) <= 2 * features.PER_BIN
    assert np.sum(e < np.quantile(pooled, 1 / features.BINS)) >= 10
    cells = f.cells(np.array([-50.0, 0.0, 50.0]))
    assert cells[0] == 0 and cells[2] == e.size and 0 < cells[1] < cells[2]
    top = np.arange(cells[1], e.size + 1, dtype=np.uint64)        # a threshold event
    text = f.describe(top)
    assert text.startswith("y in [") and text.endswith(", inf)") and " or " not in text
    names = [n for n, _ in f.orderings(0, np.sort(np.unique(f.cells(a))))]
    assert names == ["threshold: y <= t", "threshold: y >= t"]


def test_multidimensional_outputs():
    rng = np.random.default_rng(1)
    y = rng.normal(size=(20_000, 2))
    f = features.fit(y, y + 1)
    assert f.kind == "continuous" and f.bins ** 2 <= features.BINS
    c = f.cells(y)
    assert c.max() < f.bins ** 2
    # the coordinate orderings sort the cells by that coordinate's bin
    keys = np.unique(c)
    for name, order in f.orderings(0, keys):
        j = int(name[len("threshold: y["):].split("]")[0])
        coord = (keys[order] // np.uint64(f.bins ** (1 - j))) % np.uint64(f.bins)
        d = np.diff(coord.astype(np.int64))
        assert np.all(d >= 0) or np.all(d <= 0)
    g = features.fit(np.array([[0, 1], [1, 1]]), np.array([[1, 0], [0, 0]]))
    assert g.kind == "discrete" and g.orderings(0, np.zeros(1, np.uint64)) == []
    assert g.cells(np.array([[0, 1]]))[0] != g.cells(np.array([[1, 0]]))[0]


@pytest.mark.parametrize("bad", [np.zeros(3), np.zeros((4, 2, 2)), np.array(["a"] * 4),
                                 np.array([0.0, np.nan, 1.0, 2.0])])
def test_bad_mechanism_outputs_are_input_errors(bad):
    with pytest.raises(InputError):
        features.as_outputs(bad, 4)
