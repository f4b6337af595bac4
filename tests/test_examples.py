"""The examples gallery (examples/, docs/guide/examples.md): each example runs and shows what
its docstring says. Every audit here is seeded, so each assertion is deterministic; the
verdicts asserted are those of correct mechanisms (a false violation has probability ≤ α at
any seed, and these seeds were checked) and of mutants whose loss is twice the claim (caught
with a > 10 sd margin at these budgets)."""
import json
import pathlib
import runpy
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DPAUDIT = [sys.executable, "-m", "dpaudit"]


def _example(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / name), run_name="example")


def test_the_gallery_page_lists_every_example():
    page = (ROOT / "docs" / "guide" / "examples.md").read_text()
    shown = {p.name for p in EXAMPLES.iterdir() if not p.name.startswith(("_", "."))
             and (p.suffix in (".py", ".csv", ".json") or p.is_dir())}
    assert shown and all(f"examples/{name}" in page for name in shown), shown


@pytest.mark.slow        # about 3 s
def test_audit_mechanism_passes_laplace_and_catches_half_the_noise(capsys):
    verdicts = _example("audit_mechanism.py")["main"]()
    assert verdicts == {"laplace": "pass", "laplace_half_noise": "violation"}
    assert "upper loss bound" in capsys.readouterr().out


@pytest.mark.slow        # about 10 s: a registered audit at a small budget
def test_read_a_result_prints_each_part_with_its_json_key(capsys):
    r = _example("read_a_result.py")["main"]()
    out = capsys.readouterr().out
    for key in ("(claim)", "(verdict)", "(eps_lb)", "(eps_ub)", "(neighbours)", "(event.text)",
                "(counts.measurement)", "(whitebox.max_loss", "(command)"):
        assert key in out, key
    assert f"eps_lb): {r.eps_lb:.4f}" in out and r.verdict != "violation"


@pytest.mark.slow        # about 15 s: two audits with the claim-space search
def test_a_registered_kernel_gets_the_white_box_and_the_claim_space_search():
    out = _example("register_kernel.py")["main"]()
    ok, mutant = out["my-etc"], out["my-etc-half-noise"]
    # exact accounting: Laplace(1/eps) on a sum of sensitivity 1 loses at most eps, half the
    # noise twice that, reached on the runs replayed
    assert ok.whitebox["max_loss"] == pytest.approx(1.0) and ok.verdict != "violation"
    assert mutant.whitebox["max_loss"] == pytest.approx(2.0) and mutant.verdict == "violation"
    assert "instance_search" in ok.to_dict()


@pytest.mark.slow        # about 10 s: the plugin's two tests
def test_the_pytest_plugin_example_passes_the_private_bandit_and_fails_the_mutant():
    p = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p",
                        "no:cacheprovider", str(EXAMPLES / "test_my_mechanism.py")], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 passed" in p.stdout


