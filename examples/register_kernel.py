"""Register your own algorithm as a compiled kernel, to get what the catalogue gets: the
white-box screen of candidate pairs, the exact accounting and gray-box replay of its noisy
releases, and the search over its claim's space (docs/guide/register.md).

    python examples/register_kernel.py

A private explore-then-commit bandit in the ``user`` table model: round t pulls arm t mod K and
reads ``table[t, t mod K]``; after ``horizon`` rounds it releases every arm's reward sum with
Laplace noise of scale ``noise``/ε and recommends the largest. Each row enters one sum and moves
it by at most 1, so ``noise`` = 1 is ε-DP (parallel composition, then post-processing); the
mutant ``noise`` = 0.5 is not.
"""
import numba as nb
import numpy as np

from dpaudit import audit_algorithm
from dpaudit.algorithms.kernels import log_release
from dpaudit.algorithms.space import Scale, theorem
from dpaudit.algorithms.spec import AlgorithmSpec, Param, Prepared
from dpaudit.core.terms import PrivacyModel
from dpaudit.simulation.simulate import STOPPED, TRUNCATED

EPS, NOISE = 0, 1          # theta's layout (owned by this module)


@nb.njit(cache=True)
def etc_kernel(rng, table, means, theta, aux, limit, actions, releases, frozen):
    """One run (the kernel contract of dpaudit.simulation.simulate)."""
    T, K = table.shape
    sums = np.zeros(K)
    for t in range(T):
        if t >= limit:
            return t, -1, TRUNCATED, 0
        a = t % K
        if t < actions.shape[0]:
            actions[t] = a
        sums[a] += table[t, a]
    scale = theta[NOISE] / theta[EPS]
    best, best_value = 0, -np.inf
    for a in range(K):
        noise = rng.laplace(0.0, scale)             # always drawn, frozen or not
        y = log_release(releases, frozen, a, T, a, 1, T // K, sums[a], noise, scale)
        if y > best_value:
            best, best_value = a, y
    return T, best, STOPPED, K


def make_spec(noise: float = 1.0) -> AlgorithmSpec:
    """The spec: parameters, claim space, how to prepare the kernel's arrays, the horizon."""
    def prepare(eps: float, p: dict) -> Prepared:
        return Prepared(theta=np.array([eps, noise]), aux=np.zeros(0),
                        means=np.asarray(p["means"], dtype=np.float64))

    return AlgorithmSpec(
        name="my-etc" if noise == 1.0 else "my-etc-half-noise",
        title="private explore-then-commit (example)", paper="examples/register_kernel.py",
        model=PrivacyModel.USER, private=True, kernel=etc_kernel,
        params=(Param("means", (0.9, 0.5), "floats", "arm means", low=0.0, high=1.0,
                      min_len=2),
                Param("horizon", 8, "int", "rounds", low=2, high=4096,
                      claim=theorem("every horizon", Scale.INT_LOG, (4, 32)))),
        prepare=prepare, structure=lambda p: [(0, "first row")],
        audit_horizon=lambda p: p["horizon"], theorem="ε-DP: parallel composition")


def main(runs: int = 20_000) -> dict:
    out = {}
    for noise in (1.0, 0.5):
        r = audit_algorithm(make_spec(noise), 1.0, runs=runs, seed=1, workers=1)
        out[r.algorithm] = r
        print(f"{r.algorithm}: {r.verdict}  eps_lb {r.eps_lb:.3f}  white-box largest loss of "
              f"the releases {r.whitebox['max_loss']:.3f} (exact)  instance "
              f"horizon={r.params['horizon']}")
    return out


if __name__ == "__main__":
    main()
