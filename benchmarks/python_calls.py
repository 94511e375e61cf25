#!/usr/bin/env python3
"""Time each function as a Python user calls it: soagen's module method against Pinocchio's
Python call, one state per call.

    python benchmarks/python_calls.py --robot panda        # or solo12, talos, all

The Panda's module is built with every method of the catalogue (:data:`soagen.functions`: every
function but the algorithm variants) and each is timed; the other robots' with the eight of the
README's table (:data:`FUNCTIONS`).  Per robot: 64 seeded random states (``states.py``), the
module built as ``soagen.build`` builds
it (-O3 -march=native), Pinocchio's model from the same file (``backends.pinocchio_model``).
A round times, function by function, each backend on every state in turn (a loop of calls;
the backends' order alternates between rounds): soagen's method (``mod.f(q, ...)``, fresh
outputs), the same with ``out=`` (one-output functions), the bare C (the function's scalar
batch over the 64 states in one call, per state: what the C costs without any wrapper), the
method's Python path (``mod.f.__wrapped__``: every call before the methods' C entry, and the
calls that need a conversion now) and Pinocchio's Python call on the same states (its
velocities converted to its convention beforehand).  15 rounds; per function the median per-call time of each, the wrapper's own
cost (method − bare C, per round) and the ratio soagen / Pinocchio of each round (median and
interquartile range).  Before timing, soagen's outputs are checked against Pinocchio's on
every state.  Printed, and written to ``docs/python_calls.json`` and ``docs/python_calls.md``
(this robot's section; the others' are kept); ``benchmarks/run.py`` runs it for its robots.

Pinocchio's calls: ``rnea``, ``crba``, ``computeMinverse``, ``aba``, the tips' Jacobians
(``computeFrameJacobian`` for one tip, else ``computeJointJacobians`` and ``getFrameJacobian``
per tip, stacked), Λ(0) as a Python user writes it from those (``inv(J M⁻¹ Jᵀ)``),
``computeRNEADerivatives`` and ``computeABADerivatives``: each as it returns (``crba`` and
``computeMinverse`` are not symmetrized here); for the Panda's other methods the call of
:func:`pinocchio_calls` (its table names each), none ("–") where Pinocchio has no function
for it (the operational-space forces and torque, the linearized step, the base and Slotine-Li
regressors).  Number inputs (``e``, ``dt``) are Python floats, as a user passes them.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

import backends as bk
import numpy as np
import soagen_side as sg
from report import PYTHON_CALL_ROBOTS, ROOT, Spread, fmt_us, python_calls_page
from specs import SPECS
from states import draw_states

DATA, DOC = ROOT / "docs" / "python_calls.json", ROOT / "docs" / "python_calls.md"
ROBOTS = PYTHON_CALL_ROBOTS
FUNCTIONS = ("inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "jacobian", "os_inertia",
             "inverse_dynamics_derivatives", "forward_dynamics_derivatives")
EVERY = ("panda",)                           # robots timed on every method of the catalogue
NUMBERS = {"e": 0.5, "dt": 0.01}             # number inputs: restitution, time step
STATES, ROUNDS, PASSES = 64, 15, 5           # states; rounds; loops over the states per timing


def pinocchio_calls(model, robot):
    """{function: (the Python a user writes for it, of q, v, a (or tau), its name)} and the names it
    reads (:func:`loop`)."""
    import pinocchio as pin

    data = model.createData()
    frames = [model.getFrameId(t.name) for t in robot.tips]
    rows = [slice(0, 3) if t.point else slice(0, 6) for t in robot.tips]   # point tips: the linear rows
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    if len(frames) == 1 and not robot.tips[0].point:
        def jacobian(q):
            return pin.computeFrameJacobian(model, data, q, frames[0], lwa)
        jac_name = "computeFrameJacobian"
    else:
        def jacobian(q):
            pin.computeJointJacobians(model, data, q)
            return np.vstack([pin.getFrameJacobian(model, data, f, lwa)[r] for f, r in zip(frames, rows)])
        jac_name = "computeJointJacobians + getFrameJacobian per tip"

    def os_inertia(q):
        J = jacobian(q)
        return np.linalg.inv(J @ pin.computeMinverse(model, data, q) @ J.T)

    def os_inertia_inverse(q):
        J = jacobian(q)
        return J @ pin.computeMinverse(model, data, q) @ J.T

    def forward_kinematics(q):
        pin.forwardKinematics(model, data, q)
        return np.array([pin.updateFramePlacement(model, data, f).homogeneous for f in frames])

    zero = np.zeros(model.nv)

    def jdot_qdot(q, v):
        pin.forwardKinematics(model, data, q, v, zero)
        return np.concatenate([pin.getFrameClassicalAcceleration(model, data, f, lwa).vector[r]
                               for f, r in zip(frames, rows)])

    # a rigid contact at every tip (a point tip: 3-D), as benchmarks/backends.py's C++ rows
    contacts = pin.StdVec_RigidConstraintModel()
    for f, t in zip(frames, robot.tips):
        kind = pin.ContactType.CONTACT_3D if t.point else pin.ContactType.CONTACT_6D
        contacts.append(pin.RigidConstraintModel(kind, model, model.frames[f].parentJoint, model.frames[f].placement,
                                                 lwa))
    contact_data = pin.StdVec_RigidConstraintData()
    for c in contacts:
        contact_data.append(c.createData())
    pin.initConstraintDynamics(model, data, contacts, contact_data)
    prox = pin.ProximalSettings(1e-12, 0.0, 1)
    f_tip = np.ones(sum(3 if t.point else 6 for t in robot.tips))

    def constraint_derivatives(q, v, tau):
        pin.constraintDynamics(model, data, q, v, tau, contacts, contact_data, prox)
        pin.computeConstraintDynamicsDerivatives(model, data, contacts, contact_data, prox)

    def impulse_derivatives(q, v):
        pin.impulseDynamics(model, data, q, v, contacts, contact_data, NUMBERS["e"], prox)
        pin.computeImpulseDynamicsDerivatives(model, data, contacts, contact_data, NUMBERS["e"], prox)

    calls = {"inverse_dynamics": ("pin.rnea(model, data, q, v, a)", "rnea"),
             "mass_matrix": ("pin.crba(model, data, q)", "crba"),
             "mass_matrix_inverse": ("pin.computeMinverse(model, data, q)", "computeMinverse"),
             "forward_dynamics": ("pin.aba(model, data, q, v, a)", "aba"),
             "jacobian": ("jacobian(q)", jac_name),
             "os_inertia": ("os_inertia(q)", f"inv(J Minv J^T): {jac_name}, computeMinverse"),
             "inverse_dynamics_derivatives": ("pin.computeRNEADerivatives(model, data, q, v, a)",
                                              "computeRNEADerivatives"),
             "forward_dynamics_derivatives": ("pin.computeABADerivatives(model, data, q, v, a)",
                                              "computeABADerivatives"),
             "forward_kinematics": ("forward_kinematics(q)", "forwardKinematics + updateFramePlacement per tip"),
             "jdot_qdot": ("jdot_qdot(q, v)", "forwardKinematics(q, v, 0) + getFrameClassicalAcceleration per tip"),
             "inverse_dynamics_tip_force": ("pin.rnea(model, data, q, v, a) + jacobian(q).T @ f_tip",
                                            f"rnea + J^T f: {jac_name}"),
             "gravity": ("pin.computeGeneralizedGravity(model, data, q)", "computeGeneralizedGravity"),
             "bias_forces": ("pin.nonLinearEffects(model, data, q, v)", "nonLinearEffects"),
             "coriolis": ("pin.nonLinearEffects(model, data, q, v) - pin.computeGeneralizedGravity(model, data, q)",
                          "nonLinearEffects - computeGeneralizedGravity"),
             "tip_force_acceleration": ("-(pin.computeMinverse(model, data, q) @ (jacobian(q).T @ f_tip))",
                                        f"-Minv J^T f: computeMinverse, {jac_name}"),
             "os_inertia_inverse": ("os_inertia_inverse(q)", f"J Minv J^T: {jac_name}, computeMinverse"),
             "contact_dynamics": ("pin.constraintDynamics(model, data, q, v, a, contacts, contact_data, prox)",
                                  "constraintDynamics"),
             "impulse_dynamics": ("pin.impulseDynamics(model, data, q, v, contacts, contact_data, e, prox)",
                                  "impulseDynamics"),
             "impulse_dynamics_derivatives": ("impulse_derivatives(q, v)",
                                              "impulseDynamics + computeImpulseDynamicsDerivatives"),
             "contact_dynamics_derivatives": ("constraint_derivatives(q, v, a)",
                                              "constraintDynamics + computeConstraintDynamicsDerivatives"),
             "regressor": ("pin.computeJointTorqueRegressor(model, data, q, v, a)", "computeJointTorqueRegressor"),
             "center_of_mass": ("pin.centerOfMass(model, data, q)", "centerOfMass"),
             "com_jacobian": ("pin.jacobianCenterOfMass(model, data, q)", "jacobianCenterOfMass"),
             "centroidal_momentum_matrix": ("pin.computeCentroidalMap(model, data, q)", "computeCentroidalMap"),
             "centroidal_bias": ("pin.computeCentroidalMomentumTimeVariation(model, data, q, v, zero)",
                                 "computeCentroidalMomentumTimeVariation(q, v, 0)"),
             "centroidal_dynamics_derivatives": ("pin.computeCentroidalDynamicsDerivatives(model, data, q, v, a)",
                                                 "computeCentroidalDynamicsDerivatives")}
    return calls, dict(pin=pin, model=model, data=data, jacobian=jacobian, os_inertia=os_inertia,
                       os_inertia_inverse=os_inertia_inverse, forward_kinematics=forward_kinematics,
                       jdot_qdot=jdot_qdot, zero=zero, contacts=contacts, contact_data=contact_data, prox=prox,
                       f_tip=f_tip, e=NUMBERS["e"], constraint_derivatives=constraint_derivatives,
                       impulse_derivatives=impulse_derivatives)


def loop(statement, names, env):
    """A function of a list of states (tuples of ``names``) that runs ``statement`` on each, as a
    user's loop would (no wrapper around the call), and returns the loop's nanoseconds."""
    target = ", ".join(names) + ("," if len(names) == 1 else "") if names else "_"
    source = (f"def timed(states):\n    t0 = perf_counter_ns()\n    for {target} in states:\n"
              f"        {statement}\n    return perf_counter_ns() - t0\n")
    scope = dict(env, perf_counter_ns=time.perf_counter_ns)
    exec(source, scope)
    return scope["timed"]


def soagen_args(name, q, qd, qdd, tau, f):
    """The method's inputs (its catalogue names) from a state and a tip force or task input ``f`` (the second
    derivatives' weights: q̈ and ``f``)."""
    given = dict(q=q, qd=qd, qdd=qdd, tau=tau, f=f, u=f, qdr=qd, qddr=qdd, lam=qdd, lam_f=f, **NUMBERS)
    return tuple(given[arg] for arg in F.BY_NAME[name].inputs)


