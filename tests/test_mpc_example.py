"""examples/mpc_panda.py (docs/guide/derivatives-and-mpc.md): iLQR with the generated linearized
step converges (final joint error 3e-5 rad, at rest, in 5 iterations)."""
from __future__ import annotations

import sys

import numpy as np

from tests.support import ROOT

sys.path.insert(0, str(ROOT / "examples"))


def test_ilqr_reaches_the_goal_at_rest():
    import mpc_panda

    problem, xs, us, history = mpc_panda.solve(log=lambda *_: None)
    n = problem.n
    assert np.abs(xs[-1, :n] - mpc_panda.Q_GOAL).max() < 6e-5          # measured: 2.95e-05 rad
    assert np.abs(xs[-1, n:]).max() < 7e-4                             # measured: 3.58e-04 rad/s
    assert len(history) - 1 <= 6 and history[-1][0] < history[0][0] / 50
    # the rollout is the generated forward dynamics: the final state is reproducible from the torques
    np.testing.assert_allclose(problem.rollout(xs[0], us), xs, rtol=0, atol=1e-12)
