"""Trajectory optimization with CasADi and IPOPT on soagen's dynamics and their exact derivatives.

The Panda from rest at Q_START to rest at Q_GOAL in 1 s: 50 intervals of multiple shooting,
one RK4 step each on x = (q, q̇), ẋ = (q̇, FD(q, q̇, τ)); torque limits; minimum effort
Σ τᵀτ Δt.  The step is ``soagen.casadi.functions(robot, ["rk4_step"])``: the generated forward
dynamics and the RK4 step in C, called by CasADi, its Jacobian soagen's analytical derivatives
chained through the four stages in C (no CasADi graph of the robot).  IPOPT with the
limited-memory Hessian (soagen gives no second derivatives).

    python examples/trajopt_panda.py
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from _optional import require

import soagen
from soagen.model import robots

Q_START = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
Q_GOAL = np.array([0.6, -0.3, -0.4, -1.9, 0.3, 1.9, 0.2])
TAU_MAX = np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0])   # N m, the Panda's joint torque limits
DURATION, INTERVALS = 1.0, 50


def rk4(f, x, u, dt):
    """One RK4 step of ẋ = f(x, u) (CasADi expressions or numpy arrays)."""
    k1 = f(x, u)
    k2 = f(x + dt / 2 * k1, u)
    k3 = f(x + dt / 2 * k2, u)
    k4 = f(x + dt * k3, u)
    return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def rk4_of(fd, n):
    """The RK4 step ``(x, tau, dt) -> x_next`` written in CasADi around a forward dynamics
    ``fd(q, qd, tau)`` (any casadi.Function): CasADi chains its derivatives through the stages."""
    import casadi

    def f(x, u):
        return casadi.vertcat(x[n:], fd(x[:n], x[n:], u))

    return lambda x, u, dt: rk4(f, x, u, dt)


def problem(step, n, intervals=INTERVALS, duration=DURATION):
    """The multiple-shooting NLP on ``step(x, tau, dt) -> x_next``: (casadi.Opti, states X (2n, N+1),
    torques U (n, N))."""
    import casadi

    dt = duration / intervals
    opti = casadi.Opti()
    X, U = opti.variable(2 * n, intervals + 1), opti.variable(n, intervals)
    for k in range(intervals):
        opti.subject_to(X[:, k + 1] == step(X[:, k], U[:, k], dt))
    opti.subject_to(X[:, 0] == np.r_[Q_START, np.zeros(n)])
    opti.subject_to(X[:, -1] == np.r_[Q_GOAL, np.zeros(n)])
    opti.subject_to(opti.bounded(-TAU_MAX, U, TAU_MAX))
    opti.minimize(casadi.sumsqr(U) * dt)
    for k in range(intervals + 1):                  # initial guess: the straight line in q, at rest
        opti.set_initial(X[:n, k], Q_START + (Q_GOAL - Q_START) * k / intervals)
    return opti, X, U


def solve(optimize="O3", verbose=False):
    """Build, solve; -> dict of the solution, IPOPT's statistics and the times."""
    robot = robots.example("panda")
    print("building the Panda's CasADi library (sympy, then gcc; cached after the first run) ...", flush=True)
    t0 = time.perf_counter()
    step, = soagen.casadi.functions(robot, ["rk4_step"], optimize=optimize, progress=True)
    setup = time.perf_counter() - t0
    opti, X, U = problem(step, robot.n)
    opti.solver("ipopt", {"print_time": False, "ipopt.hessian_approximation": "limited-memory",
                          "ipopt.tol": 1e-8, "ipopt.acceptable_iter": 0,      # converge to tol
                          "ipopt.print_level": 5 if verbose else 0, "ipopt.sb": "yes"})
    print(f"built in {setup:.1f} s; solving {INTERVALS} intervals of multiple shooting with IPOPT ...", flush=True)
    t0 = time.perf_counter()
    sol = opti.solve()
    wall = time.perf_counter() - t0
    stats = sol.stats()
    return dict(robot=robot, X=np.array(sol.value(X)), U=np.array(sol.value(U)).reshape(robot.n, -1),
                objective=float(sol.value(opti.f)), stats=stats, setup=setup, wall=wall)


def replay(robot, U, duration=DURATION):
    """The torques U (n, N) played on soagen's Python module with the same RK4 steps; -> the states."""
    mod = soagen.build(robot, functions=["forward_dynamics"])
    n, steps = robot.n, U.shape[1]
    dt = duration / steps
    xs = [np.r_[Q_START, np.zeros(n)]]
    for k in range(steps):
        xs.append(rk4(lambda x, u: np.r_[x[n:], mod.forward_dynamics(x[:n], x[n:], u)], xs[-1], U[:, k], dt))
    return np.array(xs).T


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="IPOPT's iteration log")
    args = parser.parse_args(argv)
    require("trajopt_panda.py", ["casadi"])
    r = solve(verbose=args.verbose)
    s = r["stats"]
    evals = s["t_wall_nlp_g"] + s["t_wall_nlp_jac_g"]
    print(f"IPOPT: {s['return_status']} in {s['iter_count']} iterations, {r['wall']:.2f} s "
          f"({r['wall'] / max(s['iter_count'], 1) * 1e3:.1f} ms per iteration); constraints and their Jacobian "
          f"{evals:.3f} s of it; minimum effort {r['objective']:.4f} N² m² s")
    X = replay(r["robot"], r["U"])
    print(f"the torques replayed on the Python module reach the goal within "
          f"{np.abs(X[:7, -1] - Q_GOAL).max():.1e} rad, at {np.abs(X[7:, -1]).max():.1e} rad/s; "
          f"largest |tau| / limit {np.max(np.abs(r['U']) / TAU_MAX[:, None]):.2f}")


if __name__ == "__main__":
    main()
