"""Fuzzing the command line (hypothesis, derandomized by the conftest profile "seeded"):
arguments of every subcommand and the contents of pair, suite, baseline and result files, drawn
mostly from hostile values (NaN, inf, huge, negative, empty, text, control characters, folders,
inputs as outputs). Whatever the input, the contract of docs/reference/cli.md holds: the exit
code is 0–4; for 2 and 4 stderr is one line and nothing is written; there is never a traceback;
the inputs are unchanged and no temporary file is left. Bounded: the examples of all tests
together run in under a minute (most are refused before any computation)."""
import json

import pytest
from hostile import runner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

FUZZ = settings(max_examples=100, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

NUMBER = st.sampled_from(["0", "-1", "1", "0.5", "2", "1e308", "1e-300", "nan", "inf", "-inf",
                          "", "abc", "1,2", "0x10", "1e5", "\n", "9" * 30, "0.001", "100"])
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8)
VALUE = NUMBER | TEXT
PATH_OUT = st.sampled_from(["{tmp}/out.json", "{tmp}/adir", "{tmp}/nope/o.json", "",
                            "{tmp}/pair.json", "{tmp}/s.toml", "{tmp}/in.json", "/proc/x.json"])
ALGO = st.sampled_from(["privbern", "adap-tt", "dp-se", "adap-ttt", "", ":", "os:getcwd",
                        "{fx}/byo.py:leaky", "{fx}/byo.py:returns_none", "{fx}/byo.py:raises",
                        "{fx}/byo.py:complex_leak", "{fx}/import_exit.py:f", "{fx}/nope.py:f",
                        "{fx}/syntax_err.py:f"]) | TEXT
PARAM = st.tuples(st.sampled_from(["means", "risk", "horizon", "max_steps", "features", "x",
                                   ""]), VALUE).map(lambda kv: f"{kv[0]}={kv[1]}") | TEXT


def _argv(command, required, optional):
    """argv strategy: ``command`` then each flag of ``required`` (always) and a subset of
    ``optional`` (dicts flag -> value strategy; a value None is a bare flag)."""
    flags = st.fixed_dictionaries(required, optional=optional)

    def flatten(d):
        out = list(command)
        for flag, value in d.items():
            out += [flag] if value is None else [flag, value]
        return out
    return flags.map(flatten)


RUN = _argv(["run"], {"--workers": st.sampled_from(["1", "0", "-1", "x"])},
            {"--algo": ALGO, "--eps": NUMBER, "--delta": NUMBER, "--alpha": NUMBER,
             "--beta": NUMBER, "--margin": NUMBER, "--seed": NUMBER,
             "--runs": st.sampled_from(["20", "0", "-5", "1e5", "abc", str(2 ** 41)]),
             "--json": PATH_OUT, "--pair": st.sampled_from(["{tmp}/pair.json", "{tmp}/p.json",
                                                            "{fx}/binary.json", "{tmp}/adir"]),
             "--param": PARAM, "--neighbours": VALUE, "--model": VALUE, "--strict": st.none()})
BENCH = _argv(["bench"], {"--seconds": st.sampled_from(["0.05", "0", "-1", "nan", "1e308"])},
              {"--algo": ALGO, "--eps": NUMBER, "--delta": NUMBER, "--param": PARAM,
               "--json": PATH_OUT})
CONSTANTS = _argv(["check", "constants"], {},
                  {"--paper": st.sampled_from(["azize2023", "chen2024", "004", "999", ""]) | TEXT,
                   "--param": PARAM, "--json": PATH_OUT})
CORRECTNESS = _argv(["check", "correctness"], {"--workers": st.sampled_from(["1", "0"]),
                                               "--runs": st.sampled_from(["20", "0", "x"])},
                    {"--algo": ALGO, "--risk": NUMBER, "--eps": NUMBER, "--param": PARAM,
                     "--seed": NUMBER, "--alpha": NUMBER, "--json": PATH_OUT})


