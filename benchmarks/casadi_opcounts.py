#!/usr/bin/env python3
"""Operation counts of CasADi-generated C for the PUMA 560, and docs/opcounts.md.

    python benchmarks/casadi_opcounts.py            # run casadi_kin_dyn, count, write the page
    python benchmarks/casadi_opcounts.py --table    # rewrite the page from the stored counts

The PUMA 560 of ``soagen.robots`` is written as URDF (``soagen.urdf.to_urdf``),
handed to ``benchmarks/casadi_kin_dyn.py`` (Pinocchio 2.6 on casadi::SX, in its
own venv, every function with CasADi's ``cse``), and the arithmetic of each
generated C function is counted with soagen's own C counter
(``soagen.reports.opcount.count_line``) statement by statement; the count must equal the
one of CasADi's own instruction list (else this script stops).
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

from soagen.reports import opcount

from soagen.model import robots
from soagen.model.urdf import to_urdf

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "docs" / "casadi_opcounts.json"
PAGE = ROOT / "docs" / "opcounts.md"


# CasADi's SX operations as soagen counts them (``casadi_sq(x)`` = x*x and ``2.*x`` are
# multiplications, a subtraction is an addition, 1/x a division); constants, inputs and outputs are no arithmetic
OPERATION_KINDS = {"OP_MUL": "mul", "OP_SQ": "mul", "OP_TWICE": "mul", "OP_ADD": "add", "OP_SUB": "add",
                   "OP_NEG": "neg", "OP_DIV": "div", "OP_INV": "div", "OP_SQRT": "sqrt", "OP_SIN": "trig",
                   "OP_COS": "trig"}
NOT_ARITHMETIC = {"OP_CONST", "OP_INPUT", "OP_OUTPUT", "OP_PARAMETER"}


def count_casadi_c(path):
    """Arithmetic of the body of CasADi's ``casadi_f0`` (one operation per statement),
    by ``soagen.reports.opcount.count_line``, the counter of soagen's own C."""
    body = re.search(r"static int casadi_f0\(.*?\{\n(.*?)\n\}", Path(path).read_text(), re.S).group(1)
    total = dict.fromkeys(opcount.OP_KINDS, 0)
    for line in body.splitlines():
        line = line.strip()
        if re.match(r"a\d+=", line):
            for k, v in opcount.count_line(line.split("=", 1)[1]).items():
                total[k] += v
    return total


def count_instructions(histogram, what):
    """soagen's operation kinds from CasADi's own {``OP_...``: count} of an SX Function."""
    total = dict.fromkeys(opcount.OP_KINDS, 0)
    for op, n in histogram.items():
        if op in OPERATION_KINDS:
            total[OPERATION_KINDS[op]] += n
        elif op not in NOT_ARITHMETIC:
            raise SystemExit(f"{what}: CasADi operation {op} ({n}x) has no operation kind here; count it")
    return total


def casadi_counts(robot, names=("rnea", "crba", "aba", "gravity", "bias")):
    """CasADi-on-Pinocchio's counts of ``robot`` (a soagen robot; every parameter numeric, as the URDF
    of ``soagen.urdf.to_urdf``): ``({name: counts}, {name: counts without cse}, casadi_kin_dyn's
    manifest)``, each function counted in its C text and checked equal to CasADi's instruction list."""
    with tempfile.TemporaryDirectory() as tmp:
        urdf = Path(tmp) / f"{robot.name}.urdf"
        urdf.write_text(to_urdf(robot))
        out = Path(tmp) / "casadi"
        out.mkdir()
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "casadi_kin_dyn.py"), "--urdf", str(urdf),
                        "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
        manifest = json.loads((out / "manifest.json").read_text())
        funcs, without_cse = {}, {}
        for name in names:
            funcs[name] = count_casadi_c(out / f"{name}.c")
            # the C text and CasADi's own instruction list must agree (nothing uncounted)
            expected = count_instructions(manifest[name]["instructions"], name)
            if funcs[name] != expected:
                raise SystemExit(f"{name}: counted in the C text {funcs[name]}, CasADi's instructions {expected}")
            without_cse[name] = count_instructions(manifest[name]["instructions_without_cse"], name)
    return funcs, without_cse, manifest


def tool_text(manifest):
    """The package versions of a casadi_kin_dyn run, in words."""
    return (f"cmeel-casadi-kin-dyn {manifest['casadi_kin_dyn_version']} (Pinocchio "
            f"{manifest['pinocchio_version']} on casadi::SX), CasADi {manifest['casadi_version']} code generator")


def measure():
    funcs, without_cse, manifest = casadi_counts(robots.example("puma560"))
    return {"robot": "puma560", "tool": tool_text(manifest),
            "method": "rnea, crba (full M), aba as the package builds them; gravity = rnea(q, 0, 0) and "
                      "bias = rnea(q, v, 0) from rnea's SX graph with the zeros folded; every function "
                      "rebuilt with CasADi's common-subexpression elimination (Function option `cse`) before "
                      "code generation. Counted in the C text with soagen.reports.opcount.count_line, as soagen's C "
                      "(`casadi_sq(x)` is one multiplication), and checked equal to the count of CasADi's own "
                      "instruction list. CasADi multiplies by the 2.2e-16 that cos(π/2) leaves "
                      "in Pinocchio's joint placements (soagen snaps it to 0), a few operations.",
            "functions": funcs, "without_cse": without_cse}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", action="store_true", help="only rewrite the page from the stored counts")
    args = parser.parse_args(argv)
    if not args.table:
        STORED.write_text(json.dumps(measure(), indent=1, sort_keys=True) + "\n")
    casadi = json.loads(STORED.read_text())
    ours = json.loads((ROOT / "generated" / "puma560" / "opcounts.json").read_text())["functions"]
    peers = json.loads((ROOT / "docs" / "peer_opcounts.json").read_text())   # benchmarks/peer_opcounts.py
    PAGE.write_text(opcount.literature_markdown(ours, casadi, peers))
    print(PAGE.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
