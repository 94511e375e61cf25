"""iLQR on the Panda with the generated linearized step.

The Panda starts at rest in its ready pose and must reach another joint
configuration in one second, at rest, with little torque.  Each iLQR
iteration (Li & Todorov 2004) rolls the dynamics out with the generated
forward dynamics, linearizes every knot at once with one batch call of the
generated ``linearized_step`` (A, B of the semi-implicit Euler step), and runs
the Riccati backward pass with a line search on the forward pass.

    python examples/mpc_panda.py            # prints cost per iteration, time per iteration
    python examples/mpc_panda.py --plot     # also draws mpc_panda.png here (needs pip install '.[examples]')
"""
from __future__ import annotations

import time

import numpy as np
from _optional import draw, plot_arguments

import soagen
from soagen.model import robots

DT, HORIZON = 0.01, 100                       # 1 s
Q_READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
Q_GOAL = np.array([0.6, -0.3, -0.4, -1.9, 0.3, 1.9, 0.2])


def build():
    print("building the Panda's module (sympy, then gcc; cached after the first run) ...", flush=True)
    return soagen.build(robots.example("panda"), functions=["forward_dynamics", "gravity", "linearized_step"],
                        progress=True)


class Problem:
    """Quadratic cost Σ ½(x−x_g)ᵀQ(x−x_g) + ½ũᵀRũ (ũ = τ − G(q_goal)) plus a
    terminal cost, dynamics x⁺ = (q + dt q̇⁺, q̇⁺), q̇⁺ = q̇ + dt θ̈(q, q̇, τ)."""

    def __init__(self, mod):
        self.mod, self.n = mod, mod.n
        self.x_goal = np.concatenate([Q_GOAL, np.zeros(self.n)])
        self.u_ref = mod.gravity(Q_GOAL)
        self.Q = np.diag([10.0] * self.n + [0.1] * self.n)
        self.Qf = np.diag([1e4] * self.n + [1e2] * self.n)
        self.R = 1e-3 * np.eye(self.n)

    def step(self, x, u):
        q, qd = x[:self.n], x[self.n:]
        qd1 = qd + DT * self.mod.forward_dynamics(q, qd, u)
        return np.concatenate([q + DT * qd1, qd1])

    def rollout(self, x0, us):
        xs = [x0]
        for u in us:
            xs.append(self.step(xs[-1], u))
        return np.array(xs)

    def cost(self, xs, us):
        dx, du = xs - self.x_goal, us - self.u_ref
        running = 0.5 * np.einsum("ti,ij,tj->", dx[:-1], self.Q, dx[:-1]) + 0.5 * np.einsum("ti,ij,tj->", du,
                                                                                           self.R, du)
        return running + 0.5 * dx[-1] @ self.Qf @ dx[-1]


