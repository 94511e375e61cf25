"""MJCF models (issue #23): soagen.load_mjcf against MuJoCo itself, against Pinocchio's MJCF
reader, and the generated C against both; the corpus table (docs/mjcf_corpus.*) against a
live rerun of a sample of its rows; a mutated robot fails every check; point tips of bodies
and sites against mj_jac; and what works on a URDF robot works on an MJCF one (every catalogue
function and variant, soagen check and opcount, SIMD batches, float C on a Cortex-M4F)."""
from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import warnings

import mujoco  # the test extra installs it: never skipped
import numpy as np
import pytest

import soagen
from soagen import functions as F
from soagen import mujoco_convention as mc
from soagen import reference
from soagen.check import check_module, random_inputs
from tests.support import ROOT, assert_checked, benchmark_script
from tests.support.builds import built


def _corpus_module():
    return benchmark_script("mjcf_corpus")


C = _corpus_module()
TOL = C.TOLERANCE

#: hand-made to show every joint MuJoCo has: a free root, a ball with its anchor away from
#: the body origin, three joints (hinge, slide, hinge) in one body with anchors and refs,
#: a body without joint (lumped), a site with a rotation, a second tree with armature,
#: damping, friction loss and a spring
MIXED = ROOT / "tests" / "data" / "mjcf" / "mixed.xml"
MIXED_TIPS = ["grip", "fore", "tool", "base"]


def _load(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", soagen.ModelWarning)
        return soagen.load_mjcf(path, **kwargs)


@pytest.fixture(scope="module")
def mixed():
    return MIXED, _load(MIXED, tips=MIXED_TIPS)


def assets():
    return dict(C.corpus())


# ------------------------------------------------------------------ the reader against MuJoCo
def test_mixed_model_has_every_joint_in_mujoco_order(mixed):
    path, robot = mixed
    assert [b.joint for b in robot.bodies] == ["root", "shoulder", "elbow_x", "elbow_s", "elbow_z", "yaw", "pitch"]
    assert [b.joint_type for b in robot.bodies] == ["floating", "spherical", "revolute", "prismatic", "revolute",
                                                    "revolute", "revolute"]
    model = mujoco.MjModel.from_xml_path(str(path))
    assert (robot.nq, robot.nv) == (model.nq, model.nv) == (16, 14)
    # the three joints of 'fore' are a chain: two massless bodies, the last one carrying fore and hand
    assert [robot.bodies[k].mass for k in (2, 3)] == [0.0, 0.0]
    assert robot.bodies[4].mass == pytest.approx(0.9)
    np.testing.assert_allclose(robot.gravity, model.opt.gravity)
    np.testing.assert_array_equal(_load(path, gravity=(0, 0, -1)).gravity, [0, 0, -1])
    np.testing.assert_allclose(robot.actuators.armature, model.dof_armature)


def test_mixed_model_agrees_with_mujoco(mixed):
    path, robot = mixed
    err = C.compare(robot, C.MujocoOracle(robot, path), reference)
    assert max(err.values()) <= TOL, err
    assert min(err.values()) >= 0.0


def test_forward_kinematics_of_sites_and_bodies(mixed):
    """Tip poses against MuJoCo's site_xpos/xmat and xpos/xmat (the site rotation included)."""
    path, robot = mixed
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = robot.random_configuration(rng)
        data.qpos[:] = mc.q_to_mujoco(robot, q)
        mujoco.mj_kinematics(model, data)
        T = reference.forward_kinematics(robot, q)
        for i, name in enumerate(MIXED_TIPS):
            site = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, name)
            body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)
            pos, rot = ((data.site_xpos[site], data.site_xmat[site]) if site >= 0 else
                        (data.xpos[body], data.xmat[body]))
            np.testing.assert_allclose(T[i, :3, 3], pos, rtol=0, atol=1e-14)
            np.testing.assert_allclose(T[i, :3, :3], rot.reshape(3, 3), rtol=0, atol=1e-14)


