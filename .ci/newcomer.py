"""A newcomer's first steps, as the README gives them, on this clone: a fresh venv, the README's
two set-up commands (``pip install .`` instead of an editable or test install: what a user
types), then its first Python program; then ``pip install '.[mujoco]'`` (the release of mujoco
and gymnasium pip picks today, not the test extra's pins) and the Python blocks of its "MuJoCo
models" section, then ``tests/test_mjcf_inertia.py`` on that release (MuJoCo 4's compiler bounds
inertias 3.3.7 refuses; the file needs pytest alone) and, from MuJoCo 4 on, again on ``mujoco-core``
alone (the package less its renderer); each within a stated time, and the checkout unchanged.

    python .ci/newcomer.py          # exits non-zero on the first step that fails or is too slow
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: seconds each step may take on a 2-core machine (the install downloads sympy, numpy, cffi, ...)
LIMITS = {"pip install .": 600, "soagen check --example panda": 300, "first program": 180,
          "pip install '.[mujoco]'": 600, "MuJoCo example": 180,
          "MJCF inertia tests": 180}


def readme_steps():
    """The commands of the README's "Set up" block and its first Python program."""
    text = (ROOT / "README.md").read_text()
    setup = text.split("## Set up", 1)[1]
    block = re.search(r"```sh\n(.*?)```", setup, re.S).group(1)
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]
    program = re.search(r"```python\n(.*?)```", text.split("## A first program", 1)[1], re.S).group(1)
    return commands, program


def readme_mujoco_program():
    """The Python blocks of the README's "MuJoCo models" section, joined in order."""
    section = (ROOT / "README.md").read_text().split("## MuJoCo models", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    assert blocks, "no Python block in the README's MuJoCo section"
    return "".join(blocks)


def run(label, cmd, env, cwd):
    t0 = time.perf_counter()
    res = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    status = "ok" if res.returncode == 0 and seconds <= LIMITS[label] else "FAIL"
    print(f"newcomer: {label:<30} {seconds:7.1f} s (limit {LIMITS[label]} s) {status}", flush=True)
    if status != "ok":
        print(res.stdout[-4000:], res.stderr[-4000:], sep="\n")
        sys.exit(1)
    return res


def main():
    commands, program = readme_steps()
    assert commands == ["pip install .", "soagen check --example panda"], commands
    before = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory(prefix="newcomer-") as tmp:
        subprocess.run([sys.executable, "-m", "venv", f"{tmp}/venv"], check=True)
        env = dict(os.environ, PATH=f"{tmp}/venv/bin:{os.environ['PATH']}", SOAGEN_CACHE=f"{tmp}/cache",
                   HOME=tmp)
        env.pop("PYTHONPATH", None)
        env.pop("VIRTUAL_ENV", None)
        run("pip install .", [f"{tmp}/venv/bin/python", "-m", "pip", "install", "-q", "."], env, ROOT)
        res = run("soagen check --example panda", [f"{tmp}/venv/bin/soagen", "check", "--example", "panda"], env, tmp)
        assert "PASS" in res.stdout, res.stdout
        (Path(tmp) / "first.py").write_text(program)
        res = run("first program", [f"{tmp}/venv/bin/python", "first.py"], env, tmp)
        assert float(res.stdout.split()[-1]) < 1e-10, res.stdout
        run("pip install '.[mujoco]'", [f"{tmp}/venv/bin/python", "-m", "pip", "install", "-q", ".[mujoco]"], env, ROOT)
        (Path(tmp) / "mujoco_example.py").write_text(readme_mujoco_program())
        res = run("MuJoCo example", [f"{tmp}/venv/bin/python", "mujoco_example.py"], env, tmp)
        assert float(res.stdout.split()[-1]) < 1e-10, res.stdout
        version = subprocess.run([f"{tmp}/venv/bin/python", "-c", "import mujoco; print(mujoco.__version__)"],
                                 env=env, cwd=tmp, capture_output=True, text=True).stdout.strip()
        print(f"newcomer: the MuJoCo example ran on mujoco {version}")
        # the test extra pins mujoco 3.3.7: the release of the day's compiler is tested here (pytest only,
        # no conftest: this venv has neither hypothesis nor Pinocchio; no cache, no bytecode in the checkout)
        run("MJCF inertia tests", [f"{tmp}/venv/bin/python", "-m", "pip", "install", "-q", "pytest"], env, ROOT)
        res = run("MJCF inertia tests", [f"{tmp}/venv/bin/python", "-B", "-m", "pytest", "-q", "--noconftest",
                                         "-p", "no:cacheprovider", "-o", "addopts=", "tests/test_mjcf_inertia.py"],
                  env, ROOT)
        print(f"newcomer: {res.stdout.strip().splitlines()[-1]} (tests/test_mjcf_inertia.py on mujoco {version})")
        if int(version.split(".")[0]) >= 4:    # mujoco-core alone (the compiler, no renderer) is enough for soagen
            # (uninstalled with the rest first: the mujoco package's files overlap mujoco-core's)
            run("MJCF inertia tests", [f"{tmp}/venv/bin/python", "-m", "pip", "uninstall", "-q", "-y", "mujoco",
                                       "mujoco-core", "mujoco-studio", "glfw", "pyopengl"], env, ROOT)
            run("MJCF inertia tests", [f"{tmp}/venv/bin/python", "-m", "pip", "install", "-q", "mujoco-core"], env, ROOT)
            res = run("MJCF inertia tests", [f"{tmp}/venv/bin/python", "-B", "-m", "pytest", "-q", "--noconftest",
                                             "-p", "no:cacheprovider", "-o", "addopts=", "tests/test_mjcf_inertia.py"],
                      env, ROOT)
            print(f"newcomer: {res.stdout.strip().splitlines()[-1]} (the same on mujoco-core alone)")
    after = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    if after != before:
        print(f"newcomer: the README's steps changed the checkout:\n{after}")
        sys.exit(1)
    print("newcomer: the README's steps work on a fresh venv and leave the checkout as it was")


if __name__ == "__main__":
    main()
