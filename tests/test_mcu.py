"""The emitted float C on emulated microcontrollers: cross-compiled with
arm-none-eabi-gcc for a Cortex-M4F (hard float, QEMU ``mps2-an386``) and a
Cortex-M0 (soft float, QEMU ``microbit``, an nRF51822 Cortex-M0 with 256 KB of
flash and 16 KB of RAM), run bare-metal with semihosting output.

Two checks per function:

1. **The MCU computes what the C says, bit for bit.** The same harness and C
   are compiled for this machine in float with the MCU's semantics (every
   operation rounded to float, no FMA contraction: :data:`soagen.targets.mcu.qemu.HOST_FLAGS`),
   sinf/cosf answering with the values the MCU's libm returned for the same
   arguments (the firmware logs them). Every output of every function, state,
   core and optimisation level must equal the host's exactly, and so must the
   singular status.

2. **The float C is within a first-order rounding-error bound of double, component by
   component.** The MCU's outputs against the double-precision module (= the numpy reference,
   ``test_generated_vs_reference``) at the same (float-rounded) inputs. The float C evaluates a
   straight-line program (``generate(...).programs``) with every operation rounded once to float
   (check 1: as written, no FMA), so to first order its output component ŷ_i differs from the
   exact y_i by Σ_k (∂y_i/∂t_k)·t_k·δ_k, |δ_k| ≤ u_k, over its rounded operations k (t_k the
   exact result, in the order the C evaluates them: each sum left to right, operands in the
   printer's order, :class:`soagen.program.latency.Schedule`). The bound is

       b_i = Σ_k u_k·|∂y_i/∂t_k|·|t_k|

   with u_k = u = 2⁻²⁴ for +, −, ×, / and √, 3u for libm's sinf/cosf (within an ulp, at most 2u|t|,
   of the rounded exact value, as check 1 verifies), and |fl(c) − c| in place of u_k·|t_k| for a
   float literal c (the inputs are float already). t_k and ∂y_i/∂t_k (reverse-mode differentiation
   of the program, every output at once) are computed in double at the state (:func:`error_bound`).
   It follows the actual operations and their signs, so what the functions invert (M in forward
   dynamics, Ω(0) in Λ and the operational-space terms) brings its conditioning into the bound
   without a condition number. Each component must satisfy |ŷ_i − y_i| ≤ SAFETY·b_i +
   2⁻⁴⁵·max_j |y_j| (j over the same output): SAFETY = 2 covers the second-order terms; the last
   term is the double result's own rounding, which matters only where the float result is exact
   (a component the program knows to be zero, which numpy computes as 1e-16).

   The bound is checked to be meaningful, per function and state: every output has a component
   where 5 % of the double value is beyond its limit (so an all-zero output, or one 5 % off,
   fails), and the component whose error comes nearest its bound has b_i/|ŷ_i − y_i| ≤ RATIO = 100.
   The tests print, per function, the largest error and bound (each relative to its output's
   largest component), b/error at the component nearest its bound (the worst state) and the
   median b/error over the components with an error (``python -m pytest -n0 -s tests/test_mcu.py -k
   float_on_mcu``). Panda and PUMA: errors 4e-8 to 2.5e-6 against bounds 3e-7 to 1.3e-4; b/error 1.0
   to 65 (1.0 at M's constant entries, whose only error is the literal's rounding), median 9.9 to 85
   (a sum of |terms| against errors that partly cancel). The
   states are the first :data:`STATES` of four drawn from a fixed seed where Ω(0)'s LDLᵀ pivots are
   above 1e-3 of their diagonal (100× the float guard 1e-5, 1e7× the double guard 1e-10, so both
   precisions return status 0); fewer fails the test. One more state, q = 0, is singular for both
   robots with an exact zero pivot (Ω_00 = 0 from exact cos 0, sin 0), so float and double both
   report it, independent of their thresholds (there only the statuses are compared with double;
   the values are in check 1).

The Panda's derivatives (∂τ, ∂q̈ with q̈ and M⁻¹, the linearized step; generated
on request) get check 2 on the Cortex-M4F at -Os, after a cross-compile with
warnings as errors (the end of this file).
"""
from __future__ import annotations

import re
import subprocess
from itertools import pairwise

import numpy as np
import pytest
import sympy as sp

