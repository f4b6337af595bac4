"""dpaudit.simulation.simulate: the cached batch loops the kernels' modules declare."""
from dpaudit.algorithms import registry
from dpaudit.calibrate import planted
from dpaudit.simulation.simulate import batch_body, cached_loop


def test_every_registered_kernel_has_a_declared_cached_loop():
    # without one, every worker process compiles the generic loop again (about 5 s each)
    missing = sorted(s.name for s in registry.all_specs() if cached_loop(s.kernel) is None)
    assert missing == []
    assert cached_loop(planted.planted_kernel) is planted.planted_batch


def test_a_kernel_whose_module_declares_no_loop_gets_none():
    assert cached_loop(batch_body) is None         # simulate declares no BATCH_LOOPS


def test_child_seed_is_the_child_spawn_would_give_without_spawning():
    import numpy as np

    from dpaudit.simulation.simulate import child_seed, seed_sequence
    root = seed_sequence(7)
    assert seed_sequence(root) is root
    first = child_seed(root, 3)
    grand = child_seed(root, 3, 5)
    spawned = np.random.SeedSequence(7).spawn(4)[3]
    assert first.generate_state(4).tolist() == spawned.generate_state(4).tolist()
    assert grand.generate_state(4).tolist() == spawned.spawn(6)[5].generate_state(4).tolist()
    assert root.n_children_spawned == 0                 # root untouched
