"""The generic mechanism auditor on mechanisms of known privacy loss (dpaudit.calibrate.mechanisms).

False-failure rates (each ≤ 1e-6):
* "ε_lb ≤ ε" on correct mechanisms runs at α = 1e-6 (Clopper–Pearson validity).
* Soundness counts false violations among 120 audits at α = 0.05: under a valid auditor they
  are ≤ Binomial(120, 0.05), whose 1 − 1e-6 quantile is the threshold.
* Tightness (ε_lb/ε ≥ 0.95 at the default budget): measured over 30 seeds per ε (docs/method/calibration.md,
  `python benchmarks/calibration.py`): at ε = 0.1, the worst case, mean 0.982, sd 0.006,
  minimum 0.966; 0.95 is 5.4 sd below the mean.
* Power at factor 0.5 (true loss 2ε): ε_lb ≈ 2ε − 0.05 at n = 10^6; missing needs a > 30 sd
  deviation.
"""
import math

import numpy as np
import pytest
from scipy.stats import binom

import dpaudit
from dpaudit.calibrate.calibration import Plan, soundness
from dpaudit.calibrate.mechanisms import FAMILIES, known_mechanism
from dpaudit.auditing import mechanism
from dpaudit.errors import InputError, UserCodeError
from dpaudit.statistics.measure import look_sizes
from dpaudit.statistics.stats import detectable_loss


def laplace(rng, data, n):
    return data[0] + rng.laplace(0.0, 1.0, n)       # sensitivity 1, ε = 1


@pytest.mark.statistical
@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
def test_default_audit_of_laplace_is_tight(eps):
    km = known_mechanism("laplace", eps)
    r = dpaudit.audit_mechanism(km.mechanism, km.d, km.d_prime, eps=eps, seed=7)
    assert r.eps_lb / eps >= 0.95
    assert r.alpha == 0.05 and r.to_dict()["claim"] == {"eps": eps, "delta": 0.0}


@pytest.mark.statistical
@pytest.mark.slow
def test_correct_laplace_bound_stays_below_eps_at_tiny_alpha():
    r = dpaudit.audit_mechanism(laplace, [0.0], [1.0], eps=1.0, alpha=1e-6, seed=3)
    assert r.verdict == "pass" and 0.9 <= r.eps_lb <= 1.0
    assert "continuous" in r.event["text"] and r.event["ordering"].startswith("threshold")


@pytest.mark.statistical
@pytest.mark.slow
def test_soundness_over_120_small_audits():
    # the 1000-audit figure (0 false violations) is `python benchmarks/calibration.py`'s
    # (docs/method/calibration.md); here a smaller count that a broken auditor still fails
    s = soundness(120, Plan(n=20_000, alpha=0.05, workers=2))
    assert s["overall"]["n"] == 120
    assert s["overall"]["k"] <= binom.isf(1e-6, 120, 0.05)


@pytest.mark.statistical
@pytest.mark.parametrize("family", FAMILIES)
def test_half_noise_mutants_are_caught(family):
    km = known_mechanism(family, 1.0, factor=0.5)
    assert km.true_eps >= 1.25
    r = dpaudit.audit_mechanism(km.mechanism, km.d, km.d_prime, eps=1.0, delta=km.delta,
                                n=1_000_000, seed=11)
    assert r.verdict == "violation" and r.exit_code == 1
    assert r.counts["measurement"]["stopped"] == "violation"


@pytest.mark.statistical
def test_gaussian_delta_claim():
    ok = known_mechanism("gaussian", 1.0, delta=1e-3)
    r = dpaudit.audit_mechanism(ok.mechanism, ok.d, ok.d_prime, eps=1.0, delta=1e-3,
                                alpha=1e-6, n=2_000_000, seed=5)
    assert r.verdict == "pass" and r.to_dict()["claim"]["delta"] == 1e-3
    # the same noise audited as if it were pure DP: its loss is unbounded, the pure claim fails
    pure = dpaudit.audit_mechanism(ok.mechanism, ok.d, ok.d_prime, eps=1.0, n=2_000_000,
                                   seed=5)
    assert pure.verdict == "violation"