def test_conventions_round_trip(mixed):
    _, robot = mixed
    rng = np.random.default_rng(2)
    q, qd, qdd, _ = robot.random_state(rng)
    np.testing.assert_array_equal(mc.q_from_mujoco(robot, mc.q_to_mujoco(robot, q)), q)
    assert mc.q_to_mujoco(robot, q)[3:7].tolist() == [q[6], q[3], q[4], q[5]]     # free: (w, x, y, z)
    np.testing.assert_allclose(mc.v_from_mujoco(robot, q, mc.v_to_mujoco(robot, q, qd)), qd, atol=1e-15)
    np.testing.assert_allclose(mc.a_from_mujoco(robot, q, qd, mc.a_to_mujoco(robot, q, qd, qdd)), qdd, atol=1e-14)
    M = reference.mass_matrix(robot, q)
    np.testing.assert_allclose(mc.matrix_from_mujoco(robot, q, mc.matrix_to_mujoco(robot, q, M)), M, atol=1e-14)
    J = reference.jacobian(robot, q)
    np.testing.assert_allclose(mc.jacobian_from_mujoco(robot, q, mc.jacobian_to_mujoco(robot, q, J)), J, atol=1e-14)


def test_damping_as_viscous_friction(mixed):
    path, _ = mixed
    robot = _load(path, tips=MIXED_TIPS, mjcf_damping=True)
    model = mujoco.MjModel.from_xml_path(str(path))
    np.testing.assert_allclose(robot.actuators.viscous, model.dof_damping)
    err = C.compare(robot, C.MujocoOracle(robot, path, damping=True), reference, states=4)
    assert max(err.values()) <= TOL, err
    # without it, MuJoCo's dampers make the difference
    plain = _load(path, tips=MIXED_TIPS)
    assert C.compare(plain, C.MujocoOracle(plain, path, damping=True), reference, states=2)["inverse_dynamics"] > 1e-4


# ------------------------------------------------------------------ a wrong model fails
def _flip_axis(robot, joint):
    bodies = tuple(dataclasses.replace(b, axis=-b.axis) if b.joint == joint else b for b in robot.bodies)
    return dataclasses.replace(robot, bodies=bodies)


@pytest.mark.parametrize("check", C.CHECKS)
def test_flipped_axis_fails_every_check(mixed, check):
    path, robot = mixed
    oracle = C.MujocoOracle(robot, path)
    assert C.compare(robot, oracle, reference, states=2)[check] <= TOL
    assert C.compare(_flip_axis(robot, "elbow_z"), oracle, reference, states=2)[check] > 1e-6


@pytest.mark.parametrize("check", ["mass_matrix", "inverse_dynamics", "forward_dynamics"])
def test_changed_armature_fails(mixed, check):
    path, robot = mixed
    armature = {b.joint: 0.05 for b in robot.bodies if b.nv == 1}     # 'pitch' has 0.02 in the file
    wrong = robot.with_actuators(armature=armature)
    assert C.compare(wrong, C.MujocoOracle(robot, path), reference, states=2)[check] > 1e-6


def test_errors_are_not_blind_to_zeros():
    assert C.rel(np.zeros(3), np.array([1.0, 2.0, 0.0])) == 1.0


# ------------------------------------------------------------------ generated C = reference = MuJoCo
@pytest.fixture(scope="module")
def mixed_module(mixed):
    _, robot = mixed
    return soagen.build(robot, functions=["mass_matrix", "bias_forces", "inverse_dynamics", "forward_dynamics",
                                          "jacobian"], optimize="O0")


def test_generated_c_agrees_with_mujoco_and_reference(mixed, mixed_module):
    path, robot = mixed
    route = C.module_route(mixed_module)
    assert max(C.compare(robot, C.MujocoOracle(robot, path), route, states=4).values()) <= TOL
    rng = np.random.default_rng(3)
    q, qd, qdd, _ = robot.random_state(rng)
    assert C.rel(mixed_module.mass_matrix(q), reference.mass_matrix(robot, q)) <= TOL
    assert C.rel(mixed_module.inverse_dynamics(q, qd, qdd), reference.inverse_dynamics(robot, q, qd, qdd)) <= TOL


def test_float_build_of_a_corpus_model():
    path = assets()["reacher.xml"]
    robot = _load(path, tips=["fingertip"])
    mod = soagen.build(robot, functions=["mass_matrix", "jacobian"], precision="float", optimize="O0")
    oracle = C.MujocoOracle(robot, path)
    q = robot.random_configuration(np.random.default_rng(4))
    assert C.rel(mod.mass_matrix(q), oracle.mass_matrix(q)) < 1e-5
    assert C.rel(mod.jacobian(q), oracle.jacobian(q)) < 1e-5


