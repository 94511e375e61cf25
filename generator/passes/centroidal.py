"""Makers of the centroidal quantities: the centre of mass, its Jacobian, the centroidal
momentum matrix A_G and its bias Ȧ_G q̇ (Orin, Goswami & Lee's centroidal dynamics, in the
papers' operators).  Rows are [angular about the centre of mass; linear], world axes.

* centre of mass: tip-to-base first moments h(k) = Σ m c of each subtree in body-k axes,
  h(p) += m(k) ℓ(k) + R(k) h(k) (the translation and mass blocks of the composite inertia
  R(k) of [RK (3.20)]), then the roots in the world;
* A_G: the column of joint coordinate j of body k is the momentum R(k) H*(k) e_j of the
  subtree of k moving with that coordinate alone [RK (3.20)], carried from body k's origin
  to the centre of mass in world axes (a force transform φ(G, k));
* Ȧ_G q̇: the Newton–Euler body forces at q̈ = 0 without gravity [RK (2.26), (2.29)] summed
  tip-to-base, f(root) = Σ φ(root, k) f(k) [RK (2.29)], the rate of the total momentum,
  carried to the centre of mass;
* their derivatives (h_G = A_G q̇ and ḣ_G = A_G q̈ + Ȧ_G q̇ along q and q̇) by forward mode, or
  from the composites of the analytical RNEA derivatives (Carpentier & Mansard, RSS 2018), the
  family function the one with fewer operations.
"""
from __future__ import annotations

import sympy as sp

from soagen.model.errors import RobotError
from soagen.passes import symbolic as S
from soagen.passes.sweeps import Sweeps, composite_inertias, forces_tip_to_base, newton_euler
from soagen.program.statements import const


def _total_mass(robot):
    m = float(sum(b.mass for b in robot.bodies))
    if not m > 0.0:
        raise RobotError(f"{robot.name}: total mass {m}: the centre of mass is not defined")
    return m


def centre_of_mass(sw):
    """G (3) in the world [RK (3.20)]: subtree first moments tip-to-base, the roots in the world."""
    prog, robot = sw.prog, sw.robot
    sw.banner("tip-to-base subtree masses and first moments h(k) = sum m c, body axes", "RK (3.20)")
    mass = [float(b.mass) for b in robot.bodies]
    h = [S.const_vector(b.mass * b.com) for b in robot.bodies]
    total = [sp.Integer(0)] * 3
    for k in sw.tip_to_base():
        fr = sw.frame(k)
        moved = S.add(prog, S.scale(prog, const(mass[k]), fr.ell),
                      S.matvec(prog, fr.rotation(), h[k]))       # m(k) ℓ(k) + R(k) h(k), parent axes
        p = sw.parent(k)
        if p >= 0:
            h[p] = S.add(prog, h[p], moved)
            mass[p] += mass[k]
        else:
            total = S.add(prog, total, moved)
    return S.scale(prog, const(1.0 / _total_mass(robot)), total)


def _to_centre(sw, k, f, d):
    """A spatial force ``f`` (body-k axes at its origin) in world axes about the centre of mass,
    ``d`` = p(k) − G (3,, world axes): [R n + d × R F; R F]."""
    prog = sw.prog
    R, _ = sw.world(k)
    lin = S.matvec(prog, R, f[1])
    ang = S.add(prog, S.matvec(prog, R, f[0]), S.cross(prog, d, lin))
    return ang + lin


def _momentum_columns(sw, G):
    """A_G as nv columns of 6 (module doc); the bodies' origins relative to G carried base-to-tip,
    p(k) − G = (p(λ) − G) + R(λ) ℓ(k), rather than each world position less G."""
    prog = sw.prog
    R = composite_inertias(sw)
    sw.banner("centroidal momentum columns phi(G, k) R(k) H*(k), world axes at the centre of mass", "RK (3.20)")
    cols = [None] * sw.robot.nv
    d = [None] * sw.robot.nb                    # p(k) − G, world axes (3,)
    for k in sw.base_to_tip():
        lam = sw.parent(k)
        d[k] = (S.sub(prog, sw.world(k)[1], G) if lam < 0 else
                S.add(prog, d[lam], S.matvec(prog, sw.world(lam)[0], sw.frame(k).ell)))
        for c, h in zip(range(sw.vslices[k].start, sw.vslices[k].stop), sw.frame(k).Hcols):
            cols[c] = _to_centre(sw, k, R[k].times(prog, h), d[k])
    return cols


def center_of_mass(prog, robot, q):
    """Centre of mass in the world [RK (3.20)]; (3,)."""
    return [centre_of_mass(Sweeps(prog, robot, q))]


def centroidal_momentum_matrix(prog, robot, q):
    """A_G, rows [angular about the centre of mass; linear], world axes [RK (3.20)]; row-major 6 × n."""
    sw = Sweeps(prog, robot, q)
    cols = _momentum_columns(sw, centre_of_mass(sw))
    return [[cols[c][r] for r in range(6) for c in range(robot.nv)]]


