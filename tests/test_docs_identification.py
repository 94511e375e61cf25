"""The committed identification pages (docs/base_parameters.md,
docs/parameter_opcounts.md) are what the code produces now, and the guide
(docs/guide/identification.md) quotes them."""
from __future__ import annotations

import re

from soagen.reports import opcount

from soagen.model import robots
from soagen.reports.parameters import report
from tests.support import ROOT

DOCS = ROOT / "docs"
PAGE = (DOCS / "guide" / "identification.md").read_text()
NAMES = {"puma560": "PUMA 560", "panda": "Panda", "ur5": "UR5", "rx90": "RX-90"}


def _block(name):
    return PAGE.split(f"<!-- {name}:begin -->\n", 1)[1].split(f"<!-- {name}:end -->", 1)[0]


def test_base_parameter_page_is_fresh_and_quoted():
    page = (DOCS / "base_parameters.md").read_text()
    assert page == report([robots.example(n) for n in robots.EXAMPLES]), \
        "stale: run `soagen parameters --all --markdown docs/base_parameters.md`"
    rows = re.findall(r"^\| (\w+) \| \d+ \| (\d+) \| (\d+) \|", page, re.M)
    assert len(rows) == 3
    gaps = re.findall(r"\| ([\d.e+-]+) / ([^|]+) \|", page)
    assert len(gaps) == 3 and min(float(k) for k, _ in gaps) > 3e-2 and {d for _, d in gaps} == {"< 1e-15"}
    assert "the kept pivots are above\n3e-2 |R_00| and the dropped ones below 1e-15 |R_00|" in PAGE
    expected = "| robot | p | b |\n|---|---:|---:|\n" + "".join(f"| {NAMES[r]} | {p} | {b} |\n" for r, p, b in rows)
    assert _block("base-parameters") == expected


def test_parameter_opcount_page_is_fresh_and_quoted():
    page = (DOCS / "parameter_opcounts.md").read_text()
    assert page == opcount.parameters_markdown(opcount.parameter_counts()), \
        "stale: run `soagen opcount --peers docs/parameter_opcounts.md`"
    rows = re.findall(r"^\| (\w+) \| ([^|]+) \| ([\d /]+) \| ([\d /]+) \| [^|]+ \| (\w+): ([\d /]+) \|$", page, re.M)
    assert len(rows) == 4
    expected = ("| robot | quantity | soagen, π baked | soagen, π input | peer, symbolic parameters |\n"
                "|---|---|---:|---:|---:|\n"
                + "".join(f"| {NAMES[r]} | {q} | {b} | {i} | {peer} {c} |\n" for r, q, b, i, peer, c in rows))
    assert _block("parameter-opcounts") == expected
    # the regressor counts the guide quotes
    panda = re.search(r"^\| panda \| ([\d /]+) \| ([\d /]+) \|", page, re.M)
    assert f"{panda.group(2)} mul / add instead of {panda.group(1)}" in PAGE


def _cli(*args):
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "soagen.cli", *args], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_cli_parameters_and_parameter_inputs():
    """``soagen parameters`` (with ``--urdf-friction``: the Panda's damping columns join),
    and ``--parameters inputs`` on opcount."""
    assert "| ur5 | 6 | 60 | 36 |" in _cli("parameters", "--example", "ur5")
    assert "| panda | 7 | 91 |" in _cli("parameters", "--example", "panda", "--urdf-friction")
    out = _cli("opcount", "--example", "puma560", "--parameters", "inputs", "--function", "gravity")
    assert re.search(r"^gravity +100 +66 ", out, re.M), out
