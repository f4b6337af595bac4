"""The CI gate (dpaudit.gating.gate), the audit suite in audits/, and assert_dp (dpaudit.testing).

Gate runs here use a two-entry suite on PrivBern (fast local-model audits). Their verdicts
are deterministic for the fixed seeds; the statistical statements behind them (a correct
algorithm passes, a mutant is caught) hold with error ≤ alpha/(2N) = 2.5e-7 per entry at
the suite alpha 1e-6 used here, so each test's false-failure probability is ≤ 1e-6.
"""
import dataclasses
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import pytest

import dpaudit
from dpaudit.algorithms import registry
from dpaudit.errors import InputError
from dpaudit.gating import gate
from dpaudit.testing import assert_dp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
    code = gate.gate(path, gate.GateOptions(workers=1, **kw), echo=lines.append)
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
    ("[[audit]]\nalgo = 'dp-bai-gauss'\neps = 9\ndelta = 1e-5\nexpect = 'pass'\n",
     "(dp-bai-gauss): eps=9, delta=1e-05 is outside the range of dp-bai-gauss's privacy proof"),
    ("[[audit]]\nalgo = 'dp-bai-gauss'\neps = 9\nexpect = 'pass'\nbeyond_proof = 1\n",
     "beyond_proof = 1 is not valid"),
])
def test_bad_suites_are_refused_with_one_line(tmp_path, text, needle):
    with pytest.raises(InputError) as e:
        gate.load_suite(suite_dir(tmp_path, text))
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_an_entry_beyond_its_proof_is_audited_only_when_it_says_so(tmp_path):
    text = "[[audit]]\nalgo = 'dp-bai-gauss'\neps = 9\nexpect = 'inconclusive'\nreason = 'x'\n"
    entry = gate.load_suite(suite_dir(tmp_path, text + "beyond_proof = true\n")).entries[0]
    assert entry.beyond_proof and entry.config()["beyond_proof"] is True
    assert entry.request(gate.Budget(runs=1000)).beyond_proof
    inside = gate.load_suite(suite_dir(tmp_path, text.replace("eps = 9", "eps = 1"))).entries[0]
    assert not inside.beyond_proof and "beyond_proof" not in inside.config()


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
    doc = json.loads(base.read_text())
    assert doc["schema"] == gate.BASELINE_SCHEMA and doc["versions"]["numpy"]
    b = doc["entries"]
    assert b["privbern"]["verdict"] == "pass" and b["privbern-wrong-exp"]["verdict"] == "violation"
    ev = b["privbern"]["event"]                   # the evidence: pair, event, counts
    assert ev["pair"]["model"] == "local" and ev["pair"]["d"] != ev["pair"]["value_d_prime"]
    assert ev["view"] == [0, 1, 0] and ev["cells"] and ev["numerator"] in ("d", "d_prime")
    assert 0 < ev["hits_den"] < ev["hits_num"] <= ev["runs"] and ev["saturated"] is False
    # its counts: every one of the entry's runs on the baseline's own stream (not the audit's
    # counts, which may stop at an early look); the check's stream is another
    entry = gate.load_suite(d).entries[0]
    assert ev["counts"] == "fixed-n" and ev["runs"] == entry.runs == 20000
    assert ev["audit_counts"]["runs"] <= 20000
    stored = (ev["hits_num"], ev["hits_den"])
    assert gate.measure_stored(entry, ev, gate.BASELINE_STREAM) == stored
    assert gate.measure_stored(entry, ev, gate.CHECK_STREAM) != stored
    assert "counts" not in b["privbern-wrong-exp"]["event"]    # a violation is not re-measured
    code, out = run_gate(d, junit=str(junit))     # same code: the stored event did not rise
    assert code == 0, out
    assert "privbern: PASS as expected; eps_lb" in out and "stored event p = " in out
    assert "not re-measured: a violation is expected" in out
    tc = next(ET.parse(junit).getroot().iter("testcase"))
    p = {q.get("name"): q.get("value") for q in tc.iter("property")}["stored_event_p_value"]
    assert 1e-6 / 4 < float(p) <= 1.0


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
    assert run_gate(d, update_baseline=True)[0] == 0
    (tmp_path / "baseline.json").rename(tmp_path / "good.json")
    bad = dataclasses.replace(registry.get("privbern-wrong-exp"), name="privbern",
                              mutant_of=None)
    monkeypatch.setitem(registry._REGISTRY, "privbern", bad)
    junit = tmp_path / "gate.xml"
    code, out = run_gate(d, junit=str(junit), baseline=str(tmp_path / "good.json"))
    assert code == 1
    assert "FAILED privbern: expected PASS, got VIOLATION" in out
    code, out = run_gate(d, update_baseline=True)          # a failing run is not a baseline
    assert code == 1 and "baseline not written" in out
    assert not (tmp_path / "baseline.json").exists()
    fail = [tc for tc in ET.parse(junit).getroot().iter("testcase")
            if tc.find("failure") is not None]
    assert [tc.get("name") for tc in fail] == ["privbern"]


