"""Session fixtures: a fresh module cache, so a test run never trusts an old build (one
folder for the run, shared by pytest-xdist's workers, which lock it per build);
deterministic hypothesis examples."""
from __future__ import annotations

import os

import pytest
from hypothesis import settings

import soagen  # noqa: F401  (before any test module imports sympy: soagen sets sympy's cache size)

# hypothesis: the same examples on every run and no example database (CI, and by default);
# HYPOTHESIS_PROFILE=explore draws fresh examples
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    # a pytest-xdist worker (-n auto: one per CPU) records a build's functions in its own process
    # (SOAGEN_JOBS=1): a pool of SOAGEN_JOBS=<CPUs> forked per build, its programs pickled back, adds
    # about 20% to a build's CPU time where the CPUs are busy with the other workers anyway; the pool and
    # the pipelined build with two slots are tested with SOAGEN_JOBS=2 (tests/test_pipelined_build.py)
    if hasattr(config, "workerinput"):
        os.environ.setdefault("SOAGEN_JOBS", "1")


@pytest.fixture(scope="session", autouse=True)
def soagen_cache(request, tmp_path_factory):
    # under xdist each worker's base folder is <run>/popen-gwN: the cache goes beside them
    base = tmp_path_factory.getbasetemp()
    path = (base.parent if hasattr(request.config, "workerinput") else base) / "soagen-cache"
    path.mkdir(exist_ok=True)
    old = os.environ.get("SOAGEN_CACHE")
    os.environ["SOAGEN_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("SOAGEN_CACHE", None)
    else:
        os.environ["SOAGEN_CACHE"] = old
