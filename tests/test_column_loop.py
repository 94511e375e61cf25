"""Column loops (:class:`soagen.program.statements.ColumnLoop`): many right-hand sides solved by one
body in a C ``for`` over the columns.  Counted once per column, printed once, run after the outputs
are written, in place, on output arrays the definition marks ``restrict``."""
from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

import soagen
from soagen.passes.contact_derivatives import contact_dynamics_derivatives_kkt_analytic
from soagen.passes.derivatives import forward_dynamics_derivatives_via_id
from soagen.program.statements import MOST_LOOPS, Program, count_program, loop_cost
from soagen.targets.c99.compile import compile_args, compile_module, load_extension
from soagen.targets.c99.emit import emit
from tests.support.robots import random_robot


def _forward_dynamics_derivatives(robot):
    """The finished program of θ̈, ∂θ̈/∂q, ∂θ̈/∂q̇ and M⁻¹ of ``robot`` (the M solve route)."""
    prog = Program("fdd")
    q, qd, tau = (prog.input(a, n) for a, n in (("q", robot.nq), ("qd", robot.nv), ("tau", robot.nv)))
    for name, values in zip(("qdd", "dqdd_dq", "dqdd_dqd", "Minv"),
                            forward_dynamics_derivatives_via_id(prog, robot, q, qd, tau)):
        prog.output(name, values)
    return prog.finish()


def test_counts_a_body_once_per_column_and_prints_it_once():
    """∂θ̈/∂q, ∂θ̈/∂q̇ and M⁻¹ (the identity's columns): a loop per output, each body counted
    once per column, printed once."""
    robot = random_robot(5, 5)
    prog = _forward_dynamics_derivatives(robot)
    assert [(loop.start, loop.end) for loop in prog.loops] == [(0, robot.nv)] * 3
    assert [[prog.outputs[i].name for i in loop.arrays] for loop in prog.loops] == [["dqdd_dq"], ["dqdd_dqd"],
                                                                                      ["Minv"]]
    outer = Program("outer")
    outer.body, outer.outputs = prog.body, prog.outputs
    bodies, total = [count_program(loop.body) for loop in prog.loops], count_program(outer)
    for kind in ("mul", "add", "div"):
        assert prog.ops[kind] == total[kind] + robot.nv * sum(b[kind] for b in bodies)
    assert min(b["mul"] for b in bodies) > 0
    assert prog.ops["statements"] == total["statements"] + sum(b["statements"] for b in bodies)
    source = emit(robot, [prog], "loop").source
    assert source.count("for (int j = 0; j < 5; ++j) {") == 3
    assert "double dqdd_dq[restrict 25], double dqdd_dqd[restrict 25], double Minv[restrict 25])" in source


def test_a_tree_cuts_its_columns_into_loops_that_skip_zero_rows():
    """On a tree, column j of ∂τ/∂x is zero on the rows of the joints neither above nor below j:
    the columns are cut into at most MOST_LOOPS consecutive loops, each loop's body reading only the
    rows some column of its run has."""
    robot = random_robot(9, 14, tree=True, tips=2)
    prog = _forward_dynamics_derivatives(robot)
    n, written = robot.nv, prog.outputs[1].symbols
    dq = [loop for loop in prog.loops if loop.arrays == [1]]
    assert 1 < len(dq) <= MOST_LOOPS
    assert [loop.start for loop in dq] == [0] + [loop.end for loop in dq[:-1]] and dq[-1].end == n
    for loop in dq:
        read = {i for i in range(n) for j in loop.columns_run if written[i * n + j] != 0}
        used = set().union(*(e.free_symbols for _, e in loop.body.statements()))
        assert {i for i, s in enumerate(loop.body.inputs[0].symbols) if s in used} == read


def _loops(patterns, most=8):
    """The (start, end) of the loops Program.sparse_column_loops cuts a square array into whose column j
    is non-zero on the rows ``patterns[j]``."""
    n = len(patterns)
    written = [sp.Integer(int(i in patterns[j])) for i in range(n) for j in range(n)]
    prog = Program("runs")
    prog.sparse_column_loops(n, [(0, n)], lambda body, cols: [[body.let(2 * x) for x in cols[0]]], [written],
                             most=most)
    return [(loop.start, loop.end) for loop in prog.loops]


