"""What weighting α toward the last look buys: the detectable loss at power 0.95 of one
measured event, with a finalist's α split evenly over the 4 looks or by
:data:`dpaudit.statistics.measure.LOOK_WEIGHTS` (the measurement's split).

    python benchmarks/look_weights.py

Both designs spend the same α in all (the levels sum to it), so the false-violation bound is
α either way (weighted Bonferroni over the looks); what changes is the power. Each row: the
claim ε, the event's probability p on the denominator side, the budget n (runs per side), the
detectable loss under each split (:class:`dpaudit.statistics.stats.PowerCurve`, exact binomial
laws) and
its excess over ε. Seconds on one core; no randomness.
"""
from dpaudit.statistics.measure import design
from dpaudit.statistics.stats import PowerCurve

ALPHA, BETA = 0.05, 0.05
CONFIGS = ((0.5, 0.1, 100_000), (1.0, 0.02, 200_000), (0.25, 0.3, 1_000_000),
           (1.0, 0.3, 2000), (1.0, 0.05, 20_000))


def main():
    print(f"alpha = {ALPHA} for one finalist, power {1 - BETA}\n")
    print("| ε | p | n | even α/4: detectable loss | weighted | excess over ε: even → "
          "weighted |\n|---|---|---|---|---|---|")
    for eps, p, n in CONFIGS:
        sizes, levels = design(n, ALPHA)
        even = PowerCurve(p, sizes, eps, ALPHA / len(sizes)).detectable_loss(BETA)
        weighted = PowerCurve(p, sizes, eps, levels).detectable_loss(BETA)
        print(f"| {eps:g} | {p:g} | {n} | {even:.4f} | {weighted:.4f} | "
              f"{(even - eps) / eps:.1%} → {(weighted - eps) / eps:.1%} |", flush=True)


if __name__ == "__main__":
    main()
