"""Reviewer reports: ``dpaudit report RESULT.json [...] -o report.html``.

One self-contained HTML page (inline CSS, matplotlib figures as base64 PNG data URIs, no
JavaScript) and optionally the same content as Markdown, from the JSON files written by
``dpaudit run --json`` (docs/reference/verdict-json.md), ``dpaudit check correctness --json`` and
``dpaudit check
constants --json``. Templates live in ``dpaudit/reporting/templates``; the HTML environment escapes
every
value (algorithm names, parameters, file names, event text), the Markdown one escapes HTML
characters and table pipes with :func:`md_escape`.

Public API: :func:`load`, :func:`render_html`, :func:`render_markdown`, :func:`write_report`,
:func:`write_index`, and :func:`add_parser` / :func:`main` for the CLI.
"""
from __future__ import annotations

import argparse
import base64
import io
import json
import math
import os
import urllib.parse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import jinja2
import numpy as np

from dpaudit.core import validate
from dpaudit.core.terms import Verdict
from dpaudit.errors import InputError
from dpaudit.reporting.text import (accountant_text, coverage_text, cut_short_text,
                                    exact_text, instance_lines, levels_text, release_log_text,
                                    releases_text, small_delta_text, stratified_text,
                                    summary_lines,
                                    verdict_text)
from dpaudit.verdicts.result import write_text_atomic

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
MAX_LOSS_ROWS = 40          # loss-table rows shown (largest |ln ratio| first when there are more)
DPI = 90
QUANTILES = ("50", "90", "99", "99.9", "max")


# ---------------------------------------------------------------- inputs

def classify(doc: object) -> str | None:
    """The kind of a result JSON, by its keys.

    Args:
        doc: a parsed JSON document.

    Returns:
        ``"audit"``, ``"correctness"``, ``"constants"`` or ``"mutation"``, else None.
    """
    if not isinstance(doc, dict):
        return None
    if doc.get("_kind") in VIEWS:
        return doc["_kind"]
    if {"mutants", "per_algorithm", "score"} <= doc.keys():
        return "mutation"
    if {"verdict", "eps_lb", "claim", "loss_table"} <= doc.keys():
        return "audit"
    if doc.get("check") == "correctness" and "verdict" in doc:
        return "correctness"
    if "paper" in doc and isinstance(doc.get("checks"), list):
        return "constants"
    return None


def load(paths: Sequence[str]) -> list[dict]:
    """The JSON objects in ``paths``, tagged with their kind and source.

    Args:
        paths: result JSON files.

    Returns:
        The objects, each with ``_kind`` (:func:`classify`) and ``_source`` (the file name).

    Raises:
        InputError: a file that cannot be read, is not JSON, or is none of the four kinds (one
            line naming the file).
    """
    if not paths:
        raise InputError("no input file: expected one or more RESULT.json files")
    docs = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except OSError as e:
            raise InputError(f"{path}: cannot read ({e.strerror})")
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise InputError(f"{path}: not valid JSON ({getattr(e, 'msg', e)})")
        kind = classify(doc)
        if kind is None:
            raise InputError(f"{path}: not a dpaudit result: expected the JSON of `dpaudit run`, "
                             "`dpaudit check correctness`, `dpaudit check constants` or "
                             "`dpaudit mutate`")
        docs.append({**doc, "_kind": kind, "_source": os.path.basename(path)})
    return docs


# ---------------------------------------------------------------- formatting

