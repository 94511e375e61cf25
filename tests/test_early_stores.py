"""Outputs stored where they are computed (:func:`soagen.targets.common.c_text._early_stores`): in a
function with many outputs each entry is written right after its statement, never before the last
guard has passed; the definitions mark every output ``restrict``, and the Python wrappers refuse an
``out=`` array that shares memory with an input."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from soagen.model import robots
from soagen.program.statements import Program
from soagen.targets.c99.emit import emit
from soagen.targets.common.c_text import EARLY_STORES
from tests.support.builds import built
from tests.support.robots import random_robot


def _source(prog):
    return emit(random_robot(2, 1), [prog], "early").source.splitlines()


def _guarded_program(n):
    """``n`` products before a guard and ``n`` after it, each an output entry (the second negated)."""
    prog = Program("guarded")
    x = prog.input("x", n + 1)
    before = [prog.let(x[i] * x[i + 1]) for i in range(n)]
    prog.guard(prog.let(x[0] * x[0] + x[n]), sp.Float(0.5), "a pivot")
    after = [prog.let(b * x[n] + x[i]) for i, b in enumerate(before)]
    prog.output("a", before)
    prog.output("b", [-v for v in after])
    return prog.finish()


def test_an_output_is_stored_after_its_statement_and_after_the_last_guard():
    n = EARLY_STORES
    lines = _source(_guarded_program(n))
    guard = max(i for i, line in enumerate(lines) if line.strip().startswith("if (!("))
    outputs = next(i for i, line in enumerate(lines) if "==== outputs ====" in line)
    stores = {name: [i for i, line in enumerate(lines) if line.strip().startswith(f"{name}[")] for name in "ab"}
    assert len(stores["a"]) == len(stores["b"]) == n
    assert min(stores["a"]) > outputs                 # computed before the guard: written at the end
    assert guard < min(stores["b"]) and max(stores["b"]) < outputs
    for i in stores["b"]:                             # each right after its own statement
        assert lines[i].strip().startswith("b[") and lines[i - 1].strip().startswith("const double")
        assert lines[i].split("= -")[1].rstrip(";") == lines[i - 1].split()[2]
    assert all("restrict" in line for line in lines if line.startswith("int early_guarded("))


def test_few_outputs_wait_for_the_end():
    lines = _source(_guarded_program(EARLY_STORES // 2))
    outputs = next(i for i, line in enumerate(lines) if "==== outputs ====" in line)
    assert min(i for i, line in enumerate(lines) if line.strip().startswith("b[")) > outputs


def test_out_sharing_memory_with_an_input_is_refused():
    robot, mod = built("ur5", lambda: robots.example("ur5"))
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, robot.nv))
    tau = mod.inverse_dynamics(q, qd, qdd)
    with pytest.raises(ValueError, match="shares memory with an input"):
        mod.inverse_dynamics(q, qd, qdd, out=qdd)
    Q, QD, QDD = rng.uniform(-1, 1, (3, 4, robot.nv))
    with pytest.raises(ValueError, match="shares memory with an input"):
        mod.inverse_dynamics(Q, QD, QDD, out=QD)
    out = np.empty(robot.nv)
    assert mod.inverse_dynamics(q, qd, qdd, out=out) is not None and np.array_equal(out, tau)
