"""docs/build_profile.md is the rendering of the committed measurements docs/build_times.json
(``python benchmarks/build_times.py --render``), and those rows are of today's functions: the
statement counts of a live Panda build of the same functions equal the committed "after" row."""
from __future__ import annotations

import json

import soagen
from soagen.functions import select
from tests.support import ROOT, benchmark_script
from tests.support.builds import built


def _script():
    return benchmark_script("build_times")


def test_page_is_rendered_from_the_json():
    data = json.loads((ROOT / "docs" / "build_times.json").read_text())
    assert (ROOT / "docs" / "build_profile.md").read_text() == _script().render(data)


def test_after_row_is_todays_panda():
    data = json.loads((ROOT / "docs" / "build_times.json").read_text())
    row = next(r for r in data["runs"][-1]["rows"] if r["robot"] == "panda")
    # the Panda's build of the default functions (shared with tests/test_generated_vs_reference.py): its
    # programs' op counts, statements included, are in the module
    robot, mod = built("panda", lambda: soagen.robots.example("panda"))
    assert sorted(mod.ops) == sorted(s.name for s in select(robot, soagen.Options()))
    assert (row["functions"], row["statements"]) == (len(mod.ops), sum(ops["statements"] for ops in mod.ops.values()))


def test_legged_guide_quotes_the_legged_row():
    """docs/guide/legged.md quotes solo12's build time of soagen.functions.LEGGED from the JSON's latest run."""
    runs = json.loads((ROOT / "docs" / "build_times.json").read_text())["legged"]
    latest = {row["robot"]: row for run in runs for row in run["rows"]}       # the last run of each robot
    guide = " ".join((ROOT / "docs" / "guide" / "legged.md").read_text().split())
    assert f"solo12's set takes {latest['solo12_feet']['wall_s']:.1f} s" in guide
    assert f"The TALOS's set, its two flat feet as tips, takes {latest['talos_feet']['wall_s']:.1f} s" in guide


def test_legged_guide_quotes_its_controls():
    """The earlier runs docs/guide/legged.md sets beside the latest one are the JSON's: the control run of
    the previous commit (solo12 and the TALOS) and a commit built on two days (solo12)."""
    runs = json.loads((ROOT / "docs" / "build_times.json").read_text())["legged"]
    wall = lambda run: {row["robot"]: row["wall_s"] for row in run["rows"]}
    control = wall(next(run for run in reversed(runs) if run["label"].endswith(", control")))
    again = next(run for run in reversed(runs) if run["label"].endswith(", again"))
    first = wall(next(run for run in runs if run["commit"] == again["commit"] and run is not again))
    guide = " ".join((ROOT / "docs" / "guide" / "legged.md").read_text().split())
    assert f"one run beside the previous commit's {control['solo12_feet']:.1f} s" in guide
    assert (f"an older commit that had taken {first['solo12_feet']:.1f} s took "
            f"{wall(again)['solo12_feet']:.1f} s") in guide
    assert f"(the previous commit, built the same hour: {control['talos_feet']:.1f} s" in guide