def method_names(robot_name, mod):
    """The timed methods: every one of the module (:data:`EVERY`), or :data:`FUNCTIONS`."""
    if robot_name not in EVERY:
        return FUNCTIONS
    return tuple(n for n in mod._methods() if n in mod._sig)


def build_functions(robot_name, robot):
    """The functions the module is built with: every method of the catalogue (:data:`EVERY`; but those of
    point tips only: the robot has a 6-D tip), or :data:`FUNCTIONS`."""
    if robot_name not in EVERY:
        return list(FUNCTIONS)
    return [s.name for s in F.specs(robot) if (s.family is None or s.is_family_function) and not s.point_tips]


def check(robot, mod, pin_env, states, pin_states):
    """soagen's outputs against Pinocchio's on every state (inverse and forward dynamics, M, in
    soagen's conventions; with every method, :func:`more_pairs` too); a difference aborts the run."""
    from soagen import pinocchio_convention as pc

    pin, model, data = pin_env["pin"], pin_env["model"], pin_env["data"]
    every = "forward_kinematics" in mod._sig
    if every and not (robot.nq == robot.nv and len(robot.tips) == 1 and not robot.tips[0].point):
        raise SystemExit("every method is checked on a fixed base of 1-dof joints with one 6-D tip")
    worst = 0.0
    for (q, qd, qdd, tau), (pq, pv, pa, ptau) in zip(states, pin_states):
        upper = np.triu(pin.crba(model, data, pq))
        pairs = [(mod.inverse_dynamics(q, qd, qdd), pc.v_from_pinocchio(robot, pin.rnea(model, data, pq, pv, pa))),
                 (mod.forward_dynamics(q, qd, tau), pc.v_from_pinocchio(robot, pin.aba(model, data, pq, pv, ptau))),
                 (mod.mass_matrix(q), pc.matrix_from_pinocchio(robot, upper + np.triu(upper, 1).T))]
        if every:
            pairs += more_pairs(mod, pin_env, (q, qd, qdd), (pq, pv))
        for got, want in pairs:
            worst = max(worst, np.abs(got - want).max() / max(1.0, np.abs(want).max()))
    if worst > 1e-8:
        raise SystemExit(f"soagen and Pinocchio differ by {worst:.2e} (relative): not timed")
    return worst