UCB = """[suite]
alpha = 2.5e-5
runs = 200000

[[audit]]
algo = "adap-ucb"
eps = 1
seed = 1
expect = "pass"
instances = "fixed"     # these tests are about the stored event of one instance
"""


@pytest.mark.slow
def test_gate_fires_when_the_kernels_noise_is_scaled_by_0_7(tmp_path, monkeypatch):
    """A regression: adap-ucb's Laplace noise (scale ∝ 1/ε) scaled by 0.7, as a bad commit
    would, by preparing the kernel at ε/0.7, at the gate's configuration (2·10^5 runs,
    α_i = 1.25·10^-5). Whatever today's verdict (here a violation: ε_lb 1.01 > 1), the stored
    event, measured again, leaks significantly more (log ratio 0.59 -> 0.90, p ≈ 3e-38 at
    seed 1; the test's false-failure probability is that of p > α_i at this effect: nil)."""
    d = suite_dir(tmp_path, UCB)
    code, out = run_gate(d, update_baseline=True)
    assert code == 0, out
    good = registry.get("adap-ucb")
    louder = dataclasses.replace(good, prepare=lambda eps, p: good.prepare(eps / 0.7, p))
    monkeypatch.setitem(registry._REGISTRY, "adap-ucb", louder)
    code, out = run_gate(d)
    assert code == 1, out
    assert "the baseline's event leaks more than it did" in out, out
    p = float(out.split("two-sample p = ")[1].split(" ")[0])
    assert p <= 1.25e-5


def _old_rule_bound(result):
    """The rule the gate had before (review of 553a587): the baseline's upper confidence bound
    on the loss of the event it measured (last look, finalist with the largest lower bound);
    a new ε_lb above it was called a regression."""
    last = result["counts"]["measurement"]["looks"][-1]
    i = max(range(len(last["eps_lb"])), key=lambda j: last["eps_lb"][j])
    return float(last["eps_ub"][i])


@pytest.mark.slow
def test_a_moved_random_stream_does_not_fire_the_gate(tmp_path, monkeypatch):
    """adap-ucb at the gate's configuration (2·10^5 runs, α_i = 1.25·10^-5), baseline at
    seed 1; then the random stream moves (as a numpy or numba upgrade would): the audit runs
    at seed 3 and the re-measurement on another stream. The search picks another pair; the
    rule measures the stored event again: no significant rise, the gate passes. (Before the
    arm-count views, seed 3's pair had ε_lb 0.83 above the seed-1 baseline's upper bound
    0.67, the false alarm of the old rule that compared the two; `_old_rule_bound` computes
    that bound.)"""
    d = suite_dir(tmp_path, UCB)
    (tmp_path / "base").mkdir()
    (tmp_path / "moved").mkdir()
    code, out = run_gate(d, update_baseline=True, report_dir=str(tmp_path / "base"))
    assert code == 0 and "each audit's verdict and each stored event's re-measurement at " \
        "alpha 1.25e-05" in out, out
    before = json.loads((tmp_path / "base" / "adap-ucb.json").read_text())
    audit = gate.run_entry
    monkeypatch.setattr(gate, "run_entry",
                        lambda e, *a, **k: audit(dataclasses.replace(e, seed=3), *a, **k))
    monkeypatch.setattr(gate, "REMEASURE_KEY", gate.REMEASURE_KEY + 1)
    code, out = run_gate(d, report_dir=str(tmp_path / "moved"))
    after = json.loads((tmp_path / "moved" / "adap-ucb.json").read_text())
    assert after["seed"] == 3 and after["neighbours"] != before["neighbours"]
    assert after["eps_lb"] > 0 and _old_rule_bound(before) > 0
    assert code == 0, out                                      # the rule does not fire
    p = float(out.split("stored event p = ")[1].split(";")[0].split(" ")[0])
    assert p > 1.25e-5


