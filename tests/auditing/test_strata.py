"""Stratified sampling on two Laplace releases (dpaudit/auditing/strata.py).

Oracles: SciPy's numerical integration of Laplace densities (the difference's tail and
density), SciPy's two-sample Kolmogorov–Smirnov test against plain Laplace pairs kept by
rejection (the conditional draws), and DP-SE's closed-form transcript laws on two arms
(``benchmarks/dpse_ceiling.py``: arm 0 or 1 eliminated after epoch 1 when the other epoch mean
passes it by the threshold; built on ``diff_logsf``, checked here against SciPy). Seeded; the
statistical assertions state their false-failure probability.
"""
import math

import numpy as np
import pytest
from scipy import integrate, stats

from benchmarks.dpse_ceiling import instance, laws
from dpaudit.algorithms import registry
from dpaudit.auditing import strata
from dpaudit.auditing.importance import NotApplicable
from dpaudit.data.tables import NeighbourPair

B = 0.7


@pytest.mark.parametrize("c", [-3.0, -0.4, 0.0, 0.9, 6.0])
def test_the_difference_of_two_laplace_matches_numerical_integration(c):
    lap = stats.laplace(scale=B)
    tail = integrate.quad(lambda x: lap.pdf(x) * lap.sf(x + c), -80 * B, 80 * B,
                          points=[0.0, -c], epsabs=1e-14)[0]
    dens = integrate.quad(lambda x: lap.pdf(x) * lap.pdf(x + c), -80 * B, 80 * B,
                          points=[0.0, -c], epsabs=1e-14)[0]
    assert math.isclose(math.exp(strata.diff_logsf(c, B)), tail, rel_tol=1e-8)
    assert math.isclose(math.exp(strata.diff_logpdf(np.array(c), B)), dens, rel_tol=1e-8)


@pytest.mark.statistical
@pytest.mark.parametrize("c", [-1.0, 0.0, 2.5])
def test_draws_given_the_difference_have_the_conditional_law(c):
    """20 000 draws given L₁ − L₀ > c·b against 20 000 plain pairs kept when they pass it:
    L₀, L₁ and the difference each pass a KS test at p > 1e-7 (false failure ≤ 3·10⁻⁷ per
    threshold when the draws have the law)."""
    rng = np.random.default_rng(5)
    l0, l1 = strata.draw_given(c * B, B, 20_000, rng)
    assert np.all(l1 - l0 > c * B)
    ref = rng.laplace(0, B, (2, 3_000_000))
    ref = ref[:, ref[1] - ref[0] > c * B][:, :20_000]
    assert ref.shape[1] == 20_000
    for x, y in ((l0, ref[0]), (l1, ref[1]), (l1 - l0, ref[1] - ref[0])):
        assert stats.ks_2samp(x, y).pvalue > 1e-7


@pytest.mark.slow
def test_the_stratum_is_the_elimination_and_the_bound_holds():
    """DP-SE, K = 2, ε = 2, the boundary pair 6 noise scales out: the pilot finds the stratum
    that is the elimination itself (every run drawn in it eliminates, on both tables), its
    masses are the transcript's closed-form law on each table, and the bound at α = 10⁻⁶ lies
    below the transcript's loss (false failure ≤ 10⁻⁶) and above 0.8 of it (the counts are all
    or nothing, so the bound is the masses' ratio less the floor ln(1/α)/n: deterministic given
    the stratum)."""
    spec, _, prep, pair = instance(2.0, 6.0)
    law = laws(2.0, 6.0)            # ln P, rows d, d′; columns arm 0 out, arm 1 out, neither
    r = strata.stratified_bound(spec, prep, pair, strata.Stratified(60_000, 3, 1e-6))
    num, den = (0, 1) if r["direction"] == "d" else (1, 0)
    col = int(np.argmax(law[num] - law[den]))
    loss = float(law[num, col] - law[den, col])
    for key, row in (("in_stratum", num), ("in_stratum_prime", den)):
        hits, runs = r["counts"][key]
        assert hits == runs
    assert abs(r["stratum"]["log_mass"] - law[num, col]) < 1e-3
    assert abs(r["stratum"]["log_mass_prime"] - law[den, col]) < 1e-3
    assert 0.8 * loss < r["eps_lower"] <= loss


def test_a_randomised_response_release_is_not_stratified():
    spec = registry.get("privbern")
    prep = spec.prepare(1.0, spec.resolve_params({}))
    pair = NeighbourPair.change("local", np.array(0.0), (), 0.0, 1.0, {}, "test")
    with pytest.raises(NotApplicable, match="not a Laplace release"):
        strata.stratified_bound(spec, prep, pair, strata.Stratified(60_000, 1))


def test_too_few_runs_say_how_many_are_needed():
    spec, _, prep, pair = instance(2.0, 6.0)
    with pytest.raises(NotApplicable, match="give at least"):
        strata.stratified_bound(spec, prep, pair, strata.Stratified(20_000, 1))


@pytest.mark.slow       # an audit and 60 000 runs per table (~4 s)
@pytest.mark.cli
def test_an_audit_reports_the_stratified_bound_and_a_callable_says_why_not(tmp_path, capsys):
    import json

    from dpaudit.auditing.audit import audit_algorithm
    from dpaudit.commands.cli import main
    from dpaudit.reporting.report import summary
    spec, params, _, pair = instance(2.0, 6.0)
    law = laws(2.0, 6.0)
    doc = audit_algorithm("dp-se", 2.0, params=params, pair=pair, runs=2000, seed=1, workers=1,
                          whitebox_runs=0, stratified_runs=60_000).to_dict()
    st = doc["stratified"]
    assert st["runs"] == 60_000 and st["alpha"] == doc["alpha"]
    assert 0.5 * float(np.max(np.abs(law[0] - law[1])[:2])) < st["eps_lower"]
    assert "  stratified: eps_lb = " in summary(doc)
    plain = audit_algorithm("dp-se", 2.0, params=params, pair=pair, runs=2000, seed=1,
                            workers=1, whitebox_runs=0).to_dict()
    assert "stratified" not in plain
    out = tmp_path / "c.json"
    assert main(["run", "--algo", "examples/private_etc.py:etc", "--eps", "1", "--runs", "2000",
                 "--seed", "1", "--workers", "1", "--stratified-runs", "60000",
                 "--json", str(out)]) in (0, 1, 3)
    assert "no logged releases to stratify on" in json.loads(out.read_text())["stratified"][
        "refused"]
    assert "stratified: not computed: FILE.py:FUNCTION callables" in capsys.readouterr().out