def more_pairs(mod, env, state, pin_state):
    """(soagen's, Pinocchio's) outputs of the other methods with a counterpart, for a fixed base of
    1-dof joints with one 6-D tip (the Panda: q and v the same in both); Pinocchio's rows [linear;
    angular] swapped to soagen's [angular; linear], its impulses (on the robot) negated.  Not the
    contact dynamics: Pinocchio's drift of a 6-D contact is soagen's with the tip at rest only."""
    pin, model, data = env["pin"], env["model"], env["data"]
    (q, qd, qdd), (pq, pv) = state, pin_state
    swap = [3, 4, 5, 0, 1, 2]
    f, J = env["f_tip"], env["jacobian"](pq)
    params = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
    qd_plus, p = mod.impulse_dynamics(q, qd, NUMBERS["e"])
    derivatives = pin.computeCentroidalDynamicsDerivatives(model, data, pq, pv, qdd)
    return [(mod.gravity(q), pin.computeGeneralizedGravity(model, data, pq)),
            (mod.bias_forces(q, qd), pin.nonLinearEffects(model, data, pq, pv)),
            (mod.coriolis(q, qd), pin.nonLinearEffects(model, data, pq, pv)
             - pin.computeGeneralizedGravity(model, data, pq)),
            (mod.center_of_mass(q), pin.centerOfMass(model, data, pq)),
            (mod.com_jacobian(q), pin.jacobianCenterOfMass(model, data, pq)),
            (mod.forward_kinematics(q), env["forward_kinematics"](pq)),
            (mod.jacobian(q), J[swap]),
            (mod.jdot_qdot(q, qd), env["jdot_qdot"](pq, pv)[swap]),
            (mod.inverse_dynamics_tip_force(q, qd, qdd, f), pin.rnea(model, data, pq, pv, qdd) + J.T @ f),
            (mod.tip_force_acceleration(q, f), -(pin.computeMinverse(model, data, pq) @ (J.T @ f))),
            (mod.os_inertia_inverse(q), env["os_inertia_inverse"](pq)[np.ix_(swap, swap)]),
            (mod.regressor(q, qd, qdd) @ mod.robot.parameters(),
             pin.computeJointTorqueRegressor(model, data, pq, pv, qdd) @ params),
            (mod.centroidal_momentum_matrix(q), pin.computeCentroidalMap(model, data, pq)[swap]),
            (mod.centroidal_bias(q, qd),
             pin.computeCentroidalMomentumTimeVariation(model, data, pq, pv, env["zero"]).vector[swap]),
            (mod.centroidal_dynamics_derivatives(q, qd, qdd)[2], derivatives[0][swap]),
            (qd_plus, pin.impulseDynamics(model, data, pq, pv, env["contacts"], env["contact_data"], NUMBERS["e"],
                                          env["prox"])),
            (p, -data.impulse_c[swap])]