from soagen import SingularError
from soagen import reference as ref
from soagen.check import random_inputs
from soagen.codegen import generate
from soagen.model import robots
from soagen.options import Options
from soagen.program.latency import Schedule
from soagen.targets.mcu import qemu as mcu
from tests.support import ROOT
from tests.support.builds import built
from tests.test_generated_vs_reference import OPTIONS as GEN_OPTIONS

U = 2.0 ** -24
SAFETY = 2          # |float − double| ≤ SAFETY · b_i per output component (the module docstring)
STATES = 3          # regular states per robot (drawn from a fixed seed, see draw_states)
RATIO = 100         # on every state, some component's error is within this factor of its bound
REFERENCE_ROUNDING = 2.0 ** -45   # the double reference's own error, of its largest component
CASES = {"panda": lambda: robots.example("panda"), "puma560": lambda: robots.example("puma560")}
_setup, _host, _tapes = {}, {}, {}


def f32(x):
    """Round to float, as the harness's float literals do; back in float64."""
    return np.asarray(x, dtype=np.float32).astype(float)


def pivot_ratio(A):
    """min_j d_j / A_jj of A = L diag(d) Lᵀ (the generated guard's quantity)."""
    N = A.shape[0]
    L, d = np.eye(N), np.zeros(N)
    for j in range(N):
        w = L[j, :j] * d[:j]
        d[j] = A[j, j] - L[j, :j] @ w
        L[j + 1:, j] = (A[j + 1:, j] - L[j + 1:, :j] @ w) / d[j]
    return (d / np.diag(A)).min()


def _tape(prog):
    """The float C's rounded operations in the order it evaluates them (sums left to right and
    products' factors in the printer's operand order, :class:`soagen.program.latency.Schedule`;
    a column loop's body once per column, after the outputs):
    ``(ops, outputs)``, ops ``(kind, operand index, ...)``, outputs the nodes of the output components."""
    if prog in _tapes:
        return _tapes[prog]
    sched, ops, node = Schedule(prog.statements()), [], {}

    def push(*op):
        ops.append(op)
        return len(ops) - 1

    def emit(expr):
        if expr.is_Symbol:
            return node[expr]
        if expr.is_Number:
            return push("const", float(expr))
        if expr.is_Add:
            acc = None
            for t in sched.terms(expr.args):
                neg = t.could_extract_minus_sign()
                x = emit(-t if neg else t)
                acc = (push("neg", x) if neg else x) if acc is None else push("sub" if neg else "add", acc, x)
            return acc
        if expr.is_Mul:
            coeff, factors = expr.as_coeff_mul()
            num = [f for f in factors if not (f.is_Pow and f.exp == -1)]
            den = [f.base for f in factors if f.is_Pow and f.exp == -1]
            items = ([] if abs(coeff) == 1 else [push("const", float(coeff))]) + [emit(f) for f in sched.factors(num)]
            acc = items[0] if items else push("const", 1.0)
            for x in items[1:]:
                acc = push("mul", acc, x)
            for d in den:
                acc = push("div", acc, emit(d))
            return push("neg", acc) if coeff == -1 else acc
        if expr.is_Pow and expr.exp in (2, -1, sp.Rational(1, 2)):    # x*x, 1.0f/x, sqrtf(x)
            x = emit(expr.base)
            if expr.exp == 2:
                return push("mul", x, x)
            return push("div", push("const", 1.0), x) if expr.exp == -1 else push("sqrt", x)
        if isinstance(expr, (sp.sin, sp.cos)):
            return push("sin" if isinstance(expr, sp.sin) else "cos", emit(expr.args[0]))
        raise ValueError(f"no error bound for {expr!r}")

    for k, a in enumerate(prog.inputs):
        node.update({s: push("in", k, i) for i, s in enumerate(a.symbols)})
    for sym, expr in prog.statements():
        node[sym] = emit(expr)
    outs = [[emit(e) for e in a.symbols] for a in prog.outputs]
    for loop in prog.loops:          # after the outputs, in place: the body once per column it runs on
        sched = Schedule(loop.body.statements())
        for j in loop.columns_run:
            for arg, index in zip(loop.body.inputs, loop.arrays):
                node.update({s: outs[index][i * loop.columns + j] for i, s in enumerate(arg.symbols)})
            for sym, expr in loop.body.statements():
                node[sym] = emit(expr)
            new = [[emit(e) for e in arg.symbols] for arg in loop.body.outputs]
            for values, index in zip(new, loop.arrays):
                for i, x in enumerate(values):
                    outs[index][i * loop.columns + j] = x
    _tapes[prog] = ops, [x for values in outs for x in values]
    return _tapes[prog]


