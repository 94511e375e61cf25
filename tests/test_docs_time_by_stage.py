"""docs/time_by_stage.md (`python benchmarks/time_by_stage.py ROBOT FUNCTION`) accounts for the whole function:
its stages' operations add up to the function's operations in docs/benchmarks.md, an output of
another command (`python benchmarks/run.py`), and its shares add up to the samples it says fell in
the function."""
from __future__ import annotations

import re
import sys

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
        assert stated <= 100.0, (robot, function)      # a share of the samples


def test_shares_come_from_sample_counts():
    """perf prints percentages rounded to 0.01 %: 4000 lines of one sample each out of 20 000 read
    as 0.01 % each would add up to 40 % where they hold 20 %; the shares are taken from the counts."""
    if str(ROOT / "benchmarks") not in sys.path:
        sys.path.insert(0, str(ROOT / "benchmarks"))
    from time_by_stage import shares_of

    rows = [f"     0.01%             1  r.c:{100 + k}" for k in range(4000)]
    rows += ["    60.00%         12000  r.c:7", "     5.00%          1000  r.c:7 (discriminator 2)",
             "    15.00%          3000  s_sin.c:142", "     0.00%             0  driver.c:9"]
    shares = shares_of("\n".join(rows))
    assert set(shares) == {7} | {100 + k for k in range(4000)}
    assert abs(shares[7] - 65.0) < 1e-12 and abs(shares[100] - 0.005) < 1e-12
    assert abs(sum(shares.values()) - 85.0) < 1e-9
