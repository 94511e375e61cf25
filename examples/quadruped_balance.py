"""Solo12 balancing on four point feet against a push, then lifting a foot.

A whole-body controller built on the centroidal momentum and the contact
dynamics holds the base of the Solo12 quadruped (12 joints and a floating base:
nq = 19, nv = 18) while a 6 N sideways push acts on it for 0.1 s.  Each 1 ms
step the controller

* asks for a rate of the centroidal momentum h_G = A_G q̇ (a PD on the centre of
  mass and, through the locked composite inertia, on the base orientation),
* distributes the wrench it needs over the feet by least squares (the forces
  the ground applies at the feet, world axes),
* solves [J; A_G] q̈ = [−J̇q̇; ḣ_des − Ȧ_G q̇] for accelerations that keep the
  feet still, and
* returns τ = M q̈ + C + G + Jᵀ f (the generated inverse dynamics with tip
  forces) on the 12 actuated joints; the floating base gets nothing.

The plant is the generated ``contact_dynamics`` (rigid contact at every foot)
integrated by semi-implicit Euler at 1 ms; the push enters it as a generalized
force the controller does not know.  After the robot has recovered it shifts
its centre of mass over the other three feet, unloads the front-left foot and
switches to a second build of the same robot with three feet, on which it
lifts that foot.  Run ``python examples/quadruped_balance.py`` to print the
summary (docs/quadruped_balance.txt is one run's output); ``--plot [PATH]``
also draws the figure.  Needs example-robot-data (and matplotlib to plot):
``pip install '.[examples]'``.
"""
from __future__ import annotations

import time

import numpy as np
from _optional import draw, plot_arguments

import soagen

FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
LIFTED = "FL_FOOT"                       # the foot the second contact set leaves out
STAND = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6,           # FL, FR: hip abduction, hip, knee (rad)
                  0.0, -0.8, 1.6, 0.0, -0.8, 1.6])          # HL, HR
FUNCTIONS = ["contact_dynamics", "inverse_dynamics_tip_force", "center_of_mass", "centroidal_momentum_matrix",
             "centroidal_bias", "jacobian", "jdot_qdot", "forward_kinematics"]
KP_COM, KD_COM = 100.0, 20.0             # centre of mass (1/s², 1/s): critically damped, ω_n = 10 rad/s
KP_ROT, KD_ROT = 100.0, 20.0             # base orientation (1/s²) and angular momentum damping (1/s)
KP_SWING, KD_SWING = 400.0, 40.0         # the lifted leg's joints (1/s², 1/s)
MU = 0.8                                 # friction coefficient the contact forces are checked against
PUSH = np.array([0.0, 6.0, 0.0])         # N, world axes, on the base origin (sideways, +y)
PUSH_START, PUSH_END = 0.2, 0.3          # s
SHIFT = (1.5, 2.0)                       # s: the centre of mass moves towards the three standing feet,
SHIFT_BY = 0.6                           # this fraction of the way to their centroid (horizontal)
UNLOAD = (2.0, 2.3)                      # s: the front-left foot's share of the load goes to zero
SWITCH = UNLOAD[1]                       # s: from here the plant and controller have three feet
LIFT = (SWITCH, SWITCH + 0.4)            # s: the front-left leg folds (hip +0.3 rad, knee -0.6 rad)
LIFT_BY = np.array([0.0, 0.3, -0.6])


def load(feet):
    """Solo12 with point tips (3 rows each, world axes) at ``feet``, on a floating base."""
    return soagen.load_urdf(soagen.robots.path("solo12"), tips=[soagen.point_tip(f) for f in feet],
                            floating_base=True)


def build(feet, optimize="O1"):
    """(robot, module, seconds to generate and compile)."""
    robot = load(feet)
    print(f"building solo12's module with {len(feet)} point feet (sympy, then gcc; cached after the first run) ...",
          flush=True)
    t0 = time.perf_counter()
    mod = soagen.build(robot, functions=FUNCTIONS, optimize=optimize, progress=True)
    return robot, mod, time.perf_counter() - t0


def quat_matrix(xyzw):
    """Rotation matrix (3, 3) of a unit quaternion (x, y, z, w)."""
    x, y, z, w = xyzw
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def rotation_error(R, R_d):
    """Rotation vector e (world axes) with R_d = exp(ẽ) R for small errors."""
    E = R_d @ R.T
    return 0.5 * np.array([E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]])


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def smoothstep(t, window):
    """0 before ``window``, 1 after it, a C¹ cubic in between."""
    s = np.clip((t - window[0]) / (window[1] - window[0]), 0.0, 1.0)
    return s * s * (3 - 2 * s)


def standing_configuration(mod):
    """q (19,): STAND with the base raised until the feet touch z = 0, level, at the origin in x and y."""
    q = np.concatenate([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], STAND])
    q[2] = -mod.forward_kinematics(q)[:, 2, 3].mean()
    return q