def _finite(x: object) -> float | None:
    """``x`` as a finite float, or None (missing, a string like "inf", nan, a bool)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


def num(x: object, digits: int = 4) -> str:
    """A number for a table.

    Args:
        x: a number, a string (``"inf"``/``"nan"`` kept) or None (an em dash).
        digits: significant digits of a float (ints as they are).

    Returns:
        The text.
    """
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return f"{x:.{digits}g}"
    if isinstance(x, (list, tuple)):
        return ", ".join(num(v, digits) for v in x) if len(x) <= 12 else f"{len(x)} values"
    return str(x)


def fixed(x: object, places: int = 4) -> str:
    """A loss with ``places`` decimals (as ``dpaudit run`` prints it).

    Args:
        x: the loss.
        places: decimals.

    Returns:
        The text.
    """
    return f"{x:.{places}f}" if _finite(x) is not None else num(x)


def pct(x: object) -> str:
    """A probability as a percentage, e.g. 0.95 -> "95 %".

    Args:
        x: the probability.

    Returns:
        The text.
    """
    return f"{100 * x:.6g} %" if _finite(x) is not None else num(x)


def md_escape(text: object) -> str:
    """Text safe inside Markdown and its table cells.

    ``&`` and ``<`` become HTML entities (no tag or entity can start); backslashes, pipes,
    brackets, backticks and asterisks are backslashed; newlines become spaces.

    Args:
        text: any value; its ``str`` is escaped.

    Returns:
        The escaped text.
    """
    s = str(text).replace("&", "&amp;").replace("<", "&lt;").replace("\\", "\\\\")
    for c in "|[]`*":
        s = s.replace(c, "\\" + c)
    return s.replace("\r", " ").replace("\n", " ")


def md_code(text: object) -> str:
    """A fenced Markdown code block holding ``text`` verbatim.

    Args:
        text: the content.

    Returns:
        The block, its fence longer than any backtick run inside.
    """
    text = str(text)
    run = longest = 0
    for c in text:
        run = run + 1 if c == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _values(v: Sequence) -> str:
    """A table row or a value of a neighbouring pair, e.g. "(1, 0, 0, 1)" or "0.5"."""
    if isinstance(v, (list, tuple)):
        flat = []
        for x in v:
            flat.extend(x if isinstance(x, (list, tuple)) else [x])
        if len(flat) > 16:
            return f"array of {len(flat)} values"
        return "(" + ", ".join(num(x, 6) for x in flat) + ")"
    return num(v, 6)


def _param(v: object) -> str:
    """A parameter value for the parameters table."""
    if isinstance(v, (dict,)):
        return json.dumps(v, sort_keys=True)
    return _values(v) if isinstance(v, (list, tuple)) else num(v, 6)


# ---------------------------------------------------------------- figures

def _figure(width: float, height: float):
    """A matplotlib Figure and its axes.

    A matplotlib Figure and its axes (object API with the Agg canvas: no pyplot, no global
    backend change).
    """
    from matplotlib.figure import Figure   # here: matplotlib costs 0.4 s, figures only need it
    fig = Figure(figsize=(width, height))
    return fig, fig.subplots()


def _png(fig: Figure) -> str:
    """A matplotlib figure as a ``data:image/png;base64,...`` URI."""
    from matplotlib.text import Text       # (as _figure)
    for t in fig.findobj(Text):       # labels come from the JSON: "$" is not mathtext here
        t.set_parse_math(False)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _finish(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    """Labels, title, grid and a legend outside the axes on the right."""
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)


def loss_cells(doc: dict) -> tuple[list[dict], int]:
    """The loss-table cells to show, and how many there are.

    Args:
        doc: a result's verdict JSON.

    Returns:
        (cells, total): at most MAX_LOSS_ROWS cells, largest |ln ratio| first when there are
        more, else in the JSON's order.
    """
    cells = list(doc.get("loss_table") or [])
    if len(cells) <= MAX_LOSS_ROWS:
        return cells, len(cells)
    key = [abs(_finite(c.get("ln_ratio")) or 0.0) for c in cells]
    order = sorted(range(len(cells)), key=lambda i: -key[i])[:MAX_LOSS_ROWS]
    return [cells[i] for i in sorted(order)], len(cells)


def loss_figure(doc: dict) -> str | None:
    """Figure 1 of a report.

    Args:
        doc: a result's verdict JSON.

    Returns:
        A PNG data URI of the per-cell privacy loss ln(p_d / p_d′) with its simultaneous intervals,
        against the claim ±ε (dashed) and ε_lb (dotted); None when there is nothing to plot.
    """
    cells, _ = loss_cells(doc)
    pts = [(i, _finite(c.get("ln_ratio")), c.get("ci") or [None, None])
           for i, c in enumerate(cells)]
    pts = [(i, y, ci) for i, y, ci in pts if y is not None]
    if not pts:
        return None
    eps = _finite(doc["claim"].get("eps"))
    fig, ax = _figure(7.2, 3.0)
    for i, y, ci in pts:
        lo, hi = _finite(ci[0]) if len(ci) > 0 else None, _finite(ci[1]) if len(ci) > 1 else None
        over = eps is not None and lo is not None and (lo > eps or (hi is not None and hi < -eps))
        colour = "#c0392b" if over else "#2c5d8a"
        if lo is not None and hi is not None:
            ax.errorbar([i], [y], yerr=[[y - lo], [hi - y]], fmt="o", ms=4, color=colour,
                        capsize=3, lw=1.2)
        else:
            ax.plot([i], [y], "o", ms=4, color=colour)
    if eps is not None:
        ax.axhline(eps, ls="--", color="#c0392b", lw=1, label=f"claim ±ε = ±{eps:g}")
        ax.axhline(-eps, ls="--", color="#c0392b", lw=1)
    lb = _finite(doc.get("eps_lb"))
    if lb is not None:
        ax.axhline(lb, ls=":", color="#27ae60", lw=1.4, label=f"ε_lb = {lb:.4f}")
        ax.axhline(-lb, ls=":", color="#27ae60", lw=1.4)
    ax.axhline(0, color="#999", lw=0.6)
    top = max([eps or 0.0, lb or 0.0] + [abs(v) for _, y, ci in pts
                                         for v in (y, *ci) if _finite(v) is not None])
    ax.set_ylim(-1.12 * top, 1.12 * top)
    ax.set_xticks([i for i, _, _ in pts] if len(pts) <= 20 else [])
    ax.set_xlim(-0.6, len(cells) - 0.4)
    _finish(ax, "Privacy loss per output cell (CI bars) against the claim",
            "output cell (rows of the loss table)", "ln(p_d / p_d′)")
    return _png(fig)


def looks_figure(doc: dict) -> str | None:
    """Figure 2 of a report.

    Args:
        doc: a result's verdict JSON.

    Returns:
        A PNG data URI of the finalists' confidence intervals for the privacy loss at each look of the
        sequential measurement, against ε; None when there is nothing to plot.
    """
    m = (doc.get("counts") or {}).get("measurement") or {}
    looks = m.get("looks") or []
    if not looks:
        return None
    fig, ax = _figure(7.2, 2.6)
    n = max(len(lk.get("eps_lb") or []) for lk in looks)
    for j in range(n):
        segs = []                                   # (x, eps_lb, eps_ub) at each look
        for k, lk in enumerate(looks):
            lo, hi = (list(lk.get("eps_lb") or []) + [None] * n)[j], \
                (list(lk.get("eps_ub") or []) + [None] * n)[j]
            if _finite(lo) is not None and _finite(hi) is not None:
                segs.append((k + (j - (n - 1) / 2) * 0.08, lo, hi))
        if segs:
            x, lo, hi = zip(*segs)
            ax.vlines(x, lo, hi, color=f"C{j}", lw=3, label=f"finalist {j}")
            ax.plot(x, lo, "_", color=f"C{j}", ms=10)
    eps = _finite(doc["claim"].get("eps"))
    if eps is not None:
        ax.axhline(eps, ls="--", color="#c0392b", lw=1, label=f"claim ε = {eps:g}")
    ax.set_xticks(range(len(looks)), [str(lk.get("runs_per_side", "?")) for lk in looks],
                  fontsize=8)
    ax.set_xlim(-0.5, len(looks) - 0.5)
    _finish(ax, "Privacy-loss interval [ε_lb, ε_ub] per finalist at each look",
            "runs per side at the look", "privacy loss")
    return _png(fig)


def _label(pos: object) -> str:
    """A changed position of the profile, e.g. [2] -> "2", [] -> "—"."""
    if isinstance(pos, (list, tuple)):
        return ",".join(str(p) for p in pos) or "—"
    return str(pos)


def profile_figure(doc: dict) -> str | None:
    """Figure 3 of a report.

    Args:
        doc: a result's verdict JSON.

    Returns:
        A PNG data URI of the search's position profile, a heatmap of the pilot-estimated ε_lb of every
        candidate pair (base table × pattern by changed position), the measured finalists
        annotated with their ε_lb; None when there is nothing to plot.
    """
    p = (doc.get("search") or {}).get("profile") or {}
    grid = p.get("predicted_eps_lb")
    if not grid or not p.get("tables") or not p.get("positions"):
        return None
    z = np.array([[_finite(v) if _finite(v) is not None else np.nan for v in row]
                  for row in grid], dtype=float)
    if z.ndim != 2 or z.size == 0 or np.all(np.isnan(z)):
        return None
    tried = np.flatnonzero(~np.all(np.isnan(z), axis=0))
    z = z[:, :tried[-1] + 1]                    # positions after the last one tried: dropped
    import matplotlib                      # (as _figure)
    from matplotlib.patches import Rectangle
    rows, cols = z.shape
    fig, ax = _figure(min(11, max(6.0, 3.5 + 0.45 * cols)), 1.2 + 0.3 * rows)
    eps = _finite(doc["claim"].get("eps")) or 0.0
    vmax = max(np.nanmax(z), eps)
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#dddddd")
    im = ax.imshow(np.ma.masked_invalid(z), aspect="auto", cmap=cmap, vmin=0, vmax=vmax,
                   interpolation="nearest")
    bar = fig.colorbar(im, ax=ax, pad=0.01)
    bar.set_label("pilot ε_lb", fontsize=8)
    if eps:
        bar.ax.axhline(eps, color="#c0392b", lw=2)
    measured = p.get("eps_lb") or []
    for r, row in enumerate(measured):
        for c, v in enumerate(row or []):
            if _finite(v) is not None and c < cols:
                ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, ec="#c0392b",
                                       lw=2))
                dark = np.isnan(z[r, c]) or z[r, c] < 0.6 * vmax     # text readable on it
                ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if dark else "black", fontweight="bold")
    ax.set_yticks(range(rows), [str(t) for t in p["tables"]][:rows], fontsize=7)
    step = max(1, cols // 40)
    ax.set_xticks(range(0, cols, step), [_label(q) for q in p["positions"]][:cols:step],
                  fontsize=7, rotation=90 if cols > 16 else 0)
    hidden = len(p["positions"]) - cols
    ax.set_xlabel("changed position (row / entry)" + (f"; {hidden} later positions not tried"
                                                      if hidden > 0 else ""), fontsize=8)
    ax.set_ylabel("base table and value pattern", fontsize=8)
    ax.set_title("Position profile: pilot ε_lb of every candidate pair "
                 "(boxed: measured finalists, grey: not tried)", fontsize=9)
    return _png(fig)


def whitebox_figure(doc: dict) -> str | None:
    """Figure 4 of a report.

    Args:
        doc: a result's verdict JSON.

    Returns:
        A PNG data URI of quantiles of the white-box privacy loss of the noisy releases per run, in each
        direction, against ε; None when there is nothing to plot.
    """
    w = doc.get("whitebox") or {}
    dirs = w.get("directions") or {}
    if not dirs:
        return None
    fig, ax = _figure(7.2, 2.4)
    for j, (name, d) in enumerate(dirs.items()):
        q = d.get("quantiles") or {}
        ys = [_finite(q.get(k)) for k in QUANTILES]
        ax.plot(range(len(QUANTILES)), [y if y is not None else float("nan") for y in ys], "o-",
                color=f"C{j}", label=name, ms=4, alpha=0.85)
    eps = _finite(doc["claim"].get("eps"))
    if eps is not None:
        ax.axhline(eps, ls="--", color="#c0392b", lw=1, label=f"claim ε = {eps:g}")
    ax.set_xticks(range(len(QUANTILES)), [f"{k} %" if k != "max" else "max" for k in QUANTILES])
    ax.ticklabel_format(axis="y", useOffset=False)
    top = max([eps or 0.0] + [_finite(d.get("max_loss")) or 0.0 for d in dirs.values()])
    ax.set_ylim(0, 1.15 * top or 1.0)
    _finish(ax, "White-box privacy loss of the noisy releases per run", "quantile over runs",
            "loss of the releases")
    return _png(fig)


def accountant_figure(doc: dict) -> str | None:
    """Figure 5 of a report.

    Args:
        doc: a result's verdict JSON.

    Returns:
        A PNG data URI of the accountant's composed δ(ε) (an upper bound) of the worst run's
        releases that read the changed entry and the release log's δ(ε) over every run (a
        lower bound), with the claim (ε, δ) marked; None without either.
    """
    w = doc.get("whitebox") or {}
    prof = ((w.get("accountant") or {}).get("composed") or {}).get("profile") or {}
    log = (w.get("release_log") or {}).get("profile") or {}
    curves = [([(e, d) for e, d in zip(xs, map(_finite, ys)) if d is not None and d > 0], *rest)
              for xs, ys, *rest in (
                  (prof.get("eps", []), prof.get("delta", []), "-", "C0",
                   "the worst run's releases, composed (upper bound)"),
                  (log.get("eps", []), log.get("delta_lower", []), "--", "C2",
                   "the release log over every run (lower bound, pointwise)"))]
    if not any(pts for pts, *_ in curves):
        return None
    fig, ax = _figure(7.2, 2.4)
    for pts, style, colour, label in curves:
        if pts:
            ax.semilogy(*zip(*pts), style, color=colour, label=f"δ(ε) of {label}")
    eps, delta = _finite(doc["claim"].get("eps")), _finite(doc["claim"].get("delta")) or 0.0
    if delta > 0:
        ax.plot([eps], [delta], "o", color="#c0392b", ms=5, label=f"claim ({eps:g}, {delta:g})")
    else:
        ax.axvline(eps, ls="--", color="#c0392b", lw=1, label=f"claim ε = {eps:g}")
    from matplotlib.ticker import FuncFormatter        # (as _figure)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0e}"))   # no mathtext
    _finish(ax, "Privacy profile of the releases that read the changed entry (dp-accounting)",
            "ε", "δ(ε)")     # (the curves drop where δ(ε) reaches 0: a log axis)
    return _png(fig)


# ---------------------------------------------------------------- view models

def _neighbour_rows(nb: dict) -> list[tuple[str, str]]:
    """(label, value) rows describing a neighbouring pair, for any privacy model."""
    rows = [("privacy model", nb.get("model", "—"))]
    base = nb.get("base") or {}
    if base:
        rows.append(("base table", f"{base.get('name', '—')} ({base.get('kind', '—')})"))
    if "shape" in nb:
        rows.append(("table shape", " × ".join(str(s) for s in nb["shape"])))
    if "changed_row" in nb:
        rows += [("changed position", f"row {nb['changed_row']}"),
                 ("values in d", _values(nb.get("row_d"))),
                 ("values in d′", _values(nb.get("row_d_prime")))]
    elif "changed_entry" in nb:
        a, n = (list(nb["changed_entry"]) + [None, None])[:2]
        rows += [("changed position", f"pull {n} of arm {a}"),
                 ("value in d", _values(nb.get("value_d"))),
                 ("value in d′", _values(nb.get("value_d_prime")))]
    else:
        if nb.get("position"):
            rows.append(("changed position", _label(nb["position"])))
        rows += [("d", _values(nb.get("d"))), ("d′", _values(nb.get("d_prime")))]
    for key, label in (("pattern", "value pattern"), ("why", "why this pair")):
        if nb.get(key) is not None:
            rows.append((label, str(nb[key])))
    return rows


def _counts(doc: dict) -> dict:
    """Selection and measurement counts, with the per-side status of the measured runs."""
    c = doc.get("counts") or {}
    m = c.get("measurement") or {}
    sides = []
    for side, suffix in (("d", "_d"), ("d′", "_d_prime")):
        runs, hits = m.get("runs" + suffix), m.get("hits" + suffix)
        st = m.get("status" + suffix) or {}
        sides.append({"side": side, "runs": num(runs), "hits": num(hits),
                      "rate": num(hits / runs if _finite(hits) is not None and runs else None),
                      "status": ", ".join(f"{k} {v}" for k, v in st.items()) or "—"})
    sel = c.get("selection") or {}
    return {"selection": [(k.replace("_", " "), num(v)) for k, v in sel.items()],
            "sides": sides,
            "tests": num(m.get("tests")), "levels": levels_text(m),
            "finalists": num(m.get("finalists")), "stopped": m.get("stopped", "—"),
            "p_value": num(m.get("p_value_adjusted")), "looks": len(m.get("looks") or [])}


def _loss_rows(doc: dict) -> dict:
    """The loss table rows (formatted) and how many cells were left out."""
    cells, total = loss_cells(doc)
    eps = _finite(doc["claim"].get("eps"))
    rows = []
    for c in cells:
        ci = list(c.get("ci") or []) + [None, None]
        rows.append({"cell": str(c.get("cell", "")), "p_d": num(c.get("p_d"), 5),
                     "p_d_prime": num(c.get("p_d_prime"), 5), "ln_ratio": fixed(c.get("ln_ratio")),
                     "ci": f"[{fixed(ci[0])}, {fixed(ci[1])}]",
                     "level": pct(c.get("ci_level_simultaneous")),
                     "flag": bool(c.get("flag_above_eps"))})
    return {"rows": rows, "total": total, "shown": len(rows), "eps": eps}


def _search(doc: dict) -> dict | None:
    """Search summary: strategy, candidates, pilot rounds and budget, finalists, multiplicity."""
    s = doc.get("search") or {}
    if not s:
        return None
    b = s.get("budget") or {}
    screen = s.get("screen") or {}
    finalists = []
    for f in s.get("finalists") or []:
        pair = f.get("pair") or {}
        where = "; ".join(f"{k} {v}" for k, v in _neighbour_rows(pair)[1:4])
        finalists.append({"index": num(f.get("index")), "pair": where,
                          "predicted": fixed(f.get("predicted_eps_lb")),
                          "validated": fixed(f.get("validated_eps_lb")),
                          "eps_lb": fixed(f.get("eps_lb"))})
    rounds = " → ".join(f"{r.get('candidates')}" for r in b.get("rounds") or [])
    return {"strategy": s.get("strategy", "—"), "candidates": num(s.get("candidates")),
            "entered": num(s.get("entered_rounds")),
            "screen": (f"{num(screen.get('kept'))} kept by the white-box screen "
                       f"({num(screen.get('runs_per_direction'))} runs per direction)"
                       if screen else None),
            "rounds": rounds or "—", "pilot": num(b.get("pilot_runs_per_side_used")),
            "pilot_budget": num(b.get("pilot_runs_per_side")),
            "measurement": num(b.get("measurement_runs_per_side_per_finalist")),
            "finalists": finalists, "multiplicity": s.get("multiplicity")}


def _whitebox(doc: dict) -> dict | None:
    """White-box release losses per direction and the gray-box replay."""
    w = doc.get("whitebox") or {}
    if not w:
        return None
    dirs = []
    for name, d in (w.get("directions") or {}).items():
        q = d.get("quantiles") or {}
        dirs.append({"name": name, "max": fixed(d.get("max_loss")),
                     "mean": fixed(d.get("mean_loss")),
                     "quantiles": ", ".join(f"{k}: {num(q.get(k))}" for k in QUANTILES if k in q),
                     "above": num(d.get("runs_above_eps")),
                     "diverged": num(d.get("diverged_runs"))})
    rp = w.get("replay") or {}
    return {"runs": num(w.get("runs")), "limit": num(w.get("limit")),
            "max_loss": fixed(w.get("max_loss")),
            "verdict": (releases_text(w) if "releases_exceed_eps" in w else
                        w.get("releases_verdict", "—")),     # results made before the rename
            "above": num(w.get("runs_above_eps")), "dirs": dirs,
            "accountant": accountant_text(w["accountant"]) if w.get("accountant") else None,
            "release_log": (release_log_text(w["release_log"]) if w.get("release_log")
                            else None),
            "replay_diverged": rp.get("diverged_runs"),
            "replay_step": num(rp.get("first_divergent_step")),
            "replay_example": (json.dumps(rp["example"], sort_keys=True)[:2000]
                               if rp.get("example") else None),
            "worst": _worst(w.get("worst_run") or {}), "note": w.get("note")}


def _worst(wr: dict) -> list[dict]:
    """The releases that contribute to the worst run's loss."""
    return [{k: num(v) for k, v in c.items()} for c in (wr.get("contributions") or [])[:10]]


