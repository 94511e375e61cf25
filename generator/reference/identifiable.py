"""Gautier's numerical base parameters: the reference regressor stacked over seeded
random states, QR with column pivoting (:mod:`soagen.model.parameters` has the
order of π, :class:`~soagen.model.parameters.BaseParameters` and the QR), and the
base regressor Y_b, the base columns of the regressor
(:mod:`soagen.reference.regressors`)."""
from __future__ import annotations

import numpy as np

from soagen.model.errors import RobotError
from soagen.model.parameters import RANK_TOLERANCE, SNAP, BaseParameters, pivoted_qr
from soagen.reference.regressors import regressor

_cache = {}   # robot fingerprint -> BaseParameters


def stacked_regressor(robot, states, seed=0):
    """Y of ``states`` seeded random states stacked, (states·n, p), from the reference."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(states):
        q = robot.random_configuration(rng)
        qd, qdd = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        rows.append(regressor(robot, q, qd, qdd))
    return np.vstack(rows)


def default_states(robot):
    """Random states stacked for the rank decision: rows ≥ 4p and at least 20 states."""
    return max(20, -(-4 * robot.n_parameters // robot.nv))


def base_parameters(robot, states=None, seed=0):
    """Gautier's numerical base parameters of ``robot`` (module doc); deterministic
    for given ``states`` (default :func:`default_states`) and ``seed``.

    The rank b is decided by the pivoted QR.  Which b columns form the base is
    then chosen greedily in the order of π (a column joins when its residual
    against those already chosen exceeds ``RANK_TOLERANCE`` times the largest
    column norm, the criterion of the QR): the parameters of links nearer the
    base absorb those of the links after them, as Khalil's regrouping rules do
    (for the RX-90 exactly OpenSYMORO's base parameters); the two decisions
    must agree on b (else :class:`RobotError`)."""
    states = default_states(robot) if states is None else states
    Y = stacked_regressor(robot, states, seed)
    _, diag, _ = pivoted_qr(Y)
    ratio = diag / diag[0] if diag[0] > 0 else diag
    b = int(np.sum(ratio > RANK_TOLERANCE))
    p = Y.shape[1]
    Q = np.zeros((Y.shape[0], 0))
    chosen, residuals = [], np.zeros(p)
    scale = np.linalg.norm(Y, axis=0).max()       # = |R_00| of the pivoted QR
    for c in range(p):
        y = Y[:, c]
        r = y - Q @ (Q.T @ y)
        r = r - Q @ (Q.T @ r)                     # twice: orthogonal to working precision
        residuals[c] = np.linalg.norm(r) / scale
        if residuals[c] > RANK_TOLERANCE:
            chosen.append(c)
            Q = np.hstack([Q, (r / np.linalg.norm(r))[:, None]])
    if len(chosen) != b:
        raise RobotError(f"{robot.name}: base-parameter rank unclear (pivoted QR {b}, greedy choice {len(chosen)})")
    chosen = sorted(chosen)
    dep = [c for c in range(p) if c not in chosen]
    K = np.zeros((b, p))
    K[np.arange(b), chosen] = 1.0
    if dep:
        X = np.linalg.lstsq(Y[:, chosen], Y[:, dep], rcond=None)[0]     # Y_d = Y_b X
        X[np.abs(X) < SNAP * max(1.0, np.abs(X).max())] = 0.0
        K[:, dep] = X
    return BaseParameters(tuple(int(c) for c in chosen), K, ratio, residuals, states)



def identifiable(robot):
    """:class:`~soagen.model.parameters.BaseParameters` of ``robot`` by :func:`base_parameters`
    with its defaults, computed once per robot (by its fingerprint)."""
    key = robot.fingerprint()
    if key not in _cache:
        _cache[key] = base_parameters(robot)
    return _cache[key]


def base_parameters_of(robot):
    """(β (b,), K (b, p)): β = K π the identifiable combinations of ``robot.parameters()``."""
    base = identifiable(robot)
    return base.K @ robot.parameters(), base.K.copy()


def base_regressor(robot, q, qd, qdd):
    """Y_b (n, b): the base columns of the regressor (:mod:`soagen.model.parameters`); -> (n, b)"""
    return regressor(robot, q, qd, qdd)[:, list(identifiable(robot).columns)]