def test_judge_rules():
    e = gate.Entry(name="x", algo="privbern", eps=1.0, seed=1, expect="pass", runs=1000)
    res = {"verdict": "pass", "eps_lb": 0.9, "detectable_loss": 1.2}
    assert gate.judge(e, res, None, 1e-3)[:2] == (True, "ok")
    rise = {"p_value": 0.2, "log_ratio": 0.95, "log_ratio_baseline": 0.9, "runs": 1000}
    ok, status, msg = gate.judge(e, res, rise, 1e-3)
    assert (ok, status) == (True, "ok") and "stored event p = 0.2" in msg
    ok, status, msg = gate.judge(e, res, {**rise, "p_value": 1e-4}, 1e-3)
    assert (ok, status) == (False, "loss rose") and "0.9000 -> 0.9500" in msg
    ok, status, msg = gate.judge(e, {**res, "verdict": "violation"}, {**rise, "p_value": 1e-4},
                                 1e-3)
    assert (ok, status) == (False, "unexpected verdict") and "leaks more" in msg
    assert gate.judge(e, {**res, "verdict": "inconclusive"}, None, 1e-3)[:2] == \
        (False, "unexpected verdict")
    quiet = dataclasses.replace(e, expect="inconclusive", reason="why")
    ok, _, msg = gate.judge(quiet, {**res, "verdict": "inconclusive",
                                    "reason": "no event: x"}, None, 1e-3)
    assert ok and "INCONCLUSIVE as expected; reason: no event: x; eps_lb 0.9000" in msg


def _fake_baseline(suite_path, entries=None):
    s = gate.load_suite(suite_path)
    return {"schema": gate.BASELINE_SCHEMA, "versions": {}, "entries": {
        e.name: {"config": e.config(), "event": None} for e in s.entries
        if entries is None or e.name in entries}}


@pytest.mark.parametrize("edit, needle", [
    (None, "not found"),
    ("{not json", "cannot be read"),
    ({"entries": {}}, "not a dpaudit baseline of schema"),
    ("only privbern", "has no entry 'privbern-wrong-exp'"),
    ("eps of privbern", "entry 'privbern' was made with eps = 1.0, the suite has 2.0"),
    ("an extra entry", "has an entry 'zzz' the suite lacks"),
])
def test_a_missing_stale_or_corrupt_baseline_stops_the_gate_before_any_audit(
        tmp_path, monkeypatch, edit, needle):
    d = suite_dir(tmp_path)
    base = tmp_path / "baseline.json"
    doc = _fake_baseline(d)
    if edit == "only privbern":
        doc = _fake_baseline(d, {"privbern"})
    elif edit == "an extra entry":
        doc["entries"]["zzz"] = doc["entries"]["privbern"]
    elif edit == "eps of privbern":
        suite_dir(tmp_path, SMALL.replace("eps = 1\nseed = 1\nexpect = \"pass\"",
                                          "eps = 2\nseed = 1\nexpect = \"pass\""))
    if isinstance(edit, str) and edit.startswith("{"):
        base.write_text(edit)
    elif isinstance(edit, dict):
        base.write_text(json.dumps(edit))
    elif edit is not None:
        base.write_text(json.dumps(doc))
    monkeypatch.setattr(gate, "run_entry", lambda *a, **k: pytest.fail("an audit ran"))
    with pytest.raises(InputError) as e:
        run_gate(d)
    msg = str(e.value)
    assert needle in msg and "\n" not in msg
    assert msg.endswith(f"regenerate it with: dpaudit gate {d} --update-baseline")


