"""The builder's checks and what it records (soagen.model.builder): warnings for
non-physical but defined dynamics, strict refusal, singular joints and the
functions left out, rounding of round-off only, notes."""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import soagen
from soagen import reference
from soagen.model import builder
from soagen.functions import CATALOGUE, select
from tests.support.oracle import Oracle

BAD = Path(__file__).parent / "data" / "bad"


def _load(name, **kw):
    return soagen.load_urdf(BAD / name, **kw)


def _one_link(inertia, rpy=(0.0, 0.0, 0.0), com=(0.0, 0.0, 0.1), strict=False):
    b = soagen.RobotBuilder("one")
    b.add_link("base")
    b.add_link("l1", mass=1.0, com=com, inertia=inertia)
    b.add_joint("j1", "revolute", "base", "l1", xyz=(0, 0, 0.2), rpy=rpy, axis=(0, 0, 1))
    return b.build(tips=["l1"], strict=strict)


def test_flywheels_match_pinocchio():
    """Zero-mass links with a rotational inertia: a leaf (its own body) and one lumped on a
    fixed joint; both count, as in Pinocchio's model of the file."""
    path = BAD / "zero_mass_flywheel.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = soagen.load_urdf(path, tips=["l2"], strict=True)
    assert robot.singular_joints == () and robot.bodies[1].mass == 0.0
    oracle = Oracle(robot, urdf=path)
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, qd, qdd, _ = robot.random_state(rng)
        M, Mp = reference.mass_matrix(robot, q), oracle.mass_matrix(q)
        assert np.abs(M - Mp).max() <= 1e-14 * np.abs(Mp).max()
        tau, taup = reference.inverse_dynamics(robot, q, qd, qdd), oracle.rnea(q, qd, qdd)
        assert np.abs(tau - taup).max() <= 1e-13 * np.abs(taup).max()


def test_roundoff_tolerance_of_the_inertia_check():
    """Principal moments are checked to INERTIA_ROUNDOFF of the body's inertia scale:
    1e-14 below zero is round-off, 1e-9 is a finding."""
    scale = np.linalg.eigvalsh(np.diag([0.01, 0.01, 0.01]) + 1.0 * builder._parallel(np.array([0, 0, 0.1]))).max()
    for rel, warns in ((1e-14, False), (1e-9, True)):
        inertia = np.diag([-rel * scale, 0.01, 0.01])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _one_link(inertia)
        found = [w for w in caught if issubclass(w.category, soagen.ModelWarning)]
        assert bool(found) == warns, [str(w.message) for w in caught]
        if warns:
            assert "link 'l1'" in str(found[0].message) and "not positive semi-definite" in str(found[0].message)
            with pytest.raises(soagen.RobotError, match="not positive semi-definite"):
                _one_link(inertia, strict=True)


@pytest.mark.parametrize("fname, words", [("triangle_inequality.urdf", "triangle inequality"),
                                          ("indefinite_inertia.urdf", "not positive semi-definite"),
                                          ("massless_leaf.urdf", "massless leaf"),
                                          ("zero_articulated_inertia.urdf", "D(k) = 0")])
def test_warning_or_strict_error(fname, words):
    with pytest.warns(soagen.ModelWarning) as caught:   # an indefinite body also warns D(k) < 0
        _load(fname)
    assert any(words in str(w.message) for w in caught), [str(w.message) for w in caught]
    with pytest.raises(soagen.RobotError, match=re.escape(words)):
        _load(fname, strict=True)


def test_triangle_violation_size_is_reported():
    with pytest.warns(soagen.ModelWarning) as caught:
        _load("triangle_inequality.urdf")
    # moments 0.01, 0.01, 0.5: 0.5 - 0.02 = 0.48
    assert "by 4.80e-01" in str(caught[0].message) and "link 'l1'" in str(caught[0].message)


def test_singular_joints_recorded_and_reference_usable():
    with pytest.warns(soagen.ModelWarning):
        robot = _load("massless_leaf.urdf", tips=["l1"])
    assert robot.singular_joints == ("j1",)
    assert "massless leaf 'l1'" in robot.singular_reason and "--lock" in robot.singular_reason
    q, qd, qdd, _ = robot.random_state(np.random.default_rng(0))
    assert np.all(reference.mass_matrix(robot, q) == 0.0)   # a massless robot: M = 0, tau = 0
    assert np.all(reference.inverse_dynamics(robot, q, qd, qdd) == 0.0)
    assert np.all(np.isfinite(reference.jacobian(robot, q)))

    with pytest.warns(soagen.ModelWarning):
        robot = _load("zero_articulated_inertia.urdf", tips=["l2"])
    assert robot.singular_joints == ("j1",)           # not j2: its D(k) is the mass, 1 kg
    assert "joint 'j1' (link 'l1') moves bodies with no inertia" in robot.singular_reason
    tau = reference.inverse_dynamics(robot, *robot.random_state(np.random.default_rng(0))[:3])
    assert np.all(np.isfinite(tau)) and np.any(tau != 0.0)


