"""Small numpy helpers for rotations and spatial (6-D) quantities.

Spatial vectors are ``[angular; linear]`` as in the JPL papers: a velocity is
``V = [ω; v]``, a force ``f = [N; F]`` (moment about the frame origin first).
"""
from __future__ import annotations

import numpy as np


def skew(v):
    """Cross-product matrix ``ṽ`` with ``ṽ y = v × y``; (3,) -> (3, 3)."""
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def cross(a, b):
    """``a × b`` of two 3-vectors; (3,), (3,) -> (3,).  np.cross's answer (the same products and
    differences) in a tenth of its time on 3-vectors, where the references spend theirs."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def rpy_matrix(rpy):
    """URDF roll-pitch-yaw to rotation, ``Rz(yaw) Ry(pitch) Rx(roll)``; (3,) -> (3, 3)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def axis_angle(axis, angle):
    """Rotation by ``angle`` about the unit ``axis`` (Rodrigues); -> (3, 3)."""
    a = skew(axis)
    return np.eye(3) + np.sin(angle) * a + (1.0 - np.cos(angle)) * (a @ a)


def phi(rotation, offset):
    """Rigid-body force transform ``φ(p, k)`` from frame k to its parent p; (6, 6).

    ``rotation`` (3, 3) is frame k's orientation in p, ``offset`` (3,) the
    origin of k in p coordinates: ``[N_p; F_p] = [[R, ℓ̃R], [0, R]] [N_k; F_k]``
    ([RK (2.16)] with the link rotation made explicit).  Velocities
    propagate with its transpose, ``V_k = φ*(p, k) V_p``.
    """
    out = np.zeros((6, 6))
    out[:3, :3] = rotation
    out[3:, 3:] = rotation
    out[:3, 3:] = skew(offset) @ rotation
    return out


def spatial_inertia(mass, com, inertia_com):
    """Spatial inertia ``M(k)`` about the frame origin [RK (2.15)]; (6, 6).

    ``com`` (3,) is the centre of mass and ``inertia_com`` (3, 3) the
    rotational inertia about it, both in the body frame.
    """
    c = skew(com)
    out = np.zeros((6, 6))
    out[:3, :3] = inertia_com - mass * c @ c
    out[:3, 3:] = mass * c
    out[3:, :3] = -mass * c
    out[3:, 3:] = mass * np.eye(3)
    return out



def quat_matrix(quat):
    """Rotation of the quaternion ``(x, y, z, w)`` (scalar last, as JPL and
    Pinocchio) after normalization: ``s = 2/|q|²``, exact for any non-zero
    ``quat``; (4,) -> (3, 3)."""
    x, y, z, w = np.asarray(quat, float)
    s = 2.0 / (x * x + y * y + z * z + w * w)
    return np.array([
        [1 - s * (y * y + z * z), s * (x * y - w * z), s * (x * z + w * y)],
        [s * (x * y + w * z), 1 - s * (x * x + z * z), s * (y * z - w * x)],
        [s * (x * z - w * y), s * (y * z + w * x), 1 - s * (x * x + y * y)],
    ])


def quat_multiply(a, b):
    """Hamilton product ``a ⊗ b`` of quaternions ``(x, y, z, w)``; -> (4,)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz])


def quat_exp(w):
    """Unit quaternion ``(x, y, z, w)`` of the rotation vector ``w`` (3,)."""
    angle = float(np.linalg.norm(w))
    half = 0.5 * angle
    # sin(θ/2)/θ with its series near 0
    k = 0.5 - angle * angle / 48.0 if angle < 1e-6 else np.sin(half) / angle
    return np.array([*(k * np.asarray(w, float)), np.cos(half)])


def se3_exp(xi):
    """Rigid motion ``(R, p)`` of the body twist ``xi = [ω; v]`` (6,) applied for
    unit time: the exponential of SE(3) (as Pinocchio's ``exp6``)."""
    w, v = np.asarray(xi[:3], float), np.asarray(xi[3:], float)
    theta = float(np.linalg.norm(w))
    W = skew(w)
    if theta < 1e-8:
        A, B = 1.0 - theta ** 2 / 6.0, 0.5 - theta ** 2 / 24.0
        C = 1.0 / 6.0 - theta ** 2 / 120.0
    else:
        A, B = np.sin(theta) / theta, (1.0 - np.cos(theta)) / theta ** 2
        C = (theta - np.sin(theta)) / theta ** 3
    R = np.eye(3) + A * W + B * W @ W
    V = np.eye(3) + B * W + C * W @ W
    return R, V @ v
