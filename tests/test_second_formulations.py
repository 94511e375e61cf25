"""docs/second_formulations.md (issue #57 item 1: the formulations of the second derivatives compared by
operation count) is the rendering of docs/second_formulations.json, which
`python benchmarks/second_formulations.py` writes; a sample is recorded again here, live."""
from __future__ import annotations

import json

import pytest

from soagen import codegen
from tests.support import ROOT, benchmark_script


def _bench():
    return benchmark_script("second_formulations")


def _data():
    return json.loads((ROOT / "docs" / "second_formulations.json").read_text())


def test_page_is_rendered_from_the_committed_json():
    bench, data = _bench(), _data()
    assert data["command"] == bench.COMMAND == "python benchmarks/second_formulations.py"
    assert (ROOT / "docs" / "second_formulations.md").read_text() == bench.render(data), \
        "python benchmarks/second_formulations.py --render"


def test_every_candidate_was_counted_and_checked_on_both_robots():
    """A row per candidate that applies, each program's outputs checked against the numpy reference
    (error far below the outputs' size, so a program computing something else would not be counted)."""
    bench, data = _bench(), _data()
    robots = bench.robots()
    assert set(data["robots"]) == {"panda", "solo12"}
    for name, rows in data["robots"].items():
        labels = [c[2] for c in bench.CANDIDATES if bench.applies(robots[name], c[3])]
        assert [r["label"] for r in rows] == labels, name
        assert all(r["error"] is not None and r["error"] < 1e-10 for r in rows), name
        assert all(r["ops"] > 1000 for r in rows), name


def test_the_chosen_formulation_is_the_cheapest_and_is_what_build_emits():
    """Per quantity, the chosen row has the fewest operations (ties allowed), and its count is that of the
    catalogue function's program as `soagen.build` records it (recorded here, live, on the Panda)."""
    bench, data = _bench(), _data()
    for name, rows in data["robots"].items():
        for quantity in {r["quantity"] for r in rows if r["chosen"]}:
            group = [r for r in rows if r["quantity"] == quantity]
            chosen = [r for r in group if r["chosen"]]
            assert len(chosen) == 1 and chosen[0]["ops"] == min(r["ops"] for r in group), (name, quantity)
    robot = bench.robots()["panda"]
    for row in (r for r in data["robots"]["panda"] if r["chosen"]):
        ops = codegen.make_program(robot, row["function"]).ops
        assert ops["mul"] + ops["add"] + ops["div"] + ops["sqrt"] == row["ops"], row["function"]


@pytest.mark.parametrize("label_start", ["forward mode over the analytical first derivatives (", "Σ λ_i of the chosen"])
def test_a_candidate_counts_again_as_stored(label_start):
    """Two of the Panda's alternatives recorded and checked again, live: the same count, outputs = reference."""
    bench, data = _bench(), _data()
    robot = bench.robots()["panda"]
    (quantity, function, label, maker, _), = [c for c in bench.CANDIDATES if c[2].startswith(label_start)]
    row, = [r for r in data["robots"]["panda"] if r["label"] == label]
    again = bench.count(robot, function, maker)
    assert again["ops"] == row["ops"] and again["error"] < 1e-10
