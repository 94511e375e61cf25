"""The examples check what they need beyond soagen before they start: a missing package is one
line on stderr naming the install command, and nothing is built; their figures go where the
user says, the current directory by default, never into the checkout unasked."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.support import ROOT

EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))
import _optional  # noqa: E402

#: code run before the example that makes a package look uninstalled
HIDE = {"matplotlib": "sys.modules['matplotlib'] = None",
        "example-robot-data": "import soagen.model.robots as r; r.erd_root = lambda: None",
        "casadi": "sys.modules['casadi'] = None", "crocoddyl": "sys.modules['crocoddyl'] = None"}

CASES = [("quadruped_balance", [], "example-robot-data"),
         ("quadruped_balance", ["--plot"], "matplotlib"),
         ("humanoid", [], "example-robot-data"),
         ("osc_panda", ["--plot"], "matplotlib"),
         ("closed_chain_bar", ["--plot"], "matplotlib"),
         ("mpc_panda", ["--plot", "x.png"], "matplotlib"),
         ("identify_panda", ["--plot"], "matplotlib"),
         ("trajopt_panda", [], "casadi"),
         ("mpc_solo12", [], "crocoddyl")]


def run_without(package, example, args, cwd):
    """Run ``python examples/<example>.py <args>`` from ``cwd`` as if ``package`` were not installed,
    with an empty build cache in ``cwd``; the finished process."""
    script = EXAMPLES / f"{example}.py"
    code = (f"import runpy, sys\nsys.argv = [{str(script)!r}, *{args!r}]\nsys.path.insert(0, {str(EXAMPLES)!r})\n"
            f"{HIDE[package]}\nrunpy.run_path(sys.argv[0], run_name='__main__')\n")
    env = {**os.environ, "SOAGEN_CACHE": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("example", "args", "package"), CASES)
def test_a_missing_package_is_one_line_before_any_work(example, args, package, tmp_path):
    t0 = time.perf_counter()
    res = run_without(package, example, args, tmp_path)
    elapsed = time.perf_counter() - t0
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert package in lines[0] and _optional.install(package) in lines[0], lines[0]
    assert res.stdout == "", res.stdout                       # it said nothing of building or simulating
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    assert elapsed < 20, elapsed


def test_every_example_is_checked():
    """Every example of examples/ is among the cases above, and each plotting one with --plot."""
    names = {p.stem for p in EXAMPLES.glob("*.py") if not p.stem.startswith("_")}
    assert names == {c[0] for c in CASES}
    plotting = {p.stem for p in EXAMPLES.glob("*.py") if "def plot(" in p.read_text()}
    assert plotting == {c[0] for c in CASES if c[2] == "matplotlib"}


def test_the_examples_extra_brings_what_they_need():
    """Each package is in the extra its message names (crocoddyl: the crocoddyl extra, its pinned releases)."""
    text = (ROOT / "pyproject.toml").read_text()
    for package in HIDE:
        name = _optional.install(package).split("[", 1)[1].split("]", 1)[0]
        extra = text[text.index(f"\n{name} = ["):].split("]", 1)[0]
        assert f'"{package}' in extra, (package, name)
    assert "pip install '.[examples]'" in (ROOT / "README.md").read_text()


def test_every_example_runs_from_elsewhere(tmp_path):
    """``python /path/to/examples/X.py --help`` from another folder finds its helper."""
    for script in sorted(EXAMPLES.glob("[!_]*.py")):
        res = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path, capture_output=True, text=True)
        assert res.returncode == 0 and "usage" in res.stdout, (script.name, res.stderr)


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_plot_goes_to_the_current_directory(tmp_path, monkeypatch):
    """``--plot`` with no path draws into the current directory, ``--plot PATH`` into PATH; the
    checkout's figure is left alone (a short stand-in run: the drawing is what is tested)."""
    import closed_chain_bar

    steps = 20
    times = np.arange(steps) * 1e-3
    monkeypatch.setattr(closed_chain_bar, "simulate",
                        lambda: (times, np.full((steps, 2), 1e-6), np.ones((steps, 6))))
    monkeypatch.chdir(tmp_path)
    docs = ROOT / "docs" / "closed_chain_bar.png"
    before = _digest(docs)
    closed_chain_bar.main(["--plot"])
    assert (tmp_path / "closed_chain_bar.png").stat().st_size > 0
    closed_chain_bar.main(["--plot", str(tmp_path / "sub.png")])
    assert (tmp_path / "sub.png").stat().st_size > 0
    assert _digest(docs) == before