def test_the_columns_are_cut_where_the_rows_read_change():
    """Hand-made patterns: two halves reading disjoint rows are two loops, however long; one loop when
    only one is allowed; sixteen columns reading a row each are cheapest in two loops of eight (one
    loop reads all sixteen rows on every column, four loops pay four set-ups); three disjoint blocks
    of eight, three loops, or two when only two are allowed."""
    a, b = set(range(8)), set(range(8, 16))
    assert _loops([a] * 8 + [b] * 8) == [(0, 8), (8, 16)]
    assert _loops([a] * 8 + [b] * 8, most=1) == [(0, 16)]
    assert _loops([{j} for j in range(16)]) == [(0, 8), (8, 16)]
    assert _loops([a] * 16) == [(0, 16)]
    c = set(range(16, 24))
    assert _loops([a] * 8 + [b] * 8 + [c] * 8) == [(0, 8), (8, 16), (16, 24)]
    assert _loops([a] * 8 + [b] * 8 + [c] * 8, most=2) == [(0, 8), (8, 24)]


def test_the_cut_is_the_cheapest_of_all_cuts():
    """On random patterns of runs, the cut's loop_cost summed over its loops equals the least over
    every way of cutting the same runs into at most ``most`` loops (enumerated), each loop
    reading the union of its columns' rows."""
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(60):
        widths = rng.integers(1, 7, size=rng.integers(1, 9))
        n = int(widths.sum())
        patterns = []
        for w in widths:
            rows = set(int(i) for i in rng.choice(n, size=rng.integers(1, n + 1), replace=False))
            patterns += [rows] * int(w)
        most = int(rng.integers(1, 5))
        edges = [j for j in range(1, n) if patterns[j] != patterns[j - 1]]

        def cost(cut):
            bounds = [0, *cut, n]
            return sum(loop_cost(e - s, len(set().union(*patterns[s:e])), n) for s, e in zip(bounds, bounds[1:]))

        least = min(cost(cut) for k in range(min(most, len(edges) + 1)) for cut in itertools.combinations(edges, k))
        loops = _loops(patterns, most)
        assert len(loops) <= most and loops[0][0] == 0 and loops[-1][1] == n
        assert all(x[1] == y[0] for x, y in zip(loops, loops[1:]))
        assert cost([e for _, e in loops[:-1]]) == least
        checked += len(edges) > 0
    assert checked > 40


def test_the_contact_derivatives_solve_each_direction_in_its_own_loop():
    """The contact derivatives: a loop per direction q, q̇, τ, each on (∂θ̈, ∂f) of that direction
    alone, each body counted once per column."""
    robot = random_robot(3, 6, tree=True)
    prog = Program("cdd")
    q, qd, tau = (prog.input(a, n) for a, n in (("q", robot.nq), ("qd", robot.nv), ("tau", robot.nv)))
    names = ("qdd", "f", "dqdd_dq", "dqdd_dqd", "dqdd_dtau", "df_dq", "df_dqd", "df_dtau")
    for name, values in zip(names, contact_dynamics_derivatives_kkt_analytic(prog, robot, q, qd, tau)):
        prog.output(name, values)
    prog.finish()
    arrays = [[prog.outputs[i].name for i in loop.arrays] for loop in prog.loops]
    assert [a for k, a in enumerate(arrays) if k == 0 or a != arrays[k - 1]] == \
        [["dqdd_dq", "df_dq"], ["dqdd_dqd", "df_dqd"], ["dqdd_dtau", "df_dtau"]]
    for name in ("dqdd_dq", "dqdd_dqd", "dqdd_dtau"):                  # each direction's loops: every column once
        ranges = [(loop.start, loop.end) for loop, a in zip(prog.loops, arrays) if a[0] == name]
        assert [s for s, _ in ranges] == [0] + [e for _, e in ranges[:-1]] and ranges[-1][1] == robot.nv
    outer = Program("outer")
    outer.body, outer.outputs = prog.body, prog.outputs
    bodies = [len(loop.columns_run) * count_program(loop.body)["mul"] for loop in prog.loops]
    assert min(bodies) > 0 and prog.ops["mul"] == count_program(outer)["mul"] + sum(bodies)


ROWS, COLUMNS = 3, 5


def _program():
    """x (3 × 5) and y (2 × 5) written from the inputs, then on each column j:
    x_0 ← s² x_0, x_i ← x_i x_{i−1} + s (new values, in order), y_0 ← y_0 − x_2, y_1 unchanged."""
    prog = Program("columns")
    a, b, s = prog.input("a", ROWS * COLUMNS), prog.input("b", 2 * COLUMNS), prog.input("s", 1)[0]
    s2 = prog.let(s * s)                                    # an outer statement the body reads

    def kernel(body, cols):
        x, y = cols
        new = [body.let(s2 * x[0])]
        for i in range(1, ROWS):
            new.append(body.let(x[i] * new[-1] + s))
        return [new, [body.let(y[0] - new[-1]), y[1]]]

    prog.column_loop(COLUMNS, [(0, ROWS), (1, 2)], kernel)
    prog.output("x", [sp.Integer(2) * v for v in a])
    prog.output("y", b)
    return prog.finish()