def ilqr(problem, x0, us, iterations=20, log=print, tolerance=1e-9):
    """iLQR until the cost decreases by less than ``tolerance`` (relative);
    returns the states, torques and per iteration (cost, wall time, time of the
    linearization batch call)."""
    n = problem.n
    xs = problem.rollout(x0, us)
    history = [(problem.cost(xs, us), 0.0, 0.0)]
    reg = 1e-6
    for it in range(iterations):
        t0 = time.perf_counter()
        A, B = problem.mod.linearized_step(xs[:-1, :n], xs[:-1, n:], us, np.full((len(us), 1), DT))  # all knots
        t_lin = time.perf_counter() - t0
        Vx = problem.Qf @ (xs[-1] - problem.x_goal)
        Vxx = problem.Qf.copy()
        ks, Ks = [None] * len(us), [None] * len(us)
        for t in reversed(range(len(us))):
            Qx = problem.Q @ (xs[t] - problem.x_goal) + A[t].T @ Vx
            Qu = problem.R @ (us[t] - problem.u_ref) + B[t].T @ Vx
            Qxx = problem.Q + A[t].T @ Vxx @ A[t]
            Quu = problem.R + B[t].T @ Vxx @ B[t] + reg * np.eye(n)
            Qux = B[t].T @ Vxx @ A[t]
            ks[t] = -np.linalg.solve(Quu, Qu)
            Ks[t] = -np.linalg.solve(Quu, Qux)
            Vx = Qx + Ks[t].T @ Quu @ ks[t] + Ks[t].T @ Qu + Qux.T @ ks[t]
            Vxx = Qxx + Ks[t].T @ Quu @ Ks[t] + Ks[t].T @ Qux + Qux.T @ Ks[t]
            Vxx = 0.5 * (Vxx + Vxx.T)
        best = history[-1][0]
        for alpha in (1.0, 0.5, 0.25, 0.1, 0.03):              # line search on the forward pass
            x, new_xs, new_us = x0, [x0], []
            for t in range(len(us)):
                u = us[t] + alpha * ks[t] + Ks[t] @ (x - xs[t])
                x = problem.step(x, u)
                new_xs.append(x)
                new_us.append(u)
            new_xs, new_us = np.array(new_xs), np.array(new_us)
            cost = problem.cost(new_xs, new_us)
            if cost < best:
                xs, us = new_xs, new_us
                break
        else:
            reg *= 10.0
        history.append((problem.cost(xs, us), time.perf_counter() - t0, t_lin))
        log(f"iteration {it + 1:2d}: cost {history[-1][0]:12.4f}  ({history[-1][1] * 1e3:.1f} ms, of which "
            f"linearizing {t_lin * 1e3:.2f} ms)")
        if history[-2][0] - history[-1][0] < tolerance * history[-1][0]:
            break
    return xs, us, history


def solve(iterations=20, log=print):
    mod = build()
    problem = Problem(mod)
    x0 = np.concatenate([Q_READY, np.zeros(mod.n)])
    us = np.tile(mod.gravity(Q_READY), (HORIZON, 1))          # start from gravity compensation
    xs, us, history = ilqr(problem, x0, us, iterations, log)
    return problem, xs, us, history


def plot(xs, us, history, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = us.shape[1]
    times = np.arange(len(xs)) * DT
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for i in range(n):
        axes[0].plot(times, xs[:, i], label=f"q{i + 1}")
        axes[0].axhline(Q_GOAL[i], color=f"C{i}", ls=":", lw=0.8)
        axes[1].plot(times[:-1], us[:, i])
    axes[0].set(xlabel="t (s)", ylabel="q (rad)", title="joint positions (dotted: goal)")
    axes[0].legend(fontsize=7, ncol=2)
    axes[1].set(xlabel="t (s)", ylabel="τ (N m)", title="torques")
    axes[2].semilogy([h[0] for h in history], "o-")
    axes[2].set(xlabel="iLQR iteration", ylabel="cost", title="cost")
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def main(argv=None):
    args = plot_arguments(argv, "mpc_panda.py", __doc__, options=lambda parser: parser.add_argument(
        "--iterations", type=int, default=20, help="at most this many (stops when converged)"))
    problem, xs, us, history = solve(args.iterations)
    n = problem.n
    times, lin = [h[1] for h in history[1:]], [h[2] for h in history[1:]]
    print(f"{len(history) - 1} iterations; final joint error {np.abs(xs[-1, :n] - Q_GOAL).max():.2e} rad, "
          f"final speed {np.abs(xs[-1, n:]).max():.2e} rad/s; cost {history[0][0]:.1f} -> {history[-1][0]:.4f}")
    print(f"time per iteration: median {np.median(times) * 1e3:.1f} ms (numpy Riccati pass and Python rollout "
          f"included); the {HORIZON} linearizations, one batch call of the generated linearized_step: median "
          f"{np.median(lin) * 1e3:.2f} ms ({np.median(lin) / HORIZON * 1e6:.1f} us per knot)")
    draw(args, plot, xs, us, history)


if __name__ == "__main__":
    main()