def _verdict_text(doc: dict) -> str:
    """What the verdict means, in one paragraph for a reviewer."""
    v = doc.get("verdict")
    eps = num(doc["claim"].get("eps"))
    delta = _finite(doc["claim"].get("delta")) or 0.0
    note = (f" For the (ε, δ) claim the loss is ln((P[E | d] − δ) / P[E | d′]) with δ = "
            f"{num(delta)}." if delta else "")
    lb, conf = fixed(doc.get("eps_lb")), pct(doc.get("confidence", 1 - doc.get("alpha", 0.05)))
    if v == Verdict.PASS:
        return (f"No evidence of a violation at this budget: on the pair and event below the "
                f"privacy loss is at least {lb} with confidence {conf}, which does not exceed "
                f"the claim ε = {eps}, and the loss of every measured event is below "
                f"ε_ub = {fixed(doc.get('eps_ub'))} with confidence "
                f"{pct(1 - doc.get('beta', 0.05))}. A pass is not a proof of privacy: it says "
                "nothing of the events and pairs that were not measured. (Planning figure, not "
                "the pass rule: " + _detectable_text(doc) + ".)" + note)
    if v == Verdict.VIOLATION and doc.get("evidence") == "white-box proof":
        return (f"A white-box proof, exact, with no confidence level: "
                f"{doc['whitebox']['reports']['text']}. The statistical audit of the transcript "
                f"found ε_lb = {lb} at confidence {conf}, which alone is no violation.")
    if v == Verdict.VIOLATION:
        return (f"With confidence {conf} the privacy loss of the released transcript exceeds "
                f"the claim: on the pair and event below it is at least ε_lb = {lb} > ε = "
                f"{eps}. This verdict is wrong with probability at most α = "
                f"{num(doc.get('alpha'))}." + note)
    reason = doc.get("reason")
    why = (f" Reason: {reason}." if reason else
           " (This result records no reason: it predates the three-verdict rule.)")
    return ("Inconclusive: the audit could not have failed at this budget, or could not tell, so "
            "neither a pass nor a violation is claimed." + why)


