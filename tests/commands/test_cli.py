"""The command line: bad input, the JSON contract of docs/reference/verdict-json.md, determinism, bench."""
import json
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile

import pytest

pytestmark = pytest.mark.cli

DPAUDIT = [sys.executable, "-m", "dpaudit"]
SMALL = ["--runs", "20000", "--seed", "3"]


def cli(*args):
    # run outside the source tree: the installed package (with dpaudit.algorithms) is tested
    return subprocess.run(DPAUDIT + list(args), capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), timeout=600)


RUN = ["run", "--algo", "adap-tt", "--eps", "0.5"]
EXAMPLE = str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "private_etc.py")
DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
BAD = [
    (["run", "--algo", "adap-t", "--eps", "0.5"], "did you mean adap-tt"),
    (["run", "--algo", "adap-tt", "--eps", "0"], "--eps 0"),
    (["run", "--algo", "adap-tt", "--eps", "-1"], "--eps -1"),
    (["run", "--algo", "adap-tt", "--eps", "nan"], "--eps nan"),
    (["run", "--algo", "adap-tt", "--eps", "inf"], "--eps inf"),
    (["run", "--algo", "adap-tt", "--eps", "abc"], "'abc'"),
    (["run", "--algo", "adap-tt", "--eps", "1e-300"], "--eps 1e-300 is out of range: expected "
                                                      "a number in [0.001, 100]"),
    (["run", "--algo", "adap-tt", "--eps", "1e308"], "--eps 1e308 is out of range"),
    (["bench", "--algo", "adap-tt", "--eps", "1e308"], "--eps 1e308 is out of range"),
    (["check", "correctness", "--algo", "dp-se", "--risk", "0.05", "--eps", "1e-300"],
     "--eps 1e-300 is out of range"),
    ([*RUN, "--alpha", "0"], "(0, 1)"),
    ([*RUN, "--alpha", "1"], "(0, 1)"),
    ([*RUN, "--beta", "0"], "--beta 0"),
    ([*RUN, "--beta", "1.5"], "--beta 1.5"),
    ([*RUN, "--runs", "0"], "--runs 0"),
    ([*RUN, "--workers", "0"], "--workers 0"),
    ([*RUN, "--max-samples", "0"], "--max-samples 0"),
    ([*RUN, "--max-samples", "1.5"], "--max-samples '1.5' is not valid"),
    ([*RUN, "--time-limit", "-3"], "--time-limit -3"),
    ([*RUN, "--param", "risk"], "key=value"),
    ([*RUN, "--param", "rsk=0.1"], "did you mean risk"),
    ([*RUN, "--param", "risk=1"], "risk=1"),
    ([*RUN, "--param", "risk=x"], "risk=x"),
    ([*RUN, "--param", "means=0.5,1.2"], "[0, 1]"),
    ([*RUN, "--param", "beta=0"], "beta=0"),
    ([*RUN, "--param", "threshold=none"], "theory"),
    ([*RUN, "--param", "horizon=2.5"], "horizon"),
    ([*RUN, "--delta", "1"], "--delta 1"),
    ([*RUN, "--pair", str(DATA / "pair_identical_user.json")],
     "d and d' are identical: user neighbours differ in exactly 1 row"),
    (["run", "--algo", "privbern", "--eps", "1", "--pair", str(DATA / "pair_identical_local.json")],
     "d and d' are identical: local neighbours"),
    ([*RUN, "--model", "local"], "--model applies to FILE.py:FUNCTION"),
    (["run", "--algo", "nowhere.py:f", "--eps", "1"], "does not exist"),
    (["run", "--algo", f"{EXAMPLE}:nope", "--eps", "1"], "no callable named 'nope'"),
    (["run", "--algo", "no_such_module_xyz:f", "--eps", "1"], "ModuleNotFoundError"),
    (["run", "--algo", f"{EXAMPLE}:etc", "--eps", "1", "--model", "cloud"], "invalid choice"),
    (["run", "--algo", f"{EXAMPLE}:etc", "--eps", "1", "--param", "risk=0.1"],
     "expected means or horizon"),
    (["run", "--algo", f"{EXAMPLE}:etc", "--eps", "1", "--param", "horizon=0"], "horizon=0"),
    ([*RUN, "--neighbours", "all"], "invalid choice"),
    (["run", "--algo", f"{EXAMPLE}:etc", "--eps", "1", "--neighbours", "structure"],
     "callables use the black-box search"),
    (["bench", "--algo", "nope"], "unknown algorithm"),
    (["check", "constants", "--paper", "005"], "invalid choice"),
    (["check", "constants", "--paper", "barbara2025", "--param", "means=0.2,1.5"], "[0, 1]"),
    (["check", "constants", "--paper", "azize2023", "--param", "risk=2"], "risk"),
    ([*RUN, "--param", "risk=0.1", "--param", "risk=0.2"],
     "--param risk is given twice (0.1 and 0.2): expected each key once"),
    ([*RUN, "--runs", "100000000000000000000"], "expected an integer in [1, 2^40]"),
    (["bench", "--algo", "adap-tt", "--seconds", "1e308"], "--seconds 1e308 is out of range"),
    (["check", "constants", "--paper", "azize2023", "--param", "mean=0.9,0.5"],
     "unknown parameter 'mean' for paper azize2023 (did you mean means?)"),
    (["check", "constants", "--paper", "azize2023", "--param", "s=abc"], "s='abc' is not valid"),
    (["check", "constants", "--paper", "azize2023", "--param", "K=abc"], "K='abc' is not valid"),
    (["check", "constants", "--paper", "azize2023", "--param", "phases=x"], "phases='x' is not valid"),
    (["check", "constants", "--paper", "azize2023", "--param", "s=2,3"], "expected one number"),
    (["check", "constants", "--paper", "azize2023", "--param", "eps=1e308"],
     "eps=1e+308 is out of range: expected a number in [0.001, 100]"),
    (["check", "constants", "--paper", "chen2024", "--param", "eps=0.5,1e-300"], "eps=1e-300"),
    (["run", "--algo", str(DATA / "two_args.py") + ":two", "--eps", "1"],
     "takes (rng, data): expected a function (rng, data, eps)"),
    (["run", "--algo", "os:getcwd", "--eps", "1"], "takes (): expected a function"),
    ([*RUN, "--pair", str(DATA / "not_utf8.json")], "not valid JSON (not UTF-8 text)"),
    (["run", "--algo", "dp-od", "--eps", "1", "--param", "means=0.9,0.5,0.4",
      f"features={DATA / 'features_empty.csv'}"], "has shape (0, 1): expected a K x d matrix"),
    (["mutate", "--algo", "ttucb", "--quick"], "ttucb has no noise site to mutate"),
    (["mutate", "--algo", "nope"], "unknown algorithm 'nope'"),
    (["mutate", "--algo", "dp-se", "--all"], "not allowed with argument"),
    (["frobnicate"], "invalid choice"),
]


