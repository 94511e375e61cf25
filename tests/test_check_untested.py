"""``soagen check`` never says PASS over zero compared states: a function that no state
could test (Λ(0) of a tip with more rows than the joints behind it can move) is UNTESTED,
and the command exits 3 unless ``--allow-untested``."""
from __future__ import annotations

import soagen
from soagen import cli
from soagen.check import Result

# the UR5 with four joints locked: two joints cannot move a 6-row tip, so Ω(0) is singular everywhere
LOCKED = ["shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint"]


def run(capsys, *extra):
    argv = ["check", soagen.robots.path("ur5"), "--tip", "tool0", "--samples", "4", "--optimize", "O0", "--quiet",
            "--function", "inverse_dynamics", "--function", "os_inertia", *[f"--lock={j}=0.3" for j in LOCKED],
            *extra]
    code = cli.main(argv)
    return code, capsys.readouterr().out


def test_untested_is_not_pass(capsys):
    code, out = run(capsys)
    assert code == 3, out
    assert "PASS" not in out and "UNTESTED: os_inertia" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("os_inertia"))
    assert "UNTESTED" in line and "(0 states, 4 skipped" in line
    line = next(x for x in out.splitlines() if x.strip().startswith("inverse_dynamics"))
    assert " ok " in line and "(4 states)" in line


def test_allow_untested(capsys):
    code, out = run(capsys, "--allow-untested")
    assert code == 0 and "UNTESTED: os_inertia" in out


def test_build_warns_at_once_when_lambda_cannot_exist():
    """Asking for Λ(0)-based functions of a tip that two joints cannot move warns before anything is
    recorded, naming the rows, the joints and the functions; the full arm does not warn."""
    import warnings

    import pytest

    from soagen.functions import select, tip_mobility

    path = soagen.robots.path("ur5")
    locked = soagen.load_urdf(path, tips=["tool0"], lock={j: 0.3 for j in LOCKED})
    assert tip_mobility(locked) == (6, 2)
    with pytest.warns(soagen.ModelWarning, match=r"6 rows of Lambda\(0\) but only 2 joint velocities.*os_inertia"):
        select(locked, soagen.Options(functions=["os_inertia"]))
    arm = soagen.load_urdf(path, tips=["tool0"])
    assert tip_mobility(arm) == (6, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", soagen.ModelWarning)
        select(arm, soagen.Options())


def test_a_result_over_zero_states_is_not_ok():
    """Within its bound on every compared state is no pass when no state was compared: a result
    whose every state was skipped is not ok, whatever its (empty) worst ratio."""
    assert not Result("os_inertia", compared=0, skipped=4).ok
    assert not Result("os_inertia").ok
    assert Result("os_inertia", ratio=0.5, compared=1, skipped=3).ok
    assert not Result("os_inertia", ratio=1.5, compared=4).ok