def _bound_note(doc: dict) -> str | None:
    """Why a saturated ε_lb or an early-stop estimate must not be read as a measured size."""
    notes = []
    m = (doc.get("counts") or {}).get("measurement") or {}
    if doc.get("eps_lb_saturated"):
        den = "d′" if (doc.get("event") or {}).get("numerator") == "d" else "d"
        notes.append(f"Saturated: no run on {den} fell in the event in {m.get('runs_d')} runs, "
                     "so ε_lb is the largest bound these runs can give at this α. It shows "
                     "that the loss is at least this much, not how large it is (it may be "
                     "infinite).")
    if m.get("stopped") == "violation" and doc.get("eps_hat") is not None:
        notes.append("The estimate is taken at the look where the measurement stopped on a "
                     "violation, so it is biased upward.")
    return " ".join(notes) or None


def _detectable_text(doc: dict) -> str:
    """The detectable loss in words.

    The detectable loss in words (results older than ``detectable_loss`` give the 50 %
    figure only).
    """
    median = fixed(doc.get("detectable_eps"))
    if "detectable_loss" not in doc:
        return f"the loss this audit would have flagged half the time on its event is {median}"
    return (f"the smallest loss on its event that this audit would have flagged with "
            f"probability {pct(doc.get('power'))} is {fixed(doc.get('detectable_loss'))} "
            f"({median} with probability 50 %)")