def _assert_refused(code, stdout, stderr, needle, folder):
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpaudit: error:"), stderr
    assert needle in lines[0]
    assert "Traceback" not in stderr and stdout == ""
    assert list(folder.iterdir()) == []                     # nothing written, not even --json


@pytest.mark.parametrize("args,needle", BAD)
def test_bad_input_one_line_exit_2_no_file(args, needle, tmp_path, monkeypatch, capsys):
    # in-process (cli.main, as `python -m dpaudit` calls it), run from an empty folder: a
    # subprocess per case would spend its time importing numba; the process-level wiring is
    # the next test's
    from dpaudit.commands.cli import main
    monkeypatch.chdir(tmp_path)
    argv = [*args, "--json", str(tmp_path / "out.json")] if args[0] != "frobnicate" else args
    try:
        code = main(argv)
    except SystemExit as e:                                  # argparse's own refusals
        code = e.code
    out = capsys.readouterr()
    _assert_refused(code, out.out, out.err, needle, tmp_path)


def test_an_exception_in_the_users_callable_is_one_line_exit_4(tmp_path, capsys):
    from dpaudit.commands.cli import main
    f = tmp_path / "boom.py"
    f.write_text("def f(rng, data, eps):\n    return [1 / 0]\n")
    out = tmp_path / "out.json"
    code = main(["run", "--algo", f"{f}:f", "--model", "user", "--eps", "1", "--runs", "2000",
                 "--json", str(out)])
    err = capsys.readouterr().err
    assert code == 4 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "error in your code: ZeroDivisionError: division by zero (in f at " in err
    assert f"{f}:2" in err and "--debug" in err and not out.exists()


