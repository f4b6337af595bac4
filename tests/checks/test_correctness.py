"""dpaudit.checks.correctness (`dpaudit check correctness`): Clopper–Pearson verdicts,
unstopped runs counted as errors, determinism, wrong-by-construction algorithms, CLI.

Statistical tests are seeded (deterministic); each states its false-failure probability, i.e.
the probability over the seed that a correct implementation fails it.
"""
import json
import math
import pathlib

import numpy as np
import pytest

from dpaudit.algorithms import registry
from dpaudit.checks import correctness as C
from dpaudit.commands.cli import main
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import OUTCOME_CHUNK

ROOT = pathlib.Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ verdict logic (exact)

def test_runs_to_certify_matches_formula():
    assert C.runs_to_certify(0.01, 0.05) == 299
    assert C.runs_to_certify(0.05, 0.05) == 59
    for r, a in [(0.01, 0.05), (0.05, 0.05), (0.001, 0.01), (0.2, 0.1)]:
        n = C.runs_to_certify(r, a)
        assert (1 - r) ** n <= a < (1 - r) ** (n - 1)
        # n error-free runs certify, n - 1 do not
        assert C.verdict(0, n, r, a)["verdict"] == "certified"
        assert C.verdict(0, n - 1, r, a)["verdict"] == "inconclusive"


def test_cp_bounds_exact_values():
    lo, hi = C.cp_bounds(0, 299, 0.05)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.05 ** (1 / 299), rel=1e-9)
    lo, hi = C.cp_bounds(10, 10, 0.05)
    assert hi == 1.0 and lo == pytest.approx(0.05 ** (1 / 10), rel=1e-9)
    from scipy.stats import beta
    lo, hi = C.cp_bounds(3, 100, 0.05)
    assert lo == pytest.approx(beta.ppf(0.05, 3, 98), rel=1e-9)
    assert hi == pytest.approx(beta.ppf(0.95, 4, 97), rel=1e-9)


@pytest.mark.parametrize("k, n, risk, expected", [
    (0, 1000, 0.01, "certified"),        # upper 0.002991 <= 0.01
    (2, 1000, 0.01, "certified"),        # upper 0.0063 <= 0.01
    (20, 1000, 0.01, "violation"),       # lower 0.0133 > 0.01
    (10, 1000, 0.01, "inconclusive"),    # 0.0055 .. 0.0169 contains 0.01
    (0, 100, 0.01, "inconclusive"),      # 100 < 299 error-free runs
    (100, 100, 0.95, "violation"),       # lower 0.05^(1/100) = 0.9705 > 0.95
    (100, 100, 0.99, "inconclusive"),    # 0.9705 < 0.99
])
def test_verdict_on_constructed_counts(k, n, risk, expected):
    v = C.verdict(k, n, risk, 0.05)
    assert v["verdict"] == expected
    assert v["ci_lower"] <= k / n <= v["ci_upper"]
    assert C.EXIT_CODES[v["verdict"]] == {"certified": 0, "violation": 1, "inconclusive": 3}[
        expected]


# ------------------------------------------------------------------ simulated checks

def test_certified_when_answer_is_deterministic():
    # means (1, 0): every reward is deterministic, TTUCB always stops with arm 0 (no
    # randomness in the answer: false-failure probability 0)
    r = C.check_correctness("ttucb", 0.05, params={"means": "1,0"},
                            trials=C.Trials(runs=300, seed=3))
    assert r["errors"] == 0 and r["status"]["stopped"] == 300
    assert r["verdict"] == "certified" and r["exit_code"] == 0
    assert r["params"]["risk"] == 0.05          # the algorithm runs at the checked risk
    st = r["stopping_time"]
    assert st["unstopped"] == 0 and st["max"] >= st["quantiles"]["50%"] >= 1
    json.dumps(r)                                # JSON-able


@pytest.mark.statistical
def test_unstopped_runs_are_counted_as_errors():
    # max_steps far below any stopping time: every run is CAPPED, none is dropped, each is an
    # error (deterministic: the cap binds whatever the rewards; false-failure probability 0)
    r = C.check_correctness("adap-tt", 0.05, eps=1.0, params={"max_steps": "50"},
                            trials=C.Trials(runs=130, seed=0))
    assert r["runs"] == 130 and r["status"]["capped"] == 130
    assert r["unstopped_counted_as_errors"] == 130 and r["errors"] == 130
    assert r["wrong_answers"] == 0
    assert r["stopping_time"]["unstopped"] == 130 and r["stopping_time"]["mean"] is None
    assert r["verdict"] == "violation" and r["exit_code"] == 1


def test_mixed_capped_and_stopped_counts_add_up():
    # TTUCB on an easy instance with a cap that some runs reach: all runs accounted for
    r = C.check_correctness("ttucb", 0.2, params={"means": "0.7,0.3", "max_steps": "60"},
                            trials=C.Trials(runs=200, seed=5))
    s = r["status"]
    assert s["stopped"] + s["capped"] + s["truncated"] == 200
    assert r["errors"] == r["wrong_answers"] + s["capped"] + s["truncated"]
    assert r["stopping_time"]["stopped"] == s["stopped"]


