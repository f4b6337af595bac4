"""The CI gate on privacy regressions: ``dpaudit gate audits/`` (issue 8).

A suite (``audits/suite.toml``) lists audits, one per registered algorithm claim and per
mutant, each with its budget (measurement ``runs``), ``seed`` and expected verdict (``pass``
for the private algorithms, ``violation`` for mutants and non-private comparators)::

    [suite]
    alpha = 1e-3            # false-alarm budget of the whole suite
    runs = 200000           # default budget of an entry

    [[audit]]
    name = "adap-tt"        # entry name (defaults to algo); unique
    algo = "adap-tt"        # registry name
    eps = 0.5
    seed = 1
    expect = "pass"         # or "violation", or "inconclusive" with reason = "why"
    # optional: delta, runs, params = { risk = "0.05" }, neighbours = "search",
    # pair = "pairs/x.json" (an explicit neighbouring pair, path relative to the suite file)

The gate runs every entry (:func:`dpaudit.audit.audit_algorithm`) and fails (exit 1) when

* a verdict differs from the expected one (an ``inconclusive`` verdict fails unless the entry
  declares ``expect = "inconclusive"`` with a ``reason``, shown in the reports), or
* an ε_lb is significantly above the stored baseline: the new lower confidence bound exceeds
  the baseline's *upper* confidence bound on the loss of the event it measured
  (``eps_ub``, from the last look of its measurement, :mod:`dpaudit.measure`).

One error budget across the suite. With N entries each audit runs at α_i = α/(2N). A
correct algorithm fails the gate only if its new lower bound is invalid (probability ≤ α_i)
or, for the regression test, the baseline's upper bound was (≤ α_i, the baseline ran at
α_i too): the suite's false-alarm probability is ≤ Σ 2α_i = α (union bound), stated in the
output. The regression test compares confidence bounds on the loss of the measured events:
when the search picks the same event (same seed and law) the bound above is exact; when it
picks another event, "above the baseline" means the new event leaks significantly more than
the baseline's did, which a reviewer should see either way. Mutants are expected to be
caught: a missed mutant fails the gate as an unexpected verdict (the power of each entry's
budget: README "CI gate").

Results are deterministic for a suite (same seeds ⇒ same verdicts, whatever ``--workers``).
Outputs (each written atomically): the baseline JSON (``--update-baseline``), JUnit XML
(``--junit``), and per-entry verdict JSON + HTML/Markdown reports with an index
(``--report-dir``, :mod:`dpaudit.report`).
"""
from __future__ import annotations

import math
import os
import time
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from dpaudit.errors import InputError
from dpaudit.result import write_json_atomic, write_text_atomic
from dpaudit.tables import load_pair
from dpaudit.verdict import DEFAULT_MARGIN

SUITE_FILE = "suite.toml"
BASELINE_FILE = "baseline.json"
DEFAULT_ALPHA = 1e-3
DEFAULT_RUNS = 200_000
VERDICTS = ("pass", "violation", "inconclusive")
ENTRY_KEYS = {"name", "algo", "eps", "delta", "seed", "runs", "expect", "params", "neighbours",
              "pair", "reason"}


@dataclass(frozen=True)
class Entry:
    """One audit of the suite (module doc: the TOML keys)."""
    name: str
    algo: str
    eps: float
    seed: int
    expect: str
    runs: int
    delta: float | None = None
    params: dict = field(default_factory=dict)
    neighbours: str = "search"
    pair: str | None = None              # as written in the suite (relative to its folder)
    pair_path: str | None = None         # resolved
    reason: str | None = None            # why an entry is expected to be inconclusive

    def config(self) -> dict:
        """What a baseline must match to be comparable (everything but the name)."""
        return {"algo": self.algo, "eps": self.eps, "delta": self.delta, "seed": self.seed,
                "runs": self.runs, "params": self.params, "neighbours": self.neighbours,
                "pair": self.pair}


@dataclass(frozen=True)
class Suite:
    path: str
    alpha: float
    entries: tuple

    @property
    def entry_alpha(self) -> float:
        """α_i = α/(2N): the verdict's and the baseline's bound each (module doc)."""
        return self.alpha / (2 * len(self.entries))


def suite_path(path: str) -> str:
    """The suite file of ``path`` (a folder holding suite.toml, or a .toml file)."""
    return os.path.join(path, SUITE_FILE) if os.path.isdir(path) else path


