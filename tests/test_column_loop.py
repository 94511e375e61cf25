"""Column loops (:class:`soagen.program.statements.ColumnLoop`): many right-hand sides solved by one
body in a C ``for`` over the columns.  Counted once per column, printed once, run after the outputs
are written, on output arrays the definition marks ``restrict``; the C computes what the flat
route (every column's solve recorded) computes."""
from __future__ import annotations

import numpy as np

import soagen
from soagen.passes.derivatives import forward_dynamics_derivatives_via_id
from soagen.program.statements import Program, count_program
from soagen.targets.c99.compile import compile_args, compile_module, load_extension
from soagen.targets.c99.emit import emit
from tests.support.robots import random_robot


def _fd_program(robot, in_place):
    prog = Program("fdd")
    q, qd, tau = (prog.input(a, n) for a, n in (("q", robot.nq), ("qd", robot.nv), ("tau", robot.nv)))
    for name, values in zip(("qdd", "dqdd_dq", "dqdd_dqd", "Minv"),
                            forward_dynamics_derivatives_via_id(prog, robot, q, qd, tau, in_place=in_place)):
        prog.output(name, values)
    return prog.finish()


def test_counts_a_body_once_per_column_and_prints_it_once():
    robot = random_robot(5, 5)
    prog = _fd_program(robot, in_place=True)
    (loop,) = prog.loops
    assert loop.columns == robot.nv and [prog.outputs[i].name for i in loop.arrays] == ["dqdd_dq", "dqdd_dqd"]
    outer = Program("outer")
    outer.body, outer.outputs = prog.body, prog.outputs
    body = count_program(loop.body)
    total = count_program(outer)
    for kind in ("mul", "add", "div"):
        assert prog.ops[kind] == total[kind] + robot.nv * body[kind]
    assert body["mul"] > 0 and prog.ops["statements"] == total["statements"] + body["statements"]
    source = emit(robot, [prog], "loop").source
    assert source.count("for (int j = 0; j < 5; ++j) {") == 1
    assert "double dqdd_dq[restrict 25], double dqdd_dqd[restrict 25], double Minv[25])" in source


def test_loop_equals_every_column_recorded(tmp_path):
    """The loop's C (in place, vectorizable) equals the C of the flat route, every column's solve
    recorded, on a random tree with a floating base and a spherical joint."""
    robot = random_robot(23, 6, tree=True, spherical_fraction=0.3, floating_base=True)
    looped, flat = _fd_program(robot, True), _fd_program(robot, False)
    assert looped.loops and not flat.loops
    assert looped.ops["statements"] < flat.ops["statements"]
    flat.name = "fdd_flat"
    lib_path = compile_module(emit(robot, [looped, flat], "loops"), tmp_path, "_soagen_loops_test",
                              args=compile_args(soagen.Options(optimize="O0")))
    mod = load_extension(lib_path, "_soagen_loops_test")

    def call(prog, *inputs):
        outs = [np.zeros(a.size) for a in prog.outputs]
        getattr(mod.lib, f"loops_{prog.name}")(*(mod.ffi.from_buffer("double[]", np.ascontiguousarray(x, float))
                                                 for x in (*inputs, *outs)))
        return outs

    rng = np.random.default_rng(5)
    for _ in range(5):
        q, qd, tau = robot.random_configuration(rng), rng.standard_normal(robot.nv), rng.standard_normal(robot.nv)
        for x, y in zip(call(looped, q, qd, tau), call(flat, q, qd, tau)):
            assert np.abs(y).max() > 1e-3
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9 * np.abs(y).max())
