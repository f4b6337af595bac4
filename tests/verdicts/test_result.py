"""The verdict's numbers in words (dpaudit.reporting.text.bound_text, the reports): saturated
bounds,
the δ-loss estimate, no estimate when nothing was measured, the early-stop bias."""
import math

import numpy as np
import pytest

from dpaudit.auditing.mechanism import audit_mechanism
from dpaudit.reporting import report
from dpaudit.reporting.report import summary
from dpaudit.reporting.text import bound_text
from dpaudit.statistics.stats import log_ratio


def test_the_estimate_is_the_delta_loss():
    assert log_ratio(300, 1000, 100, 1000) == pytest.approx(math.log(3))
    assert log_ratio(300, 1000, 100, 1000, 0.1) == pytest.approx(math.log(2))
    assert log_ratio(300, 1000, 0, 1000) == math.inf
    assert math.isnan(log_ratio(50, 1000, 100, 1000, 0.1))


def _identity(rng, data, n):            # the output is the input: infinite loss
    return np.full(n, int(data[0]), dtype=np.int64)


def _constant(rng, data, n):            # ignores its input: nothing to measure
    return np.zeros(n, dtype=np.int64)


def test_a_bound_from_zero_denominator_hits_is_labelled_saturated():
    r = audit_mechanism(_identity, [0], [1], eps=1.0, n=4000, seed=1)
    doc = r.to_dict()
    assert r.verdict == "violation" and doc["eps_lb_saturated"] is True
    assert doc["eps_hat"] == "inf"
    text = summary(r.to_dict())
    assert "saturated: no hit on" in text and "the largest bound that budget can give" in text
    assert "biased upward by the early stop" in text        # stopped at its first look
    view = report._audit_view(doc)
    assert view["eps_lb"].endswith("(saturated)") and view["bound_note"].startswith("Saturated")


def test_nothing_measured_has_no_estimate():
    r = audit_mechanism(_constant, [0], [1], eps=1.0, n=4000, seed=1)
    doc = r.to_dict()
    assert doc["eps_hat"] is None and doc["eps_lb_saturated"] is False
    assert "nothing measured, no point estimate" in summary(r.to_dict())
    assert report._audit_view(doc)["eps_hat"] == "n/a (nothing measured)"


def test_a_measured_bound_is_not_saturated_and_delta_claims_name_the_delta_loss():
    def laplace(rng, data, n):
        return data[0] + rng.laplace(0.0, 1.0, n)
    r = audit_mechanism(laplace, [0.0], [1.0], eps=0.5, delta=0.2212, n=20000, seed=3)
    doc = r.to_dict()
    assert doc["eps_lb_saturated"] is False and "saturated" not in bound_text(doc)
    assert "delta-loss estimate" in bound_text(doc)
    m = doc["counts"]["measurement"]
    k_num, k_den = ((m["hits_d"], m["hits_d_prime"]) if doc["event"]["numerator"] == "d" else
                    (m["hits_d_prime"], m["hits_d"]))
    assert doc["eps_hat"] == pytest.approx(math.log((k_num / m["runs_d"] - 0.2212)
                                                    / (k_den / m["runs_d"])))
    assert report._audit_view(doc)["estimate"] == "δ-loss estimate"
