"""soagen.crocoddyl.contact_fwd_dynamics: Crocoddyl's contact action model on soagen's contact dynamics against
Crocoddyl's own DifferentialActionModelContactFwdDynamics on the same Pinocchio model.

solo12 (floating base, four point feet; Pinocchio's own URDF reader with a free-flyer for Crocoddyl's state), two
feet's contacts LOCAL and two LOCAL_WORLD_ALIGNED (a seeded random floating tree with two point feet goes
through the same class from C++ in tests/test_crocoddyl_cmake.py; one compile against Crocoddyl's headers each):
every output of ``calc`` and ``calcDiff`` (xout, Fx, Fu, cost, Lx, Lu, Lxx, Luu, the contact forces in
data.pinocchio.lambda_c, df_dx, df_du and each contact's f, fext, df_dx, df_du), running and terminal, equals
Crocoddyl's to 1e-10 relative, with the contacts' Baumgarte gains zero and nonzero, and q̈ and the forces equal soagen's numpy reference (three routes); an FDDP solve
of a 20-node standing problem reaches Crocoddyl's solution; contacts and costs soagen's model does not compute
are refused by name. One module, -O0.
"""
from __future__ import annotations

import crocoddyl
import numpy as np
import pinocchio as pin
import pytest

import soagen
import soagen.crocoddyl as sc
from soagen.model import pinocchio_convention as pc
from tests.support.oracle import Oracle

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
#: the outputs compared on the differential data
OUTPUTS = ("xout", "Fx", "Fu", "cost", "Lx", "Lu", "Lxx", "Luu", "Lxu", "r", "df_dx", "df_du")
STANDING = np.array([0.0, 0.0, 0.235, 0.0, 0.0, 0.0, 1.0, 0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8,
                     1.6])


def _problem(robot, model, frames, com_shift, enable_force=True):
    """(state, actuation, contacts, {"running"|"terminal": costs}): Crocoddyl's own models; the contacts
    alternate LOCAL and LOCAL_WORLD_ALIGNED; the costs a state and control regularisation, the centre of
    mass shifted by ``com_shift`` from its standing place, a friction cone and a force on two feet."""
    state = crocoddyl.StateMultibody(model)
    actuation = crocoddyl.ActuationModelFloatingBase(state)
    nu = actuation.nu
    contacts = crocoddyl.ContactModelMultiple(state, nu)
    for i, (name, frame) in enumerate(frames):
        ref = pin.LOCAL if i % 2 else pin.LOCAL_WORLD_ALIGNED
        contacts.addContact(name, crocoddyl.ContactModel3D(state, frame, np.zeros(3), ref, nu, np.zeros(2)))
    x0 = np.concatenate([pin.neutral(model) if robot is None else STANDING, np.zeros(model.nv)])
    com = pin.centerOfMass(model, model.createData(), x0[:model.nq]) + com_shift
    every = {}
    for kind in ("running", "terminal"):
        costs = crocoddyl.CostModelSum(state, nu)
        costs.addCost("x", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelState(state, x0, nu)), 1e-1)
        costs.addCost("com", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelCoMPosition(state, com, nu)),
                      1e3 if kind == "terminal" else 1e1)
        if kind == "running":
            costs.addCost("u", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelControl(state, nu)), 1e-3)
            cone = crocoddyl.FrictionCone(np.eye(3), 0.7, 4, False)
            costs.addCost("cone", crocoddyl.CostModelResidual(state, crocoddyl.ActivationModelQuadraticBarrier(
                crocoddyl.ActivationBounds(cone.lb, cone.ub)), crocoddyl.ResidualModelContactFrictionCone(
                    state, frames[0][1], cone, nu)), 1e1)
            costs.addCost("force", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelContactForce(
                state, frames[1][1], pin.Force(np.array([0.0, 0.0, 5.0, 0.0, 0.0, 0.0])), 3, nu)), 1e-2)
        every[kind] = costs
    return state, actuation, contacts, every, x0


def _models(robot, state, actuation, contacts, every, enable_force=True):
    """{"ours"|"theirs": (running, terminal)} differential models on the same state, contacts and costs."""
    ours = tuple(sc.contact_fwd_dynamics(robot, state, actuation, contacts, every[k], 0.0, enable_force,
                                         optimize="O0") for k in ("running", "terminal"))    # Crocoddyl's arguments
    theirs = tuple(crocoddyl.DifferentialActionModelContactFwdDynamics(state, actuation, contacts, every[k], 0.0,
                                                                       enable_force) for k in ("running", "terminal"))
    return {"ours": ours, "theirs": theirs}