def _audit_view(doc: dict, figures: bool = True, text: bool = False) -> dict:
    """Everything the templates show of one audit JSON, formatted.

    Everything the templates show of one audit JSON, formatted: the view model the HTML,
    Markdown and text templates render (``figures``: draw the HTML report's figures;
    ``text``: add the text summary's lines, :func:`dpaudit.reporting.text.summary_lines`).
    """
    claim = doc.get("claim") or {}
    delta = _finite(claim.get("delta")) or 0.0
    ev = doc.get("event") or {}
    examples = []
    for e in (ev.get("examples") or [])[:5]:
        examples.append(" ".join(num(x) for x in e.get("actions", []))
                        if isinstance(e, dict) else num(e))
    loss_fig = loss_figure(doc) if figures else None
    figures = [] if not figures else [(cap, uri) for cap, uri in (
        ("The measurement's confidence interval for the loss of each finalist pair at each "
         "sequential look; the verdict is a violation once a lower end exceeds ε.",
         looks_figure(doc)),
        ("Where the search looked: the pilot estimate of ε_lb for each candidate pair (base "
         "table and value pattern by changed position).", profile_figure(doc)),
        ("Exact privacy loss of the noisy releases per run (white-box), against ε.",
         whitebox_figure(doc)),
        ("The privacy profile δ(ε) of the worst white-box run's releases that read the changed "
         "entry, composed by dp-accounting (an upper bound), against the claim.",
         accountant_figure(doc))) if uri]
    return {
        "kind": "audit", "source": doc.get("_source"),
        "algorithm": str(doc.get("algorithm", "?")), "verdict": str(doc.get("verdict", "?")),
        "verdict_word": verdict_text({**doc, "verdict": str(doc.get("verdict", "?"))}),
        "cut_short": cut_short_text(doc) if "verdict" in doc else "",
        "eps": num(claim.get("eps"), 6), "delta": num(delta, 6) if delta else None,
        "eps_lb": fixed(doc.get("eps_lb")) + (" (saturated)" if doc.get("eps_lb_saturated")
                                              else ""),
        "eps_hat": ("n/a (nothing measured)" if "eps_hat" in doc and doc["eps_hat"] is None
                    else fixed(doc.get("eps_hat"))),
        "estimate": "δ-loss estimate" if delta else "point estimate",
        "bound_note": _bound_note(doc),
        "detectable": fixed(doc.get("detectable_loss", doc.get("detectable_eps"))),
        "eps_ub": fixed(doc.get("eps_ub")) if "eps_ub" in doc else "n/a (not recorded)",
        "upper_confidence": pct(1 - doc.get("beta", 0.05)),
        "power": pct(doc.get("power", 0.5)), "alpha": num(doc.get("alpha")),
        "confidence": pct(doc.get("confidence", 1 - (doc.get("alpha") or 0.05))),
        "explanation": _verdict_text(doc),
        "params": [(str(k), _param(v)) for k, v in (doc.get("params") or {}).items()],
        "instance": [line.strip() for line in instance_lines(doc.get("instance_search"),
                                                                  doc.get("params"))],
        "neighbours": _neighbour_rows(doc.get("neighbours") or {}),
        "event": {"text": str(ev.get("text", "—")), "examples": examples,
                  "numerator": ev.get("numerator"), "cells": num(ev.get("n_cells")),
                  "ordering": ev.get("ordering"),
                  "predicted": fixed(ev.get("predicted_eps_lb"))},
        "counts": _counts(doc), "loss": _loss_rows(doc), "figures": figures,
        "coverage": coverage_text(doc.get("coverage") or {}),
        "exact": (exact_text(doc["exact"], float(doc["eps_lb"])) if doc.get("exact")
                  else None),
        "small_delta": (small_delta_text(doc["small_delta"]) if doc.get("small_delta")
                        else None),
        "stratified": (stratified_text(doc["stratified"], doc.get("exact"))
                       if doc.get("stratified") else None),
        "loss_figure": loss_fig, "loss_caption": (
            "Privacy loss ln(p_d/p_d′) of each output cell of the event's view with its "
            "simultaneous confidence interval, against the claim ±ε (dashed) and ±ε_lb "
            "(dotted). A cell whose interval lies entirely outside ±ε is red."),
        "search": _search(doc), "whitebox": _whitebox(doc),
        "seed": num(doc.get("seed")), "runtime": num(doc.get("runtime_s"), 3),
        "versions": [(str(k), str(v)) for k, v in (doc.get("versions") or {}).items()],
        "command": doc.get("command"),
        "schema": num(doc.get("schema_version")),
        "text": summary_lines(doc) if text else None,
    }