def test_an_internal_error_is_one_line_exit_4_and_debug_shows_the_traceback(monkeypatch,
                                                                             capsys):
    import functools

    from dpaudit.commands import cli
    # raised from no user file (exec'd text, called straight from cli.main); its newline
    # cannot forge a second line
    monkeypatch.setattr(cli.registry, "all_specs", functools.partial(
        exec, "raise RuntimeError('bad state\\nverdict: PASS')"))
    assert cli.main(["list"]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("dpaudit: internal error: RuntimeError: bad state\\nverdict: PASS")
    assert cli.main(["list", "--debug"]) == 4
    err = capsys.readouterr().err
    assert "Traceback" in err and err.rstrip().splitlines()[-1].startswith(
        "dpaudit: internal error: RuntimeError")


@pytest.mark.parametrize("args,needle", [BAD[1], BAD[6], BAD[7], BAD[-2], BAD[-1]])
def test_bad_input_as_a_process(args, needle, tmp_path):
    # the same contract through the interpreter: exit status, one stderr line, no traceback
    argv = [*args, "--json", str(tmp_path / "out.json")] if args[0] != "frobnicate" else args
    p = cli(*argv)
    _assert_refused(p.returncode, p.stdout, p.stderr, needle, tmp_path)


def test_list_names_the_algorithms():
    p = cli("list")
    assert p.returncode == 0
    for name in ("adap-tt", "adap-tt-no-forgetting", "ttucb", "dp-se"):
        assert any(line.split()[0] == name for line in p.stdout.splitlines()[1:])


def test_list_claims_names_every_algorithms_claim_and_dimensions_with_scope_and_source():
    from dpaudit.algorithms import registry
    p = cli("list", "--claims")
    assert p.returncode == 0, p.stderr
    blocks, name = {}, None
    for line in p.stdout.splitlines():
        if not line.startswith("  "):
            name = line.split(":")[0]
            blocks[name] = [line]
        else:
            blocks[name].append(line)
    specs = registry.all_specs()
    assert sorted(blocks) == sorted(s.name for s in specs)
    for s in specs:
        head, *rows = blocks[s.name]
        assert (s.theorem in head) if s.private else "claims no privacy" in head
        dims = s.space().axes
        if not dims:
            assert "nothing to search" in rows[0]
            continue
        listed = {r.split()[0]: r for r in rows[1:]}
        assert sorted(listed) == sorted(a.name for a in dims), s.name
        for a in dims:
            fields = listed[a.name].split()
            assert fields[1] == a.dim.scope and fields[2] == a.dim.scale
            assert a.dim.source in listed[a.name]
    one = cli("list", "--claims", "--algo", "gdp-ncb")
    assert one.returncode == 0 and one.stdout.splitlines()[0].startswith("gdp-ncb: ")
    assert "phase1_constant  proof" in one.stdout and "[0.001, 10000]" in one.stdout


@pytest.fixture(scope="module")
def contract_run(tmp_path_factory):
    """One CLI audit on 1 worker with --json: (stdout, the JSON); two tests read it."""
    out = tmp_path_factory.mktemp("contract") / "out.json"
    p = cli("run", "--algo", "adap-tt", "--eps", "0.5", *SMALL, "--workers", "1",
            "--json", str(out))
    assert p.returncode == 0, p.stderr
    return p.stdout, json.loads(out.read_text())


@pytest.mark.slow
def test_run_writes_the_json_contract(contract_run):
    stdout, d = contract_run
    assert "eps_lb" in stdout and "confidence 95%" in stdout and "row" in stdout
    assert "detectable loss at 95% power (beta = 0.05): " in stdout
    h = d["coverage"]["horizon"]          # the searched finalist's audit horizon
    assert f"white-box runs read the changed entry within the audited {h} samples" in stdout
    for key in ("schema_version", "algorithm", "params", "claim", "verdict", "eps_lb", "eps_hat",
                "alpha", "neighbours", "event", "counts", "loss_table", "seed", "runtime_s",
                "versions", "detectable_eps", "detectable_loss", "beta", "power"):
        assert key in d
    assert d["beta"] == 0.05 and d["power"] == 0.95
    c = d["coverage"]                              # from the white-box runs on the audited pair
    assert c["measured"] and c["horizon"] == d["params"]["horizon"]
    assert c["runs"] == 2 * d["whitebox"]["runs"]
    assert 0 < c["runs_read"] <= c["runs"] and c["releases_read"]
    assert 0.5 < d["detectable_eps"] < d["detectable_loss"]
    assert d["schema_version"] == 1 and d["algorithm"] == "adap-tt"
    assert d["claim"] == {"eps": 0.5, "delta": 0.0} and d["verdict"] == "pass"
    assert set(d["params"]) >= {"risk", "means", "horizon", "s"}    # the finalist's instance
    assert d["instance_search"]["audited"] and d["instance_search"]["pool"]
    m = d["counts"]["measurement"]
    assert m["runs_d"] in (2500, 5000, 10000, 20000) and m["tests"] == 8   # 4 looks x 2 pairs
    assert m["stopped"] in ("budget", "futility") and m["runs_d"] == m["runs_d_prime"]
    assert d["whitebox"]["releases_exceed_eps"] is False and d["whitebox"]["max_loss"] <= 0.5 + 1e-9
    assert d["whitebox"]["replay"]["diverged_runs"] == 0
    assert set(d["versions"]) >= {"dpaudit", "numpy", "numba", "python"}
    assert d["loss_table"] and {"p_d", "p_d_prime", "ln_ratio", "ci"} <= set(d["loss_table"][0])
    assert d["search"]["strategy"] == "search" and d["search"]["finalists"]
    assert {"candidates", "budget", "tried", "profile", "multiplicity"} <= set(d["search"])
    assert d["command"] == "dpaudit run --algo adap-tt --eps 0.5 --seed 3 --runs 20000"


@pytest.mark.slow
def test_the_recorded_command_reproduces_the_run_on_two_workers(contract_run, tmp_path):
    _, first = contract_run
    again = tmp_path / "again.json"
    p = cli(*shlex.split(first["command"])[1:], "--workers", "2", "--json", str(again))
    assert p.returncode == 0, p.stderr
    outs = [json.loads(json.dumps(first)), json.loads(again.read_text())]
    for o in outs:
        o.pop("runtime_s")
        o["whitebox"].pop("runtime_s")
    assert outs[0] == outs[1]   # same seed ⇒ identical results, whatever the workers


@pytest.mark.slow
def test_violation_exit_code_and_explicit_pair(tmp_path):
    pair = tmp_path / "pair.json"
    d = [[1.0] * 6 for _ in range(16)]
    dp = [row[:] for row in d]
    d[0] = [0.0] * 6
    pair.write_text(json.dumps({"d": d, "d_prime": dp}))
    p = cli("run", "--algo", "ttucb", "--eps", "1", *SMALL, "--pair", str(pair))
    assert p.returncode == 1 and "VIOLATION" in p.stdout
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"d": d, "d_prime": d}))
    p = cli("run", "--algo", "ttucb", "--eps", "1", "--pair", str(bad))
    assert p.returncode == 2 and "d and d' are identical: user neighbours" in p.stderr
    bad.write_text(json.dumps({"d": d, "d_prime": [[1.5] * 6] + dp[1:]}))
    p = cli("run", "--algo", "ttucb", "--eps", "1", "--pair", str(bad))
    assert p.returncode == 2 and "d'[0, 0] = 1.5 is outside [0, 1]" in p.stderr


