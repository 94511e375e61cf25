"""Independent pinocchio-based oracle for the soagen test-suite.

This module contains no tests; it wraps pinocchio so that tests can compare
generated code against a trusted reference implementation.

Conventions ("ours")
--------------------
* One scalar ``q`` per movable 1-dof joint (revolute, continuous, prismatic),
  in pinocchio joint order (``model.names[1:]``), angles in radians.
  Pinocchio stores ``continuous`` joints as ``(cos, sin)`` pairs (nq=2, nv=1);
  :meth:`PinOracle.to_pin_q` converts.  ``qd``, ``qdd`` and ``tau`` have the
  same layout (size ``nv``) in both conventions.
* Spatial 6-vectors are ``[angular; linear]`` (pinocchio: ``[linear; angular]``).
* Tip quantities are expressed in world-aligned axes at the origin of the tip
  link's frame (pinocchio ``LOCAL_WORLD_ALIGNED``).
* Pinocchio's joint order is a depth-first pre-order traversal of the URDF
  tree in which the children of every link are visited in byte-wise
  (ASCII, case-sensitive) order of the *joint* names; fixed joints are
  traversed transparently (their subtree sits at the fixed joint's sorted
  position).  It is NOT the order of ``<joint>`` elements in the file.
* Fixed-joint children are lumped into their parent body; ``mimic`` joints are
  treated as independent degrees of freedom (``buildModelFromUrdf`` default
  ``mimic=False``); URDF ``<dynamics damping friction>`` is ignored by the
  dynamics algorithms.
"""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import numpy as np
import pinocchio

_ERD_MARKER = "share/example-robot-data/robots/"
_LWA = pinocchio.ReferenceFrame.LOCAL_WORLD_ALIGNED


def _erd_robots_dir() -> Path:
    """Locate the ``robots`` folder of the installed example-robot-data.

    The pip wheel ships no Python helper, only data under
    ``<site-packages>/cmeel.prefix/share/example-robot-data/robots``, found via
    the distribution's file list.  ``EXAMPLE_ROBOT_DATA_MODEL_DIR`` overrides.
    """
    env = os.environ.get("EXAMPLE_ROBOT_DATA_MODEL_DIR")
    if env and Path(env).is_dir():
        return Path(env)
    marker = _ERD_MARKER
    dist = importlib.metadata.distribution("example-robot-data")
    for f in dist.files or ():
        s = str(f).replace("\\", "/")
        if marker in s:
            prefix = s[: s.index(marker) + len(marker)]
            return Path(dist.locate_file(prefix)).resolve()
    raise FileNotFoundError("example-robot-data robots folder not found")


def erd_urdf(relpath: str) -> str:
    """Absolute path of a URDF shipped with example-robot-data.

    Parameters
    ----------
    relpath : str
        Relative to the ``robots`` folder, e.g. ``"panda_description/urdf/panda.urdf"``.

    Returns
    -------
    str
        Absolute path (``FileNotFoundError`` if missing).
    """
    path = _erd_robots_dir() / relpath
    if not path.is_file():
        raise FileNotFoundError(path)
    return str(path)


def package_dirs() -> list[str]:
    """Package directories resolving ``package://`` URIs (meshes only).

    Suitable for ``pinocchio.buildGeomFromUrdf``; the oracle loads no geometry.
    """
    robots = _erd_robots_dir()
    return [str(robots), str(robots.parent)]


def pin_gravity(gravity) -> pinocchio.Motion:
    """``model.gravity`` value: linear part = ``gravity`` (3,), angular = 0."""
    return pinocchio.Motion(np.asarray(gravity, float).reshape(3), np.zeros(3))


def _ang_lin(v6) -> np.ndarray:
    """Swap pinocchio ``[linear; angular]`` rows to ``[angular; linear]``."""
    return np.concatenate([v6[3:6], v6[0:3]], axis=0)


