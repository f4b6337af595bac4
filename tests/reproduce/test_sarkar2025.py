"""``dpaudit reproduce sarkar2025`` on a tiny configuration: the three figures' data, a row
for every experiment, and the regret of uniform play where the paper's constants force it."""
import json

import numpy as np
import pytest

from dpaudit.reproduce import sarkar2025 as nc
from dpaudit.reproduce.experiment import Context

TINY = nc.Settings(horizon=2000, runs=3, eps_grid=(0.2, 2.0), points=8, a_horizons=(3, 10),
                   a_runs=3, a_reps=2)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sarkar2025")
    return nc.run(TINY, Context(str(folder), seed=6), "custom"), folder


def test_three_figures_with_their_data(page):
    rep, folder = page
    assert [f.name for f in rep.figures] == ["figure_b", "figure_cd", "figure_a"]
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


def test_every_experiment_has_rows_and_f_says_it_was_not_run(page):
    rep, _ = page
    assert len(rep.rows) == 2 + 3 + 2 * len(nc.SWEPT) + 2 + 1
    assert all(r.verdict in ("reproduced", "differs") and (r.reproduced or r.why)
               for r in rep.rows)
    f = rep.rows[-1]
    assert f.quantity.startswith("(f)") and not f.reproduced and f.why.startswith("Not run")


def test_a_setting_without_its_eps_in_the_grid_is_refused():
    with pytest.raises(ValueError, match="eps must be in eps_grid"):
        nc.Settings(eps=0.3)
