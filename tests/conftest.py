"""Property tests (hypothesis) draw their examples deterministically: the same code gives the
same examples on every run and in CI (like every other statistical test here, seeded). Set
HYPOTHESIS_PROFILE=explore to search with fresh random examples."""
import os

from hypothesis import settings

settings.register_profile("seeded", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "seeded"))