@pytest.mark.cli
def test_gate_without_its_baseline_exits_2_with_the_command(tmp_path):
    d = suite_dir(tmp_path)
    junit = tmp_path / "out.xml"
    p = subprocess.run([sys.executable, "-m", "dpaudit", "gate", d, "--junit", str(junit)],
                       capture_output=True, text=True, cwd=tempfile.gettempdir(), timeout=300)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "not found" in p.stderr and f"dpaudit gate {d} --update-baseline" in p.stderr
    assert not junit.exists()


def test_a_version_change_is_printed_and_in_the_junit(tmp_path, monkeypatch):
    d = suite_dir(tmp_path)
    doc = _fake_baseline(d)
    from dpaudit.verdicts.result import versions
    doc["versions"] = {**versions(), "numba": "0.1.0"}
    (tmp_path / "baseline.json").write_text(json.dumps(doc))
    fake = {"verdict": "pass", "eps_lb": 0.1, "detectable_loss": 1.1, "runtime_s": 0.0,
            "reason": None, "command": "dpaudit run ..."}
    monkeypatch.setattr(gate, "run_entry", lambda e, *a, **k: (
        {**fake, "verdict": e.expect}, None))
    junit = tmp_path / "gate.xml"
    code, out = run_gate(d, junit=str(junit))
    assert code == 0, out
    assert f"versions changed since the baseline: numba 0.1.0 -> {versions()['numba']}" in out
    assert "not re-measured: the baseline measured no event" in out
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot()[0]}
    assert props["versions_changed"] == f"numba 0.1.0 -> {versions()['numba']}"


def test_version_changes_are_named():
    from dpaudit.verdicts.result import versions
    now = versions()
    assert gate.version_changes(now) == []
    older = {**now, "numpy": "1.0.0"}
    assert gate.version_changes(older) == [f"numpy 1.0.0 -> {now['numpy']}"]


def test_baseline_json_keeps_number_lists_on_one_line():
    doc = {"a": {"d": [[0.0, 1.0], [1.0, 0.5]], "cells": ["00ff", "0100"], "x": [1, -2e-05]}}
    text = gate.dumps(doc)
    assert json.loads(text) == doc
    assert "[0.0, 1.0]" in text and "[1, -2e-05]" in text


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


ENTRY = '[[audit]]\nalgo = "privbern"\neps = 1\nseed = 1\nexpect = "pass"\n'


@pytest.mark.parametrize("text, needle", [
    ("suite = 5\n" + ENTRY, "suite = 5 is not valid: expected a [suite] table"),
    ("audit = 3\n", "audit = 3 is not valid: expected [[audit]] tables"),
    (ENTRY.replace('"privbern"', "5"), "algo = 5 is not valid: expected a registry name"),
    (ENTRY + 'params = "risk=0.1"\n', "params = 'risk=0.1' is not valid: expected a table"),
    (ENTRY + "pair = 5\n", "pair = 5 is not valid: expected a path"),
    (ENTRY + ENTRY.replace("[[audit]]\n", '[[audit]]\nname = "second"\n') + "delta = -1\n",
     "audit #2 (second): delta=-1 is out of range: expected a number in [0, 1)"),
    (ENTRY + ENTRY.replace("[[audit]]\n", '[[audit]]\nname = "second"\n')
     + 'neighbours = "bogus"\n', "audit #2 (second): neighbours = 'bogus' is not valid"),
    (ENTRY.replace("eps = 1", "eps = 1e308"), "eps=1e+308 is out of range"),
    (b"\xff\xfe[[audit]]", "is not valid TOML: not UTF-8 text"),
])
def test_every_suite_entry_is_checked_before_any_audit(tmp_path, monkeypatch, text, needle):
    f = tmp_path / "suite.toml"
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    monkeypatch.setattr(gate, "run_entry", lambda *a, **k: pytest.fail("an audit ran"))
    with pytest.raises(InputError) as e:
        run_gate(str(f), update_baseline=True)
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)


