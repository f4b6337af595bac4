"""``dpaudit reproduce azize2023`` on a tiny configuration: the page, its figures and data have
the paper's shape, and every number is the one its runs give."""
import json
import math
import os

import numpy as np
import pytest

from dpaudit.algorithms.adap_tt import theory
from dpaudit.reproduce import azize2023 as az
from dpaudit.reproduce import reproduce
from dpaudit.reproduce.experiment import Context

TINY = az.Settings(eps=(0.01, 0.2), runs=3, cap=1 << 12)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("azize2023")
    rep = az.run(TINY, Context(str(folder), seed=3), "custom")
    return rep, folder


def test_the_figures_hold_every_curve_at_every_eps_with_their_data(page):
    rep, folder = page
    assert [f.name for f in rep.figures] == ["figure1", "ratio_to_lower_bound"]
    for f in rep.figures:
        for name in f.files:
            assert os.path.getsize(folder / name) > 0, name
    data = json.loads((folder / "figure1.json").read_text())
    assert data["eps"] == list(TINY.eps) and set(data["instances"]) == {"mu1", "mu2"}
    for name, d in data["instances"].items():
        assert set(d["curves"]) == {c.label for c in az.CURVES}
        for c in d["curves"].values():
            assert len(c["mean"]) == len(c["std"]) == len(TINY.eps)
            # a cap of 4096 samples is far below any stopping time on mu1, mu2: all censored
            assert c["mean"] == [TINY.cap] * 2 and c["unstopped"] == [TINY.runs] * 2
        assert d["lower_bound"] == pytest.approx(
            [theory.t_star_eps(az.INSTANCES[name], e)[0] * math.log(1 / (3 * 0.01))
             for e in TINY.eps], rel=1e-9)


def test_every_row_has_a_verdict_and_every_differing_row_a_reason(page):
    rep, _ = page
    # per instance: 4 claims x 2 AdaP-TT curves, a bound row and a risk row per curve
    assert len(rep.rows) == 2 * (8 + 2 * len(az.CURVES))
    for r in rep.rows:
        assert r.verdict in ("reproduced", "differs")
        assert r.reproduced or r.why
    # every run was cut at the cap: no ratio row can be decided
    claims = [r for r in rep.rows if "claim (" in r.quantity]
    assert claims and all(not r.reproduced and r.why.startswith("Not decided") for r in claims)


def test_a_differing_row_without_a_reason_is_refused():
    from dpaudit.reproduce.experiment import Row
    with pytest.raises(ValueError, match="without a reason"):
        Row("q", "p", "1", False, "rule")


def test_the_page_and_index_link_the_figures_and_rows(tmp_path, monkeypatch):
    monkeypatch.setitem(az.MODES, "quick", TINY)
    rep = reproduce("azize2023", "quick", Context(str(tmp_path), seed=3))
    page = (tmp_path / "azize2023" / "index.html").read_text()
    for f in rep.figures:
        assert f'src="{f.files[0]}"' in page and f'href="{f.files[1]}"' in page
    assert page.count("<tr class=") == len(rep.rows)
    assert "Quick run" in page and "dpaudit reproduce azize2023 --quick --seed 3" in page
    index = (tmp_path / "index.html").read_text()
    assert 'href="azize2023/index.html"' in index and "reduced (--quick)" in index
    doc = json.loads((tmp_path / "azize2023" / "result.json").read_text())
    assert [r["verdict"] for r in doc["rows"]] == [r.verdict for r in rep.rows]


def test_a_point_outside_the_papers_grid_is_refused():
    with pytest.raises(ValueError, match="not in the paper's grid"):
        az.Settings(eps=(0.2, 0.25))
    with pytest.raises(ValueError, match="a value below it"):
        az.Settings(eps=(0.2, 1.0))


def test_the_lower_bound_row_judges_the_runs_it_reports():
    """A bound row is reproduced exactly when the upper end of each mean's interval reaches
    the bound: fed means below T*(nu; eps) ln(1/(3 delta)) it must say differs."""
    s = az.Settings(eps=(0.01, 0.2), runs=4, cap=10)
    res = {(c, n, e): {"tau": np.full(4, 5.0), "stopped": np.ones(4, bool),
                       "wrong": np.zeros(4, bool)}
           for c in az.CURVES for n in s.instances for e in (0.01, 0.2, 1.0)}
    row = az._bound_row(res, s, az.ADAP_TT, "mu1", 0.95)
    assert not row.reproduced and row.why
    for v in res.values():
        v["tau"][:] = 1e9
    assert az._bound_row(res, s, az.ADAP_TT, "mu1", 0.95).reproduced
