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
    counterpart = data["goal"]["counterparts"]["soagen_fd"]
    for quoted in (f"the same evaluations take {routes['casadi_vm']['g_jac_g']['median']:.2f} s",
                   f"around soagen's forward_dynamics, {routes['soagen_fd']['g_jac_g']['median']:.2f} s "
                   f"against {routes['casadi_compiled']['g_jac_g']['median']:.2f} s ({counterpart['ratio']:.2f}x)",
                   f"with the step in C take {routes['soagen']['g_jac_g']['median']:.2f} s"):
        assert quoted in " ".join(guide.split()), quoted


def test_every_route_solved_and_was_compared():
    data = _data()
    panda = data["panda"]
    assert set(panda["routes"]) == {"soagen", "soagen_fd", "casadi_vm", "casadi_compiled", "casadi_compiled_step",
                                    "casadi_vm_exact"}
    assert set(panda["optimum"]) == set(panda["routes"])
    for rep in (panda, data["solo12"]):
        for name, route in rep["routes"].items():
            assert route["repeats"] == data["repeats"] == 3, name
            assert all(s in ("Solve_Succeeded", "Solved_To_Acceptable_Level") for s in route["status"]), name
    # the limited-memory routes reach one optimum (objective 1e-6 relative, trajectories 1e-4); the exact
    # Hessian's route stops at another local minimum, which the page reports as such
    limited = [name for name, r in panda["routes"].items() if r["hessian"] == "limited-memory"]
    assert all(panda["optimum"][name]["same"] for name in limited)
    assert not panda["optimum"]["casadi_vm_exact"]["same"]
