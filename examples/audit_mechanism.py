"""Audit a mechanism from Python: a Laplace mechanism of sensitivity 1 at ε = 1, and a copy with
half the noise (a privacy bug: its loss is 2ε).

    python examples/audit_mechanism.py

prints one line per audit: the verdict, the lower bound ε_lb, the upper bound on the measured
event's loss and the confidence levels. The correct mechanism passes, the mutant is a violation.
"""
import dpaudit


def laplace(rng, data, n):
    """n outputs of the Laplace mechanism on the one-number input ``data``."""
    return data[0] + rng.laplace(0.0, 1.0, n)


def laplace_half_noise(rng, data, n):
    """The same with half the noise: ε-DP for ε = 2, not 1."""
    return data[0] + rng.laplace(0.0, 0.5, n)


def main(n: int = 200_000) -> dict:
    verdicts = {}
    for fn in (laplace, laplace_half_noise):
        r = dpaudit.audit_mechanism(fn, [0.0], [1.0], eps=1.0, n=n, seed=1)
        verdicts[fn.__name__] = r.verdict
        print(f"{fn.__name__}: {r.verdict}  eps_lb {r.eps_lb:.3f} (confidence {1 - r.alpha:.0%})"
              f"  upper loss bound {r.eps_ub:.3f} (confidence {1 - r.beta:.0%})")
    return verdicts


if __name__ == "__main__":
    main()