def test_singular_joint_below_a_massive_one_is_named_alone():
    """A massless leaf under a massive link: only the leaf's joint is singular (the
    pseudo-inverse keeps its zero D(k) from spoiling the parent's)."""
    b = soagen.RobotBuilder("leaf")
    b.add_link("base")
    b.add_link("l1", mass=1.0, com=(0.1, 0, 0), inertia=(0.01, 0.01, 0.01, 0, 0, 0))
    b.add_link("l2")
    b.add_joint("j1", "revolute", "base", "l1", axis=(0, 0, 1))
    b.add_joint("j2", "revolute", "l1", "l2", xyz=(0.3, 0, 0), axis=(0, 1, 0))
    with pytest.warns(soagen.ModelWarning, match="massless leaf 'l2'"):
        robot = b.build()
    assert robot.singular_joints == ("j2",)
    assert builder.singular_bodies(robot) == {1: 0.0}


# what needs M⁻¹, Λ or 1/D(k), written out here (not read from the catalogue's `solves`)
NEEDS_INVERSE = {
    "mass_matrix_inverse", "mass_matrix_inverse_innovations", "mass_matrix_inverse_cholesky",
    "forward_dynamics", "forward_dynamics_fd1", "forward_dynamics_fd2", "forward_dynamics_fd3",
    "forward_dynamics_fd4", "forward_dynamics_crba", "tip_force_acceleration", "os_inertia_inverse",
    "os_inertia", "os_inertia_recursive", "os_inertia_explicit", "os_coriolis", "os_gravity", "os_bias",
    "osc_torque", "forward_dynamics_derivatives", "forward_dynamics_derivatives_fd4",
    "forward_dynamics_derivatives_via_id", "forward_dynamics_derivatives_via_analytic_id", "linearized_step",
    "linearized_step_via_id", "linearized_step_via_analytic_id", "contact_dynamics", "impulse_dynamics",
    "contact_dynamics_derivatives", "contact_dynamics_derivatives_forward", "contact_dynamics_derivatives_kkt",
    "contact_dynamics_derivatives_kkt_analytic", "impulse_dynamics_derivatives", "forward_dynamics_hessian",
    "contact_dynamics_hessian", "contact_dynamics_baumgarte", "contact_dynamics_baumgarte_derivatives",
    "contact_dynamics_baumgarte_derivatives_kkt", "contact_dynamics_baumgarte_derivatives_kkt_analytic"}


def test_function_selection_leaves_out_what_needs_the_inverse():
    """On a robot with D(k) = 0: every function defined is selected (variants too), those
    needing M⁻¹ or Λ are left out with one warning naming them, asking for one is an error
    naming the joint; on a regular robot they are all there."""
    every = soagen.Options(variants=None)
    with pytest.warns(soagen.ModelWarning):
        robot = _load("massless_leaf.urdf", tips=["l1"])
    with pytest.warns(soagen.ModelWarning, match="left out .*forward_dynamics.*'j1'") as caught:
        names = {s.name for s in select(robot, every)}
    assert len(caught) == 1
    assert {"mass_matrix", "jacobian", "gravity"} <= names and not names & NEEDS_INVERSE
    with pytest.raises(soagen.RobotError, match="cannot generate os_inertia .*'j1'"):
        select(robot, soagen.Options(functions=["mass_matrix", "os_inertia"]))
    with pytest.raises(soagen.RobotError, match="cannot generate forward_dynamics_derivatives .*'j1'"):
        select(robot, soagen.Options(functions=["forward_dynamics_derivatives"]))
    good = _load("good_one_joint.urdf", tips=[soagen.point_tip("l1")])     # a point tip: every function exists
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # one joint cannot move a 3-row tip: that warning (tests/test_check_untested.py), and no other
        warnings.filterwarnings("ignore", message=r".*Lambda\(0\) never exists")
        on_good = {s.name for s in select(good, every)}
        assert NEEDS_INVERSE <= {s.name for s in select(good, soagen.Options(functions=sorted(NEEDS_INVERSE)))}
    assert on_good - names == on_good & NEEDS_INVERSE and {"forward_dynamics", "os_inertia"} <= on_good
    assert NEEDS_INVERSE == {s.name for s in CATALOGUE if s.solves}