def momentum_rate(A, qd, c, R, c_ref, R_ref, mass):
    """ḣ_des (6,) = [k̇; l̇], world axes, angular about the centre of mass.

    l̇ = m (Kp (c_ref − c) − Kd ċ); k̇ = I_G Kp e_R − Kd k with I_G = A_G[:3, :3] Rᵀ the
    composite inertia about the centre of mass (A_G's base columns take the body-frame ω).
    """
    h = A @ qd                                             # [k; l], l = m ċ
    inertia = A[:3, :3] @ R.T
    k_dot = inertia @ (KP_ROT * rotation_error(R, R_ref)) - KD_ROT * h[:3]
    l_dot = mass * KP_COM * (c_ref - c) - KD_COM * h[3:]
    return np.concatenate([k_dot, l_dot])


def distribute(wrench, feet, c, weights):
    """Forces λ (k, 3) the ground applies at the ``feet`` (k, 3), world axes, with
    Σ [(p_i − c) × λ_i; λ_i] = ``wrench`` and least Σ w_i |λ_i|²."""
    G = np.hstack([np.vstack([skew(p - c), np.eye(3)]) for p in feet])          # (6, 3k)
    w_inv = np.repeat(1.0 / np.asarray(weights), 3)
    lam = w_inv * (G.T @ np.linalg.solve((G * w_inv) @ G.T, wrench))
    return lam.reshape(-1, 3)


def control(mod, q, qd, ref, weights, swing=None):
    """Joint torques τ (18,), zero on the floating base's 6 entries, and the planned foot forces.

    ``ref``: (c_ref (3,), R_ref (3, 3), mass, gravity (3,)); ``weights``: one per foot in the
    module; ``swing``: (v indices, q̈ (3,)) of a leg out of contact, else None.
    """
    c_ref, R_ref, mass, gravity = ref
    A = mod.centroidal_momentum_matrix(q)                   # (6, 18) [angular about com; linear], world
    c, R = mod.center_of_mass(q), quat_matrix(q[3:7])
    hdot = momentum_rate(A, qd, c, R, c_ref, R_ref, mass)
    feet = mod.forward_kinematics(q)[:, :3, 3]              # (k, 3) foot points, world
    wrench = hdot - np.concatenate([np.zeros(3), mass * gravity])   # what the ground must apply
    lam = distribute(wrench, feet, c, weights)
    rows = [mod.jacobian(q), A]                             # (3k, 18) feet held still; momentum rate
    rhs = [-mod.jdot_qdot(q, qd), hdot - mod.centroidal_bias(q, qd)]
    if swing is not None:
        idx, qdd_swing = swing
        S = np.zeros((len(idx), q.size - 1))
        S[np.arange(len(idx)), idx] = 1.0
        rows.append(S)
        rhs.append(qdd_swing)
    qdd = np.linalg.solve(np.vstack(rows), np.concatenate(rhs))
    f = -lam.ravel()                                        # what the feet exert on the ground
    tau = mod.inverse_dynamics(q, qd, qdd, f_tip=f)         # M q̈ + C + G + Jᵀ f
    residual = np.abs(tau[:6]).max()                        # ≈ 0: the plan satisfies the base's equations
    tau[:6] = 0.0                                           # the floating base is not actuated
    return tau, f, residual


def push_torque(q, t, push=PUSH):
    """Generalized force (18,) of the push: a world force F at the base origin does work
    F · (R v), so its entries are Rᵀ F on the base's body-frame linear velocity v."""
    tau = np.zeros(18)
    if PUSH_START <= t < PUSH_END:
        tau[3:6] = quat_matrix(q[3:7]).T @ push
    return tau


def swing_reference(t, q0_leg):
    """Joint positions, velocities and accelerations (3,) of the lifted leg."""
    s = np.clip((t - LIFT[0]) / (LIFT[1] - LIFT[0]), 0.0, 1.0)
    T = LIFT[1] - LIFT[0]
    pos, vel, acc = s * s * (3 - 2 * s), (6 * s - 6 * s * s) / T, (6 - 12 * s) / T ** 2 * (0 < s < 1)
    return q0_leg + pos * LIFT_BY, vel * LIFT_BY, acc * LIFT_BY


