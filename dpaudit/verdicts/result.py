"""Audit results: the verdict JSON, its atomic writing and the text summary.

Audit results: the verdict JSON of docs/reference/verdict-json.md, its atomic writing and the text
summary.
"""
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
from dpaudit.core.request import DEFAULT_BETA, DEFAULT_MARGIN
from dpaudit.core.terms import Verdict

SCHEMA_VERSION = 1
EXIT_CODES = {Verdict.PASS: 0, Verdict.VIOLATION: 1, Verdict.INCONCLUSIVE: 3}


def versions() -> dict:
    """The versions of dpaudit, its numerical libraries and Python, by name."""
    return {"dpaudit": version("dpaudit"), "numpy": np.__version__, "numba": numba.__version__,
            "scipy": scipy.__version__, "statsmodels": statsmodels.__version__,
            "python": platform.python_version()}


def jsonable(x: object) -> object:
    """``x`` with the floats JSON cannot hold (inf, nan) as strings "inf", "-inf", "nan".

    Args:
        x: a number, or dicts, lists and tuples of them (nested).

    Returns:
        The same structure (tuples as lists) with non-finite floats replaced.
    """
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


@dataclass(frozen=True)
class AuditResult:
    """Outcome of one audit. ``to_dict()`` is the stable JSON of docs/reference/verdict-json.md."""

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
    beta: float = DEFAULT_BETA  # eps_ub at confidence 1 - beta; detectable_loss at power 1 - beta
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
    # --instances search: the claim-space screen (space, proposed, dropped with reasons,
    # ranked, the instance audited); {} for a fixed instance, and then not in the JSON
    instance_search: dict = field(default_factory=dict)
    # where the samples cap or the time limit stopped a pilot round or a measurement look
    # ("" if neither did): any verdict may be cut short, and then says so
    cut_short: str = ""
    # what the verdict rests on: "statistical" (counts, at confidence 1 - alpha / 1 - beta) or
    # "white-box proof" (exact numbers, no confidence level; no verdict rests on one today)
    evidence: str = "statistical"
    # --exact: the transcript's exact privacy on the audited pair (dpaudit.auditing.exact); {}:
    # not asked, and then not in the JSON
    exact: dict = field(default_factory=dict)
    # --small-delta-runs: the importance-sampled (eps, delta) bound on the audited pair
    # (dpaudit.auditing.importance), or why none; {}: not asked, and then not in the JSON
    small_delta: dict = field(default_factory=dict)
    # --stratified-runs: the stratified pure-eps bound on the audited pair
    # (dpaudit.auditing.strata), or why none; {}: not asked, and then not in the JSON
    stratified: dict = field(default_factory=dict)
    # not in the JSON: (source, Event) behind eps_lb, for callers that re-measure it (the gate)
    measured: tuple | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """The verdict JSON, with non-finite numbers as strings.

        The keys are in docs/reference/verdict-json.md; the JSON Schema is
        ``dpaudit/verdicts/verdict.schema.json``.
        """
        return jsonable({
            "schema_version": SCHEMA_VERSION, "algorithm": self.algorithm, "params": self.params,
            "claim": {"eps": self.eps, "delta": self.delta}, "verdict": self.verdict,
            "evidence": self.evidence, "reason": self.reason, "runs_needed": self.runs_needed, "margin": self.margin,
            "eps_lb": self.eps_lb, "eps_lb_saturated": self.saturated,
            "eps_hat": self.eps_hat, "alpha": self.alpha,
            "confidence": 1 - self.alpha, "detectable_eps": self.detectable_eps,
            "beta": self.beta, "power": 1 - self.beta, "eps_ub": self.eps_ub,
            "detectable_loss": self.detectable_loss,
            "neighbours": self.neighbours, "event": self.event, "counts": self.counts,
            "loss_table": self.loss_table, "search": self.search, "coverage": self.coverage,
            **({"whitebox": self.whitebox} if self.whitebox else {}), "seed": self.seed,
            "runtime_s": self.runtime_s, "versions": versions(),
            "reproducible": self.reproducible, "cut_short": self.cut_short or None,
            **({"command": self.command} if self.command else {}),
            **({"instance_search": self.instance_search} if self.instance_search else {}),
            **({"exact": self.exact} if self.exact else {}),
            **({"small_delta": self.small_delta} if self.small_delta else {}),
            **({"stratified": self.stratified} if self.stratified else {})})

    @property
    def exit_code(self) -> int:
        """The command line's exit code of the verdict: 0 pass, 1 violation, 3 inconclusive."""
        return EXIT_CODES[self.verdict]


def write_text_atomic(path: str, text: str) -> None:
    """Write text to a file atomically, UTF-8 (:func:`write_bytes_atomic`).

    Args:
        path: the file.
        text: its content.
    """
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str, data: bytes) -> None:
    """Write bytes to a file atomically.

    A temporary file in the same folder, then a rename: a reader never sees a half-written
    file, a failure leaves no file behind, and a Ctrl-C during the write waits for it to end
    (:func:`dpaudit.core.interrupt.held`).

    Args:
        path: the file.
        data: its content.
    """
    folder = os.path.dirname(os.path.abspath(path))
    with interrupt.held():                       # Ctrl-C: the whole file or none of it
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".dpaudit-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            umask = os.umask(0)                  # mkstemp makes 0600; give the usual mode
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def write_json_atomic(path: str, obj: dict) -> None:
    """Write an object as indented JSON, atomically (:func:`write_text_atomic`).

    Args:
        path: the file.
        obj: a JSON-able object (non-finite numbers already as strings, :func:`jsonable`).
    """
    write_text_atomic(path, json.dumps(obj, indent=2) + "\n")
