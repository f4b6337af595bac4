"""The validation layer (dpaudit.core.validate): one line naming the value and the accepted range,
an InputError that is a ValueError, the same checks for the API, the CLI and suite files."""
import math
import os

import pytest

from dpaudit.core import validate
from dpaudit.errors import InputError


@pytest.mark.parametrize("check,good,bad", [
    (validate.eps, [1e-3, 1, 36.5, 100], [0, -1, math.nan, math.inf, "1", True, None, 1e-300,
                                          9e-4, 100.5, 1e308]),
    (validate.delta, [0, 1e-5, 0.999], [1, -0.1, math.nan, "0"]),
    (validate.probability, [1e-9, 0.5], [0, 1, math.nan]),
    (validate.positive, [1, 2.0, 10 ** 6], [0, -5, 2.5, math.nan, math.inf, "3", False]),
    (validate.seed, [0, 2 ** 63 - 1], [-1, 2 ** 63, 1.5, "abc", None]),
])
def test_values_in_and_out_of_range(check, good, bad):
    for v in good:
        assert check(v, "x") == v
    for v in bad:
        with pytest.raises(InputError, match=r"^x=.* is out of range: expected "):
            check(v, "x")


def test_an_input_error_is_a_value_error_and_names_flags_the_cli_way():
    assert issubclass(InputError, ValueError)
    with pytest.raises(InputError, match=r"^--runs 0 is out of range: expected an integer >= 1$"):
        validate.parsed("0", "--runs", int, validate.positive)
    with pytest.raises(InputError, match=r"^--runs '1e5' is not valid: expected an integer"):
        validate.parsed("1e5", "--runs", int, validate.positive)
    assert validate.parsed("7", "--runs", int, validate.positive) == 7


def test_output_paths(tmp_path):
    out = tmp_path / "o.json"
    assert validate.output_path("--json", str(out)) == str(out) and not out.exists()
    assert validate.output_path("--json", None) is None
    with pytest.raises(InputError, match="folder .* does not exist"):
        validate.output_path("--json", str(tmp_path / "no" / "o.json"))
    src = tmp_path / "in.json"
    src.write_text("{}")
    with pytest.raises(InputError, match=r"is the input: expected another file"):
        validate.output_path("--json", str(src), {"the input": str(src)})
    os.link(src, tmp_path / "hard.json")                           # same file, other name
    with pytest.raises(InputError, match="is the input"):
        validate.output_path("--json", str(tmp_path / "hard.json"), {"the input": str(src)})
    if os.geteuid() != 0:                                          # root writes anywhere
        (tmp_path / "ro").mkdir(mode=0o500)
        with pytest.raises(InputError, match="cannot write in folder"):
            validate.output_path("--json", str(tmp_path / "ro" / "o.json"))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "ro") == ["hard.json",
                                                                           "in.json"]


def test_shown_escapes_control_characters_only():
    assert validate.shown("a\nb\tc\x1b[31m ε") == "a\\nb\\tc\\x1b[31m ε"


def _lap(rng, data, n):
    return data[0] + rng.laplace(0.0, 1.0, n)


def _etc(rng, data, eps):
    return [0]


@pytest.mark.parametrize("call,needle", [
    (lambda d: d.audit_mechanism(_lap, [0.0], [1.0], eps=1.0, n=math.nan, seed=1), "n=nan"),
    (lambda d: d.audit_mechanism(_lap, [0.0], [1.0], eps=1.0, n=math.inf, seed=1), "n=inf"),
    (lambda d: d.audit_mechanism(_lap, [0.0], [1.0], eps=1.0, n=10 ** 20, seed=1), "n=10"),
    (lambda d: d.audit_mechanism(_lap, [0.0], [1.0], eps=1.0, n=2000, seed=-1), "seed=-1"),
    (lambda d: d.audit_mechanism(_lap, [0.0], [1.0], eps=1.0, n=2000, seed="abc"),
     "seed='abc'"),
    (lambda d: d.audit_algorithm("privbern", 1.0, runs=2000, seed=-1, workers=1), "seed=-1"),
    (lambda d: d.audit_algorithm("privbern", 1.0, runs=2000, seed=1.5, workers=1), "seed=1.5"),
    (lambda d: d.audit_algorithm("privbern", 1.0, runs=2000, seed=1, workers=1,
                                 pair="x.json"), "pair='x.json' is not valid"),
    (lambda d: d.audit_callable(_etc, 1.0, runs=2000, seed=-7), "seed=-7"),
    (lambda d: d.audit_callable(_etc, 1.0, means="0.9,0.5", runs=2000, seed=1),
     "means='0.9,0.5' is out of range: expected a list of at least 2 numbers"),
    (lambda d: d.testing.assert_dp(_etc, eps=1.0, seed=-1, runs=2000), "seed=-1"),
    (lambda d: d.audit_mechanism(_lap, [0.0], [1.0], eps=1e308, n=2000, seed=1), "eps=1e+308"),
])
def test_the_python_api_raises_input_error_before_any_work(call, needle, monkeypatch):
    import dpaudit
    import dpaudit.testing  # noqa: F401  (assert_dp)
    from dpaudit.auditing import audit, mechanism, plugin

    def started(*a, **k):
        raise AssertionError("the audit started")
    for module in (audit, mechanism, plugin):
        monkeypatch.setattr(module, "run_audit", started)
    with pytest.raises(InputError) as e:
        call(dpaudit)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_a_horizon_whose_candidate_tables_exceed_memory_is_refused_first(monkeypatch):
    # R02 of the robustness review: horizon 10^6 once took more than 8 GB before failing
    import dpaudit
    from dpaudit.auditing import audit
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 4 * 2 ** 20}         # a 16 GiB machine
    monkeypatch.setattr(validate.os, "sysconf", lambda k: pages[k])
    monkeypatch.setattr(audit, "KernelSource", lambda *a, **k: pytest.fail("simulated"))
    with pytest.raises(InputError, match=r"^horizon=1000000: the candidate pairs of 1000000x2 "
                                         r"tables would need about 262 GB of memory, more than "
                                         r"half of this machine's 17.2 GB; use a smaller"):
        dpaudit.audit_algorithm("gdp-ncb", 1.0, runs=2000, seed=1, workers=1,
                                params={"horizon": "1000000"})
    validate.memory("x", 8e9, "fix")                                  # below half: accepted
