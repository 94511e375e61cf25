"""soagen's conventions against MuJoCo's, for a robot read by :func:`soagen.load_mjcf` (numpy only).

The bodies of such a robot are in MuJoCo's joint order, and hinges and slides
keep MuJoCo's values (``q = qpos``, ``qd = qvel``, ``tau = qfrc``).  Ball and free
joints differ:

* **quaternions**: soagen ``(x, y, z, w)``, MuJoCo ``(w, x, y, z)``;
* **ball joint velocity**: both the angular velocity in the body's axes (the same);
* **free joint velocity**: soagen the body twist ``[ω; v]`` in body axes (v the
  body origin's velocity), MuJoCo ``[v_world; ω]``: with R the body's orientation,
  ``qvel = T qd`` where ``T = [[0, R], [I, 0]]`` on the free joint's rows (the
  identity elsewhere).  T is orthogonal, so torques map the same way
  (``qfrc = T tau``), ``M_mj = T M Tᵀ``, a Jacobian ``J_mj = J Tᵀ``;
* **free joint acceleration**: MuJoCo's ``qacc`` differentiates the world-axes
  velocity, so ``qacc = T qdd + [R (ω × v); 0]``.

Jacobians: MuJoCo's ``mj_jacSite``/``mj_jacBody`` give ``jacp`` (3, nv), ``jacr``
(3, nv) in world axes at the point; soagen's tip rows are ``[angular; linear]``, the
linear ones only for a point tip (``soagen.point_tip``: ``jacp``).

MuJoCo's own arrays: :func:`full_mass_matrix` is the dense M of an ``MjData`` on every
mujoco release from 3.3 to 4.x (the call that makes it changed in 3.10).
"""
from __future__ import annotations

import numpy as np

from soagen.model.robot import FLOATING, SPHERICAL
from soagen.model.spatial import cross, quat_matrix


def _quaternion_slices(robot):
    """q slices of the 4 quaternion entries of every ball and free joint."""
    return [slice(robot.qslice(k).stop - 4, robot.qslice(k).stop) for k, b in enumerate(robot.bodies)
            if b.joint_type in (SPHERICAL, FLOATING)]


def q_to_mujoco(robot, q):
    """MuJoCo's qpos (nq,) of soagen's q (nq,): quaternions to ``(w, x, y, z)``."""
    out = np.array(q, float)
    for s in _quaternion_slices(robot):
        out[s] = np.roll(out[s], 1)
    return out


def q_from_mujoco(robot, qpos):
    """soagen's q (nq,) of MuJoCo's qpos (nq,): quaternions to ``(x, y, z, w)``."""
    out = np.array(qpos, float)
    for s in _quaternion_slices(robot):
        out[s] = np.roll(out[s], -1)
    return out


def _free(robot, q):
    """``[(v start, R (3, 3))]`` of the free joints at soagen's q: R the body's world orientation."""
    out = []
    for k, b in enumerate(robot.bodies):
        if b.joint_type == FLOATING:
            quat = np.asarray(q, float)[robot.qslice(k)][3:]
            out.append((robot.vslice(k).start, b.rotation @ quat_matrix(quat)))
    return out


def velocity_map(robot, q):
    """T (nv, nv) with ``qvel = T qd`` at soagen's q (orthogonal: ``qd = Tᵀ qvel``)."""
    T = np.eye(robot.nv)
    for s, R in _free(robot, q):
        T[s:s + 6, s:s + 6] = np.block([[np.zeros((3, 3)), R], [np.eye(3), np.zeros((3, 3))]])
    return T


def v_to_mujoco(robot, q, qd):
    """MuJoCo's qvel (nv,) of soagen's qd (nv,) at soagen's q; also torques (qfrc of tau)."""
    return velocity_map(robot, q) @ np.asarray(qd, float)


def v_from_mujoco(robot, q, qvel):
    """soagen's qd (nv,) of MuJoCo's qvel (nv,) at soagen's q; also torques (tau of qfrc)."""
    return velocity_map(robot, q).T @ np.asarray(qvel, float)


tau_to_mujoco, tau_from_mujoco = v_to_mujoco, v_from_mujoco