@pytest.mark.statistical
@pytest.mark.slow
def test_two_dimensional_outputs():
    def laplace2(rng, data, n):   # two releases, each ε/2: ε in total
        return data[0] + rng.laplace(0.0, 2.0, (n, 2))
    r = dpaudit.audit_mechanism(laplace2, [0.0], [1.0], eps=1.0, alpha=1e-6, n=2_000_000,
                                seed=2)
    # one coordinate alone can show at most 0.5; the joint likelihood-ratio cells of the grid
    # gave 0.960–0.964 over seeds 2–4 (sd ≈ 0.01): 0.8 is a > 15 sd margin
    assert r.verdict == "pass" and r.eps_lb > 0.8

    def leaky(rng, data, n):      # the same releases with half the noise each
        return data[0] + rng.laplace(0.0, 1.0, (n, 2))
    assert dpaudit.audit_mechanism(leaky, [0.0], [1.0], eps=1.0, n=2_000_000,
                                   seed=2).verdict == "violation"


@pytest.mark.statistical
def test_loss_table_flags_cells_only_when_the_loss_exceeds_eps():
    bad = known_mechanism("geometric", 1.0, factor=0.5)    # every cell y != 0 has loss 2
    r = dpaudit.audit_mechanism(bad.mechanism, bad.d, bad.d_prime, eps=1.0, n=1_000_000,
                                seed=4)
    flagged = [row for row in r.loss_table if row["flag_above_eps"]]
    assert flagged and all(abs(row["ln_ratio"]) > 1.0 for row in flagged)
    ok = known_mechanism("geometric", 1.0)
    r2 = dpaudit.audit_mechanism(ok.mechanism, ok.d, ok.d_prime, eps=1.0, alpha=1e-6,
                                 n=1_000_000, seed=4)
    assert r2.loss_table and not any(row["flag_above_eps"] for row in r2.loss_table)
    for row in r2.loss_table:
        assert row["ci"][0] <= row["ln_ratio"] <= row["ci"][1]
        assert row["ln_ratio"] == pytest.approx(math.log(row["p_d"] / row["p_d_prime"]))


def test_same_seed_same_result_and_json_contract():
    km = known_mechanism("randomised-response", 0.5)
    a = dpaudit.audit_mechanism(km.mechanism, km.d, km.d_prime, eps=0.5, n=50_000, seed=9)
    b = dpaudit.audit_mechanism(km.mechanism, km.d, km.d_prime, eps=0.5, n=50_000, seed=9)
    da, db = a.to_dict(), b.to_dict()
    da.pop("runtime_s"), db.pop("runtime_s")
    assert da == db
    for key in ("schema_version", "algorithm", "params", "claim", "verdict", "eps_lb",
                "eps_hat", "alpha", "neighbours", "event", "counts", "loss_table", "seed",
                "runtime_s", "versions"):
        assert key in a.to_dict()


def test_detectable_loss_is_the_power_of_the_reported_counts():
    # the JSON's detectable loss is the 1 − β point of the power curve of the event it reports
    # (its denominator counts, the planned looks, the per-test level), above ε, and shrinks
    # with the runs and with the power asked for
    km = known_mechanism("randomised-response", 0.5)
    got = {}
    for n, beta in ((20_000, 0.05), (20_000, 0.5), (200_000, 0.05)):
        d = dpaudit.audit_mechanism(km.mechanism, km.d, km.d_prime, eps=0.5, n=n, seed=9,
                                    beta=beta).to_dict()
        m = d["counts"]["measurement"]
        k_den = m["hits_d"] if d["event"]["numerator"] == "d'" else m["hits_d_prime"]
        assert (d["beta"], d["power"]) == (beta, 1 - beta)
        assert d["coverage"]["measured"] is False and "black-box" in d["coverage"]["reason"]
        assert d["detectable_loss"] == detectable_loss(k_den, m["runs_d"],
                                                       (look_sizes(n), m["alpha_per_look"]), 0.5,
                                                       0.0, beta)
        got[n, beta] = d["detectable_loss"]
    assert 0.5 < got[200_000, 0.05] < got[20_000, 0.05]
    assert 0.5 < got[20_000, 0.5] < got[20_000, 0.05]