def com_jacobian(prog, robot, q):
    """J_G = (linear rows of A_G) / m: the centre of mass velocity [RK (3.20)]; row-major 3 × n."""
    sw = Sweeps(prog, robot, q)
    cols = _momentum_columns(sw, centre_of_mass(sw))
    inv_m = const(1.0 / _total_mass(robot))
    return [[prog.let(inv_m * cols[c][3 + r]) for r in range(3) for c in range(robot.nv)]]


def centroidal_bias(prog, robot, q, qd):
    """Ȧ_G q̇: the momentum rate at q̈ = 0 without gravity, Newton–Euler body forces [RK (2.26),
    (2.29)] summed tip-to-base [RK (2.29)] and carried to the centre of mass; (6,)."""
    sw = Sweeps(prog, robot, q)
    return [_momentum_rate(sw, centre_of_mass(sw), qd, [0] * robot.nv)]


def _momentum_rate(sw, G, qd, qdd):
    """ḣ_G = A_G q̈ + Ȧ_G q̇: Newton–Euler body forces at (q̇, q̈) without gravity [RK (2.26), (2.29)]
    summed tip-to-base [RK (2.29)], the roots' carried to the centre of mass ``G``; (6,)."""
    prog, robot = sw.prog, sw.robot
    _, _, f = newton_euler(sw, qd, qdd, with_gravity=False)
    forces_tip_to_base(sw, f)
    sw.banner("the roots' forces about the centre of mass, world axes")
    out = [sp.Integer(0)] * 6
    for k in robot.roots():
        out = [prog.let(a + b) for a, b in zip(out, _to_centre(sw, k, f[k], S.sub(prog, sw.world(k)[1], G)))]
    return out


def centroidal_dynamics(prog, robot, q, qd, qdd):
    """The centroidal momentum h_G = A_G q̇ (the momentum columns times q̇) and its rate
    ḣ_G = A_G q̈ + Ȧ_G q̇ (:func:`_momentum_rate`), stacked; (12,)."""
    sw = Sweeps(prog, robot, q)
    G = centre_of_mass(sw)
    cols = _momentum_columns(sw, G)
    h = [prog.let(sum(cols[c][r] * qd[c] for c in range(robot.nv))) for r in range(6)]
    return [h + _momentum_rate(sw, G, qd, qdd)]


def centroidal_dynamics_derivatives(prog, robot, q, qd, qdd):
    """h_G, ḣ_G and ∂h_G/∂q, ∂ḣ_G/∂q (tangent space), ∂ḣ_G/∂q̇ and A_G = ∂h_G/∂q̇ = ∂ḣ_G/∂q̈ (Pinocchio's
    ``computeCentroidalDynamicsDerivatives``), by forward-mode differentiation of
    :func:`centroidal_dynamics` along q and q̇; rows [angular about the centre of mass; linear],
    world axes, row-major 6 × n each."""
    from soagen.passes.derivatives import directions, inner_program, tangent_seeds
    from soagen.passes.tangent import jacobian, replay

    inner = inner_program(prog, robot, centroidal_dynamics, (q, qd, qdd), ("q", "qd", "qdd"))
    T = replay(prog, inner, tangent_seeds(prog, robot, q, qd))
    out = inner.outputs[0].symbols
    h, hdot = out[:6], out[6:]
    n = robot.nv
    return ([[T.value(x) for x in h], [T.value(x) for x in hdot], jacobian(T, h, directions("q", n)),
             jacobian(T, hdot, directions("q", n)), jacobian(T, hdot, directions("qd", n)),
             jacobian(T, h, directions("qd", n))])


