"""The set-up contract. The README's commands are a contract with CI: `.ci/run` reads the full
test command from the README with an awk line, so an edit of the README can silently break CI;
these tests run `.ci/run`'s own extraction against the README and check what it finds. The
tests must run the checkout's code: tests/conftest.py refuses a stale install by name. And no test
may hang: pytest-timeout fails it by name."""
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _ci_extraction():
    """The shell command `.ci/run` uses to read the test command from README.md."""
    m = re.search(r"^cmd=\$\((awk .*README\.md)\)$", (ROOT / ".ci" / "run").read_text(), re.M)
    assert m, ".ci/run no longer reads its test command with `cmd=$(awk ... README.md)`"
    return m.group(1)


def test_ci_finds_the_full_test_command_in_the_readme():
    out = subprocess.run(["bash", "-c", _ci_extraction()], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out.startswith(". .venv/bin/activate && ")
    # an editable install: the tests run the checkout's code, not a stale copy
    assert "pip install -e '.[test]'" in out
    assert re.search(r"&& pytest( |$)", out)
    assert "not slow" not in out                    # CI runs the full suite, not the quick tier


def test_readme_states_the_quick_tier_on_its_own_line():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert 'pytest -m "not slow"' in lines


def test_the_readme_is_the_newcomers_page_and_links_only_to_files_that_exist():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200                # the rest lives in docs/
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert any(t.startswith("docs/") for t in targets)
    missing = [t for t in targets if "://" not in t and not (ROOT / t).exists()]
    assert not missing, missing


def test_ci_builds_the_docs_strictly():
    run = (ROOT / ".ci" / "run").read_text()
    assert "pip install -q -e '.[docs]'" in run and "mkdocs build --strict" in run
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
    assert pages and all(page in nav for page in pages), "a page of docs/ is missing from the nav"


def test_a_stale_install_is_refused_with_a_clear_message(tmp_path):
    # a copy of dpaudit outside the checkout, imported before pytest starts (as a non-editable
    # install's entry-point plugin would be): the run must stop with the fix, not run old code
    for pkg in ("dpaudit", "dpaudit/algorithms"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import dpaudit, pytest; "
            "sys.exit(pytest.main(['-p', 'no:dpaudit', '-p', 'no:cacheprovider', "
            "'tests/test_setup.py', '-k', 'quick_tier']))")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == pytest.ExitCode.USAGE_ERROR, r.stdout + r.stderr
    assert f"dpaudit is imported from {tmp_path / 'dpaudit'}" in r.stderr
    assert "pip install -e '.[test]'" in r.stderr


def test_a_copy_left_in_site_packages_is_refused(tmp_path):
    # `pip install .` then `pip install -e .` in one venv leaves site-packages/dpaudit/__pycache__
    # (numba's caches), an empty namespace package for every process outside the checkout
    from conftest import installed_copy

    assert installed_copy(tmp_path) is None
    (tmp_path / "dpaudit" / "__pycache__").mkdir(parents=True)
    (tmp_path / "dpaudit" / "__pycache__" / "simulate.batch_record-128.py311.nbi").write_bytes(b"")
    msg = installed_copy(tmp_path)
    assert f"rm -r {tmp_path / 'dpaudit'} && pip install -e '.[test]'" in msg


def test_the_suite_has_a_default_per_test_timeout(request):
    # pyproject's [tool.pytest.ini_options] timeout (pytest-timeout): no test may hang CI
    assert 0 < float(request.config.getini("timeout")) <= 300


def test_a_hung_test_fails_by_name_within_the_timeout(pytester):
    pytester.makepyfile(test_hang="""
        import time

        def test_sleeps_past_the_timeout():
            time.sleep(60)
    """)
    t0 = time.monotonic()
    result = pytester.runpytest("--timeout=1", "-rf")
    assert time.monotonic() - t0 < 30
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED test_hang.py::test_sleeps_past_the_timeout - *Timeout*"])


def test_numba_caches_are_cleared_when_a_jitted_source_changes(tmp_path):
    from conftest import clear_stale_numba_caches

    class Cache(dict):                                   # pytest's cache: get(key, default)/set
        set = dict.__setitem__

    pkg = tmp_path / "pkg"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "k.py").write_text("from numba import njit\n@njit(cache=True)\ndef f(): return 1\n")
    (pkg / "plain.py").write_text("x = 1\n")
    cached = [pkg / "__pycache__" / n for n in ("k.f-2.py311.nbi", "k.f-2.py311.1.nbc")]
    cache = Cache()

    def fill():
        for f in cached:
            f.write_bytes(b"old")

    fill()
    assert clear_stale_numba_caches([pkg], cache) == 2            # first sight: no fingerprint kept
    assert not any(f.exists() for f in cached)
    fill()
    assert clear_stale_numba_caches([pkg], cache) == 0            # nothing edited: caches kept
    (pkg / "plain.py").write_text("x = 2\n")
    assert clear_stale_numba_caches([pkg], cache) == 0            # no compiled code in it
    assert all(f.exists() for f in cached)
    (pkg / "k.py").write_text("from numba import njit\n@njit(cache=True)\ndef f(): return 2\n")
    assert clear_stale_numba_caches([pkg], cache) == 2            # a jitted source changed
    assert not any(f.exists() for f in cached)


@pytest.mark.slow
def test_an_editable_install_sees_edits_in_dpaudit_and_in_the_top_level_algorithms(tmp_path):
    # pyproject.toml installs the top-level algorithms/ as dpaudit.algorithms (package-dir): an
    # editable install into a fresh venv must run the checkout's files of both folders, edits
    # included, from anywhere
    proj = tmp_path / "proj"
    proj.mkdir()
    for name in ("pyproject.toml", "README.md", "dpaudit", "algorithms"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, proj / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, proj / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "-q", "--no-deps", "-e", str(proj)],
                   check=True, capture_output=True, timeout=300)
    (proj / "dpaudit" / "errors.py").write_text("EDITED = 'dpaudit'\n")
    (proj / "algorithms" / "__init__.py").write_text("EDITED = 'algorithms'\n")
    code = ("import dpaudit.errors as e, dpaudit.algorithms as a; "
            "print(e.EDITED, a.EDITED, e.__file__, a.__file__)")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=tmp_path, check=True,
                         capture_output=True, text=True, timeout=60).stdout.split()
    assert out == ["dpaudit", "algorithms", str(proj / "dpaudit" / "errors.py"),
                   str(proj / "algorithms" / "__init__.py")]


def test_the_project_files_a_user_expects_are_there_and_agree_on_the_version():
    import tomllib
    import dpaudit
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["license"]["text"] == "MIT"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert f"version: {meta['version']}" in (ROOT / "CITATION.cff").read_text()
    assert (ROOT / "CHANGELOG.md").read_text().startswith("# Changelog")
    out = subprocess.run([sys.executable, "-m", "dpaudit", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == f"dpaudit {meta['version']}" == f"dpaudit {dpaudit.__version__}"


def test_every_test_file_ci_names_exists():
    text = (ROOT / ".ci" / "run").read_text()
    for name in re.findall(r"tests/[\w/]+\.py", text):
        assert (ROOT / name).is_file(), name


def test_ci_runs_the_worked_example_the_suite_skips():
    """The README's worked example (marker worked_example) is skipped by the README's test
    command and run by .ci/run in a step of its own, whose status counts."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pytest --worked-example -m worked_example tests/test_readme.py" in ci
    assert 'status=$example_status' in ci
    src = (ROOT / "tests" / "test_readme.py").read_text()
    assert "@pytest.mark.worked_example" in src
