"""Hostile input, case by case (tests/hostile/cases.toml): 352 cases of an outside robustness
review of dpaudit 0.1.0, each with the outcome the contract demands (docs/guide/commands.md,
"Exit codes", "Python API"). The command-line cases run in this process (tests/hostile/runner.py
checks exit code, stderr, the files written and the fixtures); the Python API cases check the
exception raised or the verdict returned; the signal cases send SIGINT / SIGTERM to a
``dpaudit`` process (tests/core/test_interrupt.py's contract)."""
import signal

import pytest
from hostile import runner

CLI = runner.CASES["cli"]
API = runner.CASES["api"]
SIGNALS = runner.CASES["signal"]


def _marks(case):
    return [pytest.mark.slow] if case.get("slow") else []


@pytest.mark.cli
@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"], marks=_marks(c)) for c in CLI])
def test_command_line_case(case, tmp_path):
    runner.check(case, runner.run(case, tmp_path))


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"], marks=_marks(c)) for c in API])
def test_python_api_case(case, tmp_path):
    got = runner.run_api(case, tmp_path)
    if "raises" in case:
        assert got == ("raises", case["raises"]), got
    else:
        assert got[0] == "returns" and got[1] in case["returns"], got


@pytest.mark.slow
@pytest.mark.cli
@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in SIGNALS])
def test_signal_case(case, tmp_path):
    from test_interrupt import _holds, _stop
    sig = getattr(signal, case["signal"])
    argv = [runner.filled(a, tmp_path, runner.HERE / "fixtures") for a in case["argv"]]
    _holds(_stop(argv, sig, case["at"], tmp_path), sig)
