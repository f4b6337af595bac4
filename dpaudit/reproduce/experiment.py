"""What every paper's reproduction shares.

What every paper's reproduction shares: the run context, the paper-vs-ours rows, the
figure files and the page.

A reproduction (:class:`Reproduction`) holds the settings it ran with, its figures (PNG and
SVG, each with the data behind it as JSON) and its rows: one per number the paper prints or
claim it states, with the paper's value, ours with a confidence interval and a verdict,
*reproduced* or *differs* (a *differs* row always says why). The intervals of one paper are
simultaneous: each row's interval has level 1 − α/m for the m rows of the page (Bonferroni,
α = :data:`ALPHA`), so every verdict on a page holds together with probability ≥ 1 − α.
"""
from __future__ import annotations

import io
import json
import os
from dataclasses import asdict, dataclass, field
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from tqdm import tqdm

from dpaudit.algorithms import registry
from dpaudit.core import executor
from dpaudit.reporting.report import environment
from dpaudit.simulation.simulate import outcomes_many
from dpaudit.verdicts.result import jsonable, versions, write_bytes_atomic, write_text_atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

ALPHA = 0.05        # every page's rows hold together with probability >= 1 - ALPHA
RESAMPLES = 2000    # bootstrap resamples of a ratio's interval
MODES = ("quick", "full")


@dataclass(frozen=True)
class Context:
    """How a reproduction runs.

    How a reproduction runs: root ``seed`` (same seed ⇒ same numbers, whatever
    ``workers``), ``workers`` processes, ``progress`` bars on stderr, the output ``folder``.
    """
    folder: str
    seed: int = 0
    workers: int = 1
    progress: bool = False

    def outcomes(self, requests: list, what: str) -> list[tuple]:
        """(τ, rec, status) of every request, with a progress bar.

        Args:
            requests: the simulations (:func:`~dpaudit.simulation.simulate.outcomes_many`).
            what: the progress bar's name.

        Returns:
            One (tau, rec, status) triple per request.
        """
        bar = tqdm(total=sum(r.n_runs for r in requests), unit="run", desc=what, leave=False,
                   disable=not self.progress)
        with bar:
            return outcomes_many(requests, workers=self.workers, progress=bar.update)

    def regret(self, jobs: list, what: str) -> list[np.ndarray]:
        """:func:`pseudo_regret` of every job, pooled over the workers, with a progress bar.

        Args:
            jobs: the :class:`RegretRuns`.
            what: the progress bar's name.

        Returns:
            One (runs, checkpoints) float64 array per job.
        """
        bar = tqdm(total=sum(j.runs for j in jobs), unit="run", desc=what, leave=False,
                   disable=not self.progress)
        stream = executor.map_tasks(pseudo_regret, jobs, self.workers) if self.workers > 1 and \
            len(jobs) > 1 else map(pseudo_regret, jobs)
        out = []
        with bar:
            for j, x in zip(jobs, stream):
                out.append(x)
                bar.update(j.runs)
        return out


@dataclass(frozen=True)
class RegretRuns:
    """Runs of a regret-minimising algorithm on fresh Bernoulli(``means``) rewards.

    Args:
        algo: registry name.
        params: (key, value) pairs of its options besides ``means`` and ``horizon``.
        eps: its privacy budget ε.
        means: the instance, one mean per arm.
        horizon: rounds T of every run.
        runs: independent runs.
        seed: entropy of the runs' seeds (run r draws from ``SeedSequence(seed, spawn_key=(r,))``).
        checkpoints: the 1-based rounds at which the regret is read, increasing, ≤ T.
    """
    algo: str
    params: tuple
    eps: float
    means: tuple
    horizon: int
    runs: int
    seed: tuple
    checkpoints: tuple


def pseudo_regret(job: RegretRuns) -> np.ndarray:
    """Cumulative pseudo-regret Σ_{s ≤ t} (max μ − μ_{J_s}) of each run at its checkpoints.

    One compiled kernel call per run, one reused action buffer.

    Args:
        job: the runs (:class:`RegretRuns`).

    Returns:
        float64 array of shape (runs, len(checkpoints)).
    """
    spec = registry.get(job.algo)
    p = spec.resolve_params({**dict(job.params), "means": job.means, "horizon": job.horizon})
    prep = spec.prepare(job.eps, p)
    means = np.asarray(job.means, dtype=np.float64)
    gap = means.max() - means
    at = np.asarray(job.checkpoints, dtype=np.int64) - 1
    actions = np.empty(job.horizon, np.int16)
    out = np.empty((job.runs, at.size))
    for r in range(job.runs):
        rng = np.random.default_rng(np.random.SeedSequence(job.seed, spawn_key=(r,)))
        tau, _, _, _ = spec.kernel(rng, np.zeros((0, means.size)), prep.means, prep.theta,
                                   prep.aux, job.horizon, actions, np.empty((0, 8)),
                                   np.empty(0))
        if int(tau) != job.horizon:
            raise RuntimeError(f"{job.algo} stopped at {tau} of {job.horizon} rounds")
        out[r] = np.cumsum(gap[actions])[at]
    return out


