"""Bring your own algorithm: audit a plain Python callable from the command line.

``dpaudit run --algo path/to/file.py:function --model user --eps 0.5`` (or
``--algo package.module:function``) audits ``function(rng, data, eps) -> output`` of ONE run:

* ``rng``: a ``numpy.random.Generator`` (the only randomness allowed);
* ``data``: the input, by privacy model (DESIGN.md §1): ``user`` and ``full``: a (T, K)
  reward table (row t = round t's rewards); ``stream``: a (K, T) table (entry (a, n) = the
  n-th pull of arm a); ``local``: one reward r ∈ [0, 1] (a float);
* ``eps``: the claimed ε;
* ``output``: the released transcript: a number, or any sequence of numbers (e.g. the actions
  followed by τ and â). Scalar outputs are audited as numbers (threshold events apply);
  sequences are hashed into one cell per distinct transcript.

The callable runs once per sample in this process (slower than the compiled reference
kernels: the default budget is :data:`DEFAULT_RUNS` per side). Candidate neighbouring pairs,
by model: ``user``/``full``: base tables tied-high (all 1), tied-mid (all ½) and a Bernoulli
draw from ``means``, with one of rows 0, K−1, K, T−1 set to all-0 in d vs all-1 in d';
``stream``: the same bases transposed, with entry (0, 0), (K−1, 0) or (0, T−1) changed 0 → 1;
``local``: r = 0 vs r' = 1.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import time

import numpy as np
from tqdm import tqdm

from dpaudit.audit import check_common, run_audit
from dpaudit.errors import InputError
from dpaudit.mechanism import MechanismSource
from dpaudit.tables import bernoulli_table, constant_table

MODELS = ("user", "stream", "full", "local")
DEFAULT_RUNS = 200_000
_MASK = (1 << 63) - 1


def load(ref: str):
    """The callable named by ``path/to/file.py:function`` or ``package.module:function``."""
    target, sep, attr = ref.rpartition(":")
    if not sep or not target or not attr:
        raise InputError(f"--algo {ref!r}: expected a registry name, FILE.py:FUNCTION or "
                         "MODULE:FUNCTION")
    try:
        if target.endswith(".py"):
            if not os.path.isfile(target):
                raise InputError(f"--algo {ref}: file {target} does not exist")
            spec = importlib.util.spec_from_file_location(
                "dpaudit_plugin_" + os.path.splitext(os.path.basename(target))[0], target)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except InputError:
        raise
    except Exception as e:   # the user's module failed to import: one line, their message
        raise InputError(f"--algo {ref}: importing {target} failed: {type(e).__name__}: {e}")
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise InputError(f"--algo {ref}: {target} has no callable named {attr!r}")
    return fn


class CallableMechanism:
    """``mechanism(rng, data, n)`` running ``fn(rng, data, eps)`` n times, one output each.

    The first output fixes the mode: a number keeps outputs as numbers (threshold events
    apply); a sequence makes every output a 63-bit blake2b hash of its float64 values
    (``hashed``: hashes have no order, so no threshold events are tried on them)."""

    def __init__(self, fn, eps: float):
        self.fn, self.eps, self.hashed = fn, eps, None
        self.__name__ = getattr(fn, "__name__", "callable")

    def _code(self, out):
        a = np.asarray(out)
        scalar = a.ndim == 0 and a.dtype.kind in "iufb"
        if self.hashed is None:
            self.hashed = not scalar
        if scalar and not self.hashed:
            return a.item()
        if not self.hashed:
            raise InputError(f"the algorithm returned {out!r} after returning numbers: "
                             "expected every run to return a number, or every run a sequence")
        try:
            b = np.ascontiguousarray(a, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise InputError(f"the algorithm returned {out!r}: expected a number or a "
                             "sequence of numbers")
        return int.from_bytes(hashlib.blake2b(b.tobytes(), digest_size=8).digest(),
                              "little") & _MASK

    def __call__(self, rng, data, n):
        return np.asarray([self._code(self.fn(rng, data, self.eps)) for _ in range(n)])


def _pairs(model: str, means, horizon: int, table_seed: int) -> list[tuple]:
    """(d, d', neighbours JSON) candidates for ``model`` (module doc)."""
    if model == "local":
        return [(0.0, 1.0, {"model": "local", "d": 0.0, "d_prime": 1.0})]
    K = len(means)
    bases = [(constant_table(1.0, horizon, K), {"kind": "constant", "value": 1.0,
                                                "name": "tied-high"}),
             (constant_table(0.5, horizon, K), {"kind": "constant", "value": 0.5,
                                                "name": "tied-mid"}),
             (bernoulli_table(means, horizon, table_seed),
              {"kind": "bernoulli", "means": list(means), "seed": table_seed,
               "name": "instance"})]
    out = []
    if model == "stream":
        for a, j in sorted({(0, 0), (K - 1, 0), (0, horizon - 1)}):
            for table, recipe in bases:
                d, dp = table.T.copy(), table.T.copy()
                d[a, j], dp[a, j] = 0.0, 1.0
                out.append((d, dp, {"model": "stream", "base": recipe, "rows": K,
                                    "arms": K, "changed_entry": [a, j], "d": d.tolist(),
                                    "d_prime": dp.tolist(), "why": f"pull {j} of arm {a}"}))
        return out
    for row in sorted({r for r in (0, K - 1, K, horizon - 1) if r < horizon}):
        for table, recipe in bases:
            d, dp = table.copy(), table.copy()
            d[row], dp[row] = 0.0, 1.0
            out.append((d, dp, {"model": model, "base": recipe, "rows": horizon, "arms": K,
                                "changed_row": row, "row_d": d[row].tolist(),
                                "row_d_prime": dp[row].tolist(), "why": f"round {row}"}))
    return out


def audit_callable(ref: str, eps: float, *, model: str = "user", delta: float = 0.0,
                   means=(0.9, 0.5), horizon: int = 8, alpha: float = 0.05,
                   runs: int | None = None, seed: int | None = None,
                   progress: bool = False):
    """Audit the callable ``ref`` (module doc) against (ε, δ)-DP under ``model``.

    ``means`` (K arms) and ``horizon`` (T rows) shape the candidate tables; ``runs``:
    measurement runs per side (default 2·10^5), pilot ``runs // 4`` per side per pair.
    Returns an :class:`~dpaudit.result.AuditResult`; InputError on bad input.
    """
    t0 = time.perf_counter()
    check_common(eps, alpha, runs, None, delta)
    if model not in MODELS:
        raise InputError(f"--model {model!r} is not valid: expected one of {', '.join(MODELS)}")
    if not (isinstance(horizon, int) and horizon >= 1):
        raise InputError(f"horizon={horizon!r} is out of range: expected an integer >= 1")
    if len(means) < 2 or not all(0 <= m <= 1 for m in means):
        raise InputError(f"means={means!r} is out of range: expected at least 2 numbers in [0, 1]")
    fn = load(ref)
    runs = int(runs or DEFAULT_RUNS)
    pilot = max(runs // 4, 2000)
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint32)[0])
    s_table, s_pilot, s_meas = np.random.SeedSequence(seed).spawn(3)
    pairs = _pairs(model, list(means), horizon, int(s_table.generate_state(1, np.uint32)[0]))
    bar = tqdm(total=2 * pilot * len(pairs), unit="run", unit_scale=True, leave=False,
               disable=None if progress else True, desc=f"audit {ref}")
    mech = CallableMechanism(fn, float(eps))
    sources = [MechanismSource(mech, d, dp, nb, bar) for d, dp, nb in pairs]
    params = {"model": model, "means": list(means), "horizon": horizon}
    return run_audit(sources, name=ref, params=params, eps=eps, delta=delta, alpha=alpha,
                     runs=runs, pilot_runs=pilot, seed=seed, seeds=(s_pilot, s_meas),
                     finalists=2, t0=t0, bar=bar)
