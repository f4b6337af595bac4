"""dpaudit.simulation.seeding: per-run PCG64 states in compiled code, word for word numpy's."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.simulation import seeding
from dpaudit.simulation.simulate import child_seed

WORD = (1 << 64) - 1


def _numpy_state(ss, key, i):
    s = np.random.PCG64(child_seed(ss, *key, i)).state["state"]
    return [s["state"] & WORD, s["state"] >> 64, s["inc"] & WORD, s["inc"] >> 64]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(entropy=st.one_of(st.integers(0, 2 ** 140), st.lists(st.integers(0, 2 ** 70), min_size=1,
                                                             max_size=6)),
       parent=st.lists(st.integers(0, 2 ** 40), max_size=3),
       key=st.lists(st.integers(0, 2 ** 36), max_size=3))
def test_the_states_are_numpys_for_any_entropy_and_spawn_key(entropy, parent, key):
    ss = np.random.SeedSequence(entropy, spawn_key=tuple(parent))
    got = seeding.pcg64_states(ss, tuple(key), 5)
    assert [got[i].tolist() for i in range(5)] == [_numpy_state(ss, tuple(key), i)
                                                   for i in range(5)]


def test_a_generator_set_to_a_state_draws_what_a_fresh_one_draws():
    ss = np.random.SeedSequence(7, spawn_key=(2,))
    states = seeding.pcg64_states(ss, (1,), 300)
    g = np.random.Generator(np.random.PCG64(0))
    g.random(dtype=np.float32)                 # a buffered 32-bit half: cleared by set_state
    where = seeding.addresses(g)
    for i in (0, 1, 299):
        seeding.set_state(where, 0, states[i])
        fresh = np.random.Generator(np.random.PCG64(child_seed(ss, 1, i)))
        assert g.bit_generator.state == fresh.bit_generator.state
        assert g.random(3, dtype=np.float32).tolist() == fresh.random(3, dtype=np.float32).tolist()
        assert g.integers(0, 10 ** 9, 5).tolist() == fresh.integers(0, 10 ** 9, 5).tolist()


def test_other_pools_and_bit_generators_are_refused():
    with pytest.raises(ValueError, match="pool_size 8"):
        seeding.pcg64_states(np.random.SeedSequence(1, pool_size=8), (), 3)
    with pytest.raises(RuntimeError, match="MT19937"):
        seeding.addresses(np.random.Generator(np.random.MT19937(1)))
