"""An inertia MuJoCo's compiler changed from the MJCF file's is said in one ModelWarning naming the
bodies, and ``strict`` refuses it; an inertia a body's geoms give (no ``<inertial>``) is a note.

Runs on the test extra's mujoco (3.3.7) with the rest of the suite, and on the ``mujoco`` extra's
release of the day (4.x) in ``.ci/newcomer.py``'s fresh venv, which has no Pinocchio nor hypothesis:
this file imports neither (``pytest --noconftest`` there). MuJoCo 4 bounds a singular ``fullinertia``
by ``boundinertia`` where 3.x refuses the file: each release's branch is asserted, none skipped."""
from __future__ import annotations

import warnings

import mujoco  # the test extra installs it: never skipped
import numpy as np
import pytest

import soagen
from soagen.cli import main

MUJOCO_4 = int(mujoco.__version__.split(".")[0]) >= 4


def _mjcf(tmp_path, compiler, inertial1, body2='<inertial pos="0 0 0.1" mass="0.5" diaginertia="0.004 0.005 0.006"/>'):
    """A two-hinge arm; ``inertial1``: the first body's <inertial> attributes (or a geom), ``body2``: the second's."""
    path = tmp_path / "arm.xml"
    path.write_text(f"""<mujoco model="arm">
  <compiler {compiler}/>
  <worldbody>
    <body name="base"><inertial pos="0 0 0" mass="0.001" diaginertia="1e-6 1e-6 1e-6"/></body>
    <body name="link1">
      <joint name="j1" type="hinge" axis="0 0 1"/>
      {inertial1}
      <body name="link2" pos="0 0 0.2">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        {body2}
      </body>
    </body>
  </worldbody>
</mujoco>""")
    return path


def _load(path, **kw):
    """The robot and the texts of its ModelWarnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = soagen.load_mjcf(path, **kw)
    return robot, [str(w.message) for w in caught if issubclass(w.category, soagen.ModelWarning)]


def _changed(texts):
    return [t for t in texts if "changed the inertia" in t]


# the xy block [[.01, .01], [.01, .01]] is singular: principal moments (0, 0.02, 0.02)
SINGULAR = '<inertial pos="0 0 0.1" mass="1" fullinertia="0.01 0.01 0.02 0.01 0 0"/>'


def test_singular_fullinertia_is_warned_once_and_refused_when_strict(tmp_path):
    path = _mjcf(tmp_path, 'boundinertia="0.001"', SINGULAR)
    if not MUJOCO_4:     # MuJoCo 3.x refuses the file itself, strict or not
        for strict in (False, True):
            with pytest.raises(soagen.RobotError, match="MuJoCo cannot compile it: .*positive eigenvalues"):
                soagen.load_mjcf(path, strict=strict)
        return
    robot, texts = _load(path)
    changed = _changed(texts)
    assert len(changed) == 1, texts
    assert "body 'link1'" in changed[0] and "'link2'" not in changed[0], changed
    assert "(0, 0.02, 0.02) kg m^2; compiled: 1 kg, (0.001, 0.02, 0.02)" in changed[0], changed
    assert 'boundinertia="0.001"' in changed[0]
    # the robot is the compiled model's: the zero moment bounded to 0.001
    assert np.allclose(np.linalg.eigvalsh(robot.bodies[0].inertia), [0.001, 0.02, 0.02], rtol=1e-9, atol=0)
    with pytest.raises(soagen.RobotError, match=r"body 'link1'.*\(refused: strict\)"):
        soagen.load_mjcf(path, strict=True)


def test_bounded_mass_and_inertia_name_every_moving_body_in_one_warning(tmp_path):
    """boundmass and boundinertia, on a body with an <inertial> and on one whose geom gives it;
    the body welded to the world (its inertia never enters the dynamics) is not named."""
    path = _mjcf(tmp_path, 'boundmass="0.2" boundinertia="0.003"',
                 '<inertial pos="0 0 0.1" mass="0.1" diaginertia="0.01 0.02 0.02"/>',
                 '<geom type="sphere" size="0.01" mass="0.05"/>')
    robot, texts = _load(path)
    changed = _changed(texts)
    assert len(changed) == 1, texts
    assert ("bodies 'link1' (the file: 0.1 kg, principal moments (0.01, 0.02, 0.02) kg m^2; compiled: 0.2 kg, "
            "(0.01, 0.02, 0.02) kg m^2), 'link2' (inertia of its geoms bounded: 0.2 kg, (0.003, 0.003, 0.003) "
            'kg m^2) (<compiler boundmass="0.2" boundinertia="0.003">)') in changed[0], changed
    assert "'base'" not in changed[0], changed
    assert [b.mass for b in robot.bodies] == [0.2, 0.2]
    with pytest.raises(soagen.RobotError, match=r"'link1'.*'link2'.*\(refused: strict\)"):
        soagen.load_mjcf(path, strict=True)


def test_balanced_or_geom_replaced_inertial_is_warned(tmp_path):
    for compiler, link1 in (('balanceinertia="true"', "(0.001, 0.001, 0.01) kg m^2; compiled: 1 kg, (0.004, "),
                            ('inertiafromgeom="true"', "(0.001, 0.001, 0.01) kg m^2; compiled: 0.3 kg")):
        path = _mjcf(tmp_path, compiler, '<inertial pos="0 0 0.1" mass="1" diaginertia="0.001 0.001 0.01"/>'
                     '<geom type="box" size="0.05 0.05 0.1" mass="0.3"/>',
                     '<geom type="sphere" size="0.05" mass="0.5"/>')
        _, texts = _load(path)
        changed = _changed(texts)
        assert len(changed) == 1 and f"body 'link1' (the file: 1 kg, principal moments {link1}" in changed[0], texts
        assert compiler in changed[0]


def test_inertia_of_geoms_is_a_note_not_a_warning(tmp_path):
    path = _mjcf(tmp_path, "", '<geom type="box" size="0.05 0.05 0.1" mass="0.3"/>',
                 '<geom type="sphere" size="0.05" mass="0.5"/>')
    robot, texts = _load(path, strict=True)
    assert texts == []
    assert "inertia of 2 bodies computed by MuJoCo from their geoms (no <inertial>)" in robot.notes


def test_cli_says_it_and_strict_refuses(tmp_path, capsys):
    path = _mjcf(tmp_path, 'boundmass="0.2"', '<inertial pos="0 0 0.1" mass="0.1" diaginertia="0.01 0.02 0.02"/>')
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr()
    assert "MuJoCo's compiler changed the inertia of body 'link1'" in out.out + out.err
    assert main(["info", "--strict", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("soagen: error: ") and "'link1'" in err and "(refused: strict)" in err
