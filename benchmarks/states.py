"""Seeded random states, the file the drivers read, and the same states in Pinocchio's conventions."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

import soagen_side as sg


@dataclass
class States:
    """N random states: q (N, nq), qd, qdd, tau (N, nv), f, u (N, 6m), the weights lam (N, nv) and lam_f
    (N, r) of the contracted Hessians, and the row-major file holding them (in this order)."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    f: np.ndarray
    u: np.ndarray
    lam: np.ndarray
    lam_f: np.ndarray
    path: Path = None

    @property
    def columns(self):
        return (self.q, self.qd, self.qdd, self.tau, self.f, self.u, self.lam, self.lam_f)

    @property
    def row(self):
        """Doubles per row of the file."""
        return sum(a.shape[1] for a in self.columns)

    def __len__(self):
        return len(self.q)


def draw_states(robot, count, seed, tips_at_rest=False):
    """``count`` states: q uniform in the joint limits (else [-pi, pi]), qd, qdd normal,
    tau normal x 10 (``Robot.random_state``), tip forces f normal x 10, u normal; with
    ``tips_at_rest``, qd projected onto J qd = 0 (``soagen_side.tips_at_rest``); lam, lam_f normal,
    from a stream of their own (the other draws as they were without them)."""
    rng = np.random.default_rng(seed)
    m = len(robot.tips)
    rows = [sg.random_state(robot, rng) + (rng.normal(size=6 * m) * 10.0, rng.normal(size=6 * m))
            for _ in range(count)]
    if tips_at_rest:
        rows = [(q, sg.tips_at_rest(robot, q, qd), *rest) for q, qd, *rest in rows]
    weights = np.random.default_rng([seed, 57])
    lam, lam_f = weights.normal(size=(count, robot.nv)), weights.normal(size=(count, robot.tip_rows))
    return States(*(np.array(col) for col in zip(*rows)), lam, lam_f)


def write_states(states, path):
    np.hstack(states.columns).astype("<f8").tofile(path)
    states.path = path
    return states


def pinocchio_states(robot, states, path):
    """The same states in Pinocchio's conventions (``soagen.pinocchio_convention``): quaternions
    normalized, free-flyer velocity, acceleration and torque blocks swapped ([v; ω], [f; n]);
    f, u, lam, lam_f unchanged (not used by the Pinocchio driver). Same row size, written to ``path``."""
    def rows(fn, a):
        return np.array([fn(robot, x) for x in a])
    converted = States(rows(sg.q_to_pinocchio, states.q), rows(sg.v_to_pinocchio, states.qd),
                       rows(sg.v_to_pinocchio, states.qdd), rows(sg.v_to_pinocchio, states.tau),
                       states.f, states.u, states.lam, states.lam_f)
    return write_states(converted, path)