def _correctness_view(doc: dict) -> dict:
    """The δ-correctness check: error counts, Clopper–Pearson bounds, stopping times, bounds."""
    rows = [("algorithm", doc.get("algorithm")), ("kind", doc.get("kind")),
            ("privacy model", doc.get("model")), ("ε", num(doc.get("eps"))),
            ("risk R", num(doc.get("risk"))), ("α", num(doc.get("alpha"))),
            ("runs", num(doc.get("runs"))), ("errors", num(doc.get("errors"))),
            ("wrong answers", num(doc.get("wrong_answers"))),
            ("unstopped runs counted as errors", num(doc.get("unstopped_counted_as_errors"))),
            ("error rate", num(doc.get("error_rate"))),
            ("bounds on the error rate", f"[{num(doc.get('ci_lower'))}, "
                                         f"{num(doc.get('ci_upper'))}] ({doc.get('ci', '')})"),
            ("runs to certify R with zero errors",
             num(doc.get("runs_to_certify_with_zero_errors"))),
            ("status", ", ".join(f"{k} {v}" for k, v in (doc.get("status") or {}).items())),
            ("seed", num(doc.get("seed"))), ("runtime (s)", num(doc.get("seconds"), 3))]
    if doc.get("loss"):
        rows.append(("error (loss)", doc["loss"]))
    st = doc.get("stopping_time") or {}
    if st:
        q = st.get("quantiles") or {}
        rows.append(("stopping time", f"mean {num(st.get('mean'), 6)}, max {num(st.get('max'))}"
                     + "".join(f", {k} {num(v, 6)}" for k, v in q.items())))
    bounds = []
    for b in [doc.get("lower_bound"), doc.get("paper_bound"), *(doc.get("upper_bounds") or [])]:
        if b:
            bounds.append({"name": str(b.get("name", "")),
                           "applicable": "yes" if b.get("applicable") else "no",
                           "value": num(b.get("value"), 6),
                           "note": str(b.get("reason", "") or "")})
    return {"kind": "correctness", "source": doc.get("_source"),
            "algorithm": str(doc.get("algorithm", "?")), "verdict": str(doc.get("verdict", "?")),
            "rows": [(k, "—" if v is None else str(v)) for k, v in rows],
            "params": [(str(k), _param(v)) for k, v in (doc.get("params") or {}).items()],
            "bounds": bounds}


