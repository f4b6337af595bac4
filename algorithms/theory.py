"""The theory contract of the papers' theory modules.

The theory contract: what a paper's theory module (``dpaudit.algorithms.<paper>.theory``)
declares for the paper-agnostic checks, and the helpers it builds them with.

* ``dpaudit check constants`` asks a paper's ``report(params)`` (parameters named in its
  ``REPORT_PARAMS``) for its constants and cross-checks; a cross-check is a
  :func:`cross_check` record.
* ``dpaudit check correctness`` asks the theory of an algorithm, an :class:`Identification`
  (``IDENTIFICATION[name]`` of its paper's theory module), what an error is and which bounds of
  the papers apply; it never branches on an algorithm's name.

Like :mod:`dpaudit.algorithms.spec`, this module imports nothing of dpaudit above
:mod:`dpaudit.errors`.
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from dpaudit.errors import InputError

CHECK_TOL = 1e-6        # the default relative tolerance of a cross-check
KINDS = ("fixed-confidence", "fixed-budget")


@dataclass(frozen=True)
class Identification:
    """What ``dpaudit check correctness`` checks an identification algorithm against.

    Attributes:
        kind: ``"fixed-confidence"`` (the algorithm runs with the checked risk as its ``risk``
            parameter and stops by itself) or ``"fixed-budget"`` (it runs its budget).
        errors: ``(rec, stopped, means, params) -> (wrong, target)``: ``rec`` the runs'
            recommendations (int64, shape (runs,)), ``stopped`` which runs stopped (bool,
            shape (runs,)), ``means`` the instance (float64, shape (K,)); ``wrong`` marks the
            stopped runs whose answer is an error (bool, shape (runs,)), ``target`` the
            JSON-able description of the right answer.
        lower_bound: fixed-confidence only: ``(private, means, eps, risk) -> dict``, a lower
            bound on E[τ] (``name``, ``applicable``, ``value`` or ``reason``).
        upper_bounds: fixed-confidence, optional: ``(params, means, eps, risk) -> list[dict]``,
            the paper's upper bounds on the stopping time.
        error_bound: fixed-budget, optional: ``(params, prepared, eps) -> dict``, the paper's
            bound on the error probability.
    """
    kind: str
    errors: Callable
    lower_bound: Callable | None = None
    upper_bounds: Callable | None = None
    error_bound: Callable | None = None

    def __post_init__(self) -> None:
        """Check the kind and its bounds (ValueError)."""
        if self.kind not in KINDS:
            raise ValueError(f"kind={self.kind!r}: expected one of {', '.join(KINDS)}")
        if self.kind == "fixed-confidence" and self.lower_bound is None:
            raise ValueError("a fixed-confidence algorithm needs a lower_bound")


def best_arm_errors(rec: np.ndarray, stopped: np.ndarray, means: ArrayLike,
                    params: dict) -> tuple[np.ndarray, dict]:
    """Best-arm identification: whether a stopped run errs.

    Best-arm identification: a stopped run errs when its recommendation is not an argmax of
    ``means`` (every tied best arm is a right answer).

    Args:
        rec: the runs' recommendations.
        stopped: which runs stopped.
        means: the arms' means, in [0, 1].
        params: the algorithm's parameters.

    Returns:
        (errors per run, the rule's description).
    """
    best = np.flatnonzero(means == means.max())
    return stopped & ~np.isin(rec, best), {"best_arms": [int(b) for b in best]}


def eps_values(x: object, default: Sequence[float]) -> list:
    """The ε values a report covers: ``x`` (one value or a list), ``default`` if None.

    Raises:
        InputError: an empty list.

    Args:
        x: one value or a list (None: ``default``).
        default: the defaults.

    Returns:
        The values.
    """
    x = default if x is None else x
    vals = list(x) if isinstance(x, (list, tuple, np.ndarray)) else [x]
    if not vals:
        raise InputError("eps=[] is not valid: expected at least one number in (0, inf)")
    return vals


def cross_check(name: str, lhs: float, rhs: float, relation: str = "==", tol: float = CHECK_TOL,
                absolute: bool = False) -> dict:
    """One cross-check of a report.

    One cross-check of a report: lhs (relation) rhs up to ``tol``, relative to
    max(|lhs|, |rhs|), or absolute with ``absolute``.

    Returns:
        ``{"name", "lhs", "rhs", "relation" ("==", ">=", "<="), "tol", "tol_kind", "pass"}``.

    Args:
        name: what is checked.
        lhs: the left side.
        rhs: the right side.
        relation: "==", ">=" or "<=".
        tol: the tolerance, relative to max(|lhs|, |rhs|).
        absolute: the tolerance is absolute.

    Returns:
        {"name", "lhs", "rhs", "relation", "tol", "tol_kind", "pass"}.
    """
    lhs, rhs = float(lhs), float(rhs)
    slack = tol if absolute else tol * max(abs(lhs), abs(rhs), 1e-300)
    if relation == "==":
        ok = abs(lhs - rhs) <= slack
    elif relation == ">=":
        ok = lhs >= rhs - slack
    else:
        ok = lhs <= rhs + slack
    return {"name": name, "lhs": lhs, "rhs": rhs, "relation": relation, "tol": tol,
            "tol_kind": "absolute" if absolute else "relative", "pass": bool(ok)}
