"""Inertial parameters of a robot, numpy only: the standard parameters π, a
robot made from π, and the base (identifiable) parameters β = K π.

Order of π (p = 10·nb + 3·na)
-----------------------------
Body k (depth-first, as the bodies), in its body frame (the URDF link frame,
which is Pinocchio's joint frame), exactly Pinocchio's
``Inertia.toDynamicParameters()``::

    π[10k : 10k+10] = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)

with c the centre of mass and I = I_c + m (|c|² 1 − c cᵀ) the rotational
inertia about the body-frame origin.  Then, when the robot has
:class:`~soagen.model.robot.Actuators`, three per 1-dof joint in joint order
(``robot.actuated``): (armature, viscous, Coulomb).

Base parameters (Gautier's numerical method)
--------------------------------------------
The regressor Y (τ = Y π) of :func:`soagen.reference.regressor` is stacked over
``states`` seeded random states (joint values uniform within limits, q̇ and q̈
standard normal; seed 0: the result is deterministic); a QR factorization with
column pivoting (Businger–Golub, :func:`pivoted_qr`) reveals the rank.  The rank b is the number of
pivots with ``|R_ii| > RANK_TOLERANCE · |R_00|``.  The b base columns are then
chosen as Khalil's regrouping rules choose them (:func:`base_parameters`), the
others are combinations of them, Y_d = Y_b X (least squares, exact up to
round-off), so Y π = Y_b β with β = π_b + X π_d: K has the identity on the base
columns and X on the others (entries below ``SNAP · max|X|`` set to 0).
The base regressor is Y_b = Y[:, columns]: a column selection, no arithmetic.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from soagen.model.actuators import Actuators
from soagen.model.errors import RobotError
from soagen.model.spatial import skew

BODY_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
ACTUATOR_NAMES = ("armature", "viscous", "coulomb")
#: a pivot |R_ii| at or below this fraction of |R_00| ends the rank (see the module doc)
RANK_TOLERANCE = 1e-8
#: entries of R₁⁻¹R₂ below this fraction of its largest are zeros (round-off)
SNAP = 1e-10


def body_parameters(body):
    """The 10 standard parameters (m, m c, I_o in Pinocchio's order) of a body; (10,)."""
    m, c = float(body.mass), np.asarray(body.com, float)
    I = np.asarray(body.inertia, float) + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])


def standard_parameters(robot):
    """π (p,) of ``robot`` in the order of the module doc."""
    out = [body_parameters(b) for b in robot.bodies]
    a = robot.actuators
    if a is not None:
        out += [np.array([a.armature[i], a.viscous[i], a.coulomb[i]]) for i in robot.actuated]
    return np.concatenate(out)


def parameter_names(robot):
    """Names of the entries of π: ``"<link>.m"``, ``"<link>.Ixy"``, ``"<joint>.armature"``, …"""
    names = [f"{b.name}.{p}" for b in robot.bodies for p in BODY_NAMES]
    index = {robot.vslice(k).start: b.joint for k, b in enumerate(robot.bodies)}
    return names + [f"{index[i]}.{p}" for i in robot.actuated for p in ACTUATOR_NAMES]


def with_parameters(robot, pi):
    """A copy of ``robot`` whose bodies have the standard parameters ``pi`` (p,):
    c = (m c)/m and I_c = I_o − m(|c|² 1 − c cᵀ); a body with m = 0 must have m c = 0.
    Actuator parameters replace the robot's (it must have actuators if pi has them)."""
    from dataclasses import replace

    pi = np.asarray(pi, float)
    if pi.shape != (robot.n_parameters,) or not np.all(np.isfinite(pi)):
        raise RobotError(f"{robot.name}: parameters must be {robot.n_parameters} finite numbers, got shape {pi.shape}")
    bodies = []
    for k, b in enumerate(robot.bodies):
        m, h, (xx, xy, yy, xz, yz, zz) = pi[10 * k], pi[10 * k + 1:10 * k + 4], pi[10 * k + 4:10 * k + 10]
        if m == 0.0 and np.any(h != 0.0):
            raise RobotError(f"{robot.name}: body '{b.name}' has m = 0 and m c = {h}")
        c = h / m if m != 0.0 else np.zeros(3)
        I_o = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        bodies.append(replace(b, mass=float(m), com=c, inertia=I_o - m * (c @ c * np.eye(3) - np.outer(c, c))))
    actuators = robot.actuators
    if actuators is not None:
        arm, vis, cou = (np.zeros(robot.nv) for _ in range(3))
        rows = pi[10 * robot.nb:].reshape(-1, 3)
        for i, (x, y, z) in zip(robot.actuated, rows):
            arm[i], vis[i], cou[i] = x, y, z
        actuators = Actuators(arm, vis, cou, actuators.coulomb_velocity)
    return replace(robot, bodies=tuple(bodies), actuators=actuators)   # the builder's findings kept


