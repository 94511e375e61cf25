"""docs/guide/mujoco.md: its Python blocks run as written, in order, in one namespace (their
asserts are the agreement of soagen's M, bias forces and Jacobian with MuJoCo's through the
converters); the page is linked from the guide's index and the README, and the names check of
tests/test_readme_names.py reads it."""
from __future__ import annotations

import re
import warnings

import numpy as np

import soagen
from tests.support import ROOT
from tests.test_readme_names import PAGES

PAGE = ROOT / "docs" / "guide" / "mujoco.md"


def python_blocks(text):
    """The fenced ```python blocks of a markdown text, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def run_page(path):
    """Every Python block of ``path`` executed in one namespace; -> the namespace."""
    scope = {"__name__": "__guide__"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", soagen.ModelWarning)     # the example's model is one soagen reads whole
        for i, code in enumerate(python_blocks(path.read_text())):
            exec(compile(code, f"{path.name} (Python block {i + 1})", "exec"), scope)
    return scope


def test_the_extractor_finds_python_blocks_only():
    text = "a\n```python\nx = 1\n```\n```sh\nsoagen info\n```\n```python\ny = x\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = x\n"]


def test_the_page_runs_and_agrees_with_mujoco(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = PAGE.read_text()
    blocks = python_blocks(text)
    assert len(blocks) >= 4 and sum(code.count("assert np.allclose") for code in blocks) >= 4
    scope = run_page(PAGE)
    robot, q, M, M_mj = scope["robot"], scope["q"], scope["M"], scope["M_mj"]
    kinds = [b.joint_type for b in robot.bodies]
    assert kinds[0] == "floating" and "spherical" in kinds and "revolute" in kinds
    # what the page says: compared as they are, the two matrices differ by as much as M itself;
    # through matrix_from_mujoco, by round-off
    assert np.max(np.abs(M - M_mj)) > 0.1 * np.max(np.abs(M))
    assert np.max(np.abs(M - soagen.mujoco_convention.matrix_from_mujoco(robot, q, M_mj))) < 1e-12
    assert not np.allclose(scope["data"].qpos, q)                  # the quaternion orders differ


def test_the_page_is_linked_and_its_names_are_checked():
    assert PAGE in PAGES
    assert "(mujoco.md)" in (ROOT / "docs" / "guide" / "README.md").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "(docs/guide/mujoco.md)" in readme.split("## MuJoCo models", 1)[1].split("\n## ", 1)[0]
    assert "(docs/guide/mujoco.md)" in readme.split("## The guide", 1)[1]