def load_suite(path: str) -> Suite:
    """Parse and validate a suite (module doc). InputError (one line, naming the file and the
    entry) on a missing file, bad TOML, unknown keys or algorithms, or bad values."""
    from dpaudit import registry
    f = suite_path(path)
    try:
        with open(f, "rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        raise InputError(f"suite {f} not found: expected a folder with {SUITE_FILE} or a "
                         ".toml file") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"suite {f} is not valid TOML: {e}") from None
    head = doc.get("suite", {})
    alpha = head.get("alpha", DEFAULT_ALPHA)
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise InputError(f"suite {f}: alpha={alpha!r} is out of range: expected a number in "
                         "(0, 1)")
    default_runs = head.get("runs", DEFAULT_RUNS)
    raw = doc.get("audit", [])
    if not raw:
        raise InputError(f"suite {f} has no [[audit]] entries")
    entries, names = [], set()
    for i, e in enumerate(raw):
        where = f"suite {f}, audit #{i + 1}"
        unknown = sorted(set(e) - ENTRY_KEYS)
        if unknown:
            raise InputError(f"{where}: unknown key {unknown[0]!r}: expected one of "
                             f"{', '.join(sorted(ENTRY_KEYS))}")
        if "algo" not in e or "eps" not in e or "expect" not in e:
            raise InputError(f"{where}: algo, eps and expect are required")
        name = str(e.get("name", e["algo"]))
        if name in names:
            raise InputError(f"{where}: entry name {name!r} is used twice")
        names.add(name)
        spec = registry.get(e["algo"])               # InputError naming the close matches
        if e["expect"] not in VERDICTS:
            raise InputError(f"{where} ({name}): expect={e['expect']!r} is not valid: "
                             f"expected one of {', '.join(VERDICTS)}")
        reason = e.get("reason")
        if (e["expect"] == "inconclusive") != isinstance(reason, str) or reason == "":
            raise InputError(f"{where} ({name}): expect = 'inconclusive' needs reason = '...' "
                             "(why the audit cannot decide), and only it takes a reason")
        eps, runs, seed = e["eps"], e.get("runs", default_runs), e.get("seed", 0)
        if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
            raise InputError(f"{where} ({name}): eps={eps!r} is out of range: expected a "
                             "number > 0")
        if not (isinstance(runs, int) and runs >= 1000):
            raise InputError(f"{where} ({name}): runs={runs!r} is out of range: expected an "
                             "integer >= 1000")
        if not (isinstance(seed, int) and 0 <= seed < 2 ** 63):
            raise InputError(f"{where} ({name}): seed={seed!r} is out of range: expected an "
                             "integer in [0, 2^63)")
        params = {str(k): str(v) for k, v in e.get("params", {}).items()}
        try:
            spec.resolve_params(params)
        except InputError as err:
            raise InputError(f"{where} ({name}): {err}") from None
        pair_path = None
        if "pair" in e:
            pair_path = os.path.join(os.path.dirname(os.path.abspath(f)), e["pair"])
            try:
                load_pair(pair_path, spec.model)
            except InputError as err:
                raise InputError(f"{where} ({name}): {err}") from None
        entries.append(Entry(name=name, algo=e["algo"], eps=float(eps), seed=seed,
                             expect=e["expect"], runs=runs, delta=e.get("delta"),
                             params=params, neighbours=e.get("neighbours", "search"),
                             pair=e.get("pair"), pair_path=pair_path, reason=reason))
    return Suite(path=f, alpha=float(alpha), entries=tuple(entries))


def eps_ub(result: dict) -> float:
    """Upper confidence bound on the loss of the event whose lower bound is ε_lb: the last
    look of the measurement, finalist with the largest lower bound (inf when unmeasured)."""
    looks = result["counts"]["measurement"].get("looks") or []
    if not looks:
        return math.inf
    lb, ub = looks[-1]["eps_lb"], looks[-1]["eps_ub"]
    if not lb:
        return math.inf
    i = max(range(len(lb)), key=lambda j: lb[j])
    v = ub[i]
    return math.inf if isinstance(v, str) else float(v)