@pytest.fixture(scope="module")
def solo12():
    """(robot, Pinocchio model, state, actuation, contacts, costs, x0, models) of solo12 on four feet."""
    robot = soagen.load_urdf(soagen.robots.path("solo12"), tips=[soagen.point_tip(f) for f in FEET],
                             floating_base=True)
    model = Oracle(robot, urdf=soagen.robots.path("solo12")).model
    frames = [(f, model.getFrameId(f)) for f in FEET]
    state, actuation, contacts, every, x0 = _problem(robot, model, frames, np.array([0.02, -0.01, -0.02]))
    return robot, model, state, actuation, contacts, every, x0, _models(robot, state, actuation, contacts, every)


def _compare(ours, theirs, names, what):
    """Each output of ``names`` on two data equal to 1e-10 relative (exactly where Crocoddyl's is zero);
    -> the names of the nonzero ones."""
    nonzero = []
    for name in names:
        a, b = np.asarray(ours(name) if callable(ours) else getattr(ours, name), float), \
            np.asarray(theirs(name) if callable(theirs) else getattr(theirs, name), float)
        assert a.shape == b.shape, (what, name)
        scale = np.max(np.abs(b)) if b.size else 0.0
        assert np.max(np.abs(a - b), initial=0.0) <= 1e-10 * scale, (what, name, np.max(np.abs(a - b)), scale)
        nonzero += [name] * bool(scale > 0)
    return nonzero


def _contact_outputs(data, name):
    """One contact's f, fext (6-vectors), df_dx and df_du."""
    c = data.multibody.contacts.contacts[name]
    return lambda what: {"f": c.f.vector, "fext": c.fext.vector, "df_dx": c.df_dx, "df_du": c.df_du}[what]


def _state(robot, model, rng):
    """x (Pinocchio's q with unit quaternions, v) and u of a random state."""
    q = robot.random_configuration(rng)
    return np.concatenate([pc.q_to_pinocchio(robot, q), rng.uniform(-1, 1, robot.nv)]), rng.uniform(-2, 2,
                                                                                                    robot.nv - 6)


def _compare_running(ours, theirs, datas, names, x, u, what):
    """calc and calcDiff of both running models at (x, u): every output of :data:`OUTPUTS` (all that must be
    nonzero are), the forces in lambda_c and each contact's f, fext, df_dx and df_du equal."""
    for m in (ours, theirs):
        m.calc(datas[m], x, u)
        m.calcDiff(datas[m], x, u)
    nonzero = _compare(datas[ours], datas[theirs], OUTPUTS, f"{what} running")
    assert {"xout", "Fx", "Fu", "cost", "Lx", "Lu", "Lxx", "Luu", "df_dx", "df_du"} <= set(nonzero)
    _compare(datas[ours].pinocchio, datas[theirs].pinocchio, ("lambda_c",), f"{what} forces")
    for name in names:
        assert set(_compare(_contact_outputs(datas[ours], name), _contact_outputs(datas[theirs], name),
                            ("f", "fext", "df_dx", "df_du"), f"{what} {name}")) == {"f", "fext", "df_dx", "df_du"}


@pytest.mark.parametrize("case", ["solo12"])
def test_every_output_equals_crocoddyls(case, request):
    robot, model, _, _, contacts, _, _, models = request.getfixturevalue(case)
    (ours, ours_t), (theirs, theirs_t) = models["ours"], models["theirs"]
    assert isinstance(ours, crocoddyl.DifferentialActionModelContactFwdDynamics) and type(ours) is not type(theirs)
    rng = np.random.default_rng(58)
    datas = {m: m.createData() for m in (ours, ours_t, theirs, theirs_t)}
    names = list(contacts.contacts.todict())
    for k in range(3):
        x, u = _state(robot, model, rng)
        _compare_running(ours, theirs, datas, names, x, u, f"{case}, state {k}")
        # three routes for q̈ and the forces: soagen's C (ours), Pinocchio's KKT (Crocoddyl's), soagen's numpy
        q, v = x[:robot.nq], pc.v_from_pinocchio(robot, x[robot.nq:])
        qdd, f = soagen.reference.contact_dynamics(robot, q, v, pc.v_from_pinocchio(robot, datas[ours].multibody.
                                                                                    actuation.tau))
        assert np.max(np.abs(datas[ours].xout - pc.v_to_pinocchio(robot, qdd))) <= 1e-9 * np.max(np.abs(qdd))
        world = [c.f.linear if contacts.contacts[n].contact.type != pin.LOCAL else
                 datas[ours].pinocchio.oMf[contacts.contacts[n].contact.id].rotation @ c.f.linear
                 for n, c in ((n, datas[ours].multibody.contacts.contacts[n]) for n in names)]
        tips = [next(i for i, t in enumerate(robot.tips) if t.name == model.frames[contacts.contacts[n].contact.id]
                     .name) for n in names]
        want = -np.concatenate([f[3 * t:3 * t + 3] for t in tips])             # the ground on the robot
        assert np.max(np.abs(np.concatenate(world) - want)) <= 1e-9 * np.max(np.abs(want))
        for m in (ours_t, theirs_t):
            m.calc(datas[m], x)
            m.calcDiff(datas[m], x)
        assert set(_compare(datas[ours_t], datas[theirs_t], ("cost", "Lx", "Lxx"), f"{case} terminal, state {k}")) \
            == {"cost", "Lx", "Lxx"}