def _constants_view(doc: dict) -> dict:
    """The papers' constants, formatted for the templates.

    The papers' constants: scalars and short lists, per-ε / per-k tables, and the
    cross-checks.
    """
    scalars, tables = [], []
    for k, v in doc.items():
        if k.startswith("_") or k in ("checks", "paper"):
            continue
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            cols = [c for c in v[0] if not isinstance(v[0][c], (list, dict))
                    or (isinstance(v[0][c], list) and len(v[0][c]) <= 8
                        and not any(isinstance(x, (list, dict)) for x in v[0][c]))]
            tables.append({"name": k, "cols": cols,
                           "rows": [[num(r.get(c), 6) for c in cols] for r in v]})
        elif not isinstance(v, dict):
            scalars.append((k, num(v, 8) if not isinstance(v, list) or len(v) <= 12
                            else f"{len(v)} values"))
    checks = [{"name": str(c.get("name", "")), "lhs": num(c.get("lhs"), 10),
               "relation": str(c.get("relation", "")), "rhs": num(c.get("rhs"), 10),
               "tol": f"{num(c.get('tol'))} ({c.get('tol_kind', '')})",
               "ok": bool(c.get("pass"))} for c in doc.get("checks") or []]
    bad = sum(not c["ok"] for c in checks)
    return {"kind": "constants", "source": doc.get("_source"), "paper": str(doc.get("paper")),
            "scalars": scalars, "tables": tables, "checks": checks,
            "verdict": Verdict.PASS if not bad else Verdict.VIOLATION,
            "summary": f"{len(checks) - bad} of {len(checks)} checks pass"}


def _mutation_label(row: dict) -> str:
    """A mutant's bug in words (``mutation_text``; older files: its name's operator part)."""
    return str(row.get("mutation_text")
               or str(row.get("mutant", "?")).split("~")[-1].split("@")[0])


def _mutation_view(doc: dict) -> dict:
    """A mutation analysis (``dpaudit mutate``): scores per algorithm and per bug, survivors."""
    rows = doc.get("mutants") or []
    audited = [r for r in rows if r.get("status") != "equivalent"]
    per_op: dict = {}
    for r in audited:
        if r.get("status") == "bug":
            k = per_op.setdefault(_mutation_label(r), [0, 0])
            k[0] += 1
            k[1] += bool(r.get("killed"))
    loss = lambda r: "∞" if r.get("whitebox_loss") is None else num(r["whitebox_loss"])  # noqa: E731
    table = [{"mutant": str(r.get("mutant")), "site": str(r.get("site_text", "")),
              "status": str(r.get("status")), "loss": loss(r),
              "verdict": str(r.get("verdict", "—")) + (" (white-box proof)" if r.get(
                  "evidence") == "white-box proof" else ""), "eps_lb": num(r.get("eps_lb")),
              "runs": num(r.get("runs_to_kill")),
              "why": str(r.get("survived_because") or r.get("why") or ""),
              "survived": r.get("status") == "bug" and not r.get("killed")} for r in rows]
    score = doc.get("score")
    return {"kind": "mutation", "source": doc.get("_source"), "algorithm": "mutation analysis",
            "summary": (f"mutation score {num(score)}: {doc.get('killed')} of {doc.get('bugs')} "
                        f"bugs killed at ε = {num(doc.get('eps'))} ({doc.get('budget')} budget, "
                        f"seed {doc.get('seed')})"),
            "counts": (f"{len(rows)} mutants: {len(rows) - len(audited)} equivalent, "
                       f"{doc.get('within_margin', 0)} within the margin a pass allows "
                       f"(audited, out of the score), {doc.get('bugs')} bugs"),
            "per_algorithm": [(str(a), p.get("bugs"), p.get("killed"), num(p.get("score")))
                              for a, p in (doc.get("per_algorithm") or {}).items()],
            "per_operator": [(k, v[0], v[1]) for k, v in per_op.items()],
            "survivors": [t for t in table if t["survived"]], "mutants": table}


VIEWS = {"audit": _audit_view, "correctness": _correctness_view, "constants": _constants_view,
         "mutation": _mutation_view}


def _context(docs: list[dict]) -> dict:
    """The template context of a report: one view per document and the page title."""
    if not docs:
        raise InputError("no result to report")
    views = []
    for i, doc in enumerate(docs):
        kind = classify(doc)
        if kind is None:
            raise InputError(f"document {i + 1}: not a dpaudit result (audit, correctness, "
                             "constants or mutation JSON)")
        views.append(VIEWS[kind](doc))
    audits = [v for v in views if v["kind"] == "audit"]
    if audits:
        title = "dpaudit audit report: " + ", ".join(dict.fromkeys(a["algorithm"] for a in audits))
    else:
        title = "dpaudit report: " + ", ".join(
            v.get("algorithm") or f"paper {v.get('paper')}" for v in views)
    return {"title": title, "views": views, "audits": audits,
            "others": [v for v in views if v["kind"] != "audit"]}


# ---------------------------------------------------------------- rendering

def environment(markdown: bool) -> jinja2.Environment:
    """The jinja2 environment of the templates.

    Args:
        markdown: escape with ``md`` for Markdown (else autoescape for HTML).

    Returns:
        The environment.
    """
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             autoescape=not markdown, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(num=num, fixed=fixed, pct=pct, md=md_escape, md_code=md_code)
    return env


