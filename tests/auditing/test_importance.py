"""Importance sampling of the reading release on a registered kernel (dpaudit/auditing/importance.py).

The oracle: DP-BAI-GAUSS on two arms with identity features makes one phase, one Gaussian
release per arm (σ from its logged releases) and recommends the larger; so its transcript's law
is closed-form here, P(recommend arm 0) = Φ((μ̂₀ − μ̂₁)/(σ√2)), computed with SciPy from the
tables (independent of the module). Seeded; the statistical assertions state their
false-failure probability.
"""
import json
import math

import numpy as np
import pytest
from scipy.stats import norm

from dpaudit.algorithms import registry
from dpaudit.auditing import exact, importance
from dpaudit.data.tables import NeighbourPair

DELTA = 1e-5


def two_arm_pair(horizon, ones):
    """dp-bai-gauss (ε = 1, δ = 1e-5) on K = 2; arm 0 has ``ones`` ones, arm 1 all ones; the
    pair changes arm 0's next pull from 1 (d) to 0 (d′). Returns spec, prep, pair, law(table)."""
    spec = registry.get("dp-bai-gauss")
    p, _ = spec.resolve_claim({"features": "identity", "means": "0.6,0.4",
                               "horizon": str(horizon)}, DELTA)
    prep = spec.prepare(1.0, p)
    H = spec.audit_horizon(p)
    base = np.zeros((2, H))
    base[1] = 1.0
    base[0, :ones] = 1.0
    pair = NeighbourPair.change("stream", base, (0, ones), 1.0, 0.0, {}, "test")
    rel = exact.frozen_run(spec, prep, pair.d, H, np.zeros(0), 1)[1]
    assert rel.shape[0] == 2 and rel[0, 6] == rel[1, 6]      # one phase: one release per arm
    n, sigma = H // 2, rel[0, 6]

    def law(table):
        return norm.cdf((table[0, :n].mean() - table[1, :n].mean()) / (sigma * math.sqrt(2)))
    return spec, prep, pair, law


@pytest.mark.statistical
def test_weighted_runs_estimate_the_transcripts_law_on_both_tables():
    """The weighted frequencies of "recommend arm 0" on d (numerator) and d′ (denominator) are
    within 6 standard errors of the closed form (false failure < 2e-9 each, normal
    approximation of a mean of 3000 bounded terms)."""
    spec, prep, pair, law = two_arm_pair(16, 3)
    d, dp = (np.ascontiguousarray(t, dtype=np.float64) for t in (pair.d, pair.d_prime))
    runs = importance.weighted_runs(spec, prep, (d, dp), importance.Aim(DELTA), 3000,
                                    np.random.SeedSequence(4))
    assert 0 < (runs.w != 1).mean() and np.all(runs.w_prime <= 1 / (1 - importance.RHO_DEN))
    for keys, w, table in ((runs.keys, runs.w, d), (runs.keys_prime, runs.w_prime, dp)):
        x = w * np.array([k[2] == 0 for k in keys])           # recommendation = arm 0
        assert abs(x.mean() - law(table)) < 6 * x.std() / math.sqrt(x.size) + 1e-12


def test_the_pilot_tilts_a_rare_event_and_not_a_sure_one():
    """Each side's proposal is chosen on the pilot's draws: for the sure event (every
    transcript) no tilt (ρ = 0: weights 1, no variance), for "recommend arm 0" at mass
    2.3e-4 on d a tilt toward arm 0's upper tail (ρ > 0, centre beyond v)."""
    spec, prep, pair, law = two_arm_pair(140, 44)
    assert 1e-4 < law(pair.d) < 1e-3
    d, dp = (np.ascontiguousarray(t, dtype=np.float64) for t in (pair.d, pair.d_prime))
    pilot = importance.weighted_runs(spec, prep, (d, dp),
                                     importance.Aim(DELTA, rho=importance.PILOT_RHO), 3000,
                                     np.random.SeedSequence(6))
    for base, keys in zip(importance.BASES, (pilot.keys, pilot.keys_prime)):
        sure, _ = importance._proposal(pilot, np.ones(len(keys), bool), base, 10**6, 0.05)
        rare, _ = importance._proposal(pilot, np.array([k[2] == 0 for k in keys]), base,
                                       10**6, 0.05)
        assert sure.rho == 0.0 and rare.rho > 0 and rare.offset > 0


