"""The field's closed vocabularies as enums.

The field's closed vocabularies as enums: verdicts, privacy models, the two sides of a
neighbouring pair.

They are string enums: a member equals its text (``Verdict.PASS == "pass"``), prints as it
and is written to JSON as it, so results, suites and baselines keep their strings while the
code names each value once.
"""
from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """An audit's verdict (:mod:`dpaudit.verdicts.verdict`; exit codes 0, 1, 3)."""

    PASS = "pass"
    VIOLATION = "violation"
    INCONCLUSIVE = "inconclusive"


class PrivacyModel(StrEnum):
    """What a neighbouring pair may change (:mod:`dpaudit.data.tables`)."""

    USER = "user"        # a (T, K) table; neighbours differ in one row
    STREAM = "stream"    # a (K, T) table; neighbours differ in one entry
    FULL = "full"        # a (T, K) table whose whole row is read each round
    LOCAL = "local"      # one reward through a local randomiser


class Side(StrEnum):
    """One table of a neighbouring pair (d, d′).

    One table of a neighbouring pair (d, d′): the side runs are drawn on, or the
    numerator of an event's probability ratio.
    """

    D = "d"
    D_PRIME = "d_prime"

    @property
    def index(self) -> int:
        """0 for d, 1 for d′ (the order of (d, d′) pairs of counts)."""
        return 0 if self is Side.D else 1

    @property
    def label(self) -> str:
        """How results and text name it: ``d`` or ``d'``."""
        return "d" if self is Side.D else "d'"

    @property
    def other(self) -> Side:
        """The other table of the pair."""
        return Side.D_PRIME if self is Side.D else Side.D
