"""Two arms holding one point [RJK §5.3]: generated = reference = a dense
constrained (KKT) solve on one Pinocchio model of both arms.

The oracle takes nothing from soagen but the joint order: Pinocchio reads the
two URDFs, ``pinocchio.appendModel`` attaches the UR5's base to the world at
the placement, and M, h (world gravity), the tip Jacobians and J̇q̇ of both arms
(world-aligned axes at each tip) come from that one model. Placements: Rz(π)
(the symmetric case) and a rotation by 0.7 rad about the tilted axis
(1, 2, 3)/√14 with the translation that brings the tips together, under which
the UR5's base frame sees gravity along a general direction.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import soagen
from soagen.model import robots
from soagen.reference.closed_chain import reference_forward_dynamics
from tests.support.builds import built

QA0 = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.8, 0.6])
QB0 = np.array([-0.3, -1.5, 1.2, -0.8, 1.3, 0.1])
FINGERS = ("panda_finger_joint1", "panda_finger_joint2")
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
ROTATIONS = {"rz_pi": pin.AngleAxis(np.pi, np.array([0.0, 0.0, 1.0])).toRotationMatrix(),
             "tilted": pin.AngleAxis(0.7, np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)).toRotationMatrix()}


class PinPair:
    """Both arms in one Pinocchio model: the Panda (fingers locked at 0) from its URDF, the
    UR5 from its URDF appended with its base at ``placement`` (SE3) in the Panda's base frame."""

    def __init__(self, placement):
        a = pin.buildModelFromUrdf(robots.urdf_path("panda"))
        a = pin.buildReducedModel(a, [a.getJointId(j) for j in FINGERS], pin.neutral(a))
        b = pin.buildModelFromUrdf(robots.urdf_path("ur5"))
        self.na, self.nb = a.nv, b.nv
        self.model = pin.appendModel(a, b, 0, placement)
        self.model.gravity = pin.Motion(np.array([0.0, 0.0, -9.81]), np.zeros(3))
        self.data = self.model.createData()
        self.tips = [self.model.getFrameId(n, pin.FrameType.BODY) for n in ("panda_hand", "tool0")]

    def _swap(self, x):      # Pinocchio's [linear; angular] rows -> [angular; linear]
        return np.concatenate([x[3:6], x[0:3]])

    def tip_terms(self, q, v):
        """Tip Jacobians (6, na + nb) and J̇q̇ (6,) of both arms, world axes at each tip."""
        pin.forwardKinematics(self.model, self.data, q, v, np.zeros_like(v))
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        J = [self._swap(pin.getFrameJacobian(self.model, self.data, f, LWA)) for f in self.tips]
        a = [self._swap(pin.getFrameClassicalAcceleration(self.model, self.data, f, LWA).vector)
             for f in self.tips]
        return J, a

    def tip_positions(self, q):
        pin.framesForwardKinematics(self.model, self.data, q)
        return [self.data.oMf[f].translation.copy() for f in self.tips]

    def kkt(self, qa, qda, ta, qb, qdb, tb):
        """M q̈ + h + (J_a − J_b)ᵀ f = τ, J_a q̈ + J̇_a q̇ = J_b q̈ + J̇_b q̇; -> (q̈_a, q̈_b, f)."""
        q, v, tau = np.concatenate([qa, qb]), np.concatenate([qda, qdb]), np.concatenate([ta, tb])
        M = pin.crba(self.model, self.data, q)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.rnea(self.model, self.data, q, v, np.zeros_like(v))
        (Ja, Jb), (aa, ab) = self.tip_terms(q, v)
        n = len(q)
        K = np.zeros((n + 6, n + 6))
        K[:n, :n], K[:n, n:], K[n:, :n] = M, (Ja - Jb).T, Ja - Jb
        x = np.linalg.solve(K, np.concatenate([tau - h, ab - aa]))
        return x[:self.na], x[self.na:n], x[n:]


def make_chain(rotation):
    """The placement (rotation, then the translation that makes the tips meet at QA0, QB0),
    the soagen chain it defines and the Pinocchio pair it defines."""
    alone = PinPair(pin.SE3.Identity())
    pa, pb = alone.tip_positions(np.concatenate([QA0, QB0]))
    R = ROTATIONS[rotation]
    placement = pin.SE3(R, pa - R @ pb)
    chain = soagen.closed_chain(robots.example("panda"), "panda_hand", robots.example("ur5"), "tool0",
                                placement=placement.homogeneous, name=f"panda_ur5_{rotation}")
    pair = PinPair(placement)
    pa2, pb2 = pair.tip_positions(np.concatenate([QA0, QB0]))
    assert np.allclose(pa2, pb2, atol=1e-12)
    return chain, pair


def states(pair, rng, count):
    """Configurations near the assembled pose, tip velocities equal (from Pinocchio's Jacobians)."""
    na, nb = pair.na, pair.nb
    for _ in range(count):
        qa, qb = QA0 + 0.05 * rng.normal(size=na), QB0 + 0.05 * rng.normal(size=nb)
        qda = rng.normal(size=na)
        (Ja, Jb), _ = pair.tip_terms(np.concatenate([qa, qb]), np.zeros(na + nb))
        qdb = np.linalg.lstsq(Jb[:, na:], Ja[:, :na] @ qda, rcond=None)[0]
        yield qa, qda, rng.normal(size=na) * 5, qb, qdb, rng.normal(size=nb) * 5


def assert_close(got, want, tol):
    scale = max(1.0, max(np.abs(w).max() for w in want))
    for g, w in zip(got, want):
        assert np.abs(g - w).max() <= tol * scale, np.abs(g - w).max() / scale


@pytest.mark.parametrize("rotation", sorted(ROTATIONS))
def test_reference_equals_kkt_of_one_pinocchio_model(rotation):
    chain, pair = make_chain(rotation)
    for args in states(pair, np.random.default_rng(1), 30):
        qdda, qddb, f = reference_forward_dynamics(chain, *args)
        assert_close((qdda, qddb, f), pair.kkt(*args), 1e-9)
        # (22): the tips accelerate together
        (Ja, Jb), (aa, ab) = pair.tip_terms(np.concatenate([args[0], args[3]]), np.concatenate([args[1], args[4]]))
        qdd = np.concatenate([qdda, qddb])
        assert_close([Ja @ qdd + aa], [Jb @ qdd + ab], 1e-9)


def test_tilted_placement_changes_the_answer():
    """The two placements give different dynamics (gravity of the UR5 turns with its base)."""
    (chain_a, pair_a), (chain_b, pair_b) = make_chain("rz_pi"), make_chain("tilted")
    args = next(states(pair_b, np.random.default_rng(3), 1))
    x, y = pair_a.kkt(*args), pair_b.kkt(*args)
    assert np.abs(x[1] - y[1]).max() > 1.0
    assert np.abs(chain_b.robot_b.gravity - chain_a.robot_b.gravity).max() > 1.0


def test_generated_equals_reference_and_kkt():
    chain, pair = make_chain("tilted")
    _, mod = built("panda_ur5_chain_tilted", lambda: chain)
    for i, args in enumerate(states(pair, np.random.default_rng(2), 100)):
        got = mod.forward_dynamics(*args)
        assert_close(got, reference_forward_dynamics(chain, *args), 1e-10)
        if i < 20:
            assert_close(got, pair.kkt(*args), 1e-9)


def test_bad_tip_name():
    with pytest.raises(soagen.RobotError, match="no tip named"):
        soagen.closed_chain(robots.example("ur5"), "nope", robots.example("ur5"), "tool0")