GOOD_EVENT = {"pair": {"model": "local", "d": 0.0, "position": [], "value_d_prime": 1.0},
              "horizon": 1, "view": [0], "numerator": "d_prime", "cells": ["0000000000000001"],
              "hits_num": 10, "hits_den": 5, "runs": 1000, "saturated": False}


@pytest.mark.parametrize("edit, needle", [
    ({"hits_num": "x"}, "hits_num = 'x': expected int"),
    ({"hits_den": 2000}, "counts out of range"),
    ({"numerator": "both"}, "numerator = 'both'"),
    ({"cells": ["zz"]}, "cells that are not 16-digit hexadecimal numbers"),
    ({"pair": {"model": "cloud", "d": 0.0, "position": [], "value_d_prime": 1.0}},
     "a bad pair (model 'cloud' is not valid"),
    ({"pair": {"model": "local", "d": 0.0, "position": [], "value_d_prime": 0.0}},
     "a bad pair"),
    ({"pair": 5}, "pair = 5: expected dict"),
    ({"view": [0, 4, 7]}, "view = [0, 4, 7]: expected sample indices [start, end, kind]"),
])
def test_a_corrupt_stored_event_stops_the_gate_before_any_audit(tmp_path, monkeypatch, edit,
                                                               needle):
    d = suite_dir(tmp_path)
    gate.stored_event(GOOD_EVENT)                                  # the control is accepted
    doc = _fake_baseline(d)
    doc["entries"]["privbern"]["event"] = {**GOOD_EVENT, **edit}
    (tmp_path / "baseline.json").write_text(json.dumps(doc))
    monkeypatch.setattr(gate, "run_entry", lambda *a, **k: pytest.fail("an audit ran"))
    with pytest.raises(InputError) as e:
        run_gate(d)
    msg = str(e.value)
    assert "entry 'privbern': its stored event has " in msg and needle in msg, msg
    assert "\n" not in msg and msg.endswith("--update-baseline")


def test_junit_names_the_instance_a_searched_claim_space_audited():
    e = gate.Entry(name="x", algo="gdp-ncb", eps=1.0, seed=1, expect="violation", runs=1000)
    res = {"runtime_s": 1.5, "verdict": "violation", "command": "dpaudit run ...",
           "instance_search": {"audited": "horizon=4, phase1_constant=0.0131"}}
    suite = gate.Suite(path="s.toml", alpha=1e-3, entries=(e,))
    xml = gate.junit_xml(suite, [{"entry": e, "result": res, "ok": True, "message": "ok",
                                  "status": "ok"}], [])
    props = {p.get("name"): p.get("value") for p in ET.fromstring(xml).iter("property")}
    assert props["instance"] == "horizon=4, phase1_constant=0.0131"
    fixed = gate.junit_xml(suite, [{"entry": e, "result": {**res, "instance_search": None},
                                    "ok": True, "message": "ok", "status": "ok"}], [])
    assert 'name="instance"' not in fixed


@pytest.mark.slow
def test_assert_dp_reads_a_transcript_callable_as_actions_and_replays_it():
    """assert_dp goes through the callable audit: a Transcript's event prints as actions, and
    the coupled replay makes a data-blind function fail the assertion as vacuous."""
    spec = importlib.util.spec_from_file_location(
        "gate_your_own_bandit", os.path.join(ROOT, "examples", "gate-your-own", "bandit.py"))
    bandit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bandit)
    with pytest.raises(AssertionError, match="the first 6 actions"):
        assert_dp(bandit.commit_half_noise, eps=1.0, means=(0.6, 0.4), horizon=6, runs=20000,
                  seed=1, alpha=0.05)

    def blind(rng, table, eps):
        return dpaudit.Transcript([int(a) for a in rng.integers(2, size=table.shape[0])])
    with pytest.raises(AssertionError, match="vacuous"):
        assert_dp(blind, eps=1.0, horizon=6, runs=2000, seed=1)
