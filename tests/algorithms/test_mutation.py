"""The mutation switch at the kernels' noise sites (dpaudit.algorithms.mutation)."""
import numpy as np
import pytest

from dpaudit.algorithms import mutation, registry
from dpaudit.algorithms.kernels import FROZEN_DRAW, MUTATION_MARK, SCALE
from dpaudit.simulation.simulate import GAUSSIAN, LAPLACE
from dpaudit.auditing.exact import frozen_run
from dpaudit.data import tables
from dpaudit.errors import InputError

EPS = 0.5
SEEDS = range(8)


def _mutable():
    return [s for s in registry.all_specs() if registry.noise_sites(s)]


def _runs(spec, theta: np.ndarray, seeds=SEEDS) -> list:
    """(transcript key, release log) of runs of ``spec``'s kernel with ``theta``, fresh rewards."""
    p = spec.resolve_params({})
    prep = spec.prepare(EPS, p)
    prep = type(prep)(theta=theta(prep.theta), aux=prep.aux, means=prep.means)
    table = tables.MODELS[spec.model].fresh(prep.means.shape[0])
    limit = min(int(spec.audit_horizon(p)), 4096)
    return [frozen_run(spec, prep, table, limit, np.zeros(0), s) for s in seeds]


def test_every_private_kernel_with_noise_draws_has_sites():
    names = {s.name for s in _mutable()}
    assert {"adap-tt", "dp-se", "dp-bai", "dp-bai-gauss", "dp-od", "gdp-ncb", "ldp-ncb",
            "ldp-ucb", "ldp-ncb-randomiser", "adap-ucb", "lazy-ucb", "lazy-dp-ts", "ftnl",
            "rnm-ftnl", "dp-se-regret"} <= names


@pytest.mark.slow
@pytest.mark.parametrize("name", [s.name for s in _mutable()])
def test_a_switched_off_or_identity_mutation_leaves_every_run_unchanged(name):
    """A tail whose site is none of the kernel's (-1), or factor 1 at each site, gives the same
    transcripts and release logs as no tail, run for run (a misread tail changes them)."""
    spec = registry.get(name)
    plain = _runs(spec, lambda t: t)
    tails = [[MUTATION_MARK, SCALE, -1.0, 0.0]]
    tails += [[MUTATION_MARK, SCALE, float(site), 1.0] for site, _ in registry.noise_sites(spec)]
    for tail in tails:
        got = _runs(spec, lambda t, tail=tail: np.concatenate((t, tail)))
        for (k, r), (k2, r2) in zip(plain, got):
            assert k == k2
            np.testing.assert_array_equal(r, r2)


def test_scale_zero_releases_the_raw_value_and_scale_two_doubles_the_noise():
    """AdaP-TT's site 1 (the phase means): × 0 releases each exact mean and logs scale 0, × 2
    doubles the first phase mean's noise and its logged scale (same seed, same draw); site 0's
    initial releases keep their noise and scale."""
    spec = registry.get("adap-tt")
    plain = _runs(spec, lambda t: t)
    zero = _runs(registry.get("adap-tt~scale=0@1"), lambda t: t)
    double = _runs(registry.get("adap-tt~scale=2@1"), lambda t: t)
    seen = 0
    for (_, r), (_, r0), (_, r2) in zip(plain, zero, double):
        later = r0[:, 2] >= 2                       # phases ≥ 2 come from site 1
        np.testing.assert_array_equal(r0[later, 5], r0[later, 4])
        np.testing.assert_array_equal(r0[later, 6], 0.0)       # the log says: no noise
        assert np.all(r0[~later, 5] != r0[~later, 4])
        np.testing.assert_array_equal(r0[~later, 6], r[:int((~later).sum()), 6])
        first = int(np.flatnonzero(r[:, 2] >= 2)[0])   # same history up to the first phase mean
        np.testing.assert_array_equal(r[:first], r2[:first])
        assert r2[first, 5] - r2[first, 4] == pytest.approx(2 * (r[first, 5] - r[first, 4]),
                                                            rel=1e-12)
        assert r2[first, 6] == 2 * r[first, 6]                 # and twice the scale
        seen += int(later.sum())
    assert seen > 0


