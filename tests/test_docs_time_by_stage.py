"""docs/time_by_stage.md (`python benchmarks/time_by_stage.py ROBOT FUNCTION`) accounts for the whole function:
its stages' operations add up to the function's operations in docs/benchmarks.md, an output of
another command (`python benchmarks/run.py`), and its shares add up to the samples it says fell in
the function."""
from __future__ import annotations

import re

from tests.support import ROOT
from tests.test_readme_prose_numbers import _bench


def _sections():
    """[(robot, function, stated % in the function, [(share, statements, operations)])]."""
    out = []
    for part in re.split(r"^## ", (ROOT / "docs" / "time_by_stage.md").read_text(), flags=re.M)[1:]:
        robot, function = part.splitlines()[0].split(": ")
        stated = float(re.search(r"([\d.]+)% of the samples fall in the function", part).group(1))
        rows = [[c.strip() for c in line.strip("|").split("|")] for line in part.splitlines()
                if line.startswith("| ") and not line.startswith("| stage")]
        out.append((robot, function, stated, [(float(r[2]), int(r[3]), int(r[4])) for r in rows]))
    return out


def test_the_stages_add_up_to_the_benchmarked_function():
    sections = _sections()
    assert {(r, f) for r, f, _, _ in sections} >= {("talos_derivatives", "forward_dynamics_derivatives"),
                                                   ("talos_feet", "contact_dynamics_derivatives")}
    for robot, function, stated, rows in sections:
        assert len(rows) >= 5, (robot, function)
        _, ops, _ = _bench(robot)
        assert sum(o for _, _, o in rows) == int(ops[function]), (robot, function)
        assert abs(sum(s for s, _, _ in rows) - stated) < 0.05 * len(rows) + 0.1, (robot, function)   # rounding
        assert max(s for s, _, _ in rows) < stated    # no stage holds every sample
