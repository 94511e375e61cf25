"""soagen.crocoddyl: Crocoddyl's free forward-dynamics action model on soagen's functions against Crocoddyl's own.

The Panda (soagen's bundled file, Pinocchio's own reader for Crocoddyl's state): every output of ``calc`` and
``calcDiff`` (running and terminal, differential and Euler-integrated) equals Crocoddyl's
``DifferentialActionModelFreeFwdDynamics`` to 1e-10 relative, and q̈ equals soagen's numpy reference (three
routes); an FDDP solve of a reaching problem reaches Crocoddyl's solution; a Pinocchio model of another robot, a
residual reading kinematics the model does not compute, and an armature other than the generated one are refused.
One module, compiled -O0.
"""
from __future__ import annotations

import copy

import crocoddyl
import numpy as np
import pinocchio as pin
import pytest

import soagen
import soagen.crocoddyl as sc
from tests.support.oracle import Oracle

#: the outputs compared, on the differential data (Lxu is zero for these costs: compared exactly)
OUTPUTS = ("xout", "Fx", "Fu", "cost", "Lx", "Lu", "Lxx", "Luu", "Lxu", "r")
LOCK = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
GOAL = pin.SE3(pin.utils.rpyToMatrix(0.3, -0.2, 0.5), np.array([0.45, 0.25, 0.55]))   # the hand's target, world


def _costs(state, nu, terminal):
    """Crocoddyl's own costs: the hand's placement, a state and (running) a control regularisation."""
    model = state.pinocchio
    costs = crocoddyl.CostModelSum(state, nu)
    hand = crocoddyl.ResidualModelFramePlacement(state, model.getFrameId("panda_hand"), GOAL, nu)
    costs.addCost("hand", crocoddyl.CostModelResidual(state, hand), 1e3 if terminal else 1.0)
    costs.addCost("x", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelState(state, nu)), 1e-1)
    if not terminal:
        costs.addCost("u", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelControl(state, nu)), 1e-4)
        hand_xyz = crocoddyl.ResidualModelFrameTranslation(state, model.getFrameId("panda_link5"), GOAL.translation,
                                                           nu)
        costs.addCost("link5", crocoddyl.CostModelResidual(state, hand_xyz), 1e-2)
    return costs


@pytest.fixture(scope="module")
def panda():
    """(robot, state, actuation, {"ours"|"theirs": (running, terminal)} differential models)."""
    robot = soagen.robots.example("panda")
    model = Oracle(robot, urdf=soagen.robots.path("panda"), lock=LOCK).model
    state = crocoddyl.StateMultibody(model)
    actuation = crocoddyl.ActuationModelFull(state)
    running, terminal = _costs(state, actuation.nu, False), _costs(state, actuation.nu, True)
    models = {"ours": tuple(sc.free_fwd_dynamics(robot, state, actuation, c, optimize="O0")
                            for c in (running, terminal)),
              "theirs": tuple(crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, c)
                              for c in (running, terminal))}
    return robot, state, actuation, models


def _compare(ours, theirs, names, what):
    """Each output of ``names`` on two data equal to 1e-10 relative (exactly where Crocoddyl's is zero);
    -> the names of the nonzero ones."""
    nonzero = []
    for name in names:
        a, b = np.asarray(getattr(ours, name), float), np.asarray(getattr(theirs, name), float)
        assert a.shape == b.shape, (what, name)
        scale = np.max(np.abs(b))
        assert np.max(np.abs(a - b)) <= 1e-10 * scale, (what, name, np.max(np.abs(a - b)), scale)
        nonzero += [name] * bool(scale > 0)
    return nonzero


