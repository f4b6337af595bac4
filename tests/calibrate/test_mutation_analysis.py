"""Mutation analysis (dpaudit.calibrate.mutation, `dpaudit mutate`)."""
import json
import math

import pytest

from dpaudit.algorithms.mutation import Mutation
from dpaudit.calibrate import mutation
from dpaudit.commands.cli import main


def test_the_mutable_algorithms_are_the_private_ones_with_noise_sites():
    names = mutation.mutable()
    assert {"adap-tt", "dp-se", "ldp-ncb", "ldp-ucb", "rnm-ftnl", "lazy-dp-ts"} <= set(names)
    assert not {"ttucb", "ncb", "ts-beta", "adap-tt-raw-leader", "privbern"} & set(names)


def test_ground_truth_of_scaled_noise():
    """× 2 is equivalent (ε/2 per release); × 0 and × 0.5 at a reached site are bugs (∞, 2ε);
    a site the algorithm's mode never reaches is equivalent whatever the factor (LDP-NCB's
    GDP Phase I mean, site 1)."""
    eps = 0.5
    assert mutation.ground_truth("dp-se", Mutation("scale", 0, 2.0), eps)[:2] == (
        "equivalent", pytest.approx(eps / 2))
    status, loss, _ = mutation.ground_truth("dp-se", Mutation("scale", 0, 0.0), eps)
    assert status == "bug" and math.isinf(loss)
    assert mutation.ground_truth("dp-se", Mutation("scale", 0, 0.5), eps)[:2] == (
        "bug", pytest.approx(2 * eps))
    status, _, why = mutation.ground_truth("ldp-ncb", Mutation("scale", 1, 0.0), eps)
    assert status == "equivalent" and "not reached" in why


@pytest.mark.slow
@pytest.mark.cli
def test_mutate_kills_the_randomisers_bugs_and_writes_every_field(tmp_path, capsys):
    """The LDP-NCB local randomiser: × 0 and × 0.5 are killed by the quick audit (violations
    at ε_lb far above ε: false-failure rate below 1e-6), × 2 is equivalent and not audited."""
    out = tmp_path / "m.json"
    code = main(["mutate", "--algo", "ldp-ncb-randomiser", "--quick", "--workers", "1",
                 "--json", str(out)])
    assert code == 0
    r = json.loads(out.read_text())
    rows = {m["factor"]: m for m in r["mutants"]}
    assert set(rows) == {0.0, 0.5, 2.0}
    for f in (0.0, 0.5):
        m = rows[f]
        assert m["status"] == "bug" and m["killed"] and m["verdict"] == "violation"
        assert m["eps_lb"] > 0.5 and m["runs_to_kill"] >= 1
        assert {"algorithm", "operator", "site", "whitebox_loss"} <= set(m)
    assert rows[0.0]["whitebox_loss"] is None and rows[0.5]["whitebox_loss"] == 1.0
    assert rows[2.0]["status"] == "equivalent" and "verdict" not in rows[2.0]
    assert r["score"] == 1.0 and r["bugs"] == 2 and r["killed"] == 2
    assert "mutation score 1.000: 2 of 2 bugs killed" in capsys.readouterr().out
