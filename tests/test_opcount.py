"""Every op count soagen reports is re-counted in the emitted C text and agrees."""
from __future__ import annotations

import pytest

from soagen.model import robots
from soagen.codegen import generate
from soagen.reports.opcount import count_c, count_line
from soagen.options import Options
from soagen.program.statements import count_ops
from tests.support.robots import random_robot


@pytest.mark.parametrize("case,precision", [("puma560", "double"), ("panda", "float"), ("ur5", "double"),
                                            ("tree", "double")])
def test_program_counts_equal_the_c_text(case, precision):
    robot = random_robot(14, 6, tree=True, tips=2) if case == "tree" else robots.example(case)
    gen = generate(robot, Options(precision=precision, variants=None), case)
    in_c = count_c(gen.csource.source)
    assert len(in_c) == len(gen.programs)
    for p in gen.programs:
        got = in_c[f"{case}_{p.calls or p.name}"]   # a family function may only call its algorithm
        assert got == {k: p.ops[k] for k in got}, p.name
        assert p.ops["mul"] > 0 or p.name == "forward_kinematics"


@pytest.mark.parametrize("precision", ["double", "float"])
def test_column_loops_count_once_per_column_in_the_c_text(precision):
    """The derivatives' column loops: the C text's body, counted once per column, equals the
    program's counts (an array index such as ``x[38 + j]`` is no addition)."""
    functions = ("forward_dynamics_derivatives", "linearized_step")
    gen = generate(robots.example("panda"), Options(precision=precision, functions=functions), "panda")
    in_c = count_c(gen.csource.source)
    for p in gen.programs:
        assert p.loops, p.name
        got = in_c[f"panda_{p.calls or p.name}"]
        assert got == {k: p.ops[k] for k in got}, p.name


def test_count_line_rules():
    assert count_line("a*b + c*d - e") == dict(mul=2, add=2, div=0, sqrt=0, trig=0, neg=0)
    assert count_line("-a*b - 0.5*c") == dict(mul=2, add=1, div=0, sqrt=0, trig=0, neg=1)
    assert count_line("-0.5*c + 1.0/t3 + cos(q[0])") == dict(mul=1, add=2, div=1, sqrt=0, trig=1, neg=0)
    assert count_line("x[1e-10 * 2]")["add"] == 0


def test_count_ops_matches_printer_on_signs():
    import sympy as sp

    from soagen.program.printer import SoaCPrinter

    a, b, c = sp.symbols("a b c")
    printer = SoaCPrinter()
    for expr in (-a * b, -a - b, -0.5 * a - b, a - 2.0 * b * c, -a / b, a * a, 3.0 * a - c / b):
        text = printer.doprint(expr)
        assert count_line(text) == count_ops(expr), (expr, text)


def test_every_output_entry_is_written_once_with_its_value_runs_of_constants_by_loops():
    """The outputs of a tree's M (zeros between its branches) as the C text writes them: a run of
    one constant by ``for (int i = a; i < b; ++i) M[i] = c;``, other entries one by one; together
    every entry exactly once, each with the program's value."""
    import re

    from soagen.program.printer import SoaCPrinter

    robot = random_robot(14, 6, tree=True, tips=2)
    gen = generate(robot, Options(functions=("mass_matrix",)), "tree")
    prog = next(p for p in gen.programs if p.name == "mass_matrix")
    values = prog.outputs[0].symbols
    text = gen.csource.source.split("void tree_mass_matrix(", 1)[1].split("\n}\n", 1)[0]
    written = {}
    for a, b, c in re.findall(r"for \(int i = (\d+); i < (\d+); \+\+i\) M\[i\] = ([^;]+);", text):
        for i in range(int(a), int(b)):
            written.setdefault(i, []).append(c)
    runs = len(written)
    for i, c in re.findall(r"^\s*M\[(\d+)\] = ([^;]+);", text, re.M):
        written.setdefault(int(i), []).append(c)
    printer = SoaCPrinter()
    printer.names = prog.names
    assert runs >= 4                                   # the tree's zeros are written by runs
    assert sorted(written) == list(range(len(values)))
    for i, e in enumerate(values):
        assert len(written[i]) == 1, i
        if e.is_Number:
            assert written[i][0] == printer.doprint(e), i


def test_the_rule_pages_examples_are_what_the_counter_says():
    """docs/guide/opcounts.md's examples: each expression's row is count_ops and count_fma of it, and the
    C printer's text counts the same (count_line)."""
    import sympy as sp

    from soagen.program.printer import SoaCPrinter
    from soagen.program.statements import count_fma
    from tests.support import ROOT

    page = (ROOT / "docs" / "guide" / "opcounts.md").read_text()
    rows = page.split("<!-- count examples: begin -->", 1)[1].split("<!-- count examples: end -->", 1)[0]
    rows = [r.strip("|").split("|") for r in rows.strip().splitlines()[2:]]
    assert len(rows) >= 8
    names = {k: sp.Symbol(k) for k in "abcdef"}
    for text, *numbers in rows:
        expr = sp.sympify(text.strip().strip("`"), locals=names)
        got = count_ops(expr)
        stated = dict(zip(("mul", "add", "neg", "div", "sqrt", "trig", "fma"), map(int, numbers)))
        assert {**got, "fma": count_fma(expr)} == stated, text
        assert count_line(SoaCPrinter().doprint(expr)) == got, text


def test_gcc_fuses_at_least_the_counted_fmas(tmp_path):
    """The fma count is contraction within an expression; gcc's -ffp-contract=fast also fuses across
    statements, so the object code of the Panda's inverse dynamics has at least that many FMAs (and the
    count is no zero: most of the multiplications there feed a sum)."""
    import re
    import subprocess

    from soagen.program.statements import fma_program

    gen = generate(robots.example("panda"), Options(functions=("inverse_dynamics",)), "panda")
    (tmp_path / "panda.h").write_text(gen.csource.header)
    (tmp_path / "panda.c").write_text(gen.csource.source)
    subprocess.run(["gcc", "-std=c99", "-O2", "-mfma", "-ffp-contract=fast", "-fno-tree-vectorize", "-c",
                    str(tmp_path / "panda.c"), "-o", str(tmp_path / "panda.o"), f"-I{tmp_path}"], check=True)
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(tmp_path / "panda.o")], capture_output=True,
                          text=True, check=True).stdout
    body = text.split("<panda_inverse_dynamics>:", 1)[1].split("\n\n", 1)[0]
    in_object = len(re.findall(r"\tvfn?m(?:add|sub)\d+[sp]d", body))
    (prog,) = gen.programs
    counted = fma_program(prog)
    assert prog.ops["mul"] / 3 < counted <= in_object, (counted, in_object, prog.ops)
