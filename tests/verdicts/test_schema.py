"""The verdict JSON contract: results of every verdict validate against the published JSON
Schema (dpaudit/verdicts/verdict.schema.json, docs/reference/verdict-json.md), and the schema
refuses what the contract forbids. Deterministic (seeded audits)."""
import json
from importlib import resources

import jsonschema
import pytest

import dpaudit


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


def inconclusive():
    """A small audit of a correct mechanism: inconclusive (underpowered), with a loss table."""
    return json.loads(json.dumps(
        dpaudit.audit_mechanism(laplace, [0.0], [1.0], eps=1.0, n=100, seed=3).to_dict()))


@pytest.mark.slow
def test_fresh_results_of_every_verdict_validate(validator):
    fresh = {"pass": dpaudit.audit_mechanism(laplace, [0.0], [1.0], eps=1.0, seed=3).to_dict(),
             "violation": dpaudit.audit_mechanism(half_noise, [0.0], [1.0], eps=1.0,
                                                  seed=3).to_dict(),
             "inconclusive": inconclusive()}
    assert {k: r["verdict"] for k, r in fresh.items()} == {k: k for k in fresh}
    for result in fresh.values():
        errors = [e.message for e in validator.iter_errors(json.loads(json.dumps(result)))]
        assert not errors, (result["verdict"], errors[:3])


@pytest.mark.slow
def test_a_registered_algorithms_result_validates(validator):
    r = dpaudit.audit_algorithm("privbern", 1.0, runs=20000, seed=1, workers=1,
                                instances="fixed").to_dict()
    errors = [e.message for e in validator.iter_errors(json.loads(json.dumps(r)))]
    assert r["neighbours"]["model"] == "local" and not errors, errors[:3]


@pytest.mark.parametrize("break_it, where", [
    (lambda r: r.pop("eps_ub"), "eps_ub"),
    (lambda r: r.update(verdict="maybe"), "maybe"),
    (lambda r: r.update(verdict="pass"), "reason"),           # a pass that gives a reason
    (lambda r: r.update(reason=None), "reason"),              # an inconclusive without one
    (lambda r: r["claim"].update(eps=0), "eps"),
    (lambda r: r.update(eps_ub="Infinity"), "Infinity"),
    (lambda r: r.update(schema_version=2), "schema_version"),
    (lambda r: r["loss_table"][0].update(p_d=1.5), "1.5"),
])
def test_the_schema_refuses_what_the_contract_forbids(validator, break_it, where):
    result = inconclusive()
    assert result["verdict"] == "inconclusive" and result["loss_table"]
    assert validator.is_valid(result)
    break_it(result)
    errors = list(validator.iter_errors(result))
    assert errors and any(where in (e.message + str(list(e.path)) + str(e.schema_path))
                          for e in errors), [e.message for e in errors]