@pytest.mark.parametrize("kw", [{"eps": 0}, {"eps": 1, "delta": -0.1}, {"eps": 1, "n": 0},
                                {"eps": 1, "alpha": 0}, {"eps": 1, "beta": 0},
                                {"eps": 1, "beta": 1.0}])
def test_bad_arguments(kw):
    with pytest.raises(InputError):
        dpaudit.audit_mechanism(laplace, [0.0], [1.0], **kw)


def test_identical_inputs_are_refused():
    # an audit of d = d' could never fail: refused before any sample is drawn
    calls = []

    def spy(rng, data, n):
        calls.append(n)
        return laplace(rng, data, n)

    for d in ([0.0], [[1, 0], [0, 1]]):
        with pytest.raises(InputError, match="d and d_prime are identical"):
            dpaudit.audit_mechanism(spy, d, np.array(d), eps=1.0, n=5000)
    assert calls == []


def test_bad_mechanism_output_is_an_input_error():
    with pytest.raises(InputError, match="shape"):
        dpaudit.audit_mechanism(lambda rng, d, n: np.zeros(n + 1), [0], [1], eps=1, n=5000)


def test_the_mechanism_receives_read_only_copies_of_the_inputs():
    d, d_prime = np.array([0.0]), np.array([1.0])

    def zeroes(rng, data, n):
        data[0] = 0.0                  # not private: would make d' look like d
        return data[0] + rng.laplace(0.0, 1.0, n)
    with pytest.raises(ValueError, match="read-only"):
        dpaudit.audit_mechanism(zeroes, d, d_prime, eps=1.0, n=2000, seed=1)
    assert d_prime[0] == 1.0


@pytest.mark.slow
def test_the_audit_is_the_same_on_one_or_two_worker_processes(monkeypatch):
    """Chunk i of a draw comes from its seed's i-th child: the workers do not move an output.

    The mechanism is a closure (shipped by value, cloudpickle) and CHUNK is cut so that every
    draw has a few chunks.
    """
    monkeypatch.setattr(mechanism, "CHUNK", 4096)
    scale = 1.0 / 0.5

    def noisy_sum(rng, data, n):
        return float(np.sum(data)) + rng.laplace(0.0, scale, n)
    got = [dpaudit.audit_mechanism(noisy_sum, [0.0, 1.0], [0.0, 0.0], eps=0.5, n=40_000,
                                   seed=4, workers=w).to_dict() for w in (1, 2)]
    for r in got:
        r.pop("runtime_s")
    assert got[0] == got[1]


@pytest.mark.slow
def test_an_exception_in_the_mechanism_on_a_worker_names_its_line(monkeypatch):
    monkeypatch.setattr(mechanism, "CHUNK", 4096)

    def broken(rng, data, n):
        if data[0] > 0.5:
            raise ArithmeticError("no noise scale for this input")
        return rng.laplace(0.0, 1.0, n)
    # run here it would raise the ArithmeticError itself; from a worker it comes back as one line
    with pytest.raises(UserCodeError, match=r"ArithmeticError: no noise scale for this input "
                                            r"\(in broken at .*test_mechanism_audit\.py:\d+\)"):
        dpaudit.audit_mechanism(broken, [0.0], [1.0], eps=1.0, n=40_000, seed=1, workers=2)


