"""solo12 standing and trotting in place under receding-horizon FDDP, on soagen's models beside Crocoddyl's own.

The problems are Crocoddyl's quadrupedal gait models (``crocoddyl.utils.quadruped``): four point feet
(``ContactModel3D``), state, control, friction-cone and foot-tracking costs, 10 ms Euler nodes.  Standing:
every node on four feet, the base pushed sideways at the start (0.3 m/s, the legs' joints moving so that the
feet stay still).  Trotting in place: the gait
cycle of ``createTrottingProblem`` with a zero step length (two support nodes, a diagonal pair's swing of
10 nodes, the impulse of its landing, the other pair's), the horizon one cycle long.  Each tick: the
horizon moves on by one node (``ShootingProblem.circularAppend``), its start is the plant's state, FDDP is
warm-started with the previous solution shifted by one node and runs at most ``--iterations``
iterations, and the plant (Crocoddyl's own model of the first node) takes the first control for one node.
The loop rate is ticks per second of the controller (shift, warm start, solve), the plant excluded.

soagen's models replace Crocoddyl's ``DifferentialActionModelContactFwdDynamics`` where ``soagen.crocoddyl``
has ``contact_fwd_dynamics`` (on a solo12 whose tips are each node's active feet); otherwise the example says so
and runs Crocoddyl's own models only.  Both backends run the gait models' own Baumgarte gains.

    python examples/mpc_solo12.py                 # both tasks, 200 ticks each
    python examples/mpc_solo12.py --ticks 50 --iterations 3
"""
from __future__ import annotations

import argparse
import sys
import time

from _optional import require

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
DT, PUSH = 1e-2, 0.3                             # node time step (s); the standing task's push (m/s, along y)
HORIZON_STANDING, SWING_KNOTS, SUPPORT_KNOTS, STEP_HEIGHT = 25, 10, 2, 0.05


def solo12():
    """Pinocchio's solo12 (example-robot-data's URDF, a free-flyer, its SRDF's poses) and the standing state."""
    from pathlib import Path

    import numpy as np
    import pinocchio as pin

    import soagen

    urdf = Path(soagen.robots.path("solo12"))
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(model, str(urdf.parents[1] / "srdf" / "solo.srdf"), False)
    return model, np.concatenate([model.referenceConfigurations["standing"], np.zeros(model.nv)])


def cycle(task, model, x0):
    """Crocoddyl's nodes of one period of ``task`` ("standing": one node; "trotting": the gait cycle) and
    the terminal node; -> (cycle, terminal, horizon in nodes)."""
    from crocoddyl.utils.quadruped import SimpleQuadrupedalGaitProblem

    gait = SimpleQuadrupedalGaitProblem(model, *FEET)
    if task == "standing":
        stance = gait.createSwingFootModel(DT, [gait.lfFootId, gait.rfFootId, gait.lhFootId, gait.rhFootId])
        return [stance], stance, HORIZON_STANDING
    problem = gait.createTrottingProblem(x0, 0.0, STEP_HEIGHT, DT, SWING_KNOTS, SUPPORT_KNOTS)
    nodes = list(problem.runningModels)
    return nodes, problem.terminalModel, len(nodes)


def mapped(replace):
    """A function of one of Crocoddyl's Euler nodes -> the node with its contact differential model ``d``
    replaced by ``replace(d)`` (the same control and time step; one new node per node; others as they are)."""
    import crocoddyl

    done = {}

    def node(m):
        d = getattr(m, "differential", None)
        if type(d) is not crocoddyl.DifferentialActionModelContactFwdDynamics:
            return m                              # impulse nodes: Crocoddyl's
        if id(m) not in done:
            done[id(m)] = crocoddyl.IntegratedActionModelEuler(replace(d), m.control, m.dt)
        return done[id(m)]
    return node


def soagen_factory(optimize="O3"):
    """:func:`mapped` of soagen's contact model (a solo12 whose tips are the node's active feet, the forces'
    derivatives computed as the gait's models do), or None where ``soagen.crocoddyl`` has no
    ``contact_fwd_dynamics``.  ``optimize``: the C++ compiler's level (O3: ``soagen.build``'s)."""
    import soagen
    import soagen.crocoddyl as sc

    if not hasattr(sc, "contact_fwd_dynamics"):
        return None
    robots = {}

    def replace(d):
        frames = d.state.pinocchio.frames
        feet = tuple(frames[i.contact.id].name for i in d.contacts.contacts.todict().values() if i.active)
        if feet not in robots:
            robots[feet] = soagen.load_urdf(soagen.robots.path("solo12"), floating_base=True,
                                            tips=[soagen.point_tip(f) for f in feet])
        return sc.contact_fwd_dynamics(robots[feet], d.state, d.actuation, d.contacts, d.costs,
                                       inv_damping=d.JMinvJt_damping, enable_force=True, optimize=optimize)
    return mapped(replace)


def pushed(model, x0, vy):
    """``x0`` with the base's y velocity ``vy`` (m/s, base frame) and the joint velocities that keep the feet
    still (each leg's three joints against its foot's three velocity components)."""
    import numpy as np
    import pinocchio as pin

    data, nq = model.createData(), model.nq
    x = x0.copy()
    x[nq + 1] += vy
    pin.computeJointJacobians(model, data, x[:nq])
    J = np.vstack([pin.getFrameJacobian(model, data, model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED)[:3]
                   for f in FEET])            # (12, 18): the feet's linear velocities, world axes
    x[nq + 6:] = np.linalg.solve(J[:, 6:], -J[:, :6] @ x[nq:nq + 6])
    return x


