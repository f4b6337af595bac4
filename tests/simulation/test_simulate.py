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
