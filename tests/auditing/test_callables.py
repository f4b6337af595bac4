"""The user's own bandit callables (dpaudit.auditing.callables): Transcript outputs get the
registered algorithms' views and readable events, and every callable gets the coupled replay
that makes a data-blind one `inconclusive` (vacuous) instead of an empty pass."""
import pickle
import re

import cloudpickle
import numpy as np
import pytest

from dpaudit import Transcript, audit_callable
from dpaudit.algorithms.space import Scale, theorem
from dpaudit.auditing import mechanism
from dpaudit.auditing.callables import POSITIONS, Call, declared_horizons, load, positions, replay
from dpaudit.auditing.plugin import CallableMechanism
from dpaudit.errors import InputError, UserCodeError
from dpaudit.simulation.simulate import COUNTS, SEQUENCE, STOPPED, TRUNCATED, as_views
from dpaudit.simulation.transcript import cells, checked

VIEWS = as_views([(0, 3, SEQUENCE), (0, 5, SEQUENCE), (1, 5, COUNTS)])


def _cells(t: Transcript) -> np.ndarray:
    out = np.empty(len(VIEWS), np.uint64)
    cells(checked(t, "f"), VIEWS, np.empty(5, np.int16), out)
    return out


def test_a_view_cell_depends_on_the_actions_inside_it_and_on_a_decision_within_it():
    a = _cells(Transcript([0, 1, 1, 0, 1, 1, 1]))
    b = _cells(Transcript([0, 1, 1, 1, 0, 0, 0]))     # same first 3, same counts of 1..4
    assert a[0] == b[0] and a[1] != b[1] and a[2] == b[2]
    assert _cells(Transcript([0, 1, 0]))[0] != a[0]
    stopped = _cells(Transcript([0, 1, 1, 0], stopping_time=4, recommendation=1))
    assert stopped[0] == a[0]                          # it stopped after the first 3 samples
    assert stopped[1] != _cells(Transcript([0, 1, 1, 0]))[1]     # ... and within 5: decided
    other = _cells(Transcript([0, 1, 1, 0], stopping_time=4, recommendation=0))
    assert other[1] != stopped[1]


def test_a_transcript_is_read_as_the_kernels_outputs():
    actions, tau, rec, status = checked(Transcript(np.array([2, 0, 1])), "f")
    assert actions.dtype == np.int16 and list(actions) == [2, 0, 1]
    assert (tau, rec, status) == (3, -1, TRUNCATED)
    assert checked(Transcript([1, 1], 2, 1), "f")[1:] == (2, 1, STOPPED)


@pytest.mark.parametrize("out, words", [
    ([0, 1], "after returning a Transcript"),
    (Transcript([0, -1]), "ints in [0, 32766]"),
    (Transcript([0.5, 1.0]), "ints in [0, 32766]"),
    (Transcript([[0, 1]]), "ints in [0, 32766]"),
    (Transcript([0, 1], stopping_time=True), "stopping_time=True"),
    (Transcript([0, 1], 2, recommendation=-1), "recommendation=-1"),
])
def test_a_malformed_transcript_is_an_error_in_the_users_code(out, words):
    with pytest.raises(UserCodeError, match=words.replace("[", r"\[")):
        checked(out, "f")


def _greedy(rng, table, eps):
    """Not private: plays the arm with the best raw mean after one pull each."""
    T, K = table.shape
    s, n, actions = np.zeros(K), np.zeros(K), []
    for t in range(T):
        a = t if t < K else int(np.argmax(s / n))
        actions.append(a)
        s[a] += table[t, a]
        n[a] += 1
    return Transcript(actions)


def _blind(rng, table, eps):
    return Transcript([int(a) for a in rng.integers(table.shape[1], size=table.shape[0])])


def test_the_replay_sees_a_table_read_and_a_blind_run():
    d = np.zeros((6, 2))
    dp = d.copy()
    dp[1] = 1.0          # arm 1's first reward: the greedy then plays arm 1, not arm 0
    seen = replay(Call(_greedy, 1.0, "greedy"), (d, dp), 6, 50, 3)
    assert seen["runs_read"] == seen["runs_read_any_time"] == 50
    blind = replay(Call(_blind, 1.0, "blind"), (d, dp), 6, 50, 3)
    assert blind["measured"] and blind["runs_read_any_time"] == 0 and blind["runs"] == 50


def test_the_replay_tells_a_read_within_the_horizon_from_one_after_it():
    def late(rng, table, eps):     # reads row 5 only, into its 6th action
        return Transcript([0] * 5 + [int(table[5, 0])])
    d, dp = np.zeros((6, 1)), np.zeros((6, 1))
    dp[5] = 1.0
    seen = replay(Call(late, 1.0, "late"), (d, dp), 5, 20, 1)
    assert seen["runs_read"] == 0 and seen["runs_read_any_time"] == 20


