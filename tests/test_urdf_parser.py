"""soagen's URDF reader (``xml.etree``, soagen.model.urdf) against yourdfpy, its reader before:
every URDF of example-robot-data, the bundled ones, the test data and a file of edge cases
load to identical robots (every number bit for bit, the notes, warnings and errors), and
``soagen.load_urdf`` works where yourdfpy is not installed (it is a test extra only)."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from soagen.model import urdf as urdf_module
from soagen.model.builder import RobotBuilder
from soagen.model.errors import RobotError
from soagen.model.robots import erd_root

yourdfpy = pytest.importorskip("yourdfpy")

DATA = Path(__file__).parent / "data"
BUNDLED = Path(urdf_module.__file__).parent / "robots"

# what the old reader defaulted or tolerated: no <origin>, origin with xyz or rpy only, <inertial>
# without <mass> (massless) or <inertia> (zero), <mass> without value (0), <inertia> with missing
# attributes (ixx, iyy, izz 1, the rest 0), <axis> without xyz, limits with one bound or upper < lower,
# <dynamics> with one attribute or none, whitespace (tabs, newlines, no-break spaces) around and
# between numbers, '+.5', '1_0', '1E0', '-0', comments, elements the dynamics does not read
# (visual geometry, materials, mimic, transmissions, a <link> inside <gazebo>), rpy at pitch ±pi/2
EDGE_CASES = """<?xml version="1.0" encoding="utf-8"?>
<!-- edge cases of the URDF reader -->
<robot name="edge">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base">
    <visual><geometry><box size="1 1 1"/></geometry></visual>
  </link>
  <link name="a">
    <inertial>
      <mass value="  2.5 "/>
      <inertia ixx="0.1" ixy="&#9;0.01" ixz="0" iyy="
0.2" iyz="0" izz="+.3"/>
    </inertial>
  </link>
  <link name="b">
    <inertial><origin rpy="0.3 -0.2 1.1"/><mass value="1"/><inertia/></inertial>
  </link>
  <link name="c"><!-- no <mass>: massless, its origin and inertia unused -->
    <inertial><origin xyz="1 2 3"/><inertia ixx="1" iyy="1" izz="1"/></inertial>
  </link>
  <link name="d">
    <inertial><mass/><origin xyz="0 0 0.1"/></inertial>
  </link>
  <link name="e">
    <inertial>
      <origin xyz="0.1\t0.2
 0.3" rpy="1.5707963267948966 0 -0.7853981633974483"/>
      <mass value="1.5E0"/><inertia ixx="0.5" izz="0.25" ixy="0.01"/>
    </inertial>
  </link>
  <link name="f">
    <inertial>
      <origin xyz="-0 0.05\u00a0-0.01" rpy="3.141592653589793 1.5707963267948966 -2"/>
      <mass value="1_0"/><inertia ixx="0.3" ixy="-0.01" ixz="0.02" iyy="0.4" iyz="0.03" izz="0.5"/>
    </inertial>
  </link>
  <link name="g">
    <inertial><origin xyz="0 0 0.2" rpy="0.1 -1.5707963267948966 0.2"/><mass value="0.5"/>
      <inertia ixx="0.01" iyy="0.02" izz="0.02"/></inertial>
  </link>
  <gazebo reference="a"><link name="ghost"/></gazebo>
  <joint name="j_a" type="revolute">
    <parent link="base"/><child link="a"/>
    <limit lower="-1.5" upper=" 1.5" effort="1" velocity="1"/>
  </joint>
  <joint name="j_b" type="continuous">
    <parent link="a"/><child link="b"/><origin xyz="0 0 0.25"/><axis/>
    <limit effort="1" velocity="1" lower="-1" upper="1"/>
    <dynamics damping="0.5"/>
  </joint>
  <joint name="j_c" type="fixed"><parent link="b"/><child link="c"/><origin rpy="0 0 1.5707963267948966"/></joint>
  <joint name="j_d" type="prismatic">
    <parent link="c"/><child link="d"/><axis xyz="0 0 2"/><limit lower="-0.1" effort="1" velocity="1"/>
    <dynamics/>
  </joint>
  <joint name="j_e" type="revolute">
    <parent link="b"/><child link="e"/><origin xyz=" 0.1  0 0 "/><axis xyz="\u00a00 1 0\u00a0"/>
    <limit lower="1" upper="-1" effort="1" velocity="1"/>
    <dynamics friction="0.25" damping="  1.5 "/>
  </joint>
  <joint name="j_f" type="revolute">
    <parent link="e"/><child link="f"/><origin xyz="0 0 0.3" rpy="-0.5 0.25 3"/>
    <axis xyz="0.6 0 0.8"/><limit lower="-2" upper="2" effort="1" velocity="1"/>
    <mimic joint="j_e" multiplier="2"/><safety_controller k_velocity="1"/><calibration rising="0"/>
    <dynamics friction="0.1"/>
  </joint>
  <joint name="j_g" type="prismatic">
    <parent link="f"/><child link="g"/><axis xyz="1 0 0"/><limit lower="0" upper="0.5" effort="1" velocity="1"/>
  </joint>
  <transmission name="t"><type>transmission_interface/SimpleTransmission</type></transmission>
