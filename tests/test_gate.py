"""The CI gate (dpaudit.gate), the audit suite in audits/, and assert_dp (dpaudit.testing).

Gate runs here use a two-entry suite on PrivBern (fast local-model audits). Their verdicts
are deterministic for the fixed seeds; the statistical statements behind them (a correct
algorithm passes, a mutant is caught) hold with error ≤ alpha/(2N) = 2.5e-7 per entry at
the suite alpha 1e-6 used here, so each test's false-failure probability is ≤ 1e-6.
"""
import dataclasses
import json
import math
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import pytest

from dpaudit import gate, registry
from dpaudit.errors import InputError
from dpaudit.testing import assert_dp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = """[suite]
alpha = 1e-6
runs = 20000

[[audit]]
algo = "privbern"
eps = 1
seed = 1
expect = "pass"

[[audit]]
algo = "privbern-wrong-exp"
eps = 1
seed = 1
expect = "violation"
"""


def suite_dir(tmp_path, text=SMALL):
    (tmp_path / "suite.toml").write_text(text)
    return str(tmp_path)


def run_gate(path, **kw):
    lines = []
    code = gate.gate(path, workers=1, echo=lines.append, **kw)
    return code, "\n".join(lines)


def test_suite_has_every_registered_claim_and_mutant():
    """audits/suite.toml covers every registered name; mutants and non-private comparators
    are expected to be caught, the other private algorithms to pass (except documented
    findings, which carry a comment in the suite)."""
    s = gate.load_suite(os.path.join(ROOT, "audits"))
    by_algo = {}
    for e in s.entries:
        by_algo.setdefault(e.algo, []).append(e)
    for spec in registry.all_specs():
        assert spec.name in by_algo, f"{spec.name} is not in audits/suite.toml"
        plain = [e for e in by_algo[spec.name] if not e.params]
        assert plain, f"{spec.name} has no entry with its default parameters"
        if spec.mutant_of or not spec.private:
            assert all(e.expect == "violation" for e in plain), spec.name
    assert s.entry_alpha == pytest.approx(s.alpha / (2 * len(s.entries)))
    assert s.alpha <= 1e-3


@pytest.mark.parametrize("text, needle", [
    ("[[audit]]\nalgo = 'privbern'\neps = 1\nexpect = 'pass'\nbudget = 3\n", "unknown key 'budget'"),
    ("[[audit]]\nalgo = 'privbern'\neps = 1\nexpect = 'maybe'\n", "expect='maybe'"),
    ("[[audit]]\nalgo = 'privbrn'\neps = 1\nexpect = 'pass'\n", "did you mean privbern"),
    ("[[audit]]\nalgo = 'privbern'\neps = -1\nexpect = 'pass'\n", "eps=-1"),
    ("[[audit]]\nalgo = 'privbern'\neps = 1\nexpect = 'pass'\nparams = { nope = '1' }\n", "nope"),
    ("[suite]\nalpha = 2\n[[audit]]\nalgo = 'privbern'\neps = 1\nexpect = 'pass'\n", "alpha=2"),
    ("[[audit]]\nalgo = 'privbern'\neps = 1\n", "required"),
    ("[[audit\n", "not valid TOML"),
    ("[[audit]]\nalgo = 'privbern'\neps = 1\nexpect = 'inconclusive'\n", "needs reason"),
    ("[[audit]]\nalgo = 'privbern'\neps = 1\nexpect = 'pass'\nreason = 'x'\n",
     "only it takes a reason"),
    (f"[[audit]]\nalgo = 'privbern'\neps = 1\nexpect = 'pass'\n"
     f"pair = '{os.path.join(ROOT, 'tests', 'data', 'pair_identical_local.json')}'\n",
     "d and d' are identical"),
])
def test_bad_suites_are_refused_with_one_line(tmp_path, text, needle):
    with pytest.raises(InputError) as e:
        gate.load_suite(suite_dir(tmp_path, text))
    assert needle in str(e.value) and "\n" not in str(e.value)


@pytest.mark.cli
def test_gate_cli_bad_input_exit_2_nothing_written(tmp_path):
    d = suite_dir(tmp_path, "[[audit]]\nalgo = 'privbern'\neps = 1\nexpect = 'maybe'\n")
    junit = tmp_path / "out.xml"
    p = subprocess.run([sys.executable, "-m", "dpaudit", "gate", d, "--junit", str(junit)],
                       capture_output=True, text=True, cwd=tempfile.gettempdir(), timeout=300)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "expect='maybe'" in p.stderr
    assert not junit.exists()


@pytest.mark.slow
def test_gate_passes_writes_junit_and_baseline_then_checks_it(tmp_path):
    d = suite_dir(tmp_path)
    base, junit = tmp_path / "baseline.json", tmp_path / "gate.xml"
    code, out = run_gate(d, update_baseline=True, junit=str(junit))
    assert code == 0, out
    assert "false-alarm probability of the suite <= 1e-06" in out
    assert "2/2 as expected" in out
    tree = ET.parse(junit).getroot()
    assert tree.get("tests") == "2" and tree.get("failures") == "0"
    assert [tc.get("name") for tc in tree.iter("testcase")] == ["privbern", "privbern-wrong-exp"]
    props = {p.get("name"): p.get("value") for p in next(tree.iter("testcase")).iter("property")}
    assert props["verdict"] == "pass" and float(props["power"]) == 0.95
    assert 1.0 < float(props["detectable_loss"]) < math.inf     # above the claim ε = 1
    b = json.loads(base.read_text())["entries"]
    assert b["privbern"]["verdict"] == "pass" and b["privbern-wrong-exp"]["verdict"] == "violation"
    assert b["privbern"]["eps_lb"] <= b["privbern"]["eps_ub"]
    code, out = run_gate(d)                      # same seeds: same results, within baseline
    assert code == 0, out
    assert "eps_lb" in out and "<= baseline bound" in out


