"""Two processes building the same robot into one cache at once both get a
working module, and the cache is sound afterwards."""
from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
import numpy as np, soagen
from soagen import reference
from soagen.model import robots
robot = robots.example("puma560")
mod = soagen.build(robot, functions=["gravity", "mass_matrix"])
q = np.linspace(-1, 1, robot.n)
assert np.allclose(mod.gravity(q), reference.gravity(robot, q), rtol=1e-12, atol=1e-12)
print(mod.path)
"""


def test_two_processes_build_the_same_robot(tmp_path):
    env = dict(os.environ, SOAGEN_CACHE=str(tmp_path / "cache"), SOAGEN_JOBS="1")
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    paths = {out.strip() for out, _ in outs}
    assert len(paths) == 1                                  # one cache entry, shared
    entries = [e for e in os.listdir(tmp_path / "cache") if not e.endswith(".lock")]
    assert len(entries) == 1, entries                       # no half-built leftovers
    again = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and again.stdout.strip() in paths


def test_family_picks_are_remembered(tmp_path, monkeypatch):
    """The second recording of a robot records only the family's chosen candidate, and its
    programs print to the same C as the first's (which recorded every candidate)."""
    import soagen
    from soagen import codegen
    from soagen.targets.c99.emit import emit

    robot = soagen.robots.example("panda")
    monkeypatch.setenv("SOAGEN_CACHE", str(tmp_path))
    monkeypatch.setenv("SOAGEN_JOBS", "1")             # recorded in this process, where the spy sees it
    recorded = []
    one = codegen._one_program
    monkeypatch.setattr(codegen, "_one_program", lambda job: recorded.append(job[1]) or one(job))
    options = soagen.Options(functions=("forward_dynamics", "mass_matrix_inverse"))
    first, _ = codegen.programs(robot, options)
    candidates = {s.name for f in ("forward_dynamics", "mass_matrix_inverse") for _, s in
                  soagen.functions.candidates(f)}
    assert set(recorded) == candidates
    recorded.clear()
    again, _ = codegen.programs(robot, options)
    assert len(recorded) == 2 and set(recorded) < candidates
    assert {p.algorithm for p in again} == {p.algorithm for p in first}
    assert emit(robot, again, "r").source == emit(robot, first, "r").source
