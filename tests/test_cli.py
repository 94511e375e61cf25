"""The command line (``python -m soagen``, as the ``soagen`` script): generate, check,
and one-line errors that write nothing; warnings and notes on stderr."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BAD = Path(__file__).parent / "data" / "bad"

# file -> words of the one-line error: the dynamics is undefined or the file is not a
# robot tree; refused with or without --strict
REFUSED = {
    "malformed_xml.urdf": "invalid XML",
    "not_xml.urdf": "invalid XML",
    "negative_mass.urdf": "mass must be finite and >= 0",
    "nan_mass.urdf": "mass must be finite",
    "nan_origin.urdf": "not finite",
    "unknown_joint_type.urdf": "unsupported joint type 'screw'",
    "floating_joint.urdf": "must connect the root link",
    "planar_joint.urdf": "unsupported joint type 'planar'",
    "loop.urdf": "loop",
    "two_roots.urdf": "several root links",
    "duplicate_link.urdf": "duplicate link name",
    "duplicate_joint.urdf": "duplicate joint name",
    "inf_mass.urdf": "mass must be finite",
    "zero_axis.urdf": "joint axis has zero length",
    "fixed_tip.urdf": "tip link 'l1' does not move",
    "no_moving_joint.urdf": "no movable joint",
    "unknown_link.urdf": "names unknown link 'nowhere'",
    "two_parents.urdf": "has two parent joints",
    "not_robot.urdf": "not <robot>",
    "nameless_robot.urdf": "no name attribute",
}
# file -> words of its warning: the file loads with a warning (the dynamics that is defined
# is generated), and --strict refuses it with those words, as soagen did before it warned
WARNED = {
    "indefinite_inertia.urdf": "not positive semi-definite",
    "triangle_inequality.urdf": "triangle inequality",
    "massless_leaf.urdf": "massless leaf",
    "zero_articulated_inertia.urdf": "D(k) = 0",
}
# of those, the ones with a joint whose D(k) is not positive: M^-1 and Lambda are not generated
SINGULAR = {"indefinite_inertia.urdf", "massless_leaf.urdf", "zero_articulated_inertia.urdf"}
# physical rigid bodies (a flywheel; non-physical links lumped into a physical body or
# welded to the fixed base; 1e-20 noise on a point mass): no warning, even with --strict
ACCEPTED = {"good_one_joint.urdf", "zero_mass_flywheel.urdf", "welded_nonphysical.urdf",
            "lumped_nonphysical.urdf"}


def soagen(*args, env=None):
    return subprocess.run([sys.executable, "-m", "soagen", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_catalogue_is_complete():
    files = {p.name for p in BAD.glob("*.urdf")}
    assert files == set(REFUSED) | set(WARNED) | ACCEPTED
    assert not (set(REFUSED) & set(WARNED) or set(WARNED) & ACCEPTED or ACCEPTED & set(REFUSED))


def _assert_refused(res, fname, words, tmp_path, out):
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("soagen: error: ") and fname in lines[0]
    assert words in lines[0]
    assert not out.exists()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
@pytest.mark.parametrize("fname", sorted(REFUSED))
def test_bad_urdf_one_line_error_nothing_written(fname, strict, tmp_path):
    out = tmp_path / "out"
    res = soagen("generate", str(BAD / fname), "--tip", "l1", "--out", str(out), *(["--strict"] if strict else []))
    _assert_refused(res, fname, REFUSED[fname], tmp_path, out)


@pytest.mark.parametrize("command", ["generate", "check", "opcount", "footprint", "profile", "parameters"])
def test_a_refused_file_is_refused_before_sympy_is_imported(command, tmp_path):
    """The file is read before the symbolic stages are imported, so an error, like --help, comes at
    once (0.4 s here; 1.1-1.2 s when sympy was imported first)."""
    argv = [command, str(BAD / "nan_mass.urdf"), "--tip", "l1"] + (["--out", str(tmp_path / "o")]
                                                                   if command == "generate" else [])
    code = f"import sys\nfrom soagen.cli import main\nrc = main({argv!r})\nprint(rc, 'sympy' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.stdout.split() == ["2", "False"], (res.stdout, res.stderr)
    assert "mass must be finite" in res.stderr


@pytest.mark.parametrize("fname", sorted(WARNED))
def test_strict_refuses_what_warns(fname, tmp_path):
    out = tmp_path / "out"
    res = soagen("generate", str(BAD / fname), "--tip", "l1", "--out", str(out), "--strict")
    _assert_refused(res, fname, WARNED[fname], tmp_path, out)


@pytest.mark.parametrize("fname", sorted(WARNED))
def test_non_physical_file_loads_with_a_warning(fname, tmp_path):
    """Without --strict: exit 0, the warning (one line, naming the file) on stderr, the
    defined functions written; with D(k) = 0 the M^-1 / Lambda ones left out, said so."""
    out = tmp_path / "out"
    res = soagen("generate", str(BAD / fname), "--tip", "l1", "--out", str(out), "--quiet")
    assert res.returncode == 0, res.stderr
    warned = [line for line in res.stderr.splitlines() if line.startswith("soagen: warning: ")]
    assert any(fname in line and WARNED[fname] in line for line in warned), res.stderr
    header = (out / "bad.h").read_text()
    assert "bad_inverse_dynamics" in header and "bad_mass_matrix(" in header
    assert ("bad_forward_dynamics" in header) == (fname not in SINGULAR)
    if fname in SINGULAR:
        left = [line for line in warned if "left out" in line]
        assert len(left) == 1 and "forward_dynamics" in left[0] and "os_inertia" in left[0]
        assert "'j1'" in left[0] and "--lock" in left[0]


@pytest.mark.parametrize("fname", sorted(ACCEPTED))
def test_physical_file_loads_under_strict_without_warning(fname, tmp_path):
    out = tmp_path / "out"
    tip = "l2" if fname == "zero_mass_flywheel.urdf" else "l1"
    res = soagen("generate", str(BAD / fname), "--tip", tip, "--out", str(out), "--quiet", "--strict",
                 "--function", "inverse_dynamics", "--function", "forward_dynamics")
    assert res.returncode == 0, res.stderr
    assert "warning" not in res.stderr, res.stderr


def test_notes_say_what_was_lumped():
    res = soagen("opcount", str(BAD / "zero_mass_flywheel.urdf"), "--function", "mass_matrix")
    assert res.returncode == 0 and "note" not in res.stderr      # opcount prints tables only
    res = soagen("check", str(BAD / "zero_mass_flywheel.urdf"), "--function", "mass_matrix", "--samples", "5",
                 "--quiet")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "soagen: note: link 'wheel' lumped into the body of link 'l1' (fixed joints)" in res.stderr.splitlines()


def test_explicit_function_needing_inverse_is_a_clean_error(tmp_path):
    out = tmp_path / "out"
    res = soagen("generate", str(BAD / "massless_leaf.urdf"), "--out", str(out), "--function", "mass_matrix",
                 "--function", "forward_dynamics_fd4")
    assert res.returncode == 2
    error = res.stderr.strip().splitlines()[-1]
    assert error.startswith("soagen: error: ") and "cannot generate forward_dynamics_fd4" in error
    assert "'j1'" in error and not out.exists()


def test_check_passes_on_what_is_defined():
    """`soagen check` on a robot with D(k) = 0 compares the functions it generated."""
    res = soagen("check", str(BAD / "massless_leaf.urdf"), "--tip", "l1", "--samples", "5", "--quiet")
    assert res.returncode == 0 and "PASS" in res.stdout, res.stdout + res.stderr
    assert "mass_matrix " in res.stdout and "jacobian " in res.stdout and "forward_dynamics" not in res.stdout


def test_lock_fixes_a_singular_joint(tmp_path):
    """The fix the message gives: locking the joint of the massless link."""
    res = soagen("generate", str(BAD / "zero_articulated_inertia.urdf"), "--lock", "j1=0.3", "--strict",
                 "--out", str(tmp_path / "o"), "--function", "forward_dynamics", "--quiet")
    assert res.returncode == 0, res.stderr
    assert "soagen: note: joint 'j1' locked at 0.3" in res.stderr


@pytest.mark.parametrize("lock, words", [("nope=0", "cannot lock unknown joint 'nope'"),
                                         ("j1=abc", "JOINT=VALUE")])
def test_bad_lock_is_a_one_line_error(lock, words, tmp_path):
    out = tmp_path / "o"
    res = soagen("generate", str(BAD / "good_one_joint.urdf"), "--tip", "l1", "--lock", lock, "--out", str(out))
    assert res.returncode == 2 and words in res.stderr, res.stderr
    assert not out.exists()


def test_unknown_tip(tmp_path):
    res = soagen("generate", str(BAD / "good_one_joint.urdf"), "--tip", "nope", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "unknown tip link 'nope'" in res.stderr
    assert os.listdir(tmp_path) == []


def test_missing_file(tmp_path):
    res = soagen("generate", str(tmp_path / "missing.urdf"), "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "no such file" in res.stderr


def test_generate_writes_header_and_source(tmp_path):
    out = tmp_path / "one"
    res = soagen("generate", str(BAD / "good_one_joint.urdf"), "--tip", "l1", "--name", "one", "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert sorted(os.listdir(out)) == ["one.c", "one.h", "opcounts.json", "opcounts.md"]
    assert "one_inverse_dynamics" in (out / "one.h").read_text()
    assert "time: load" in res.stdout and "inverse_dynamics" in res.stdout


def test_check_example_passes():
    res = soagen("check", "--example", "puma560", "--samples", "20", "--quiet")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS" in res.stdout and "FAIL" not in res.stdout


def test_opcount_command(tmp_path):
    res = soagen("opcount", "--example", "puma560", "--function", "inverse_dynamics",
                 "--json", str(tmp_path / "o.json"))
    assert res.returncode == 0, res.stderr
    assert "inverse_dynamics" in res.stdout and "the emitted C text agrees" in res.stdout
    assert '"inverse_dynamics"' in (tmp_path / "o.json").read_text()


def test_mimic_joint_is_an_independent_joint_as_in_pinocchio():
    import soagen
    from tests.support.oracle import Oracle

    path = BAD.parent / "mimic_joint.urdf"
    robot = soagen.load_urdf(path, tips=["l2"])
    assert [b.joint for b in robot.bodies] == Oracle(robot, urdf=path).joint_names == ["j1", "j2"]
    assert soagen.load_urdf(path, tips=["l2"], lock={"j2": 0.2}).n == 1


def test_full_panda_urdf_from_the_issue(tmp_path):
    """`soagen generate panda.urdf --tip panda_hand` works on the unmodified URDF (9 joints)."""
    from soagen.model import robots

    out = tmp_path / "panda9"
    res = soagen("generate", robots.urdf_path("panda"), "--tip", "panda_hand", "--name", "panda9",
                 "--out", str(out), "--function", "inverse_dynamics", "--quiet")
    assert res.returncode == 0, res.stderr
    assert "PANDA9_NQ 9" in (out / "panda9.h").read_text()


# ------------------------------------------------------------------ robots by name
@pytest.fixture
def robots_folder(tmp_path, monkeypatch):
    """A robots folder in example-robot-data's layout (two files named anymal, hyq_no_sensors, a
    panda beside the bundled one), in place of the installed one."""
    for rel in ("anymal_b/robots/anymal.urdf", "anymal_c/urdf/anymal.urdf", "hyq/robots/hyq_no_sensors.urdf",
                "solo/robots/solo12.urdf", "panda_description/urdf/panda.urdf"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("<robot name='x'/>")
    monkeypatch.setenv("EXAMPLE_ROBOT_DATA_MODEL_DIR", str(tmp_path))
    return tmp_path


def test_a_name_two_files_share_is_an_error_naming_both(robots_folder):
    from soagen import RobotError, robots

    with pytest.raises(RobotError, match="'anymal' is ambiguous") as caught:
        robots.path("anymal")
    assert "anymal_b/robots/anymal.urdf, anymal_c/urdf/anymal.urdf" in str(caught.value)
    assert robots.path("anymal_c/urdf/anymal.urdf") == str(robots_folder / "anymal_c/urdf/anymal.urdf")
    assert robots.path("solo12") == str(robots_folder / "solo/robots/solo12.urdf")


def test_an_unknown_name_suggests_near_names(robots_folder):
    from soagen import RobotError, robots

    with pytest.raises(RobotError, match=r"no robot named 'hyq'; did you mean hyq_no_sensors\?"):
        robots.path("hyq")
    with pytest.raises(RobotError, match=r"did you mean solo12\?"):
        robots.path("slo12")


def test_examples_lists_every_robot_by_the_name_path_takes(robots_folder, capsys):
    from soagen import cli, robots

    assert cli.main(["examples"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert listed == ["puma560", "panda", "ur5", "anymal_b/robots/anymal.urdf", "anymal_c/urdf/anymal.urdf",
                      "hyq_no_sensors", "panda_description/urdf/panda.urdf", "solo12"]
    for name in listed[1:]:
        assert os.path.isfile(robots.path(name))


def test_check_counts_the_joints_apart_from_a_floating_base(tmp_path):
    urdf = tmp_path / "body.urdf"       # good_one_joint.urdf with a massive root link
    urdf.write_text((BAD / "good_one_joint.urdf").read_text().replace(
        '<link name="base"/>', '<link name="base"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" '
        'ixy="0" ixz="0" iyz="0"/></inertial></link>'))
    res = soagen("check", str(urdf), "--tip", "l1", "--floating-base", "--function", "inverse_dynamics",
                 "--optimize", "O0", "--samples", "3", "--quiet")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "soagen check: bad: 1 joint and a floating base (nv 7), 1 tips, double" in res.stderr


# ------------------------------------------------------------------ soagen info
def test_info_lists_joints_links_and_candidate_tips(capsys):
    from soagen import cli

    assert cli.main(["info", "--example", "panda", "--lock", "panda_joint7=0.1"]) == 0
    out = capsys.readouterr().out
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert "6 joints, fixed base; nq 6, nv 6; tips: panda_hand" in lines
    assert "5 panda_joint6 revolute panda_link5 -> panda_link6 1 1" in lines
    assert "- panda_joint7 revolute, locked at 0.1 panda_link6 -> panda_link7 0 0" in lines
    assert "- panda_hand_joint fixed panda_link8 -> panda_hand 0 0" in lines
    assert "panda_hand 0.73 with panda_link6" in lines and "panda_link0 0.629769 fixed to the base" in lines
    tips = lines[lines.index("candidate tips (links that move, with no moving link below them):") + 1]
    assert tips == "panda_link6, panda_link7, panda_link8, panda_hand, panda_hand_tcp, panda_leftfinger, panda_rightfinger"
    assert "warnings on load: none" in lines and "joint 'panda_joint7' locked at 0.1" in lines


def test_info_prints_what_loading_warns(capsys):
    from soagen import cli

    assert cli.main(["info", str(BAD / "massless_leaf.urdf")]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert "warnings on load: 1" in lines and "massless leaf 'l1'" in lines[lines.index("warnings on load: 1") + 1]
    assert "warning" not in captured.err
    assert lines[1] == "1 joint, fixed base; nq 1, nv 1; tips: none"


@pytest.mark.parametrize("robot", [["--example", "ur5"], [str(BAD.parent / "mimic_joint.urdf"), "--tip", "l2"]],
                         ids=["example", "file"])
def test_info_never_imports_sympy(robot):
    code = f"import sys\nfrom soagen.cli import main\nrc = main({['info', *robot]!r})\nprint(rc, 'sympy' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.stdout.split()[-2:] == ["0", "False"], (res.stdout, res.stderr)
    assert "candidate tips" in res.stdout


def test_the_robot_argument_takes_a_robots_name(capsys):
    """Every subcommand's ROBOT is a file or a name as ``soagen.robots.path`` takes it: a bundled robot's
    name is ``--example NAME``, another is example-robot-data's file (the test extra installs it)."""
    from soagen import cli, robots

    assert cli.main(["info", "ur5"]) == 0
    by_name = capsys.readouterr().out
    assert cli.main(["info", "--example", "ur5"]) == 0
    assert by_name == capsys.readouterr().out and "tips: tool0" in by_name
    assert cli.main(["info", "double_pendulum"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith(f"(URDF, {robots.path('double_pendulum')})"), out
    assert "2 joints, fixed base" in out
    for command in ("check", "generate", "opcount", "footprint", "profile", "parameters", "info"):
        extra = ["--out", "/nowhere"] if command == "generate" else []
        assert cli.main([command, "double_pendulm", *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith("soagen: error: no robot named 'double_pendulm'; did you mean double_pendulum"), err
    assert cli.main(["info", "missing/robot.urdf"]) == 2
    assert "missing/robot.urdf: no such file, nor a robot's name" in capsys.readouterr().err
