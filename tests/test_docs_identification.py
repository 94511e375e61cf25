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
NAMES = {"puma560": "PUMA 560", "panda": "Panda", "ur5": "UR5", "rx90": "RX-90", "general6": "general arm"}


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


PARAMETER_ROW = re.compile(r"^\| (\w+) \| ([^|]+) \| ([\d /]+) \| ([\d /]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", re.M)


def guide_block(page):
    """The guide's table of docs/parameter_opcounts.md's rows (baked, π input, the two peers)."""
    return ("| robot | quantity | soagen, π baked | soagen, π input | SymPyBotics | OpenSYMORO |\n"
            "|---|---|---:|---:|---:|---:|\n"
            + "".join(f"| {NAMES[r]} | {q} | {b} | {i} | {spb} | {sym} |\n"
                      for r, q, b, i, _, spb, sym in PARAMETER_ROW.findall(page)))


def test_parameter_opcount_page_is_fresh_and_quoted():
    """docs/parameter_opcounts.md is soagen's counts now beside the peers' measured ones
    (docs/peer_opcounts.json), which agree with soagen's own in that JSON; the guide quotes it."""
    import json

    measured = json.loads((DOCS / "peer_opcounts.json").read_text())
    counts = opcount.parameter_counts()
    page = (DOCS / "parameter_opcounts.md").read_text()
    assert page == opcount.parameters_markdown(counts, measured), \
        "stale: run `soagen opcount --peers docs/parameter_opcounts.md`"
    for robot, _, fn in opcount.PARAMETER_ROWS:          # the peers' page holds soagen's counts of now
        for mode, label in (("inputs", "soagen, π input"), ("baked", "soagen, baked")):
            stored = measured["counts"][robot][label][fn]
            assert {k: stored[k] for k in ("mul", "add", "div")} == {k: counts[robot][mode][fn][k]
                                                                     for k in ("mul", "add", "div")}, (robot, fn)
    rows = PARAMETER_ROW.findall(page)
    assert len(rows) == len(opcount.PARAMETER_ROWS) == 7
    assert _block("parameter-opcounts") == guide_block(page)
    actuated = {r: a for r, q, _, _, a, _, _ in rows if q == "inverse dynamics"}
    prose = " ".join(PAGE.split())                     # "... is 340 / 338 (+6 div, 6 sqrt for the smooth ..."
    assert f"soagen's PUMA inverse dynamics is {actuated['puma560'].strip()[:-1]} for the" in prose
    assert f"the RX-90's {actuated['rx90'].split(' (')[0].strip()}." in prose
    for robot in ("rx90", "general6"):                  # "the baked ... costs more multiplications"
        assert counts[robot]["baked"]["inverse_dynamics"]["mul"] > counts[robot]["inputs"]["inverse_dynamics"]["mul"]
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


def test_cli_peers_needs_the_measured_json(tmp_path):
    """``soagen opcount --peers FILE`` takes the peers' counts from peer_opcounts.json beside FILE and
    says so in one line when it is missing (it never falls back to quoted figures)."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "soagen.cli", "opcount", "--peers", str(tmp_path / "p.md")],
                         capture_output=True, text=True)
    assert res.returncode != 0 and "peer_opcounts.json" in res.stderr and "benchmarks/peer_opcounts.py" in res.stderr
    assert not (tmp_path / "p.md").exists()