def _velocity_term(robot, q, qd):
    """``[R (ω × v); 0]`` on every free joint's rows (nv,): qacc of qdd = 0."""
    out = np.zeros(robot.nv)
    qd = np.asarray(qd, float)
    for s, R in _free(robot, q):
        out[s:s + 3] = R @ cross(qd[s:s + 3], qd[s + 3:s + 6])
    return out


def a_to_mujoco(robot, q, qd, qdd):
    """MuJoCo's qacc (nv,) of soagen's qdd (nv,) at soagen's q, qd."""
    return velocity_map(robot, q) @ np.asarray(qdd, float) + _velocity_term(robot, q, qd)


def a_from_mujoco(robot, q, qd, qacc):
    """soagen's qdd (nv,) of MuJoCo's qacc (nv,) at soagen's q, qd."""
    return velocity_map(robot, q).T @ (np.asarray(qacc, float) - _velocity_term(robot, q, qd))


def matrix_to_mujoco(robot, q, M):
    """MuJoCo's M (nv, nv) (``mj_fullM``) of soagen's M at soagen's q: ``T M Tᵀ``."""
    T = velocity_map(robot, q)
    return T @ np.asarray(M, float) @ T.T


def matrix_from_mujoco(robot, q, M):
    """soagen's M (nv, nv) of MuJoCo's at soagen's q: ``Tᵀ M_mj T``."""
    T = velocity_map(robot, q)
    return T.T @ np.asarray(M, float) @ T


def jacobian_from_mujoco(robot, q, jacobians):
    """soagen's J (r, nv) of MuJoCo's ``[(jacp (3, nv), jacr (3, nv)), ...]``, one pair per tip:
    ``[jacr; jacp]`` of a full tip, ``jacp`` of a point tip (its rows :attr:`Tip.rows`; its
    jacr may be None)."""
    T = velocity_map(robot, q)
    if len(jacobians) != len(robot.tips):
        raise ValueError(f"{len(jacobians)} Jacobians for {len(robot.tips)} tips")
    return np.vstack([_rows(tip, jacp, jacr) @ T for (jacp, jacr), tip in zip(jacobians, robot.tips)])


def _rows(tip, jacp, jacr):
    """The tip's rows of ``[jacr; jacp]`` (6, nv): all of them, or the linear ones of a point tip."""
    if tip.point:
        return np.asarray(jacp, float)
    return np.vstack([jacr, jacp])[list(tip.rows)]


def jacobian_to_mujoco(robot, q, J):
    """MuJoCo's ``[(jacp (3, nv), jacr (3, nv)), ...]`` of soagen's J (r, nv); a point tip's
    jacr is None (its rows are the linear ones only)."""
    JT = np.asarray(J, float) @ velocity_map(robot, q).T
    out, i = [], 0
    for tip in robot.tips:
        rows = JT[i:i + len(tip.rows)]
        out.append((rows, None) if tip.point else (rows[3:], rows[:3]))
        i += len(tip.rows)
    return out


def full_mass_matrix(model, data):
    """MuJoCo's dense joint-space inertia M (nv, nv) of ``data``, on every mujoco release from 3.3 to 4.x.

    Parameters
    ----------
    model : mujoco.MjModel
        The compiled model.
    data : mujoco.MjData
        Its data after ``mujoco.mj_forward`` (or at least ``mj_kinematics``, ``mj_comPos``
        and ``mj_crb``), which leaves M in MuJoCo's sparse layout.

    Returns
    -------
    ndarray (nv, nv)
        M in MuJoCo's coordinates (``qvel`` order); :func:`matrix_from_mujoco` turns it into
        soagen's.

    Notes
    -----
    Up to mujoco 3.9 the call is ``mj_fullM(model, dst, data.qM)``; from 3.10 it is
    ``mj_fullM(model, data, dst)``, and later releases drop ``MjData.qM`` (3.17 has none).
    The newer call is tried first: the bindings refuse arguments of the wrong types with a
    TypeError before anything is written.
    """
    import mujoco

    M = np.zeros((model.nv, model.nv))
    try:
        mujoco.mj_fullM(model, data, M)
    except TypeError:
        mujoco.mj_fullM(model, M, data.qM)
    return M
