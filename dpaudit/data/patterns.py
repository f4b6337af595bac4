"""Neighbouring inputs of a generic mechanism: the input patterns of StatDP.

A mechanism answering a vector of queries (counts, sums) is ε-DP when its outputs on two
inputs whose entries each differ by at most the queries' sensitivity s are ε-indistinguishable.
Which such pair is the worst depends on the mechanism; Ding, Wang, Wang, Zhang and Kifer
(2018, "Detecting Violations of Differential Privacy", ACM CCS, arXiv:1805.10277) list the
patterns that exposed the violations they studied, and DP-Sniper (Bichsel, Steffen, Bogunovic
and Vechev 2021, IEEE S&P) searches the same ones. Around a base input d (each entry
moving by ±s, or not at all):

=======================  ==============================================================
one above                d′ = d + s·e₁
one below                d′ = d − s·e₁
one above rest below     d′ = d + s·e₁ − s·(others)
one below rest above     d′ = d − s·e₁ + s·(others)
half half                d′ = d + s on the first half, − s on the second
all above                d′ = d + s everywhere
all below                d′ = d − s everywhere
x shape                  d lowered by s on its second half, d′ on its first half
=======================  ==============================================================

These assume that every entry may move (``changes="each"``: each entry is a query answer of
sensitivity s, the "component-wise" neighbourhood of DP-Sniper); where one entry moves between
neighbours (a histogram, ``changes="one"``), only "one above" and "one below" are neighbours.
Pairs that coincide (a 1-element input has only "one above" and "one below") are listed once.
"""
from __future__ import annotations

import numpy as np

from dpaudit.errors import InputError

PATTERNS = ("one above", "one below", "one above rest below", "one below rest above",
            "half half", "all above", "all below", "x shape")
CHANGES = {"each": len(PATTERNS), "one": 2}    # patterns that are neighbours under each


def input_patterns(d: object, sensitivity: float = 1.0,
                   changes: str = "each") -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The StatDP input patterns around a base input (module doc).

    Args:
        d: the base input: a number or a 1-D array of m query answers.
        sensitivity: s > 0, how far each entry of a neighbour may move.
        changes: ``"each"``: every entry may move; ``"one"``: one entry moves.

    Returns:
        (pattern name, first input, second input) for each distinct pair, float64 arrays of
        shape (m,), in the order of :data:`PATTERNS`.

    Raises:
        InputError: d not a number or a non-empty 1-D array of finite numbers, s not > 0,
            ``changes`` not "each" or "one".
    """
    if changes not in CHANGES:
        raise InputError(f"changes={changes!r} is not valid: expected 'each' or 'one'")
    try:
        base = np.atleast_1d(np.asarray(d, dtype=np.float64))
    except (TypeError, ValueError):
        raise InputError(f"d={d!r} is not a number or a vector of numbers: pairs='search' moves "
                         "its entries") from None
    if base.ndim != 1 or base.size == 0 or not np.isfinite(base).all():
        raise InputError(f"d of shape {base.shape} is not a non-empty 1-D vector of finite "
                         "numbers: pairs='search' moves its entries")
    s = float(sensitivity)
    if not (np.isfinite(s) and s > 0):
        raise InputError(f"sensitivity={sensitivity!r} is not valid: expected a number > 0")
    m, half = base.size, base.size // 2
    first = np.zeros(m)
    first[0] = 1.0
    rest = 1.0 - first
    halves = np.where(np.arange(m) < half, 1.0, -1.0)
    low_second = np.where(np.arange(m) < half, 0.0, -1.0)
    low_first = np.where(np.arange(m) < half, -1.0, 0.0)
    moves = [(np.zeros(m), first), (np.zeros(m), -first), (np.zeros(m), first - rest),
             (np.zeros(m), rest - first), (np.zeros(m), halves), (np.zeros(m), np.ones(m)),
             (np.zeros(m), -np.ones(m)), (low_second, low_first)]
    out, seen = [], set()
    for name, (a, b) in zip(PATTERNS[:CHANGES[changes]], moves):
        x, y = base + s * a, base + s * b
        key = frozenset((x.tobytes(), y.tobytes()))
        if len(key) == 2 and key not in seen:
            seen.add(key)
            out.append((name, x, y))
    return out