def test_a_list_of_pairs_measures_the_pair_with_the_largest_loss():
    # Laplace of scale 1 claimed 1-DP: the loss on a pair is |d − d'|; only the pair 2 apart
    # violates (true loss 2); the rounds keep it on pilot runs alone
    pairs = [([0.0], [0.5]), ([0.0], [2.0]), ([0.0], [1.0])]
    r = dpaudit.audit_mechanism(laplace, pairs=iter(pairs), eps=1.0, n=100_000, seed=1)
    d = r.to_dict()
    assert r.verdict == "violation" and d["neighbours"]["d_prime"] == [2.0]
    assert d["search"]["strategy"] == "pairs" and d["search"]["candidates"] == 3
    assert d["search"]["pairs"]["given"] == "list" and d["search"]["finalists"][0]["index"] == 1


def test_pairs_search_moves_the_entries_of_the_base_input():
    def noisy_max(rng, data, n):       # report noisy max, Lap(2/ε): ε-DP for queries that
        q = np.asarray(data)[None, :] + rng.laplace(0.0, 2.0, (n, len(data)))   # move ±1
        return np.argmax(q, axis=1)
    r = dpaudit.audit_mechanism(noisy_max, [1.0] * 4, pairs="search", eps=1.0, n=50_000,
                                seed=3)
    d = r.to_dict()
    assert d["search"]["candidates"] == 8 and d["search"]["pairs"]["changes"] == "each"
    assert d["neighbours"]["pattern"] in {t["pattern"] for t in d["search"]["tried"]}
    assert r.verdict != "violation"
    one = dpaudit.audit_mechanism(noisy_max, [1.0] * 4, pairs="search", changes="one",
                                  eps=1.0, n=20_000, seed=3)
    assert one.to_dict()["search"]["candidates"] == 2


def test_searched_pairs_draw_the_shared_base_once():
    drawn = {}                          # outputs drawn per input

    def noisy_max(rng, data, n):
        drawn[tuple(data)] = drawn.get(tuple(data), 0) + n
        q = np.asarray(data)[None, :] + rng.laplace(0.0, 2.0, (n, len(data)))
        return np.argmax(q, axis=1)
    r = dpaudit.audit_mechanism(noisy_max, [1.0] * 4, pairs="search", eps=1.0, n=40_000,
                                seed=5)
    d = r.to_dict()
    rounds = d["search"]["budget"]["rounds"]
    assert d["search"]["budget"]["shared_d_runs"] and rounds[0]["candidates"] == 8
    # seven patterns share d (the base), "x shape" has its own: the measured d' was drawn in
    # every round and the measurement, as often as its d there; d once per round for all its
    # candidates, and twice more by the reproducibility check
    extra = 2 * mechanism.REPRO_RUNS if d["neighbours"]["pattern"] != "x shape" else 0
    assert drawn[tuple(d["neighbours"]["d"])] == drawn[tuple(d["neighbours"]["d_prime"])] + extra
    # one round: every pair's pilot draws each of its inputs 3/2 times as often as one
    # pair's pilot (n/4 per side), the shared d once for all its pairs
    assert len(rounds) == 1
    assert rounds[0]["runs_per_side"] == 40_000 // mechanism.PILOT_FRACTION * 3 // 2


@pytest.mark.parametrize("kw, match", [
    ({"d": [0.0]}, "give d and d_prime"),
    ({"pairs": "all"}, "pairs='all' is not valid"),
    ({"pairs": "search", "d": [0.0], "d_prime": [1.0]}, "needs d"),
    ({"pairs": [([0.0], [1.0])], "d": [0.0]}, "not both"),
    ({"pairs": [([0.0], [1.0]), ([0.0],)]}, r"pairs\[1\] is not a \(d, d_prime\) pair"),
    ({"pairs": [([1.0], [1.0])]}, r"pairs\[0\]: d and d_prime are identical"),
    ({"pairs": []}, "expected 1 to 64"),
    ({"pairs": [([0.0], [1.0])] * 65}, "more than 64"),
    ({"d": [0.0], "d_prime": [1.0], "features": 3}, "features=3 is not callable")])
