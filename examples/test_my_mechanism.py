"""The pytest plugin: audits inside your own test suite.

    pytest examples/test_my_mechanism.py

``assert_dp`` (a fixture of the ``dpaudit`` pytest plugin, installed with dpaudit) runs the
audit of ``dpaudit run`` with a fixed seed at α = 10⁻⁶: a correct mechanism fails the test with
probability at most 10⁻⁶, and a passing test keeps passing. A violation raises
``AssertionError`` with the audit's summary.
"""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from private_etc import etc, etc_half_noise  # noqa: E402  (the example next to this file)


def test_the_private_bandit_is_private(assert_dp):
    r = assert_dp(etc, eps=1.0, horizon=4, runs=20_000, seed=2)
    assert r.verdict == "pass"


def test_the_half_noise_copy_is_caught(assert_dp):
    with pytest.raises(AssertionError, match="VIOLATION"):
        assert_dp(etc_half_noise, eps=1.0, horizon=4, runs=20_000, seed=2)