def test_every_output_equals_crocoddyls(panda):
    robot, state, _, models = panda
    rng = np.random.default_rng(58)
    (ours, ours_t), (theirs, theirs_t) = models["ours"], models["theirs"]
    assert isinstance(ours, crocoddyl.DifferentialActionModelFreeFwdDynamics) and type(ours) is not type(theirs)
    assert type(copy.copy(ours)) is type(ours) is type(copy.deepcopy(ours))     # not the base class's copy
    datas = {m: m.createData() for m in (ours, ours_t, theirs, theirs_t)}
    for k in range(4):
        x = np.concatenate([rng.uniform(-2, 2, robot.nq), rng.uniform(-3, 3, robot.nv)])
        u = rng.uniform(-40, 40, robot.nv)
        for m in (ours, theirs):
            m.calc(datas[m], x, u)
            m.calcDiff(datas[m], x, u)
        nonzero = _compare(datas[ours], datas[theirs], OUTPUTS, f"running, state {k}")
        assert {"xout", "Fx", "Fu", "cost", "Lx", "Lu", "Lxx", "Luu"} <= set(nonzero)
        # three routes for q̈: soagen's C (ours), Pinocchio's ABA (Crocoddyl's), soagen's numpy reference
        ref = soagen.reference.forward_dynamics(robot, x[:robot.nq], x[robot.nq:], u)
        assert np.max(np.abs(datas[ours].xout - ref)) <= 1e-10 * np.max(np.abs(ref))
        _compare(datas[ours].pinocchio, datas[theirs].pinocchio, ("Minv",), f"M^-1, state {k}")
        # quasiStatic is Crocoddyl's own on the same Pinocchio model: the gravity-compensating u
        u_static = [m.quasiStatic(datas[m], x) for m in (ours, theirs)]
        assert np.max(np.abs(u_static[0] - u_static[1])) <= 1e-10 * np.max(np.abs(u_static[1]))
        for m in (ours_t, theirs_t):
            m.calc(datas[m], x)
            m.calcDiff(datas[m], x)
        assert set(_compare(datas[ours_t], datas[theirs_t], ("cost", "Lx", "Lxx"), f"terminal, state {k}")) == \
            {"cost", "Lx", "Lxx"}


@pytest.fixture(scope="module")
def panda_armature():
    """(robot with rotor inertias, Pinocchio model with the same model.armature); one more module."""
    robot = soagen.robots.example("panda").with_actuators(
        armature={f"panda_joint{i + 1}": 0.05 + 0.02 * i for i in range(7)})
    return robot, Oracle(robot, urdf=soagen.robots.path("panda"), lock=LOCK).model


def test_armature_both_crocoddyl_routes(panda_armature):
    """A Panda with rotor inertias: Crocoddyl's ABA route (the armature in the Pinocchio model) and its
    Cholesky/RNEA route (the armature on the action model, ``dam.armature``) give soagen's outputs to 1e-10."""
    robot, with_armature = panda_armature
    without = with_armature.copy()
    without.armature[:] = 0.0
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-2, 2, robot.nq), rng.uniform(-3, 3, robot.nv)])
    u = rng.uniform(-40, 40, robot.nv)
    for model, own in ((with_armature, None), (without, with_armature.armature.copy())):
        state = crocoddyl.StateMultibody(model)
        actuation = crocoddyl.ActuationModelFull(state)
        costs = _costs(state, actuation.nu, False)
        pair = [sc.free_fwd_dynamics(robot, state, actuation, costs, optimize="O0"),
                crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, costs)]
        datas = []
        for m in pair:
            if own is not None:
                m.armature = own
            data = m.createData()
            m.calc(data, x, u)
            m.calcDiff(data, x, u)
            datas.append(data)
        assert {"xout", "Fx", "Fu", "cost", "Lx"} <= set(_compare(*datas, OUTPUTS, f"armature, own {own}"))


def test_integrated_outputs_equal_crocoddyls(panda):
    """Through IntegratedActionModelEuler (C++ calling the C++ class): next state, cost and derivatives."""
    robot, _, _, models = panda
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-2, 2, robot.nq), rng.uniform(-3, 3, robot.nv)])
    u = rng.uniform(-40, 40, robot.nv)
    datas = []
    for key in ("ours", "theirs"):
        model = crocoddyl.IntegratedActionModelEuler(models[key][0], 1e-2)
        data = model.createData()
        model.calc(data, x, u)
        model.calcDiff(data, x, u)
        datas.append(data)
    assert {"xnext", "Fx", "Fu", "cost", "Lx", "Lu", "Lxx", "Luu"} <= \
        set(_compare(*datas, ("xnext", "Fx", "Fu", "cost", "Lx", "Lu", "Lxx", "Luu", "Lxu"), "Euler"))