def centroidal_dynamics_derivatives_analytic(prog, robot, q, qd, qdd):
    """The outputs of :func:`centroidal_dynamics_derivatives` from the passes of the analytical
    RNEA derivatives of Carpentier & Mansard (RSS 2018; :mod:`soagen.passes.analytic_derivatives`),
    as Pinocchio's ``computeCentroidalDynamicsDerivatives`` gets them from its RNEA derivatives.

    In the fixed frame O of those passes (world axes, or the frame that coincides with a floating
    base at this instant) the root's composites are the total momentum H = Σ I_k v_k, the force
    F = Σ f_k = ḣ_O + Ĩ (0, −g) and the inertia Ĩ (first moment m c).  With Γ(x) = (x_ang − c × x_lin,
    x_lin) carrying a force from O's origin to the centre of mass c and R the rotation from O's axes
    to the world's: h_G = R Γ(H), ḣ_G = R Γ(F) + (0, m g), and per column s of joint j (subtree of
    j, composites Ĩ_j, H̃_j, F̃_j, ν = v_λ × s):

    * A_G s = R Γ(Ĩ_j s), and ∂ḣ_G/∂q̇_s = R Γ(∂F̃_j/∂q̇_s) (the passes' ``gv``);
    * moving q_s moves the subtree rigidly by the twist s: ∂H/∂q_s = s ×* H̃_j + Ĩ_j ν,
      ∂F/∂q_s = ``gq`` + s ×* F̃_j, ∂c/∂q_s = (Ĩ_j s)_lin / m, and ∂(R Γ(x))/∂q_s =
      R (Γ(∂x) − (∂c × x_lin, 0));
    * along a floating base's own directions (body axes) everything seen from the base is
      unchanged but gravity (the passes' ``gq``), and the base turns: ∂(R x)/∂δ_ω = R (e × x).

    A robot with a floating root among several roots (trees worked in different frames) is
    recorded by forward mode instead."""
    from soagen.model.robot import FLOATING
    from soagen.passes.analytic_derivatives import add6, backward_pass, force_cross, forward_pass

    roots = list(robot.roots())
    floating = robot.bodies[roots[0]].joint_type == FLOATING
    if any(robot.bodies[r].joint_type == FLOATING for r in roots) and len(roots) > 1:
        return centroidal_dynamics_derivatives(prog, robot, q, qd, qdd)
    n = robot.nv
    sw = Sweeps(prog, robot, q)
    wb = forward_pass(sw, qd, qdd)
    unused = [[sp.Integer(0)] * n for _ in range(n)]              # the passes' dtau (dead code here)
    I, B, F = backward_pass(sw, wb, unused, [row[:] for row in unused])
    sw.banner("centroidal momentum, its rate and their derivatives from the composites, world axes "
              "at the centre of mass", "Carpentier & Mansard RSS 2018")
    total = I[roots[0]]
    for r in roots[1:]:
        total = total.plus(prog, I[r])
    H = add6(prog, *[B[r].h for r in roots])                         # total momentum (6,), O
    Ftot = add6(prog, *[F[r] for r in roots])                        # total force (6,), O
    inv_m = const(1.0 / _total_mass(robot))
    c = S.scale(prog, inv_m, total.h)                                # centre of mass in O (3,)
    R = sw.world(roots[0])[0] if floating else None                  # O's axes -> world axes (3, 3)

    def gamma(x, dc=None, lin=None):
        """Γ(x) (6,), less (dc × lin, 0) when given."""
        ang = S.sub(prog, x[0], S.cross(prog, c, x[1]))
        if dc is not None:
            ang = S.sub(prog, ang, S.cross(prog, dc, lin))
        return ang, x[1]

    def world(x):
        """R x for a spatial vector in O's axes; a list of 6."""
        return list(x[0]) + list(x[1]) if R is None else S.matvec(prog, R, x[0]) + S.matvec(prog, R, x[1])

    def turned(e, x):
        """e × x on both halves."""
        return S.cross(prog, e, x[0]), S.cross(prog, e, x[1])

    gH, gF = gamma(H), gamma(Ftot)
    h = world(gH)
    mg = [const(float(x) * _total_mass(robot)) for x in robot.gravity]
    hdot = [prog.let(x + (mg[i - 3] if i >= 3 else 0)) for i, x in enumerate(world(gF))]
    Ag, dh_dq, dhdot_dq, dhdot_dqd = ([None] * n for _ in range(4))
    for k in range(robot.nb):
        for col in wb.columns[k]:
            j = col.index
            y = I[k].times(prog, col.s)                              # Ĩ_j s, the momentum column in O
            Ag[j] = world(gamma(y))
            dhdot_dqd[j] = world(gamma(col.gv))
            if floating and k == roots[0]:                           # the base's own direction j
                axis = j - sw.vslices[k].start
                if axis < 3:                                         # a turn about body axis e
                    e = [sp.Integer(int(i == axis)) for i in range(3)]
                    dh_dq[j] = world(turned(e, gH))
                    dhdot_dq[j] = world(add6(prog, gamma(col.gq), turned(e, gF)))
                else:                                                # a move: only gravity, none here
                    dh_dq[j] = [sp.Integer(0)] * 6
                    dhdot_dq[j] = world(gamma(col.gq))
                continue
            dc = S.scale(prog, inv_m, y[1])                          # ∂c/∂q_s (3,), O
            dH = add6(prog, force_cross(prog, col.s, B[k].h), None if col.nu is None else I[k].times(prog, col.nu))
            dF = add6(prog, col.gq, force_cross(prog, col.s, F[k]))
            dh_dq[j] = world(gamma(dH, dc, H[1]))
            dhdot_dq[j] = world(gamma(dF, dc, Ftot[1]))
    rows = lambda cols: [cols[c][r] for r in range(6) for c in range(n)]
    return [h, hdot, rows(dh_dq), rows(dhdot_dq), rows(dhdot_dqd), rows(Ag)]