def per_call_ns(timed, states, passes=PASSES):
    """Median over ``passes`` runs of ``timed(states)`` (:func:`loop`), per state."""
    return statistics.median(timed(states) / len(states) for _ in range(passes))


def bare_c(mod, name, args_list):
    """The function's scalar batch over every state in one call: (call, its arguments) timing
    the C alone (per state, dividing by the states)."""
    rows = [np.ascontiguousarray(np.array(col)) for col in zip(*args_list)]
    sig = mod._sig[name]
    outs = [np.empty((len(args_list), size)) for _, size in sig[len(rows):]]
    ffi, fn = mod._ffi, getattr(mod._lib.lib, f"{mod.name}_{name}_batch")
    pointers = [ffi.from_buffer("double[]", a) for a in rows + outs]
    count = len(args_list)
    return lambda: fn(count, *pointers)


def time_robot(robot_name, rounds=ROUNDS, seed=0):
    spec = SPECS[robot_name]
    robot = spec.robot()
    import pinocchio as pin

    work = bk.WORK / robot_name
    work.mkdir(parents=True, exist_ok=True)
    model = pin.Model()
    model.loadFromText(str(bk.pinocchio_model(spec, robot, work / "python_calls_model.txt")))
    t0 = time.perf_counter()
    mod = soagen.build(robot, functions=build_functions(robot_name, robot))
    build_s = time.perf_counter() - t0
    print(f"== {robot_name}: {sg.describe(robot)}; module built in {build_s:.1f} s", flush=True)
    drawn = draw_states(robot, STATES, seed, spec.tips_at_rest)
    states = [(drawn.q[i], drawn.qd[i], drawn.qdd[i], drawn.tau[i]) for i in range(STATES)]
    pin_states = [(sg.q_to_pinocchio(robot, q), sg.v_to_pinocchio(robot, qd), sg.v_to_pinocchio(robot, qdd),
                   sg.v_to_pinocchio(robot, tau)) for q, qd, qdd, tau in states]
    pin_calls, pin_env = pinocchio_calls(model, robot)
    worst = check(robot, mod, pin_env, states, pin_states)
    print(f"  soagen = Pinocchio on {STATES} states (inverse and forward dynamics, M"
          f"{', every other method with a counterpart but the contact dynamics' if 'gravity' in mod._sig else ''})"
          f": worst {worst:.1e}", flush=True)
    rows = {}
    f_tip = pin_env["f_tip"]                         # a tip force, or task input u, of every call
    for name in method_names(robot_name, mod):
        names = F.BY_NAME[name].inputs                      # q, qd, qdd or tau, ...: as the method reads them
        args = [soagen_args(name, *s, f_tip) for s in states]
        single_out = len(mod._sig[name]) - len(args[0]) == 1
        env = dict(mod=mod, out=getattr(mod, name)(*args[0]), c_call=bare_c(mod, name, args))
        call = f"mod.{name}({', '.join(names)}"
        pin_statement, pin_name = pin_calls.get(name, (None, None))
        pin_args = [(p[0], p[1], p[3] if {"tau"} & set(names) else p[2]) for p in pin_states]
        env["python"] = getattr(mod, name).__wrapped__
        timers = {"method": (loop(call + ")", names, env), args),
                  "python": (loop(f"python({', '.join(names)})", names, env), args),
                  "out": (loop(call + ", out=out)", names, env), args) if single_out else None,
                  "c": (loop("c_call()", [], env), [None]),
                  "pinocchio": (loop(pin_statement, ["q", "v", "a"], pin_env), pin_args) if pin_statement else None}
        samples = {what: [] for what in timers}
        for r in range(rounds):
            for what in (list(timers) if r % 2 == 0 else list(timers)[::-1]):
                if timers[what] is not None:
                    timed, states_of = timers[what]
                    samples[what].append(per_call_ns(timed, states_of) / (STATES if what == "c" else 1))
        rows[name] = dict(
            method_ns=statistics.median(samples["method"]),
            out_ns=statistics.median(samples["out"]) if samples["out"] else None,
            c_ns=statistics.median(samples["c"]), python_ns=statistics.median(samples["python"]),
            wrapper_ns=statistics.median(m - c for m, c in zip(samples["method"], samples["c"])),
            pinocchio_ns=statistics.median(samples["pinocchio"]) if pin_statement else None, pinocchio=pin_name,
            ratio=Spread.ratio(samples["method"], samples["pinocchio"]).__dict__ if pin_statement else None)
        print("  " + line(name, rows[name]), flush=True)
    return dict(robot=robot_name, describe=sg.describe(robot), states=STATES, rounds=rounds, passes=PASSES,
                command=f"python benchmarks/python_calls.py --robot {robot_name}", build_s=build_s,
                machine=cpu_identity(),
                python=platform.python_version(), pinocchio=pin.__version__, numpy=np.__version__, functions=rows)


