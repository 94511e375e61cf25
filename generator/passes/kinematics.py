"""Makers of the kinematic functions: tip poses, Jacobians, J̇θ̇ (see
:mod:`soagen.passes.dynamics` for what a maker is)."""
from __future__ import annotations

import sympy as sp

from soagen.passes import symbolic as S
from soagen.passes.sweeps import ZERO6, Sweeps, accelerate, tip_accelerations, velocities


def forward_kinematics(prog, robot, q):
    """Tip poses from the world poses of the bodies, row-major 4×4 per tip."""
    sw = Sweeps(prog, robot, q)
    sw.banner("world poses of the tip bodies, base-to-tip")
    out = []
    for tip in robot.tips:
        R, p = sw.world(tip.body)
        Rt = S.matmul(prog, R, S.const_matrix(tip.rotation))
        pt = S.add(prog, p, S.matvec(prog, R, S.const_vector(tip.offset)))
        for i in range(3):
            out += Rt[i] + [pt[i]]
        out += [0, 0, 0, 1]
    return [out]


def jacobian_rows(sw):
    """J = B*φ*H* [RJK (1)] as r rows of nv scalars (6 per full tip, the 3 linear
    ones per point tip): the columns of body k for
    a tip are φ*(k, 0)H*(k), i.e. [z; z × (p_tip − p_k)] for an angular column
    (revolute, spherical, floating) and [0; z] for a linear one (prismatic,
    floating), z the world direction of the column."""
    prog, n = sw.prog, sw.robot.nv
    sw.banner("tip Jacobians J = B* phi* H* from the world poses", "RJK (1); KJR (38)-(41)")
    rows = []
    for tip in sw.robot.tips:
        R, p = sw.world(tip.body)
        pt = S.add(prog, p, S.matvec(prog, R, S.const_vector(tip.offset)))
        cols = [[sp.Integer(0)] * 6 for _ in range(n)]
        for k in sw.robot.ancestors(tip.body):
            Rk, pk = sw.world(k)
            fr = sw.frame(k)
            arm = None
            for c, (ha, hl) in zip(range(sw.vslices[k].start, sw.vslices[k].stop), fr.Hcols):
                za, zl = S.matvec(prog, Rk, ha), S.matvec(prog, Rk, hl)     # world axes
                if any(x != 0 for x in ha):
                    arm = arm or S.sub(prog, pt, pk)
                    zl = S.add(prog, zl, S.cross(prog, za, arm))
                cols[c] = za + zl
        rows += [[cols[k][r] for k in range(n)] for r in tip.rows]
    return rows


def jacobian(prog, robot, q):
    """J = B*φ*H* [RJK (1)], tips stacked (:func:`jacobian_rows`)."""
    return [[x for row in jacobian_rows(Sweeps(prog, robot, q)) for x in row]]


def jdot_qdot(prog, robot, q, qd):
    """J̇θ̇ = B*φ*a + a(0) [KJR (46)]: tip classical accelerations at θ̈ = 0."""
    sw = Sweeps(prog, robot, q)
    vel = velocities(sw, qd)
    sw.banner("base-to-tip accelerations alpha = phi* alpha(p) + a at qdd = 0", "KJR (46)")
    alpha = [None] * robot.nb
    for k in sw.base_to_tip():
        p = robot.bodies[k].parent
        alpha[k] = accelerate(sw, vel, k, ZERO6 if p < 0 else alpha[p])
    return [tip_accelerations(sw, vel.V, alpha)]
