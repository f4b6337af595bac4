"""Helpers shared by the tests of the regret algorithms (tests/algorithms/test_lazy_dp.py,
tests/algorithms/test_adap_ucb.py): one call of a registered kernel, random reward tables, and the
exact comparison of a release log with a reference's. Kernel contract:
dpaudit.simulation.simulate."""
import numpy as np
import pytest

from dpaudit.algorithms import registry
from dpaudit.simulation.simulate import LAPLACE


def prepared(name, eps=1.0, **params):
    """(spec, resolved params, Prepared) of the registered algorithm ``name``."""
    spec = registry.get(name)
    p = spec.resolve_params(params)
    return spec, p, spec.prepare(eps, p)


def call(name, table, eps=1.0, seed=0, limit=None, frozen=None, rows=1 << 16, **params):
    """One kernel call: (τ, rec, status, actions[:τ], releases[:n_rel])."""
    spec, p, prep = prepared(name, eps, **params)
    table = np.ascontiguousarray(table, dtype=np.float64)
    limit = table.shape[0] if limit is None else limit
    actions = np.full(limit, -1, np.int16)
    rel = np.full((rows, 8), np.nan)
    fr = np.empty(0) if frozen is None else np.ascontiguousarray(frozen, dtype=np.float64)
    tau, rec, status, nr = (int(x) for x in spec.kernel(
        np.random.default_rng(seed), table, prep.means, prep.theta, prep.aux, limit, actions,
        rel, fr))
    return tau, rec, status, actions[:min(tau, limit)].copy(), rel[:min(nr, rows)].copy()


def random_table(seed, T, K=5):
    """A (T, K) reward table of one of three kinds by ``seed`` % 3: Bernoulli rows, uniform
    values, or quarter steps (ties in sums)."""
    rng = np.random.default_rng(seed)
    kind = seed % 3
    if kind == 0:
        return (rng.random((T, K)) < rng.random(K)).astype(float)
    if kind == 1:
        return rng.random((T, K))
    return np.round(rng.random((T, K)) * 4) / 4


def assert_releases(rel, ref_rels):
    """The kernel's release log ``rel`` equals the reference's (t, arm, phase, count, value,
    noisy, scale) rows exactly, every one a Laplace release."""
    assert rel.shape[0] == len(ref_rels)
    for row, want in zip(rel, ref_rels):
        assert tuple(row[:7]) == pytest.approx(want, rel=0, abs=0)
        assert row[7] == LAPLACE
