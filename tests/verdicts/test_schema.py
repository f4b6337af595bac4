"""The verdict JSON contract: every result validates against the published JSON Schema
(dpaudit/verdicts/verdict.schema.json, docs/reference/verdict-json.md), and the schema refuses
what the contract forbids. Deterministic."""
import json
import pathlib
from importlib import resources

import jsonschema
import pytest

import dpaudit

ROOT = pathlib.Path(__file__).resolve().parents[2]
GATE_RESULTS = sorted((ROOT / "reports").glob("*.json"))


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(resources.files("dpaudit.verdicts").joinpath("verdict.schema.json")
                        .read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def laplace(rng, data, n):
    return data[0] + rng.laplace(0.0, 1.0, n)


def half_noise(rng, data, n):
    return data[0] + rng.laplace(0.0, 0.5, n)


def passed():
    """A pass of the gate (reports/adap-tt.json, written by `dpaudit gate audits/`)."""
    return json.loads((ROOT / "reports" / "adap-tt.json").read_text())


def inconclusive():
    return dpaudit.audit_mechanism(laplace, [0.0], [1.0], eps=1.0, n=200, seed=3).to_dict()


def test_the_gate_results_committed_in_reports_validate(validator):
    assert len(GATE_RESULTS) >= 40
    for path in GATE_RESULTS:
        errors = [e.message for e in validator.iter_errors(json.loads(path.read_text()))]
        assert not errors, (path.name, errors[:3])


@pytest.mark.slow
def test_fresh_results_of_every_verdict_validate(validator):
    fresh = {"pass": dpaudit.audit_mechanism(laplace, [0.0], [1.0], eps=1.0, seed=3).to_dict(),
             "violation": dpaudit.audit_mechanism(half_noise, [0.0], [1.0], eps=1.0,
                                                  seed=3).to_dict(),
             "inconclusive": inconclusive()}
    assert {k: r["verdict"] for k, r in fresh.items()} == {k: k for k in fresh}
    for result in fresh.values():
        round_trip = json.loads(json.dumps(result))
        errors = [e.message for e in validator.iter_errors(round_trip)]
        assert not errors, (result["verdict"], errors[:3])


@pytest.mark.parametrize("break_it, where", [
    (lambda r: r.pop("eps_ub"), "eps_ub"),
    (lambda r: r.update(verdict="maybe"), "maybe"),
    (lambda r: r.update(reason="underpowered: more runs"), "reason"),     # a pass with a reason
    (lambda r: r["claim"].update(eps=0), "eps"),
    (lambda r: r.update(eps_ub="Infinity"), "Infinity"),
    (lambda r: r.update(schema_version=2), "schema_version"),
    (lambda r: r["loss_table"][0].update(p_d=1.5), "1.5"),
])
def test_the_schema_refuses_what_the_contract_forbids(validator, break_it, where):
    result = passed()
    assert validator.is_valid(result) and result["verdict"] == "pass" and result["loss_table"]
    break_it(result)
    errors = list(validator.iter_errors(result))
    assert errors and any(where in (e.message + str(list(e.path))) for e in errors), errors


def test_an_inconclusive_result_must_say_why(validator):
    result = inconclusive()
    assert result["verdict"] == "inconclusive" and validator.is_valid(result)
    result["reason"] = None
    assert not validator.is_valid(result)