def error_bound(prog, cases, u=U):
    """(values, bounds), each (states, output components): the program evaluated in double on
    ``cases`` (one list of input arrays per state), and the first-order bound of its float
    evaluation's error, b_i = Σ_k u_k |∂y_i/∂t_k| |t_k| (see the module docstring)."""
    ops, outs = _tape(prog)
    S = len(cases)
    args = [np.array([case[k] for case in cases], dtype=float).reshape(S, -1) for k in range(len(prog.inputs))]
    val = []
    for op in ops:                  # forward: the exact value t_k of every operation
        kind, a = op[0], op[1]
        if kind == "in":
            v = args[a][:, op[2]]
        elif kind == "const":
            v = np.full(S, a)
        elif kind in ("add", "sub", "mul", "div"):
            x, y = val[a], val[op[2]]
            v = x + y if kind == "add" else x - y if kind == "sub" else x * y if kind == "mul" else x / y
        else:
            v = {"neg": np.negative, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos}[kind](val[a])
        val.append(v)
    adj, bound = {}, np.zeros((len(outs), S))
    for j, o in enumerate(outs):    # reverse: ∂y/∂t_k, all outputs at once
        adj.setdefault(o, np.zeros((len(outs), S)))[j] += 1

    def add(i, g):
        adj[i] = adj[i] + g if i in adj else g

    for k in range(len(ops) - 1, -1, -1):
        g = adj.pop(k, None)
        if g is None or ops[k][0] == "in":
            continue
        kind, a, v = ops[k][0], ops[k][1], val[k]
        if kind == "const":         # the float literal's rounding
            bound += np.abs(g) * abs(float(np.float32(a)) - a)
            continue
        if kind != "neg":           # a rounded operation; libm's sinf/cosf within one ulp (check 1): 3u
            bound += np.abs(g) * ((3 * u if kind in ("sin", "cos") else u) * np.abs(v))
        if kind in ("add", "sub"):
            add(a, g)
            add(ops[k][2], g if kind == "add" else -g)
        elif kind == "mul":
            add(a, g * val[ops[k][2]])
            add(ops[k][2], g * val[a])
        elif kind == "div":
            add(a, g / val[ops[k][2]])
            add(ops[k][2], -g * (v / val[ops[k][2]]))
        elif kind == "neg":
            add(a, -g)
        else:                       # sqrt, sin, cos: g times the derivative
            add(a, g * (0.5 / v if kind == "sqrt" else np.cos(val[a]) if kind == "sin" else -np.sin(val[a])))
    return np.array([val[o] for o in outs]).T, bound.T


def draw_states(robot, rng, draws=4):
    """The regular states among ``draws`` random ones: those where Ω(0)'s LDLᵀ pivots are above
    1e-3 of their diagonal (see the module docstring); then the singular q = 0."""
    states = []
    for _ in range(draws):
        q, qd, qdd, tau = robot.random_state(rng)
        m = len(robot.tips)
        s = {"q": f32(q), "qd": f32(qd), "qdd": f32(qdd), "tau": f32(tau), "f": f32(10 * rng.normal(size=6 * m)),
             "u": f32(rng.normal(size=6 * m))}
        if pivot_ratio(ref.os_inertia_inverse(robot, s["q"])) >= 1e-3:
            states.append(s)
    return states[:STATES] + [{**states[0], "q": np.zeros(robot.nq)}]


def setup(case, tmp_path_factory):
    """(robot, float programs, states, harness folder, output of the M4F -Os firmware, sinf/cosf log)."""
    if case not in _setup:
        robot = CASES[case]()
        gen = generate(robot, Options(precision="float"), case)
        states = draw_states(robot, np.random.default_rng(11))
        inputs = {p.name: [[s[a.name] for a in p.inputs] for s in states] for p in gen.programs}
        folder = mcu.write_harness(gen, inputs, tmp_path_factory.mktemp(f"mcu-{case}"))
        tgt = mcu.TARGETS["cortex-m4f"]
        text = "".join(mcu.run_qemu(elf, tgt) for elf in mcu.build_images(gen, inputs, folder, tgt, "-Os", True))
        _setup[case] = (robot, gen, states, inputs, folder, text, mcu.parse_trig(text))
    return _setup[case]


