"""Per-run generator states in compiled code: ``PCG64(child_seed(ss, *key, i)).state`` in bulk.

The white-box screens run thousands of run/replay pairs of a few samples each; every run
starts from a fresh ``Generator(PCG64(child))`` (``child`` = :func:`~dpaudit.simulation.simulate.child_seed`
of the screen's seed), so the results do not depend on how the runs are grouped. Building a
``SeedSequence`` and a ``PCG64`` per run costs about 20 µs in Python, more than the run. This
module computes the same states in a compiled loop and sets a generator to one of them from
compiled code, so a compiled run/replay loop (:func:`dpaudit.auditing.whitebox.pair_body`)
draws exactly what ``Generator(PCG64(child))`` draws.

* :func:`pcg64_states`: the states, by numpy's algorithms: the ``SeedSequence`` entropy pool
  (O'Neill's ``seed_seq`` variant: hash-mix of the entropy words and the spawn key, then four
  64-bit words drawn from the pool) and PCG64's seeding (``pcg_setseq_128_srandom_r``: the
  increment from the second 128-bit word, two LCG steps around adding the first). Checked
  word for word against numpy (tests/simulation/test_seeding.py).
* :func:`set_state`: writes a state into a generator's PCG64 (its ``ctypes.state_address``:
  a pointer to the 128-bit state and increment, then the buffered 32-bit draw, cleared as in a
  fresh generator). :func:`addresses` reads where they are and checks the layout once.
"""
from __future__ import annotations

import ctypes

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

M32 = np.uint64(0xFFFFFFFF)
INIT_A, MULT_A = np.uint64(0x43B0D7E5), np.uint64(0x931E8875)       # SeedSequence's hash
INIT_B, MULT_B = np.uint64(0x8B51F9DD), np.uint64(0x58F38DED)
MIX_L, MIX_R = np.uint64(0xCA01F9DD), np.uint64(0x4973F715)
XSHIFT = np.uint64(16)
POOL = 4                                                             # words of the pool
PCG_MULT = (np.uint64(2549297995355413924), np.uint64(4865540595714422341))   # (high, low)
_checked: list[bool] = []


def _words(x: object) -> list[int]:
    """The uint32 words numpy makes of an entropy value or spawn key (little end first)."""
    if isinstance(x, (int, np.integer)):
        n = int(x)
        if n < 0:
            raise ValueError(f"entropy {n} is negative")
        out = [n & 0xFFFFFFFF]
        n >>= 32
        while n:
            out.append(n & 0xFFFFFFFF)
            n >>= 32
        return out
    return [w for v in x for w in _words(v)]


@nb.njit(cache=True)
def _hashmix(value: np.uint64, const: np.ndarray) -> np.uint64:
    value ^= const[0]
    const[0] = (const[0] * MULT_A) & M32
    value = (value * const[0]) & M32
    return value ^ (value >> XSHIFT)


@nb.njit(cache=True)
def _mix(x: np.uint64, y: np.uint64) -> np.uint64:
    r = (MIX_L * x - MIX_R * y) & M32
    return r ^ (r >> XSHIFT)


@nb.njit(cache=True)
def _mul64(a: np.uint64, b: np.uint64) -> tuple:
    """The 128-bit product of two 64-bit words, as (high, low)."""
    a_lo, a_hi, b_lo, b_hi = a & M32, a >> np.uint64(32), b & M32, b >> np.uint64(32)
    ll, lh, hl, hh = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    mid = (ll >> np.uint64(32)) + (lh & M32) + (hl & M32)
    low = (ll & M32) | ((mid & M32) << np.uint64(32))
    high = hh + (lh >> np.uint64(32)) + (hl >> np.uint64(32)) + (mid >> np.uint64(32))
    return high, low


@nb.njit(cache=True)
def _step(s_hi: np.uint64, s_lo: np.uint64, i_hi: np.uint64, i_lo: np.uint64) -> tuple:
    """One step of PCG64's LCG (mod 2^128): s·MULT + inc."""
    m_hi, m_lo = PCG_MULT
    hi, lo = _mul64(s_lo, m_lo)
    hi = hi + s_lo * m_hi + s_hi * m_lo
    lo2 = lo + i_lo
    return hi + i_hi + np.uint64(lo2 < lo), lo2