def test_bad_pairs_are_one_line_errors(kw, match):
    with pytest.raises(InputError, match=match):
        dpaudit.audit_mechanism(laplace, eps=1.0, n=2000, **kw)


def test_a_wrong_signature_names_the_call_expected():
    class DPSniperStyle:
        def m(self, a, n_samples=1):
            return np.zeros(n_samples)
    with pytest.raises(InputError, match=r"m: takes \(a, n_samples=1\): expected "
                                         r"mechanism\(rng, data, n\)"):
        dpaudit.audit_mechanism(DPSniperStyle().m, [0.0], [1.0], eps=1.0, n=2000)


def test_a_mechanism_drawing_from_global_numpy_is_not_reproducible():
    def global_noise(rng, data, n):
        return data[0] + np.random.laplace(0.0, 1.0, n)
    r = dpaudit.audit_mechanism(global_noise, [0.0], [1.0], eps=1.0, n=20_000, seed=1)
    assert r.reproducible is False and r.to_dict()["reproducible"] is False
    assert dpaudit.audit_mechanism(laplace, [0.0], [1.0], eps=1.0, n=20_000,
                                   seed=1).reproducible is True
    calls = []

    def counted(rng, data, n):
        calls.append(n)
        return global_noise(rng, data, n)
    with pytest.raises(UserCodeError, match="draws randomness other than rng"):
        dpaudit.audit_mechanism(counted, [0.0], [1.0], eps=1.0, n=20_000, seed=1, strict=True)
    assert calls == [mechanism.REPRO_RUNS] * 2       # refused before the audit's draws


def test_the_reasons_name_the_python_parameter():
    # outputs that do not read the input: no event; the fix names n, not the CLI's --runs
    r = dpaudit.audit_mechanism(lambda rng, data, n: rng.integers(0, 2, n), [0], [1], eps=1.0,
                                n=20_000, seed=2)
    assert r.verdict == "inconclusive" and "more runs (n)" in r.reason
    assert "--runs" not in r.reason


@pytest.mark.statistical
def test_learned_events_find_a_leak_spread_over_twenty_coordinates():
    # twenty Laplace releases of one value, each of scale 20: 1-DP in all; claimed 0.15-DP.
    # A grid of 2^20 cells gives most outputs a cell of their own (no event); the
    # classifier's score (the sum, in effect) finds it: ε_lb 0.265 at seed 1
    def parallel(rng, data, n):
        return data[0] + rng.laplace(0.0, 20.0, (n, 20))
    r = dpaudit.audit_mechanism(parallel, [0.0], [1.0], eps=0.15, n=300_000, seed=1)
    assert r.verdict == "violation" and r.event.get("learned") is True
    assert "logistic regression" in r.event["text"]


def test_every_candidate_event_is_measured_and_the_best_reported():
    # the last round's candidates (plug-ins from three sigma pessimistic to one optimistic on
    # the scoring half) are all measured on one set of runs (one test each); the result is
    # the best of them
    r = dpaudit.audit_mechanism(laplace, [0.0], [1.0], eps=1.0, n=100_000, seed=1)
    d = r.to_dict()
    final = d["search"]["finalists"][0]
    rows = final["event_candidates"]
    assert 2 <= len(rows) <= 5      # at this seed the thresholds differ by level (4)
    best = max(rows, key=lambda row: row["eps_lb"])
    assert r.eps_lb == best["eps_lb"] == final["eps_lb"]
    assert (r.event["ordering"], r.event["n_cells"]) == (best["ordering"], best["n_cells"])
    assert r.event["scoring_hits"] == best["scoring_hits"]
    assert d["counts"]["measurement"]["finalists"] == len(rows)
