"""The pytest commands the docs give do what they say: one that asks for the tests' printed
output (``-s``) also runs them in this process (``-n0``), since pyproject's pytest options run
``-n auto`` and pytest-xdist's workers' output never reaches the terminal."""
from __future__ import annotations

import re

from tests.support import ROOT


def test_documented_pytest_s_commands_run_in_process():
    assert re.search(r'^addopts = ".*-n auto', (ROOT / "pyproject.toml").read_text(), re.M)   # why -n0 is needed
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    commands = [(page.relative_to(ROOT), line) for page in pages for line in page.read_text().splitlines()
                if re.search(r"\bpytest\b.*\s-s\b", line)]
    assert any(page.name == "checking.md" for page, _ in commands)
    assert [(str(page), line) for page, line in commands if not re.search(r"\s-n\s?0\b", line)] == []
