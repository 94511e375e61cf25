"""Two Panda arms holding one bar ([RJK] §5.3), simulated with generated code.

The arms face each other 0.8 m apart; their hands are welded to a massless bar
(one held point, rigid in all 6 directions).  Each arm applies gravity
compensation plus a slow sinusoidal joint torque and joint damping; the generated closed-chain
forward dynamics returns both arms' accelerations and the internal wrench.
Integration is semi-implicit Euler at 1 ms with no constraint stabilization,
so the plot shows the raw constraint drift (position and orientation of hand b
relative to hand a).  ``python examples/closed_chain_bar.py`` prints the drift;
``--plot [PATH]`` also draws the figure (needs matplotlib; ``pip install '.[examples]'``).
"""
from __future__ import annotations


import numpy as np
from _optional import draw, plot_arguments

import soagen
from soagen import reference as ref
from soagen.model import robots
from soagen.model.spatial import rpy_matrix

DAMPING = 2.0             # joint damping (N m s/rad) so the free motion stays bounded
QA0 = np.array([0.0, 0.3, 0.0, -1.8, 0.0, 2.1, 0.785])


def make_chain():
    """Arm b is arm a's mirror image: base turned by π about z, hands meeting in the middle."""
    panda = robots.example("panda")
    qb0 = QA0.copy()
    pa = ref.forward_kinematics(panda, QA0)[0][:3, 3]
    R = rpy_matrix([0.0, 0.0, np.pi])
    P = np.eye(4)
    P[:3, :3] = R
    P[:3, 3] = pa - R @ pa          # hand b lands on hand a
    return soagen.closed_chain(panda, "panda_hand", panda, "panda_hand", placement=P, name="two_pandas"), qb0


def relative_pose_error(chain, qa, qb, T_rel0):
    """Drift of hand b relative to hand a: position (m) and rotation angle (rad)."""
    Ta = ref.forward_kinematics(chain.robot_a, qa)[0]
    Tb_local = ref.forward_kinematics(chain.robot_b, qb)[0]
    P = np.eye(4)
    P[:3, :3], P[:3, 3] = chain.rotation, chain.translation
    T_rel = np.linalg.inv(Ta) @ P @ Tb_local
    dR = T_rel0[:3, :3].T @ T_rel[:3, :3]
    angle = np.arccos(np.clip((np.trace(dR) - 1) / 2, -1.0, 1.0))
    return np.linalg.norm(T_rel[:3, 3] - T_rel0[:3, 3]), angle


def simulate(duration=5.0, dt=1e-3):
    chain, qb0 = make_chain()
    mod = soagen.build(chain)
    ga, gb = soagen.build(chain.robot_a, functions=["gravity"]), soagen.build(chain.robot_b, functions=["gravity"])
    qa, qb, qda, qdb = QA0.copy(), qb0.copy(), np.zeros(7), np.zeros(7)
    Ta = ref.forward_kinematics(chain.robot_a, qa)[0]
    P = np.eye(4)
    P[:3, :3], P[:3, 3] = chain.rotation, chain.translation
    T_rel0 = np.linalg.inv(Ta) @ P @ ref.forward_kinematics(chain.robot_b, qb)[0]
    steps = int(round(duration / dt))
    times = np.arange(steps) * dt
    drift = np.zeros((steps, 2))
    force = np.zeros((steps, 6))
    amp = np.array([2.0, 3.0, 2.0, 3.0, 1.0, 1.0, 0.5])
    for i, t in enumerate(times):
        ta = ga.gravity(qa) + amp * np.sin(2 * np.pi * 0.5 * t) - DAMPING * qda
        tb = gb.gravity(qb) - amp * np.sin(2 * np.pi * 0.3 * t + 0.5) - DAMPING * qdb
        qdda, qddb, f = mod.forward_dynamics(qa, qda, ta, qb, qdb, tb)
        qda, qdb = qda + dt * qdda, qdb + dt * qddb
        qa, qb = qa + dt * qda, qb + dt * qdb
        drift[i] = relative_pose_error(chain, qa, qb, T_rel0)
        force[i] = f
    return times, drift, force


def plot(times, drift, force, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax1.semilogy(times, np.maximum(drift[:, 0] * 1e3, 1e-12), label="position drift (mm)")
    ax1.semilogy(times, np.maximum(drift[:, 1] * 1e3, 1e-12), label="orientation drift (mrad)")
    ax1.set_xlabel("t (s)"), ax1.legend(), ax1.set_title("constraint drift, Euler 1 ms, no stabilization")
    for j, lab in enumerate(["Nx", "Ny", "Nz", "Fx", "Fy", "Fz"]):
        ax2.plot(times, force[:, j], label=lab)
    ax2.set_xlabel("t (s)"), ax2.legend(ncol=2), ax2.set_title("wrench hand a exerts on hand b (N, N m)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    args = plot_arguments(argv, "closed_chain_bar.py", __doc__)
    times, drift, force = simulate()
    print(f"after {times[-1] + times[1]:.1f} s: position drift {drift[-1, 0] * 1e3:.4f} mm, "
          f"orientation drift {drift[-1, 1] * 1e3:.4f} mrad, max |f| {np.abs(force).max():.2f}")
    draw(args, plot, times, drift, force)


if __name__ == "__main__":
    main()
