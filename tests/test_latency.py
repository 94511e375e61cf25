"""The latency model orders operands so that dependency chains get shorter,
without changing what is computed or how many operations it takes."""
from __future__ import annotations

import pytest
import sympy as sp

from soagen.model import robots
from soagen.codegen import make_program
from soagen.program.latency import LATENCY, Schedule
from soagen.program.printer import SoaCPrinter
from soagen.program.statements import Program


class StoredOrder(Schedule):
    """The same model, operands in sympy's stored order (what was printed before)."""

    def terms(self, args):
        return list(args)

    def factors(self, factors):
        return list(factors)


def _outputs(prog):
    return [s for a in prog.outputs for e in a.symbols for s in e.free_symbols]


def test_late_operand_is_printed_last():
    prog = Program("f")
    x = prog.input("x", 4)
    slow = prog.let(1 / (x[0] * x[1] + x[2]))         # a division: ready late
    y = prog.let(x[2] * x[3] + slow * x[0] - x[1])
    prog.output("y", [y])
    prog.finish()
    sched = Schedule(prog.statements())
    printer = SoaCPrinter()
    printer.names, printer.schedule = prog.names, sched
    text = printer.doprint(prog.statements()[-1][1])
    assert text == f"x[2]*x[3] - x[1] + x[0]*{printer.doprint(prog.statements()[-2][0])}", text
    # the division's result joins last, in one fma: x0*x1 + x2, 1/·, then the fma
    assert sched.length(_outputs(prog)) == LATENCY["fma"] + LATENCY["div"] + LATENCY["fma"]


@pytest.mark.parametrize("name", ["forward_dynamics_fd4", "mass_matrix_inverse_innovations", "os_inertia_recursive",
                                  "inverse_dynamics"])
def test_schedule_never_lengthens_chains(name):
    robot = robots.example("panda")
    prog = make_program(robot, name)
    ordered = Schedule(prog.statements()).length(_outputs(prog))
    stored = StoredOrder(prog.statements()).length(_outputs(prog))
    assert ordered <= stored
    if name == "forward_dynamics_fd4":
        assert ordered < 0.9 * stored, (ordered, stored)


def test_all_negative_sum_leads_with_a_literal():
    a, b = sp.symbols("a b")
    printer = SoaCPrinter()
    assert printer.doprint(-a * b - sp.Float(0.5) * a) == "-0.5*a - a*b"