def simulate(four, three, duration=2.8, dt=1e-3, push=PUSH):
    """Closed-loop run; ``four``, ``three``: (robot, module) with all feet and without LIFTED;
    ``push``: the force (3,) on the base between PUSH_START and PUSH_END.

    Returns times (N,) and a log of arrays: com (N, 3), base (N, 3), normal (N, 4) forces the
    ground applies (N; NaN for the lifted foot), tangential (N, 4), residual (N,) of the base's
    equations in the plan, com_ref (N, 3), lifted (N,) height of the lifted foot, drift (N,) of the standing feet.
    """
    robot, mod = four
    mass = sum(b.mass for b in robot.bodies)
    gravity = np.asarray(robot.gravity, float)
    q, qd = standing_configuration(mod), np.zeros(robot.nv)
    c0, R0 = mod.center_of_mass(q), quat_matrix(q[3:7])
    feet0 = mod.forward_kinematics(q)[:, :3, 3]             # (4, 3) where the feet stand
    keep = [FEET.index(f) for f in FEET if f != LIFTED]     # feet of the three-foot build, in its order
    lifted = FEET.index(LIFTED)
    leg_v = robot.vslice(1 + 3 * lifted).start              # the lifted leg's first joint in q̇ and in q
    leg_q = robot.qslice(1 + 3 * lifted).start
    steps = round(duration / dt)
    times = np.arange(steps) * dt
    log = {"com": np.zeros((steps, 3)), "base": np.zeros((steps, 3)), "normal": np.full((steps, 4), np.nan),
           "tangential": np.full((steps, 4), np.nan), "residual": np.zeros(steps), "lifted": np.zeros(steps),
           "drift": np.zeros(steps), "com_ref": np.zeros((steps, 3))}
    centroid = feet0[keep, :2].mean(axis=0)
    for i, t in enumerate(times):
        on_three = t >= SWITCH
        mod = three[1] if on_three else four[1]
        c_ref = c0.copy()
        c_ref[:2] += SHIFT_BY * smoothstep(t, SHIFT) * (centroid - c0[:2])
        if on_three:
            weights, ref_leg = np.ones(3), swing_reference(t, STAND[3 * lifted:3 * lifted + 3])
            p, v, a = ref_leg
            qdd_leg = a + KP_SWING * (p - q[leg_q:leg_q + 3]) + KD_SWING * (v - qd[leg_v:leg_v + 3])
            swing = (np.arange(leg_v, leg_v + 3), qdd_leg)
        else:
            weights = np.ones(4)
            weights[lifted] = 1.0 / max(1.0 - smoothstep(t, UNLOAD), 1e-4)
            swing = None
        tau, _, residual = control(mod, q, qd, (c_ref, R0, mass, gravity), weights, swing)
        qdd, f = mod.contact_dynamics(q, qd, tau + push_torque(q, t, push))     # plant: rigid feet
        ground = -f.reshape(-1, 3)                          # (k, 3) what the ground applies, world
        cols = keep if on_three else range(4)
        log["normal"][i, cols] = ground[:, 2]
        log["tangential"][i, cols] = np.linalg.norm(ground[:, :2], axis=1)
        feet = mod.forward_kinematics(q)[:, :3, 3]
        log["drift"][i] = np.linalg.norm(feet - feet0[cols], axis=1).max()
        log["lifted"][i] = four[1].forward_kinematics(q)[lifted, 2, 3] - feet0[lifted, 2]
        log["com"][i], log["com_ref"][i], log["base"][i] = mod.center_of_mass(q), c_ref, q[:3]
        log["residual"][i] = residual
        qd = qd + dt * qdd                                  # semi-implicit Euler
        q = mod.integrate(q, qd, dt)
    return times, log


def summary(times, log):
    """The figures the example prints (a dict of floats and bools)."""
    dev = np.linalg.norm(log["com"] - log["com_ref"], axis=1)
    rest = (times >= PUSH_START) & (times < SHIFT[0])       # the push and the recovery
    outside = np.nonzero(rest & (dev > 1e-3))[0]
    settle = times[outside[-1]] + (times[1] - times[0]) - PUSH_START if outside.size else 0.0
    three = times >= SWITCH
    ratio = log["tangential"] / log["normal"]
    lifted = FEET.index(LIFTED)
    return {
        "standing_normal": np.nansum(log["normal"][times < PUSH_START], axis=1).mean(),
        "max_dev_mm": dev[rest].max() * 1e3,
        "max_height_mm": np.abs(log["com"][rest, 2] - log["com_ref"][rest, 2]).max() * 1e3,
        "max_base_height_mm": np.abs(log["base"][rest, 2] - log["base"][0, 2]).max() * 1e3,
        "settle_s": settle,
        "final_mm": dev[times < SHIFT[0]][-1] * 1e3,
        "min_normal_push": np.nanmin(log["normal"][rest]),
        "max_normal_push": np.nanmax(log["normal"][rest]),
        "max_ratio_push": np.nanmax(ratio[rest]),
        "max_ratio": np.nanmax(ratio),
        "min_normal": np.nanmin(log["normal"]),
        "slips": bool(np.nanmax(ratio) > MU or np.nanmin(log["normal"]) < 0),
        "switch_normal": abs(log["normal"][~three][-1, lifted]),
        "min_normal_three": np.nanmin(log["normal"][three]),
        "max_normal_three": np.nanmax(log["normal"][three]),
        "lift_mm": log["lifted"].max() * 1e3,
        "com_three_mm": dev[three].max() * 1e3,
        "drift_mm": log["drift"].max() * 1e3,
        "residual": log["residual"].max(),
    }


