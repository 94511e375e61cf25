"""The README's Prerequisites say what each extra of pyproject.toml installs: one bullet per extra,
naming every package it adds, and no extra that pyproject does not have."""
from __future__ import annotations

import re
import tomllib

from tests.support import ROOT


def _extras():
    """{extra: [distribution names]} of pyproject.toml's optional dependencies."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return {extra: [re.match(r"[A-Za-z0-9_.-]+", req).group(0) for req in reqs] for extra, reqs in table.items()}


def _bullets():
    """{extra: its bullet's text} of the README's Prerequisites (the sub-bullets ``- `[NAME]`, ...``)."""
    section = (ROOT / "README.md").read_text().split("## Prerequisites", 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^  - `\[([a-z0-9-]+)\]`(.*?)(?=^  - |^- |\Z)", section, re.S | re.M)
    return {name: " ".join(text.split()) for name, text in items}


def test_every_extra_has_a_bullet_naming_its_packages():
    extras, bullets = _extras(), _bullets()
    assert sorted(bullets) == sorted(extras), (sorted(bullets), sorted(extras))
    for extra, packages in extras.items():
        missing = [p for p in packages if f"`{p}`" not in bullets[extra]]
        assert not missing, f"README's [{extra}] bullet should name {missing}"


def test_mujoco_range_as_pyproject_says():
    """The README's "3.3 to 4.x" is the mujoco extra's ``>=3.3,<5``, and the guide's pinned release the test extra's."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "mujoco>=3.3,<5" in table["mujoco"]
    assert "`mujoco` (3.3 to 4.x)" in _bullets()["mujoco"]
    pin = next(r for r in table["test"] if r.startswith("mujoco==")).split("==")[1]
    assert f"The tests pin mujoco {pin}" in (ROOT / "docs" / "guide" / "mujoco.md").read_text()
