"""Shared test set-up.

* The tests must run the checkout's code: `pip install -e '.[test]'` (the README's command).
  A stale or mixed install (a copy in site-packages, imported before the checkout) would hide
  every edit, so the run stops at once with a message saying so.
* Property tests (hypothesis) draw their examples deterministically: the same code gives the
  same examples on every run and in CI (like every other statistical test here, seeded). Set
  HYPOTHESIS_PROFILE=explore to search with fresh random examples.
"""
import os
import pathlib

import pytest
from hypothesis import settings

ROOT = pathlib.Path(__file__).resolve().parents[1]

settings.register_profile("seeded", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "seeded"))


def pytest_configure(config):
    import dpaudit
    import dpaudit.algorithms

    for mod in (dpaudit, dpaudit.algorithms):
        where = pathlib.Path(mod.__file__ or next(iter(mod.__path__), "?")).resolve()
        if not where.is_relative_to(ROOT / "dpaudit"):
            raise pytest.UsageError(
                f"{mod.__name__} is imported from {where}, not from this checkout ({ROOT}): "
                "the tests would not see your edits. Run `pip install -e '.[test]'` in this "
                "venv (it replaces the stale copy).")
