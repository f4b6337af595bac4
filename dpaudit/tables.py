"""Reward tables and neighbouring pairs (DESIGN.md §1).

A ``user`` table has shape (T, K): row t holds user t's potential rewards, all in [0, 1]. Two
tables are neighbours when they differ in exactly one row (any of its K values).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpaudit.errors import InputError


def validate_table(table, name: str = "table") -> np.ndarray:
    """Return ``table`` as a C-contiguous float64 (T, K) array; InputError if it is not 2-D,
    is empty, or has a value outside [0, 1] (privacy proofs assume bounded rewards)."""
    try:
        t = np.ascontiguousarray(table, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} is not a numeric array")
    if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 2:
        raise InputError(f"{name} has shape {t.shape}: expected (T, K) with T >= 1, K >= 2")
    bad = ~np.isfinite(t) | (t < 0) | (t > 1)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InputError(f"{name}[{r}, {c}] = {t[r, c]!r} is outside [0, 1]")
    return t


def bernoulli_table(means, horizon: int, seed: int) -> np.ndarray:
    """A (horizon, K) table with entries Bernoulli(means[a]) drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    m = np.asarray(means, dtype=np.float64)
    return (rng.random((horizon, m.size)) < m).astype(np.float64)


def constant_table(value: float, horizon: int, K: int) -> np.ndarray:
    """A (horizon, K) table with every entry ``value`` (ties: a knife-edge base table)."""
    return np.full((horizon, K), float(value))


@dataclass(frozen=True)
class NeighbourPair:
    """Two ``user`` tables that differ in row ``row`` only.

    ``base``: the recipe of the base table (JSON-able); ``label``: why this row was chosen.
    """

    d: np.ndarray
    d_prime: np.ndarray
    row: int
    base: dict
    label: str
    model: str = "user"
    extra: dict = field(default_factory=dict)

    @classmethod
    def change_row(cls, base_table, row: int, value_d, value_d_prime, base: dict, label: str):
        """Neighbours from ``base_table`` with row ``row`` set to ``value_d`` in d and to
        ``value_d_prime`` in d' (scalars or length-K rows)."""
        d = np.array(base_table, dtype=np.float64, copy=True)
        dp = d.copy()
        d[row] = value_d
        dp[row] = value_d_prime
        return cls(validate_table(d, "d"), validate_table(dp, "d'"), row, base, label)

    @classmethod
    def from_tables(cls, d, d_prime, base: dict, label: str):
        """Validate an explicit pair; InputError unless same shape and exactly one row differs."""
        d = validate_table(d, "d")
        dp = validate_table(d_prime, "d'")
        if d.shape != dp.shape:
            raise InputError(f"d has shape {d.shape} but d' has shape {dp.shape}")
        rows = np.flatnonzero((d != dp).any(axis=1))
        if rows.size != 1:
            raise InputError(f"d and d' differ in {rows.size} rows: neighbours differ in exactly 1")
        return cls(d, dp, int(rows[0]), base, label)

    def describe(self) -> dict:
        return {"model": self.model, "base": self.base, "rows": int(self.d.shape[0]),
                "arms": int(self.d.shape[1]), "changed_row": self.row,
                "row_d": self.d[self.row].tolist(), "row_d_prime": self.d_prime[self.row].tolist(),
                "why": self.label}
