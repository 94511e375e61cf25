"""The robot's operators at one configuration, numpy: φ, H*, M per body and the world poses
[RK (2.14)–(2.16)]; the numpy reference's first pass and the builder's D(k) check read them."""
from __future__ import annotations

from dataclasses import dataclass

from soagen.model.robot import Robot
from soagen.model.spatial import phi, spatial_inertia


@dataclass
class Kinematics:
    """Configuration-dependent operators of one robot at one ``q``.

    Attributes
    ----------
    phi : list of (6, 6)   φ(p(k), k), force transform body k → parent (base for roots)
    H : list of (6, nv_k)  joint map H*(k) in body k
    M : list of (6, 6)     spatial inertia M(k) about body-k origin
    rot, ell : lists       joint rotation (3, 3) / offset ℓ (3,) of body k in its parent
    R, p : lists           body orientation (3, 3) / position (3,) in the world
    phi_tip : list of (6, 6)  φ(k, 0) from each tip frame (world axes) into its body
    """

    phi: list
    H: list
    M: list
    rot: list
    ell: list
    R: list
    p: list
    phi_tip: list


def kinematics(robot: Robot, q) -> Kinematics:
    """Build φ, H, M and world poses at ``q`` [RK (2.14)–(2.16)], base-to-tip."""
    phis, Hs, Ms, rots, ells, Rw, pw = [], [], [], [], [], [], []
    for k in robot.base_to_tip():
        b = robot.bodies[k]
        R, ell = b.joint_transform(robot.joint_q(q, k))
        phis.append(phi(R, ell))
        rots.append(R)
        ells.append(ell)
        Hs.append(b.motion_subspace())
        Ms.append(spatial_inertia(b.mass, b.com, b.inertia))
        if b.parent < 0:
            Rw.append(R)
            pw.append(ell)
        else:
            Rw.append(Rw[b.parent] @ R)
            pw.append(pw[b.parent] + Rw[b.parent] @ ell)
    phi_tip = [phi(Rw[t.body].T, t.offset) for t in robot.tips]
    return Kinematics(phis, Hs, Ms, rots, ells, Rw, pw, phi_tip)
