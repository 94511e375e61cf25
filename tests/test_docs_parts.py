"""docs/parts.md is ``python benchmarks/parts.py --markdown docs/parts.md``'s output for today's programs
(the statement count of solo12's contact derivatives, recorded now, equals the page's), and the guide's
figures of whole and cut functions are the page's."""
from __future__ import annotations

import re

from tests.support import ROOT, benchmark_script

PAGE = ROOT / "docs" / "parts.md"


def _rows():
    """{(section, function, part size): row} of docs/parts.md's tables."""
    rows, section = {}, None
    for line in PAGE.read_text().splitlines():
        if line.startswith("## "):
            section = line[3:].split()[0]
        elif line.startswith("| ") and not line.startswith("| function"):
            f, statements, size, parts, compile_s, peak, ns, ratio = [c.strip() for c in line.strip("|").split("|")]
            rows[section, f, size] = dict(statements=int(statements), compile_s=compile_s, ratio=ratio)
    return rows


def _guide(name):
    return " ".join((ROOT / "docs" / "guide" / name).read_text().split())


def test_guide_quotes_the_page():
    rows = _rows()
    solo = "solo12_feet", "contact_dynamics_derivatives"
    cut, whole = rows[(*solo, "1000")], rows[(*solo, "whole")]
    assert (f"solo12's contact derivatives: cut into parts of 1000 statements, they ran {cut['ratio']}× "
            f"as long as whole, which took {whole['compile_s']} s of gcc") in _guide("legged.md")
    fd = rows["talos_reduced", "forward_dynamics_derivatives", "1000"]
    statements = f"{fd['statements']:,}".replace(",", " ")
    assert re.search(rf"its program \({statements} statements\) is compiled whole, .* cut into parts of 1000 "
                     rf"statements, it ran {fd['ratio']}× as long as whole \(\[parts.md\]",
                     _guide("derivatives-and-mpc.md"))


def test_page_is_of_todays_programs():
    bench = benchmark_script("parts")
    from soagen import codegen
    from soagen.options import Options

    make, functions = bench.CASES["solo12_feet"]
    programs, _ = codegen.programs(make(), Options(functions=functions))
    rows = _rows()
    for p in programs:
        if not p.calls:
            assert p.ops["statements"] == rows["solo12_feet", p.name, "whole"]["statements"], p.name
    assert PAGE.read_text().startswith("# Long functions cut into parts\n\nWritten by `python benchmarks/parts.py "
                                       "--markdown docs/parts.md`")
