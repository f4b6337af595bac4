"""Reward tables, the four privacy models and their neighbouring relations (docs/method/architecture.md).

=========  ===========  ===================================  ===============================
model      table shape  read by the algorithm                neighbours differ in
=========  ===========  ===================================  ===============================
``user``   (T, K)       ``d[t, a_t]`` at round t             one row t (any values)
``stream`` (K, T)       ``d[a, n]`` at the n-th pull of a    one entry (a, n)
``full``   (T, K)       the whole row ``d[t, :]`` at round t one row t (any values)
``local``  () (one r)   the local randomiser R(r)            any r, r' in [0, 1]
=========  ===========  ===================================  ===============================

Every value lies in [0, 1] (privacy proofs assume bounded rewards): :meth:`TableModel.validate`
rejects anything else with a one-line :class:`~dpaudit.errors.InputError`.

A **position** is what neighbours may change: ``(t,)`` for a row (user, full), ``(a, n)`` for
an entry (stream), ``()`` for the single local reward. A **pattern** is the pair of values the
position takes in d and d' (:meth:`TableModel.patterns`). **Base tables** (:func:`base_tables`)
fill the rest of the table: drawn from an instance with a recorded seed, constant (ties), or
adversarial (knife-edge top-two tie, extreme 0/1 patterns).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from dpaudit.core.terms import PrivacyModel
from dpaudit.errors import InputError

MAX_ARM_PATTERNS = 8   # ``full`` rows: "arm a up, every other arm down" for the first 8 arms


@dataclass(frozen=True)
class TableModel:
    """One privacy model: shapes, validation, positions and value patterns.

    One privacy model of docs/method/architecture.md (module table): shapes, validation, positions and
    value patterns of its neighbouring relation.
    """

    name: str
    doc: str

    # ------------------------------------------------------------------ shapes and checks
    def shape(self, K: int, horizon: int) -> tuple:
        """The table shape of this model.

        Args:
            K: arms.
            horizon: rows T.

        Returns:
            (T, K) for ``user`` and ``full``, (K, T) for ``stream``, () for ``local``.
        """
        return {PrivacyModel.USER: (horizon, K), PrivacyModel.FULL: (horizon, K),
                PrivacyModel.STREAM: (K, horizon), PrivacyModel.LOCAL: ()}[self.name]

    def validate(self, table: ArrayLike, name: str = "table") -> np.ndarray:
        """A table validated, as a C-contiguous float64 array of this model's shape.

        Args:
            table: the table (array-like).
            name: its name, for the message.

        Returns:
            The table.

        Raises:
            InputError: a wrong dimension, an empty table or a value outside [0, 1] (one line
                naming the bad value and the accepted range).
        """
        try:
            t = np.asarray(table, dtype=np.float64)
            t = np.ascontiguousarray(t) if t.ndim else t   # (ascontiguousarray makes 0-d 1-d)
        except (TypeError, ValueError):
            raise InputError(f"{name} is not a numeric array")
        if self.name == PrivacyModel.LOCAL:
            if t.ndim != 0:
                raise InputError(f"{name} has shape {t.shape}: a local reward is one number")
        elif t.ndim != 2 or min(t.shape) < 1 or t.shape[self.arm_axis] < 2:
            want = "(K, T)" if self.name == PrivacyModel.STREAM else "(T, K)"
            raise InputError(f"{name} has shape {t.shape}: expected {want} with T >= 1, K >= 2")
        bad = ~np.isfinite(t) | (t < 0) | (t > 1)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0]) if t.ndim else ()
            shown = f"{name}[{', '.join(map(str, idx))}]" if idx else name
            raise InputError(f"{shown} = {float(t[idx])!r} is outside [0, 1]")
        return t

    @property
    def arm_axis(self) -> int:
        """The axis of a table that indexes the arms: 0 for ``stream``, else 1."""
        return 0 if self.name == PrivacyModel.STREAM else 1

    def fresh(self, K: int) -> np.ndarray:
        """An empty float64 table of K arms: every reward a run reads is drawn afresh.

        Args:
            K: arms.

        Returns:
            A (K, 0) table for ``stream``, else (0, K); a run reads Bernoulli(means) rewards
            beyond it (the kernel contract of :mod:`dpaudit.simulation.simulate`).
        """
        return np.zeros((K, 0) if self.arm_axis == 0 else (0, K))

    # ---------------------------------------------------------------------- positions
    def positions(self, shape: tuple) -> list[tuple]:
        """Every position neighbours may change, in table order.

        Args:
            shape: the table's shape.

        Returns:
            The positions: rows for ``user``/``full``, (arm, index) entries for ``stream``, one
            empty position for ``local``.
        """
        if self.name == PrivacyModel.LOCAL:
            return [()]
        if self.name == PrivacyModel.STREAM:
            return [(a, n) for a in range(shape[0]) for n in range(shape[1])]
        return [(t,) for t in range(shape[0])]

    def changed(self, d: np.ndarray, d_prime: np.ndarray) -> tuple:
        """The one position where validated tables d and d′ differ.

        Args:
            d: the first table.
            d_prime: its neighbour.

        Returns:
            The position.

        Raises:
            InputError: the shapes differ, or the tables differ in no position or in more than one.
        """
        if d.shape != d_prime.shape:
            raise InputError(f"d has shape {d.shape} but d' has shape {d_prime.shape}")
        if self.name == PrivacyModel.LOCAL:
            if d == d_prime:
                raise InputError("d and d' are identical: local neighbours differ in their "
                                 "one reward")
            return ()
        diff = d != d_prime
        if self.name == PrivacyModel.STREAM:
            where = [tuple(int(i) for i in ix) for ix in np.argwhere(diff)]
            unit = "entries"
        else:
            where = [(int(t),) for t in np.flatnonzero(diff.any(axis=1))]
            unit = "rows"
        if not where:
            raise InputError(f"d and d' are identical: {self.name} neighbours differ in "
                             f"exactly 1 {unit[:-1]}")
        if len(where) != 1:
            raise InputError(f"d and d' differ in {len(where)} {unit}: {self.name} neighbours "
                             "differ in exactly 1")
        return where[0]

    # ------------------------------------------------------------------------ patterns
    def patterns(self, base_value: ArrayLike) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """The value patterns tried at a position.

        user/full rows and stream entries: ``0→1`` (the maximal change, whichever arm reads it) and
        ``flip`` (base → 1 − base: for a mixed row some arms go up while others go down); full rows
        also ``arm a up`` (arm a 0 → 1, every other arm 1 → 0). local: 0 vs 1, 0 vs ½, ½ vs 1.
        Patterns that change nothing are left out.

        Args:
            base_value: the base table's value there (a row for user/full, a number for stream,
                ignored for local).

        Returns:
            (name, value in d, value in d′) triples.
        """
        if self.name == PrivacyModel.LOCAL:
            return [("0→1", np.float64(0.0), np.float64(1.0)),
                    ("0→½", np.float64(0.0), np.float64(0.5)),
                    ("½→1", np.float64(0.5), np.float64(1.0))]
        b = np.asarray(base_value, dtype=np.float64)
        out = [("0→1", np.zeros_like(b), np.ones_like(b)), ("flip", b.copy(), 1.0 - b)]
        if self.name == PrivacyModel.FULL:
            for a in range(min(b.size, MAX_ARM_PATTERNS)):
                up = np.zeros_like(b)
                up[a] = 1.0
                out.append((f"arm {a} up", 1.0 - up, up))
        return [p for p in out if not np.array_equal(p[1], p[2])]

    def set(self, table: np.ndarray, position: tuple, value: ArrayLike) -> np.ndarray:
        """A copy of a table with one position set.

        Args:
            table: the table.
            position: the position.
            value: the value (a row or a number).

        Returns:
            The copy.
        """
        if self.name == PrivacyModel.LOCAL:
            return np.float64(value)
        t = np.array(table, dtype=np.float64, copy=True)
        t[position] = value
        return t


MODELS = {m.name: m for m in (
    TableModel(PrivacyModel.USER,
               "(T, K) table; round t reads d[t, a_t]; neighbours differ in one row"),
    TableModel(PrivacyModel.STREAM,
               "(K, T) table; the n-th pull of arm a reads d[a, n]; neighbours differ in one "
               "entry"),
    TableModel(PrivacyModel.FULL,
               "(T, K) table; round t reads the whole row; neighbours differ in one row"),
    TableModel(PrivacyModel.LOCAL,
               "one reward r in [0, 1] through the local randomiser; neighbours: any r, r'"),
)}


def model(name: str) -> TableModel:
    """The privacy model called ``name``.

    Args:
        name: ``user``, ``stream``, ``full`` or ``local``.

    Returns:
        Its :class:`TableModel`.

    Raises:
        InputError: an unknown name (the message lists the models).
    """
    if name not in MODELS:
        raise InputError(f"model {name!r} is not valid: expected one of {', '.join(MODELS)}")
    return MODELS[name]


def validate_table(table: ArrayLike, name: str = "table") -> np.ndarray:
    """A ``user`` table (T, K), validated (:meth:`TableModel.validate`).

    Args:
        table: the table.
        name: its name, for the message.

    Returns:
        The table as C-contiguous float64.

    Raises:
        InputError: not a valid ``user`` table.
    """
    return MODELS[PrivacyModel.USER].validate(table, name)


def bernoulli_table(means: ArrayLike, horizon: int, seed: int) -> np.ndarray:
    """A (horizon, K) float64 table with entries Bernoulli(means[a]).

    Args:
        means: the K arms' means in [0, 1].
        horizon: rows T.
        seed: the generator's seed.

    Returns:
        The table, 0/1 entries.
    """
    rng = np.random.default_rng(seed)
    m = np.asarray(means, dtype=np.float64)
    return (rng.random((horizon, m.size)) < m).astype(np.float64)


def constant_table(value: float, horizon: int, K: int) -> np.ndarray:
    """A (horizon, K) float64 table with every entry ``value`` (all arms tied).

    Args:
        value: the entry, in [0, 1].
        horizon: rows T.
        K: arms.

    Returns:
        The table.
    """
    return np.full((horizon, K), float(value))


def base_tables(model_name: str, means: ArrayLike, horizon: int, seed: int) -> list[tuple]:
    """The base tables of a model's candidate pairs.

    Recipes (JSON-able, with ``name``): ``instance`` (Bernoulli(means) with ``seed``),
    ``tied-high`` / ``tied-mid`` / ``tied-low`` (every entry 1, ½, 0: all arms tied),
    ``knife-edge`` (every round the instance's means, with the best two arms tied at their
    average: the changed entry decides which of them leads), ``one-hot`` (the instance's best
    arm always 1, every other arm 0) and ``one-cold`` (its best arm 0, the others 1): extreme
    0/1 patterns. ``stream`` tables are the transposes; ``local`` has no table (one recipe
    ``none`` with table None).

    Args:
        model_name: the privacy model.
        means: the K arms' means.
        horizon: rows T.
        seed: the seed of the ``instance`` table.

    Returns:
        A list of (table, recipe).
    """
    if model_name == PrivacyModel.LOCAL:
        return [(None, {"kind": "none", "name": "none"})]
    m = np.asarray(means, dtype=np.float64)
    K = m.size
    best, second = np.argsort(-m, kind="stable")[:2]
    knife = m.copy()
    knife[[best, second]] = 0.5 * (m[best] + m[second])
    hot = np.zeros(K)
    hot[best] = 1.0
    rows = [
        (bernoulli_table(m, horizon, seed),
         {"kind": "bernoulli", "means": m.tolist(), "seed": int(seed), "name": "instance"}),
        (constant_table(1.0, horizon, K), {"kind": "constant", "value": 1.0, "name": "tied-high"}),
        (constant_table(0.5, horizon, K), {"kind": "constant", "value": 0.5, "name": "tied-mid"}),
        (constant_table(0.0, horizon, K), {"kind": "constant", "value": 0.0, "name": "tied-low"}),
        (np.tile(knife, (horizon, 1)), {"kind": "rows", "row": knife.tolist(),
                                        "name": "knife-edge"}),
        (np.tile(hot, (horizon, 1)), {"kind": "rows", "row": hot.tolist(), "name": "one-hot"}),
        (np.tile(1.0 - hot, (horizon, 1)), {"kind": "rows", "row": (1.0 - hot).tolist(),
                                            "name": "one-cold"}),
    ]
    if model_name == PrivacyModel.STREAM:
        rows = [(np.ascontiguousarray(t.T), r) for t, r in rows]
    return rows


def _delta(base: np.ndarray, x: object) -> tuple | None:
    """(flat indices, values) where ``x`` differs from ``base`` bit for bit; None: not alike."""
    if not (isinstance(x, np.ndarray) and x.shape == base.shape and x.dtype == base.dtype
            and x.dtype.kind == "f" and x.flags.c_contiguous and base.flags.c_contiguous):
        return None
    bits = f"u{x.dtype.itemsize}"
    where = np.flatnonzero(x.view(bits) != base.view(bits))
    return where, x.ravel()[where]


def _from_base(base: np.ndarray, d: tuple, d_prime: tuple, fields: tuple) -> NeighbourPair:
    """The pair :meth:`NeighbourPair.__reduce__` pickled (its base table kept for the next)."""
    tables = []
    for where, values in (d, d_prime):
        t = base.copy()
        t.ravel()[where] = values
        tables.append(t)
    pair = NeighbourPair(*tables, *fields)
    object.__setattr__(pair, "_base_table", base)
    return pair


@dataclass(frozen=True)
class NeighbourPair:
    """Two neighbouring inputs of model ``model`` that differ at ``position`` only.

    ``d``, ``d_prime``: validated tables (a 0-d array for ``local``); ``base``: the recipe of
    the base table (JSON-able); ``label``: why this position was chosen; ``pattern``: the name
    of the value pattern (:meth:`TableModel.patterns`).
    """

    d: np.ndarray
    d_prime: np.ndarray
    position: tuple
    base: dict
    label: str
    model: PrivacyModel = PrivacyModel.USER
    pattern: str = "0→1"
    extra: dict = field(default_factory=dict)

    @property
    def row(self) -> int:
        """The changed row (user and full tables)."""
        return self.position[0]

    @classmethod
    def change(cls, model_name: str, base_table: ArrayLike, position: tuple, value_d: ArrayLike,
               value_d_prime: ArrayLike, base: dict, label: str,
               pattern: str = "0→1") -> NeighbourPair:
        """Neighbours from a base table with one position changed.

        Args:
            model_name: the privacy model.
            base_table: the base table.
            position: the position changed.
            value_d: its value in d.
            value_d_prime: its value in d′.
            base: the base table's recipe (JSON).
            label: why this position (e.g. "round 2").
            pattern: the pattern's name.

        Returns:
            The :class:`NeighbourPair`.

        Raises:
            InputError: the tables are invalid or not neighbours.
        """
        m = model(model_name)
        d = m.validate(m.set(base_table, position, value_d), "d")
        dp = m.validate(m.set(base_table, position, value_d_prime), "d'")
        pair = cls(d, dp, m.changed(d, dp), base, label, model_name, pattern)
        if isinstance(base_table, np.ndarray):
            object.__setattr__(pair, "_base_table", base_table)
        return pair

    def __reduce__(self) -> tuple:
        """Pickled as its base table and the entries where d and d′ differ from it.

        The pairs of one base share that array, and pickle writes a shared object once: the
        candidates sent to a worker process in one task weigh a few base tables, not two full
        tables a pair (the pair screen's tasks: 3 MB -> 0.1 MB). A pair without a base table
        (explicit tables, ``dataclasses.replace``) is pickled whole.
        """
        fields = (self.position, self.base, self.label, self.model, self.pattern, self.extra)
        base = self.__dict__.get("_base_table")
        deltas = (_delta(base, self.d), _delta(base, self.d_prime)) if base is not None else ()
        if not deltas or None in deltas:
            return NeighbourPair, (self.d, self.d_prime, *fields)
        return _from_base, (base, *deltas, fields)

    @classmethod
    def change_row(cls, base_table: ArrayLike, row: int, value_d: ArrayLike,
                   value_d_prime: ArrayLike, base: dict, label: str) -> NeighbourPair:
        """``user`` neighbours with one row changed.

        Args:
            base_table: the base table (T, K).
            row: the row changed.
            value_d: the row in d.
            value_d_prime: the row in d′.
            base: the base table's recipe (JSON).
            label: why this row.

        Returns:
            The :class:`NeighbourPair`.
        """
        return cls.change(PrivacyModel.USER, base_table, (row,), value_d, value_d_prime, base,
        label)

    @classmethod
    def from_tables(cls, d: ArrayLike, d_prime: ArrayLike, base: dict, label: str,
                    model_name: str = PrivacyModel.USER) -> NeighbourPair:
        """An explicit pair, validated.

        Args:
            d: the first table.
            d_prime: its neighbour.
            base: the recipe (JSON) to report.
            label: why this pair.
            model_name: the privacy model.

        Returns:
            The :class:`NeighbourPair`.

        Raises:
            InputError: the tables are not ``model_name`` neighbours.
        """
        m = model(model_name)
        d, dp = m.validate(d, "d"), m.validate(d_prime, "d'")
        return cls(d, dp, m.changed(d, dp), base, label, model_name, "explicit")

    def describe(self) -> dict:
        """The JSON of the pair.

        JSON of the pair (docs/reference/verdict-json.md ``neighbours``): model, base recipe, shape, the
        changed position and its values in d and d', the pattern and why it was chosen.
        """
        out = {"model": self.model, "base": self.base, "pattern": self.pattern,
               "position": list(self.position), "why": self.label}
        if self.model == PrivacyModel.LOCAL:
            return {**out, "d": float(self.d), "d_prime": float(self.d_prime)}
        out["shape"] = list(self.d.shape)
        if self.model == PrivacyModel.STREAM:
            return {**out, "arms": int(self.d.shape[0]), "rows": int(self.d.shape[1]),
                    "changed_entry": list(self.position),
                    "value_d": float(self.d[self.position]),
                    "value_d_prime": float(self.d_prime[self.position])}
        return {**out, "rows": int(self.d.shape[0]), "arms": int(self.d.shape[1]),
                "changed_row": self.row, "row_d": self.d[self.row].tolist(),
                "row_d_prime": self.d_prime[self.row].tolist()}


def load_pair(path: str, model: str) -> NeighbourPair:
    """The explicit pair in a JSON file.

    Args:
        path: a JSON object with ``d`` and ``d_prime`` (tables of ``model``,
            docs/method/architecture.md) and optionally ``why``.
        model: the privacy model the tables follow.

    Returns:
        The :class:`NeighbourPair`.

    Raises:
        InputError: the file cannot be read, is not such an object, or the tables are not
            valid neighbours (one line naming the file).
    """
    try:
        with open(path, encoding="utf-8") as f:
            obj = json.load(f)
    except OSError as e:
        raise InputError(f"--pair {path}: cannot read ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise InputError(f"--pair {path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    except UnicodeDecodeError:
        raise InputError(f"--pair {path}: not valid JSON (not UTF-8 text)") from None
    if not isinstance(obj, dict) or "d" not in obj or "d_prime" not in obj:
        raise InputError(f"--pair {path}: expected a JSON object with keys 'd' and 'd_prime'")
    return NeighbourPair.from_tables(obj["d"], obj["d_prime"], {"kind": "file", "path": path,
                                                                "name": "file"},
                                     obj.get("why", f"explicit pair from {path}"), model)