@pytest.mark.slow        # about 20 s: two gate runs of two entries
def test_the_gate_suite_example_records_its_baseline_then_holds(tmp_path):
    baseline = tmp_path / "baseline.json"
    suite = str(EXAMPLES / "gate_suite")
    first = subprocess.run([*DPAUDIT, "gate", suite, "--baseline", str(baseline),
                            "--update-baseline"], capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    assert set(json.loads(baseline.read_text())["entries"]) == {"adap-tt",
                                                               "adap-tt-raw-leader"}
    again = subprocess.run([*DPAUDIT, "gate", suite, "--baseline", str(baseline)],
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr


def test_the_plain_python_adap_tt_gives_the_compiled_kernels_transcripts_run_for_run():
    """examples/adap_tt_python.py is written from the paper, not from the kernel; fed the same
    generator and table, it makes the same actions (and the same stop, if any) in every run,
    and its stopping threshold (eq. 4) is the kernel's."""
    from algorithms.adap_tt.algorithm import _threshold
    from dpaudit.algorithms import registry
    ex = _example("adap_tt_python.py")
    spec = registry.get("adap-tt")
    p = spec.resolve_params({"means": (0.9, 0.7, 0.5, 0.3), "horizon": 64})
    prep = spec.prepare(0.5, p)
    tables = np.random.default_rng(5)
    for i in range(200):
        table = (tables.random((64, 4)) < prep.means).astype(float)
        actions = np.full(64, -1, np.int16)
        tau, rec, status, _ = spec.kernel(np.random.default_rng(i), table, prep.means,
                                          prep.theta, prep.aux, 64, actions, np.empty((0, 8)),
                                          np.empty(0))
        t = ex["adap_tt"](np.random.default_rng(i), table, 0.5)
        assert list(t.actions) == list(actions[:tau]), i
        assert (t.stopping_time, t.recommendation) == ((tau, rec) if status == 0 else (None, None))
    for k1, k2, n1, n2 in ((1, 1, 1.0, 1.0), (2, 3, 2.0, 4.0), (5, 1, 16.0, 1.0)):
        assert ex["threshold"](4, 0.5, k1, k2, n1, n2) == pytest.approx(
            _threshold(prep.theta, prep.aux, 4, k1, k2, n1, n2), rel=1e-9)


def _gate_your_own(tmp_path, edit=None):
    """`dpaudit gate .` in a temporary copy of examples/gate-your-own, after ``edit`` (a
    function of the copy's folder)."""
    import shutil
    folder = tmp_path / "project"
    shutil.copytree(EXAMPLES / "gate-your-own", folder)
    if edit:
        edit(folder)
    return subprocess.run([*DPAUDIT, "gate", "."], capture_output=True, text=True,
                          cwd=folder, timeout=600)


@pytest.mark.slow        # about 12 s: a gate of two entries
def test_gate_your_own_holds_with_the_correct_algorithm(tmp_path):
    p = _gate_your_own(tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "commit: PASS as expected" in p.stdout and "stored event p = " in p.stdout
    assert "commit-half-noise: VIOLATION as expected" in p.stdout


@pytest.mark.slow        # about 12 s
def test_gate_your_own_fails_naming_the_mutant_listed_as_private(tmp_path):
    def expect_pass(folder):
        suite = folder / "suite.toml"
        text = suite.read_text()
        suite.write_text(text[::-1].replace('"noitaloiv" = tcepxe', '"ssap" = tcepxe', 1)[::-1])
    p = _gate_your_own(tmp_path, expect_pass)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAILED commit-half-noise: expected PASS, got VIOLATION" in p.stdout


@pytest.mark.slow        # about 12 s
def test_gate_your_own_fails_on_the_rise_when_the_noise_is_scaled_by_0_7(tmp_path):
    """The verdict may still pass (eps_lb below eps): the stored event's loss rose, which only
    the rise test sees (p about 1e-43 at 20 000 runs per side, against 2.5e-4)."""
    def less_noise(folder):
        src = folder / "bandit.py"
        text = src.read_text()
        assert "NOISE = 1.0" in text
        src.write_text(text.replace("NOISE = 1.0", "NOISE = 0.7", 1))
    p = _gate_your_own(tmp_path, less_noise)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAILED commit: the baseline's event leaks more than it did" in p.stdout


@pytest.mark.slow        # about 20 s on 2 cores
def test_successive_elimination_whose_noise_cancels_is_a_violation_at_the_default_means():
    """The elimination test compares differences of means to which one Laplace draw was
    added: the eliminations are deterministic in the raw rewards, so a pair that moves one
    elimination gives transcripts that never meet (ε_lb saturates at its budget's bound)."""
    p = subprocess.run([*DPAUDIT, "run", "--algo",
                        "examples/successive_elimination.py:noisy_elimination", "--eps", "1",
                        "--param", "horizon=20", "--seed", "1", "--runs", "20000"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "verdict: VIOLATION" in p.stdout and "saturated: no hit on d" in p.stdout