class PinOracle:
    """Reference dynamics of a fixed-base URDF robot, in soagen conventions.

    Parameters
    ----------
    urdf_path : str
        URDF file; built with ``pinocchio.buildModelFromUrdf`` (no geometry).
    tips : sequence of str, optional
        Link names used as tips (``tip_index`` refers to this list).
    gravity : array_like, shape (3,), optional
        Gravity in world axes, stored via :func:`pin_gravity`.
    lock : dict, optional
        ``{joint name: value}`` joints removed with ``buildReducedModel``.

    Attributes
    ----------
    model, data : pinocchio.Model, pinocchio.Data
    joint_names : list of str
        Movable joints in pinocchio order (``model.names[1:]``).
    nq_ours : int
        Number of movable joints (= ``model.nv``).
    continuous : numpy.ndarray of bool
        True for joints stored as (cos, sin) by pinocchio.
    tip_frame_ids : list of int
        Pinocchio BODY frame ids of ``tips``.
    """

    def __init__(self, urdf_path, tips=(), gravity=(0.0, 0.0, -9.81), lock=None):
        self.model = pinocchio.buildModelFromUrdf(str(urdf_path))
        if lock:  # hold joints fixed, as soagen.load_urdf(lock=...) does
            q_ref = pinocchio.neutral(self.model)
            ids = []
            for name, value in lock.items():
                jid = self.model.getJointId(name)
                ids.append(jid)
                q_ref[self.model.joints[jid].idx_q] = value
            self.model = pinocchio.buildReducedModel(self.model, ids, q_ref)
        self.model.gravity = pin_gravity(gravity)
        self.data = self.model.createData()
        self.joint_names = list(self.model.names)[1:]
        self.nq_ours = len(self.joint_names)
        joints = list(self.model.joints)[1:]
        for name, j in zip(self.joint_names, joints):  # e.g. mimic has nv=0
            if j.nv != 1 or j.nq not in (1, 2):
                raise ValueError(f"unsupported joint {name}: {j.shortname()}")
        self.continuous = np.array([j.nq == 2 for j in joints])
        self._idx_q = [j.idx_q for j in joints]
        self.tip_names = list(tips)
        body = pinocchio.FrameType.BODY  # restrict lookup to link frames
        for name in self.tip_names:  # getFrameId returns nframes if unknown
            if not self.model.existFrame(name, body):
                raise KeyError(f"no link named {name!r}")
        self.tip_frame_ids = [self.model.getFrameId(n, body) for n in self.tip_names]

    # ------------------------------------------------------------------ q
    def to_pin_q(self, q) -> np.ndarray:
        """Convert our joint angles to pinocchio's configuration vector."""
        q = np.asarray(q, float).reshape(self.nq_ours)
        out = np.empty(self.model.nq)
        for i, (iq, cont) in enumerate(zip(self._idx_q, self.continuous)):
            if cont:
                out[iq], out[iq + 1] = np.cos(q[i]), np.sin(q[i])
            else:
                out[iq] = q[i]
        return out

    def limits(self):
        """Per-joint ``(lower, upper)`` arrays, ``-inf/+inf`` where unbounded.

        Continuous joints, non-finite/huge limits and ``lower >= upper``
        (``double_pendulum_continuous.urdf`` writes ``0 0``) are unbounded.
        """
        lo, hi = np.full(self.nq_ours, -np.inf), np.full(self.nq_ours, np.inf)
        lower, upper = self.model.lowerPositionLimit, self.model.upperPositionLimit
        for i, (iq, cont) in enumerate(zip(self._idx_q, self.continuous)):
            l_, u_ = lower[iq], upper[iq]
            if not cont and -1e10 < l_ < u_ < 1e10:
                lo[i], hi[i] = l_, u_
        return lo, hi

    def random_state(self, rng):
        """Random ``(q, qd, qdd, tau)`` in our convention.

        ``q`` is uniform within finite joint limits, else in ``[-pi, pi]``;
        ``qd``, ``qdd``, ``tau`` are uniform in ``[-1, 1]``; all float64.
        ``rng`` is a ``numpy.random.Generator``.
        """
        lo, hi = self.limits()
        free = ~np.isfinite(lo)
        q = rng.uniform(np.where(free, -np.pi, lo), np.where(free, np.pi, hi))
        return (q,) + tuple(rng.uniform(-1.0, 1.0, self.nq_ours) for _ in range(3))

    # ------------------------------------------------------------ dynamics
    def rnea(self, q, qd, qdd) -> np.ndarray:
        """Inverse dynamics ``M qdd + C qd + G`` (gravity included)."""
        return pinocchio.rnea(self.model, self.data, self.to_pin_q(q),
                              np.asarray(qd, float), np.asarray(qdd, float)).copy()

    def gravity(self, q) -> np.ndarray:
        """Gravity torques ``G(q) = rnea(q, 0, 0)``."""
        return self.rnea(q, np.zeros(self.nq_ours), np.zeros(self.nq_ours))

    def bias(self, q, qd) -> np.ndarray:
        """Bias torques ``C(q, qd) qd + G(q) = rnea(q, qd, 0)``."""
        return self.rnea(q, qd, np.zeros(self.nq_ours))

    def coriolis(self, q, qd) -> np.ndarray:
        """Coriolis/centrifugal torques ``C(q, qd) qd`` (Pinocchio's computeCoriolisMatrix times qd)."""
        C = pinocchio.computeCoriolisMatrix(self.model, self.data, self.to_pin_q(q), np.asarray(qd, float))
        return C @ np.asarray(qd, float)

    def mass_matrix(self, q) -> np.ndarray:
        """Joint-space inertia matrix (CRBA, full symmetric)."""
        m = pinocchio.crba(self.model, self.data, self.to_pin_q(q))
        return np.triu(m) + np.triu(m, 1).T

    def minv(self, q) -> np.ndarray:
        """Inverse inertia matrix (``computeMinverse``, full symmetric)."""
        m = pinocchio.computeMinverse(self.model, self.data, self.to_pin_q(q))
        return np.triu(m) + np.triu(m, 1).T

    def aba(self, q, qd, tau) -> np.ndarray:
        """Forward dynamics: ``qdd`` such that ``rnea(q, qd, qdd) == tau``."""
        return pinocchio.aba(self.model, self.data, self.to_pin_q(q),
                             np.asarray(qd, float), np.asarray(tau, float)).copy()

    def rnea_with_tip_force(self, q, qd, qdd, f_tip, tip_index=0) -> np.ndarray:
        """Inverse dynamics while the tip pushes on the environment.

        Parameters
        ----------
        f_tip : array_like, shape (6,)
            ``[torque; force]`` the ROBOT EXERTS ON THE ENVIRONMENT, in
            world-aligned axes about the tip frame origin.

        Returns
        -------
        numpy.ndarray
            ``rnea(q, qd, qdd) + J(q).T @ f_tip``, computed through
            pinocchio's ``fext`` (environment wrench ``-f_tip`` on the robot,
            moved to the parent joint's local frame).
        """
        f_tip = np.asarray(f_tip, float).reshape(6)
        qp = self.to_pin_q(q)
        fr = self.model.frames[self.tip_frame_ids[tip_index]]
        pinocchio.forwardKinematics(self.model, self.data, qp)
        o_m_i = self.data.oMi[fr.parentJoint]
        o_m_f = o_m_i * fr.placement
        # Wrench on robot in LWA-at-tip -> world origin -> joint local.
        f_lwa = pinocchio.Force(-f_tip[3:6], -f_tip[0:3])
        f_world = pinocchio.SE3(np.eye(3), o_m_f.translation).act(f_lwa)
        fext = pinocchio.StdVec_Force()
        fext.extend([pinocchio.Force.Zero() for _ in range(self.model.njoints)])
        fext[fr.parentJoint] = o_m_i.actInv(f_world)
        return pinocchio.rnea(self.model, self.data, qp, np.asarray(qd, float),
                              np.asarray(qdd, float), fext).copy()

    # ---------------------------------------------------------- kinematics
    def tip_pose(self, q, tip_index=0) -> np.ndarray:
        """4x4 homogeneous world pose of the tip link frame."""
        pinocchio.forwardKinematics(self.model, self.data, self.to_pin_q(q))
        return pinocchio.updateFramePlacement(
            self.model, self.data, self.tip_frame_ids[tip_index]).homogeneous.copy()

    def jacobian(self, q, tip_index=0) -> np.ndarray:
        """Tip Jacobian (6 x n), rows ``[angular; linear]``, LWA at tip."""
        j = pinocchio.computeFrameJacobian(
            self.model, self.data, self.to_pin_q(q),
            self.tip_frame_ids[tip_index], _LWA)
        return _ang_lin(j)

    def jdot_qdot(self, q, qd, tip_index=0) -> np.ndarray:
        """``dJ/dt qd``: classical tip acceleration for ``qdd = 0``, no gravity.

        Returns ``[angular; linear]`` in world-aligned axes at the tip origin;
        the linear part is the acceleration of the frame origin point
        (includes the ``omega x v`` term).
        """
        qd = np.asarray(qd, float)
        pinocchio.forwardKinematics(self.model, self.data, self.to_pin_q(q),
                                    qd, np.zeros_like(qd))
        a = pinocchio.getFrameClassicalAcceleration(
            self.model, self.data, self.tip_frame_ids[tip_index], _LWA)
        return np.concatenate([a.angular, a.linear])
