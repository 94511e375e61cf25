"""A family's pick remembered by the robot's structure: a robot whose masses and inertias were
changed, each body's by its own factor, and one centre of mass moved (the same zeros, ones, signs
and equal numbers) records only the candidate picked for the first, and that is the pick a
recording of every candidate makes."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import soagen
from soagen import codegen
from tests.support.robots import random_robot

FAMILIES = ("forward_dynamics", "mass_matrix_inverse", "os_inertia")


def _changed(robot):
    """Each body's mass and inertia times a factor of its own, and the centre of mass farthest from its
    body's origin moved (its nonzero coordinates scaled): new values, the same structure."""
    bodies = [dataclasses.replace(b, mass=b.mass * f, inertia=np.asarray(b.inertia) * f)
              for b, f in zip(robot.bodies, _factors(robot))]
    k = int(np.argmax([np.linalg.norm(b.com) for b in robot.bodies]))
    bodies[k] = dataclasses.replace(bodies[k], com=np.asarray(bodies[k].com) * 1.137)
    return dataclasses.replace(robot, bodies=bodies)


def _factors(robot):
    """A factor per body, no two the same."""
    return 1.0371 + 0.0213 * np.arange(len(robot.bodies))


def _record(robot, options, monkeypatch):
    recorded = []
    one = codegen._one_program
    monkeypatch.setattr(codegen, "_one_program", lambda job: recorded.append(job[1]) or one(job))
    programs, _ = codegen.programs(robot, options)
    monkeypatch.setattr(codegen, "_one_program", one)
    return {p.name: p.algorithm for p in programs}, recorded


# the tree's tip has a short chain behind it: Λ never exists there (soagen warns), and os_inertia's
# candidates record all the same
@pytest.mark.filterwarnings("ignore::soagen.ModelWarning")
@pytest.mark.parametrize("robot", [random_robot(3, 8, tree=True, tips=1), random_robot(8, 7, tips=1),
                                   soagen.robots.example("panda")], ids=["tree", "chain", "panda"])
def test_a_changed_mass_reuses_the_pick_and_it_is_the_full_recordings(robot, tmp_path, monkeypatch):
    monkeypatch.setenv("SOAGEN_JOBS", "1")
    options = soagen.Options(functions=FAMILIES)
    candidates = {s.name for f in FAMILIES for _, s in soagen.functions.candidates(f)}
    monkeypatch.setenv("SOAGEN_CACHE", str(tmp_path / "shared"))
    first, recorded = _record(robot, options, monkeypatch)
    assert set(recorded) == candidates
    heavier = _changed(robot)
    assert heavier.fingerprint() != robot.fingerprint()
    assert heavier.fingerprint(structure=True) == robot.fingerprint(structure=True)
    ratios = [h.mass / b.mass for h, b in zip(heavier.bodies, robot.bodies)]
    assert len(set(np.round(ratios, 9))) == len(robot.bodies) > 1           # not one factor for all
    moved = [not np.array_equal(h.com, b.com) for h, b in zip(heavier.bodies, robot.bodies)]
    assert sum(moved) == 1                                                  # a centre of mass moved
    predicted, recorded = _record(heavier, options, monkeypatch)
    assert len(recorded) == len(FAMILIES) and predicted == first
    monkeypatch.setenv("SOAGEN_CACHE", str(tmp_path / "fresh"))
    full, recorded = _record(heavier, options, monkeypatch)
    assert set(recorded) == candidates and full == predicted


def test_what_the_structure_holds():
    robot = random_robot(3, 6, tree=True, tips=2)
    key = robot.fingerprint(structure=True)
    renamed = dataclasses.replace(robot, name="other", bodies=[dataclasses.replace(b, name=b.name + "_x")
                                                               for b in robot.bodies])
    assert renamed.fingerprint(structure=True) == key and renamed.fingerprint() != robot.fingerprint()
    b0 = robot.bodies[0]
    for change in (dict(axis=np.array([1.0, 0.0, 0.0]) if b0.axis[0] == 0 else np.array([0.0, 0.0, 1.0])),
                   dict(translation=np.zeros(3)),                           # zeros where there were none
                   dict(mass=float(robot.bodies[1].mass))):                 # two masses made equal
        moved = dataclasses.replace(robot, bodies=[dataclasses.replace(b0, **change), *robot.bodies[1:]])
        assert moved.fingerprint(structure=True) != key, change