def test_cli_check_on_an_mjcf_file():
    path = assets()["inverted_pendulum.xml"]
    res = subprocess.run([sys.executable, "-m", "soagen.cli", "check", str(path), "--tip", "pole", "--optimize", "O0",
                          "--point-tip", "pole:0,0,0.3", "--function", "mass_matrix", "--function", "jacobian",
                          "--samples", "5", "--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS" in res.stdout and "2 joints, 2 tips" in res.stderr
    assert "soagen: note: 1 actuators" in res.stderr and "soagen: warning:" in res.stderr   # damping left out


# ------------------------------------------------------------------ against Pinocchio's MJCF reader
@pytest.mark.parametrize("name", ["humanoid.xml", "hopper.xml"])
def test_pinocchio_reader_agrees(name):
    path = assets()[name]
    robot = _load(path)
    err, why = C.pinocchio_errors(robot, path, states=3)
    assert why is None and err <= TOL


def _pinocchio_model(path):
    import pinocchio as pin

    model = pin.buildModelFromMJCF(str(path))
    bodies = {f.name for f in model.frames if f.type == pin.FrameType.BODY}
    return model, bodies


def _tree(body):
    """The names of a body and of every body below it."""
    return {b.get("name") for b in body.iter("body")}


@pytest.mark.parametrize("name, kept, dropped", [("reacher.xml", "body0", ["target"]),
                                                  ("pusher.xml", "r_shoulder_pan_link", ["object", "goal"])])
def test_pinocchio_reader_keeps_the_first_body_tree(name, kept, dropped):
    """What docs/mjcf_corpus.md and benchmarks/mjcf_corpus.py say of Pinocchio's MJCF reader: it
    keeps the first body tree under <worldbody> (reacher's body0, itself on a hinge to the world)
    and drops the others; the corpus row's note says so."""
    import xml.etree.ElementTree as ET

    path = assets()[name]
    trees = ET.parse(path).getroot().find("worldbody").findall("body")
    assert [t.get("name") for t in trees] == [kept, *dropped]
    model, bodies = _pinocchio_model(path)
    assert _tree(trees[0]) <= bodies
    assert not any(_tree(t) & bodies for t in trees[1:])
    first = model.names[1]
    assert model.names[model.parents[1]] == "universe" and first in {j.get("name") for j in trees[0].iter("joint")}
    mj = mujoco.MjModel.from_xml_path(str(path))
    first_tree_dofs = sum(int(mj.body_dofnum[mj.body(b).id]) for b in _tree(trees[0]))
    assert model.nv == first_tree_dofs < mj.nv
    note = {r["model"]: r for r in _committed()["rows"]}[name]["pinocchio_note"]
    assert note == f"Pinocchio's reader has nv = {model.nv} (keeps only the first body tree under `<worldbody>`)"


def test_pinocchio_reader_leaves_out_geoms_that_do_not_collide(tmp_path):
    """swimmer.xml's zero mass in Pinocchio's reader: its geoms all have contype = conaffinity = 0
    (its <default>), which the reader leaves out of the inertia; with either set to 1 the masses are
    MuJoCo's."""
    path = assets()["swimmer.xml"]
    text = path.read_text()
    default = 'conaffinity="0" condim="1" contype="0"'
    assert text.count(default) == 1 and "contype=" not in text.replace(default, "")
    mj = mujoco.MjModel.from_xml_path(str(path))
    masses = [float(mj.body(b).mass[0]) for b in ("torso", "mid", "back")]
    model, _ = _pinocchio_model(path)
    assert [I.mass for I in model.inertias[1:]] == [0.0, 0.0, 0.0]
    assert [round(m, 1) for m in masses] == [35.6] * 3 and "its three bodies 35.6 kg" in C.PIN_NOTES
    for contype, conaffinity in ((1, 0), (0, 1)):
        edited = tmp_path / f"swimmer_{contype}{conaffinity}.xml"
        edited.write_text(text.replace(default, f'conaffinity="{conaffinity}" condim="1" contype="{contype}"'))
        model, _ = _pinocchio_model(edited)
        assert np.allclose([I.mass for I in model.inertias[1:]], masses, rtol=1e-12)


# ------------------------------------------------------------------ what MuJoCo adds
def test_humanoid_notes_and_warnings():
    path = assets()["humanoid.xml"]
    with pytest.warns(soagen.ModelWarning) as caught:
        robot = soagen.load_mjcf(path)
    warned = " ".join(str(w.message) for w in caught)
    for what in ("damping", "stiffness"):
        assert what in warned
    notes = " ".join(robot.notes)
    for what in ("armature of 17 joints", "2 tendons", "17 actuators", "damping", "stiffness", "geoms can collide",
                 "limits of 17 joints"):
        assert what in notes, what
    with pytest.raises(soagen.RobotError, match="refused: strict"):
        soagen.load_mjcf(path, strict=True)


def test_lock_a_joint(mixed):
    path, _ = mixed
    robot = _load(path, tips=["tool"], lock={"elbow_s": 0.05, "pitch": 0.4})
    assert [b.joint for b in robot.bodies] == ["root", "shoulder", "elbow_x", "elbow_z", "yaw"]
    assert robot.nv == 12 and "joint 'pitch' locked at 0.4" in robot.notes


REFUSED = {
    "ball then hinge": ('<body><joint type="ball"/><joint type="hinge"/><geom size=".1"/></body>',
                        "MuJoCo cannot compile it: Error: ball followed by rotation"),
    "ball armature": ('<body><joint type="ball" armature="1"/><geom size=".1"/></body>', "armature of the spherical"),
    "nested free": ('<body><joint type="hinge"/><geom size=".1"/><body><freejoint/><geom size=".1"/></body></body>',
                    "MuJoCo cannot compile it: Error: free joint can only be used on top level"),
    "no joint": ('<body><geom size=".1"/></body>', "no joint"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_a_reason(tmp_path, case):
    body, reason = REFUSED[case]
    path = tmp_path / "m.xml"
    path.write_text(f"<mujoco><worldbody>{body}</worldbody></mujoco>")
    with pytest.raises(soagen.RobotError, match=reason):
        soagen.load_mjcf(path)


def test_unknown_tip_and_broken_files(tmp_path, mixed):
    path, _ = mixed
    with pytest.raises(soagen.RobotError, match="unknown tip 'nothing'"):
        _load(path, tips=["nothing"])
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><joint type='hinge'/></body>")
    with pytest.raises(soagen.RobotError, match="MuJoCo cannot compile it"):
        soagen.load_mjcf(bad)
    assert soagen.mjcf.is_mjcf(path) and not soagen.mjcf.is_mjcf(soagen.robots.path("panda"))


def test_a_urdf_is_not_read_as_mjcf_nor_an_mjcf_as_urdf(mixed):
    """Each reader looks at the root element first and names the other reader in one line."""
    urdf = soagen.robots.path("panda")          # its meshes would fail inside MuJoCo
    with pytest.raises(soagen.RobotError, match=r"^\S+panda.urdf: root element is <robot>, not <mujoco>: not an "
                                                r"MJCF file; it is a URDF, which soagen.load_urdf reads$"):
        soagen.load_mjcf(urdf)
    with pytest.raises(soagen.RobotError, match=r"^\S+mixed.xml: root element is <mujoco>, not <robot>: not a "
                                                r"URDF file; it is an MJCF, which soagen.load_mjcf reads$"):
        soagen.load_urdf(mixed[0])


# ------------------------------------------------------------------ the corpus table
def _committed():
    return json.loads(C.JSON_PATH.read_text())


#: the cheapest rows (a fraction of a second each), made again by every run of the corpus test
LIVE_SAMPLE = ["inverted_pendulum.xml", "reacher.xml"]


def _errors(r):
    return {**r["errors"], **({"pinocchio": r["pinocchio"]} if r["pinocchio"] is not None else {})}


def _assert_row_as_committed(name):
    """Make the corpus row of ``name`` again: the committed row's model, sizes and notes, and errors of
    the same decade (round-off, whose last digit follows the machine's numpy and MuJoCo kernels),
    each within the tolerance; returns the fresh row."""
    committed = {r["model"]: r for r in _committed()["rows"]}[name]
    row = C.row(name, assets()[name])
    assert {k: v for k, v in row.items() if k not in ("errors", "pinocchio")} == \
        {k: v for k, v in committed.items() if k not in ("errors", "pinocchio")}
    got, want = _errors(row), _errors(committed)
    assert got.keys() == want.keys()
    decade = lambda v: np.log10(max(float(v), 1e-22))
    for f, e in got.items():
        assert abs(decade(e) - decade(want[f])) <= 1, (f, e, want[f])
        assert float(e) <= TOL, (name, f, e)
    return row


def test_corpus_is_every_asset_and_passes():
    """The committed table has a row per asset of the corpus, each passing; and the corpus code,
    run now on a sample, makes those rows again (the table is not only what was written once)."""
    doc = _committed()
    assert [r["model"] for r in doc["rows"]] == [name for name, _ in C.corpus()]
    assert doc["meta"]["mujoco"] == mujoco.__version__
    for r in doc["rows"]:
        assert "refused" in r or max(float(v) for v in r["errors"].values()) <= TOL, r
    for name in LIVE_SAMPLE:
        _assert_row_as_committed(name)


@pytest.mark.parametrize("name", ["hopper.xml", "humanoid.xml"])
def test_corpus_rows_rerun(name):
    """A committed row made again (beside the live sample of the corpus test)."""
    _assert_row_as_committed(name)


def test_corpus_page_is_rendered_from_the_json():
    doc = _committed()
    assert C.MD_PATH.read_text() == C.render(doc["rows"], doc["meta"])


def _python_blocks(text):
    """The fenced ```python blocks of a markdown text, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def test_readme_mujoco_snippet_runs(capsys):
    """Every Python block of the README's "MuJoCo models" section, run as written: the module's M is
    MuJoCo's."""
    section = (ROOT / "README.md").read_text().split("## MuJoCo models", 1)[1].split("\n## ", 1)[0]
    blocks = _python_blocks(section)
    assert blocks
    scope = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", soagen.ModelWarning)
        for code in blocks:
            exec(compile(code, "README.md", "exec"), scope)
    printed = float(capsys.readouterr().out.split()[-1])
    assert printed <= TOL * np.max(np.abs(scope["M"]))
    assert "soagen generate" in section and "--tip fingertip" in section


# ------------------------------------------------------------------ MuJoCo's API across releases
def _columns_of_mulm(model, data):
    """Dense M (nv, nv) from ``mj_mulM`` (the same call on every 3.x release), one column at a time."""
    M = np.zeros((model.nv, model.nv))
    for i in range(model.nv):
        res = np.zeros(model.nv)
        mujoco.mj_mulM(model, data, res, np.eye(model.nv)[i])
        M[:, i] = res
    return M


class _DataWithoutQM:
    """An MjData as later mujoco releases have it: no ``qM`` (M lives in their own layout)."""

    def __init__(self, data):
        self.data = data


class _LaterMujoco:
    """The ``mujoco`` module of 3.10 and later, as far as :func:`mc.full_mass_matrix` sees it:
    ``mj_fullM(model, data, dst)``, which refuses other argument types with a TypeError as the
    bindings do."""

    def __init__(self):
        self.calls = []

    def mj_fullM(self, model, data, dst):
        if not isinstance(model, mujoco.MjModel) or not isinstance(data, _DataWithoutQM) \
                or not isinstance(dst, np.ndarray):
            raise TypeError("mj_fullM(): incompatible function arguments")
        self.calls.append("mj_fullM(model, data, dst)")
        dst[:] = _columns_of_mulm(model, data.data)


def _floating_state(mixed):
    path, robot = mixed
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    data.qpos[:] = mc.q_to_mujoco(robot, robot.random_configuration(np.random.default_rng(4)))
    mujoco.mj_forward(model, data)
    return model, data


def test_full_mass_matrix_of_the_installed_mujoco(mixed):
    model, data = _floating_state(mixed)
    M = mc.full_mass_matrix(model, data)
    assert M.shape == (model.nv, model.nv) == (14, 14)
    np.testing.assert_allclose(M, _columns_of_mulm(model, data), rtol=0, atol=1e-13)


def test_full_mass_matrix_of_a_later_mujoco(mixed, monkeypatch):
    """mujoco 3.10 and later: ``mj_fullM(model, data, dst)``; by 3.17 ``MjData`` has no ``qM``."""
    model, data = _floating_state(mixed)
    later = _LaterMujoco()
    monkeypatch.setitem(sys.modules, "mujoco", later)
    M = mc.full_mass_matrix(model, _DataWithoutQM(data))
    monkeypatch.undo()
    assert later.calls == ["mj_fullM(model, data, dst)"]
    np.testing.assert_allclose(M, _columns_of_mulm(model, data), rtol=0, atol=1e-13)


#: where the version-dependent calls may be written: the helper, and the fake of this test file
_FULLM_ALLOWED = {"generator/model/mujoco_convention.py", "tests/test_mjcf.py"}


def _code(path):
    """The Python a file holds: all of a .py file, the ```python blocks of a .md page."""
    text = path.read_text()
    return text if path.suffix == ".py" else "".join(_python_blocks(text))


def test_mass_matrix_of_mujoco_only_through_the_helper():
    """No code, and no Python block of a page, calls ``mj_fullM`` or reads ``qM`` itself: those changed
    between mujoco releases, and :func:`mc.full_mass_matrix` hides the change."""
    paths = [ROOT / "README.md"] + [path for folder in ("generator", "tests", "benchmarks", "examples", "docs", ".ci")
                                    for path in sorted((ROOT / folder).rglob("*")) if path.suffix in (".py", ".md")]
    found = [f"{path.relative_to(ROOT)}: {m}" for path in paths
             if path.relative_to(ROOT).as_posix() not in _FULLM_ALLOWED
             for m in re.findall(r"mj_fullM\(|\.qM\b", _code(path))]
    assert not found, found


# ------------------------------------------------------------------ point tips of bodies and sites
def _mj_state(path, robot, q):
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    data.qpos[:] = mc.q_to_mujoco(robot, q)
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    return model, data


def test_point_tips_of_sites_and_bodies_are_mj_jac_translational_rows(mixed):
    """soagen.point_tip of a site, of a site with an offset (in the site's rotated frame), of a body
    with an offset, beside a full tip: 3 rows each, MuJoCo's jacp at that point (mj_jacSite for the
    site itself, mj_jac at the world point otherwise), through the free joint's velocity map."""
    path, _ = mixed
    off = (0.05, -0.02, 0.03)
    robot = _load(path, tips=[soagen.point_tip("grip"), "tool", soagen.point_tip("grip", off),
                              soagen.point_tip("fore", off)])
    assert [t.point for t in robot.tips] == [True, False, True, True]
    assert [t.name for t in robot.tips] == ["grip", "tool", "grip", "fore"] and robot.tip_rows == 15
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = robot.random_configuration(rng)
        model, data = _mj_state(path, robot, q)
        nv = model.nv
        jac = {k: (np.zeros((3, nv)), np.zeros((3, nv))) for k in ("site", "tool", "site_off", "body_off")}
        site = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, "grip")
        mujoco.mj_jacSite(model, data, *jac["site"], site)
        mujoco.mj_jacSite(model, data, *jac["tool"], mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, "tool"))
        point = data.site_xpos[site] + data.site_xmat[site].reshape(3, 3) @ off
        mujoco.mj_jac(model, data, *jac["site_off"], point, int(model.site_bodyid[site]))
        body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "fore")
        mujoco.mj_jac(model, data, *jac["body_off"], data.xpos[body] + data.xmat[body].reshape(3, 3) @ off, body)
        J = reference.jacobian(robot, q)
        T = mc.velocity_map(robot, q)
        assert J.shape == (15, robot.nv)
        for rows, k in ((slice(0, 3), "site"), (slice(9, 12), "site_off"), (slice(12, 15), "body_off")):
            np.testing.assert_allclose(J[rows], jac[k][0] @ T, rtol=0, atol=1e-13, err_msg=k)
        np.testing.assert_allclose(J[3:9], np.vstack([jac["tool"][1], jac["tool"][0]]) @ T, rtol=0, atol=1e-13)
        np.testing.assert_allclose(mc.jacobian_from_mujoco(robot, q, [jac[k] for k in jac]), J, rtol=0, atol=1e-13)
        back = mc.jacobian_to_mujoco(robot, q, J)
        assert back[0][1] is None and back[1][1] is not None
        np.testing.assert_allclose(mc.jacobian_from_mujoco(robot, q, back), J, rtol=0, atol=1e-14)
    # the oracle of the corpus (tips at a site or a body origin) honours the point rows too
    plain = _load(path, tips=[soagen.point_tip("grip"), "tool"])
    assert C.compare(plain, C.MujocoOracle(plain, path), reference, states=2)["jacobian"] <= TOL


#: a 3-dof arm in space: a point tip at its pen has 3 rows moved by 3 joints, so Λ(0) exists
#: (every gymnasium model small enough to build in a test is planar: Λ(0) of its tips never exists)
ARM3 = ROOT / "tests" / "data" / "mjcf" / "arm3.xml"


# ------------------------------------------------------------------ everything else, as on a URDF robot
REACHER_TIPS = ["fingertip"]


def _reacher():
    return _load(assets()["reacher.xml"], tips=REACHER_TIPS)


def _every(robot):
    """The specs of the default functions and every variant of ``robot``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", soagen.ModelWarning)
        return F.select(robot, soagen.Options(variants=None))


def _reacher_module():
    """reacher.xml with its fingertip: every default function and every variant, and the SIMD batches (O0)."""
    with warnings.catch_warnings():     # Λ(0) of a 6-row tip on a planar arm never exists: said once, here
        warnings.simplefilter("ignore", soagen.ModelWarning)
        return built("mjcf_reacher", _reacher, variants=None, simd=True)


def test_every_catalogue_function_and_variant_on_an_mjcf_robot():
    """soagen.check over the default functions and every variant of reacher.xml: each one compared
    on every state, but those that invert Ω(0), UNTESTED as on any robot whose Λ(0) cannot exist
    (a planar arm, a 6-row tip); the next test compares those on a 3-dof arm in space."""
    robot, mod = _reacher_module()
    assert set(mod.ops) == {s.name for s in _every(robot)}
    assert {"mass_matrix_ne", "forward_dynamics_fd2", "os_inertia_recursive"} <= set(mod.ops)
    results = check_module(robot, mod, samples=20, seed=3)
    assert_checked(robot, results, 20)
    assert all(r.compared == 20 for r in results.values() if r.solves != "Omega")
    assert {n for n, r in results.items() if r.untested} == {n for n, r in results.items() if r.solves == "Omega"}


def test_operational_space_functions_on_an_mjcf_point_tip():
    """The functions that invert Ω(0) (and J, Ω(0)) on ARM3's pen as a point tip (3 rows): compared on
    every state, the generated J is MuJoCo's jacp."""
    robot = _load(ARM3, tips=[soagen.point_tip("pen")])
    names = ["jacobian", "os_inertia_inverse"] + [s.name for s in _every(robot) if s.solves == "Omega"]
    _, mod = built("mjcf_arm3", lambda: robot, functions=names)
    results = check_module(robot, mod, samples=20, seed=4)
    assert len(results) == len(names) >= 9
    assert_checked(robot, results, 20)
    assert all(r.compared >= 15 for r in results.values()), results
    oracle, rng = C.MujocoOracle(robot, ARM3), np.random.default_rng(8)
    for q in (robot.random_configuration(rng) for _ in range(3)):
        assert mod.jacobian(q).shape == (3, 3) and C.rel(mod.jacobian(q), oracle.jacobian(q)) <= TOL


def test_cli_opcount_on_an_mjcf_file(tmp_path):
    """`soagen opcount reacher.xml --tip fingertip --variants`: a row per function of the module's
    catalogue, the counts of the Python API's build, the C text's own counts agree (the CLI checks)."""
    robot, mod = _reacher_module()
    res = subprocess.run([sys.executable, "-m", "soagen", "opcount", str(assets()["reacher.xml"]), "--tip", "fingertip",
                          "--variants", "--json", str(tmp_path / "o.json")], capture_output=True, text=True, cwd=ROOT,
                         check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "the emitted C text agrees" in res.stdout
    header, *lines = [x.split() for x in res.stdout.splitlines()[:-1]]
    assert header == ["function", "mul", "add", "div", "sqrt", "trig", "statements"]
    printed = {x[0]: dict(zip(header[1:], map(int, x[1:]))) for x in lines}
    assert set(printed) == set(mod.ops)
    for name, counts in printed.items():
        assert counts == {k: mod.ops[name][k] for k in counts}, name
    assert printed["mass_matrix"]["mul"] > 0 and printed["inverse_dynamics"]["trig"] == 2   # cos, sin of 2 hinges
    assert printed["osc_torque"]["statements"] > printed["inverse_dynamics"]["statements"] > 10
    saved = json.loads((tmp_path / "o.json").read_text())
    assert saved["robot"] == robot.name and saved["functions"]["forward_dynamics"] == \
            {**mod.ops["forward_dynamics"], "fma": saved["functions"]["forward_dynamics"]["fma"]}


def test_simd_batches_on_an_mjcf_robot():
    """Every function of reacher.xml in SIMD batches (two full vectors and a tail) equals its single
    calls bit for bit; those that invert Ω(0) count every row singular, as each single call says."""
    robot, mod = _reacher_module()
    count = 2 * mod.simd_lanes + 3
    rng = np.random.default_rng(5)
    states = [random_inputs(robot, rng) for _ in range(count)]
    compared = singular = 0
    for name in mod.ops:
        spec = F.BY_NAME[name]
        rows = [[s[a] for a in spec.inputs] for s in states]
        batch = [np.array([r[i] for r in rows]) for i in range(len(spec.inputs))]
        if spec.solves == "Omega":
            with pytest.raises(soagen.SingularError, match=f"in {count} of {count} rows"):
                mod.call(name, *batch)
            with pytest.raises(soagen.SingularError):
                mod.call(name, *rows[0])
            singular += 1
            continue
        got = mod.call(name, *batch)
        got = got if isinstance(got, list) else [got]
        singles = [mod.call(name, *r) for r in rows]
        singles = [s if isinstance(s, list) else [s] for s in singles]
        for k, g in enumerate(got):
            want = np.array([s[k] for s in singles])
            assert g.shape == want.shape, name
            assert np.array_equal(g.view(np.uint64), want.view(np.uint64)), (name, np.abs(g - want).max())
        compared += 1
    assert compared >= 20 and singular == 7 and compared + singular == len(mod.ops)


def test_float_c_of_an_mjcf_robot_on_a_cortex_m4f(tmp_path):
    """reacher.xml's inverse and forward dynamics in float, cross-compiled for the Cortex-M4F (-Os) and
    run in QEMU: the host's float run of the same C bit for bit, and the double module within float."""
    from soagen.codegen import generate
    from soagen.targets.mcu import qemu as mcu

    robot, mod = _reacher_module()
    gen = generate(robot, soagen.Options(precision="float", functions=["inverse_dynamics", "forward_dynamics"]),
                   "reacher")
    rng = np.random.default_rng(6)
    states = [[np.asarray(x, np.float32).astype(float) for x in robot.random_state(rng)] for _ in range(3)]
    inputs = {"inverse_dynamics": [[q, qd, qdd] for q, qd, qdd, _ in states],
              "forward_dynamics": [[q, qd, tau] for q, qd, _, tau in states]}
    assert [[a.name for a in p.inputs] for p in gen.programs] == [["q", "qd", "qdd"], ["q", "qd", "tau"]]
    folder = mcu.write_harness(gen, inputs, tmp_path)
    target = mcu.TARGETS["cortex-m4f"]
    text = "".join(mcu.run_qemu(elf, target, timeout=120)
                   for elf in mcu.build_images(gen, inputs, folder, target, "-Os", log_trig=True))
    assert "fault" not in text
    on_mcu = mcu.parse_output(text, np.float32)
    on_host = mcu.parse_output(mcu.run_host(folder, mcu.parse_trig(text)), np.float32)
    assert set(on_mcu) == set(on_host) == {(f, c, o) for f, o in (("inverse_dynamics", "tau"),
                                                                   ("forward_dynamics", "qdd")) for c in range(3)}
    for key, (status, values) in on_mcu.items():
        assert status == 0 and np.array_equal(values, on_host[key][1]), key
        want = mod.call(key[0], *inputs[key[0]][key[1]])
        assert C.rel(values, want) < 1e-5, (key, C.rel(values, want))