@pytest.mark.statistical
def test_wrong_by_construction_gives_violation():
    # APT (non-private) with budget T = K = 2: one pull per arm, then Ŝ = {μ̂ > 0.6}; with
    # means (0.55, 0.65), τ = 0.6, ζ = 0, Ŝ = {1} (correct) only if arm 0 gives 0 and arm 1
    # gives 1: P(error) = 1 − 0.45·0.65 = 0.7075. A violation at R = 0.05 needs the one-sided
    # lower bound (α = 0.05) > 0.05: with 400 runs, more than ~27 errors. P(Bin(400, 0.7075)
    # ≤ 27) < 1e-100: false-failure probability < 1e-6.
    r = C.check_correctness("apt", 0.05, params={"means": "0.55,0.65", "threshold": "0.6",
                                                 "tolerance": "0", "horizon": "2"},
                            trials=C.Trials(runs=400, seed=11))
    assert r["kind"] == "fixed-budget" and r["status"]["stopped"] == 400
    assert r["verdict"] == "violation"
    # the observed rate lies within ±8 standard deviations of 0.7075 (sd 0.0227): failure
    # probability < 1e-14
    assert abs(r["error_rate"] - 0.7075) < 8 * math.sqrt(0.7075 * 0.2925 / 400)
    assert r["paper_bound"]["applicable"] is False


def test_deterministic_for_a_seed_and_independent_of_workers():
    kw = dict(params={"means": "0.6,0.4"})
    n = 3 * OUTCOME_CHUNK + 5
    a = C.check_correctness("ttucb", 0.1, **kw, trials=C.Trials(n, seed=7, workers=1))
    b = C.check_correctness("ttucb", 0.1, **kw, trials=C.Trials(n, seed=7, workers=2))
    c = C.check_correctness("ttucb", 0.1, **kw, trials=C.Trials(n, seed=8, workers=1))

    def strip(r):
        return {k: v for k, v in r.items() if k not in ("seconds", "workers")}
    assert strip(a) == strip(b)
    # another seed gives other stopping times: P(identical τ statistics) is negligible
    # (< 1e-6: mean τ over 197 runs of a random stopping time)
    assert a["stopping_time"] != c["stopping_time"]


def test_lower_bound_and_paper_bound_labels():
    r = C.check_correctness("adap-tt", 0.05, eps=1.0, params={"max_steps": "50"},
                            trials=C.Trials(runs=1))
    lb = r["lower_bound"]
    from dpaudit.algorithms.adap_tt.theory import t_star_eps
    T, _ = t_star_eps(r["means"], 1.0)
    assert lb["applicable"] and lb["value"] == pytest.approx(T * math.log(1 / 0.15))
    assert "Thm 2" in lb["name"]
    r = C.check_correctness("ldp-tb-confidence", 0.05, eps=1.0, params={"max_steps": "50"},
                            trials=C.Trials(runs=1))
    assert r["lower_bound"]["applicable"] is False
    r = C.check_correctness("dp-bai", 0.5, eps=1.0, trials=C.Trials(runs=1))   # default: d = 2
    assert r["paper_bound"]["applicable"] is False and "d = 2" in r["paper_bound"]["reason"]


def test_input_errors():
    with pytest.raises(InputError):
        C.check_correctness("adap-tt", 0.05)                       # private: needs eps
    with pytest.raises(InputError):
        C.check_correctness("lazy-ucb", 0.05, eps=1.0)             # regret algorithm
    with pytest.raises(InputError):
        C.check_correctness("adap-tt", 0.05, eps=1.0, params={"risk": "0.01"})
    with pytest.raises(InputError):
        C.check_correctness("adap-tt", 1.5, eps=1.0)


# ------------------------------------------------------------------ CLI

