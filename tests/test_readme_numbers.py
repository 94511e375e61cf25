"""The guide's speed table (docs/guide/speed.md), the README's speed lines and
docs/benchmarks.md are the committed output of the benchmark commands they name: all are
rendered from docs/benchmarks.json, which `python benchmarks/run.py --robot panda|ur5|talos`
writes (and `python benchmarks/report.py` re-renders)."""
from __future__ import annotations

from soagen import functions as F
from tests.support import ROOT, benchmark_report

FIX = "run the benchmark (python benchmarks/run.py --robot NAME) or `python benchmarks/report.py`"


report = benchmark_report()
REPORTS = report.load(ROOT / "docs" / "benchmarks.json")


# the robots timed on soagen's default functions, on the derivatives only, and on the contact and centroidal
# rows only
DYNAMICS_ROBOTS, DERIVATIVE_ROBOTS, CONTACT_ROBOTS = ["panda", "ur5", "talos"], ["talos_derivatives"], \
    ["solo12", "talos_feet"]
SECOND_ROBOTS = ["panda_second", "solo12_second", "talos_second"]      # the ∂²ID tensors (issue #57)
# the sections whose default run has fewer states (benchmarks/specs.py, Spec.states): the TALOS's tensors are
# 1.75 MB a state, each state's kept for the checks; solo12's contact Hessian is checked against its numpy
# reference on every state (~1.7 s a state)
FEWER_STATES = {"talos_second": 100, "solo12_second": 100}


def test_every_robot_is_the_output_of_its_named_command():
    assert list(REPORTS)[:3] == DYNAMICS_ROBOTS
    assert set(REPORTS) <= {*DYNAMICS_ROBOTS, *DERIVATIVE_ROBOTS, *CONTACT_ROBOTS, *SECOND_ROBOTS}
    assert set(SECOND_ROBOTS) == set(report.SECOND_SECTIONS)
    for name, rep in REPORTS.items():
        # the default settings (no quick-check flags): what the README and the page name
        assert rep.command == f"python benchmarks/run.py --robot {name}", rep.command
        assert rep.rounds >= 51 and rep.n >= FEWER_STATES.get(name, 1000)
        assert {"soagen", "soagen_libm", "pinocchio"} <= set(rep.backends), rep.backends
        headline = {r.function: r for r in rep.rows}
        if name in DYNAMICS_ROBOTS:
            assert headline["inverse_dynamics"].pinocchio[0].name == "rnea"
        elif name in SECOND_ROBOTS:
            assert headline["inverse_dynamics_second_derivatives"].pinocchio[0].name == \
                "ComputeRNEASecondOrderDerivatives"
        elif name in DERIVATIVE_ROBOTS:
            assert headline["inverse_dynamics_derivatives"].pinocchio[0].name == "computeRNEADerivatives"
            assert headline["forward_dynamics_derivatives"].pinocchio[0].name == "computeABADerivatives"
        else:
            assert headline["contact_dynamics"].pinocchio[0].name == "constraintDynamics"
            assert headline["centroidal_momentum_matrix"].pinocchio[0].name in ("ccrba", "computeCentroidalMap")


def test_readme_speed_table_is_rendered_from_the_committed_json():
    page = (ROOT / "docs" / "guide" / "speed.md").read_text()
    assert report.BEGIN in page and report.END in page
    assert report.readme_block(page) == report.readme_speed(REPORTS), FIX


# the README's one speed line per robot: (column, soagen function), robot label
README_COLUMNS = (("inverse dynamics", "inverse_dynamics"), ("M", "mass_matrix"), ("M⁻¹", "mass_matrix_inverse"),
                  ("forward dynamics", "forward_dynamics"), ("Λ(0)", "os_inertia"))
README_ROBOTS = {"panda": "Panda (7 joints)", "ur5": "UR5 (6 joints)",
                 "talos": "TALOS (32 actuated joints, 38 velocity coordinates with the floating base (6 + 32))"}


