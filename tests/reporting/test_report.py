"""Reviewer reports (dpaudit.reporting.report): content, escaping, Markdown, atomic
writes, the
gate's index, the CLI entry point, and a headless-Chromium rendering check.

Fixtures in tests/data were written by the real tool (commands in tests/data/README.md); one
test also runs a small live audit through the Python API.
"""
import argparse
import json
import os
import re
import shutil

import pytest

from dpaudit.errors import InputError
from dpaudit.reporting import report

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
TT = os.path.join(DATA, "report_adap_tt.json")
VIOL = os.path.join(DATA, "report_privbern_wrong_exp.json")
INCONCLUSIVE = os.path.join(DATA, "report_adap_tt_inconclusive.json")   # --runs 200
BYO = os.path.join(DATA, "report_etc_half_noise.json")
CORR = os.path.join(DATA, "report_correctness_dp_se.json")
CONST = os.path.join(DATA, "report_constants_004.json")
EVIL = "<script>alert(1)</script>"


def _json(path):
    with open(path) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def tt_html():
    return report.render_html(report.load([TT]))


def _data_uris(page):
    return re.findall(r'<img[^>]+src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)


def test_load_classifies_each_kind():
    docs = report.load([TT, BYO, CORR, CONST])
    assert [d["_kind"] for d in docs] == ["audit", "audit", "correctness", "constants"]
    assert docs[0]["_source"] == "report_adap_tt.json"


@pytest.mark.parametrize("content, words", [
    (None, "cannot read"), ("{not json", "not valid JSON"), ('{"a": 1}', "not a dpaudit result"),
    ("[1, 2]", "not a dpaudit result")])
def test_load_bad_input_names_the_file(tmp_path, content, words):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(InputError) as e:
        report.load([str(TT), str(path)])
    msg = str(e.value)
    assert "bad.json" in msg and words in msg and "\n" not in msg


def test_html_audit_content(tt_html):
    doc = _json(TT)
    assert "<title>dpaudit audit report: adap-tt</title>" in tt_html
    assert 'class="verdict v-pass"' in tt_html and ">PASS<" in tt_html
    for value in (doc["eps_lb"], doc["eps_hat"], doc["detectable_eps"]):
        assert f"{value:.4f}" in tt_html
    assert "0.05" in tt_html and "95 %" in tt_html                      # α and confidence
    nb = doc["neighbours"]
    assert f"row {nb['changed_row']}" in tt_html and "(1, 0, 0, 1, 1, 1)" in tt_html
    assert doc["event"]["text"].replace("'", "&#39;") in tt_html
    m = doc["counts"]["measurement"]
    for k in ("runs_d", "hits_d", "hits_d_prime"):
        assert f">{m[k]}<" in tt_html
    assert f"{m['tests']} tests at α {m['alpha_per_test']:.3g} each" in tt_html   # older JSON
    assert doc["loss_table"][0]["cell"] in tt_html
    assert "no run diverged" in tt_html                                 # replay
    assert doc["command"] in tt_html and "Neighbour search" in tt_html
    for k, v in doc["versions"].items():
        assert f"<th>{k}</th><td>{v}</td>" in tt_html
    # four figures (loss per cell, looks, position profile, white-box), each a real PNG
    uris = _data_uris(tt_html)
    assert len(uris) == 4
    import base64
    assert all(base64.b64decode(u)[:8] == b"\x89PNG\r\n\x1a\n" for u in uris)
    assert len(tt_html) < 1_000_000
    # self-contained: no scripts, no external resources
    assert "<script" not in tt_html and "http://" not in tt_html and "https://" not in tt_html


def test_violation_and_missing_sections():
    page = report.render_html(report.load([BYO]))
    doc = _json(BYO)
    assert 'class="verdict v-violation"' in page and ">VIOLATION<" in page
    assert f"{doc['eps_lb']:.4f}" in page
    assert "Not available for this algorithm" in page                   # no white-box
    assert "examples/private_etc.py:etc_half_noise" in page
    assert len(_data_uris(page)) >= 2          # loss per cell, looks (+ profile)
    page = report.render_html(report.load([VIOL]))
    assert "releases against ε: <b>violation</b>" in page      # a result from before the rename


def test_minimal_audit_without_optional_sections():
    """A result with only the keys every result has (no search, white-box, command, loss figure data)."""
    doc = _json(BYO)
    for key in ("search", "whitebox", "command", "detectable_eps", "confidence"):
        doc.pop(key, None)
    doc["counts"] = {}
    doc["loss_table"] = []
    page = report.render_html([doc])
    assert "No loss table in this result" in page and "No command recorded" in page
    assert "Neighbour search" not in page
    md = report.render_markdown([doc])
    assert "No command recorded" in md


def test_live_mechanism_audit():
    """A small audit through the Python API (generic mechanism: no search profile, no
    white-box) renders with its own numbers."""
    import dpaudit

    def laplace(rng, data, n):
        return data[0] + rng.laplace(0.0, 1.0, n)

    d = dpaudit.audit_mechanism(laplace, [0.0], [1.0], eps=1.0, seed=1, n=20000).to_dict()
    page, md = report.render_html([d]), report.render_markdown([d])
    assert f"{d['eps_lb']:.4f}" in page and f"{d['eps_lb']:.4f}" in md
    assert "mechanism" in page and len(_data_uris(page)) >= 1
    # the upper bound a pass rests on, the detectable loss as a planning figure, and what
    # could not be observed of a black box
    assert d["verdict"] == "pass" and f"ε<sub>ub</sub> = <b>{d['eps_ub']:.4f}</b>" in page
    assert f"ε_ub = **{d['eps_ub']:.4f}** at confidence 95 %" in md
    for text in (page, md):
        assert f"every measured event is below ε_ub = {d['eps_ub']:.4f} with confidence 95 %" \
            in text
        assert f"planning figure: detectable loss {d['detectable_loss']:.4f} at power 95 %" in text
        assert "Coverage: not measured (black-box" in text
    # the text summary renders the same view: the same verdict, bounds and coverage
    text = report.summary(d)
    assert text.startswith("dpaudit: laplace  claim eps=1 (pure DP)  verdict: PASS\n")
    assert f"eps_lb = {d['eps_lb']:.4f} at confidence 95%" in text
    assert (f"upper bound on the measured events' loss: eps_ub = {d['eps_ub']:.4f} at "
            "confidence") in text
    assert "  coverage: not measured (black-box" in text and text.endswith(" s")


def test_an_inconclusive_result_shows_its_reason():
    doc = _json(TT)
    doc["verdict"] = "inconclusive"
    doc["reason"] = "underpowered: the detectable loss 0.9 exceeds (1 + margin)·eps = 0.625"
    page, md = report.render_html([doc]), report.render_markdown([doc])
    assert 'class="verdict v-inconclusive"' in page and "**INCONCLUSIVE**" in md
    for text in (page, md):
        assert "Reason: underpowered: the detectable loss 0.9 exceeds" in text


def test_a_result_the_cap_cut_short_says_so_in_both_reports():
    doc = _json(TT)
    assert not doc.get("cut_short")
    page, md = report.render_html([doc]), report.render_markdown([doc])
    assert "(cut short)" not in page + md and "cut short:" not in page.lower() + md.lower()
    doc["cut_short"] = "the samples cap (--max-samples 1000000) stopped the pilot rounds"
    doc["command"] = "dpaudit run --algo adap-tt --eps 0.5 --seed 1 --max-samples 1000000"
    page, md = report.render_html([doc]), report.render_markdown([doc])
    assert '<span class="word">PASS (cut short)</span>' in page and "**PASS (cut short)**" in md
    for text in (page, md):
        assert "ut short: the samples cap (--max-samples 1000000) stopped the pilot rounds" in text
        assert "reproduce it with dpaudit run --algo adap-tt --eps 0.5 --seed 1 --max-samples" in text


def test_coverage_of_a_white_box_result_is_shown():
    doc = _json(TT)
    doc["coverage"] = {"measured": True, "horizon": 32, "runs": 200, "runs_read": 150,
                       "fraction_read": 0.75, "releases_read": [
                           {"phase": 1, "releases": 150, "runs": 150}],
                       "stopping_time": {"d": {"min": 40, "median": 50.0, "max": 90},
                                         "d_prime": {"min": 41, "median": 51.0, "max": 95}}}
    want = ("75% of 200 white-box runs read the changed entry within the audited 32 samples "
            "(releases that read it: phase 1: 150 in 150 runs); stopping time on d 40-90, on d' 41-95")
    assert want in report.render_markdown([doc])
    assert want.replace("'", "&#39;") in report.render_html([doc])


def test_the_profile_figure_draws_either_curve_and_is_absent_without_both():
    doc = _json(TT)
    doc["whitebox"] = {"accountant": None, "release_log": {
        "profile": {"eps": [0.0, 0.5, 1.0], "delta_lower": [0.3, 0.1, 0.0]}}}
    assert report.accountant_figure(doc).startswith("data:image/png;base64,")
    doc["whitebox"]["release_log"]["profile"] = None      # (no bound: a replay diverged)
    assert report.accountant_figure(doc) is None


def test_an_exact_result_is_shown_beside_eps_lb_and_absent_without_one():
    doc = _json(TT)
    assert "Exact (white-box" not in report.render_markdown([doc])
    doc["exact"] = {"eps": 0.5, "delta": 0.0, "eps_exact": 0.5, "max_log_ratio": 0.5,
                    "delta_at_eps": 0.0, "transcripts": 10, "limit": 6,
                    "method": "exact sum over release sequences (randomised-response releases)"}
    want = f"eps_lb / eps_exact = {float(doc['eps_lb']) / 0.5:.3f}"
    for text in (report.render_markdown([doc]), report.render_html([doc])):
        assert "Exact (white-box" in text and want in text and "10 transcripts" in text


def test_correctness_and_constants_tables():
    docs = report.load([TT, CORR, CONST])
    page, md = report.render_html(docs), report.render_markdown(docs)
    corr, const = _json(CORR), _json(CONST)
    for text in (page, md):
        assert "δ-correctness: dp-se" in text and "CERTIFIED" in text
        assert "Constants of paper 004" in text
        assert f"{len(const['checks'])} of {len(const['checks'])} checks pass" in text
        assert str(corr["runs"]) in text and "897.786" in text        # runs, Thm 2 bound
        assert "T_TV closed form (Prop. 1) == LP" in text
    alone = report.render_html(report.load([CONST]))
    assert "<title>dpaudit report: paper 004</title>" in alone


def _doctored():
    doc = _json(TT)
    doc["algorithm"] = EVIL
    doc["params"][EVIL] = EVIL
    doc["params"]["means"] = EVIL
    doc["event"]["text"] = EVIL + " & ' \""
    doc["neighbours"]["why"] = EVIL
    doc["loss_table"][0]["cell"] = EVIL
    doc["command"] = f"dpaudit run --algo '{EVIL}'"
    doc["versions"]["numpy"] = EVIL
    doc["search"]["multiplicity"] = EVIL
    doc["_source"] = EVIL + ".json"
    return doc


def test_every_user_string_is_escaped():
    page = report.render_html([_doctored()])
    assert "<script" not in page.lower()
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 10
    md = report.render_markdown([_doctored()])
    outside_code = re.sub(r"```.*?```", "", md, flags=re.S)
    assert "<script" not in outside_code.lower()
    assert "&lt;script>alert(1)&lt;/script>" in md
    # index: names, algorithms and link targets escaped too
    entry = {"name": EVIL, "algorithm": EVIL, "eps": 1.0, "expected": "pass", "verdict": "pass",
             "ok": True, "eps_lb": 0.9, "baseline": None, "report": '"><script>x.html',
             "runtime_s": 1.0}
    ctx = report._index_rows([entry])
    assert ctx[0]["href"] == "%22%3E%3Cscript%3Ex.html"


def test_markdown_has_the_key_numbers():
    doc = _json(TT)
    md = report.render_markdown(report.load([TT]))
    assert md.startswith("# dpaudit audit report: adap-tt")
    assert "**PASS**" in md
    for value in (doc["eps_lb"], doc["eps_hat"], doc["detectable_eps"]):
        assert f"{value:.4f}" in md
    assert str(doc["counts"]["measurement"]["hits_d"]) in md
    assert doc["command"] in md and doc["loss_table"][0]["cell"] in md


def test_write_report_atomic(tmp_path, monkeypatch):
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    assert report.write_report(report.load([VIOL]), str(html), str(md)) == str(html)
    assert html.read_text().startswith("<!DOCTYPE html>") and md.read_text().startswith("# ")
    # an error while writing leaves the old file untouched and no temporary file behind
    old = html.read_text()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        report.write_report(report.load([TT]), str(html))
    assert html.read_text() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "r.md"]
    monkeypatch.undo()
    # a rendering error writes nothing at all
    with pytest.raises(InputError):
        report.write_report([{"nothing": 1}], str(tmp_path / "x.html"), str(tmp_path / "x.md"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "r.md"]


def test_write_index(tmp_path):
    entries = [
        {"name": "adap-tt-pass", "algorithm": "adap-tt", "eps": 0.5, "expected": "pass",
         "verdict": "pass", "ok": True, "eps_lb": 0.4798, "baseline": 0.4790,
         "report": "adap-tt-pass.html", "runtime_s": 30.1},
        {"name": "mutant", "algorithm": "adap-tt-no-forgetting", "eps": 0.5,
         "expected": "violation", "verdict": "pass", "ok": False, "eps_lb": 0.41,
         "baseline": None, "report": "mutant.html", "runtime_s": 12.0}]
    path = report.write_index(entries, str(tmp_path))
    assert path == str(tmp_path / "index.html")
    page = (tmp_path / "index.html").read_text()
    assert '<a href="adap-tt-pass.html">adap-tt-pass</a>' in page
    assert page.count('class="ok"') == 1 and page.count('class="bad"') == 1
    assert "1 of 2 as expected" in page and "0.4798" in page
    md = (tmp_path / "index.md").read_text()
    assert "[mutant](mutant.md)" in md and "**NO**" in md
    assert "reproduce/index.html" not in page + md          # no reproductions: no link
    (tmp_path / "reproduce").mkdir()
    (tmp_path / "reproduce" / "index.html").write_text("<html></html>")
    report.write_index(entries, str(tmp_path))
    assert '<a href="reproduce/index.html">paper reproductions</a>' in \
        (tmp_path / "index.html").read_text()
    assert "[paper reproductions](reproduce/index.html)" in (tmp_path / "index.md").read_text()


def _cli(argv):
    p = argparse.ArgumentParser(prog="dpaudit")
    report.add_parser(p.add_subparsers(dest="command"))
    return report.main(p.parse_args(argv))


@pytest.mark.cli
def test_cli_main(tmp_path, capsys):
    out, md = tmp_path / "out.html", tmp_path / "out.md"
    assert _cli(["report", TT, CORR, "-o", str(out), "--markdown", str(md)]) == 0
    assert out.exists() and md.exists() and "out.html" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(InputError, match="bad.json"):
        _cli(["report", TT, str(bad), "-o", str(tmp_path / "new.html")])
    with pytest.raises(InputError, match="does not exist"):
        _cli(["report", TT, "-o", str(tmp_path / "missing" / "new.html")])
    assert not (tmp_path / "new.html").exists()


# ---------------------------------------------------------------- headless Chromium

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _chromium():
    """The Chromium executable and playwright's sync API; under CI both must be present,
    unless `.ci/run` reports (DPAUDIT_NO_CHROMIUM) that its apt install failed three times."""
    if os.environ.get("DPAUDIT_NO_CHROMIUM"):
        pytest.skip("SKIPPED LOUDLY: .ci/run could not install chromium "
                    f"({os.environ['DPAUDIT_NO_CHROMIUM']}); the report was not rendered")
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if exe is None or sync_playwright is None:
        if os.environ.get("CI"):
            pytest.fail("CI: the report rendering test needs Debian's chromium and the "
                        "playwright package")
        pytest.skip("chromium or playwright missing (required under CI)")
    return exe, sync_playwright


@pytest.mark.browser
def test_report_renders_in_headless_chromium(tmp_path):
    """Title and verdict visible on the first screen, four figures loaded. With
    DPAUDIT_SCREENSHOT=reports/screenshot.png it also writes the README's screenshot."""
    exe, sync_playwright = _chromium()
    html = tmp_path / "adap-tt.html"
    report.write_report(report.load([TT]), str(html))
    shot = tmp_path / "screenshot.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(html.as_uri())
            assert page.title() == "dpaudit audit report: adap-tt"
            for sel, text in (("#title", "dpaudit audit report: adap-tt"), ("#verdict", "PASS")):
                el = page.locator(sel)
                assert el.is_visible() and text in el.inner_text()
                box = el.bounding_box()
                assert box["y"] >= 0 and box["y"] + box["height"] <= 900      # first screen
            imgs = page.locator("img.figure")
            assert imgs.count() == 4
            first = imgs.first
            first.scroll_into_view_if_needed()
            assert first.is_visible()
            assert first.evaluate("img => img.complete && img.naturalWidth") > 100
            page.screenshot(path=str(shot))
            if os.environ.get("DPAUDIT_SCREENSHOT"):      # the README's picture
                bottom = first.evaluate(
                    "img => img.getBoundingClientRect().bottom + window.scrollY")
                page.screenshot(path=os.environ["DPAUDIT_SCREENSHOT"], full_page=True,
                                clip={"x": 0, "y": 0, "width": 1200, "height": bottom + 12})
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000


@pytest.mark.browser
def test_the_three_verdicts_render_in_distinct_colours_and_words(tmp_path):
    """pass, violation and inconclusive: each verdict word on the first screen, each box in
    its own colour, and an inconclusive result's reason visible in the page."""
    exe, sync_playwright = _chromium()
    colours = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            for word, src in (("PASS", TT), ("VIOLATION", VIOL),
                              ("INCONCLUSIVE", INCONCLUSIVE)):
                html = tmp_path / f"{word}.html"
                report.write_report(report.load([src]), str(html))
                page.goto(html.as_uri())
                box = page.locator("#verdict")
                assert box.is_visible() and box.locator(".word").inner_text() == word
                where = box.bounding_box()
                assert where["y"] + where["height"] <= 900                  # first screen
                colours[word] = (box.evaluate("e => getComputedStyle(e).backgroundColor"),
                                 box.locator(".word").evaluate(
                                     "e => getComputedStyle(e).color"))
                if word == "INCONCLUSIVE":
                    reason = json.load(open(src))["reason"]
                    assert reason.startswith("underpowered:")
                    assert page.get_by_text(reason, exact=False).first.is_visible()
        finally:
            browser.close()
    backgrounds = {c[0] for c in colours.values()}
    words = {c[1] for c in colours.values()}
    assert len(backgrounds) == 3 and len(words) == 3, colours


def _edited(path, tmp_path, name, edit):
    doc = _json(path)
    edit(doc)
    out = tmp_path / name
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.cli
@pytest.mark.parametrize("edit, needle", [
    (lambda d: d.clear() or d.update({"_kind": "audit"}), "(KeyError: 'claim')"),
    (lambda d: d.update(claim="x"), "(AttributeError: "),
    (lambda d: d.update(loss_table=5), "(TypeError: "),
])
def test_a_malformed_result_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, edit,
                                                                   needle):
    from dpaudit.commands.cli import main
    bad = _edited(TT, tmp_path, "bad.json", edit)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_json(TT)))
    code = main(["report", str(good), str(bad), "-o", str(tmp_path / "r.html"),
                 "--markdown", str(tmp_path / "r.md")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("dpaudit: error: bad.json: a malformed dpaudit audit result ")
    assert needle in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "good.json"]


def test_a_dollar_sign_in_a_label_is_text_not_mathtext(tmp_path):
    # an unbalanced "$...$" in a look's label (a tick of the looks figure) fails matplotlib's
    # mathtext parser unless the labels are taken as plain text
    def dollars(d):
        d["counts"]["measurement"]["looks"][0]["runs_per_side"] = "$\\frac{$"
    doc = report.load([str(_edited(TT, tmp_path, "d.json", dollars))])
    assert report.looks_figure(doc[0]).startswith("data:image/png;base64,")
    assert "<html" in report.render_html(doc)


@pytest.mark.slow       # renders a report with five figures: about 3 s
def test_the_accountants_proof_and_profile_are_in_the_report(tmp_path):
    # an adap-tt result given the accountant block of a Gaussian release that its claim's
    # δ refutes (σ = 0.0673, Δ = 1/8 at ε = 9: δ(9) = 1.36e-5 > 1e-5)
    from dpaudit.auditing.whitebox import accountant
    from dpaudit.simulation.simulate import GAUSSIAN
    doc = _json(TT)
    doc["claim"] = {"eps": 9.0, "delta": 1e-5}
    row = {"release": 4, "dist": GAUSSIAN, "scale": 0.0672889619806304, "value_d": 0.875,
           "value_d_prime": 1.0}
    doc["whitebox"]["accountant"] = accountant({"run": 7, "direction": "d->d'",
                                                "contributions": [row]}, 9.0, 1e-5)
    path = tmp_path / "acc.json"
    path.write_text(json.dumps(doc))
    page = report.render_html(report.load([str(path)]))
    assert "Accountant: run 7" in page and "white-box proof" in page and "1.359e-05" in page
    assert len(_data_uris(page)) == 5          # the four of test_html_audit_content, and its own
    profile = doc["whitebox"]["accountant"]["composed"]["profile"]
    assert profile["eps"][0] == 0.0 and profile["eps"][-1] == 18.0
    assert all(a >= b for a, b in zip(profile["delta"], profile["delta"][1:]))   # δ(ε) falls


def _mutation_doc():
    """A small ``dpaudit mutate`` JSON: a killed bug, a survivor, an equivalent mutant."""
    base = {"algorithm": "adap-tt", "operator": "scale", "site": 0,
            "site_text": "each arm's initial sample"}
    rows = [{**base, "mutant": "adap-tt~scale=0@0", "mutation_text": "noise × 0", "factor": 0.0,
             "status": "bug", "whitebox_loss": None, "verdict": "violation", "eps_lb": 8.38,
             "killed": True, "runs_to_kill": 1000},
            {**base, "mutant": "adap-tt~gauss@0", "operator": "gauss", "factor": 1.0,
             "mutation_text": "a Gaussian draw with the Laplace scale", "status": "bug",
             "whitebox_loss": None, "verdict": "pass", "eps_lb": 0.39, "killed": False,
             "runs_to_kill": None, "survived_because": "pass: eps_lb 0.3881, eps_ub 0.4757"},
            {**base, "mutant": "adap-tt~scale=2@0", "mutation_text": "noise × 2", "factor": 2.0,
             "status": "equivalent", "whitebox_loss": 0.25, "why": "noise × 2 ≥ 1"}]
    return {"eps": 0.5, "seed": 1, "budget": "default", "mutants": rows, "within_margin": 0,
            "per_algorithm": {"adap-tt": {"bugs": 2, "killed": 1, "score": 0.5}},
            "bugs": 2, "killed": 1, "score": 0.5}


def test_a_mutation_analysis_reports_its_score_and_only_its_survivors():
    doc = {**_mutation_doc(), "_source": "m.json"}
    assert report.classify(doc) == "mutation"
    html = report.render_html([doc])
    assert "mutation score 0.5: 1 of 2 bugs killed" in html
    survivors = html.split("<h3>Survivors</h3>")[1].split("<h3>")[0]
    assert "adap-tt~gauss@0" in survivors and "eps_ub 0.4757" in survivors
    assert "adap-tt~scale=0@0" not in survivors and "adap-tt~scale=2@0" not in survivors
    per_bug = html.split("<h3>Per bug</h3>")[1].split("<h3>")[0]
    assert re.search(r"noise × 0</td><td class=\"n\">1</td><td class=\"n\">1<", per_bug)
    assert "noise × 2" not in per_bug              # equivalent: not a bug
    md = report.render_markdown([doc])
    assert "| adap-tt~gauss@0 |" in md and "| adap-tt | 2 | 1 | 0.5 |" in md
