"""The audit's value objects: Claim, Budget, AuditRequest and its one command line."""
import shlex
from dataclasses import FrozenInstanceError, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.commands import cli
from dpaudit.core.request import AuditRequest, Budget, Claim
from dpaudit.errors import InputError


@pytest.mark.parametrize("build, message", [
    (lambda: Claim(0.0), "eps=0.0 is out of range: expected a number in [0.001, 100]"),
    (lambda: Claim(1.0, 1.0), "delta=1.0 is out of range: expected a number in [0, 1)"),
    (lambda: Budget(alpha=0), "alpha=0 is out of range: expected a number in (0, 1)"),
    (lambda: Budget(runs=0), "runs=0 is out of range: expected an integer in [1, 2^40]"),
    (lambda: Budget(runs=0, runs_name="n"), "n=0 is out of range"),
    (lambda: Budget(finalists=0), "finalists=0 is out of range: expected an integer >= 1"),
    (lambda: Budget(margin=float("inf")), "margin=inf is out of range"),
    (lambda: AuditRequest("adap-tt", Claim(1.0), workers=0), "workers=0 is out of range"),
    (lambda: AuditRequest("adap-tt", Claim(1.0), seed=-1), "seed=-1 is out of range"),
    (lambda: AuditRequest("adap-tt", Claim(1.0), params="risk=0.1"),
     "params='risk=0.1' is not valid: expected a dict"),
    (lambda: AuditRequest("adap-tt", Claim(1.0), instances="all"),
     "--instances 'all' is not valid: expected one of fixed, search"),
])
def test_bad_values_are_refused_when_built(build, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]").replace("^", r"\^")):
        build()


def test_requests_are_frozen_and_own_their_params():
    given_params = {"risk": "0.1"}
    r = AuditRequest("adap-tt", Claim(0.5), given_params)
    given_params["risk"] = "0.2"               # the caller's dict changes, the request does not
    assert r.params == {"risk": "0.1"}
    with pytest.raises(FrozenInstanceError):
        r.seed = 3


def test_the_command_leaves_defaults_out_and_needs_a_seed():
    r = AuditRequest("adap-tt", Claim(0.5), budget=Budget(runs=20000), seed=3)
    assert r.command() == "dpaudit run --algo adap-tt --eps 0.5 --seed 3 --runs 20000"
    full = AuditRequest("x.py:f", Claim(0.5, 0.001), {"means": "0.9,0.1", "horizon": "4"},
                        "blackbox", None, Budget(None, 0.01, 0.1, 0.5), 7, 2, model="local",
                        strict=True)
    assert full.command() == ("dpaudit run --algo x.py:f --eps 0.5 --delta 0.001 --model local "
                              "--seed 7 --alpha 0.01 --beta 0.1 --margin 0.5 --neighbours "
                              "blackbox --strict --param means=0.9,0.1 horizon=4")
    assert replace(r, instances="fixed").command() == (
        "dpaudit run --algo adap-tt --eps 0.5 --seed 3 --runs 20000 --instances fixed")
    capped = replace(r, budget=Budget(runs=20000, max_samples=5 * 10**9, time_limit=60))
    assert capped.command() == ("dpaudit run --algo adap-tt --eps 0.5 --seed 3 --runs 20000 "
                                "--max-samples 5000000000")     # a clock reproduces nothing
    full_looks = replace(r, budget=Budget(runs=20000, early_stop=False))
    assert full_looks.command() == ("dpaudit run --algo adap-tt --eps 0.5 --seed 3 --runs 20000 "
                                    "--no-early-stop")
    with pytest.raises(ValueError):
        replace(r, seed=None).command()
    for not_text in (dict(params={"means": (0.9, 0.5)}), dict(algorithm=print),
                     dict(pair=object())):
        assert not replace(r, **not_text).reproducible_by_command
        with pytest.raises(ValueError):
            replace(r, **not_text).command()


names = st.sampled_from(["adap-tt", "dp-se", "ttucb", "gdp-ncb", "x.py:run", "pkg.mod:fn"])
numbers = st.floats(0.001, 100, allow_nan=False)


@settings(deadline=None)   # the first example imports the catalogue
@given(algo=names, eps=numbers, delta=st.none() | st.floats(0, 0.999),
       runs=st.none() | st.integers(1, 10**7), alpha=st.floats(1e-9, 0.999),
       beta=st.sampled_from([0.05, 0.2]), margin=st.sampled_from([0.25, 1.0]),
       neighbours=st.sampled_from(["search", "blackbox", "structure"]),
       seed=st.integers(0, 2**63 - 1), strict=st.booleans(),
       pair=st.none() | st.sampled_from(["pair.json", "a b/p q.json"]),
       instances=st.sampled_from(["fixed", "search"]),
       max_samples=st.none() | st.integers(1, 10**13), early_stop=st.booleans(),
       beyond_proof=st.booleans(), small_delta_runs=st.sampled_from([0, 1, 5000]),
       stratified_runs=st.sampled_from([0, 60_000]),
       params=st.dictionaries(st.sampled_from(["risk", "means", "horizon"]),
                              st.sampled_from(["0.1", "0.9,0.5", "8"]), max_size=3))
def test_the_command_line_parses_back_to_the_same_request(algo, eps, delta, runs, alpha, beta,
                                                         margin, neighbours, seed, strict,
                                                         pair, instances, max_samples,
                                                         early_stop, beyond_proof,
                                                         small_delta_runs, stratified_runs,
                                                         params):
    """What `dpaudit run` builds from the printed line is the request printed (so the line
    reproduces it: the seed and every setting that changes a result are in it)."""
    model = "user" if ":" in algo else None
    r = AuditRequest(algo, Claim(eps, delta), params, neighbours, pair,
                     Budget(runs, alpha, beta, margin, max_samples=max_samples,
                            early_stop=early_stop), seed, None,
                     True, model, strict, instances, beyond_proof=beyond_proof,
                     small_delta_runs=small_delta_runs,
                     stratified_runs=0 if delta else stratified_runs)
    a = cli._parser().parse_args(shlex.split(r.command())[1:])
    assert cli.run_request(a) == r
