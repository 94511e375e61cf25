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
    (seed 001 (2.16) with the link rotation made explicit).  Velocities
    propagate with its transpose, ``V_k = φ*(p, k) V_p``.
    """
    out = np.zeros((6, 6))
    out[:3, :3] = rotation
    out[3:, 3:] = rotation
    out[:3, 3:] = skew(offset) @ rotation
    return out


def spatial_inertia(mass, com, inertia_com):
    """Spatial inertia ``M(k)`` about the frame origin (seed 001 (2.15)); (6, 6).

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

