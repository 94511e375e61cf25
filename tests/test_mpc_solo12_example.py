"""examples/mpc_solo12.py, a few ticks of each task: the receding-horizon loop stops the standing robot's push
and lifts the trotting robot's feet, on Crocoddyl's models, and standing on soagen's where soagen.crocoddyl has
its contact model (the plant's states then equal to 1e-6; -O0, the four-feet module of
tests/test_crocoddyl_contact.py; the trot's two-feet modules would be two more builds); without it, the
example says it ran Crocoddyl's only."""
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
    res = mpc_solo12.simulate(TICKS, 1, ["standing", "trotting"], log=said.append, optimize="O0",
                              soagen_tasks=["standing"])
    backends = ["crocoddyl", "soagen"] if hasattr(sc, "contact_fwd_dynamics") else ["crocoddyl"]
    if len(backends) == 2:                       # the gait models' Baumgarte gains on both backends: nothing to say
        assert said == []
    else:
        assert said == ["soagen's models: soagen.crocoddyl has no contact_fwd_dynamics in this soagen; "
                        "Crocoddyl's own models only"]
    nq = 19
    for task in ("standing", "trotting"):
        ran = backends if task == "standing" else ["crocoddyl"]
        assert sorted(b for b in res[task] if b in ("soagen", "crocoddyl")) == sorted(ran)
        for b in ran:
            hz, states = res[task][b]
            assert hz > 0 and states.shape == (TICKS + 1, 37) and np.all(np.isfinite(states))
            assert abs(states[-1, 2] - states[0, 2]) < 0.02                    # the base stays up
            feet = res[task]["feet"][b]                                         # (ticks + 1, 4, 3), world
            if task == "standing":
                assert states[0, nq + 1] == mpc_solo12.PUSH and abs(states[-1, nq + 1]) < 0.02   # the push stopped
                # still feet, the push moved the legs along (sliding feet: 3 mm)
                assert np.abs(feet - feet[0]).max() < 2e-3
            else:
                assert mpc_solo12.lift(feet) > 0.02                             # a pair swings (5 cm asked)
        if len(ran) == 2:
            assert np.max(np.abs(res[task]["soagen"][1] - res[task]["crocoddyl"][1])) <= 1e-6
        assert "ticks/s" in mpc_solo12.report(task, res[task], TICKS, 1)
