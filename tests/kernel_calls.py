"""One call of a registered kernel, shared by the tests of the regret algorithms
(tests/test_lazy_dp.py, tests/test_adap_ucb.py). Kernel contract: dpaudit.simulate."""
import numpy as np

from dpaudit import registry


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