@pytest.mark.slow
def test_a_leaky_transcript_callable_is_a_violation_whose_event_reads_as_actions():
    r = audit_callable(_greedy, 1.0, means=(0.9, 0.5), horizon=6, runs=4000, seed=2)
    assert r.verdict == "violation" and r.eps_lb > 1.0
    text = r.event["text"]
    assert "actions (0-based arms) are one of" in text and "e.g. " in text
    shown = text.split("e.g. ")[1].split(";")[0].split()
    assert shown[:2] == ["0", "1"] and set(shown) <= {"0", "1"}
    assert r.loss_table and all(re.fullmatch(r"[01]( [01])*", row["cell"])
                                for row in r.loss_table)      # action sequences, not hashes
    assert r.coverage["measured"] and r.coverage["runs_read"] > 0


@pytest.mark.slow
def test_a_data_blind_transcript_callable_is_vacuous_from_the_replay():
    r = audit_callable(_blind, 1.0, means=(0.9, 0.5), horizon=6, runs=2000, seed=2)
    assert r.verdict == "inconclusive" and r.reason.startswith("vacuous: in none of 2000 replay")


@pytest.mark.slow       # spawns two worker processes
def test_a_closure_drawn_by_two_workers_gives_the_result_of_one():
    gap = 1e-3          # captured: the workers get the closure through cloudpickle

    def greedy_closure(rng, table, eps):
        T, K = table.shape
        s, n, actions = np.zeros(K), np.zeros(K), []
        for t in range(T):
            a = t if t < K else int(np.argmax(s / n + rng.laplace(0.0, gap, K)))
            actions.append(a)
            s[a] += table[t, a]
            n[a] += 1
        return Transcript(actions)

    one, two = (audit_callable(greedy_closure, 1.0, horizon=6, runs=3000, seed=4,
                               workers=w).to_dict() for w in (1, 2))
    for d in (one, two):
        d.pop("runtime_s")
    assert one == two and one["verdict"] == "violation"


WORKER_RAISES = '''
import multiprocessing
from dpaudit import Transcript


def f(rng, table, eps):
    if multiprocessing.parent_process() is not None:
        raise RuntimeError("raised in a worker")
    return Transcript([int(rng.integers(2)) for _ in range(table.shape[0])])
'''