@pytest.mark.slow
@pytest.mark.statistical
def test_the_small_delta_bounds_hold_against_the_closed_form():
    """Arm 0 at 52 ones of 69 against 69: "recommend arm 0" has mass 9.8e-3 on d, 6.5e-3 on d′,
    and the transcript's exact ε(1e-5) is 0.40 (closed form). The pilot picks that transcript
    on d; at α = 1e-6 the bounds on P_d, P_d′ and the δ-loss lie on the right side of the exact
    values (each fails with probability ≤ 1e-6 if valid), and the lower bound on P_d is within
    35 % of it (seeded; at α = 1e-6 and 37 500 measured runs a weighted term's relative sd of
    ~6 allows ~25 %)."""
    spec, prep, pair, law = two_arm_pair(140, 52)
    P = np.array([law(pair.d), 1 - law(pair.d)])
    Q = np.array([law(pair.d_prime), 1 - law(pair.d_prime)])
    eps_exact = exact.eps_at_delta(P, Q, DELTA)
    assert 0.39 < eps_exact < 0.41
    r = importance.small_delta(spec, prep, pair, importance.SmallDelta(DELTA, 50_000, 2, 1e-6))
    assert r["direction"] == "d" and r["event_transcripts"] == 1
    assert 0.65 * P[0] < r["p_lower"] <= P[0] and r["p_prime_upper"] >= Q[0]
    assert r["eps_lower"] <= eps_exact


def test_a_randomised_response_release_is_not_importance_sampled():
    spec = registry.get("privbern")
    p = spec.resolve_params({})
    prep = spec.prepare(1.0, p)
    pair = NeighbourPair.change("local", np.array(0.0), (), 0.0, 1.0, {}, "test")
    with pytest.raises(importance.NotApplicable, match="not a Laplace or Gaussian"):
        importance.small_delta(spec, prep, pair, importance.SmallDelta(DELTA, 40, 1))


@pytest.mark.slow
@pytest.mark.cli
def test_an_audit_reports_the_small_delta_bound_and_a_callable_says_why_not(tmp_path, capsys):
    from dpaudit.auditing.audit import audit_algorithm
    from dpaudit.commands.cli import main
    from dpaudit.reporting.report import summary
    r = audit_algorithm("dp-bai-gauss", 1.0, delta=DELTA, runs=2000, seed=1, workers=1,
                        whitebox_runs=100, instances="fixed", small_delta_runs=400,
                        params={"features": "identity", "means": "0.6,0.4", "horizon": "16"})
    doc = r.to_dict()
    sd = doc["small_delta"]
    assert sd["runs"] == 400 and sd["delta"] == DELTA and 0 <= sd["eps_lower"] < math.inf
    assert doc["command"].endswith("--small-delta-runs 400 --param features=identity "
                                   "means=0.6,0.4 horizon=16")
    assert "  small delta: eps_lb = " in summary(doc)
    assert "small_delta" not in audit_algorithm("privbern", 1.0, runs=2000, seed=1, workers=1,
                                                whitebox_runs=0).to_dict()
    out = tmp_path / "c.json"
    assert main(["run", "--algo", "examples/private_etc.py:etc", "--eps", "1", "--runs", "2000",
                 "--seed", "1", "--workers", "1", "--small-delta-runs", "100",
                 "--json", str(out)]) in (0, 1, 3)
    assert "callables have no logged releases" in json.loads(out.read_text())["small_delta"][
        "refused"]
    assert "small delta: not computed: FILE.py:FUNCTION callables" in capsys.readouterr().out


@pytest.mark.slow       # an audit (~3 s)
def test_a_delta_claim_gets_the_small_delta_bound_by_default_from_half_the_runs():
    # unset, the small-δ runs per direction are half the budget's runs for a δ > 0 claim (10⁶
    # at the default budget) and are left out of the reproducing command, which then does
    # the same; 0 turns it off and is written into the command
    from dpaudit.auditing.audit import audit_algorithm
    kw = dict(delta=DELTA, runs=2000, seed=1, workers=1, whitebox_runs=0, instances="fixed",
              params={"features": "identity", "means": "0.6,0.4", "horizon": "16"})
    doc = audit_algorithm("dp-bai-gauss", 1.0, **kw).to_dict()
    assert doc["small_delta"]["runs"] == 1000 and "--small-delta-runs" not in doc["command"]
    off = audit_algorithm("dp-bai-gauss", 1.0, small_delta_runs=0, **kw).to_dict()
    assert "small_delta" not in off and "--small-delta-runs 0" in off["command"]