def host_output(folder, trig):
    """The host build's output with sinf/cosf answering from ``trig`` (once per table)."""
    key = (str(folder), *(tuple(sorted(trig[f].items())) for f in ("sinf", "cosf")))
    if key not in _host:
        _host[key] = mcu.parse_output(mcu.run_host(folder, trig), np.float32)
    return _host[key]


@pytest.mark.parametrize("target,opt", mcu.RUNS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_mcu_equals_host_float_bit_for_bit(case, target, opt, tmp_path_factory):
    robot, gen, states, inputs, folder, text, trig = setup(case, tmp_path_factory)
    tgt = mcu.TARGETS[target]
    if (target, opt) != ("cortex-m4f", "-Os"):
        text = "".join(mcu.run_qemu(elf, tgt) for elf in mcu.build_images(gen, inputs, folder, tgt, opt, True))
        trig = mcu.parse_trig(text)   # newlib's soft-float sinf/cosf may differ from the FPU build's by an ulp
    assert "fault" not in text
    # libm was called for every joint angle, and answered within 1 ulp of the rounded exact value
    assert len(trig["sinf"]) >= robot.n and len(trig["cosf"]) >= robot.n
    for fname, exact in (("sinf", np.sin), ("cosf", np.cos)):
        x = np.array(list(trig[fname]), dtype=np.uint32).view(np.float32)
        y = np.array(list(trig[fname].values()), dtype=np.uint32).view(np.float32)
        assert np.all(np.abs(y - exact(x.astype(float)).astype(np.float32)) <= np.spacing(np.abs(y))), fname
    on_mcu, on_host = mcu.parse_output(text, np.float32), host_output(folder, trig)
    expected = {(p.name, c, a.name) for p in gen.programs for c in range(len(states)) for a in p.outputs}
    assert set(on_mcu) == set(on_host) == expected
    differ = [k for k in expected if on_mcu[k][0] != on_host[k][0] or not np.all(on_mcu[k][1] == on_host[k][1])]
    assert not differ, differ[:10]


def check_components(prog, cases, got, want, ratio=RATIO):
    """``got`` (the MCU's float outputs, (states, output components)) against ``want`` (double) on
    ``cases``, per component (see the module docstring): within SAFETY × its bound b_i (plus the
    double's own rounding, :data:`REFERENCE_ROUNDING` of the output's largest component); each output
    with a component where 5 % of the double value is beyond that, on every state (so a 5 % error
    or an all-zero output fails); on every state a component whose error is within a factor
    ``ratio`` of its bound.  Returns (|got − want|, b, largest |want| per state and output)."""
    _, bound = error_bound(prog, cases)
    err = np.abs(got - want)
    spans = list(pairwise(np.cumsum([0] + [a.size for a in prog.outputs])))
    scale = np.concatenate([np.abs(want[:, lo:hi]).max(axis=1, keepdims=True).repeat(hi - lo, axis=1)
                            for lo, hi in spans], axis=1)
    limit = SAFETY * bound + REFERENCE_ROUNDING * scale
    bad = np.argwhere(~(err <= limit))
    assert not len(bad), [(prog.name, c, i, err[c, i], bound[c, i]) for c, i in bad[:5]]
    for a, (lo, hi) in zip(prog.outputs, spans):
        seen = np.any(0.05 * np.abs(want[:, lo:hi]) > limit[:, lo:hi], axis=1)
        assert seen.all(), (prog.name, a.name, "a 5 % error would pass", np.flatnonzero(~seen))
    tight = tightness(err, bound)[0]
    assert np.all(tight <= ratio), (prog.name, "bound over the error", tight)
    return err, bound, scale


def tightness(err, bound):
    """b_i / |error_i| over the components with a non-zero error and bound: per state its least
    (the component nearest its bound), and the median over every state and component."""
    seen = (err > 0) & (bound > 0)
    r = np.where(seen, bound / np.where(seen, err, 1), np.inf)
    return r.min(axis=1), np.median(r[seen])


def print_tightness(title, rows):
    """Per function: the largest error and bound, relative to the output's largest component
    (over components and states), b/error at the component nearest its bound (its worst state),
    and the median b/error."""
    print(f"\n{title}\n  {'function':<30} {'error':>9} {'bound':>9} {'b/err':>6} {'median':>6}")
    for name, (err, bound, scale) in rows.items():
        tight, median = tightness(err, bound)
        print(f"  {name:<30} {(err / scale).max():9.1e} {(bound / scale).max():9.1e} {tight.max():6.1f} "
              f"{median:6.1f}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_float_on_mcu_within_error_bound_of_double(case, tmp_path_factory):
    _, gen, states, inputs, _, text, _ = setup(case, tmp_path_factory)
    _, mod = built(case, CASES[case], **GEN_OPTIONS[case])      # the build of tests/test_generated_vs_reference.py
    printed = mcu.parse_output(text, np.float32)
    *regular, singular = range(len(states))
    assert len(regular) == STATES, "too few regular states among the draws"
    for p in gen.programs:          # q = 0: singular in both precisions, whatever their thresholds
        assert printed[p.name, singular, p.outputs[0].name][0] == int(p.returns_status), p.name
        if p.returns_status:
            with pytest.raises(SingularError):
                mod._call(p.name, *inputs[p.name][singular])
    rows = within_bounds(gen, printed, inputs, mod, regular)
    print_tightness(f"{case}: float on the Cortex-M4F against double, {STATES} states, per component "
                    "(the component nearest its bound; see the module docstring)", rows)


def within_bounds(gen, printed, inputs, mod, regular, ratio=RATIO):
    """Check 2 (:func:`check_components`, ``ratio``) of every program of ``gen`` on the ``regular``
    states: ``printed`` (:func:`soagen.targets.mcu.qemu.parse_output` of a firmware's run) against the
    double module ``mod``; -> ``{function: (|error|, bound, scale)}`` for :func:`print_tightness`."""
    rows = {}
    for p in gen.programs:
        assert all(printed[p.name, c, p.outputs[0].name][0] == 0 for c in regular), p.name
        got = np.array([np.concatenate([printed[p.name, c, a.name][1] for a in p.outputs]) for c in regular])
        want = [mod._call(p.name, *inputs[p.name][c]) for c in regular]
        want = np.array([np.concatenate([np.ravel(x) for x in (w if isinstance(w, list) else [w])]) for w in want])
        rows[p.name] = check_components(p, [inputs[p.name][c] for c in regular], got, want, ratio)
    return rows


#: the Cortex-M4F's fused multiply-adds (one rounding of a·b ± c): VFMA, VFMS, VFNMA, VFNMS
FUSED = re.compile(r"\svfn?m[as]\.f32\s")


def test_fma_contraction_without_std_c99(tmp_path_factory):
    """microcontrollers.md's note: the Panda's float C compiled for the Cortex-M4F (-Os) with
    ``-std=gnu11`` (GCC's -ffp-contract=fast, as with no ``-std``) has fused multiply-adds where the
    harness's ``-std=c99`` build has none, and less code; its outputs are not bit for bit the
    ``-std=c99`` build's, and every component is still within SAFETY × its bound of double."""
    _, gen, states, inputs, folder, text, _ = setup("panda", tmp_path_factory)
    _, mod = built("panda", CASES["panda"])
    tgt = mcu.TARGETS["cortex-m4f"]
    plain = mcu.compile_object(folder, "panda.c", tgt, "-Os")             # the harness's (setup's) object
    fused = folder / "panda_gnu11.o"
    flags = [f for f in mcu.COMMON if f not in ("-std=c99", "-ffp-contract=off")]
    mcu._run([mcu.CC, *tgt.flags, "-Os", "-std=gnu11", *flags, "-I", str(folder), "-c", str(folder / "panda.c"),
              "-o", str(fused)])

    def fused_and_text(obj):
        listing = subprocess.run(["arm-none-eabi-objdump", "-d", str(obj)], capture_output=True, text=True,
                                 check=True).stdout
        size = subprocess.run(["arm-none-eabi-size", str(obj)], capture_output=True, text=True, check=True).stdout
        return len(FUSED.findall(listing)), int(size.splitlines()[1].split()[0])

    (n_plain, text_plain), (n_fused, text_fused) = fused_and_text(plain), fused_and_text(fused)
    assert n_plain == 0 and n_fused > 0 and text_fused < text_plain, (n_plain, n_fused, text_plain, text_fused)
    objects = [mcu.compile_object(folder, "mcu_runtime.c", tgt, "-Os"), mcu.compile_object(folder, "harness.c", tgt,
                                                                                            "-Os"), fused]
    out = mcu.run_qemu(mcu.link_image(folder, objects, tgt, "-Os", folder / "harness_gnu11.elf"), tgt)
    printed, plain_printed = mcu.parse_output(out, np.float32), mcu.parse_output(text, np.float32)
    assert set(printed) == set(plain_printed)
    assert any(not np.array_equal(printed[k][1], plain_printed[k][1]) for k in printed)   # not bit for bit -std=c99
    # no ratio: a fused operation drops a rounding the bound counts, so an error may lie further below it
    rows = within_bounds(gen, printed, inputs, mod, range(len(states) - 1), ratio=np.inf)
    print_tightness(f"panda: -std=gnu11 (FMA) on the Cortex-M4F against double, {STATES} states", rows)


def test_panda_inverse_dynamics_fits_a_small_mcu(tmp_path_factory):
    """Panda inverse dynamics in float, Cortex-M4F, -Os: ≤ 16 KB flash, ≤ 1 KB stack."""
    folder = setup("panda", tmp_path_factory)[4]
    flash, stack = mcu.function_sizes(folder, "panda", mcu.TARGETS["cortex-m4f"], "-Os")["inverse_dynamics"]
    assert flash <= 16 * 1024 and stack <= 1024, (flash, stack)


@pytest.mark.parametrize("case", sorted(CASES))
def test_footprint_reports_are_current(case, tmp_path_factory):
    """generated/<robot>/footprint.md is what ``soagen footprint --example <robot>`` writes
    (the same programs as the emulated runs: every default function, float, and for the Panda
    the derivatives (``--derivatives``); the CLI itself is run in tests/test_cli_flags.py):
    flash and stack, and the instructions and estimated cycles of one call counted in QEMU."""

    robot, gen, _, _, folder, _, _ = setup(case, tmp_path_factory)
    d = derivative_setup(tmp_path_factory) if case in DERIVATIVE_CASES else None
    text = mcu.footprint_table(gen, case, folder, derivatives=d and (d["gen"], d["folder"]),
                               state=random_inputs(robot, np.random.default_rng(mcu.COUNT_SEED)))
    assert text == (ROOT / "generated" / case / "footprint.md").read_text(), "run `make footprint`"


@pytest.mark.parametrize("cpu,faults", [("cortex-m0", False), ("cortex-m3", True)])
def test_the_m0_machine_runs_armv6m_and_faults_on_armv7m(cpu, faults, tmp_path):
    """QEMU's microbit is a Cortex-M0: a division compiled for the M0 (a libgcc call) runs,
    the same compiled for the M3 (an ``sdiv``, ARMv7-M only) faults, so code for a larger
    core cannot pass as M0 code."""
    from soagen.targets.c99.emit import render_plain

    (tmp_path / "mcu_runtime.c").write_text(render_plain("mcu_runtime.c.j2"))
    (tmp_path / "microbit.ld").write_text(render_plain("microbit.ld.j2"))
    (tmp_path / "main.c").write_text("void soa_puts(const char *s);\n"
                                     "int main(void) { volatile int a = 7, b = 2; int c = a / b;\n"
                                     "    soa_puts(c == 3 ? \"divided\\n\" : \"wrong\\n\"); return 0; }\n")
    target = mcu.Target("m", ("-mcpu=" + cpu, "-mthumb", "-mfloat-abi=soft"), "microbit", "microbit.ld", 0, 0)
    objects = [mcu.compile_object(tmp_path, src, target, "-O2") for src in ("mcu_runtime.c", "main.c")]
    text = mcu.run_qemu(mcu.link_image(tmp_path, objects, target, "-O2", tmp_path / "main.elf"), target, timeout=60)
    assert ("fault" in text) == faults and ("divided" in text) != faults, text


def test_generated_c_needs_no_data_or_bss(tmp_path_factory):
    """The Panda's float C, compiled for the Cortex-M4F: no ``.data`` and no ``.bss`` (what the guide's
    "On a board" says: a vendor's start-up has nothing of soagen's to set up)."""
    folder = setup("panda", tmp_path_factory)[4]
    obj = mcu.compile_object(folder, "panda.c", mcu.TARGETS["cortex-m4f"], "-Os")
    text, data, bss = (int(x) for x in mcu._run(["arm-none-eabi-size", str(obj)]).stdout.splitlines()[1].split()[:3])
    assert text > 0 and data == 0 and bss == 0, (text, data, bss)


BOOT_MAIN = r"""#include <stdint.h>
void soa_puts(const char *s);
volatile uint32_t in_data = 0x12345678u;    /* .data: its value is in flash, copied at start-up */
volatile uint32_t in_bss;                   /* .bss: zeroed at start-up, whatever RAM held */
int main(void)
{
    soa_puts(in_data == 0x12345678u ? "data 12345678\n" : "data lost\n");
    soa_puts(in_bss == 0u ? "bss 0\n" : "bss not zeroed\n");
    return 0;
}
"""


@pytest.mark.parametrize("target", sorted(mcu.TARGETS))
def test_start_up_boots_as_a_board(target, tmp_path):
    """mcu_runtime.c and the linker script (the harness's) start a board: every section the image
    loads lies in flash, and booted from the flash image alone (``objcopy -O binary``, QEMU's
    generic loader, no ELF) with garbage in RAM where .data and .bss lie, main sees the .data
    variable's initial value and the .bss one zero; a stack that does not fit in RAM fails the link."""
    from soagen.targets.c99.emit import render_plain

    tgt = mcu.TARGETS[target]
    (tmp_path / "mcu_runtime.c").write_text(render_plain("mcu_runtime.c.j2"))
    (tmp_path / tgt.linker_script).write_text(render_plain(f"{tgt.linker_script}.j2"))
    (tmp_path / "main.c").write_text(BOOT_MAIN)
    objects = [mcu.compile_object(tmp_path, src, tgt, "-Os") for src in ("mcu_runtime.c", "main.c")]
    elf = mcu.link_image(tmp_path, objects, tgt, "-Os", tmp_path / "boot.elf")
    headers = mcu._run(["arm-none-eabi-objdump", "-h", str(elf)]).stdout.splitlines()
    loaded = {h.split()[1]: int(h.split()[4], 16) for h, flags in zip(headers, headers[1:])
              if h.split()[:1] and h.split()[0].isdigit() and "LOAD" in flags}     # section: its load address
    assert ".data" in loaded and all(lma < tgt.flash for lma in loaded.values()), loaded
    mcu._run(["arm-none-eabi-objcopy", "-O", "binary", str(elf), str(tmp_path / "flash.bin")])
    symbols = dict(line.split()[::-2] for line in mcu._run(["arm-none-eabi-nm", str(elf)]).stdout.splitlines()
                   if line.count(" ") == 2)
    garbage = [a for name in ("in_data", "in_bss")
               for a in ("-device", f"loader,addr=0x{symbols[name]},data=0xdeadbeef,data-len=4")]
    res = mcu._run(["qemu-system-arm", "-M", tgt.machine, "-nographic", "-monitor", "none", "-serial", "none",
                    "-semihosting-config", "enable=on,target=native",
                    "-device", f"loader,file={tmp_path / 'flash.bin'},addr=0", *garbage], timeout=60)
    assert res.stderr + res.stdout == "data 12345678\nbss 0\n"
    with pytest.raises(RuntimeError, match="RAM: .data, .bss and the stack"):     # a stack RAM cannot hold
        mcu._run([mcu.CC, *tgt.flags, "-Os", "-nostartfiles", f"-Wl,--defsym=__stack_size={tgt.ram}", "-T",
                  str(tmp_path / tgt.linker_script), *map(str, objects), "-o", str(tmp_path / "big.elf"), "-lc",
                  "-lnosys"])


def test_readme_quotes_the_panda_footprint():
    """The guide's MCU page (docs/guide/microcontrollers.md) quotes generated/panda/footprint.md
    (M4F -Os and M0 -Os)."""

    rows = {}
    for line in (ROOT / "generated" / "panda" / "footprint.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in ("inverse_dynamics", "forward_dynamics"):     # the first table's rows (bytes)
            rows.setdefault(cells[0], [[int(x) for x in c.split(" / ")] for c in cells[1:]])
    readme = " ".join((ROOT / "docs" / "guide" / "microcontrollers.md").read_text().split())

    def n(x):     # the guide writes 13 716 for 13716
        return f"{x // 1000} {x % 1000:03d}" if x >= 10000 else str(x)

    m4, m0 = 0, 2     # columns: cortex-m4f -Os, cortex-m4f -O2, cortex-m0 -Os, cortex-m0 -O2
    code, frame, image = rows["inverse_dynamics"][m4]
    assert f"{code} bytes of code, a {frame}-byte frame, a {image}-byte firmware" in readme
    code, frame, image = rows["forward_dynamics"][m4]
    assert f"{code} B / {frame} B / {n(image)} B" in readme
    want = " and ".join(" / ".join(n(x) for x in rows[f][m0]) for f in ("inverse_dynamics", "forward_dynamics"))
    assert f"on the Cortex-M0 (`-Os`) {want}" in readme
    for f in mcu.DERIVATIVES:       # the second table: Cortex-M4F -Os only
        line = next(x for x in (ROOT / "generated" / "panda" / "footprint.md").read_text().splitlines()
                    if x.startswith(f"| {f} |"))
        code, frame, image = (int(x) for x in line.split("|")[2].split(" / "))
        assert f"`{f}` {n(code)} B / {frame} B / {n(image)} B" in readme, f


# --------------------------------------------------------------------------- the dynamics' derivatives
# Panda only (7 dof, the size MPC on an MCU meets), Cortex-M4F at -Os: each function is 50-80 KB of
# code, so one compile of the three is the cost; the M0 and -O2 runs of the functions above cover the
# emitter's float C, which the derivatives share.  Check 2 as above, against the double-precision numpy
# reference (soagen.reference): every component of every output within SAFETY × its bound b_i, 5 % of each
# output beyond it, b/error ≤ RATIO at the component nearest its bound.  Errors 3e-7 to 1.1e-5 of the output's
# largest component against bounds 7.5e-6 to 3.3e-4; b/error 6.5 to 11 there, median 44 to 47.
DERIVATIVE_CASES = ("panda",)
DT = 0.01
_derivatives = {}


def derivative_setup(tmp_path_factory):
    """(robot, float programs, states, inputs, folder, output of the M4F -Os firmware) of the Panda's
    derivatives; the C is first cross-compiled with tests/test_strict_c.py's warnings as errors."""
    if not _derivatives:
        from tests.test_strict_c import STRICT

        robot = robots.example("panda")
        gen = generate(robot, Options(precision="float", functions=mcu.DERIVATIVES), "panda")
        rng, states = np.random.default_rng(12), []
        for _ in range(STATES):
            q, qd, _, tau = robot.random_state(rng)
            states.append({"q": f32(q), "qd": f32(qd), "tau": f32(tau), "qdd": f32(rng.uniform(-1, 1, robot.nv)),
                           "dt": f32([DT])})
        inputs = {p.name: [[s[a.name] for a in p.inputs] for s in states] for p in gen.programs}
        folder = mcu.write_harness(gen, inputs, tmp_path_factory.mktemp("mcu-derivatives"))
        tgt = mcu.TARGETS["cortex-m4f"]
        # the object build_images links (same flags and path: compile_object keeps it), with warnings as errors
        strict = [x for x in STRICT if x not in ("-std=c99", "-O1", "-c")]
        res = subprocess.run([mcu.CC, *tgt.flags, "-Os", *mcu.COMMON, *strict, "-I", str(folder), "-c",
                              str(folder / "panda.c"), "-o", str(folder / "panda_cortex-m4f-Os.o")],
                             capture_output=True, text=True, check=False)
        assert res.returncode == 0 and not res.stderr, res.stderr
        text = "".join(mcu.run_qemu(elf, tgt) for elf in mcu.build_images(gen, inputs, folder, tgt, "-Os", True))
        _derivatives.update(robot=robot, gen=gen, states=states, inputs=inputs, folder=folder, text=text)
    return _derivatives


def test_panda_derivatives_on_mcu_within_error_bound_of_double(tmp_path_factory):
    """The Panda's ∂τ, ∂q̈ (with q̈, M⁻¹) and linearized step in float on the Cortex-M4F (-Os) against
    double, per component within SAFETY × the first-order bound b_i (see the module docstring), and
    they fit the M4F at -Os."""
    d = derivative_setup(tmp_path_factory)
    assert "fault" not in d["text"]
    printed = mcu.parse_output(d["text"], np.float32)
    rows = {}
    for p in d["gen"].programs:
        cases = d["inputs"][p.name]
        assert all(printed[p.name, c, a.name][0] == 0 for c in range(len(cases)) for a in p.outputs), p.name
        got = np.array([np.concatenate([printed[p.name, c, a.name][1] for a in p.outputs])
                        for c in range(len(cases))])
        want = np.array([np.concatenate([np.ravel(w) for w in getattr(ref, p.name)(d["robot"], *case)])
                         for case in cases])
        rows[p.name] = check_components(p, cases, got, want)
    print_tightness("panda derivatives: float on the Cortex-M4F against double, per component", rows)
    sizes = mcu.function_sizes(d["folder"], "panda", mcu.TARGETS["cortex-m4f"], "-Os")
    assert all(sizes[f][0] <= 256 * 1024 for f in mcu.DERIVATIVES), sizes