def render_html(docs: list[dict]) -> str:
    """The self-contained HTML report of some results.

    Args:
        docs: audit, correctness, constants and mutation JSON, tagged by :func:`load`.

    Returns:
        The HTML (figures inline, no JavaScript).
    """
    return environment(False).get_template("report.html.j2").render(**_context(docs))


def summary(doc: dict) -> str:
    """The text summary of an audit result (what ``dpaudit run`` prints).

    The text template runs over the same view model as the reports.

    Args:
        doc: a result's verdict JSON.

    Returns:
        The text.
    """
    return environment(True).get_template("summary.txt.j2").render(t=_audit_view(doc, figures=False, text=True)["text"])


def render_markdown(docs: list[dict]) -> str:
    """The Markdown report of some results: the same sections and numbers, without figures.

    Args:
        docs: audit, correctness, constants and mutation JSON, tagged by :func:`load`.

    Returns:
        The Markdown.
    """
    return environment(True).get_template("report.md.j2").render(**_context(docs))


def write_report(docs: list[dict], html_path: str, md_path: str | None = None) -> str:
    """Render and write the HTML (and Markdown) report atomically.

    Both are rendered before either file is written.

    Args:
        docs: the results, tagged by :func:`load`.
        html_path: the HTML file.
        md_path: the Markdown file, or None.

    Returns:
        ``html_path``.
    """
    page = render_html(docs)
    md = render_markdown(docs) if md_path else None
    write_text_atomic(html_path, page)
    if md_path:
        write_text_atomic(md_path, md)
    return html_path


def _index_rows(entries: list[dict]) -> list[dict]:
    """The index rows, formatted, with the report link URL-quoted (a relative file name)."""
    rows = []
    for e in entries:
        report = str(e.get("report") or "")
        rows.append({"name": str(e.get("name", "")), "algorithm": str(e.get("algorithm", "")),
                     "eps": num(e.get("eps"), 6), "expected": str(e.get("expected", "")),
                     "verdict": str(e.get("verdict", "")), "ok": bool(e.get("ok")),
                     "eps_lb": fixed(e.get("eps_lb")), "baseline": fixed(e.get("baseline")),
                     "runtime": num(e.get("runtime_s"), 3), "report": report,
                     "href": urllib.parse.quote(report) if report else None})
    return rows


INDEX_FILES = ("index.html", "index.md")
# the papers' reproductions (dpaudit reproduce --out FOLDER/reproduce), linked when present
REPRODUCTIONS = "reproduce/index.html"


def write_index(entries: list[dict], folder: str) -> str:
    """Write ``index.html`` and ``index.md`` of a suite's reports.

    One row per suite entry (name linked to its report, algorithm, ε, expected and actual
    verdict, ε_lb against its baseline, runtime), green when as expected, red otherwise, and a
    link to the papers' reproductions if ``folder``/:data:`REPRODUCTIONS` exists.

    Args:
        entries: one row per entry.
        folder: the reports' folder.

    Returns:
        The path of index.html.
    """
    rows = _index_rows(entries)
    papers = os.path.join(folder, REPRODUCTIONS)
    ctx = {"title": "dpaudit gate: audit reports", "rows": rows,
           "ok": sum(r["ok"] for r in rows), "total": len(rows),
           "reproductions": REPRODUCTIONS if os.path.isfile(papers) else None}
    path, md_path = (os.path.join(folder, f) for f in INDEX_FILES)
    page = environment(False).get_template("index.html.j2").render(**ctx)
    md = environment(True).get_template("index.md.j2").render(**ctx)
    write_text_atomic(path, page)
    write_text_atomic(md_path, md)
    return path


# ---------------------------------------------------------------- CLI

def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``dpaudit report FILE.json [FILE.json ...] -o OUT.html [--markdown OUT.md]``.

    Args:
        subparsers: the command line's subcommands.
    """
    p = subparsers.add_parser(
        "report", help="reviewer report (HTML, optionally Markdown) from result JSON files",
        description="Render a self-contained HTML report (figures inline, no JavaScript) from "
                    "the JSON of `dpaudit run --json`, `dpaudit check correctness --json` and "
                    "`dpaudit check constants --json` and `dpaudit mutate --json`. Bad input: exit 2, "
                    "nothing written.")
    p.add_argument("files", nargs="+", metavar="FILE.json", help="result JSON files")
    p.add_argument("-o", "--output", required=True, metavar="OUT.html", help="HTML report")
    p.add_argument("--markdown", metavar="OUT.md", help="also write the report as Markdown")


# what rendering a JSON of the wrong shape raises (a missing key, a string for a number, ...)
MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)


def main(args: argparse.Namespace, echo: Callable[[str], object] = print) -> int:
    """Run ``dpaudit report`` on parsed arguments.

    Args:
        args: the parsed arguments.
        echo: receives the summary line.

    Returns:
        The exit code (0).

    Raises:
        InputError: before anything is written.
    """
    inputs = {f"the input {f}": f for f in args.files}
    validate.output_path("-o", args.output, inputs)
    validate.output_path("--markdown", args.markdown, {**inputs, "the -o file": args.output})
    docs = load(args.files)
    try:
        write_report(docs, args.output, args.markdown)
    except MALFORMED:
        for doc in docs:             # name the first file that cannot be rendered alone
            try:
                render_markdown([doc]) if args.markdown else None
                render_html([doc])
            except MALFORMED as e:
                raise InputError(f"{doc['_source']}: a malformed dpaudit {doc['_kind']} result "
                                 f"({type(e).__name__}: {e}); was it edited by hand?") from None
        raise
    echo(f"dpaudit report: {args.output}" + (f", {args.markdown}" if args.markdown else "")
          + f" ({len(docs)} result{'s' if len(docs) != 1 else ''})")
    return 0
