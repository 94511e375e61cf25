"""The README's speed table and docs/benchmarks.md are the committed output of the
benchmark commands they name: both are rendered from docs/benchmarks.json, which
`python benchmarks/run.py --robot panda|ur5|talos` writes (and
`python benchmarks/report.py` re-renders)."""
from __future__ import annotations

from tests.support import ROOT, benchmark_report

FIX = "run the benchmark (python benchmarks/run.py --robot NAME) or `python benchmarks/report.py`"


report = benchmark_report()
REPORTS = report.load(ROOT / "docs" / "benchmarks.json")


def test_every_robot_is_the_output_of_its_named_command():
    assert list(REPORTS) == ["panda", "ur5", "talos"]
    for name, rep in REPORTS.items():
        # the default settings (no quick-check flags): what the README and the page name
        assert rep.command == f"python benchmarks/run.py --robot {name}", rep.command
        assert rep.rounds >= 51 and rep.n >= 1000
        assert {"soagen", "soagen_libm", "pinocchio"} <= set(rep.backends), rep.backends
        headline = {r.function: r for r in rep.rows}
        assert headline["inverse_dynamics"].pinocchio[0].name == "rnea"


def test_readme_speed_table_is_rendered_from_the_committed_json():
    readme = (ROOT / "README.md").read_text()
    assert report.BEGIN in readme and report.END in readme
    assert report.readme_block(readme) == report.readme_speed(REPORTS), FIX


def test_benchmark_page_is_rendered_from_the_committed_json():
    assert (ROOT / "docs" / "benchmarks.md").read_text() == report.markdown_page(REPORTS), FIX