def line(name, row):
    r = row["ratio"]
    return (f"{name:<32} {fmt_us(row['method_ns']):>7} µs  out= {fmt_us(row['out_ns']):>6}  "
            f"C {fmt_us(row['c_ns']):>6}  "
            f"wrapper {fmt_us(row['wrapper_ns']):>5}  Python path {fmt_us(row['python_ns']):>6}  "
            f"Pinocchio {fmt_us(row['pinocchio_ns']):>6} µs  "
            + (f"{r['median']:.2f}x ({r['q1']:.2f}-{r['q3']:.2f})" if r else "–"))



def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", choices=[*ROBOTS, "all"], default="panda")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--no-doc", action="store_true", help="do not write docs/python_calls.md, .json")
    args = parser.parse_args(argv)
    report = json.loads(DATA.read_text()) if DATA.exists() else {}
    for name in ROBOTS if args.robot == "all" else (args.robot,):
        rep = time_robot(name, args.rounds)
        if args.rounds != ROUNDS:
            rep["command"] += f" --rounds {args.rounds}"
        report[name] = rep
        if not args.no_doc:
            DATA.write_text(json.dumps({k: report[k] for k in ROBOTS if k in report}, indent=1) + "\n")
            DOC.write_text(python_calls_page(report))
    print(python_calls_page(report))
    return 0


import soagen  # noqa: E402  (after the benchmark's own modules, as run.py)
from soagen import functions as F  # noqa: E402
from soagen.targets.cache import cpu_identity  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
