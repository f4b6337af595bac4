"""Shared test set-up.

* The tests must run the checkout's code: `pip install -e '.[test]'` (the README's command).
  A stale or mixed install (a copy in site-packages, imported before the checkout) would hide
  every edit, so the run stops at once with a message saying so.
* numba checks a cached function against its own source file only: after an edit of a helper
  in kernels.py, the kernels that inline it would keep running their old cached code. So when
  any module with compiled code has changed since the last run, the run starts by deleting
  the checkout's numba caches (once, before xdist workers start).
* The README's worked example is the main job itself, at the README's budget (a minute or
  more on two cores, longer on a busy machine): the test that runs it is marked
  ``worked_example`` and runs only with ``pytest --worked-example``, a step of its own in CI
  (``.ci/run``), so that no test of the suite takes over 60 s.
* Property tests (hypothesis) draw their examples deterministically: the same code gives the
  same examples on every run and in CI (like every other statistical test here, seeded). Set
  HYPOTHESIS_PROFILE=explore to search with fresh random examples.
"""
import os
import pathlib
import sysconfig
import tomllib
import zlib

import pytest
from hypothesis import settings

ROOT = pathlib.Path(__file__).resolve().parents[1]


def package_folders(root: pathlib.Path = ROOT) -> dict[str, pathlib.Path]:
    """Each package that pyproject.toml installs and the checkout's folder it comes from
    (``package-dir``: dpaudit.algorithms is the top-level algorithms/)."""
    tool = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    moved = tool.get("package-dir", {})

    def folder(pkg: str) -> pathlib.Path:          # setuptools: the longest mapped prefix
        head = max((m for m in moved if pkg == m or pkg.startswith(m + ".")), key=len,
                   default=None)
        if head is None:
            return root / pkg.replace(".", "/")
        return root / moved[head] / pkg[len(head) + 1:].replace(".", "/")

    return {pkg: folder(pkg) for pkg in tool["packages"]}


SOURCES = package_folders()

settings.register_profile("seeded", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "seeded"))


def clear_stale_numba_caches(packages, cache):
    """Delete the numba caches below the folders ``packages`` if their jitted sources changed
    since the fingerprint kept in ``cache`` (pytest's cache); returns the number of files
    deleted."""
    sources = sorted(p for d in packages for p in d.rglob("*.py") if "njit" in p.read_text())
    fingerprint = zlib.crc32(b"".join(p.read_bytes() for p in sources))
    if cache.get("dpaudit/jitted-sources", None) == fingerprint:
        return 0
    stale = [f for d in packages for pattern in ("__pycache__/*.nbi", "__pycache__/*.nbc")
             for f in d.rglob(pattern)]
    for f in stale:
        f.unlink(missing_ok=True)
    cache.set("dpaudit/jitted-sources", fingerprint)
    return len(stale)


def installed_copy(purelib):
    """The message refusing a ``dpaudit`` folder in site-packages (``purelib``), or None.

    An editable install puts no such folder there. One that exists is a non-editable install
    or what is left of one: pip uninstall keeps the numba caches that runs wrote beside the
    installed sources, and the folder left behind is then imported as an empty namespace
    package by every process started outside the checkout (the CLI tests), with no algorithms
    registered."""
    copy = pathlib.Path(purelib) / "dpaudit"
    if not copy.is_dir():
        return None
    return (f"{copy} is a non-editable install of dpaudit or what is left of one: outside this "
            f"checkout it is imported instead of {ROOT / 'dpaudit'}. Remove it and install "
            f"editable: `rm -r {copy} && pip install -e '.[test]'`.")


def pytest_addoption(parser):
    parser.addoption("--worked-example", action="store_true",
                     help="run the README's worked example (the main job at its budget)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--worked-example"):
        return
    skip = pytest.mark.skip(reason="the README's main job: run it with "
                                   "`pytest --worked-example tests/test_readme.py` (CI's own step)")
    for item in items:
        if "worked_example" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    refusal = installed_copy(sysconfig.get_paths()["purelib"])
    if refusal:
        raise pytest.UsageError(refusal)
    if getattr(config, "cache", None) is not None and not hasattr(config, "workerinput"):
        roots = [f for f in SOURCES.values()
                 if not any(f != g and f.is_relative_to(g) for g in SOURCES.values())]
        clear_stale_numba_caches(roots, config.cache)
    import dpaudit
    import dpaudit.algorithms

    for mod in (dpaudit, dpaudit.algorithms):
        where = pathlib.Path(mod.__file__ or next(iter(mod.__path__), "?")).resolve()
        if not where.is_relative_to(SOURCES[mod.__name__]):
            raise pytest.UsageError(
                f"{mod.__name__} is imported from {where}, not from this checkout ({ROOT}): "
                "the tests would not see your edits. Run `pip install -e '.[test]'` in this "
                "venv (it replaces the stale copy).")
