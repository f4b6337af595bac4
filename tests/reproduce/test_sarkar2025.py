"""``dpaudit reproduce sarkar2025`` on a tiny configuration: the three figures' data, a row
for every experiment, and the regret of uniform play where the paper's constants force it."""
import json

import numpy as np
import pytest

from dpaudit.reproduce import sarkar2025 as nc
from dpaudit.reproduce.experiment import Context

TINY = nc.Settings(horizon=2000, runs=3, eps_grid=(0.2, 2.0), points=8, a_horizons=(3, 10),
                   a_runs=3, a_reps=2, f_horizon=1000)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sarkar2025")
    return nc.run(TINY, Context(str(folder), seed=6), "custom"), folder


def test_three_figures_with_their_data(page):
    rep, folder = page
    assert [f.name for f in rep.figures] == ["figure_b", "figure_cd", "figure_a", "figure_f"]
    b = json.loads((folder / "figure_b.json").read_text())
    assert set(b["curves"]) == {c.label for c in nc.CONFIGS}
    assert b["points"][0] == 100 and b["points"][-1] == TINY.horizon
    cd = json.loads((folder / "figure_cd.json").read_text())
    assert len(cd["curves"]) == len(nc.SWEPT) * len(TINY.eps_grid)
    a = json.loads((folder / "figure_a.json").read_text())
    assert [r["T"] for r in a["curves"][nc.ADAP.label]] == list(TINY.a_horizons)


def test_gdp_ncb_as_written_plays_uniformly_at_small_horizons(page):
    """With C_I = 1600 Phase I never ends at T = 2000 (uniform play): the average regret is
    mu* - mean mu up to sampling (3 runs x 2000 rounds: sd < 0.005; the bound 0.03 is > 6
    sd, false failure < 1e-9)."""
    rep, folder = page
    b = json.loads((folder / "figure_b.json").read_text())
    uniform = max(nc.MU_B) - float(np.mean(nc.MU_B))
    assert b["curves"][nc.GDP.label]["avg"][-1] == pytest.approx(uniform, abs=0.03)


def test_every_experiment_has_rows_with_a_verdict(page):
    rep, _ = page
    assert len(rep.rows) == 2 + 3 + 2 * len(nc.SWEPT) + 2 + 2
    assert all(r.verdict in ("reproduced", "differs") and (r.reproduced or r.why)
               for r in rep.rows)
    assert [r.quantity[:3] for r in rep.rows[-2:]] == ["(f)", "(f)"]


@pytest.mark.statistical
def test_the_mixed_laws_have_the_means_of_their_buckets():
    """Column means of a 20 000-row table against the laws' means (0.8 for Beta(4, 1), 0.7
    for {0.4, 1}, 0.5 for U(0, 1), mu for Bernoulli): sd <= 0.5/sqrt(20000) = 0.0036, the
    bound 0.03 is > 8 sd for each of 50 columns (false failure < 1e-14)."""
    t = nc.mixed_table(np.random.default_rng(3), 20000)
    assert t.shape == (20000, 50) and t.min() >= 0 and t.max() <= 1
    np.testing.assert_allclose(t.mean(axis=0), nc.law_means(), atol=0.03)
    two_point = np.asarray(nc.MU_B) < 0.5
    two_point &= np.asarray(nc.MU_B) >= 0.25
    assert set(np.unique(t[:, two_point])) == {0.4, 1.0}


def test_a_setting_without_its_eps_in_the_grid_is_refused():
    with pytest.raises(ValueError, match="eps must be in eps_grid"):
        nc.Settings(eps=0.3)


@pytest.mark.parametrize("nash, se, ok", [(0.10, 0.001, True),    # 0.08 within 0.02 + t*se
                                          (0.12, 0.001, False),   # 0.04 away, se tiny
                                          (0.12, 0.02, True)])    # the runs' spread covers it
def test_a_value_read_off_a_figure_is_met_within_the_runs_interval_and_the_reading(nash, se,
                                                                                    ok):
    row = nc.figure_a_row({"nash": nash, "nash_se": se}, nc.GDP_1, 0.08, TINY, 0.95)
    assert row.reproduced is ok and (ok or row.why)