</robot>
"""

CONFIGS = [{}, {"floating_base": True}, {"urdf_friction": True}]


ERD = erd_root()   # None without example-robot-data
ERD_FILES = sorted(ERD.rglob("*.urdf")) if ERD is not None else []
FILES = ERD_FILES + sorted(BUNDLED.glob("*.urdf")) + sorted(DATA.rglob("*.urdf"))


def _file_id(path):
    return str(path.relative_to(ERD)) if ERD is not None and path.is_relative_to(ERD) else path.name


# ---------------------------------------------------------------------------- the two readers, cached
_NEW, _OLD = {}, {}
_READ_URDF = urdf_module.read_urdf


def _new_read(path):
    """soagen's reader, once per file (an error is kept and raised again)."""
    key = os.fspath(path)
    if key not in _NEW:
        try:
            _NEW[key] = _READ_URDF(path)
        except RobotError as exc:
            _NEW[key] = exc
    if isinstance(_NEW[key], RobotError):
        raise _NEW[key]
    return _NEW[key]


class _Unreadable(Exception):
    """yourdfpy (or its XML pre-check) refused the file."""


def _old_read(path):
    """The yourdfpy model, as the old reader loaded it (once per file), after its XML pre-check."""
    src = os.fspath(path)
    if src not in _OLD:
        try:
            root = ET.parse(src).getroot()
            if root.tag != "robot" or not root.get("name"):
                raise _Unreadable(f"{src}: not a named <robot>")
            _OLD[src] = yourdfpy.URDF.load(src, build_scene_graph=False, load_meshes=False,
                                           build_collision_scene_graph=False, load_collision_meshes=False).robot
        except Exception as exc:  # noqa: BLE001 (lxml and yourdfpy raise many types)
            _OLD[src] = exc if isinstance(exc, _Unreadable) else _Unreadable(f"{src}: {type(exc).__name__}: {exc}")
    if isinstance(_OLD[src], _Unreadable):
        raise _OLD[src]
    return _OLD[src]


def _old_load(path, floating_base=False, urdf_friction=False):
    """The yourdfpy-based load_urdf that soagen had: the same fields to the same builder."""
    model, src = _old_read(path), os.fspath(path)
    builder = RobotBuilder(model.name, source=src)
    for link in model.links:
        inertial = link.inertial
        if inertial is None or inertial.mass is None:
            builder.add_link(link.name)
            continue
        origin = np.eye(4) if inertial.origin is None else np.asarray(inertial.origin, float)
        inertia = np.zeros((3, 3)) if inertial.inertia is None else np.asarray(inertial.inertia, float)
        rot = origin[:3, :3]
        builder.add_link(link.name, mass=float(inertial.mass), com=origin[:3, 3], inertia=rot @ inertia @ rot.T)
    for joint in model.joints:
        origin = np.eye(4) if joint.origin is None else np.asarray(joint.origin, float)
        limits = None
        if joint.type in ("revolute", "prismatic") and joint.limit is not None:
            lo, hi = joint.limit.lower, joint.limit.upper
            if lo is not None and hi is not None and hi > lo:
                limits = (lo, hi)
        builder.add_joint(joint.name, joint.type, joint.parent, joint.child, xyz=origin[:3, 3],
                          rotation=origin[:3, :3], axis=(1.0, 0.0, 0.0) if joint.axis is None else joint.axis,
                          limits=limits)
    friction = {}
    for joint in model.joints if urdf_friction else ():
        dyn = joint.dynamics
        if dyn is None or joint.type in ("fixed", "floating", "planar"):
            continue
        try:
            friction[joint.name] = tuple(float(x) if x is not None else 0.0 for x in (dyn.damping, dyn.friction))
        except ValueError:
            raise RobotError(f"{src}: joint '{joint.name}': <dynamics> damping/friction are not numbers") from None
    return builder.build(floating_base=floating_base, friction=friction)


