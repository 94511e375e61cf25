"""docs/trajopt.md is the rendering of docs/trajopt.json, which `python benchmarks/trajopt.py` writes
(in casadi_kin_dyn.py's venv, which the suite does not need), and the CasADi guide quotes its
headline numbers. No timing is asserted."""
from __future__ import annotations

import json

from tests.support import ROOT, benchmark_script


def _benchmark():
    """``benchmarks/trajopt.py`` as a module (the standard library only at import)."""
    return benchmark_script("trajopt")


def _data():
    return json.loads((ROOT / "docs" / "trajopt.json").read_text())


def test_page_is_rendered_from_the_committed_json():
    bench, data = _benchmark(), _data()
    assert data["command"] == bench.COMMAND == "python benchmarks/trajopt.py"
    assert (ROOT / "docs" / "trajopt.md").read_text() == bench.render(data), "python benchmarks/trajopt.py --render"


def test_guide_quotes_the_committed_numbers():
    bench, data = _benchmark(), _data()
    guide = (ROOT / "docs" / "guide" / "casadi.md").read_text()
    assert bench.headline(data) in " ".join(guide.split()), "paste benchmarks/trajopt.py's headline(data)"
    assert data["goal"] == bench.goal(data["panda"])              # the ratio is the routes' medians
    routes = data["panda"]["routes"]
    for quoted in (f"the same evaluations take {routes['casadi_vm']['g_jac_g']['median']:.2f} s",
                   f"builds from an empty cache in {routes['soagen']['setup']['build_cold']:.2f} s",
                   f"needs {routes['casadi_compiled']['setup']['compile']:.2f} s of gcc"):
        assert quoted in " ".join(guide.split()), quoted


def test_every_route_solved_and_was_compared():
    data = _data()
    panda = data["panda"]
    assert set(panda["routes"]) == {"soagen", "casadi_vm", "casadi_compiled", "casadi_vm_exact"}
    assert set(panda["optimum"]) == set(panda["routes"])
    for rep in (panda, data["solo12"]):
        for name, route in rep["routes"].items():
            assert route["repeats"] == data["repeats"] == 3, name
            assert all(s in ("Solve_Succeeded", "Solved_To_Acceptable_Level") for s in route["status"]), name