@dataclass(frozen=True)
class Row:
    """One line of the paper-vs-ours table.

    Args:
        quantity: what is compared (where the paper states it).
        paper: the paper's value or claim.
        ours: our value with its interval.
        reproduced: whether ours agrees with the paper (the rule is in ``rule``).
        rule: how ``reproduced`` was decided from the interval.
        why: the explanation; required when not reproduced.
    """
    quantity: str
    paper: str
    ours: str
    reproduced: bool
    rule: str
    why: str = ""

    def __post_init__(self) -> None:
        """Coerce ``reproduced`` to bool; a row that differs must say why (ValueError)."""
        object.__setattr__(self, "reproduced", bool(self.reproduced))   # numpy's bool too
        if not self.reproduced and not self.why.strip():
            raise ValueError(f"row {self.quantity!r} differs from the paper without a reason")

    @property
    def verdict(self) -> str:
        """``reproduced`` or ``differs``."""
        return "reproduced" if self.reproduced else "differs"


@dataclass(frozen=True)
class Figure:
    """A figure written as ``name``.png and ``name``.svg, its data as ``name``.json."""
    name: str
    caption: str

    @property
    def files(self) -> tuple[str, str, str]:
        """The figure's PNG, SVG and JSON file names."""
        return tuple(f"{self.name}.{ext}" for ext in ("png", "svg", "json"))


@dataclass
class Reproduction:
    """A paper's reproduction: what ran and what it showed (the page and ``result.json``)."""
    key: str
    title: str
    citation: str
    experiment: str
    mode: str
    settings: dict
    choices: list[str]
    figures: list[Figure] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    tables: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seed: int = 0
    runtime_s: float = 0.0
    reduced: bool = False       # fewer runs, instances or budgets than the paper's experiment

    def to_json(self) -> dict:
        """The page's data as JSON."""
        return jsonable({**asdict(self), "rows": [{**asdict(r), "verdict": r.verdict}
                                                  for r in self.rows],
                         "figures": [{**asdict(f), "files": list(f.files)} for f in self.figures],
                         "command": self.command, "alpha": ALPHA, "versions": versions()})

    @property
    def command(self) -> str:
        """The command line that reproduces the page."""
        return (f"dpaudit reproduce {self.key}" + (" --quick" if self.mode == "quick" else "")
                + f" --seed {self.seed}")


def level(m: int) -> float:
    """The confidence of each of ``m`` simultaneous intervals (Bonferroni at :data:`ALPHA`).

    Args:
        m: intervals.

    Returns:
        1 − ALPHA/m.
    """
    return 1.0 - ALPHA / max(1, m)


def mean_interval(x: ArrayLike, confidence: float) -> tuple[float, float, float]:
    """The mean of a sample and its two-sided Student-t interval.

    Args:
        x: the sample (1-d).
        confidence: the interval's level.

    Returns:
        (mean, low, high); a constant sample has the zero-width interval at its value.
    """
    x = np.asarray(x, dtype=float)
    m = float(x.mean())
    if x.size < 2 or float(x.std()) == 0.0:
        return m, m, m
    lo, hi = stats.ttest_1samp(x, m).confidence_interval(confidence)
    return m, float(lo), float(hi)


def ratio_interval(a: ArrayLike, b: ArrayLike, confidence: float,
                   seed: int) -> tuple[float, float, float]:
    """mean(a)/mean(b) of two independent samples and its bootstrap interval.

    A percentile bootstrap (scipy.stats.bootstrap, :data:`RESAMPLES` resamples, seeded).

    Args:
        a: the numerator's sample.
        b: the denominator's sample.
        confidence: the interval's level.
        seed: the bootstrap's seed.

    Returns:
        (ratio, low, high).
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    r = float(a.mean() / b.mean())
    if float(a.std()) == 0.0 and float(b.std()) == 0.0:
        return r, r, r
    ci = stats.bootstrap((a, b), lambda x, y, axis: x.mean(axis) / y.mean(axis),
                         vectorized=True, paired=False, n_resamples=RESAMPLES,
                         confidence_level=confidence, method="percentile",
                         random_state=np.random.default_rng(seed)).confidence_interval
    return r, float(ci.low), float(ci.high)


@dataclass(frozen=True)
class Claim:
    """What a row checks.

    What a row checks: the ``quantity`` compared, the ``paper``'s value or claim, the
    ``rule`` in words, ``holds`` ((mean, low, high) -> whether the interval supports the
    paper) and ``why`` it may not (text, or a function of (mean, low, high)).
    """
    quantity: str
    paper: str
    rule: str
    holds: Callable
    why: object


def ratio_row(a: ArrayLike, b: ArrayLike, seed: int, claim: Claim,
              undecided: str = "") -> Callable[[float], Row]:
    """A row comparing mean(a)/mean(b) (:func:`ratio_interval`) with a claim.

    Args:
        a: the numerator's sample.
        b: the denominator's sample.
        seed: the bootstrap's seed.
        claim: what the paper states.
        undecided: if not empty, why the samples cannot decide (e.g. censored runs); the row
            then differs and says so.

    Returns:
        A function of the confidence level (known once every row of the page is listed) that
        gives the :class:`Row`.
    """
    def row(conf: float) -> Row:
        v = ratio_interval(a, b, conf, seed)
        text = claim.why(v) if callable(claim.why) else claim.why
        if undecided:
            return Row(claim.quantity, claim.paper, interval_text(v), False, claim.rule,
                       f"Not decided: {undecided}. {text}")
        ok = bool(claim.holds(v))
        return Row(claim.quantity, claim.paper, interval_text(v), ok, claim.rule,
                   "" if ok else text)
    return row


def spread(samples: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean, standard deviation and the band mean ± one sd of each sample.

    The band is cut to the range of the runs (the bands of the stopping-time figures).

    Args:
        samples: 1-d samples.

    Returns:
        (mean, sd, low, high): four float64 arrays of shape (len(samples),).
    """
    m = np.array([np.mean(x) for x in samples], dtype=float)
    sd = np.array([np.std(x, ddof=1) if np.size(x) > 1 else 0.0 for x in samples])
    lo = np.maximum(m - sd, [np.min(x) for x in samples])
    hi = np.minimum(m + sd, [np.max(x) for x in samples])
    return m, sd, lo, hi


