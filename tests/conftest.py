"""Session fixtures: a fresh module cache, so a test run never trusts an old build;
deterministic hypothesis examples."""
from __future__ import annotations

import os

import pytest
from hypothesis import settings

# hypothesis: the same examples on every run and no example database (CI, and by default);
# HYPOTHESIS_PROFILE=explore draws fresh examples
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session", autouse=True)
def soagen_cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("soagen-cache")
    old = os.environ.get("SOAGEN_CACHE")
    os.environ["SOAGEN_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("SOAGEN_CACHE", None)
    else:
        os.environ["SOAGEN_CACHE"] = old