def test_fddp_standing_reaches_crocoddyls_solution(solo12):
    """solo12 standing on four feet moves its centre of mass: a 20-node FDDP solve from the same start (Crocoddyl's
    quasi-static controls) takes the same iterations to the same cost (1e-8 relative) and trajectories (1e-6)."""
    _, _, _, _, _, _, x0, models = solo12
    solved = []
    for key in ("ours", "theirs"):
        running, terminal = (crocoddyl.IntegratedActionModelEuler(m, 1e-2) for m in models[key])
        problem = crocoddyl.ShootingProblem(x0, [running] * 20, terminal)
        solver = crocoddyl.SolverFDDP(problem)
        assert solver.solve([x0] * 21, problem.quasiStatic([x0] * 20), 100)
        solved.append((solver.iter, solver.cost, np.array(solver.xs), np.array(solver.us)))
    (it, cost, xs, us), (it_c, cost_c, xs_c, us_c) = solved
    assert it == it_c > 1
    assert abs(cost - cost_c) <= 1e-8 * abs(cost_c)
    assert np.max(np.abs(xs - xs_c)) <= 1e-6 and np.max(np.abs(us - us_c)) <= 1e-6
    assert np.max(np.abs(xs[-1, :3] - x0[:3])) > 5e-3                  # the base moved: not a trivial solution


def test_baumgarte_gains_equal_crocoddyls(solo12):
    """Crocoddyl's Baumgarte stabilization (ContactModel3D's gains and xref): gains [30, 8] on the front feet,
    [0, 50] on the hind ones, each pair one LOCAL_WORLD_ALIGNED and one LOCAL contact, every xref away from
    the foot; every output of calc and calcDiff equals Crocoddyl's (the class the other tests use, one compile),
    also after every xref is moved (set_reference: read at every call); q̈ and the world forces equal soagen's
    numpy reference with those gains."""
    robot, model, state, actuation, _, every, _, _ = solo12
    rng = np.random.default_rng(59)
    contacts = crocoddyl.ContactModelMultiple(state, actuation.nu)
    for i, foot in enumerate(FEET):
        contacts.addContact(foot, crocoddyl.ContactModel3D(state, model.getFrameId(foot), rng.normal(0.0, 0.2, 3),
                                                           pin.LOCAL if i % 2 else pin.LOCAL_WORLD_ALIGNED,
                                                           actuation.nu, np.array([30.0, 8.0] if i < 2 else [0.0, 50.0])))
    ours = sc.contact_fwd_dynamics(robot, state, actuation, contacts, every["running"], 0.0, True, optimize="O0")
    theirs = crocoddyl.DifferentialActionModelContactFwdDynamics(state, actuation, contacts, every["running"], 0.0,
                                                                 True)
    datas = {m: m.createData() for m in (ours, theirs)}
    for k in range(2):
        x, u = _state(robot, model, rng)
        _compare_running(ours, theirs, datas, FEET, x, u, f"gains, state {k}")
        q, v = x[:robot.nq], pc.v_from_pinocchio(robot, x[robot.nq:])
        feet = [contacts.contacts[t.name].contact for t in robot.tips]              # in the tips' order
        kp, kd = (np.repeat([c.gains[j] for c in feet], 3) for j in (0, 1))
        x_ref = np.concatenate([c.reference for c in feet])
        qdd, _ = soagen.reference.contact_dynamics_baumgarte(
            robot, q, v, pc.v_from_pinocchio(robot, datas[ours].multibody.actuation.tau), kp, kd, x_ref)
        assert np.max(np.abs(datas[ours].xout - pc.v_to_pinocchio(robot, qdd))) <= 1e-9 * np.max(np.abs(qdd))
        for foot in FEET:                                                          # xref moved between calls
            contacts.contacts[foot].contact.reference = rng.normal(0.0, 0.2, 3)


