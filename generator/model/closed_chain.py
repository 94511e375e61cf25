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

from soagen.model.errors import RobotError
from soagen.model.robot import number_pattern


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
    def gravity(self):
        return self.robot_a.gravity

    def fingerprint(self, structure=False):
        """Hex digest of both robots and the placement (``structure``: :meth:`Robot.fingerprint`'s)."""
        h = hashlib.sha256()
        if structure:
            parts = ("", self.robot_a.fingerprint(True), self.robot_b.fingerprint(True),
                     repr(number_pattern()(np.concatenate([self.rotation.ravel(), self.translation]))))
        else:
            parts = (self.name, self.robot_a.fingerprint(), self.robot_b.fingerprint(),
                     repr(self.rotation.tolist()), repr(self.translation.tolist()))
        for part in parts:
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
        if chosen[0].point:
            raise RobotError(f"{robot.name}: tip '{tip}' is a point tip; the arms of a closed chain hold "
                             "the point rigidly (6 rows): give a full tip")
        return robot.with_tips(chosen)

    a = one_tip(robot_a, tip_a)
    b = one_tip(robot_b, tip_b).with_gravity(R.T @ robot_a.gravity)
    return ClosedChain(name or f"{robot_a.name}_{robot_b.name}_chain", a, b, R.copy(), p.copy())
