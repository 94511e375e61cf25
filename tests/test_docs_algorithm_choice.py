"""The algorithm-choice figures of docs/guide/functions.md are rows of docs/benchmarks.md (the Panda's
section, ``python benchmarks/run.py --robot panda``): ns per call and operation counts."""
from __future__ import annotations

import re

from tests.support import ROOT


def panda_rows():
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    section = text.split("\n## panda ", 1)[1].split("\n## ", 1)[0]      # the Panda's section
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 2 and re.fullmatch(r"[a-z_0-9]+", cells[0]) and cells[0] not in rows:
            rows[cells[0]] = cells        # its first table naming a function: the speed table
    return rows


def test_choice_figures_are_benchmark_rows():
    guide = " ".join((ROOT / "docs" / "guide" / "functions.md").read_text().split())
    m = re.search(r"FD3 (\d+) ns, CRBA (\d+); its derivatives: the M solve `via_id`, (\d+) operations and (\d+) ns, "
                  r"against ([\d ]+) and (\d+) ns for differentiating FD4", guide)
    assert m, "the algorithm-choice sentence is gone"
    fd3, crba, via_ops, via_ns, fd4_ops, fd4_ns = m.groups()
    rows = panda_rows()
    assert rows["forward_dynamics_fd3"][1] == fd3 and rows["forward_dynamics_crba"][1] == crba
    assert rows["forward_dynamics_derivatives_via_id"][1] == via_ns
    assert rows["forward_dynamics_derivatives_fd4"][1] == fd4_ns
    section = (ROOT / "docs" / "benchmarks.md").read_text().split("\n## panda ", 1)[1].split("\n## ", 1)[0]
    assert f"| forward_dynamics_derivatives_via_id | {via_ops} |" in section
    assert f"| forward_dynamics_derivatives_fd4 | {fd4_ops.replace(' ', '')} |" in section


def test_family_pick_figures_are_benchmark_rows():
    """The derivatives family's pick in the same sentence: its operations and ns per call."""
    guide = " ".join((ROOT / "docs" / "guide" / "functions.md").read_text().split())
    m = re.search(r"`via_analytic_id`, the family's pick, (\d+) operations and (\d+) ns", guide)
    assert m, "the family-pick sentence is gone"
    ops, ns = m.groups()
    assert panda_rows()["forward_dynamics_derivatives_via_analytic_id"][1] == ns
    section = (ROOT / "docs" / "benchmarks.md").read_text().split("\n## panda ", 1)[1].split("\n## ", 1)[0]
    assert f"| forward_dynamics_derivatives_via_analytic_id | {ops} |" in section
