"""Two arms whose tips hold one point rigidly ([RJK §5.3, (21)–(26)]).

Arm a exerts the wrench ``f`` (world axes at the common point) on arm b, arm b
exerts ``-f`` on arm a: ``M_a θ̈_a + C_a + G_a + J_aᵀ f = T_a`` and
``M_b θ̈_b + C_b + G_b − J_bᵀ f = T_b`` (J_b in world axes), subject to equal
tip accelerations α_a(0) = α_b(0) (22).  With the free accelerations α_f (no
contact force) and Ω = J M⁻¹ Jᵀ, α_a = α_af − Ω_a f and α_b = α_bf + Ω_b f, so
``f = Λ_c (α_af − α_bf)`` with ``Λ_c⁻¹ = Ω_a + Ω_b`` (26), and each arm's
accelerations get the tip-force correction of [RJK (18)].
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from . import reference as ref
from .functions import Output, Spec
from .model import RobotError

#: the one function of a closed chain (its maker and reference are below)
FORWARD_DYNAMICS = Spec(
    "forward_dynamics", "closed chain: joint accelerations of both arms and the wrench f arm a exerts on arm b "
    "(world axes)", ("qa", "qda", "taua", "qb", "qdb", "taub"),
    (Output("qdda", ("na",), "arm a joint accelerations"), Output("qddb", ("nb",), "arm b joint accelerations"),
     Output("f", (6,), "wrench arm a exerts on arm b, world axes at the held point")),
    "soagen.closed_chain:forward_dynamics", "soagen.closed_chain:reference_forward_dynamics", solves="Omega")


@dataclass(frozen=True)
class ClosedChain:
    """Two robots, one tip each, the base of ``robot_b`` placed in the world
    (= base of ``robot_a``) by ``rotation`` (3, 3) and ``translation`` (3,).
    ``robot_b``'s gravity is the world gravity expressed in its base frame."""

    name: str
    robot_a: object
    robot_b: object
    rotation: np.ndarray
    translation: np.ndarray

    @property
    def parts(self):
        """``[(label, Robot)]`` of the two arms (the generated header lists both)."""
        return [("a", self.robot_a), ("b", self.robot_b)]

    @property
    def sizes(self):
        """Values of the size keys of its function: ``na``, ``nb`` joints."""
        return {"na": self.robot_a.nv, "nb": self.robot_b.nv}

    @property
    def specs(self):
        """Its one generated function, :data:`FORWARD_DYNAMICS`."""
        return (FORWARD_DYNAMICS,)

    @property
    def gravity(self):
        return self.robot_a.gravity

    def fingerprint(self):
        h = hashlib.sha256()
        for part in (self.name, self.robot_a.fingerprint(), self.robot_b.fingerprint(),
                     repr(self.rotation.tolist()), repr(self.translation.tolist())):
            h.update(part.encode())
        return h.hexdigest()


def closed_chain(robot_a, tip_a, robot_b, tip_b, placement=None, name=None):
    """Pair two robots into a closed chain holding one point with their tips.

    Parameters
    ----------
    robot_a, robot_b : Robot
    tip_a, tip_b : str       names of one tip of each robot
    placement : (4, 4) array_like, optional   pose of robot_b's base in robot_a's base (world) frame
    name : str, optional
    """
    for r in (robot_a, robot_b):
        if r.multi_dof:
            raise RobotError(f"{r.name}: closed chains take arms with 1-dof joints only")
    T = np.eye(4) if placement is None else np.asarray(placement, float)
    R, p = T[:3, :3], T[:3, 3]
    if T.shape != (4, 4) or not np.allclose(R.T @ R, np.eye(3), atol=1e-9):
        raise RobotError("placement must be a 4x4 rigid transform")

    def one_tip(robot, tip):
        chosen = [t for t in robot.tips if t.name == tip]
        if not chosen:
            raise RobotError(f"{robot.name}: no tip named '{tip}' (tips: {[t.name for t in robot.tips]})")
        return robot.with_tips(chosen)

    a = one_tip(robot_a, tip_a)
    b = one_tip(robot_b, tip_b).with_gravity(R.T @ robot_a.gravity)
    return ClosedChain(name or f"{robot_a.name}_{robot_b.name}_chain", a, b, R.copy(), p.copy())


def _rot6(R):
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = R
    return out


