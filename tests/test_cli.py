"""The command line: generate, check, and one-line errors that write nothing."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BAD = Path(__file__).parent / "data" / "bad"

# file -> words the one-line error must contain
BAD_CASES = {
    "malformed_xml.urdf": "invalid XML",
    "not_xml.urdf": "invalid XML",
    "negative_mass.urdf": "mass must be finite and >= 0",
    "nan_mass.urdf": "mass must be finite",
    "nan_origin.urdf": "not finite",
    "indefinite_inertia.urdf": "not positive semi-definite",
    "triangle_inequality.urdf": "triangle inequality",
    "unknown_joint_type.urdf": "unsupported joint type 'screw'",
    "floating_joint.urdf": "must connect the root link",
    "planar_joint.urdf": "unsupported joint type 'planar'",
    "loop.urdf": "loop",
    "two_roots.urdf": "several root links",
    "massless_leaf.urdf": "massless leaf",
    "duplicate_link.urdf": "duplicate link name",
    "zero_articulated_inertia.urdf": "D(k) = 0",
    "duplicate_joint.urdf": "duplicate joint name",
    "inf_mass.urdf": "mass must be finite",
}


def soagen(*args, env=None):
    return subprocess.run([sys.executable, "-m", "soagen.cli", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_catalogue_is_complete():
    files = {p.name for p in BAD.glob("*.urdf")} - {"good_one_joint.urdf"}
    assert files == set(BAD_CASES)


@pytest.mark.parametrize("fname", sorted(BAD_CASES))
def test_bad_urdf_one_line_error_nothing_written(fname, tmp_path):
    out = tmp_path / "out"
    res = soagen("generate", str(BAD / fname), "--tip", "l1", "--out", str(out))
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("soagen: error: ") and fname in lines[0]
    assert BAD_CASES[fname] in lines[0]
    assert not out.exists()
    assert os.listdir(tmp_path) == []


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
    from soagen import robots

    out = tmp_path / "panda9"
    res = soagen("generate", robots.urdf_path("panda"), "--tip", "panda_hand", "--name", "panda9",
                 "--out", str(out), "--function", "inverse_dynamics", "--quiet")
    assert res.returncode == 0, res.stderr
    assert "PANDA9_NQ 9" in (out / "panda9.h").read_text()
