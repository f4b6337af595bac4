"""dpaudit.simulation.simulate: the cached batch loops the kernels' modules declare; runs on
fresh rewards."""
import numpy as np

from dpaudit.algorithms import registry
from dpaudit.calibrate import planted
from dpaudit.simulation import simulate
from dpaudit.simulation.simulate import batch_body, cached_loop


def test_every_registered_kernel_has_a_declared_cached_loop():
    # without one, every worker process compiles the generic loop again (about 5 s each)
    missing = sorted(s.name for s in registry.all_specs() if cached_loop(s.kernel) is None)
    assert missing == []
    assert cached_loop(planted.planted_kernel) is planted.planted_batch
    # and a cached run/replay loop (dpaudit.auditing.whitebox.pair_body) for the screens
    missing = sorted(s.name for s in registry.all_specs()
                     if cached_loop(s.kernel, "PAIR_LOOPS") is None)
    assert missing == []
    assert cached_loop(planted.planted_kernel, "PAIR_LOOPS") is planted.planted_pairs


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


def test_outcomes_of_the_first_chunk_do_not_depend_on_how_many_follow():
    # run order is chunk order: the first chunk's runs are the same whether 1 or 3 chunks are
    # simulated, and a pool of 2 workers gives every run the same outcome
    from dpaudit.algorithms import registry
    spec = registry.get("ttucb")
    p = spec.resolve_params({"means": "0.6,0.4", "risk": 0.1})
    prep = spec.prepare(1.0, p)
    n = simulate.OUTCOME_CHUNK
    t1, r1, s1 = simulate.outcomes(spec.fresh_request(prep, n, 9, p["max_steps"]))
    t3, r3, s3 = simulate.outcomes(spec.fresh_request(prep, 3 * n, 9, p["max_steps"]))
    assert np.array_equal(t1, t3[:n]) and np.array_equal(r1, r3[:n])
    assert not np.array_equal(t3[:n], t3[n:2 * n])      # chunks draw from different seeds
    pooled = simulate.outcomes(spec.fresh_request(prep, 3 * n, 9, p["max_steps"]), workers=2)
    assert all(np.array_equal(a, b) for a, b in zip((t3, r3, s3), pooled))


def test_counts_views_see_how_often_each_arm_was_played_not_the_order():
    views = simulate.as_views([(2, 6, simulate.COUNTS), (2, 6, simulate.SEQUENCE), (0, 6, 0)])
    assert views.tolist() == [[0, 6, 0], [2, 6, 0], [2, 6, 1]]
    assert simulate.as_views([(2, 6), (0, 6)]).tolist() == views[:2].tolist()  # sequences
    cells = {}
    for name, acts in (("a", [0, 1, 0, 1, 1, 2]), ("b", [1, 1, 1, 1, 1, 2]),
                       ("c", [0, 1, 1, 0, 1, 2]), ("d", [0, 1, 0, 0, 1, 2])):
        out = np.empty(3, np.uint64)
        simulate._hash_views(np.array(acts + [0] * 4, np.int16), 10, -1, simulate.STOPPED,
                             views, out)
        cells[name] = out
    a, b, c, d = cells["a"], cells["b"], cells["c"], cells["d"]
    assert a[2] == c[2] and a[1] != c[1]            # samples 2..5: one 0, two 1s, one 2, reordered
    assert a[2] != d[2] and a[2] != b[2]            # other counts: another cell
    w = 6 - 2 + 1                                   # samples 2..5 of a: 0 1 1 2 -> 1 + 2w + w^2
    assert int(a[2]) == 1 + 2 * w + w * w
    assert int(a[0]) != int(c[0])                   # prefixes stay sequences
