"""Operational space control of the Franka Panda with generated code only.

The hand tracks a horizontal circle (radius 10 cm, period 4 s) and holds its
orientation.  Each 1 ms control step calls the generated ``osc_torque``
(F = Λu + c + g, T = JᵀF in four sweeps, [KJR]) plus a joint-space null-space
damping term; the plant is integrated with the generated forward dynamics (FD4)
by semi-implicit Euler at 1 ms.  Run ``python examples/osc_panda.py`` to print
the tracking error; ``--plot [PATH]`` also draws the figure (needs matplotlib; ``pip install '.[examples]'``).
"""
from __future__ import annotations

import time

import numpy as np
from _optional import draw, plot_arguments

import soagen
from soagen.model import robots

Q0 = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 1.9, 0.785])
RADIUS, PERIOD = 0.10, 4.0
KP, KD = 400.0, 40.0          # task-space gains (1/s², 1/s): critically damped, ω_n = 20 rad/s
KP_ROT, KD_ROT = 400.0, 40.0
KD_NULL = 5.0                 # null-space joint damping (N m s/rad)


def orientation_error(R, R_d):
    """Rotation vector e with R_d = exp(ẽ) R for small errors (world axes)."""
    E = R_d @ R.T
    return 0.5 * np.array([E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]])


def desired(t, center):
    """Position, velocity and acceleration on the circle; the phase rate ramps
    from 0 to 1 over the first second by a smoothstep (continuous acceleration)."""
    w = 2 * np.pi / PERIOD
    if t < 1.0:
        s, sd, sdd = t ** 3 - t ** 4 / 2.0, 3 * t ** 2 - 2 * t ** 3, 6 * t - 6 * t ** 2
    else:
        s, sd, sdd = t - 0.5, 1.0, 0.0
    th, thd, thdd = w * s, w * sd, w * sdd
    p = center + RADIUS * np.array([np.cos(th) - 1.0, np.sin(th), 0.0])
    v = RADIUS * np.array([-np.sin(th), np.cos(th), 0.0]) * thd
    a = RADIUS * (np.array([-np.cos(th), -np.sin(th), 0.0]) * thd ** 2
                  + np.array([-np.sin(th), np.cos(th), 0.0]) * thdd)
    return p, v, a


def simulate(mod, duration=8.0, dt=1e-3):
    """Closed-loop run; returns times, desired and actual hand positions, orientation errors."""
    q, qd = Q0.copy(), np.zeros(7)
    T0 = mod.forward_kinematics(q)[0]
    center, R_d = T0[:3, 3].copy(), T0[:3, :3].copy()
    steps = int(round(duration / dt))
    log = {k: np.zeros((steps, 3)) for k in ("p_d", "p", "rot_err")}
    times = np.arange(steps) * dt
    for i, t in enumerate(times):
        T = mod.forward_kinematics(q)[0]
        J = mod.jacobian(q)
        twist = J @ qd                                    # [ω; v], world axes at the hand
        p_d, v_d, a_d = desired(t, center)
        e_rot = orientation_error(T[:3, :3], R_d)
        u = np.concatenate([KP_ROT * e_rot - KD_ROT * twist[:3],
                            a_d + KD * (v_d - twist[3:]) + KP * (p_d - T[:3, 3])])
        tau = mod.osc_torque(q, qd, u)
        # null space: τ_0 projected by (I − Jᵀ J̄ᵀ), J̄ = M⁻¹JᵀΛ (dynamically consistent inverse)
        Jbar = mod.mass_matrix_inverse(q) @ J.T @ mod.os_inertia(q)
        tau += (np.eye(7) - J.T @ Jbar.T) @ (-KD_NULL * qd)
        qdd = mod.forward_dynamics(q, qd, tau)
        qd = qd + dt * qdd
        q = q + dt * qd
        log["p_d"][i], log["p"][i], log["rot_err"][i] = p_d, T[:3, 3], e_rot
    return times, log


def tracking_error(times, log, after=2.0):
    """Max position error (m) and orientation error (rad) after ``after`` seconds."""
    keep = times >= after
    pos = np.linalg.norm(log["p"][keep] - log["p_d"][keep], axis=1).max()
    rot = np.linalg.norm(log["rot_err"][keep], axis=1).max()
    return pos, rot


def plot(times, log, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    ax1.plot(log["p_d"][:, 0], log["p_d"][:, 1], "k--", lw=2, label="desired")
    ax1.plot(log["p"][:, 0], log["p"][:, 1], "C0", lw=1, label="actual")
    ax1.set_xlabel("x (m)"), ax1.set_ylabel("y (m)"), ax1.axis("equal"), ax1.legend()
    ax1.set_title("Panda hand, operational space control (generated C)")
    err = np.linalg.norm(log["p"] - log["p_d"], axis=1)
    ax2.semilogy(times, np.maximum(err * 1e3, 1e-9), label="position error (mm)")
    ax2.semilogy(times, np.maximum(np.linalg.norm(log["rot_err"], axis=1) * 1e3, 1e-9),
                 label="orientation error (mrad)")
    ax2.axhline(1.0, color="r", lw=0.8, ls=":", label="1 mm")
    ax2.set_xlabel("t (s)"), ax2.legend(), ax2.set_title("tracking error")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    args = plot_arguments(argv, "osc_panda.py", __doc__)
    print("building the Panda's module (sympy, then gcc; cached after the first run) ...", flush=True)
    t0 = time.perf_counter()
    mod = soagen.build(robots.example("panda"), progress=True)
    print(f"built in {time.perf_counter() - t0:.1f} s; simulating 8 s of operational space control at 1 kHz ...",
          flush=True)
    t0 = time.perf_counter()
    times, log = simulate(mod)
    print(f"simulated in {time.perf_counter() - t0:.2f} s")
    pos, rot = tracking_error(times, log)
    print(f"after 2 s: max position error {pos * 1e3:.4f} mm, max orientation error {rot * 1e3:.4f} mrad")
    draw(args, plot, times, log)


if __name__ == "__main__":
    main()
