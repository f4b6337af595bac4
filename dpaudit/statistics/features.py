"""Output features of a generic mechanism: outputs → 64-bit cells, fitted on the selection sample.

``fit(y_d, y_d_prime)`` looks at the ranking half of the selection sample (both sides) and
returns a :class:`Features` map used unchanged on every later sample:

* **discrete** outputs (integer or boolean dtype, or floats taking at most
  :data:`MAX_DISCRETE` distinct values on the fitting sample): one cell per exact output value
  (per exact row for (n, m) outputs). 1-D values are encoded order-preservingly, so their
  natural order gives threshold events y ≥ t / y ≤ t.
* **continuous** 1-D outputs: B bins between quantiles of the pooled fitting sample, B =
  :data:`BINS` or fewer for small samples (about :data:`PER_BIN` outputs per bin), plus
  log-spaced quantiles in both tails; the natural order of the bins gives threshold events.
* **continuous** (n, m) outputs: a grid of b bins per coordinate (b^m ≤ :data:`BINS`, b ≥ 2);
  each coordinate's order gives threshold events on that coordinate.

The likelihood-ratio ordering of :mod:`dpaudit.statistics.events` applies to every kind. Cells are a
function of the output alone (the bin edges are fixed before the measurement sample is drawn),
so every event is a valid post-processing of the mechanism's output.
"""
from __future__ import annotations

import numpy as np

from dpaudit.errors import InputError

MAX_DISCRETE = 1024
BINS = 2000
PER_BIN = 25
TAIL_LEVELS = 40
_SIGN = np.uint64(1 << 63)
_FNV_OFFSET = np.uint64(1469598103934665603)
_FNV_PRIME = np.uint64(1099511628211)


def as_outputs(y: object, n: int) -> np.ndarray:
    """Check a mechanism's return value and give it as an array of outputs.

    Args:
        y: what the mechanism returned.
        n: the outputs asked for.

    Returns:
        An array of shape (n,) or (n, m) of finite numbers.

    Raises:
        InputError: a wrong shape, a non-numeric or non-finite output (the message names it).
    """
    try:
        a = np.asarray(y)
    except (TypeError, ValueError):
        raise InputError("the mechanism returned something that is not an array")
    if a.dtype == bool:
        a = a.astype(np.int64)
    if a.dtype.kind not in "iuf" or a.ndim not in (1, 2) or a.shape[0] != n:
        raise InputError(f"the mechanism returned an array of shape {a.shape} and dtype "
                         f"{a.dtype} for n={n}: expected numbers of shape ({n},) or ({n}, m)")
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise InputError("the mechanism returned a non-finite output (nan or inf)")
    return a


def _ordered_code(x: np.ndarray) -> np.ndarray:
    """Order-preserving map of int or float values to uint64."""
    if x.dtype.kind in "iu":
        return x.astype(np.int64).view(np.uint64) ^ _SIGN
    bits = (x.astype(np.float64) + 0.0).view(np.uint64)   # + 0.0: −0 → +0
    return np.where(bits & _SIGN, ~bits, bits | _SIGN)


def _decode(code: np.ndarray, kind: str) -> np.ndarray:
    if kind in "iu":
        return (code ^ _SIGN).view(np.int64)
    return np.where(code & _SIGN, code ^ _SIGN, ~code).view(np.float64)


def _row_hash(codes: np.ndarray) -> np.ndarray:
    h = np.full(codes.shape[0], _FNV_OFFSET)
    for j in range(codes.shape[1]):
        h = (h ^ codes[:, j]) * _FNV_PRIME
    return h


