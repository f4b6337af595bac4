"""The StatDP input patterns of dpaudit.data.patterns."""
import numpy as np
import pytest

from dpaudit.data.patterns import PATTERNS, input_patterns
from dpaudit.errors import InputError


def test_the_eight_patterns_around_a_vector_of_ones():
    got = {name: (a.tolist(), b.tolist()) for name, a, b in input_patterns([1, 1, 1, 1])}
    assert list(got) == list(PATTERNS)
    ones = [1.0] * 4
    assert got["one above"] == (ones, [2.0, 1, 1, 1])
    assert got["one below"] == (ones, [0.0, 1, 1, 1])
    assert got["one above rest below"] == (ones, [2.0, 0, 0, 0])
    assert got["one below rest above"] == (ones, [0.0, 2, 2, 2])
    assert got["half half"] == (ones, [2.0, 2, 0, 0])
    assert got["all above"] == (ones, [2.0] * 4)
    assert got["all below"] == (ones, [0.0] * 4)
    assert got["x shape"] == ([1.0, 1, 0, 0], [0.0, 0, 1, 1])


def test_each_entry_moves_by_at_most_the_sensitivity():
    base = np.array([3.0, -1.0, 0.5, 7.0, 2.0])
    for _, a, b in input_patterns(base, sensitivity=0.25):
        assert np.abs(a - b).max() == 0.25 and np.abs(a - base).max() <= 0.25
        assert not np.array_equal(a, b)


def test_one_changed_entry_and_one_element_inputs_keep_the_distinct_pairs():
    one = input_patterns([5, 5, 5], changes="one")
    assert [n for n, _, _ in one] == ["one above", "one below"]
    assert all(np.count_nonzero(a != b) == 1 for _, a, b in one)
    # a number: "all above" repeats "one above", "x shape" swaps "one below": listed once
    assert [n for n, _, _ in input_patterns(0.0)] == ["one above", "one below"]


@pytest.mark.parametrize("d, kw, match", [([], {}, "shape"), ([[1, 2]], {}, "shape"),
                                          (["a"], {}, "not a number"),
                                          ([1.0], {"sensitivity": 0}, "sensitivity=0"),
                                          ([1.0], {"changes": "all"}, "changes='all'")])
def test_bad_base_inputs(d, kw, match):
    with pytest.raises(InputError, match=match):
        input_patterns(d, **kw)
