#!/usr/bin/env python3
"""Operation counts of CasADi-generated C for the PUMA 560, and docs/opcounts.md.

    python benchmarks/casadi_opcounts.py            # run casadi_kin_dyn, count, write the page
    python benchmarks/casadi_opcounts.py --table    # rewrite the page from the stored counts

The PUMA 560 of ``soagen.robots`` is written as URDF (``soagen.urdf.to_urdf``),
handed to ``benchmarks/casadi_kin_dyn.py`` (Pinocchio 2.6 on casadi::SX, in its
own venv), and the arithmetic of each generated C function is counted with
soagen's own C counter (``soagen.opcount.count_line``) statement by statement.
The counts are stored in ``docs/casadi_opcounts.json``; the page combines them
with ``generated/puma560/opcounts.json``.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from soagen import opcount, robots
from soagen.urdf import to_urdf

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "docs" / "casadi_opcounts.json"
PAGE = ROOT / "docs" / "opcounts.md"


def count_casadi_c(path):
    """Arithmetic of the body of CasADi's ``casadi_f0`` (one operation per statement)."""
    body = re.search(r"static int casadi_f0\(.*?\{\n(.*?)\n\}", Path(path).read_text(), re.S).group(1)
    total = dict.fromkeys(opcount.OP_KINDS, 0)
    for line in body.splitlines():
        line = line.strip()
        if re.match(r"a\d+=", line):
            for k, v in opcount.count_line(line.split("=", 1)[1]).items():
                total[k] += v
    return total


def measure():
    with tempfile.TemporaryDirectory() as tmp:
        urdf = Path(tmp) / "puma560.urdf"
        urdf.write_text(to_urdf(robots.example("puma560")))
        out = Path(tmp) / "casadi"
        out.mkdir()
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "casadi_kin_dyn.py"), "--urdf", str(urdf),
                        "--out", str(out)], check=True)
        manifest = json.loads((out / "manifest.json").read_text())
        funcs = {name: count_casadi_c(out / f"{name}.c") for name in ("rnea", "crba", "aba", "gravity", "bias")}
    return {"robot": "puma560",
            "tool": f"cmeel-casadi-kin-dyn {manifest['casadi_kin_dyn_version']} (Pinocchio "
                    f"{manifest['pinocchio_version']} on casadi::SX), CasADi {manifest['casadi_version']} "
                    f"code generator",
            "method": "rnea, crba (full M), aba as the package builds them; gravity = rnea(q, 0, 0) and "
                      "bias = rnea(q, v, 0) from rnea's SX graph with the zeros folded. Counted in the C text "
                      "with soagen.opcount.count_line. CasADi multiplies by the 2.2e-16 that cos(π/2) leaves "
                      "in Pinocchio's joint placements (soagen snaps it to 0), a few operations.",
            "functions": funcs}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", action="store_true", help="only rewrite the page from the stored counts")
    args = parser.parse_args(argv)
    if not args.table:
        STORED.write_text(json.dumps(measure(), indent=1, sort_keys=True) + "\n")
    casadi = json.loads(STORED.read_text())
    ours = json.loads((ROOT / "generated" / "puma560" / "opcounts.json").read_text())["functions"]
    PAGE.write_text(opcount.literature_markdown(ours, casadi))
    print(PAGE.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
