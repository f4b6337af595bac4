"""``dpaudit reproduce hu2021`` on a tiny configuration: the figure's panels and curves, the
regret it reads, and a verdict with a reason on every row."""
import json

import numpy as np
import pytest

from dpaudit.reproduce import hu2021 as hu
from dpaudit.reproduce.experiment import Context, RegretRuns, pseudo_regret

TINY = hu.Settings(eps=(1.0,), horizon=2000, runs=2, points=20)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hu2021")
    return hu.run(TINY, Context(str(folder), seed=5), "custom"), folder


def test_one_panel_per_setting_and_eps_with_every_curve(page):
    rep, folder = page
    (f,) = rep.figures
    assert all((folder / name).stat().st_size > 0 for name in f.files)
    data = json.loads((folder / f.files[2]).read_text())
    assert [(p["setting"], p["eps"]) for p in data["panels"]] == [("setting 1", 1.0),
                                                                   ("setting 2", 1.0)]
    t = np.asarray(data["checkpoints"])
    assert t[0] == 1 and t[-1] == TINY.horizon and np.all(np.diff(t) > 0)
    for p in data["panels"]:
        assert set(p["curves"]) == {c.label for c in hu.CURVES}
        gap = max(p["means"]) - min(p["means"])
        for c in p["curves"].values():
            m = np.asarray(c["mean"])
            assert m.shape == t.shape and np.all(np.diff(m) >= 0) and np.all(m <= gap * t)


def test_three_claims_per_panel_each_with_a_verdict(page):
    rep, _ = page
    assert len(rep.rows) == 3 * len(TINY.settings) * len(TINY.eps)
    assert all(r.verdict in ("reproduced", "differs") and (r.reproduced or r.why)
               for r in rep.rows)


def test_the_regret_of_the_first_rounds_is_the_sum_of_the_gaps():
    """Anytime-Lazy-UCB plays every arm once first (Algorithm 1's initialisation): after K
    rounds its regret is Σ Δ_j in every run, whatever the rewards."""
    means = hu.SETTINGS["setting 1"]
    job = RegretRuns("lazy-ucb", (), 1.0, means, 50, 3, (1, 2), (1, 5, 50))
    x = pseudo_regret(job)
    gaps = max(means) - np.asarray(means)
    assert x.shape == (3, 3)
    assert np.allclose(x[:, 0], gaps[0]) and np.allclose(x[:, 1], gaps.sum())
    assert np.array_equal(x, pseudo_regret(job))             # seeded


def test_a_budget_outside_the_papers_grid_is_refused():
    with pytest.raises(ValueError, match="not in the paper's grid"):
        hu.Settings(eps=(2.0,))