@pytest.mark.slow
def test_gate_margin_turns_a_pass_it_cannot_support_into_a_failure(tmp_path):
    """--margin reaches every entry: privbern's detectable loss at 20000 runs exceeds
    (1 + 0.01)·ε, so at margin 0.01 it is inconclusive (underpowered), which its entry did not
    expect; the command the gate prints reproduces the margin."""
    d = suite_dir(tmp_path, SMALL.split("[[audit]]")[0] + "[[audit]]"
                  + SMALL.split("[[audit]]")[1])
    junit = tmp_path / "gate.xml"
    code, out = run_gate(d, update_baseline=True, margin=0.01, junit=str(junit))
    assert code == 1 and "FAILED privbern: expected PASS, got INCONCLUSIVE" in out
    tc = next(ET.parse(junit).getroot().iter("testcase"))
    props = {p.get("name"): p.get("value") for p in tc.iter("property")}
    assert props["verdict"] == "inconclusive" and float(props["detectable_loss"]) > 1.01
    assert "underpowered" in tc.find("failure").get("message") + tc.find("failure").text
    assert "--margin 0.01" in ET.tostring(tc, encoding="unicode")


@pytest.mark.slow
def test_gate_fails_when_a_mutant_is_swapped_in(tmp_path, monkeypatch):
    """A privacy bug: the name privbern now runs the wrong-exponent mutant's code (as a bad
    commit would). The gate fails and names the entry, the expected and the got verdict."""
    d = suite_dir(tmp_path)
    bad = dataclasses.replace(registry.get("privbern-wrong-exp"), name="privbern",
                              mutant_of=None)
    monkeypatch.setitem(registry._REGISTRY, "privbern", bad)
    junit = tmp_path / "gate.xml"
    code, out = run_gate(d, junit=str(junit))
    assert code == 1
    assert "FAILED privbern: expected PASS, got VIOLATION" in out
    code, out = run_gate(d, update_baseline=True)          # a failing run is not a baseline
    assert code == 1 and "baseline not written" in out
    assert not (tmp_path / "baseline.json").exists()
    fail = [tc for tc in ET.parse(junit).getroot().iter("testcase")
            if tc.find("failure") is not None]
    assert [tc.get("name") for tc in fail] == ["privbern"]


@pytest.mark.slow
def test_gate_fails_above_baseline(tmp_path):
    """An ε_lb above the baseline's upper bound fails the gate (here the stored bound of the
    correct algorithm is lowered to 0.5: as if the baseline had leaked at most 0.5)."""
    d = suite_dir(tmp_path)
    base = tmp_path / "baseline.json"
    assert run_gate(d, update_baseline=True)[0] == 0
    doc = json.loads(base.read_text())
    doc["entries"]["privbern"]["eps_ub"] = 0.5
    base.write_text(json.dumps(doc))
    code, out = run_gate(d)
    assert code == 1 and "privbern: eps_lb" in out and "significantly above the baseline" in out


def test_judge_rules():
    e = gate.Entry(name="x", algo="privbern", eps=1.0, seed=1, expect="pass", runs=1000)
    res = {"verdict": "pass", "eps_lb": 0.9,
           "counts": {"measurement": {"looks": [{"eps_lb": [0.9, 0.2], "eps_ub": [1.1, 5.0]}]}}}
    assert gate.eps_ub(res) == 1.1                     # the finalist with the larger lower bound
    assert gate.judge(e, res, None)[:2] == (True, "no baseline")
    ok = {"config": e.config(), "eps_lb": 0.9, "eps_ub": 0.95}
    assert gate.judge(e, res, ok)[:2] == (True, "ok")
    assert gate.judge(e, res, {**ok, "eps_ub": 0.89})[:2] == (False, "above baseline")
    assert gate.judge(e, res, {**ok, "eps_ub": "inf"})[:2] == (True, "ok")
    assert gate.judge(e, res, {**ok, "config": {}})[:2] == (True, "stale baseline")
    assert gate.judge(e, {**res, "verdict": "inconclusive"}, ok)[:2] == (False, "unexpected verdict")
    assert gate.eps_ub({"counts": {"measurement": {}}}) == math.inf
    assert gate.eps_ub({"counts": {"measurement": {"looks": [{"eps_lb": [], "eps_ub": []}]}}}) \
        == math.inf


@pytest.mark.statistical
@pytest.mark.slow
def test_assert_dp_on_callables_and_registered_algorithms():
    """assert_dp passes a correct mechanism and raises with the summary on a privacy bug."""
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import private_etc
    finally:
        sys.path.pop(0)
    r = assert_dp(private_etc.etc, eps=1.0, horizon=4, runs=20000, seed=2)
    assert r.verdict == "pass"
    with pytest.raises(AssertionError, match="not \\(1, 0\\)-DP"):
        assert_dp(private_etc.etc_half_noise, eps=1.0, horizon=4, runs=20000, seed=2)
    assert assert_dp("privbern", eps=1.0, runs=20000, seed=1).verdict == "pass"
    with pytest.raises(AssertionError, match="VIOLATION"):
        assert_dp("privbern-wrong-exp", eps=1.0, runs=20000, seed=1)


@pytest.mark.statistical
@pytest.mark.slow
def test_pytest_plugin_fixture(pytester):
    """The pytest11 entry point offers assert_dp as a fixture in a user's test session."""
    pytester.makepyfile("""
        def test_fixture(assert_dp):
            assert assert_dp("privbern", eps=1.0, runs=20000, seed=1).verdict == "pass"
    """)
    res = pytester.runpytest_subprocess()
    res.assert_outcomes(passed=1)