@nb.njit(cache=True)
def _states(prefix: np.ndarray, start: int, stop: int) -> np.ndarray:
    n = prefix.shape[0] + 1
    entropy = np.empty(n, np.uint64)
    entropy[:n - 1] = prefix
    out = np.empty((stop - start, 4), np.uint64)
    pool = np.empty(POOL, np.uint64)
    const = np.empty(1, np.uint64)
    words = np.empty(8, np.uint64)
    for r in range(start, stop):
        entropy[n - 1] = np.uint64(r)
        const[0] = INIT_A
        for i in range(POOL):
            pool[i] = _hashmix(entropy[i] if i < n else np.uint64(0), const)
        for i_src in range(POOL):
            for i_dst in range(POOL):
                if i_src != i_dst:
                    pool[i_dst] = _mix(pool[i_dst], _hashmix(pool[i_src], const))
        for i_src in range(POOL, n):
            for i_dst in range(POOL):
                pool[i_dst] = _mix(pool[i_dst], _hashmix(entropy[i_src], const))
        c = INIT_B
        for i in range(8):
            v = pool[i % POOL] ^ c
            c = (c * MULT_B) & M32
            v = (v * c) & M32
            words[i] = v ^ (v >> XSHIFT)
        for j in range(4):
            words[j] = words[2 * j] | (words[2 * j + 1] << np.uint64(32))
        w0, w1, w2, w3 = words[0], words[1], words[2], words[3]
        # initstate = (w0, w1), initseq = (w2, w3) as (high, low); inc = 2·initseq + 1
        i_hi = (w2 << np.uint64(1)) | (w3 >> np.uint64(63))
        i_lo = (w3 << np.uint64(1)) | np.uint64(1)
        s_hi, s_lo = _step(np.uint64(0), np.uint64(0), i_hi, i_lo)
        lo = s_lo + w1
        s_hi, s_lo = _step(s_hi + w0 + np.uint64(lo < s_lo), lo, i_hi, i_lo)
        out[r - start, 0], out[r - start, 1] = s_lo, s_hi
        out[r - start, 2], out[r - start, 3] = i_lo, i_hi
    return out


def pcg64_states(ss: np.random.SeedSequence, key: tuple, runs: int | tuple) -> np.ndarray:
    """The states of ``PCG64(child_seed(ss, *key, i))`` for i = 0 .. runs − 1.

    Args:
        ss: the parent seed (its entropy an int or a sequence of ints, pool size 4).
        key: the spawn-key levels between ``ss`` and the runs (non-negative ints).
        runs: how many (run indices below 2^32), or (i0, i1): runs i0 .. i1 − 1.

    Returns:
        uint64 (runs, 4): state low, state high, increment low, increment high (the order of
        the words in the generator's memory, :func:`set_state`).

    Raises:
        ValueError: a pool size other than 4, or ``runs`` ≥ 2^32.
    """
    i0, i1 = runs if isinstance(runs, tuple) else (0, runs)
    if ss.pool_size != POOL or i1 >= 1 << 32:
        raise ValueError(f"pool_size {ss.pool_size} (expected {POOL}) or runs {runs} "
                         "(expected < 2**32) not supported")
    run = _words(ss.entropy)
    run += [0] * (POOL - len(run))     # padded when a spawn key follows (numpy's rule)
    prefix = np.array(run + _words(tuple(ss.spawn_key) + tuple(key)), np.uint64)
    return _states(prefix, int(i0), int(i1))


@intrinsic
def _pointer(typingctx: object, address: types.Type) -> tuple:
    """A uint64 pointer from an integer address."""
    sig = types.CPointer(types.uint64)(types.int64)

    def codegen(context: object, builder: ir.IRBuilder, signature: object, args: list) -> object:
        return builder.inttoptr(args[0], ir.PointerType(ir.IntType(64)))
    return sig, codegen


@nb.njit(cache=True)
def set_state(where: np.ndarray, k: int, state: np.ndarray) -> None:
    """Set generator ``k`` of ``where`` to ``state``, as a fresh ``PCG64`` of that state.

    Args:
        where: int64 (2, 2) per generator: the address of its 128-bit state and increment,
            and of its bit generator's state (:func:`addresses`).
        k: which generator (0 or 1).
        state: uint64 (4,): a row of :func:`pcg64_states`.
    """
    words = nb.carray(_pointer(where[k, 0]), 4)
    for j in range(4):
        words[j] = state[j]
    nb.carray(_pointer(where[k, 1] + 8), 1)[0] = np.uint64(0)   # no buffered 32-bit draw


def addresses(*gens: np.random.Generator) -> np.ndarray:
    """Where :func:`set_state` writes the states of these generators (PCG64 each).

    Args:
        *gens: the generators.

    Returns:
        int64 (len(gens), 2): the address of each one's 128-bit state and increment, and of
        its bit generator's state.

    Raises:
        RuntimeError: a generator that is not a PCG64, or a memory layout other than this
            module's (checked once per process on a known state).
    """
    out = np.empty((len(gens), 2), np.int64)
    for k, g in enumerate(gens):
        if not isinstance(g.bit_generator, np.random.PCG64):
            raise RuntimeError(f"{type(g.bit_generator).__name__}: only PCG64 states are set")
        at = g.bit_generator.ctypes.state_address
        out[k] = ctypes.c_void_p.from_address(at).value, at
    if not _checked:
        _check_layout()
    return out


def _check_layout() -> None:
    """A state set here must read back through numpy as the state numpy would have set."""
    ss = np.random.SeedSequence(20261128)
    g, want = np.random.Generator(np.random.PCG64(0)), np.random.Generator(np.random.PCG64(
        np.random.SeedSequence(ss.entropy, spawn_key=(3,))))
    g.random(dtype=np.float32)                                  # a buffered half-word
    _checked.append(True)
    set_state(addresses(g), 0, pcg64_states(ss, (), 4)[3])
    if g.bit_generator.state != want.bit_generator.state or g.random(4).tolist() != \
            want.random(4).tolist():
        _checked.clear()
        raise RuntimeError("this numpy's PCG64 keeps its state in another layout: the "
                           "compiled white-box screens cannot set it")
