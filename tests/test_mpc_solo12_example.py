"""examples/mpc_solo12.py, a few ticks of each task: the receding-horizon loop stops the standing robot's push
and lifts the trotting robot's feet, on Crocoddyl's models and on soagen's where soagen.crocoddyl has its
contact model (the plant's states then equal to 1e-6); without it, the example says it ran Crocoddyl's only."""
from __future__ import annotations

import sys

import numpy as np

import soagen.crocoddyl as sc
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "examples"))

TICKS = 15


def test_mpc_solo12_stands_and_trots():
    import mpc_solo12

    said = []
    res = mpc_solo12.simulate(TICKS, 1, ["standing", "trotting"], log=said.append)
    backends = ["crocoddyl", "soagen"] if hasattr(sc, "contact_fwd_dynamics") else ["crocoddyl"]
    assert said == ([] if len(backends) == 2 else
                    ["soagen's models: soagen.crocoddyl has no contact_fwd_dynamics in this soagen; "
                     "Crocoddyl's own models only"])
    nq = 19
    for task in ("standing", "trotting"):
        assert sorted(b for b in res[task] if b in ("soagen", "crocoddyl")) == sorted(backends)
        for b in backends:
            hz, states = res[task][b]
            assert hz > 0 and states.shape == (TICKS + 1, 37) and np.all(np.isfinite(states))
            assert abs(states[-1, 2] - states[0, 2]) < 0.02                    # the base stays up
            feet = mpc_solo12.lift(res[task]["feet"][b])
            if task == "standing":
                assert states[0, nq + 1] == mpc_solo12.PUSH and abs(states[-1, nq + 1]) < 0.02   # the push stopped
                assert feet < 1e-3                                              # on four feet
            else:
                assert feet > 0.02                                              # a pair swings (5 cm asked)
        if len(backends) == 2:
            assert np.max(np.abs(res[task]["soagen"][1] - res[task]["crocoddyl"][1])) <= 1e-6
        assert "ticks/s" in mpc_solo12.report(task, res[task], TICKS, 1)