def pivoted_qr(A):
    """Householder QR with column pivoting of A (r, c): the pivot order and
    |R_ii| (decreasing), and R (min(r, c), c) with its columns in pivot order."""
    R = np.array(A, float)
    rows, cols = R.shape
    order = np.arange(cols)
    norms = np.einsum("ij,ij->j", R, R)
    for j in range(min(rows, cols)):
        best = j + int(np.argmax(norms[j:]))
        if best != j:
            R[:, [j, best]] = R[:, [best, j]]
            order[[j, best]] = order[[best, j]]
            norms[[j, best]] = norms[[best, j]]
        x = R[j:, j]
        alpha = -np.copysign(np.linalg.norm(x), x[0]) if x[0] != 0 else -np.linalg.norm(x)
        v = x.copy()
        v[0] -= alpha
        vv = v @ v
        if vv > 0.0:
            R[j:, j:] -= np.outer(v, (2.0 / vv) * (v @ R[j:, j:]))
        R[j + 1:, j] = 0.0
        norms[j + 1:] = np.einsum("ij,ij->j", R[j + 1:, j + 1:], R[j + 1:, j + 1:])
    k = min(rows, cols)
    return order, np.abs(np.diag(R[:k, :k])), R[:k]


@dataclass(frozen=True)
class BaseParameters:
    """The identifiable combinations of a robot's parameters (module doc).

    columns : tuple of int     indices in π of the base columns, b of them
    K : (b, p) ndarray         β = K π
    pivots : (min(r, p),)      |R_ii| / |R_00| of the pivoted QR, decreasing (the rank decision)
    residuals : (p,)           residual of each column against the base columns chosen
                               before it, over the largest column norm (the choice of columns)
    states : int               random states stacked
    """

    columns: tuple
    K: np.ndarray
    pivots: np.ndarray
    residuals: np.ndarray
    states: int

    @property
    def b(self):
        return len(self.columns)

    @property
    def gap(self):
        """(smallest kept, largest dropped) pivot ratio: how clear the rank decision was."""
        dropped = self.pivots[self.b] if self.b < len(self.pivots) else 0.0
        return float(self.pivots[self.b - 1]), float(dropped)

    def describe(self, names):
        """β as text, one line per base parameter: ``name + 0.43*other - ...``."""
        lines = []
        for i, col in enumerate(self.columns):
            terms = [names[col]]
            for j in np.flatnonzero(self.K[i]):
                if j != col:
                    k = self.K[i, j]
                    # 6 digits of k first rounded to 12: a last-bit difference between machines'
                    # LAPACK kernels cannot flip the sixth digit of a value close to a half
                    coeff = "" if abs(abs(k) - 1.0) < 1e-12 else f"{float(f'{abs(k):.12g}'):.6g}*"
                    terms.append(f"{'+' if k > 0 else '-'} {coeff}{names[j]}")
            lines.append(" ".join(terms))
        return lines


def inertia_from_parameters(p10):
    """Spatial inertia (6, 6) about the body origin from 10 standard parameters."""
    m, h = p10[0], np.asarray(p10[1:4])
    xx, xy, yy, xz, yz, zz = p10[4:]
    out = np.zeros((6, 6))
    out[:3, :3] = [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]
    out[:3, 3:] = skew(h)
    out[3:, :3] = -skew(h)
    out[3:, 3:] = m * np.eye(3)
    return out


def perturbed_parameters(robot, rng, scale=0.3):
    """π of a physically consistent perturbation of ``robot``: each mass and
    rotational inertia (about the centre of mass) scaled by factors in
    [1 − scale, 1 + scale], each centre of mass moved up to ``scale``·10 cm per
    axis, actuator parameters scaled likewise (zeros become up to ``scale``
    times 0.1).  Massless bodies stay massless; inertias stay positive
    semi-definite with their triangle inequalities.  -> (p,)"""
    from dataclasses import replace

    bodies = []
    for b in robot.bodies:
        if b.mass == 0.0:
            bodies.append(b)
            continue
        s = rng.uniform(1 - scale, 1 + scale, 2)
        bodies.append(replace(b, mass=b.mass * s[0], com=b.com + rng.uniform(-0.1, 0.1, 3) * scale,
                              inertia=b.inertia * s[1]))
    pi = standard_parameters(replace(robot, bodies=tuple(bodies)))
    extra = len(pi) - 10 * robot.nb
    if extra:
        pi[10 * robot.nb:] = pi[10 * robot.nb:] * rng.uniform(1 - scale, 1 + scale, extra) \
            + rng.uniform(0, 0.1 * scale, extra)
    return pi
