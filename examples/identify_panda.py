"""Identify the Panda's base parameters from a simulated experiment.

The "true" robot is the Panda with perturbed inertial parameters (masses and
inertias ±30 %, centres of mass moved up to 3 cm: soagen.model.parameters.perturbed_parameters)
and joint friction the URDF does not have.  It follows a periodic excitation
(a Fourier series per joint, [Swevers et al. 1997]) under PD control with the
nominal model's feedforward; the plant is integrated at 1 kHz with the
generated forward dynamics, taking the true parameters as inputs, for two
periods; the second (periodic: the start-up transient has died out) is measured:
q with 1e-5 rad of encoder noise and the motor torques with 0.1 N m of noise.
q̇ and q̈ come from a least-squares fit of the measured q to the excitation's
Fourier basis (exact derivatives of a periodic signal), then β is identified
by weighted least squares with the generated base regressor (Gautier's
weighting: each joint's equations divided by its residual standard deviation
after ordinary least squares).  A second trajectory, not used for the fit,
measures the torque prediction error of the nominal model (β = K π_URDF) and of
the identified one.

Run: ``python examples/identify_panda.py`` (``--plot [PATH]`` also draws the figure; needs
matplotlib: ``pip install '.[examples]'``).
"""
from __future__ import annotations

import sys

import numpy as np
from _optional import plot_arguments

import soagen
from soagen.model import robots
from soagen.model.parameters import perturbed_parameters
from soagen.reference.identifiable import identifiable

PERIOD = 10.0           # s, the excitation's fundamental period
HARMONICS = 5
DT = 1e-3               # s, controller and integrator step
TORQUE_NOISE = 0.1      # N m, standard deviation
ANGLE_NOISE = 1e-5      # rad
KP, KD = 400.0, 40.0    # PD gains (1/s², 1/s), applied through the nominal M's diagonal


def panda_with_friction_columns():
    """The Panda with actuator columns (rotor inertia, viscous and Coulomb friction of
    each joint) whose nominal values are zero: the URDF has none."""
    joints = [f"panda_joint{i}" for i in range(1, 8)]
    return robots.example("panda", friction={j: (0.0, 0.0) for j in joints})


def true_parameters(robot, rng):
    """π of the plant: the URDF's perturbed, plus rotor inertias and friction."""
    pi = perturbed_parameters(robot, rng)
    n = robot.nv
    act = np.column_stack([rng.uniform(0.05, 0.2, n), rng.uniform(0.1, 0.5, n), rng.uniform(0.2, 0.8, n)])
    pi[10 * robot.nb:] = act.ravel()
    return pi


def excitation(robot, rng, amplitude=0.5):
    """Fourier coefficients (n, 2, HARMONICS) of a trajectory inside the joint limits:
    q(t) = q0 + Σ_k a_k sin(kωt)/(kω) − b_k cos(kωt)/(kω)."""
    n = robot.nv
    lo = np.array([b.limits[0] for b in robot.bodies])
    hi = np.array([b.limits[1] for b in robot.bodies])
    q0 = 0.5 * (lo + hi)
    ab = rng.normal(size=(n, 2, HARMONICS)) / np.arange(1, HARMONICS + 1)
    t = np.arange(0, PERIOD, DT)
    swing = np.abs(_fourier(q0, ab, t)[0] - q0[None]).max(axis=0)
    ab *= (amplitude * 0.5 * (hi - lo) / swing)[:, None, None]    # peak excursion: amplitude × half range
    return q0, ab


def _fourier(q0, ab, t):
    """q, q̇, q̈ (len(t), n) of the Fourier trajectory."""
    w = 2 * np.pi / PERIOD
    k = np.arange(1, ab.shape[2] + 1)
    s, c = np.sin(np.outer(t, k) * w), np.cos(np.outer(t, k) * w)
    a, b = ab[:, 0], ab[:, 1]
    q = q0[None] + (s / (k * w)) @ a.T - (c / (k * w)) @ b.T
    qd = c @ a.T + s @ b.T
    qdd = (-s * k * w) @ a.T + (c * k * w) @ b.T
    return q, qd, qdd


