"""Where the gate's time goes: each entry's wall time split by the audit's stages.

    python benchmarks/gate_profile.py [audits/] [--workers 2] [--json benchmarks/figures/gate_profile.json]

Runs the suite's entries one by one as ``dpaudit gate`` checks them
(:func:`dpaudit.gating.gate.check_entry`, against the committed baseline) with timers around the
stages of an audit of a registered algorithm: the claim-space instance screen, the pair screen,
the pilot rounds, the choice of events on the pilots, the validation of the last round's events
on fresh runs, the measurement looks, the final white-box, and the gate's re-measurement of
the stored event; ``compile`` is numba's compilation (or cache load) in this process, inside the
stages; ``other`` is the rest (setup, events, the verdict). Checkpointed: each finished entry is
written to ``--json`` at once, and a rerun skips those already there (delete the file to start
afresh). Prints one row per entry and the totals.
"""
import argparse
import contextlib
import json
import os
import time
from collections import defaultdict

import numba.core.event as numba_event

from dpaudit.auditing import audit
from dpaudit.gating import gate
from dpaudit.verdicts.result import write_json_atomic

STAGES = {"instance screen": (audit, "_search_instances"),
          "pair screen": (audit, "_pooled_candidates"),
          "pilots": (audit, "_pilots"),
          "events": (audit, "best_event"),
          "validation": (audit, "_draws"),
          "measurement": (audit, "measure"),
          "white-box": (audit, "whitebox"),
          "re-measurement": (gate, "remeasure")}


@contextlib.contextmanager
def timed(spent: dict):
    """Wrap every stage so its wall time adds up in ``spent`` (and numba's compile time)."""
    saved = {name: getattr(mod, attr) for name, (mod, attr) in STAGES.items()}

    def wrap(name, fn):
        def run(*args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - t
        return run

    for name, (mod, attr) in STAGES.items():
        setattr(mod, attr, wrap(name, saved[name]))
    try:
        with numba_event.install_timer("numba:compile",
                                       lambda s: spent.__setitem__("compile",
                                                                   spent["compile"] + s)):
            yield
    finally:
        for name, (mod, attr) in STAGES.items():
            setattr(mod, attr, saved[name])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("suite", nargs="?", default="audits/")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "figures",
                                                   "gate_profile.json"))
    a = ap.parse_args()
    suite = gate.load_suite(a.suite)
    doc = gate.read_baseline(os.path.join(os.path.dirname(suite.path), gate.BASELINE_FILE),
                             suite, "dpaudit gate --update-baseline")
    done = {}
    if os.path.exists(a.json):
        with open(a.json) as f:
            done = json.load(f).get("entries", {})
    cols = [*STAGES, "compile", "other", "total"]
    print("| entry | " + " | ".join(cols) + " |\n" + "|---" * (len(cols) + 1) + "|")
    for e in suite.entries:
        if e.name not in done:
            spent = defaultdict(float)
            check = gate.EntryCheck(e, suite.entry_alpha, True,
                                    (doc["entries"].get(e.name) or {}).get("event"),
                                    workers=a.workers)
            with timed(spent):
                row = gate.check_entry(check)
            staged = sum(v for k, v in spent.items() if k != "compile")
            done[e.name] = {**spent, "other": row["seconds"] - staged, "total": row["seconds"],
                            "ok": row["ok"], "verdict": row["result"]["verdict"]}
            write_json_atomic(a.json, {"suite": suite.path, "workers": a.workers,
                                       "entries": done})
        r = done[e.name]
        print(f"| {e.name} | " + " | ".join(f"{r.get(c, 0.0):.1f}" for c in cols) + " |",
              flush=True)
    totals = {c: sum(done[e.name].get(c, 0.0) for e in suite.entries) for c in cols}
    print("| **all** | " + " | ".join(f"{totals[c]:.0f}" for c in cols) + " |")
    print(f"\n{sum(done[e.name]['ok'] for e in suite.entries)}/{len(suite.entries)} as expected; "
          f"{a.workers} workers")


if __name__ == "__main__":
    main()
