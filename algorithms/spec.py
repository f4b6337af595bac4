"""The algorithm contract: what a reference implementation declares to be audited.

Every module of :mod:`dpaudit.algorithms` lists its algorithms in ``SPECS``, one
:class:`AlgorithmSpec` each (the catalogue, :mod:`dpaudit.algorithms.registry`, collects them). A
spec
ties together

* the compiled kernel (the kernel contract is documented in :mod:`dpaudit.simulation.simulate`),
* the algorithm's parameters (:class:`Param`, shared names of docs/guide/commands.md: ``means``,
  ``risk``,
  ``beta``, ``horizon``, ``max_steps``, ...), validated before any work starts,
* ``prepare``: validated parameters -> :class:`Prepared` (the numeric ``theta``/``aux`` arrays
  the kernel reads),
* ``structure``: table positions whose change is most revealing for this algorithm (rows t,
  or (arm, pull) tuples for ``stream`` tables; used by the ``structure`` strategy,
  :func:`dpaudit.data.neighbours.candidates`),
* ``default_delta``: for (ε, δ)-DP algorithms calibrated by δ, the δ audited when none is
  given; the audit runs the algorithm with the δ it audits (:meth:`AlgorithmSpec.resolve_claim`).

This module imports nothing of dpaudit above :mod:`dpaudit.errors`.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpaudit.algorithms.space import Axis, ClaimSpace, Dimension
from dpaudit.core.terms import PrivacyModel
from dpaudit.data.tables import MODELS
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import Request


@dataclass(frozen=True)
class Param:
    """One algorithm parameter.

    ``kind`` is ``"float"``, ``"int"``, ``"choice"``, ``"floats"`` (a comma-separated list of
    floats, e.g. ``means``) or ``"text"`` (a string checked by the algorithm's ``prepare``, e.g.
    ``features``: a preset name or a file path). ``low``/``high`` bound numeric values (and every element of
    ``floats``); ``open_low``/``open_high`` make the bound strict. ``default=None`` means
    "derived by the algorithm" (e.g. ``means`` computed from the features): the parsed value
    stays None unless one is given. ``claim``: the parameter's place in the space the
    algorithm's privacy claim covers (:class:`~dpaudit.algorithms.space.Dimension`); None: not
    a dimension of the claim (an audit window, a data-independent cap, a bench setting).
    """

    name: str
    default: Any
    kind: str
    doc: str
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    choices: tuple[str, ...] = ()
    min_len: int = 1
    claim: Dimension | None = None

    def range_text(self) -> str:
        """The accepted range, in words."""
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "text":
            return self.doc
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        left = "(" if (self.open_low or self.low is None) else "["
        right = ")" if (self.open_high or self.high is None) else "]"
        what = "integer" if self.kind == "int" else "number"
        if self.kind == "floats":
            what = f"comma-separated list of at least {self.min_len} numbers, each"
        return f"{what} in {left}{lo}, {hi}{right}"

    def _check_number(self, x: float, shown: str) -> None:
        ok = math.isfinite(x)
        if ok and self.low is not None:
            ok = x > self.low if self.open_low else x >= self.low
        if ok and self.high is not None:
            ok = x < self.high if self.open_high else x <= self.high
        if not ok:
            raise InputError(f"{self.name}={shown} is out of range: expected {self.range_text()}")

    def parse(self, value: Any) -> Any:
        """Convert ``value`` (a string from the CLI or a Python value) and check its range.

        Raises :class:`InputError` naming the bad value and the accepted range.

        Args:
            value: a string from the CLI or a Python value.

        Returns:
            The parsed value.

        Raises:
            InputError: a malformed value or one out of range.
        """
        if value is None and self.default is None:
            return None
        shown = value if isinstance(value, str) else repr(value)
        try:
            if self.kind == "choice":
                v = str(value)
                if v not in self.choices:
                    raise ValueError
                return v
            if self.kind == "text":
                return value if isinstance(value, str) else matrix_text(value)
            if self.kind == "int":
                f = float(value)
                if not math.isfinite(f) or f != int(f):
                    raise ValueError
                v = int(f)
                self._check_number(v, shown)
                return v
            if self.kind == "float":
                v = float(value)
                self._check_number(v, shown)
                return v
            if self.kind == "floats":
                items = value.split(",") if isinstance(value, str) else list(value)
                v = tuple(float(x) for x in items)
                if len(v) < self.min_len:
                    raise InputError(
                        f"{self.name}={shown} is out of range: expected {self.range_text()}")
                for x in v:
                    self._check_number(x, shown)
                return v
        except InputError:
            raise
        except (TypeError, ValueError):
            raise InputError(f"{self.name}={shown} is not valid: expected {self.range_text()}")
        raise AssertionError(self.kind)


def matrix_text(value: ArrayLike) -> str:
    """A numeric matrix as the text rows ``a11,a12;a21,a22``.

    A numeric matrix (array-like, shape (K, d) or (K,)) as the text rows
    ``a11,a12;a21,a22`` that a ``text`` parameter such as ``features`` accepts: exact (each
    float's shortest round-trip form), hashable, and a command line can carry it. ValueError for
    a non-numeric value or more than 2 dimensions.

    Args:
        value: a numeric matrix, shape (K, d) or (K,).

    Returns:
        The text.
    """
    a = np.asarray(value, dtype=np.float64)
    if a.ndim > 2:
        raise ValueError(a.ndim)
    return ";".join(",".join(repr(float(x)) for x in row) for row in np.atleast_2d(a))


@dataclass(frozen=True)
class Prepared:
    """Numeric inputs of a kernel call, built by ``AlgorithmSpec.prepare``.

    ``theta``: float64 vector of scalar parameters in the kernel's documented layout;
    ``aux``: float64 vector of precomputed tables (e.g. C_G values); ``means``: shape (K,)
    Bernoulli means used for rows beyond a fixed table.
    """

    theta: np.ndarray
    aux: np.ndarray
    means: np.ndarray


@dataclass(frozen=True)
class AlgorithmSpec:
    """A registered algorithm (reference implementation, baseline or mutant)."""

    name: str
    title: str
    paper: str
    model: PrivacyModel  # docs/method/architecture.md
    private: bool  # claims eps-DP; False for non-private comparators (positive controls)
    kernel: Any  # numba dispatcher following the kernel contract of dpaudit.simulation.simulate
    params: tuple[Param, ...]
    prepare: Callable[[float, dict], Prepared]
    structure: Callable[[dict], list[tuple[int, str]]]
    audit_horizon: Callable[[dict], int]
    mutant_of: str | None = None
    description: str = ""
    extra: dict = field(default_factory=dict)
    # (eps, delta)-DP algorithms calibrated by delta (e.g. the Gaussian mechanism): the delta of
    # the claim when an audit is given none. Such a spec has a parameter "delta" that its
    # ``prepare`` reads; :meth:`resolve_claim` sets it to the audited delta. 0: pure eps-DP.
    default_delta: float = 0.0
    # the privacy claim and where the paper makes it (e.g. "ε-DP: Thm 2, proved in App. C");
    # "" for a positive control, which claims nothing. Its space: :meth:`space`.
    theorem: str = ""
    # where the claim's proof holds when it holds for fewer (ε, δ) than the claim states:
    # (ε, δ) -> None inside, else why not (the range, where the paper says so, and what fails
    # outside it). None: the proof covers every (ε, δ) the claim states. :meth:`check_proof`.
    proof_range: Callable[[float, float], str | None] | None = None
    # an ε-local-DP claim: every release the kernel logs is one user's privatised report, an
    # output the claim covers (not an internal value a post-processing may hide), so a report
    # that loses more than ε on its logged law refutes the claim (a white-box proof:
    # dpaudit.auditing.whitebox.reports_proof)
    reports: bool = False

    def __post_init__(self) -> None:
        """Check the spec (ValueError)."""
        if self.default_delta and "delta" not in [p.name for p in self.params]:
            raise ValueError(f"{self.name}: default_delta needs a parameter 'delta'")

    def request(self, prep: Prepared, table: np.ndarray, runs: int,
                seed: int | np.random.SeedSequence | np.random.Generator, views: ArrayLike = (),
                limit: int | None = None) -> Request:
        """A simulation of ``runs`` runs of this algorithm's kernel on ``table``.

        ``runs`` runs of this algorithm's kernel on ``table`` (float64, its model's shape)
        with the arrays of ``prep``, at most ``limit`` samples each (None: the table's rows),
        counting the cells of ``views``; ``seed``: an int, ``SeedSequence`` or ``Generator``
        (:class:`dpaudit.simulation.simulate.Request`).

        Args:
            prep: the prepared arrays.
            table: the table (float64, the model's shape).
            runs: runs.
            seed: an int, SeedSequence or Generator.
            views: the views counted.
            limit: samples per run (None: the audit horizon).

        Returns:
            The :class:`~dpaudit.simulation.simulate.Request`.
        """
        return Request(self.kernel, table, prep.means, prep.theta, prep.aux, int(runs), seed,
                       views, limit)

    def fresh_request(self, prep: Prepared, runs: int, seed: int, limit: int) -> Request:
        """A simulation of ``runs`` runs on fresh rewards.

        A simulation of ``runs`` runs on fresh rewards (an empty table: every reward drawn
        from Bernoulli(``prep.means``)), at most ``limit`` samples each, seeded by
        ``SeedSequence(seed)``: for :func:`dpaudit.simulation.simulate.outcomes`.

        Args:
            prep: the prepared arrays.
            runs: runs.
            seed: the seed.
            limit: samples per run.

        Returns:
            The :class:`~dpaudit.simulation.simulate.Request`.
        """
        return self.request(prep, MODELS[self.model].fresh(prep.means.shape[0]), runs,
                            np.random.SeedSequence(seed), limit=int(limit))

    def check_proof(self, eps: float, delta: float) -> None:
        """Refuse a claim outside the range its proof covers (``proof_range``).

        A paper may state a claim for every ε while its proof rests on a result with a
        narrower range (e.g. the Gaussian mechanism's (ε, δ)-DP, proved for ε < 1): outside
        it the paper has not established the claim, and an audit of it answers a question the
        paper does not ask. An audit refuses it unless asked to go beyond the proof.

        Args:
            eps: the claim's ε.
            delta: the claim's δ (as resolved: :meth:`resolve_claim`).

        Raises:
            InputError: (ε, δ) outside the proof's range; the message names the range, where
                the paper says so, and the flag that audits it anyway.
        """
        why = self.proof_range(float(eps), float(delta)) if self.proof_range else None
        if why:
            raise InputError(f"eps={eps:g}, delta={delta:g} is outside the range of "
                             f"{self.name}'s privacy proof: {why} (--beyond-proof audits the "
                             "claim anyway)")

    @property
    def claim(self) -> str:
        """The privacy claim in words."""
        if not self.private:
            return "not private (positive control)"
        if self.default_delta:
            return f"(eps, delta)-DP, default delta {self.default_delta:g}"
        return "eps-DP (pure)"

    def resolve_claim(self, given: dict[str, Any], delta: float | None
                      ) -> tuple[dict[str, Any], float]:
        """The parameters and δ of the audited claim.

        (parameters, δ of the audited claim) for an audit given ``given`` parameters and
        ``delta`` (None: not given).

        Pure ε-DP specs: the parameters resolved as usual, δ = ``delta`` or 0. Specs calibrated
        by δ (``default_delta`` > 0): the algorithm runs with the δ it is audited at. δ is
        ``delta`` if given, else the ``delta`` parameter if given, else ``default_delta``; the
        parameter is set to it. InputError if ``delta`` is 0 (such an algorithm claims no
        pure DP) or if ``delta`` and the ``delta`` parameter are both given and differ.

        Args:
            given: the parameters given.
            delta: the claim's δ (None: not given).

        Returns:
            (parameters, δ of the audited claim).

        Raises:
            InputError: a δ the algorithm cannot be audited at.
        """
        if not self.default_delta:
            return self.resolve_params(given), float(delta or 0.0)
        if delta is not None and delta == 0:
            raise InputError(f"delta=0 is not valid for {self.name}: it claims (eps, delta)-DP "
                             f"with delta > 0 (audited at delta={self.default_delta:g} unless "
                             "--delta is given)")
        if delta is not None and "delta" in given and \
                self.param("delta").parse(given["delta"]) != float(delta):
            raise InputError(f"--delta {delta:g} and --param delta={given['delta']} differ: "
                             f"{self.name} is calibrated with the delta it is audited at")
        if delta is None:
            delta = given.get("delta", self.default_delta)
        p = self.resolve_params({**given, "delta": delta})
        return p, float(p["delta"])

    def space(self, pinned: Sequence[str] = ()) -> ClaimSpace:
        """The space the claim covers.

        The space the claim covers: the parameters that carry a
        :class:`~dpaudit.algorithms.space.Dimension`, those named in ``pinned`` (given by the
        user) marked pinned; cost model: the audit's samples per run
        (:attr:`audit_horizon`).

        Args:
            pinned: parameter names pinned (given).

        Returns:
            The :class:`~dpaudit.algorithms.space.ClaimSpace`.
        """
        pinned = set(pinned)
        axes = tuple(Axis(p, p.claim, p.name in pinned) for p in self.params
                     if p.claim is not None)
        return ClaimSpace(self.name, self.theorem, axes, self.audit_horizon)

    def param(self, name: str) -> Param:
        """The parameter called ``name`` (KeyError otherwise).

        Args:
            name: the parameter's name.

        Returns:
            The :class:`Param`.

        Raises:
            KeyError: no such parameter.
        """
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def resolve_params(self, given: dict[str, Any]) -> dict[str, Any]:
        """Defaults overridden by ``given``; every value parsed and range-checked.

        Raises :class:`InputError` for unknown names (with close matches) or bad values.

        Args:
            given: parameter values by name (strings or values).

        Returns:
            Every parameter's value.

        Raises:
            InputError: an unknown parameter or a bad value.
        """
        names = [p.name for p in self.params]
        out = {}
        for key in given:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=3)
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                raise InputError(f"unknown parameter {key!r} for {self.name}{hint}; "
                                 f"accepted: {', '.join(names)}")
        for p in self.params:
            out[p.name] = p.parse(given[p.name]) if p.name in given else p.parse(p.default)
        return out