class Features:
    """Cells of a fitted output space (see module doc).

    ``kind``: "discrete" or "continuous";
    ``dim``: m (1 for 1-D outputs).
    """

    def __init__(self, kind: str, dim: int, dtype_kind: str, edges: list | None = None,
                 bins: int = 0, examples: dict | None = None) -> None:
        """A feature map of ``kind`` over m = ``dim`` coordinates (``edges``: bin edges)."""
        self.kind, self.dim, self.dtype_kind = kind, dim, dtype_kind
        self.edges, self.bins, self.examples = edges, bins, examples or {}

    def cells(self, y: np.ndarray) -> np.ndarray:
        """The uint64 cell of each output.

        Args:
            y: outputs, shape (n,) or (n, m).

        Returns:
            uint64 array of shape (n,).
        """
        y2 = y.reshape(y.shape[0], -1)
        if self.kind == "discrete":
            codes = _ordered_code(y2)
            return codes[:, 0] if self.dim == 1 else _row_hash(codes)
        if self.dim == 1:
            return np.searchsorted(self.edges[0], y2[:, 0], side="right").astype(np.uint64)
        out = np.zeros(y2.shape[0], np.uint64)
        for j in range(self.dim):
            idx = np.searchsorted(self.edges[j], y2[:, j], side="right")
            out = out * np.uint64(self.bins) + idx.astype(np.uint64)
        return out

    def orderings(self, v: int, keys: np.ndarray) -> list:
        """Threshold orderings of a view's cells.

        Args:
            v: the view's index (one view for a mechanism).
            keys: the cells (sorted uint64).

        Returns:
            (name, permutation of ``keys``) pairs: the natural order (1-D) or each coordinate's
            bin order (grid), whose prefixes are threshold events.
        """
        if self.kind == "discrete" and self.dim > 1:
            return []
        if self.dim == 1:
            asc = np.arange(keys.size)         # keys are sorted and order-preserving
            return [("threshold: y <= t", asc), ("threshold: y >= t", asc[::-1].copy())]
        out = []
        for j in range(self.dim):
            coord = (keys // np.uint64(self.bins ** (self.dim - 1 - j))) % np.uint64(self.bins)
            asc = np.argsort(coord, kind="stable")
            out += [(f"threshold: y[{j}] <= t", asc), (f"threshold: y[{j}] >= t", asc[::-1].copy())]
        return out

    def describe(self, cells: np.ndarray, limit: int = 4) -> str:
        """A readable description of a set of cells.

        Args:
            cells: sorted uint64 cells.
            limit: example cells listed at most (m-dimensional outputs).

        Returns:
            The description.
        """
        if self.kind == "discrete":
            if self.dim == 1:
                vals = _decode(cells, self.dtype_kind)
                shown = ", ".join(f"{v:g}" for v in vals[:10])
                return f"y in {{{shown}{', ...' if vals.size > 10 else ''}}} ({vals.size} values)"
            rows = [self.examples.get(int(c)) for c in cells[:limit]]
            shown = "; ".join(str(r) for r in rows if r is not None)
            return f"y is one of {cells.size} output rows, e.g. {shown}"
        if self.dim == 1:
            return "y in " + " or ".join(self._intervals(cells.astype(np.int64), limit))
        return f"y in one of {cells.size} cells of a {self.bins}^{self.dim} quantile grid"

    def _intervals(self, idx: np.ndarray, limit: int) -> list[str]:
        e = self.edges[0]
        runs = np.split(idx, np.flatnonzero(np.diff(idx) != 1) + 1)
        out = []
        for r in runs[:limit]:
            lo = f"[{e[r[0] - 1]:.6g}" if r[0] > 0 else "(-inf"
            hi = f"{e[r[-1]]:.6g})" if r[-1] < e.size else "inf)"
            out.append(f"{lo}, {hi}")
        if len(runs) > limit:
            out.append(f"... ({len(runs)} intervals)")
        return out

    def cell_text(self, key: int) -> str:
        """One cell in words.

        Args:
            key: the cell.

        Returns:
            Its value or interval.
        """
        return self.describe(np.array([key], np.uint64))


def fit(y_d: np.ndarray, y_dp: np.ndarray) -> Features:
    """Fit the cell map on the pooled fitting sample of both sides (see module doc).

    Args:
        y_d: outputs on d, shape (n,) or (n, m).
        y_dp: outputs on d′, the same shape.

    Returns:
        The :class:`Features`: exact values for discrete outputs, quantile bins for
        continuous ones.
    """
    y = np.concatenate([y_d.reshape(y_d.shape[0], -1), y_dp.reshape(y_dp.shape[0], -1)])
    dim = y.shape[1]
    discrete = y.dtype.kind in "iu"
    if not discrete:
        distinct = np.unique(y, axis=0) if dim > 1 else np.unique(y)
        discrete = distinct.shape[0] <= MAX_DISCRETE
    if discrete:
        examples = {}
        if dim > 1:
            rows = np.unique(y, axis=0)[:10 * MAX_DISCRETE]
            examples = {int(h): r.tolist() for h, r in zip(_row_hash(_ordered_code(rows)), rows)}
        return Features("discrete", dim, y.dtype.kind, examples=examples)
    total = int(np.clip(y.shape[0] // PER_BIN, 10, BINS))
    if dim == 1:
        qs = _levels(total, y.shape[0])
        return Features("continuous", 1, "f", edges=[np.unique(np.quantile(y[:, 0], qs))],
                        bins=qs.size + 1)
    b = max(2, int(total ** (1.0 / dim)))
    qs = np.linspace(0.0, 1.0, b + 1)[1:-1]
    edges = [np.unique(np.quantile(y[:, j], qs)) for j in range(dim)]
    return Features("continuous", dim, "f", edges=edges, bins=b)


def _levels(bins: int, n: int) -> np.ndarray:
    """The quantile levels of the 1-D bin edges.

    Quantile levels of the 1-D bin edges: ``bins`` equal-mass bins, refined in both tails
    by :data:`TAIL_LEVELS` log-spaced levels down to ``PER_BIN / n`` (tail thresholds matter:
    an (ε, δ) violation of a Gaussian mechanism lives on events of mass ~10^-4).
    """
    inner = np.linspace(0.0, 1.0, bins + 1)[1:-1]
    lo = min(PER_BIN / n, 1.0 / bins)
    tail = np.geomspace(lo, 1.0 / bins, TAIL_LEVELS)
    return np.unique(np.concatenate([tail, inner, 1.0 - tail]))