def run(task, nodes, terminal, plant, x0, ticks, iterations, push=0.0):
    """The receding-horizon loop; -> (ticks per second of the controller, the plant's states (ticks + 1, nx)).

    Parameters
    ----------
    task : str                       for the messages
    nodes : list of action models    one period, on the backend's models (the horizon: its first len(nodes) or
                                     the standing node repeated)
    terminal : action model
    plant : list of action models    Crocoddyl's own nodes of the period, the plant's model at each tick
    x0 : (nx,) array                 the start; ``push``: the base's initial y velocity (m/s)
    ticks, iterations : int
    """
    import crocoddyl
    import numpy as np

    horizon = len(nodes) if task == "trotting" else HORIZON_STANDING
    running = [nodes[k % len(nodes)] for k in range(horizon)]
    x = pushed(terminal.state.pinocchio, x0, push)
    problem = crocoddyl.ShootingProblem(x, running, terminal)
    problem.nthreads = 1
    solver = crocoddyl.SolverFDDP(problem)
    solver.solve([x] * (horizon + 1), problem.quasiStatic([x] * horizon), 50, False)   # the first plan, not timed
    plant_data = [m.createData() for m in plant]
    states, busy = [x.copy()], 0.0
    for k in range(ticks):
        m, i = plant[k % len(plant)], k % len(plant)
        m.calc(plant_data[i], x, solver.us[0])
        x = plant_data[i].xnext.copy()
        states.append(x.copy())
        t0 = time.perf_counter()
        xs, us = list(solver.xs), list(solver.us)
        problem.circularAppend(problem.runningModels[0], problem.runningDatas[0])
        problem.x0 = x
        solver.solve([x, *xs[2:], xs[-1]], [*us[1:], us[0]], iterations, False)
        busy += time.perf_counter() - t0
    return ticks / busy, np.array(states)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=200, help="ticks per task (10 ms each)")
    parser.add_argument("--iterations", type=int, default=1, help="FDDP iterations per tick at most")
    parser.add_argument("--task", choices=["standing", "trotting", "both"], default="both")
    args = parser.parse_args(argv)
    require("mpc_solo12.py", ["crocoddyl", "example-robot-data"])
    results = simulate(args.ticks, args.iterations, ["standing", "trotting"] if args.task == "both" else [args.task])
    for task, res in results.items():
        print(report(task, res, args.ticks, args.iterations))
    return 0


def simulate(ticks, iterations, tasks, log=print, optimize="O3", soagen_tasks=None):
    """Each task on Crocoddyl's models and (where there are) soagen's, those of ``soagen_tasks`` (default: all)
    on soagen's built at ``optimize``; -> {task: {backend: (Hz, states)}}."""
    import numpy as np

    model, x0 = solo12()
    factory = soagen_factory(optimize)
    if factory is None:
        log("soagen's models: soagen.crocoddyl has no contact_fwd_dynamics in this soagen; "
            "Crocoddyl's own models only")
    out = {}
    for task in tasks:
        nodes, terminal, _ = cycle(task, model, x0)
        push = PUSH if task == "standing" else 0.0
        ours = None
        if factory is not None and task in (tasks if soagen_tasks is None else soagen_tasks):
            ours = [factory(m) for m in nodes], factory(terminal)
        out[task] = {"crocoddyl": run(task, nodes, terminal, nodes, x0, ticks, iterations, push)}
        if ours is not None:
            out[task]["soagen"] = run(task, *ours, nodes, x0, ticks, iterations, push)
        out[task]["x0"] = np.array(x0)
        out[task]["feet"] = {b: feet(model, out[task][b][1]) for b in ("soagen", "crocoddyl")
                             if b in out[task]}
    return out


def feet(model, states):
    """The feet's positions (m, world frame) at each state; -> (len(states), 4, 3)."""
    import numpy as np
    import pinocchio as pin

    data, frames = model.createData(), [model.getFrameId(f) for f in FEET]
    out = []
    for x in states:
        pin.framesForwardKinematics(model, data, x[:model.nq])
        out.append([data.oMf[f].translation.copy() for f in frames])
    return np.array(out)


def lift(positions):
    """The most a foot rose above its starting height (m), of :func:`feet`'s positions."""
    return float((positions[:, :, 2] - positions[0, :, 2]).max())


def report(task, res, ticks, iterations):
    """The lines printed for one task."""
    import numpy as np

    lines = [f"{task}: {ticks} ticks of {DT * 1e3:.0f} ms, at most {iterations} FDDP iteration(s) per tick"]
    for backend in ("soagen", "crocoddyl"):
        if backend in res:
            hz, states = res[backend]
            base, up = states[-1, :3] - res["x0"][:3], lift(res["feet"][backend])
            lines.append(f"  {backend:<9} {hz:8.0f} ticks/s ({1e3 / hz:.2f} ms per tick); base moved "
                         f"({base[0]:+.3f}, {base[1]:+.3f}, {base[2]:+.3f}) m; a foot lifted {up:.3f} m at most")
    if "soagen" in res:
        diff = np.max(np.abs(res["soagen"][1] - res["crocoddyl"][1]))
        lines.append(f"  soagen / Crocoddyl loop rate {res['soagen'][0] / res['crocoddyl'][0]:.2f}x; the plant's "
                     f"states {diff:.1e} apart")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