class _FeedbackActuation(crocoddyl.ActuationModelAbstract):
    """τ = [0; u] + K v: the floating base's actuation plus a velocity feedback, so that dτ/dx is not zero."""

    def __init__(self, state, gain):
        crocoddyl.ActuationModelAbstract.__init__(self, state, state.nv - 6)
        self.gain = gain                                             # K, nv x nv

    def calc(self, data, x, u=None):
        data.tau[:] = self.gain @ x[self.state.nq:]
        if u is not None:
            data.tau[6:] += u

    def calcDiff(self, data, x, u=None):
        data.dtau_dx[:, self.state.nv:] = self.gain
        data.dtau_du[6:, :] = np.eye(self.nu)

    def commands(self, data, x, tau):
        data.u[:] = tau[6:] - (self.gain @ x[self.state.nq:])[6:]


def test_an_actuation_that_reads_the_state_equals_crocoddyls(solo12):
    """dτ/dx ≠ 0 (the class skips its products with dq̈/dτ and df/dτ only where dτ/dx is zero): every output
    equals Crocoddyl's with an actuation whose torques feed back the velocities."""
    robot, model, state, _, contacts, every, _, _ = solo12
    actuation = _FeedbackActuation(state, np.random.default_rng(60).normal(0.0, 0.5, (model.nv, model.nv)))
    ours = sc.contact_fwd_dynamics(robot, state, actuation, contacts, every["running"], 0.0, True, optimize="O0")
    theirs = crocoddyl.DifferentialActionModelContactFwdDynamics(state, actuation, contacts, every["running"], 0.0,
                                                                 True)
    datas = {m: m.createData() for m in (ours, theirs)}
    x, u = _state(robot, model, np.random.default_rng(61))
    _compare_running(ours, theirs, datas, FEET, x, u, "feedback actuation")
    assert np.abs(datas[theirs].multibody.actuation.dtau_dx).max() > 0.1


def test_arguments_and_what_soagen_does_not_compute_is_refused(solo12):
    """By name: a damping, a 6-D contact, a contact away from the tips, a missing foot, a
    residual reading frame velocities; and another robot's Pinocchio model. Crocoddyl's arguments are taken
    as Crocoddyl takes them."""
    robot, model, state, actuation, contacts, every, _, _ = solo12
    nu = actuation.nu

    def contacts_with(replace=None, drop=None):
        """solo12's contacts, FL_FOOT's replaced by ``replace``, ``drop`` left out."""
        out = crocoddyl.ContactModelMultiple(state, nu)
        for name, item in contacts.contacts.todict().items():
            if name != drop:
                out.addContact(name, replace if replace is not None and name == "FL_FOOT" else item.contact)
        return out

    def build(c, costs=every["running"], *args, **kw):
        return sc.contact_fwd_dynamics(robot, state, actuation, c, costs, *args, optimize="O0", **kw)

    fl = model.getFrameId("FL_FOOT")
    with pytest.raises(ValueError, match="'FL_FOOT' is not a ContactModel3D"):
        build(contacts_with(crocoddyl.ContactModel6D(state, fl, pin.SE3.Identity(), pin.LOCAL, nu, np.zeros(2))))
    with pytest.raises(ValueError, match=r"'FL_FOOT' \(frame FL_LOWER_LEG\) is not at one of the tips"):
        build(contacts_with(crocoddyl.ContactModel3D(state, model.getFrameId("FL_LOWER_LEG"), np.zeros(3), pin.LOCAL,
                                                     nu, np.zeros(2))))
    with pytest.raises(ValueError, match="holds 4 tips still; 3 contacts are active"):
        build(contacts_with(drop="HR_FOOT"))
    with pytest.raises(ValueError, match="JMinvJt_damping"):
        build(contacts, inv_damping=1e-12)
    costs = crocoddyl.CostModelSum(state, nu)
    costs.addCost("vel", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelFrameVelocity(
        state, fl, pin.Motion.Zero(), pin.LOCAL, nu)), 1.0)
    with pytest.raises(ValueError, match="'vel' reads kinematics"):
        build(contacts, costs).createData()
    # Crocoddyl's arguments after the robot: positional, with constraints, or one by name
    for args, kw in (((0.0, True), {}), ((crocoddyl.ConstraintModelManager(state, nu), 0.0, True), {}),
                     ((), {"enable_force": True})):
        built = build(contacts, every["running"], *args, **kw)
        assert (built.constraints is not None) == (len(args) == 3)
    other = model.copy()
    other.inertias[3] = pin.Inertia(other.inertias[3].mass * 1.1, other.inertias[3].lever, other.inertias[3].inertia)
    state2 = crocoddyl.StateMultibody(other)
    with pytest.raises(ValueError, match="contact dynamics differ"):
        sc.contact_fwd_dynamics(robot, state2, crocoddyl.ActuationModelFloatingBase(state2), contacts, every["running"],
                                optimize="O0")
