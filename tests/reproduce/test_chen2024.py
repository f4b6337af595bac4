"""``dpaudit reproduce chen2024`` on a tiny configuration: both figures' data, every claim a
row with a verdict, and the success counts the rows judge."""
import json

import numpy as np
import pytest

from dpaudit.reproduce import chen2024 as ch
from dpaudit.reproduce.experiment import Context

TINY = ch.Settings(budgets=(500,), eps=(0.1, 1.0, 10.0), trials=40, ratios=(1.0, 200.0),
                   e1_budget=500)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chen2024")
    return ch.run(TINY, Context(str(folder), seed=2), "custom"), folder


def test_both_figures_with_their_data(page):
    rep, folder = page
    assert [f.name for f in rep.figures] == ["figure1", "figure2"]
    d1 = json.loads((folder / "figure1.json").read_text())
    cells = {(x["method"], x["eps"], x["T"]) for x in d1["success"]}
    assert len(cells) == 3 * 3 + 1 and ("od-linbai", None, 500) in cells
    assert all(0 <= x["rate"] <= 1 and (x["rate"] * 40).is_integer() for x in d1["success"])
    d2 = json.loads((folder / "figure2.json").read_text())
    assert d2["ratios"] == [1.0, 200.0] and set(d2["success"]) == {"DP-BAI", "DP-OD"}


def test_every_claim_is_a_row_with_a_verdict(page):
    rep, _ = page
    # 2 competitors x 3 eps, one eps -> inf row per budget, BASELINE, Figure 2's two
    assert len(rep.rows) == 6 + 1 + 1 + 2
    assert all(r.verdict in ("reproduced", "differs") and (r.reproduced or r.why)
               for r in rep.rows)


def test_successes_share_tables_across_methods_and_are_seeded():
    """The non-private OD-LinBAI adds no noise: two cells of it at different eps read the same
    tables (common random numbers), so they succeed in exactly the same trials."""
    cells = [("od-linbai", 0.1, 500), ("od-linbai", 10.0, 500), ("dp-bai", 1.0, 500)]
    a = ch.successes(cells, 64, 7)
    assert a[0] == a[1] and a == ch.successes(cells, 64, 7)
    assert 0 <= a[2] <= 64


def test_the_bands_are_clopper_pearson_intervals():
    lo, hi = ch.band([0.0, 0.5, 1.0], 40)
    assert lo[0] == 0 and hi[2] == 1 and np.all(lo <= [0, 0.5, 1]) and np.all(hi >= [0, .5, 1])
    assert 0.33 < lo[1] < 0.35 and 0.65 < hi[1] < 0.67        # 20 of 40: [0.338, 0.662]