def _holds(argvs, root, files=None):
    """Run ``argvs`` (placeholders of runner.filled) after writing ``files`` ({name in tmp:
    text}) and assert the contract."""
    tmp, fx = runner.prepare(root)
    for name, text in (files or {}).items():
        (tmp / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    before, fixtures = runner.snapshot(tmp), runner.snapshot(fx)
    for argv in argvs:
        code, out, err = runner.call([runner.filled(a, tmp, fx) for a in argv])
        event(f"{argv[0]}: exit {code}")         # --hypothesis-show-statistics
        assert code in (0, 1, 2, 3, 4), (argv, code, err)
        assert "Traceback" not in err, (argv, err)
        after = runner.snapshot(tmp)
        if code in (2, 4):
            assert err.count("\n") == 1 and err.startswith("dpaudit: error"), (argv, err)
            assert after == before, (argv, err)
        assert not [k for k in after if ".dpaudit-" in k], (argv, after)
        assert runner.snapshot(fx) == fixtures, argv


@pytest.mark.cli
@FUZZ
@given(argv=st.one_of(RUN, BENCH, CONSTANTS, CORRECTNESS))
def test_fuzzed_arguments(argv, tmp_path_factory):
    _holds([argv], tmp_path_factory.mktemp("fuzz"))


JSON = st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | TEXT,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                        st.sampled_from(["d", "d_prime", "why", "_kind", "schema_version",
                                         "entries", "eps", "eps_lb", "eps_ub", "verdict",
                                         "claim", "counts"]) | TEXT, inner, max_size=4),
                    max_leaves=12)


def _mutated(doc, draw):
    """``doc`` (parsed JSON) with one nested value replaced by a drawn JSON value or removed."""
    paths = []

    def walk(node, path):
        paths.append(path)
        items = node.items() if isinstance(node, dict) else (
            enumerate(node) if isinstance(node, list) else [])
        for k, v in items:
            walk(v, path + [k])
    walk(doc, [])
    path = draw(st.sampled_from(paths[1:] or [[]]))
    if not path:
        return draw(JSON)
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    if draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(JSON)
    return doc


@st.composite
def _file_case(draw):
    kind = draw(st.sampled_from(["pair", "suite", "baseline", "result"]))
    if kind == "pair":
        base = json.loads((runner.HERE / "fixtures" / "user_ok.json").read_text())
        text = json.dumps(_mutated(base, draw) if draw(st.booleans()) else draw(JSON))
        argv = ["run", "--algo", "privbern", "--eps", "1", "--runs", "20", "--workers", "1",
                "--seed", "1", "--pair", "{tmp}/f.json", "--json", "{tmp}/out.json"]
    elif kind == "suite":
        entries = draw(st.dictionaries(st.sampled_from(["algo", "eps", "delta", "seed",
                                                        "expect", "params", "pair", "name",
                                                        "neighbours", "x"]),
                                       st.sampled_from(['"privbern"', "1", "0.5", "-1", "nan",
                                                        '"pass"', '"x"', "[1, 2]", "{}",
                                                        "true", '"{tmp}/pair.json"', "1e308"]),
                                       max_size=6))
        text = "[suite]\nruns = 20\n[[audit]]\n" + "".join(f"{k} = {v}\n"
                                                          for k, v in entries.items())
        if draw(st.booleans()):
            text = draw(TEXT) + text[draw(st.integers(0, len(text))):]
        argv = ["gate", "{tmp}/f.toml", "--workers", "1", "--baseline", "{tmp}/nobase.json",
                "--junit", "{tmp}/g.xml"]
        return ({"f.toml": text}, [argv])
    elif kind == "baseline":
        text = json.dumps(draw(JSON))
        argv = ["gate", "{fx}/gate/ok.toml", "--workers", "1", "--baseline", "{tmp}/f.json"]
    else:
        base = json.loads((runner.HERE / "fixtures" / "rep" / "audit_local.json").read_text())
        text = json.dumps(_mutated(base, draw))
        argv = ["report", "-o", "{tmp}/r.html", "{tmp}/f.json"]
    return ({"f.json": text}, [argv])


@pytest.mark.cli
@settings(FUZZ, max_examples=60)
@given(case=_file_case())
def test_fuzzed_files(case, tmp_path_factory):
    files, argvs = case
    _holds(argvs, tmp_path_factory.mktemp("fuzz"), files)