def reference_forward_dynamics(chain, qa, qda, taua, qb, qdb, taub):
    """numpy reference of the closed-chain forward dynamics; -> (θ̈_a, θ̈_b, f (6,))."""
    ra, rb = chain.robot_a, chain.robot_b
    R6 = _rot6(chain.rotation)
    qdd_af = ref.forward_dynamics(ra, qa, qda, taua)
    qdd_bf = ref.forward_dynamics(rb, qb, qdb, taub)
    alpha_af = ref.jacobian(ra, qa) @ qdd_af + ref.jdot_qdot(ra, qa, qda)           # (25)
    alpha_bf = R6 @ (ref.jacobian(rb, qb) @ qdd_bf + ref.jdot_qdot(rb, qb, qdb))
    omega = ref.os_inertia_inverse(ra, qa) + R6 @ ref.os_inertia_inverse(rb, qb) @ R6.T
    L, d = ref.ldl(omega)                                                           # Λ_c⁻¹ (26)
    f = np.linalg.solve(L.T, np.linalg.solve(L, alpha_af - alpha_bf) / d)
    qdd_a = qdd_af + ref.tip_force_acceleration(ra, qa, f)                          # (18)
    qdd_b = qdd_bf + ref.tip_force_acceleration(rb, qb, -R6.T @ f)
    return qdd_a, qdd_b, f


def _free_tip_acceleration(sw, result):
    """α_f(0) = φ*(k,0)λ(k) + a(0) − a_g: the true tip acceleration after FD4."""
    from . import symbolic as S
    from .sweeps import base_acceleration

    prog = sw.prog
    _, lam, vel, _ = result
    tip = sw.robot.tips[0]
    R, _ = sw.world(tip.body)
    off = S.const_vector(tip.offset)
    w, lin = S.motion_to_tip(prog, R, off, lam[tip.body])
    w_body = vel.V[tip.body][0]
    a0 = S.matvec(prog, R, S.cross(prog, w_body, S.cross(prog, w_body, off)))
    ag = base_acceleration(sw.robot)[1]
    return list(w) + [prog.let(lin[i] + a0[i] - ag[i]) for i in range(3)]


def forward_dynamics(prog, chain, qa, qda, taua, qb, qdb, taub):
    """Maker of the closed-chain forward dynamics (guarded Λ_c) [RJK (21)–(26)]."""
    from . import symbolic as S
    from .operational_space import omega_tips
    from .sweeps import Sweeps, fd4, tip_force_response

    ra, rb = chain.robot_a, chain.robot_b
    swa, swb = Sweeps(prog, ra, qa, "arm a: "), Sweeps(prog, rb, qb, "arm b: ")
    fa, fb = fd4(swa, qda, taua), fd4(swb, qdb, taub)
    alpha_a, alpha_b = _free_tip_acceleration(swa, fa), _free_tip_acceleration(swb, fb)
    Rb = S.const_matrix(chain.rotation)
    alpha_bw = S.matvec(prog, Rb, alpha_b[:3]) + S.matvec(prog, Rb, alpha_b[3:])
    Om_a, Om_b = omega_tips(swa, fa[3]), omega_tips(swb, fb[3])
    prog.banner("Lambda_c^-1 = Omega_a + R Omega_b R^T -- [RJK (26)]", level=0)
    A, B, C = S.blocks_from_full(Om_b)
    Om_bw = S.full_from_blocks(S.rotate_sym(prog, Rb, A), S.rotate_gen(prog, Rb, B), S.rotate_sym(prog, Rb, C))
    Lc_inv = [[prog.let(Om_a[i][j] + Om_bw[i][j]) for j in range(6)] for i in range(6)]
    L, d, dinv = S.ldl(prog, Lc_inv, prog.options.pivot_ratio)
    f = S.ldl_solve(prog, L, dinv, [prog.let(alpha_a[i] - alpha_bw[i]) for i in range(6)])
    prog.banner("tip-force corrections -- [RJK (18)]", level=0)
    dqa = tip_force_response(swa, fa[3], f)
    RbT = S.transpose(Rb)
    fb_local = [-x for x in S.matvec(prog, RbT, f[:3]) + S.matvec(prog, RbT, f[3:])]
    dqb = tip_force_response(swb, fb[3], fb_local)
    return [[prog.let(fa[0][k] + dqa[k]) for k in range(ra.n)], [prog.let(fb[0][k] + dqb[k]) for k in range(rb.n)], f]
