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


def test_ground_truth_of_the_other_operators():
    """A count off by one loses ε·(n + 1)/n at the fewest samples n a release at the site
    averages: 2ε at AdaP-TT's initial one-sample means (a bug); DP-SE's epoch means average
    many samples, so its loss is within the margin a pass allows (audited, out of the score).
    At DP-SE's epoch means a reused draw, frozen noise and a Gaussian draw are unbounded;
    a Gaussian draw at DP-BAI-GAUSS's Gaussian site changes nothing (equivalent)."""
    eps = 0.5
    assert mutation.ground_truth("adap-tt", Mutation("count", 0), eps)[:2] == (
        "bug", pytest.approx(2 * eps))
    status, loss, why = mutation.ground_truth("dp-se", Mutation("count", 0), eps)
    assert status == "within_margin" and eps < loss <= 1.25 * eps and "n = " in why
    n = eps / (loss - eps)                      # loss = ε·(n + 1)/n
    assert n == pytest.approx(round(n), abs=1e-6) and round(n) >= 4
    for op in ("reuse", "frozen", "gauss"):
        status, loss, _ = mutation.ground_truth("dp-se", Mutation(op, 0), eps)
        assert status == "bug" and math.isinf(loss)
    status, _, why = mutation.ground_truth("dp-bai-gauss", Mutation("gauss", 0), eps)
    assert status == "equivalent" and "identical" in why


@pytest.mark.slow
@pytest.mark.cli
def test_mutate_kills_the_randomisers_bugs_and_writes_every_field(tmp_path, capsys):
    """The LDP-NCB local randomiser (one user's report per run): × 0, × 0.5, the count off by
    one, frozen and Gaussian noise are killed by the quick audit (violations at ε_lb far above
    ε: false-failure rate below 1e-6); × 2 is equivalent and not audited, and so is a reused
    draw (one release per run: nothing to reuse)."""
    out, page = tmp_path / "m.json", tmp_path / "m.html"
    code = main(["mutate", "--algo", "ldp-ncb-randomiser", "--quick", "--workers", "1",
                 "--json", str(out), "--html", str(page)])
    assert code == 0
    r = json.loads(out.read_text())
    rows = {m["mutant"].split("~")[1]: m for m in r["mutants"]}
    assert set(rows) == {"scale=0@0", "scale=0.5@0", "scale=2@0", "count@0", "reuse@0",
                         "frozen@0", "gauss@0"}
    bugs = ("scale=0@0", "scale=0.5@0", "count@0", "frozen@0", "gauss@0")
    for key in bugs:
        m = rows[key]
        assert m["status"] == "bug" and m["killed"] and m["verdict"] == "violation"
        assert m["eps_lb"] > 0.5 and m["runs_to_kill"] >= 1
        assert {"algorithm", "operator", "site", "whitebox_loss", "whitebox_replay"} <= set(m)
    assert rows["scale=0@0"]["whitebox_loss"] is None
    assert rows["scale=0@0"]["whitebox_replay_infinite"]
    assert rows["scale=0.5@0"]["whitebox_loss"] == 1.0
    assert rows["scale=0.5@0"]["whitebox_replay"] == pytest.approx(1.0)
    for key in ("scale=2@0", "reuse@0"):
        assert rows[key]["status"] == "equivalent" and "verdict" not in rows[key]
    assert r["score"] == 1.0 and r["bugs"] == 5 and r["killed"] == 5
    assert "mutation score 1.000: 5 of 5 bugs killed" in capsys.readouterr().out
    html = page.read_text()
    assert "mutation score 1: 5 of 5 bugs killed" in html and "every bug was killed" in html
    assert html.count("<code>ldp-ncb-randomiser~") == 7
