"""The claim's space: which parameter values a paper's privacy claim covers.

A privacy theorem holds over a parameter space (every horizon, number of arms, means and
features; constants its proof never uses), while an audit runs at one point. An algorithm's
:class:`~dpaudit.algorithms.spec.Param` that the claim covers carries a :class:`Dimension`:

* its **scope**: :attr:`Scope.THEOREM` (inside the theorem's hypotheses), :attr:`Scope.PROOF`
  (a constant the paper fixes but its privacy proof does not use: the claim holds for every
  value) or :attr:`Scope.OPTION` (a reading of an ambiguity of the paper; searched only when
  asked: the faithful reading is the default);
* its **source**: where the paper says so (theorem, proof, equation);
* its **scale**: how values are proposed (:class:`Scale`);
* a **search window** where the claim's range is unbounded (a horizon in [4, 512] out of
  [2, ∞)).

:class:`ClaimSpace` collects an algorithm's dimensions with the claim's source and its cost
model (samples per run). ε, a given δ and every parameter the user gives are pinned: the
space's free dimensions are the others.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Callable


class Scope(StrEnum):
    """Why a dimension belongs to the claim's space (module doc)."""

    THEOREM = "theorem"
    PROOF = "proof"
    OPTION = "option"


class Scale(StrEnum):
    """How a dimension's values are proposed from a point u in [0, 1)."""

    LOG = "log"              # geometric between the window's ends
    LINEAR = "linear"        # arithmetic between the window's ends
    INT_LOG = "int-log"      # geometric, rounded to an integer
    CHOICE = "choice"        # one of the parameter's choices
    GENERATED = "generated"  # one of a generated family (means, features)


@dataclass(frozen=True)
class Dimension:
    """A parameter's place in the claim's space.

    Attributes:
        scope: theorem, proof or option (:class:`Scope`).
        source: where the paper puts the value in the claim (e.g. "Thm 2, App. C").
        scale: how values are proposed (:class:`Scale`).
        window: (low, high) searched, inside the parameter's range; None: the range itself
            (bounded) or, for a generated family, its own sizes (e.g. K in 2..6 arms).
    """

    scope: Scope
    source: str
    scale: Scale
    window: tuple[float, float] | None = None


@dataclass(frozen=True)
class Axis:
    """A free or pinned dimension of a :class:`ClaimSpace`: the parameter and its place."""

    param: Any              # dpaudit.algorithms.spec.Param
    dim: Dimension
    pinned: bool = False

    @property
    def name(self) -> str:
        """The parameter's name."""
        return self.param.name

    def window(self) -> tuple[float, float] | None:
        """The searched (low, high): the declared window, else the parameter's bounds."""
        if self.dim.window is not None:
            return self.dim.window
        if self.param.low is None or self.param.high is None:
            return None
        return float(self.param.low), float(self.param.high)

    def value(self, u: float, family: tuple = ()) -> Any:
        """The proposal at u in [0, 1) on this axis's scale.

        The proposal at u in [0, 1) on this axis's scale; ``family``: the generated values
        (scale ``generated``).

        Args:
            u: a position in [0, 1).
            family: the generated values (scale ``generated``).

        Returns:
            The proposal.
        """
        u = min(max(float(u), 0.0), 1.0 - 1e-12)
        if self.dim.scale in (Scale.CHOICE, Scale.GENERATED):
            options = self.param.choices if self.dim.scale == Scale.CHOICE else family
            return options[int(u * len(options))]
        lo, hi = self.window()
        if self.dim.scale == Scale.LINEAR:
            return lo + u * (hi - lo)
        x = min(max(lo * (hi / lo) ** u, lo), hi)
        return int(round(x)) if self.dim.scale == Scale.INT_LOG else x

    def window_text(self) -> str:
        """The window searched, in words."""
        if self.dim.scale == Scale.CHOICE:
            return "{" + ", ".join(self.param.choices) + "}"
        if self.dim.scale == Scale.GENERATED:
            w = self.dim.window
            return "generated" + ("" if w is None else f", K in {w[0]:g}-{w[1]:g}")
        lo, hi = self.window()
        if self.dim.scale == Scale.INT_LOG:
            return f"[{int(lo)}, {int(hi)}]"
        return f"[{lo:g}, {hi:g}]"


@dataclass(frozen=True)
class ClaimSpace:
    """An algorithm's claim and the space it covers.

    Attributes:
        algorithm: the registered name.
        claim: the claim and its source (e.g. "ε-DP, Thm 2 (App. C)"); "" for an algorithm
            that claims no privacy (a positive control).
        axes: the dimensions, in the parameters' order (:class:`Axis`).
        cost: samples per run of an instance's audit (params → int), the cost model.
    """

    algorithm: str
    claim: str
    axes: tuple[Axis, ...]
    cost: Callable[[dict], int]

    def free(self, include_options: bool = False) -> tuple[Axis, ...]:
        """The dimensions a search varies: not pinned; options only if asked.

        Args:
            include_options: vary the ambiguity options too.

        Returns:
            The axes.
        """
        return tuple(a for a in self.axes if not a.pinned
                     and (include_options or a.dim.scope != Scope.OPTION))

    def rows(self) -> list[dict]:
        """The table `dpaudit list --claims` prints: one row per dimension."""
        return [{"algorithm": self.algorithm, "dimension": a.name,
                 "kind": a.param.kind, "range": a.param.range_text(),
                 "scale": str(a.dim.scale), "window": a.window_text(),
                 "scope": str(a.dim.scope), "source": a.dim.source,
                 "default": _jsonable(a.param.default), "pinned": a.pinned}
                for a in self.axes]


def _jsonable(v: object) -> object:
    return list(v) if isinstance(v, tuple) else v


def theorem(source: str, scale: Scale, window: tuple | None = None) -> Dimension:
    """A dimension inside the theorem's hypotheses (``source``: the theorem).

    Args:
        source: the theorem.
        scale: the search's scale.
        window: the window searched where the range is unbounded.

    Returns:
        The :class:`Dimension`.
    """
    return Dimension(Scope.THEOREM, source, scale, window)


def proof(source: str, scale: Scale, window: tuple | None = None) -> Dimension:
    """A constant the paper fixes but its privacy proof does not use (``source``: where).

    Args:
        source: where the paper fixes it.
        scale: the search's scale.
        window: the window searched.

    Returns:
        The :class:`Dimension`.
    """
    return Dimension(Scope.PROOF, source, scale, window)


def option(source: str) -> Dimension:
    """A reading of an ambiguity of the paper (``source``: the ambiguous passage).

    Args:
        source: the ambiguous passage.

    Returns:
        The :class:`Dimension`.
    """
    return Dimension(Scope.OPTION, source, Scale.CHOICE)