def test_fddp_reaches_crocoddyls_solution(panda):
    """A 40-node reaching problem from the same start: the same iterations, cost (1e-8 relative) and
    trajectories (1e-6)."""
    robot, _, _, models = panda
    x0 = np.concatenate([[0.0, -0.4, 0.0, -2.2, 0.0, 1.9, 0.8], np.zeros(robot.nv)])
    solved = []
    for key in ("ours", "theirs"):
        running, terminal = (crocoddyl.IntegratedActionModelEuler(m, 1e-2) for m in models[key])
        solver = crocoddyl.SolverFDDP(crocoddyl.ShootingProblem(x0, [running] * 40, terminal))
        assert solver.solve([], [], 200)
        solved.append((solver.iter, solver.cost, np.array(solver.xs), np.array(solver.us)))
    (it, cost, xs, us), (it_c, cost_c, xs_c, us_c) = solved
    assert it == it_c > 3
    assert abs(cost - cost_c) <= 1e-8 * abs(cost_c)
    assert np.max(np.abs(xs - xs_c)) <= 1e-6 and np.max(np.abs(us - us_c)) <= 1e-6
    assert np.max(np.abs(xs[-1] - x0)) > 0.1                      # it moved: not a trivial solution


def test_another_robots_model_is_refused(panda):
    """The state's Pinocchio model must be the robot's: a link 10 % heavier fails the constructor's check."""
    robot, state, actuation, models = panda
    model = state.pinocchio.copy()
    model.inertias[4] = pin.Inertia(model.inertias[4].mass * 1.1, model.inertias[4].lever, model.inertias[4].inertia)
    other = crocoddyl.StateMultibody(model)
    with pytest.raises(ValueError, match="forward dynamics differ"):
        sc.free_fwd_dynamics(robot, other, crocoddyl.ActuationModelFull(other), _costs(other, 7, False),
                             optimize="O0")


def test_unsupported_residual_and_armature_are_refused(panda):
    """A CoM residual reads com and Jcom, which the model does not compute: createData says so; an armature
    set on the action model (not the generated one) makes calc refuse."""
    robot, state, actuation, _ = panda
    costs = _costs(state, actuation.nu, False)
    costs.addCost("com", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelCoMPosition(state, np.zeros(3),
                                                                                               actuation.nu)), 1.0)
    model = sc.free_fwd_dynamics(robot, state, actuation, costs, optimize="O0")
    with pytest.raises(ValueError, match="'com' reads kinematics"):
        model.createData()
    model = sc.free_fwd_dynamics(robot, state, actuation, _costs(state, actuation.nu, False), optimize="O0")
    data = model.createData()
    x, u = np.zeros(state.nx), np.zeros(actuation.nu)
    model.calc(data, x, u)
    model.armature = np.full(robot.nv, 0.1)
    with pytest.raises(ValueError, match="armature"):
        model.calc(data, x, u)


def test_the_pins_are_the_ones_built_for():
    """pyproject's crocoddyl and test extras, the installed wheels and the guide name the same releases."""
    import tomllib

    from tests.support import ROOT

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    want = {f"crocoddyl=={sc.CROCODDYL}", f"libcrocoddyl=={sc.CROCODDYL}", f"pin=={sc.PINOCCHIO}",
            f"libpinocchio=={sc.PINOCCHIO}"}
    assert want <= set(extras["crocoddyl"]) and want - {f"crocoddyl=={sc.CROCODDYL}"} <= set(extras["test"])
    assert (crocoddyl.__version__, pin.__version__) == (sc.CROCODDYL, sc.PINOCCHIO)
    guide = (ROOT / "docs" / "guide" / "crocoddyl.md").read_text()
    assert f"Crocoddyl {sc.CROCODDYL} with Pinocchio {sc.PINOCCHIO}" in guide
    assert f"--no-deps 'crocoddyl=={sc.CROCODDYL}'" in (ROOT / ".ci" / "run").read_text()