def judge(entry: Entry, result: dict, base: dict | None) -> tuple[bool, str, str]:
    """(ok, status, message) of one entry against its expectation and baseline entry."""
    got = result["verdict"]
    lb = float(result["eps_lb"])
    if got != entry.expect:
        what = {"pass": "no violation found", "inconclusive": result.get("reason") or "",
                "violation": f"eps_lb {lb:.4f} > eps {entry.eps:g}"}[got]
        return False, "unexpected verdict", (
            f"{entry.name}: expected {entry.expect.upper()}, got {got.upper()} ({what}; "
            f"algorithm {entry.algo})")
    if base is None:
        return True, "no baseline", f"{entry.name}: {got.upper()} as expected (no baseline)"
    if base.get("config") != entry.config():
        return True, "stale baseline", (f"{entry.name}: {got.upper()} as expected; baseline "
                                        "was made with another configuration (run "
                                        "--update-baseline)")
    ub = float(base["eps_ub"]) if base.get("eps_ub") not in (None, "inf") else math.inf
    if lb > ub:
        return False, "above baseline", (
            f"{entry.name}: eps_lb {lb:.4f} is significantly above the baseline (its upper "
            f"bound {ub:.4f}, eps_lb {float(base['eps_lb']):.4f}; algorithm {entry.algo})")
    return True, "ok", f"{entry.name}: {got.upper()} as expected, eps_lb {lb:.4f} <= baseline " \
                       f"bound {ub:.4f}"


def run_entry(entry: Entry, alpha: float, workers: int | None = None,
              beta: float = 0.05, margin: float = DEFAULT_MARGIN) -> dict:
    """The verdict JSON (README "Verdict JSON") of one entry audited at level ``alpha``, its
    detectable loss stated at power 1 − ``beta``; a pass needs it ≤ (1 + ``margin``)·ε."""
    from dpaudit import registry
    from dpaudit.audit import audit_algorithm
    pair = (load_pair(entry.pair_path, registry.get(entry.algo).model) if entry.pair_path
            else None)
    res = audit_algorithm(entry.algo, entry.eps, params=dict(entry.params), delta=entry.delta,
                          alpha=alpha, runs=entry.runs, seed=entry.seed, workers=workers,
                          neighbours=entry.neighbours, pair=pair, beta=beta,
                          margin=margin)
    res.command = command_of(entry, alpha, beta, margin)
    return res.to_dict()


def command_of(entry: Entry, alpha: float, beta: float = 0.05,
               margin: float = DEFAULT_MARGIN) -> str:
    """The `dpaudit run` line that reproduces an entry's audit."""
    import shlex
    argv = ["dpaudit", "run", "--algo", entry.algo, "--eps", repr(entry.eps)]
    if entry.delta is not None:
        argv += ["--delta", repr(entry.delta)]
    argv += ["--seed", str(entry.seed), "--runs", str(entry.runs), "--alpha", repr(alpha)]
    if beta != 0.05:
        argv += ["--beta", repr(beta)]
    if margin != DEFAULT_MARGIN:
        argv += ["--margin", repr(margin)]
    if entry.neighbours != "search":
        argv += ["--neighbours", entry.neighbours]
    if entry.pair_path:
        argv += ["--pair", os.path.relpath(entry.pair_path)]
    if entry.params:
        argv += ["--param", *(f"{k}={v}" for k, v in entry.params.items())]
    return shlex.join(argv)


def read_baseline(path: str | None) -> dict:
    if not path or not os.path.exists(path):
        return {}
    import json
    try:
        with open(path) as f:
            return json.load(f)["entries"]
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(f"--baseline {path} is not a dpaudit baseline (JSON with 'entries')") \
            from None


def baseline_doc(suite: Suite, rows: list) -> dict:
    return {"suite": suite.path, "alpha": suite.alpha, "entry_alpha": suite.entry_alpha,
            "entries": {r["entry"].name: {
                "config": r["entry"].config(), "verdict": r["result"]["verdict"],
                "reason": r["result"].get("reason"),
                "detectable_loss": _finite(float(r["result"]["detectable_loss"])),
                "power": r["result"]["power"],
                "eps_lb": r["result"]["eps_lb"], "eps_ub": _finite(eps_ub(r["result"])),
                "versions": r["result"]["versions"]} for r in rows}}


def _finite(x: float):
    return x if math.isfinite(x) else "inf"