def _expected(a, b, s):
    x, y = 2 * a.reshape(ROWS, COLUMNS), b.reshape(2, COLUMNS).copy()
    x[0] *= s * s
    for i in range(1, ROWS):
        x[i] = x[i] * x[i - 1] + s
    y[0] -= x[-1]
    return x.ravel(), y.ravel()


def test_the_body_runs_on_every_column_in_place(tmp_path):
    """A hand-made loop's C against numpy: every column, both arrays, an outer value and an
    input read inside the body, an entry the body leaves unchanged."""
    prog = _program()
    assert prog.ops["mul"] == ROWS * COLUMNS + 1 + ROWS * COLUMNS     # the body, s², 2a
    robot = random_robot(1, 2)
    lib_path = compile_module(emit(robot, [prog], "cols"), tmp_path, "_soagen_column_loop_test",
                              args=compile_args(soagen.Options(optimize="O0")))
    mod = load_extension(lib_path, "_soagen_column_loop_test")
    rng = np.random.default_rng(4)
    for _ in range(3):
        a, b, s = rng.standard_normal(ROWS * COLUMNS), rng.standard_normal(2 * COLUMNS), rng.standard_normal(1)
        x, y = np.zeros(ROWS * COLUMNS), np.zeros(2 * COLUMNS)
        mod.lib.cols_columns(*(mod.ffi.from_buffer("double[]", v) for v in (a, b, s, x, y)))
        want_x, want_y = _expected(a, b, s[0])
        np.testing.assert_allclose(x, want_x, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(y, want_y, rtol=1e-13, atol=1e-13)


def test_simd_batches_run_the_loops_per_lane(tmp_path):
    """The SIMD batches (a state per lane) print the same loops on vectors: a batch of 13 states
    (lanes and a tail) equals the scalar calls, for the Panda's ∂q̈ and linearized step."""
    robot = soagen.robots.example("panda")
    mod = soagen.build(robot, soagen.Options(simd=True, optimize="O0",
                                             functions=("forward_dynamics_derivatives", "linearized_step")),
                       cache_dir=tmp_path)
    assert "for (int j = 0; j < 7; ++j) {" in (mod.path / "panda_simd.c").read_text()
    rng = np.random.default_rng(6)
    n = 13
    q = np.array([robot.random_configuration(rng) for _ in range(n)])
    qd, tau, dt = rng.standard_normal((n, 7)), rng.standard_normal((n, 7)), np.full((n, 1), 0.01)
    for name, args in (("forward_dynamics_derivatives", (q, qd, tau)), ("linearized_step", (q, qd, tau, dt))):
        batch = getattr(mod, name)(*args)
        for k in range(n):
            for got, want in zip(batch, getattr(mod, name)(*(a[k] for a in args))):
                assert np.abs(want).max() > 1e-3
                np.testing.assert_allclose(got[k], want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_cuda_host_runs_the_loops(tmp_path):
    """The CUDA source (compiled for the host, its kernels run as CPU loops) prints the same loops:
    its ∂q̈ and linearized step equal the C module's."""
    robot = soagen.robots.example("panda")
    functions = ("forward_dynamics_derivatives", "linearized_step")
    cuda = soagen.build(robot, soagen.Options(target="cuda-host", optimize="O0", functions=functions),
                        cache_dir=tmp_path)
    c = soagen.build(robot, soagen.Options(optimize="O0", functions=functions), cache_dir=tmp_path)
    rng = np.random.default_rng(7)
    n = 5
    q = np.array([robot.random_configuration(rng) for _ in range(n)])
    qd, tau, dt = rng.standard_normal((n, 7)), rng.standard_normal((n, 7)), np.full((n, 1), 0.01)
    for name, args in (("forward_dynamics_derivatives", (q, qd, tau)), ("linearized_step", (q, qd, tau, dt))):
        for got, want in zip(getattr(cuda, name)(*args), getattr(c, name)(*args)):
            assert np.abs(want).max() > 1e-3
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_a_floating_base_leaves_its_six_columns_out_of_the_solve():
    """∂θ̈/∂q of a floating base: its six columns are written as they are (gravity turned with the
    base, soagen.passes.derivatives.free_base_columns), the loop solves the others."""
    robot = random_robot(43, 5, floating_base=True)
    prog = _forward_dynamics_derivatives(robot)
    n = robot.nv
    assert [(loop.start, loop.end) for loop in prog.loops if loop.arrays != [3]] == [(6, n), (0, n)]
    dq = prog.outputs[1].symbols
    assert all(dq[i * n + c] == 0 for i in range(n) for c in range(6) if not (3 <= i < 6 and c < 3))
    assert all(dq[i * n + c] != 0 for i in range(3, 6) for c in range(3) if i - 3 != c)
    assert f"for (int j = 6; j < {n}; ++j) {{" in emit(robot, [prog], "loop").source