@pytest.mark.slow
def test_neighbours_strategy_flag(tmp_path):
    # the v1 hand-picked candidates on request; the search's JSON names the strategy
    out = tmp_path / "s.json"
    p = cli(*RUN, "--runs", "40000", "--seed", "3", "--neighbours", "structure", "--instances",
            "fixed", "--json", str(out))   # a pilot of 0.75 x 40000 runs finds its event
    assert p.returncode == 0, p.stderr
    s = json.loads(out.read_text())["search"]
    assert s["strategy"] == "structure" and s["candidates"] == 12      # 4 rows x 3 bases
    assert len(s["budget"]["rounds"]) == 1 and "search (structure): 12" in p.stdout


@pytest.mark.slow
def test_bench_reports_steps_per_second(tmp_path):
    out = tmp_path / "bench.json"
    p = cli("bench", "--algo", "adap-tt", "--seconds", "0.5", "--json", str(out))
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    assert r["steps_per_s"] > 0 and r["runs"] >= 1 and "steps/s per core" in p.stdout
    assert r["steps"] == pytest.approx(r["steps_per_s"] * r["seconds"])


@pytest.mark.statistical
@pytest.mark.slow
def test_bring_your_own_callable(tmp_path):
    # etc_half_noise has loss 2ε on its recommendation (README example): ε_lb ≈ 1.3 at this
    # budget with sd ≈ 0.05, so missing the violation needs a > 5 sd deviation on a measured
    # distribution far from the boundary; etc (correct) passes unless the α = 1e-6 bound fails
    out = tmp_path / "byo.json"
    bad = cli("run", "--algo", f"{EXAMPLE}:etc_half_noise", "--eps", "1", "--runs", "40000",
              "--seed", "1", "--json", str(out))
    assert bad.returncode == 1, bad.stderr
    j = json.loads(out.read_text())
    assert j["verdict"] == "violation" and j["params"]["model"] == "user"
    assert j["algorithm"].endswith("private_etc.py:etc_half_noise")
    ok = cli("run", "--algo", f"{EXAMPLE}:etc", "--eps", "1", "--runs", "40000", "--seed", "1",
             "--alpha", "1e-6")
    assert ok.returncode == 0, ok.stderr
    # the MODULE:FUNCTION form, with the local model (one reward in, one bit out)
    (tmp_path / "rr_plugin.py").write_text(
        "import math\n"
        "def rr(rng, r, eps):\n"
        "    keep = math.exp(eps) / (1 + math.exp(eps))\n"
        "    bit = int(rng.random() < r)\n"
        "    return bit if rng.random() < keep else 1 - bit\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    p = subprocess.run(DPAUDIT + ["run", "--algo", "rr_plugin:rr", "--model", "local", "--eps",
                                  "0.5", "--runs", "40000", "--seed", "2", "--alpha", "1e-6"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "d = 0 vs d' = 1" in p.stdout


@pytest.mark.slow
def test_check_constants_writes_json_and_all_checks_pass(tmp_path):
    """`dpaudit check constants`: every cross-check of the default report passes (exit 0) and
    the JSON holds the constants, e.g. T*_TV by Proposition 1 and by the LP of Azize et al. (2023)."""
    out = tmp_path / "c.json"
    p = cli("check", "constants", "--paper", "azize2023", "--json", str(out))
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    assert r["checks"] and all(ch["pass"] for ch in r["checks"])
    assert any("LP" in ch["name"] for ch in r["checks"])
    n = len(r["checks"])
    assert f"{n} of {n} checks pass" in p.stdout


@pytest.mark.slow
def test_a_saturated_bound_is_printed_as_saturated(tmp_path):
    # apt (not private) at 20000 runs: no run on d falls in the event at the first look, so
    # eps_lb is the largest bound 2500 runs can give, not a measured size
    out = tmp_path / "apt.json"
    p = cli("run", "--algo", "apt", "--eps", "1", "--runs", "20000", "--seed", "1",
            "--instances", "fixed", "--json", str(out))
    assert p.returncode == 1, p.stderr
    assert "saturated: no hit on d in 2500 runs" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["eps_lb_saturated"] is True and doc["counts"]["measurement"]["runs_d"] == 2500


USER_PAIR = {"d": [[0.0] * 6] * 8, "d_prime": [[0.0] * 6] * 2 + [[1.0] * 6] + [[0.0] * 6] * 5}
SUITE = '[suite]\nalpha = 1e-3\nruns = 1000\n[[audit]]\nalgo = "privbern"\neps = 1\n' \
        'expect = "pass"\n'


def _no_audit(monkeypatch):
    """Any audit started fails the test: outputs are checked before any computation."""
    from dpaudit.auditing import audit
    from dpaudit.gating import gate

    def started(*a, **k):
        raise AssertionError("an audit started before the output path was checked")
    monkeypatch.setattr(audit, "audit_registered", started)
    monkeypatch.setattr(gate, "run_entry", started)


def _refused_unchanged(argv, needle, files, capsys):
    from dpaudit.commands.cli import main
    before = {f: f.read_bytes() for f in files}
    code = main([str(x) for x in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("dpaudit: error: ") and needle in err, err
    assert {f: f.read_bytes() for f in files} == before


def test_an_output_equal_to_an_input_is_refused_before_any_audit(tmp_path, monkeypatch, capsys):
    _no_audit(monkeypatch)
    pair = tmp_path / "pair.json"
    pair.write_text(json.dumps(USER_PAIR))
    _refused_unchanged([*RUN, "--pair", pair, "--json", pair], "is the --pair file", [pair],
                       capsys)
    other = tmp_path / "sub" / ".." / "pair.json"                  # the same file, spelt apart
    (tmp_path / "sub").mkdir()
    _refused_unchanged([*RUN, "--pair", pair, "--json", other], "is the --pair file", [pair],
                       capsys)
    code = tmp_path / "mine.py"
    code.write_text("def f(rng, data, eps):\n    return [0]\n")
    _refused_unchanged(["run", "--algo", f"{code}:f", "--eps", "1", "--json", code],
                       "is the algorithm's file", [code], capsys)
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    _refused_unchanged(["gate", suite, "--junit", suite], "is the suite file", [suite], capsys)
    _refused_unchanged(["gate", suite, "--update-baseline", "--baseline", suite],
                       "is the suite file", [suite], capsys)
    doc = tmp_path / "result.json"
    doc.write_text((DATA / "report_adap_tt.json").read_text())
    _refused_unchanged(["report", doc, "-o", doc], "is the input", [doc], capsys)
    _refused_unchanged(["report", doc, "-o", tmp_path / "r.html", "--markdown",
                        tmp_path / "r.html"], "is the -o file", [doc], capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "mine.py", "pair.json", "result.json", "sub", "suite.toml"]


@pytest.mark.parametrize("argv", [
    [*RUN, "--json"], ["bench", "--algo", "adap-tt", "--json"],
    ["check", "constants", "--paper", "azize2023", "--json"],
    ["check", "correctness", "--algo", "dp-se", "--risk", "0.05", "--eps", "1", "--json"]])
def test_a_folder_or_an_empty_path_is_not_an_output_file(argv, tmp_path, monkeypatch, capsys):
    _no_audit(monkeypatch)
    _refused_unchanged([*argv, tmp_path], "is a folder: expected a file path", [], capsys)
    _refused_unchanged([*argv, ""], "'': expected a file path", [], capsys)
    assert list(tmp_path.iterdir()) == []


def test_a_control_character_in_an_echoed_path_cannot_forge_a_line(tmp_path, capsys):
    forged = tmp_path / "x\nverdict: PASS" / "out.json"
    _refused_unchanged([*RUN, "--json", forged], "x\\nverdict: PASS", [], capsys)


def test_a_closed_stdout_pipe_is_no_traceback_and_keeps_the_exit_code(tmp_path):
    # `dpaudit list | head -0`: the reader is gone before the first line is written
    p = subprocess.Popen(DPAUDIT + ["list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=tempfile.gettempdir())
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 0 and err == "", err


def test_a_callable_that_writes_to_its_table_is_an_error_in_its_code(tmp_path, capsys):
    # it would otherwise be audited on the tables it rewrote (the JSON naming the original
    # pair): a non-private function that zeroes its input passed
    from dpaudit.commands.cli import main
    f = tmp_path / "mutates.py"
    f.write_text("def leak(rng, data, eps):\n    out = int(data[0, 0] > 0.5)\n"
                 "    data *= 0.0\n    return out\n")
    code = main(["run", "--algo", f"{f}:leak", "--eps", "1", "--runs", "2000", "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 4 and err.count("\n") == 1, err
    assert "read-only (in leak at " in err and f"{f}:3" in err


@pytest.mark.parametrize("body, shown", [
    ("return None", "returned None"), ("return 1j * data[0, 0]", "returned 0j"),
    ("return '1'", "returned '1'"), ("return float('nan')", "returned nan"),
    ("return (x for x in [1])", "returned <generator"), ("return [1, 'a']", "returned [1, 'a']"),
])
def test_an_output_an_audit_cannot_use_is_an_error_in_your_code(tmp_path, capsys, body, shown):
    # None (a forgotten return) was read as NaN and passed; a complex output lost its
    # imaginary part (a leak there passed)
    from dpaudit.commands.cli import main
    f = tmp_path / "bad_output.py"
    f.write_text(f"def f(rng, data, eps):\n    {body}\n")
    code = main(["run", "--algo", f"{f}:f", "--eps", "1", "--runs", "2000", "--seed", "1",
                 "--json", str(tmp_path / "o.json")])
    err = capsys.readouterr().err
    assert code == 4 and err.count("\n") == 1, err
    assert err.startswith(f"dpaudit: error in your code: f {shown}") and "real number" in err
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("source, shown", [
    ("import sys\nsys.exit(0)\ndef f(rng, data, eps):\n    return 0\n", "called sys.exit(0)"),
    ("import sys\ndef f(rng, data, eps):\n    sys.exit(0)\n", "f called sys.exit(0)"),
    ("import os\nos._exit(0)\ndef f(rng, data, eps):\n    return 0\n", "called os._exit(0)"),
    ("import os\ndef f(rng, data, eps):\n    os._exit(3)\n", "f called os._exit(3)"),
])
def test_an_exit_in_your_code_is_no_verdict_and_exit_4(tmp_path, capsys, source, shown):
    # sys.exit made dpaudit exit 0, the code of a pass, with no verdict and no message;
    # os._exit ended the process at once (here it would end the test run)
    from dpaudit.commands.cli import main
    real = os._exit
    f = tmp_path / "exits.py"
    f.write_text(source)
    code = main(["run", "--algo", f"{f}:f", "--eps", "1", "--runs", "2000", "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 4 and err.count("\n") == 1 and shown in err, err
    assert err.startswith("dpaudit: error in your code: ")
    assert os._exit is real                                  # put back


def test_a_callable_drawing_other_randomness_is_flagged_and_strict_fails(tmp_path, capsys):
    from dpaudit.commands.cli import main
    f = tmp_path / "globalrng.py"
    f.write_text("import numpy as np\n\ndef f(rng, data, eps):\n"
                 "    return int(data[0, 0] + np.random.laplace(0, 1 / eps) > 0.5)\n\n"
                 "def g(rng, data, eps):\n"
                 "    return int(data[0, 0] + rng.laplace(0, 1 / eps) > 0.5)\n")
    out = tmp_path / "o.json"
    base = ["run", "--eps", "1", "--runs", "2000", "--seed", "1", "--json", str(out)]
    main([*base, "--algo", f"{f}:f"])
    doc = json.loads(out.read_text())
    assert doc["reproducible"] is False and "command" not in doc
    assert "NOT REPRODUCIBLE: two runs of " in capsys.readouterr().out
    main([*base, "--algo", f"{f}:g"])
    doc = json.loads(out.read_text())
    assert doc["reproducible"] is True and doc["command"].startswith("dpaudit run")
    out.unlink()
    capsys.readouterr()
    assert main([*base, "--algo", f"{f}:f", "--strict"]) == 4 and not out.exists()
    assert "draws randomness other than rng (strict)" in capsys.readouterr().err


def test_strict_refuses_an_unreproducible_callable_before_the_audit():
    import numpy as np

    from dpaudit import audit_callable
    from dpaudit.errors import UserCodeError
    from dpaudit.auditing.mechanism import REPRO_RUNS
    calls = []

    def f(rng, data, eps):
        calls.append(1)
        return int(data[0, 0] + np.random.laplace(0, 1 / eps) > 0.5)

    with pytest.raises(UserCodeError, match="draws randomness other than rng"):
        audit_callable(f, 1.0, runs=2000, seed=1, strict=True)
    # one probe run (what does it return?), the two draws of the check, and no audit
    assert len(calls) == 1 + 2 * REPRO_RUNS


def test_an_exception_inside_a_reference_implementation_is_an_internal_error(monkeypatch,
                                                                              capsys):
    # the algorithms install from the top-level algorithms/, not from dpaudit/: a frame there
    # is dpaudit's own code, never "your code"
    from dpaudit.algorithms.adap_tt import glr
    from dpaudit.commands.cli import main
    monkeypatch.setattr(glr, "C_G", None)           # theory.report calls it: TypeError there
    assert main(["check", "constants", "--paper", "azize2023"]) == 4
    err = capsys.readouterr().err
    assert err.startswith("dpaudit: internal error: TypeError: "), err


def test_an_old_paper_number_warns_on_stderr_and_gives_the_new_keys_report(tmp_path):
    out = tmp_path / "c.json"
    p = cli("check", "constants", "--paper", "001", "--json", str(out))
    assert p.returncode == 0, p.stderr
    assert "paper key '001' is deprecated" in p.stderr and "use 'barbara2025'" in p.stderr
    assert json.loads(out.read_text())["paper"] == "barbara2025"


def test_an_algorithm_parameter_named_like_an_audit_option_is_printed_under_its_own_name(
        capsys):
    # AdaP-TT's Top Two proportion beta and the audit's --beta: given as --param, the value
    # goes to the algorithm and a note names both values; the audit's beta is untouched
    from dpaudit.commands.cli import _parser, run_request
    a = _parser().parse_args([*RUN, "--seed", "1", "--param", "beta=0.05"])
    r = run_request(a)
    note = capsys.readouterr().err.strip()
    assert r.params == {"beta": "0.05"} and r.budget.beta == 0.05
    assert note == ("dpaudit: note: --param beta=0.05 sets adap-tt's own parameter beta (Top Two "
                    "tracking proportion β), not the audit's --beta (0.05: eps_ub holds with "
                    "confidence 1 - beta)")
    a = _parser().parse_args([*RUN, "--seed", "1", "--param", "risk=0.05"])
    run_request(a)
    assert capsys.readouterr().err == ""


def _without_timings(doc: dict) -> dict:
    """The verdict JSON without its wall-time fields (``runtime_s``, anywhere)."""
    if isinstance(doc, dict):
        return {k: _without_timings(v) for k, v in doc.items() if k != "runtime_s"}
    return [_without_timings(v) for v in doc] if isinstance(doc, list) else doc


@pytest.mark.slow        # about 35 s: one run that compiles every kernel, one warm
def test_the_first_run_on_an_empty_numba_cache_gives_the_result_of_the_next(tmp_path):
    # compilation happens before the time limit is counted: on an empty cache (compiling takes
    # 10-20 s here) a 10 s limit gives the same JSON as on a warm one, timings aside. Before,
    # the limit was a clock that the compilation ate into.
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    docs = []
    for i in range(2):
        out = tmp_path / f"run{i}.json"
        p = subprocess.run(DPAUDIT + [*RUN, "--seed", "1", "--runs", "5000", "--instances",
                                      "fixed", "--time-limit", "10", "--json", str(out)],
                           capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
        assert p.returncode in (0, 1, 3), p.stderr
        docs.append(json.loads(out.read_text()))
        assert docs[-1]["cut_short"] is None and "cut short" not in p.stdout
    assert any((tmp_path / "numba").rglob("*.nbi"))          # the first run filled the cache
    assert _without_timings(docs[0]) == _without_timings(docs[1])


@pytest.mark.parametrize("argv, started", [
    (["run", "--algo", "adap-tt", "--eps", "1", "--workers", "2"], (2, "processes")),
    (["--debug", "gate", "audits/", "--workers=3"], (3, "processes")),
    (["check", "correctness", "--algo", "dp-se"], ("cores", "processes")),
    (["reproduce", "--scheduler", "dask", "--workers", "2"], (2, "dask")),
    (["check", "constants"], None),
    (["list"], None),
    (["report", "x.json", "--workers", "2"], None),
    (["run", "--help", "--workers", "2"], None),
    (["run", "--workers", "two"], None),
    (["run", "--workers"], ("cores", "processes")),      # the parser will refuse it
    (["run", "--scheduler", "nowhere"], None),
])
def test_the_command_starts_the_pool_its_command_line_asks_for_before_its_imports(
        argv, started, monkeypatch):
    from dpaudit import __main__ as entry
    from dpaudit.core import executor
    monkeypatch.delenv(executor.ENV, raising=False)
    calls = []
    monkeypatch.setattr(executor, "prestart", lambda w, preload=(): calls.append(
        (w, executor.scheduler(), preload)))
    entry.start_workers(argv)
    if started is None:
        assert calls == []
    else:
        workers = executor.default_workers() if started[0] == "cores" else started[0]
        assert calls == [(workers, started[1], entry.PRELOAD)]