def test_each_operator_plants_its_bug_and_logs_what_it_releases():
    """AdaP-TT's site 1 (phase means ≥ 2), same seeds as the algorithm: ``reuse`` adds one draw
    (in noise scales) to every phase mean of a run; ``frozen`` adds ln 2 scales in every run
    and logs a point mass (scale 0) at the released value; ``gauss`` draws and logs Gaussian
    noise of σ = b (the Laplace scale); ``count`` logs b·n/(n + 1); site 0's releases are the algorithm's in each."""
    spec = registry.get("adap-tt")
    plain = _runs(spec, lambda t: t)
    seen = 0
    for op in ("reuse", "frozen", "gauss", "count"):
        mut = _runs(registry.get(f"adap-tt~{op}@1"), lambda t: t)
        for (_, r), (_, m) in zip(plain, mut):
            later = m[:, 2] >= 2
            first = int(np.flatnonzero(later)[0])
            np.testing.assert_array_equal(m[:first], r[:first])
            b, n = r[first, 6], r[first, 3]
            if op == "reuse":
                z = (m[later, 5] - m[later, 4]) / m[later, 6]
                np.testing.assert_allclose(z, z[0], rtol=1e-9, atol=1e-12)
                assert z[0] == pytest.approx((r[first, 5] - r[first, 4]) / b, rel=1e-9)
            elif op == "frozen":
                np.testing.assert_array_equal(m[later, 6], 0.0)
                np.testing.assert_array_equal(m[later, 5], m[later, 4])
                assert m[first, 5] - r[first, 4] == pytest.approx(FROZEN_DRAW * b, rel=1e-9)
            elif op == "gauss":
                assert np.all(m[later, 7] == GAUSSIAN) and np.all(m[~later, 7] == LAPLACE)
                assert m[first, 6] == b
                assert m[first, 5] - m[first, 4] != r[first, 5] - r[first, 4]
            else:
                assert m[first, 6] == pytest.approx(b * n / (n + 1), rel=1e-12)
                assert m[first, 5] - m[first, 4] == pytest.approx(
                    (r[first, 5] - r[first, 4]) * n / (n + 1), rel=1e-9)
            seen += int(later.sum())
    assert seen > 0


def test_mutant_names_and_bad_input():
    spec = registry.get("dp-se~scale=0.5@0")
    assert spec.mutant_of == "dp-se" and spec.kernel is registry.get("dp-se").kernel
    assert mutation.parse("dp-se") is None
    assert mutation.parse("dp-se~scale=0.5@0") == ("dp-se", mutation.Mutation("scale", 0, 0.5))
    assert mutation.parse("dp-se~reuse@0") == ("dp-se", mutation.Mutation("reuse", 0))
    assert registry.get("dp-se~frozen@0").name == "dp-se~frozen@0"
    for bad, why in (("dp-se~scale=-1@0", "factor"), ("dp-se~scale=nan@0", "factor"),
                     ("dp-se~noise=0@0", "OPERATOR"), ("dp-se~scale=0@3", "site=3"),
                     ("ttucb~scale=0@0", "no noise site"), ("dp-se~scale=0", "ALGO~"),
                     ("dp-se~reuse=2@0", "takes no factor"), ("dp-se~scale@0", "a factor")):
        with pytest.raises(InputError, match=why):
            registry.get(bad)


@pytest.mark.slow
def test_the_default_audit_kills_adap_tt_with_no_noise_on_its_phase_means():
    """AdaP-TT × 0 at site 1 releases its phase means raw: the default audit finds a violation
    (its measurement separates the tables completely: false-failure rate far below 1e-6)."""
    from dpaudit.auditing.audit import audit_algorithm
    r = audit_algorithm("adap-tt~scale=0@1", EPS, seed=1, workers=1)
    assert r.verdict.value == "violation" and r.eps_lb > EPS
