"""examples/quadruped_balance.py measures what docs/guide/legged.md quotes (same duration, without plotting),
and its run is physically sound: the ground carries the weight, the push moves the robot, the feet hold."""
from __future__ import annotations

import importlib
import re
import sys

import numpy as np
import pytest

from tests.support import ROOT
from tests.support.builds import built
from tests.test_examples import assert_as_quoted, readme_numbers

sys.path.insert(0, str(ROOT / "examples"))
example = importlib.import_module("quadruped_balance")

THREE = [f for f in example.FEET if f != example.LIFTED]


def modules():
    """(robot, module) with four feet and with three, the example's functions (built -O0)."""
    four = built("quadruped_four_feet", lambda: example.load(example.FEET), functions=example.FUNCTIONS)
    three = built("quadruped_three_feet", lambda: example.load(THREE), functions=example.FUNCTIONS)
    return four, three


@pytest.fixture(scope="module")
def run():
    four, three = modules()
    dev, settle, lo, hi, ratio, lift, com3, duration = readme_numbers("legged.md", (
        r"Measured: the push moves the centre of mass at most ([\d.]+) mm and it is back within 1 mm "
        r"([\d.]+) s after the push began; during the push and recovery the normal forces stay "
        r"between ([\d.]+) and ([\d.]+) N per foot and \|f_t\| / f_n at most ([\d.]+), so with μ = 0.8 no foot "
        r"slips; on three feet the front-left foot rises ([\d.]+) mm and the centre of mass stays "
        r"within ([\d.]+) mm of its target, in a ([\d.]+) s run"))
    quoted = {"max_dev_mm": dev, "settle_s": settle, "min_normal_push": lo, "max_normal_push": hi,
              "max_ratio_push": ratio, "lift_mm": lift, "com_three_mm": com3}
    assert duration == example.simulate.__defaults__[0]          # what `python examples/quadruped_balance.py` runs
    times, log = example.simulate(four, three, duration=duration)
    return four, times, log, example.summary(times, log), quoted


def test_quadruped_balance_recovers_as_the_guide_says(run):
    _, _, _, s, quoted = run
    for key, value in quoted.items():
        assert_as_quoted(s[key], value, key)
    assert not s["slips"] and example.MU == 0.8


def test_quadruped_balance_is_physically_sound(run):
    (robot, _), times, log, s, _ = run
    mass = sum(b.mass for b in robot.bodies)
    weight = mass * np.linalg.norm(robot.gravity)
    # standing, the ground carries the weight, a quarter on each foot
    standing = times < example.PUSH_START
    np.testing.assert_allclose(log["normal"][standing].sum(axis=1), weight, rtol=1e-6)
    np.testing.assert_allclose(log["normal"][0], weight / 4, rtol=1e-3)
    # the push moved the centre of mass along it (+y) by millimetres, and it came back
    push = (times >= example.PUSH_START) & (times < example.SHIFT[0])
    shift = log["com"][push] - log["com"][0]
    assert shift[:, 1].max() > 3e-3 and np.abs(shift[:, 0]).max() < 1e-4
    assert s["final_mm"] < 0.05
    # the push loads the left feet (+y side) and unloads the right ones
    normal = log["normal"][push]                                     # (N, 4) FL, FR, HL, HR
    peak = np.argmax(normal[:, 0])
    assert normal[peak, [0, 2]].min() > weight / 4 + 1.0 and normal[peak, [1, 3]].max() < weight / 4 - 1.0
    # the plan satisfies the base's equations; the front-left foot is unloaded before the switch, then rises
    assert s["residual"] < 1e-9 and s["switch_normal"] < 0.01
    assert np.isnan(log["normal"][times >= example.SWITCH, example.FEET.index(example.LIFTED)]).all()
    assert s["min_normal_three"] > 1.0 and s["lift_mm"] > 20.0 and s["drift_mm"] < 0.1


def test_a_stronger_push_would_slip_as_the_guide_says():
    four, three = modules()
    quoted, = readme_numbers("legged.md", r"at 10 N the unloaded right feet would need \|f_t\| / f_n = ([\d.]+)")
    _, log = example.simulate(four, three, duration=0.6, push=np.array([0.0, 10.0, 0.0]))
    ratio = log["tangential"] / log["normal"]
    assert np.nanmax(ratio) > example.MU
    assert_as_quoted(np.nanmax(ratio[:, [1, 3]]), quoted, "|f_t| / f_n of the right feet at 10 N")
    assert np.nanmax(ratio[:, [0, 2]]) < example.MU                # the loaded left feet hold


def test_quadruped_committed_output_is_what_it_prints(run):
    """docs/quadruped_balance.txt (the guide's build times) matches a fresh run's summary."""
    (robot, _), _, _, s, _ = run
    committed = (ROOT / "docs" / "quadruped_balance.txt").read_text()
    fresh = example.report(s, sum(b.mass for b in robot.bodies) * np.linalg.norm(robot.gravity))
    tail = committed[committed.index("standing:"):]
    numbers = lambda text: [float(x) for x in re.findall(r"-?\d+\.\d+(?:e[-+]\d+)?", text)] 
    a, b = numbers(tail), numbers(fresh)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert abs(x - y) <= 0.02 * abs(y) + 2e-3 or (abs(x) < 1e-9 and abs(y) < 1e-9), (x, y)
    t4, t3 = re.search(r"generated and compiled in ([\d.]+) s \(four feet\) and ([\d.]+) s", committed).groups()
    guide = " ".join((ROOT / "docs" / "guide" / "legged.md").read_text().split())
    assert f"take about {float(t4):.0f} s and {float(t3):.0f} s from an empty cache" in guide