def interval_text(v: tuple[float, float, float], digits: int = 3) -> str:
    """(mean, low, high) as "mean [low, high]".

    Args:
        v: (mean, low, high).
        digits: significant digits.

    Returns:
        The text.
    """
    m, lo, hi = v
    return f"{m:.{digits}g} [{lo:.{digits}g}, {hi:.{digits}g}]"


def save_figure(fig: MplFigure, data: dict, folder: str, name: str, caption: str) -> Figure:
    """Write a figure as PNG and SVG and the numbers it plots as JSON, each atomically.

    Args:
        fig: the matplotlib figure.
        data: the numbers it plots.
        folder: the output folder.
        name: the files' stem.
        caption: the figure's caption.

    Returns:
        The :class:`Figure` (name and caption).
    """
    f = Figure(name, caption)
    png, svg, js = (os.path.join(folder, n) for n in f.files)
    for path, fmt in ((png, "png"), (svg, "svg")):
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=110, bbox_inches="tight",
                    metadata={"Date": None} if fmt == "svg" else None)
        write_bytes_atomic(path, buf.getvalue())
    write_text_atomic(js, json.dumps(jsonable(data), indent=1) + "\n")
    return f


def new_figure(cols: int, rows: int = 1, width: float = 4.2,
               height: float = 3.4) -> tuple[MplFigure, list]:
    """A matplotlib Figure with a ``rows`` × ``cols`` grid of axes (object API, Agg).

    Args:
        cols: columns.
        rows: rows.
        width: inches per column.
        height: inches per row.

    Returns:
        (figure, the axes as a flat array).
    """
    from matplotlib.figure import Figure as MplFigure
    fig = MplFigure(figsize=(width * cols, height * rows), layout="constrained")
    return fig, np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()


def write_page(rep: Reproduction, folder: str) -> str:
    """Write ``index.html`` and ``result.json`` of a reproduction.

    Args:
        rep: the reproduction.
        folder: its folder.

    Returns:
        The page's path.
    """
    page = environment(False).get_template("paper.html.j2").render(
        r=rep, alpha=ALPHA, m=len(rep.rows), versions=versions(),
        reproduced=sum(x.reproduced for x in rep.rows))
    write_text_atomic(os.path.join(folder, "result.json"),
                      json.dumps(rep.to_json(), indent=1) + "\n")
    path = os.path.join(folder, "index.html")
    write_text_atomic(path, page)
    return path


def write_index(reps: list[Reproduction], folder: str) -> str:
    """Write ``index.html`` of the papers reproduced into ``folder``.

    Papers reproduced earlier into the same folder stay listed.

    Args:
        reps: the reproductions just written.
        folder: the output folder.

    Returns:
        The index's path.
    """
    found = {}
    for key in sorted(os.listdir(folder)):
        path = os.path.join(folder, key, "result.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                found[key] = json.load(f)
    for r in reps:
        found[r.key] = r.to_json()
    papers = [{"key": k, "title": d["title"], "citation": d["citation"],
               "size": "reduced (--quick)" if d.get("reduced") else "full",
               "rows": len(d["rows"]),
               "reproduced": sum(x["verdict"] == "reproduced" for x in d["rows"]),
               "runtime": d["runtime_s"]} for k, d in sorted(found.items())]
    path = os.path.join(folder, "index.html")
    write_text_atomic(path, environment(False).get_template("papers.html.j2").render(
        papers=papers))
    return path
