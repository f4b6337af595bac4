"""Audit results: the verdict JSON of README "Verdict JSON", its atomic writing and the text
summary."""
from __future__ import annotations

import json
import math
import os
import platform
import tempfile
from dataclasses import dataclass, field
from importlib.metadata import version

import numba
import numpy as np
import scipy
import statsmodels

from dpaudit.core import interrupt
from dpaudit.core.request import DEFAULT_MARGIN
from dpaudit.core.terms import Side, Verdict

SCHEMA_VERSION = 1
EXIT_CODES = {Verdict.PASS: 0, Verdict.VIOLATION: 1, Verdict.INCONCLUSIVE: 3}


def versions() -> dict:
    return {"dpaudit": version("dpaudit"), "numpy": np.__version__, "numba": numba.__version__,
            "scipy": scipy.__version__, "statsmodels": statsmodels.__version__,
            "python": platform.python_version()}


def jsonable(x):
    """Floats that JSON cannot hold (inf, nan) become strings "inf", "-inf", "nan"."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


@dataclass
class AuditResult:
    """Outcome of one audit. ``to_dict()`` is the stable JSON of README "Verdict JSON"."""

    algorithm: str
    params: dict
    eps: float
    delta: float
    verdict: Verdict
    eps_lb: float
    eps_hat: float | None       # the δ-loss estimate on the measured event; None: nothing measured
    alpha: float
    neighbours: dict
    event: dict
    counts: dict
    loss_table: list
    seed: int
    runtime_s: float
    detectable_eps: float
    beta: float = 0.05         # eps_ub holds with confidence 1 - beta; detectable_loss at power 1 - beta
    detectable_loss: float = float("inf")   # a planning figure (observed power): never decides
    eps_ub: float = float("inf")  # the largest finalist's upper bound on its event's loss
    search: dict = field(default_factory=dict)
    whitebox: dict = field(default_factory=dict)   # dpaudit.auditing.whitebox (registered kernels)
    coverage: dict = field(default_factory=dict)   # what of the sampling read the difference
    reason: str | None = None   # inconclusive: why, and the fix (dpaudit.verdicts.verdict)
    runs_needed: int | None = None
    margin: float = DEFAULT_MARGIN
    saturated: bool = False    # eps_lb from zero hits on the denominator side (bound_text)
    command: str = ""          # the `dpaudit run` command line that reproduces it (CLI runs)
    # callables: whether two draws with one seed agreed (False: it draws randomness other than
    # rng, so the seed does not reproduce the result); None: not checked (compiled kernels)
    reproducible: bool | None = None
    # not in the JSON: (source, Event) behind eps_lb, for callers that re-measure it (the gate)
    evidence: tuple | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return jsonable({
            "schema_version": SCHEMA_VERSION, "algorithm": self.algorithm, "params": self.params,
            "claim": {"eps": self.eps, "delta": self.delta}, "verdict": self.verdict,
            "reason": self.reason, "runs_needed": self.runs_needed, "margin": self.margin,
            "eps_lb": self.eps_lb, "eps_lb_saturated": self.saturated,
            "eps_hat": self.eps_hat, "alpha": self.alpha,
            "confidence": 1 - self.alpha, "detectable_eps": self.detectable_eps,
            "beta": self.beta, "power": 1 - self.beta, "eps_ub": self.eps_ub,
            "detectable_loss": self.detectable_loss,
            "neighbours": self.neighbours, "event": self.event, "counts": self.counts,
            "loss_table": self.loss_table, "search": self.search, "coverage": self.coverage,
            **({"whitebox": self.whitebox} if self.whitebox else {}), "seed": self.seed,
            "runtime_s": self.runtime_s, "versions": versions(),
            "reproducible": self.reproducible,
            **({"command": self.command} if self.command else {})})

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def summary(self) -> str:
        """Human-readable summary (what `dpaudit run` prints on stdout)."""
        m = self.counts["measurement"]
        ev = self.event
        claim = f"eps={self.eps:g}" + (f", delta={self.delta:g}" if self.delta else " (pure DP)")
        lines = [
            f"dpaudit: {self.algorithm}  claim {claim}  verdict: {self.verdict.upper()}",
            *([f"  reason: {self.reason}"] if self.reason else []),
            "  " + bound_text(self.to_dict()),
            _upper_line(self.eps_ub, self.beta, self.eps, self.margin),
            _detectable_line(self.detectable_loss, self.beta, self.detectable_eps,
                             m["runs_d"] > 0),
            *_neighbours_lines(self.neighbours),
            f"  event: {ev['text']}",
            f"  counts (measurement, fresh runs): d {m['hits_d']}/{m['runs_d']}, "
            f"d' {m['hits_d_prime']}/{m['runs_d_prime']}; {m['tests']} tests at alpha "
            f"{levels_text(m)}, stopped: {m['stopped']}",
            *_search_lines(self.search),
            *_whitebox_lines(self.whitebox),
            f"  coverage: {coverage_text(self.coverage)}",
            *([f"  NOT REPRODUCIBLE: two runs of {self.algorithm} with one seed differed: it "
               "draws randomness other than rng (global np.random, random, time), so the seed "
               "does not reproduce this result; draw from rng"]
              if self.reproducible is False else []),
            f"  seed {self.seed}, {self.runtime_s:.1f} s",
        ]
        return "\n".join(lines)


def bound_text(doc: dict) -> str:
    """ε_lb and the point estimate of a result (JSON) in words, for the text output and the
    reports: a saturated bound (no hit on the denominator side: the largest bound the budget
    can give, whatever the loss) is labelled so; the estimate is the δ-loss
    ln((p̂_num − δ)/p̂_den) of the measured event, absent when nothing was measured, and
    flagged as biased upward when the measurement stopped early on a violation."""
    m = doc["counts"]["measurement"]
    text = (f"eps_lb = {float(doc['eps_lb']):.4f} at confidence "
            f"{100 * (1 - doc['alpha']):.6g}% (alpha = {doc['alpha']:g}")
    hat = doc.get("eps_hat")
    if hat is None:
        return text + "; nothing measured, no point estimate)"
    name = "delta-loss" if doc["claim"].get("delta") else "point"
    hat = float(hat)                       # ("inf", "nan" in JSON parse too)
    text += f"; {name} estimate {hat:.4f}"
    if m.get("stopped") == "violation":
        text += " at the stopping look, biased upward by the early stop"
    text += ")"
    if doc.get("eps_lb_saturated"):
        den = Side.D_PRIME.label if doc["event"].get("numerator") == Side.D.label else Side.D.label
        text += (f"; saturated: no hit on {den} in {m['runs_d']} runs, so this is the largest "
                 "bound that budget can give at this alpha, not a measured size (the loss may "
                 "be infinite)")
    return text


def levels_text(m: dict) -> str:
    """The tests' levels of a result's ``counts.measurement``: per look (``alpha_per_look``)
    or, in results written before the looks were weighted, one level for all
    (``alpha_per_test``)."""
    if m.get("alpha_per_look"):
        return " / ".join(f"{a:.3g}" for a in m["alpha_per_look"]) + " at the looks"
    a = m.get("alpha_per_test")
    return f"{a:.3g} each" if isinstance(a, (int, float)) else "unknown"


def _upper_line(eps_ub: float, beta: float, eps: float, margin: float) -> str:
    """What a pass promises (:mod:`dpaudit.verdicts.verdict`): the measured events' loss is below
    ``eps_ub`` with confidence 1 − β."""
    conf = f"{100 * (1 - beta):.6g}%"
    target = (1 + margin) * eps
    if math.isinf(eps_ub):
        return (f"  eps_ub = inf: no upper bound on a measured event's loss at confidence {conf} "
                f"(a pass needs <= (1 + margin)·eps = {target:.4g})")
    return (f"  eps_ub = {eps_ub:.4f}: the measured events' loss is below it with confidence "
            f"{conf} (beta = {beta:g}; a pass needs <= (1 + margin)·eps = {target:.4g}); "
            "nothing is said of events not measured")


def _detectable_line(loss: float, beta: float, median: float, measured: bool) -> str:
    power = f"{100 * (1 - beta):.6g}%"
    head = f"  planning figure (not the pass rule): detectable loss at {power} power"
    if not measured:
        return f"{head}: inf (no event was measured)"
    if math.isinf(loss):
        return (f"{head}: inf (no loss on the measured event reaches that power with these "
                f"runs; {median:.4g} at 50%)")
    return (f"{head} (beta = {beta:g}): {loss:.4f} on the measured event ({median:.4f} at "
            "50%), from the counts measured")


def coverage_text(c: dict) -> str:
    """The ``coverage`` of a result (JSON) in one sentence (text output and reports)."""
    if not c or not c.get("measured"):
        return f"not measured ({(c or {}).get('reason', 'this result has no coverage record')})"
    phases = ", ".join(f"phase {r['phase']}: {r['releases']} in {r['runs']} runs"
                       for r in c["releases_read"]) or "none"
    st = c["stopping_time"]
    return (f"{100 * c['fraction_read']:.4g}% of {c['runs']} white-box runs read the "
            f"changed entry within the audited {c['horizon']} samples (releases that read it: "
            f"{phases}); "
            f"stopping time on d {st['d']['min']}-{st['d']['max']}, on d' "
            f"{st['d_prime']['min']}-{st['d_prime']['max']}")


def _search_lines(s: dict) -> list[str]:
    if not s:
        return []
    b = s["budget"]
    rounds = " -> ".join(str(r["candidates"]) for r in b["rounds"])
    screen = s.get("screen")
    kept = (f", {screen['kept']} kept by the white-box screen" if screen else "")
    return [f"  search ({s['strategy']}): {s['candidates']} candidate pairs{kept}; pilot rounds "
            f"{rounds} pairs, {b['pilot_runs_per_side_used']} pilot runs per side in all"]


def _whitebox_lines(w: dict) -> list[str]:
    if not w:
        return []
    rp = w["replay"]
    step = rp["first_divergent_step"]
    replay = ("no run diverged" if not rp["diverged_runs"] else
              f"{rp['diverged_runs']} runs diverged (first at step {step}): raw data reached a "
              "decision without noise")
    what = releases_text(w)
    return [f"  white-box: largest privacy loss of the releases over {2 * w['runs']} runs = "
            f"{w['max_loss']:.4f} ({what})",
            f"  gray-box replay (noise frozen, d -> d' and d' -> d): {replay}"]


def releases_text(w: dict) -> str:
    """The white-box releases' loss against ε in words (text output and reports): above ε is
    a fact about the releases, not a verdict on the released transcript."""
    if w.get("releases_exceed_eps") is None:
        return f"(eps, delta) claim: {w['runs_above_eps']} runs above eps, which it allows"
    if not w["releases_exceed_eps"]:
        return "within eps"
    return (f"above eps in {w['runs_above_eps']} runs: the internal releases alone are not "
            "eps-DP; the released transcript may still be (e.g. report-noisy-max), the "
            "black-box verdict decides")


def _neighbours_lines(nb: dict) -> list[str]:
    if "changed_row" in nb:
        where = (f"{nb['model']} tables {nb['rows']}x{nb['arms']}, base {nb['base']['name']}, "
                 f"row {nb['changed_row']} = {_row(nb['row_d'])} in d vs "
                 f"{_row(nb['row_d_prime'])} in d'")
    elif "changed_entry" in nb:
        a, n = nb["changed_entry"]
        where = (f"stream tables {nb['arms']}x{nb['rows']}, base {nb['base']['name']}, pull {n} "
                 f"of arm {a} = {nb['value_d']:g} in d vs {nb['value_d_prime']:g} in d'")
    else:                              # a local reward or a generic mechanism's inputs
        return [f"  neighbours: d = {_row(nb['d'])} vs d' = {_row(nb['d_prime'])}"]
    return [f"  neighbours: {where}", f"    ({nb['why']}; pattern {nb.get('pattern', '0→1')})"]


def _row(values) -> str:
    values = list(np.ravel(values))
    if len(values) > 12:
        return f"array of {len(values)} values"
    if len(values) == 1:
        return f"{values[0]:g}"
    if len(set(values)) == 1:
        return f"all {values[0]:g}"
    return "(" + ", ".join(f"{v:g}" for v in values) + ")"


def write_text_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same folder, then rename):
    a reader never sees a half-written file, and a failure leaves no file behind."""
    folder = os.path.dirname(os.path.abspath(path))
    with interrupt.held():                       # Ctrl-C: the whole file or none of it
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".dpaudit-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            umask = os.umask(0)                  # mkstemp makes 0600; give the usual mode
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def write_json_atomic(path: str, obj: dict) -> None:
    """:func:`write_text_atomic` of ``obj`` as indented JSON."""
    write_text_atomic(path, json.dumps(obj, indent=2) + "\n")
