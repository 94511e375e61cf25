"""Session fixtures: a fresh module cache, so a test run never trusts an old build."""
from __future__ import annotations

import os

import pytest


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
