"""Shared fixtures: one cffi build per robot per test session."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

# hypothesis: the same examples on every run and no example database (CI, and by default);
# HYPOTHESIS_PROFILE=explore draws fresh examples
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session", autouse=True)
def soagen_cache(tmp_path_factory):
    """A fresh module cache per session, so a test run never trusts an old build."""
    path = tmp_path_factory.mktemp("soagen-cache")
    old = os.environ.get("SOAGEN_CACHE")
    os.environ["SOAGEN_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("SOAGEN_CACHE", None)
    else:
        os.environ["SOAGEN_CACHE"] = old


_modules = {}


def built(key, make_robot, precision="double", functions=None, variants=()):
    """Build (once per session) the module of the robot made by ``make_robot()``."""
    import soagen

    if (key, precision) not in _modules:
        robot = make_robot()
        _modules[key, precision] = (robot, soagen.build(robot, precision=precision, functions=functions,
                                                        variants=variants))
    return _modules[key, precision]