def junit_xml(suite: Suite, rows: list) -> str:
    """JUnit XML of the gate: one testcase per entry, a <failure> for each failed one."""
    fails = sum(not r["ok"] for r in rows)
    ts = ET.Element("testsuite", name="dpaudit gate", tests=str(len(rows)),
                    failures=str(fails), errors="0",
                    time=f"{sum(r['result']['runtime_s'] for r in rows):.3f}")
    props = ET.SubElement(ts, "properties")
    ET.SubElement(props, "property", name="suite", value=suite.path)
    ET.SubElement(props, "property", name="false_alarm_bound", value=repr(suite.alpha))
    for r in rows:
        e, res = r["entry"], r["result"]
        tc = ET.SubElement(ts, "testcase", classname=f"dpaudit.gate.{e.expect}", name=e.name,
                           time=f"{res['runtime_s']:.3f}")
        if not r["ok"]:
            ET.SubElement(tc, "failure", message=r["message"], type=r["status"]).text = \
                res.get("command", "")
        tprops = ET.SubElement(tc, "properties")
        for key in ("verdict", "eps_lb", "alpha", "power", "detectable_loss"):
            if key in res:
                ET.SubElement(tprops, "property", name=key, value=str(res[key]))
        ET.SubElement(tc, "system-out").text = (
            f"verdict {res['verdict']}, eps_lb {res['eps_lb']:.6g} at alpha "
            f"{res['alpha']:.3g}; detectable loss {res.get('detectable_loss', 'n/a')} at power "
            f"{res.get('power', 'n/a')}; {res.get('command', '')}")
    return ET.tostring(ts, encoding="unicode", xml_declaration=True) + "\n"


def gate(path: str, *, baseline: str | None = None, junit: str | None = None,
         report_dir: str | None = None, update_baseline: bool = False,
         workers: int | None = None, echo=print, beta: float = 0.05,
         margin: float = DEFAULT_MARGIN) -> int:
    """Run the suite at ``path`` (module doc). Returns the exit code: 0 when every entry is as
    expected and not above its baseline, 1 otherwise. ``echo`` receives the progress and
    summary lines. The default baseline is ``baseline.json`` beside the suite. Every entry's
    detectable loss is stated at power 1 − ``beta`` (JUnit properties and reports); a pass
    needs it ≤ (1 + ``margin``)·ε."""
    suite = load_suite(path)
    if baseline is None:
        baseline = os.path.join(os.path.dirname(suite.path), BASELINE_FILE)
    for out in (junit, report_dir and os.path.join(report_dir, "x"),
                baseline if update_baseline else None):
        if out and not os.path.isdir(os.path.dirname(os.path.abspath(out))):
            raise InputError(f"{out}: folder {os.path.dirname(os.path.abspath(out))} does "
                             "not exist")
    base = {} if update_baseline else read_baseline(baseline)
    a_i = suite.entry_alpha
    echo(f"dpaudit gate: {len(suite.entries)} audits from {suite.path}; false-alarm "
         f"probability of the suite <= {suite.alpha:g} (each audit at alpha {a_i:.3g}; "
         f"baseline {baseline if base else 'none'})")
    rows, t0 = [], time.perf_counter()
    for i, e in enumerate(suite.entries):
        res = run_entry(e, a_i, workers, beta, margin)
        ok, status, msg = judge(e, res, base.get(e.name))
        rows.append({"entry": e, "result": res, "ok": ok, "status": status, "message": msg})
        echo(f"[{i + 1}/{len(suite.entries)}] {'ok  ' if ok else 'FAIL'} {msg} "
             f"({res['runtime_s']:.0f} s)")
    failed = [r for r in rows if not r["ok"]]
    if update_baseline and failed:
        echo(f"baseline not written: {len(failed)} unexpected verdict(s)")
    elif update_baseline:
        write_json_atomic(baseline, baseline_doc(suite, rows))
        echo(f"baseline written: {baseline}")
    if junit:
        write_text_atomic(junit, junit_xml(suite, rows))
    if report_dir:
        _reports(report_dir, rows, base)
    echo(f"dpaudit gate: {len(rows) - len(failed)}/{len(rows)} as expected in "
         f"{time.perf_counter() - t0:.0f} s; false-alarm probability <= {suite.alpha:g}")
    for r in failed:
        echo(f"FAILED {r['message']}")
    return 1 if failed else 0


def _reports(folder: str, rows: list, base: dict) -> None:
    """Per-entry verdict JSON and HTML/Markdown reports, and the index page."""
    from dpaudit import report
    entries = []
    for r in rows:
        e, res = r["entry"], r["result"]
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in e.name)
        write_json_atomic(os.path.join(folder, f"{stem}.json"), res)
        report.write_report([res], os.path.join(folder, f"{stem}.html"),
                            os.path.join(folder, f"{stem}.md"))
        b = base.get(e.name)
        entries.append({"name": e.name, "algorithm": e.algo, "eps": e.eps,
                        "expected": e.expect + (f" ({e.reason})" if e.reason else ""),
                        "verdict": res["verdict"] + (f": {res['reason']}"
                                                     if res.get("reason") else ""),
                        "ok": r["ok"],
                        "eps_lb": res["eps_lb"], "baseline": b["eps_lb"] if b else None,
                        "report": f"{stem}.html", "runtime_s": res["runtime_s"]})
    report.write_index(entries, folder)