@pytest.mark.slow       # spawns two worker processes
@pytest.mark.cli
def test_an_exception_in_a_worker_names_the_users_file_and_line(tmp_path):
    import subprocess
    import sys
    src = tmp_path / "raises.py"
    src.write_text(WORKER_RAISES)
    p = subprocess.run([sys.executable, "-m", "dpaudit", "run", "--algo", f"{src}:f", "--eps",
                        "1", "--runs", "3000", "--seed", "1", "--workers", "2"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert p.returncode == 4 and p.stdout == ""
    line = next(i for i, t in enumerate(WORKER_RAISES.splitlines(), 1) if "raise Runtime" in t)
    assert p.stderr.strip() == (f"dpaudit: error in your code: RuntimeError: raised in a worker "
                                f"(in f at {src}:{line})")


def _short_leak(rng, table, eps):
    """Explore-then-commit whose commit reads the raw sums below 8 rounds (a bug), else
    Laplace-noised sums (ε-DP)."""
    T, K = table.shape
    sums = np.zeros(K)
    for t in range(min(2, T)):
        sums[t % K] += table[t, t % K]
    noise = 0.0 if T < 8 else 1.0 / eps
    best = int(np.argmax(sums + rng.laplace(0.0, noise, K) + 1e-9 * rng.random(K)))
    return Transcript([t % K for t in range(min(2, T))] + [best] * (T - min(2, T)))


_short_leak.claim_space = {"horizon": theorem("every horizon", Scale.INT_LOG, (4, 16))}


def test_a_declared_horizon_window_is_searched_at_its_ends_and_between():
    assert declared_horizons(_short_leak, 8) == [8, 4, 6, 10, 16]
    assert declared_horizons(_greedy, 8) is None
    bad = Call(_greedy, 1.0, "g")
    for space in ({"horizon": (4, 16)}, {"horizon": theorem("x", Scale.INT_LOG, (1, 16))},
                  {"horizon": theorem("x", Scale.LOG, (4, 16))},
                  {"means": theorem("x", Scale.INT_LOG, (4, 16))}):
        bad.fn.claim_space = space
        try:
            with pytest.raises(InputError, match="claim_space = .* is not valid"):
                declared_horizons(bad.fn, 8)
        finally:
            del bad.fn.claim_space


@pytest.mark.slow       # two audits, one over 5 horizons
def test_a_leak_at_short_horizons_is_found_by_the_declared_space_not_at_the_given_one():
    fixed = audit_callable(_short_leak, 1.0, horizon=8, runs=4000, seed=1, instances="fixed")
    assert fixed.verdict != "violation" and fixed.params["horizon"] == 8
    searched = audit_callable(_short_leak, 1.0, horizon=8, runs=4000, seed=1)
    assert searched.verdict == "violation" and searched.params["horizon"] < 8
    block = searched.search["instances"]
    assert block["horizons"] == [8, 4, 6, 10, 16] and block["audited_horizon"] < 8
    assert searched.neighbours["rows"] == block["audited_horizon"]   # the tables audited


def _stops_at_row_150(rng, table, eps):
    """Plays arm t % 2 and stops after 150 samples (before the horizon, whatever the data)."""
    T = table.shape[0]
    return Transcript([t % 2 for t in range(min(150, T))], min(150, T), 0)


def test_a_long_table_changes_the_first_rows_the_rows_before_stopping_and_a_grid():
    call = Call(_stops_at_row_150, 1.0, "s")
    seed = np.random.SeedSequence(4)
    assert positions(call, "user", [0.9, 0.5], POSITIONS, 1, seed) is None   # every row
    rows = [p[0] for p in positions(call, "user", [0.9, 0.5], 400, 1, seed)]
    assert len(rows) <= POSITIONS and rows == sorted(set(rows))
    assert {0, 1, 2, 3, 148, 149} <= set(rows)        # the first 2K, the last K before τ
    assert 399 in rows and 150 not in rows             # the grid reaches the end
    longer = positions(call, "user", [0.9, 0.5], 4000, 1, seed)
    assert len(longer) <= POSITIONS                    # bounded as the horizon grows
    numbers = Call(lambda rng, table, eps: int(table[0, 0]), 1.0, "n")
    assert {0, 1, 2, 3} <= {p[0] for p in positions(numbers, "user", [0.9, 0.5], 400, 1, seed)}


class _Searched(Exception):
    """Raised in place of the search: the test reads the candidates it was given."""


def test_a_callables_audit_searches_the_selected_positions_and_says_so(monkeypatch):
    import dpaudit.auditing.plugin as plugin
    from dpaudit.reporting.text import search_lines
    seen = {}

    def searched(req, cand, *args, **kwargs):
        seen["rows"] = {s.pair.row for s in cand.sources}
        raise _Searched

    monkeypatch.setattr(plugin, "run_audit", searched)
    with pytest.raises(_Searched):
        audit_callable(_stops_at_row_150, 1.0, horizon=400, runs=200, seed=1, workers=1)
    assert 148 in seen["rows"] and 149 in seen["rows"] and len(seen["rows"]) <= POSITIONS
    s = {"strategy": "blackbox", "candidates": 417, "screen": None,
         "budget": {"rounds": [{"candidates": 417}], "pilot_runs_per_side_used": 10},
         "positions": {"per_horizon": [{"horizon": 400, "positions": 40, "of": 400,
                                        "candidates": 417}], "first_round_runs_per_side": 500}}
    line = search_lines(s)[0]
    assert "(40 of 400 positions at horizon 400" in line and "500 runs per side each" in line
    assert "positions" not in search_lines({**s, "positions": None})[0]


def _number_or_list(rng, data, eps):
    """A number for a number, a list for a list (two modes of output)."""
    return data if isinstance(data, list) else float(data) + rng.laplace(0.0, 1.0 / eps)


def test_a_callable_mechanism_travels_to_a_worker_with_its_mode():
    """Pickled, it draws the same outputs and keeps the mode its first output fixed here."""
    mech = CallableMechanism(Call(_number_or_list, 0.5, "_number_or_list"))
    here = mech(np.random.default_rng(3), 1.0, 5)
    assert mech.hashed is False
    by_ref = CallableMechanism(Call(load("examples/private_etc.py:etc"), 1.0, "etc",
                                    "examples/private_etc.py:etc"))
    for m in (mech, by_ref):
        there = pickle.loads(cloudpickle.dumps(m))
        assert there.hashed is m.hashed and there.__name__ == m.__name__
    there = pickle.loads(cloudpickle.dumps(mech))
    assert np.array_equal(there(np.random.default_rng(3), 1.0, 5), here)
    with pytest.raises(UserCodeError, match="after returning numbers"):
        there(np.random.default_rng(3), [1.0, 2.0], 1)
    table = np.eye(4)[:, :2]
    assert np.array_equal(pickle.loads(pickle.dumps(by_ref))(np.random.default_rng(1), table, 4),
                          by_ref(np.random.default_rng(1), table, 4))


@pytest.mark.slow
def test_a_callable_returning_numbers_gets_the_same_audit_on_two_workers(monkeypatch):
    monkeypatch.setattr(mechanism, "CHUNK", 2048)
    got = [audit_callable("examples/private_etc.py:etc", 1.0, runs=8000, seed=2,
                          workers=w).to_dict() for w in (1, 2)]
    for r in got:
        r.pop("runtime_s")
    assert got[0] == got[1]