def test_round_off_is_rounded_and_stated_digits_are_kept():
    """cos of the double nearest π/2 (6.1e-17) is round-off: made 0 and noted; cos of
    1.57079632679 (4.9e-12) is what the file states: kept, as Pinocchio keeps it."""
    exact = _one_link(np.diag([0.01, 0.01, 0.01]), rpy=(np.pi / 2, 0, 0))
    R = exact.bodies[0].rotation
    assert np.array_equal(R, [[1, 0, 0], [0, 0, -1], [0, 1, 0]])
    assert any("made exact" in n for n in exact.notes)
    printed = _one_link(np.diag([0.01, 0.01, 0.01]), rpy=(1.57079632679, 0, 0))
    R = printed.bodies[0].rotation
    assert R[1, 1] == R[2, 2] == np.cos(1.57079632679) != 0.0    # (its sine rounds to 1.0 exactly)
    assert not any("made exact" in n for n in printed.notes)


def test_snap_is_relative_to_the_array():
    snap = builder._Snapper()
    tiny = np.array([3e-6, 1e-21, -2e-22])       # an inertia of a finger: 1e-21 is round-off here
    assert np.array_equal(snap(tiny), [3e-6, 0.0, 0.0]) and snap.count == 2
    alone = np.array([1e-21, 0.0, 0.0])          # the largest entry is never round-off of itself
    assert np.array_equal(snap(alone), alone)
    assert snap(np.array([1.0 - 2.0 ** -53, 0.5]))[0] == 1.0
    kept = 1.0 - 2.0 ** -48                       # 32 ulps below 1: kept
    assert snap(np.array([kept, 0.5]))[0] == kept


def test_notes_list_welded_and_lumped_links():
    welded = _load("welded_nonphysical.urdf", strict=True)
    assert welded.notes == ("links 'base', 'antenna' welded to the fixed base: their inertia does not enter "
                            "the dynamics",)
    lumped = _load("lumped_nonphysical.urdf", strict=True)
    assert "link 'sensor' lumped into the body of link 'l1' (fixed joints)" in lumped.notes
    floating = _load("welded_nonphysical.urdf", floating_base=True, strict=True)
    assert floating.notes == ("link 'antenna' lumped into the body of link 'base' (fixed joints)",)


def test_copies_keep_what_the_builder_found():
    with pytest.warns(soagen.ModelWarning):
        robot = _load("massless_leaf.urdf", tips=["l1"])
    actuated = robot.with_actuators({"j1": 0.1})
    assert actuated.with_parameters(actuated.parameters()).actuators is not None
    for copy in (robot.with_gravity((0, 0, -1.62)), robot.with_tips(()), actuated,
                 actuated.with_parameters(actuated.parameters())):
        assert copy.singular_joints == robot.singular_joints and copy.notes == robot.notes
        assert copy.singular_reason == robot.singular_reason


def test_bundled_robots_load_without_findings():
    """`--example` robots need no --strict: they are physical, with no singular joint."""
    from soagen.model import robots

    for name in robots.EXAMPLES:
        with warnings.catch_warnings():
            warnings.simplefilter("error", soagen.ModelWarning)
            robot = robots.example(name)
        assert robot.singular_joints == ()


def test_a_robot_prints_as_one_line():
    """``print(robot)`` gives its name, sizes, tips and base, not its arrays."""
    panda = soagen.robots.example("panda")
    assert repr(panda) == "<Robot panda: 7 joints, fixed base, n=7, nq=7, nv=7, tips: panda_hand>"
    b = soagen.RobotBuilder("hop")
    b.add_link("trunk", mass=2.0, inertia=(0.1, 0.1, 0.1, 0, 0, 0))
    b.add_link("leg", mass=1.0, com=(0, 0, -0.1), inertia=(0.01, 0.01, 0.01, 0, 0, 0))
    b.add_joint("knee", "revolute", "trunk", "leg", axis=(0, 1, 0))
    hop = b.build(tips=[soagen.point_tip("leg", (0, 0, -0.2)), "trunk"], floating_base=True)
    assert str(hop) == "<Robot hop: 1 joints, floating base, n=7, nq=8, nv=7, tips: leg (point), trunk>"
    assert hop.joint_summary() == "1 joint and a floating base (nv 7)" and panda.joint_summary() == "7 joints"