def _outcome(load, path, config):
    """``(robot or None, error message or None, warning messages)``; an error of yourdfpy is ``_Unreadable``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            robot, error = load(path, **config), None
        except RobotError as exc:
            robot, error = None, str(exc)
        except _Unreadable as exc:
            robot, error = None, exc
    return robot, error, [f"{w.category.__name__}: {w.message}" for w in caught]


def _assert_same_array(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b), f"{what}: {a!r} != {b!r}"


def _assert_same_robot(new, old, where):
    assert new.name == old.name, where
    _assert_same_array(new.gravity, old.gravity, f"{where} gravity")
    assert len(new.bodies) == len(old.bodies), f"{where}: {len(new.bodies)} bodies, yourdfpy {len(old.bodies)}"
    for k, (b, c) in enumerate(zip(new.bodies, old.bodies)):
        for field in dataclasses.fields(b):
            x, y = getattr(b, field.name), getattr(c, field.name)
            what = f"{where} body {k} ({c.name}) {field.name}"
            if isinstance(y, np.ndarray):
                _assert_same_array(x, y, what)
            else:
                assert type(x) is type(y) and x == y, f"{what}: {x!r} != {y!r}"
    assert new.tips == old.tips == (), where
    assert new.notes == old.notes, where              # what was lumped, welded, snapped
    assert (new.singular_joints, new.singular_reason) == (old.singular_joints, old.singular_reason), where
    assert (new.actuators is None) == (old.actuators is None), where
    if old.actuators is not None:
        for field in dataclasses.fields(old.actuators):
            _assert_same_array(getattr(new.actuators, field.name), getattr(old.actuators, field.name),
                               f"{where} actuators.{field.name}")


@pytest.fixture
def cached_reader(monkeypatch):
    """load_urdf, end to end, with its file reading done once per file."""
    monkeypatch.setattr(urdf_module, "read_urdf", _new_read)


def _compare(path):
    """Load ``path`` with both readers in every configuration; which configurations gave a robot."""
    loaded = []
    for config in CONFIGS:
        where = f"{path} {config}"
        new, new_error, new_warned = _outcome(urdf_module.load_urdf, path, config)
        old, old_error, old_warned = _outcome(_old_load, path, config)
        if isinstance(old_error, _Unreadable):      # yourdfpy refused the file: soagen must too, in one line
            assert new is None and new_error.startswith(os.fspath(path)) and "\n" not in new_error, \
                f"{where}: yourdfpy refused it ({old_error}), soagen: {new_error or 'loaded'}"
            loaded.append(False)
            continue
        assert new_error == old_error, where
        assert new_warned == old_warned, where
        if old is not None:
            _assert_same_robot(new, old, where)
        loaded.append(old is not None)
    return loaded


@pytest.mark.skipif(not ERD_FILES, reason="example-robot-data is not installed")
def test_all_example_robot_data_files_are_found():
    assert len(ERD_FILES) >= 68       # 69 files of example-robot-data 4.x, in 38 description folders


@pytest.mark.parametrize("path", FILES, ids=_file_id)
def test_same_robot_as_yourdfpy(path, cached_reader):
    loaded = _compare(path)
    if path in ERD_FILES and path.name != "ur3.urdf":   # ur3.urdf: <robot> without a name, refused by both
        assert loaded[1], "every robot of example-robot-data loads with a floating base"


def test_edge_cases_same_as_yourdfpy(tmp_path, cached_reader):
    path = tmp_path / "edge.urdf"
    path.write_text(EDGE_CASES, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # link e: triangle inequality; link d: massless leaf
        robot = urdf_module.load_urdf(path, urdf_friction=True)
    assert [b.joint for b in robot.bodies] == ["j_a", "j_b", "j_d", "j_e", "j_f", "j_g"]
    assert [b.limits for b in robot.bodies] == [(-1.5, 1.5), None, None, None, (-2.0, 2.0), (0.0, 0.5)]
    np.testing.assert_array_equal(robot.actuators.viscous, [0.0, 0.5, 0.0, 1.5, 0.0, 0.0])
    np.testing.assert_array_equal(robot.actuators.coulomb, [0.0, 0.0, 0.0, 0.25, 0.1, 0.0])
    assert _compare(path) == [True, True, True]


def test_empty_dynamics_same_as_yourdfpy(tmp_path, cached_reader):
    """A ``<dynamics/>`` without attributes is zero friction, still actuator terms (not none)."""
    path = tmp_path / "empty_dynamics.urdf"
    path.write_text(f'<robot name="dyn">{GOOD_LINKS}<joint name="j1" type="revolute"><parent link="base"/>'
                    '<child link="l1"/><axis xyz="0 0 1"/><dynamics/></joint></robot>')
    robot = urdf_module.load_urdf(path, urdf_friction=True)
    np.testing.assert_array_equal(robot.actuators.viscous, [0.0])
    assert _compare(path) == [True, True, True]


# ------------------------------------------------------------------ malformed elements: one-line errors
GOOD_LINKS = '<link name="base"/><link name="l1"><inertial><mass value="1"/>' \
             '<inertia ixx="1" iyy="1" izz="1"/></inertial></link>'
GOOD_JOINT = '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>'


@pytest.mark.parametrize("body, words", [
    (GOOD_LINKS + '<joint name="j1" type="revolute"><child link="l1"/></joint>', "joint 'j1' has no <parent> element"),
    (GOOD_LINKS + '<joint name="j1" type="revolute"><parent link="base"/></joint>', "joint 'j1' has no <child> element"),
    (GOOD_LINKS + '<joint name="j1" type="revolute"><parent/><child link="l1"/></joint>',
     "joint 'j1': <parent> has no link attribute"),
    (GOOD_LINKS + '<joint name="j1"><parent link="base"/><child link="l1"/></joint>', "joint 'j1' has no type attribute"),
    (GOOD_LINKS + '<joint type="fixed"><parent link="base"/><child link="l1"/></joint>',
     "<joint> number 1 has no name attribute"),
    ('<link name="base"/><link><inertial><mass value="1"/></inertial></link>' + GOOD_JOINT,
     "<link> number 2 has no name attribute"),
    ('<link name="base"/><link name="l1"><inertial><mass value="one"/></inertial></link>' + GOOD_JOINT,
     "link 'l1' <inertial> <mass> value is not a number: 'one'"),
    ('<link name="base"/><link name="l1"><inertial><mass value="1"/><inertia ixx="1" iyy="x" izz="1"/>'
     '</inertial></link>' + GOOD_JOINT, "link 'l1' <inertial> <inertia> iyy is not a number: 'x'"),
    ('<link name="base"/><link name="l1"><inertial><origin xyz="0 0"/><mass value="1"/></inertial></link>'
     + GOOD_JOINT, "link 'l1' <inertial> <origin> xyz must be 3 numbers, got '0 0'"),
    (GOOD_LINKS + '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>'
     '<origin rpy="0,0,1"/></joint>', "joint 'j1' <origin> rpy must be 3 numbers, got '0,0,1'"),
    (GOOD_LINKS + '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>'
     '<origin xyz="0 0 1 0"/></joint>', "joint 'j1' <origin> xyz must be 3 numbers, got '0 0 1 0'"),
    (GOOD_LINKS + '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>'
     '<axis xyz="0 0 a"/></joint>', "joint 'j1' <axis> xyz is not a number: 'a'"),
    (GOOD_LINKS + '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>'
     '<limit lower="-pi" upper="1"/></joint>', "joint 'j1' <limit> lower is not a number: '-pi'"),
])
def test_malformed_element_one_line_error(tmp_path, body, words):
    path = tmp_path / "bad.urdf"
    path.write_text(f'<robot name="bad">{body}</robot>')
    with pytest.raises(RobotError) as info:
        urdf_module.load_urdf(path, tips=["l1"])
    message = str(info.value)
    assert message == f"{path}: {words}"


def test_dynamics_not_numbers_only_with_urdf_friction(tmp_path):
    path = tmp_path / "dyn.urdf"
    path.write_text(f'<robot name="dyn">{GOOD_LINKS}<joint name="j1" type="revolute"><parent link="base"/>'
                    '<child link="l1"/><axis xyz="0 0 1"/><dynamics damping="lots"/></joint></robot>')
    assert urdf_module.load_urdf(path).actuators is None
    with pytest.raises(RobotError, match=r"joint 'j1': <dynamics> damping/friction are not numbers"):
        urdf_module.load_urdf(path, urdf_friction=True)


def test_load_urdf_without_yourdfpy():
    """pip install . does not install yourdfpy (nor trimesh, lxml): soagen must not import them."""
    code = (
        "import sys\n"
        "for name in ('yourdfpy', 'trimesh', 'lxml', 'lxml.etree'):\n"
        "    sys.modules[name] = None  # import fails\n"
        "import soagen\n"
        f"robot = soagen.load_urdf({str(BUNDLED / 'panda.urdf')!r}, tips=['panda_link8'])\n"
        "assert robot.nb == 9, robot.nb\n"
        "assert not any(sys.modules.get(n) for n in ('yourdfpy', 'trimesh', 'lxml'))\n"
        "print('ok', robot.nb)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and res.stdout.strip() == "ok 9", res.stderr