def test_readme_speed_lines_are_the_committed_json():
    """Each robot's line of the README's short speed table: soagen's ns and the ratio to
    Pinocchio (its first, fastest route) of docs/benchmarks.json, as docs/benchmarks.md prints them,
    with soagen's inline sin/cos and with libm's (as Pinocchio computes them)."""
    readme = (ROOT / "README.md").read_text()
    header = "| robot | " + " | ".join(c for c, _ in README_COLUMNS) + " |"
    assert header in readme, header
    for name, label in README_ROBOTS.items():
        rows = {r.function: r for r in REPORTS[name].rows}
        cells = []
        for _, fn in README_COLUMNS:
            row = rows[fn]
            p = row.pinocchio[0]
            cells.append(f"{report.fmt_ns(row.soagen_ns)} ns ({p.ratio.median:.2f}×; libm {p.ratio_libm.median:.2f}×)")
            # the same figures as the page's table
            assert report.fmt_spread(row.pinocchio[0].ratio).startswith(f"{row.pinocchio[0].ratio.median:.2f} ")
        line = f"| {label} | " + " | ".join(cells) + " |"
        assert line in readme, f"README speed line should be: {line}"


def test_benchmark_page_is_rendered_from_the_committed_json():
    assert (ROOT / "docs" / "benchmarks.md").read_text() == report.markdown_page(REPORTS), FIX


# the README's contact table: (column, soagen function), robot label; a function a robot's run left out is "—"
README_CONTACT_COLUMNS = (("contact dynamics", "contact_dynamics"), ("A_G", "centroidal_momentum_matrix"),
                          ("contact dynamics derivatives", "contact_dynamics_derivatives"),
                          ("centroidal derivatives", "centroidal_dynamics_derivatives"))
README_CONTACT_ROBOTS = {"solo12": "Solo-12 (4 point feet, 18 velocity coordinates)",
                         "talos_feet": "TALOS (2 flat feet, 38 velocity coordinates)"}


def test_readme_contact_lines_are_the_committed_json():
    """The README's contact table: soagen's ns and the ratio to Pinocchio's fastest route of
    docs/benchmarks.json (solo12, talos_feet), as for the speed lines above."""
    readme = (ROOT / "README.md").read_text()
    header = "| robot | " + " | ".join(c for c, _ in README_CONTACT_COLUMNS) + " |"
    assert header in readme, header
    for name, label in README_CONTACT_ROBOTS.items():
        rows = {r.function: r for r in REPORTS[name].rows}
        cells = [f"{report.fmt_ns(rows[fn].soagen_ns)} ns ({rows[fn].pinocchio[0].ratio.median:.2f}×)"
                 if fn in rows else "—" for _, fn in README_CONTACT_COLUMNS]
        line = f"| {label} | " + " | ".join(cells) + " |"
        assert line in readme, f"README contact line should be: {line}"


def test_from_python_table_is_the_committed_output():
    """The README's "from Python" table and docs/python_calls.md are rendered from docs/python_calls.json,
    which `python benchmarks/python_calls.py --robot NAME` writes with its default settings; each robot's
    times were checked against Pinocchio and every function the table shows was timed."""
    calls = report.load_python_calls()
    assert set(calls) == set(report.PYTHON_CALL_ROBOTS)
    for name, rep in calls.items():
        assert rep["command"] == f"python benchmarks/python_calls.py --robot {name}", rep["command"]
        assert rep["rounds"] >= 15 and rep["states"] >= 64
        assert {f for _, f in report.PYTHON_CALL_COLUMNS} <= set(rep["functions"])
    # every method but those of point tips only (the Panda's tip is a 6-D tip)
    every = {s.name for s in F.CATALOGUE if (s.family is None or s.is_family_function) and not s.point_tips}
    assert set(calls["panda"]["functions"]) == every, "the Panda's section times every method of the catalogue"
    for name, rep in calls.items():
        for fn, row in rep["functions"].items():
            assert row["method_ns"] > 0, fn
            if row["pinocchio"] is not None or fn in {f for _, f in report.PYTHON_CALL_COLUMNS}:
                assert row["pinocchio_ns"] > 0 and row["ratio"]["q1"] <= row["ratio"]["median"], fn
    readme = (ROOT / "README.md").read_text()
    assert report.python_calls_table(calls) in readme, "python benchmarks/report.py, then paste the table"
    assert (ROOT / "docs" / "python_calls.md").read_text() == report.python_calls_page(calls), \
        "python benchmarks/python_calls.py --robot NAME"
