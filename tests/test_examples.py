"""The examples run and measure what the user guide (docs/guide/) quotes (same duration, without plotting)."""
from __future__ import annotations

import re
import sys

import numpy as np

from soagen.model import robots
from tests.support import ROOT
from tests.support.builds import built

sys.path.insert(0, str(ROOT / "examples"))


def readme_numbers(page, pattern):
    """The numbers the guide page ``page`` (docs/guide/) quotes in ``pattern`` (a regex with float groups)."""
    text = " ".join((ROOT / "docs" / "guide" / page).read_text().split())
    match = re.search(pattern, text)
    assert match, pattern
    return [float(x) for x in match.groups()]


def assert_as_quoted(measured, quoted, what):
    """Within a factor 1.5 of the guide's figure, either way: a regression that makes
    the example worse by half fails, and so does a guide that overstates it."""
    assert quoted / 1.5 <= measured <= 1.5 * quoted, (what, measured, quoted)


def test_osc_panda_tracks_the_circle_as_the_readme_says():
    import osc_panda

    pos_mm, rot_mrad, duration = readme_numbers("functions.md", r"Measured: max position error ([0-9.]+) mm and orientation "
                                                r"error ([0-9.]+) mrad after 2 s of an (\d+) s run")
    _, mod = built("panda", lambda: robots.example("panda"))
    times, log = osc_panda.simulate(mod, duration=duration)
    assert duration == osc_panda.simulate.__defaults__[0]          # what `python examples/osc_panda.py` runs
    pos, rot = osc_panda.tracking_error(times, log, after=2.0)
    assert_as_quoted(pos * 1e3, pos_mm, "position error (mm)")
    assert_as_quoted(rot * 1e3, rot_mrad, "orientation error (mrad)")
    # the hand really went round: it covered the circle's diameter in x and y
    span = log["p"][times >= 1.0].max(axis=0) - log["p"][times >= 1.0].min(axis=0)
    assert span[0] > 0.19 and span[1] > 0.19


def test_closed_chain_bar_drifts_as_the_readme_says():
    import closed_chain_bar

    pos_mm, rot_mrad, duration = readme_numbers("closed-chains.md", r"raw constraint drift of an unstabilized 1 ms Euler integration "
                                                r"\(([0-9.]+) mm and ([0-9.]+) mrad after ([0-9.]+) s\)")
    assert duration == closed_chain_bar.simulate.__defaults__[0]    # what the example runs
    times, drift, force = closed_chain_bar.simulate(duration=duration)
    assert np.all(np.isfinite(force)) and np.abs(force).max() > 1.0
    assert_as_quoted(drift[-1, 0] * 1e3, pos_mm, "position drift (mm)")
    assert_as_quoted(drift[-1, 1] * 1e3, rot_mrad, "orientation drift (mrad)")


def test_identify_panda_improves_as_the_readme_says():
    """The example's prediction error drops as quoted (with margin: a regression that
    identified half as well would fail), and its committed output is what it prints."""
    import identify_panda as example

    res = example.run()
    assert res["rms_before"] > 5 * res["rms_after"]
    assert res["rms_after"] < 0.2
    committed = (ROOT / "docs" / "identify_panda.txt").read_text()
    readme = (ROOT / "docs" / "guide" / "identification.md").read_text()
    fresh = example.report(res) + "\n"
    numbers = lambda text: [float(x) for x in re.findall(r"\d+\.\d+(?:e[-+]\d+)?", text)]   # noqa: E731
    for a, b in zip(numbers(committed), numbers(fresh)):
        assert abs(a - b) <= 0.02 * abs(b) + 2e-3, (a, b)
    before, after = re.search(r"nominal \(URDF\) ([\d.]+) N m, identified ([\d.]+) N m", committed).groups()
    b = re.search(r"(\d+) base parameters", committed).group(1)
    assert f"falls from {float(before):.2f} N m RMS" in readme and f"to {after} N m" in readme
    assert f"identifies the Panda's {b} base parameters" in readme
    assert f"({float(before) / float(after):.0f}x;" in readme


def test_humanoid_figures_are_its_committed_output():
    """The guide quotes ``python examples/humanoid.py`` as committed in docs/humanoid.txt (a run takes a
    TALOS build at -O3, and its times are one machine's: the suite checks the quote, not the machine)."""
    out = " ".join((ROOT / "docs" / "humanoid.txt").read_text().split())
    batch, single, ref_ms, agree, build_s = readme_numbers(
        "functions.md", r"([\d.]+) µs per state in a batch call \(([\d.]+) µs per single call from Python\) "
                        r"against ([\d.]+) ms for the numpy reference; agreement ([\d.e+-]+); generated and "
                        r"compiled in ([\d.]+) s")
    assert f"generated {single:.1f} µs from Python ({batch:.2f} µs per state in one batch call), numpy reference " \
           f"{ref_ms:.2f} ms" in out
    assert f"|Λ - (J M⁻¹ Jᵀ)⁻¹| / |Λ| = {agree:.1e}" in out and f"generated and compiled in {build_s:.1f} s" in out
    assert "32 actuated joints and a floating base, nq = 39, nv = 38" in out
