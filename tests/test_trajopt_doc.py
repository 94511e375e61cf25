"""docs/trajopt.md is the rendering of docs/trajopt.json, which `python benchmarks/trajopt.py` writes
(in casadi_kin_dyn.py's venv, which the suite does not need), its goal lines are computed from the
record, and the guide quotes its numbers. No timing is asserted."""
from __future__ import annotations

import json

from soagen.targets.c99.compile import COMPILE_ARGS
from tests.support import ROOT, benchmark_script

PANDA_ROUTES = {"soagen", "soagen_exact", "soagen_fd", "casadi_vm", "casadi_compiled", "casadi_compiled_step",
                "casadi_vm_exact"}


def _benchmark():
    """``benchmarks/trajopt.py`` as a module (the standard library only at import)."""
    return benchmark_script("trajopt")


def _data():
    return json.loads((ROOT / "docs" / "trajopt.json").read_text())


def _guide(name):
    return " ".join((ROOT / "docs" / "guide" / name).read_text().split())


def test_page_is_rendered_from_the_committed_json():
    bench, data = _benchmark(), _data()
    assert data["command"] == bench.COMMAND == "python benchmarks/trajopt.py"
    assert (ROOT / "docs" / "trajopt.md").read_text() == bench.render(data), "python benchmarks/trajopt.py --render"


def test_goals_are_computed_from_the_routes():
    """Both goals are the routes' medians and optima as recorded (a typed number or verdict fails), and the
    CasADi routes were compiled with soagen's own flags."""
    bench, data = _benchmark(), _data()
    assert data["goal"] == bench.goal(data["panda"])
    assert data["wall_goal"] == bench.wall_goal(data["panda"])
    assert data["wall_goal"]["target"] == 0.25
    assert data["cc"][1:] == [*COMPILE_ARGS, "-shared", "-fPIC"]
    for start, rep in (("guess", data["panda"]), ("warm", data["panda"]["warm"])):
        g, walls = data["wall_goal"][start], {k: r["wall"]["median"] for k, r in rep["routes"].items()}
        assert walls[g["soagen"]] == min(walls[k] for k in bench.SOAGEN_ROUTES)
        assert walls[g["casadi"]] == min(w for k, w in walls.items() if k not in bench.SOAGEN_ROUTES)


def test_guide_quotes_the_committed_numbers():
    bench, data = _benchmark(), _data()
    guide = _guide("casadi.md")
    assert bench.headline(data) in guide, "paste benchmarks/trajopt.py's headline(data)"
    for page in ("casadi.md", "derivatives-and-mpc.md"):
        assert bench.exact_pays(data) in _guide(page), f"paste benchmarks/trajopt.py's exact_pays(data) in {page}"
    routes = data["panda"]["routes"]
    counterpart = data["goal"]["counterparts"]["soagen_fd"]
    for quoted in (f"the same evaluations take {routes['casadi_vm']['g_jac_g']['median']:.2f} s",
                   f"around soagen's forward_dynamics, {routes['soagen_fd']['g_jac_g']['median']:.2f} s "
                   f"against {routes['casadi_compiled']['g_jac_g']['median']:.2f} s ({counterpart['ratio']:.2f}x)",
                   f"with the step in C take {routes['soagen']['g_jac_g']['median']:.2f} s"):
        assert quoted in guide, quoted


def test_every_route_converged_and_was_compared():
    """soagen's routes of both problems (solo12 with both Hessians) converged to IPOPT's tol, not to its
    "acceptable" level, in every repeat, from both of the Panda's starts (CasADi's solved, the page gives
    their statuses), and each optimum was compared."""
    data = _data()
    panda, solo = data["panda"], data["solo12"]
    assert set(panda["routes"]) == set(panda["warm"]["routes"]) == PANDA_ROUTES
    assert set(solo["routes"]) == {"soagen", "soagen_exact"}
    assert {r["hessian"] for r in solo["routes"].values()} == {"limited-memory", "exact"}
    for rep in (panda, panda["warm"], solo):
        assert set(rep["optimum"]) == set(rep["minima"]) == set(rep["routes"])
        for name, route in rep["routes"].items():
            assert route["repeats"] == data["repeats"] == 3, name
            converged = ["Solve_Succeeded"] if name.startswith("soagen") else ["Solve_Succeeded",
                                                                                "Solved_To_Acceptable_Level"]
            assert set(route["status"]) <= set(converged), (name, route["status"])
    # both Hessians, one optimum: reached by both, or, where they stopped apart, the exact route started at the
    # limited-memory one's solution stays there (one flat optimum, which IPOPT's stopping test leaves loose)
    bench, crossed = _benchmark(), solo["crossed"]["soagen_exact"]
    assert crossed["start"] == "soagen" and crossed["status"] == "Solve_Succeeded"
    assert crossed["stays"] == (crossed["moved"] <= bench.TRAJECTORY_ATOL
                                and crossed["objective_rel"] <= bench.OBJECTIVE_RTOL)
    assert solo["minima"] == {"soagen": 0, "soagen_exact": 0} or crossed["stays"]
    # from the example's guess the limited-memory routes that converged to tol reach one optimum; from the
    # common start every route reaches the same one
    limited = [name for name, r in panda["routes"].items()
               if r["hessian"] == "limited-memory" and r["status"] == ["Solve_Succeeded"]]
    assert "soagen" in limited and all(panda["optimum"][name]["same"] for name in limited)
    assert set(panda["warm"]["minima"].values()) == {0}
    assert all(c["same"] for c in panda["warm"]["optimum"].values())


def test_routes_are_grouped_by_the_optimum_they_reached():
    """``minima``: one number per optimum (objective 1e-6 relative and trajectories 1e-4), the first route's 0;
    a route off by more than either tolerance is another optimum."""
    import numpy as np

    bench = _benchmark()
    x = np.linspace(-1.0, 1.0, 7)
    xs = {"a": x, "b": x + 5e-5, "c": x + 3e-4, "d": x, "e": x - 5e-5}
    objective = {"a": 29.5, "b": 29.5 * (1 + 5e-7), "c": 29.5, "d": 29.5 * (1 + 3e-6), "e": 29.5}
    assert bench.minima(xs, objective) == {"a": 0, "b": 0, "c": 1, "d": 2, "e": 0}
