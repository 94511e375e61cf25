"""The emitted C compiles warning-free under strict flags with gcc and clang, for
every kind of function: one translation unit per kind, double and float.

Kinds: the PUMA 560 with every function and every algorithm variant (double: the
checked-in ``generated/puma560/puma560.c``, kept current by
``test_generated_files``; float with cos/sin inputs), its default functions in
double with cos/sin inputs and in float without; a floating base carrying a
spherical joint (quaternions, 3×3 and 6×6 D(k) blocks) in double and float; a
closed chain of two arms (guarded Λ_c) in double and float; the floating base's
functions cut into parts (:mod:`soagen.program.parts`) in double and float.  The CasADi
target's ``<name>_casadi.c`` (:mod:`soagen.targets.casadi`) for the floating base with the
spherical joint (a quaternion: the tangent map; guarded functions, in a Jacobian too) and for a
chain of 1-dof joints (neither: the RK4 step, the tips' poses).
"""
from __future__ import annotations

import re
import subprocess

import pytest

import soagen
from soagen.codegen import generate
from soagen.model import robots
from soagen.targets.casadi.emit import emit_casadi, needed
from tests.support import ROOT
from tests.support.robots import random_robot
from tests.test_parts import small_parts

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wconversion", "-Wdouble-promotion",
          "-Werror", "-O1", "-c"]
COMPILERS = ["gcc", "clang"]   # .ci/run installs both


def multi_dof():
    """A floating base (q: position + quaternion) carrying a spherical joint, one tip."""
    robot = random_robot(1, 1, tips=1, spherical_fraction=1.0, floating_base=True)
    assert [b.joint_type for b in robot.bodies] == ["floating", "spherical"]
    return robot


def two_arm_chain():
    a, b = random_robot(3, 3, prismatic_fraction=0.3), random_robot(4, 3, prismatic_fraction=0.3)
    return soagen.closed_chain(a, a.tips[0].name, b, b.tips[0].name, name="chain")


# kind -> (how to get (header, source), precision, cos/sin inputs)
KINDS = {
    "puma560-variants-double": (lambda: ((ROOT / "generated/puma560/puma560.h").read_text(),
                                         (ROOT / "generated/puma560/puma560.c").read_text()), "double", False),
    "puma560-variants-float-trig": (lambda: _gen(robots.example("puma560"), "float", True, None), "float", True),
    "puma560-double-trig": (lambda: _gen(robots.example("puma560"), "double", True), "double", True),
    "puma560-float": (lambda: _gen(robots.example("puma560"), "float", False), "float", False),
    "multidof-double": (lambda: _gen(multi_dof(), "double", False), "double", False),
    "multidof-float": (lambda: _gen(multi_dof(), "float", False), "float", False),
    "closed-chain-double": (lambda: _gen(two_arm_chain(), "double", False), "double", False),
    "closed-chain-float": (lambda: _gen(two_arm_chain(), "float", False), "float", False),
    "multidof-cut-double": (lambda: _cut(multi_dof(), "double"), "double", False),
    "multidof-cut-float": (lambda: _cut(multi_dof(), "float"), "float", False),
}
_sources = {}


def _gen(robot, precision, trig_inputs, variants=()):
    gen = generate(robot, soagen.Options(precision=precision, trig_inputs=trig_inputs, variants=variants), "unit")
    return gen.csource.header, gen.csource.source


def _cut(robot, precision):
    """Every function cut into parts of 40 statements (:mod:`soagen.program.parts`)."""
    with small_parts():
        header, source = _gen(robot, precision, False)
    assert "_part0(" in source
    return header, source


def sources(kind):
    if kind not in _sources:
        _sources[kind] = KINDS[kind][0]()
    return _sources[kind]


# kind -> (robot, CasADi functions, whether the file has soagen_times_map and soagen_failed)
CASADI_KINDS = {
    "casadi-quaternion": (multi_dof, ["forward_kinematics", "os_inertia", "contact_dynamics"], True),
    "casadi-1dof": (lambda: random_robot(3, 3, prismatic_fraction=0.3),
                    ["forward_kinematics", "mass_matrix", "forward_dynamics", "rk4_step"], False),
}


def casadi_sources(kind):
    """(header, ``unit_casadi.c``) of a CasADi kind: the C99 header the file includes, and the file."""
    if kind not in _sources:
        make, names, _ = CASADI_KINDS[kind]
        robot = make()
        gen = generate(robot, soagen.Options(functions=tuple(needed(names))), "unit")
        _sources[kind] = gen.csource.header, emit_casadi(robot, gen.programs, "unit").source
    return _sources[kind]


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("kind", sorted(CASADI_KINDS))
def test_casadi_file_strict_flags(kind, compiler, tmp_path):
    """The CasADi file compiles warning-free under the same flags: its static helpers are there
    exactly when called (an unused static function warns under -Wall)."""
    header, text = casadi_sources(kind)
    (tmp_path / "unit.h").write_text(header)
    (tmp_path / "unit_casadi.c").write_text(text)
    res = subprocess.run([compiler, *STRICT, str(tmp_path / "unit_casadi.c"), "-o", str(tmp_path / "p.o")],
                         capture_output=True, text=True)
    assert res.returncode == 0 and not res.stderr, res.stderr
    helpers = CASADI_KINDS[kind][2]
    assert ("soagen_times_map(" in text) == ("soagen_failed(" in text) == helpers
    assert ("soagen_unit_rk4_step(" in text) != helpers


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_strict_flags(kind, compiler, tmp_path):
    header, text = sources(kind)
    _, precision, trig_inputs = KINDS[kind]
    stem = re.search(r'#include "(\w+)\.h"', text).group(1)
    (tmp_path / f"{stem}.h").write_text(header)
    (tmp_path / f"{stem}.c").write_text(text)
    res = subprocess.run([compiler, *STRICT, str(tmp_path / f"{stem}.c"), "-o", str(tmp_path / "p.o")],
                         capture_output=True, text=True)
    assert res.returncode == 0 and not res.stderr, res.stderr
    # no heap, no global state (the only statics are the inline double sin/cos helpers)
    assert "malloc" not in text and not re.search(
        r"\bstatic\b(?! inline (void soagen_sincos|double soagen_(sin|cos))\()", text)
    assert f"Scalar type: {precision}" in header
    if precision == "float":
        assert "double" not in text
    calls_trig = bool(re.search(r"\b(soagen_)?(cos|sin)f?\(", text))
    if kind.startswith("puma560"):
        assert calls_trig != trig_inputs
        assert (f"const {precision} cq[6]" in text) == trig_inputs
    if "variants" in kind:
        assert all(f"unit_{v}(" in text or f"puma560_{v}(" in text for v in
                   ("mass_matrix_ne", "forward_dynamics_fd1", "forward_dynamics_fd2", "forward_dynamics_crba",
                    "mass_matrix_inverse_innovations", "os_inertia_explicit"))


def test_trig_inputs_module_matches_reference():
    """cos/sin of q as inputs: the wrappers compute them, results are unchanged."""
    from soagen.check import check_module

    robot = robots.example("ur5")
    mod = soagen.build(robot, functions=["inverse_dynamics", "mass_matrix", "jacobian", "os_inertia"],
                       trig_inputs=True, optimize="O0")
    results = check_module(robot, mod, samples=30)
    assert list(results) == ["jacobian", "inverse_dynamics", "mass_matrix", "os_inertia"]
    assert all(r.ok and r.compared >= 10 for r in results.values()), results
