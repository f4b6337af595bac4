"""``dpaudit reproduce barbara2025`` (a theory-only paper) on a tiny configuration: the
figure's data, the bound rows, and the budget where Theorem 3.1 is checked."""
import json

import pytest

from dpaudit.algorithms.ldp_thresholding import algorithm as lt
from dpaudit.reproduce import barbara2025 as bl
from dpaudit.reproduce.experiment import Context

TINY = bl.Settings(budget_eps=(2.0,), budgets=(200, 500), budget_runs=200, check_runs=8,
                   confidence_eps=(2.0, 4.0), confidence_runs=12)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("barbara2025")
    return bl.run(TINY, Context(str(folder), seed=4), "custom"), folder


def test_the_figure_data_holds_both_algorithms(page):
    rep, folder = page
    (f,) = rep.figures
    d = json.loads((folder / f.files[2]).read_text())
    c = d["algorithm_1"]["curves"]["2"]
    assert len(c["loss"]) == 2 and all(lo <= x <= hi for x, lo, hi in
                                       zip(c["loss"], *c["ci95"]))
    a2 = d["algorithm_2"]
    assert a2["eps"] == [2.0, 4.0] and len(a2["mean"]) == len(a2["thm41_implicit"]) == 2
    # the bounds are the paper's: upper above lower, both falling as eps grows
    assert all(up > low for up, low in zip(a2["thm41_implicit"], a2["thm42"]))
    assert a2["thm41_implicit"][0] > a2["thm41_implicit"][1]


def test_one_row_per_bound_each_with_a_verdict(page):
    rep, _ = page
    assert len(rep.rows) == 1 + 3 * 2
    assert all(r.verdict in ("reproduced", "differs") and (r.reproduced or r.why)
               for r in rep.rows)


def test_theorem_3_1_is_checked_where_it_first_reaches_its_level():
    T = bl.check_budget(2.0)
    A = lt.INSTANCE_A
    at = lt.thm31_bound([T - 1, T], A["means"], A["threshold"], A["tolerance"], 2.0)
    assert at[0] > bl.CHECK_BOUND >= at[1] and T > bl.crossing(2.0)