def simulate(mod, robot, pi_true, pi_nominal, trajectory, rng):
    """Two periods under PD + nominal feedforward, the second recorded (the start-up
    transient has died out: the motion is periodic); returns the measured q, the
    measured torques and the true motor torques, (N, n) each."""
    q0, ab = trajectory
    t = np.arange(0, 2 * PERIOD, DT)
    qr, qdr, qddr = _fourier(q0, ab, t)
    feedforward = mod.inverse_dynamics(qr, qdr, qddr, pi=pi_nominal)          # one batch call
    gains = np.diag(mod.mass_matrix(q0, pi=pi_nominal))
    q, qd = qr[0].copy(), qdr[0].copy()
    Q, T = np.empty_like(qr), np.empty_like(qr)
    for i in range(len(t)):
        Q[i] = q
        tau = feedforward[i] + gains * (KP * (qr[i] - q) + KD * (qdr[i] - qd))
        T[i] = tau
        qdd = mod.forward_dynamics(q, qd, tau, variant="FD3", pi=pi_true)
        qd = qd + DT * qdd                                                    # semi-implicit Euler
        q = q + DT * qd
    Q, T = Q[len(t) // 2:], T[len(t) // 2:]
    return Q + ANGLE_NOISE * rng.normal(size=Q.shape), T + TORQUE_NOISE * rng.normal(size=T.shape), T


def derivatives(Q, harmonics=3 * HARMONICS):
    """q, q̇, q̈ from a least-squares fit of one period of measured q to a Fourier basis."""
    t = np.arange(len(Q)) * DT
    w = 2 * np.pi / PERIOD
    k = np.arange(1, harmonics + 1)
    B = np.hstack([np.ones((len(t), 1)), np.sin(np.outer(t, k) * w), np.cos(np.outer(t, k) * w)])
    coef = np.linalg.lstsq(B, Q, rcond=None)[0]
    s, c = np.sin(np.outer(t, k) * w), np.cos(np.outer(t, k) * w)
    a, b = coef[1:harmonics + 1], coef[harmonics + 1:]
    return B @ coef, (c * k * w) @ a - (s * k * w) @ b, -(s * (k * w) ** 2) @ a - (c * (k * w) ** 2) @ b


def identify(mod, Q, QD, QDD, T):
    """β by Gautier's weighted least squares; returns β and the per-joint σ."""
    Y = mod.base_regressor(Q, QD, QDD)                                        # (N, n, b), one batch call
    n = Y.shape[1]
    A, y = Y.reshape(-1, Y.shape[2]), T.reshape(-1)
    beta = np.linalg.lstsq(A, y, rcond=None)[0]
    sigma = np.sqrt(((A @ beta - y).reshape(-1, n) ** 2).mean(axis=0))
    weights = np.tile(1.0 / sigma, len(Q))
    beta = np.linalg.lstsq(A * weights[:, None], y * weights, rcond=None)[0]
    return beta, sigma


def run(seed=0):
    """The experiment; a dict of the numbers it prints."""
    rng = np.random.default_rng(seed)
    robot = panda_with_friction_columns()
    mod = soagen.build(robot, functions=["inverse_dynamics", "mass_matrix", "forward_dynamics_fd3"],
                       parameters="inputs")
    ident = soagen.build(robot, functions=["base_regressor"])
    pi_nominal = robot.parameters()
    pi_true = true_parameters(robot, rng)
    K = identifiable(robot).K
    fit, check = excitation(robot, rng), excitation(robot, rng)
    Qm, Tm, _ = simulate(mod, robot, pi_true, pi_nominal, fit, rng)
    beta, sigma = identify(ident, *derivatives(Qm), Tm)
    Qv, Tv, Tv_true = simulate(mod, robot, pi_true, pi_nominal, check, rng)
    Yv = ident.base_regressor(*derivatives(Qv))
    before, after = Yv @ (K @ pi_nominal), Yv @ beta
    rms = lambda e: float(np.sqrt(np.mean(e ** 2)))                          # noqa: E731
    return dict(robot=robot, b=identifiable(robot).b, samples=len(Qm), sigma=sigma,
                rms_torque=rms(Tv_true), rms_before=rms(before - Tv_true), rms_after=rms(after - Tv_true),
                joint_before=np.sqrt(((before - Tv_true) ** 2).mean(axis=0)),
                joint_after=np.sqrt(((after - Tv_true) ** 2).mean(axis=0)),
                beta_error=float(np.abs(beta - K @ pi_true).max() / np.abs(K @ pi_true).max()),
                series=(np.arange(len(Qv)) * DT, Tv_true, before, after))


def report(res):
    lines = [f"Panda: {res['b']} base parameters (p = {res['robot'].n_parameters}), "
             f"{res['samples']} samples of a {PERIOD:g} s excitation at {1 / DT:g} Hz",
             "residual std per joint after OLS (N m): " + " ".join(f"{s:.3f}" for s in res["sigma"]),
             f"validation trajectory, RMS motor torque {res['rms_torque']:.2f} N m",
             f"torque prediction RMS error: nominal (URDF) {res['rms_before']:.3f} N m, "
             f"identified {res['rms_after']:.3f} N m ({res['rms_before'] / res['rms_after']:.0f}x smaller)",
             "per joint, nominal:    " + " ".join(f"{x:.3f}" for x in res["joint_before"]),
             "per joint, identified: " + " ".join(f"{x:.3f}" for x in res["joint_after"]),
             f"largest error of the identified base parameters, relative to the largest: {res['beta_error']:.1e}"]
    return "\n".join(lines)


def plot(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, true, before, after = res["series"]
    fig, axes = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
    for ax, j in zip(axes, (1, 3, 5)):
        ax.plot(t, true[:, j], "k", lw=1.2, label="plant")
        ax.plot(t, before[:, j], "C3", lw=0.9, label="nominal (URDF)")
        ax.plot(t, after[:, j], "C0--", lw=0.9, label="identified")
        ax.set_ylabel(f"τ{j + 1} (N m)")
    axes[0].legend(loc="upper right", fontsize=8)
    axes[0].set_title(f"Panda, validation trajectory: RMS error {res['rms_before']:.2f} → {res['rms_after']:.3f} N m")
    axes[-1].set_xlabel("t (s)")
    fig.tight_layout()
    fig.savefig(path, dpi=90, metadata={"Software": None})
    plt.close(fig)


def main(argv=None):
    args = plot_arguments(argv, "identify_panda.py", __doc__)
    res = run()
    print(report(res))
    if args.plot:
        plot(res, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