def report(s, weight):
    """The summary as printed (no timings: the same on every machine); ``weight``: m |g| (N)."""
    return "\n".join([
        f"standing: the ground carries {s['standing_normal']:.2f} N (m g = {weight:.2f} N)",
        (f"push of {np.linalg.norm(PUSH):.0f} N for {PUSH_END - PUSH_START:.1f} s: max CoM deviation "
         f"{s['max_dev_mm']:.2f} mm (height {s['max_height_mm']:.3f} mm, base height {s['max_base_height_mm']:.3f} mm); "
         f"back within 1 mm {s['settle_s']:.2f} s after the push began; {s['final_mm']:.4f} mm at t = {SHIFT[0]:.1f} s"),
        (f"push and recovery: normal forces {s['min_normal_push']:.2f} to {s['max_normal_push']:.2f} N per foot, "
         f"largest |f_t| / f_n {s['max_ratio_push']:.3f}"),
        (f"whole run: largest |f_t| / f_n {s['max_ratio']:.3f} against mu = {MU}, smallest normal force "
         f"{s['min_normal']:.3f} N: " + ("a foot would slip or lift" if s["slips"] else "no foot slips or lifts")),
        (f"contact switch at t = {SWITCH:.1f} s with the front-left normal force at {s['switch_normal']:.3f} N; on "
         f"three feet: normal {s['min_normal_three']:.2f} to {s['max_normal_three']:.2f} N, the lifted foot rises "
         f"{s['lift_mm']:.1f} mm, CoM within {s['com_three_mm']:.3f} mm of its target"),
        (f"base rows of the planned torques before zeroing: {s['residual']:.1e} N, N m; rigid feet drift "
         f"{s['drift_mm']:.4f} mm (semi-implicit Euler, no stabilization)"),
    ])


def plot(times, log, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    for ax in (ax1, ax2, ax3):
        ax.axvspan(PUSH_START, PUSH_END, color="C3", alpha=0.15, lw=0)
        ax.axvline(SWITCH, color="k", lw=0.8, ls=":")
    ax1.plot(times, (log["com"][:, 2] - log["com"][0, 2]) * 1e3, "C0", label="CoM")
    ax1.plot(times, (log["base"][:, 2] - log["base"][0, 2]) * 1e3, "C0", ls="--", label="base")
    ax1.set_ylabel("height change (mm)"), ax1.legend(loc="lower left")
    ax1.set_title(f"Solo12: {np.linalg.norm(PUSH):.0f} N push (shaded), then the front-left foot lifted "
                  "(dotted: contact switch)")
    for k, (axis, color) in enumerate(zip("xy", ("C1", "C2"))):
        ax2.plot(times, log["com"][:, k] * 1e3, color, label=f"CoM {axis}")
        ax2.plot(times, log["base"][:, k] * 1e3, color, ls="--", label=f"base {axis}")
    ax2.set_ylabel("horizontal position (mm)"), ax2.legend(loc="lower left", ncol=2)
    for k, (name, ls) in enumerate(zip(FEET, ("-", "--", ":", "-."))):
        ax3.plot(times, log["normal"][:, k], ls=ls, lw=1.5, label=name)
    ax3.set_ylabel("normal force (N)"), ax3.set_xlabel("t (s)"), ax3.legend(loc="lower left", ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None):
    args = plot_arguments(argv, "quadruped_balance.py", __doc__, always=["example-robot-data"])
    robot, mod4, t4 = build(FEET)
    robot3, mod3, t3 = build([f for f in FEET if f != LIFTED])
    mass = sum(b.mass for b in robot.bodies)
    print(f"{robot.name}: 12 actuated joints and a floating base, nq = {robot.nq}, nv = {robot.nv}, "
          f"mass {mass:.2f} kg; point feet {FEET}")
    print(f"generated and compiled in {t4:.1f} s (four feet) and {t3:.1f} s (three feet), "
          f"{len(FUNCTIONS)} functions at -O1 (cached afterwards)")
    t0 = time.perf_counter()
    print("simulating 2.8 s at 1 ms (a push, then a foot lifted) ...", flush=True)
    times, log = simulate((robot, mod4), (robot3, mod3))
    print(f"simulated {times[-1] + times[1]:.1f} s at 1 ms in {time.perf_counter() - t0:.1f} s")
    print(report(summary(times, log), mass * np.linalg.norm(robot.gravity)))
    draw(args, plot, times, log)


if __name__ == "__main__":
    main()