@pytest.mark.cli
def test_cli_exit_codes_and_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["check", "correctness", "--algo", "ttucb", "--risk", "0.05", "--param",
                 "means=1,0", "--runs", "300", "--workers", "1", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["verdict"] == "certified"
    assert "certified" in capsys.readouterr().out
    assert main(["check", "correctness", "--algo", "adap-tt", "--risk", "0.05", "--eps", "1",
                 "--param", "max_steps=50", "--runs", "100", "--workers", "1"]) == 1
    # 20 deterministic runs cannot certify 0.05 (needs 59): inconclusive
    assert main(["check", "correctness", "--algo", "ttucb", "--risk", "0.05", "--param",
                 "means=1,0", "--runs", "20", "--workers", "1"]) == 3


@pytest.mark.parametrize("argv", [
    ["--algo", "adap-tt", "--risk", "0.05"],                              # no --eps
    ["--algo", "adap-tt", "--risk", "2", "--eps", "1"],
    ["--algo", "adap-tt", "--risk", "x", "--eps", "1"],
    ["--algo", "nope", "--risk", "0.05", "--eps", "1"],
    ["--algo", "adap-tt", "--risk", "0.05", "--eps", "1", "--param", "bogus=1"],
    ["--algo", "adap-tt", "--risk", "0.05", "--eps", "1", "--runs", "0"],
    ["--algo", "lazy-ucb", "--risk", "0.05", "--eps", "1"],
    ["--algo", "adap-tt", "--risk", "0.05", "--eps", "1", "--json", "/no/such/dir/x.json"],
])
@pytest.mark.cli
def test_cli_input_errors_one_line_nothing_written(argv, tmp_path, capsys):
    out = tmp_path / "r.json"
    full = ["check", "correctness", *argv]
    if "--json" not in argv:
        full += ["--json", str(out)]
    assert main(full) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.startswith("dpaudit: error: ")
    assert cap.err.count("\n") == 1
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.cli
def test_help_states_runs_needed(capsys):
    with pytest.raises(SystemExit):
        main(["check", "correctness", "--help"])
    text = capsys.readouterr().out
    assert "R=0.01: 299" in text and "ln(alpha)/ln(1 - R)" in text


def test_papers_upper_bounds_next_to_the_stopping_times():
    """LDP-TB-confidence on instance B at ε = 1, δ = 0.05: Thm 4.1 eq. (24) as printed and the
    App. D implicit bound equal the worked numbers (557209 and 76015.7, computed independently of this code);
    AdaP-TT gets Theorem 5's asymptotic bound, whose slope is > the Thm 2 lower bound's.
    Deterministic given the seed (no statistical assertion)."""
    r = C.check_correctness("ldp-tb-confidence", 0.05, eps=1.0, trials=C.Trials(runs=20, seed=3))
    got = [ub["value"] for ub in r["upper_bounds"]]
    assert got[0] == pytest.approx(557209, rel=1e-5)
    assert got[1] == pytest.approx(76015.7, rel=1e-5)
    a = C.check_correctness("adap-tt", 0.05, eps=1.0, params={"max_steps": 1000},
                            trials=C.Trials(runs=2, seed=3))
    (ub,) = a["upper_bounds"]
    assert ub["applicable"] and ub["value"] > a["lower_bound"]["value"]
    t = C.check_correctness("ttucb", 0.05, params={"max_steps": 1000},
                            trials=C.Trials(runs=2, seed=3))
    assert not t["upper_bounds"][0]["applicable"]


def test_the_catalogues_names_are_the_theories_names():
    # the command line lists these before any kernel loads; the theory modules are the source
    theories = registry.theories()
    assert set(theories) == set(registry.PAPERS)
    kinds = {}
    for module in theories.values():
        for name, theory in module.IDENTIFICATION.items():
            assert name not in kinds, f"{name} declared by two theories"
            kinds[name] = theory.kind
    assert sorted(registry.FIXED_CONFIDENCE) == sorted(
        n for n, k in kinds.items() if k == "fixed-confidence")
    assert sorted(registry.FIXED_BUDGET) == sorted(n for n, k in kinds.items()
                                                   if k == "fixed-budget")
    names = {s.name for s in registry.all_specs()}
    assert set(kinds) <= names


def test_the_checks_never_ask_an_algorithms_name():
    # paper-agnostic: what an error is and which bound applies come from the theory
    names = {s.name for s in registry.all_specs()}
    for module in ("correctness.py", "constants.py"):
        source = (ROOT / "dpaudit" / "checks" / module).read_text()
        assert not [n for n in names if f'"{n}"' in source], module


def test_an_identification_without_a_lower_bound_or_with_an_unknown_kind_is_refused():
    from dpaudit.algorithms.theory import Identification, best_arm_errors
    with pytest.raises(ValueError, match="lower_bound"):
        Identification("fixed-confidence", best_arm_errors)
    with pytest.raises(ValueError, match="kind='regret'"):
        Identification("regret", best_arm_errors)


def test_dp_bai_is_checked_against_theorem_4_2_when_d_exceeds_2():
    # identity features, d = K = 4: eq. (16)'s bound exp(-T'/(65 M H)) with the paper's H
    from dpaudit.algorithms.dp_bai import linear
    r = C.check_correctness("dp-bai", 0.5, eps=1.0, params={
        "features": "identity", "means": "0.5,0.45,0.4,0.3", "horizon": "4000"},
        trials=C.Trials(runs=1))
    b = r["paper_bound"]
    assert b["applicable"] and "Thm 4.2" in b["name"]
    assert b["H"] == pytest.approx(linear.hardness(np.array([0.5, 0.45, 0.4, 0.3]), 4, 1.0)["H"])
    assert b["value"] == pytest.approx(math.exp(-b["T_prime"] / (65 * b["M"] * b["H"])))
    assert b["T_prime"] < 4000 and b["M"] >= 1
