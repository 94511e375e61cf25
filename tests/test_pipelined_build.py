"""The pipelined build: each function is printed and compiled as soon as its program is final,
while the others record, within the build's CPU slots (soagen.targets.c99.compile.pipelined)."""
from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import soagen
from soagen import codegen
from soagen.targets.c99.emit import Emitter, emit
from soagen.targets.common import compiler
from soagen.targets.common.compiler import CompileQueue, Slots

FAMILIES = ("forward_dynamics", "mass_matrix_inverse")


@pytest.fixture(scope="module")
def puma():
    return soagen.robots.example("puma560")


def test_ready_hands_over_each_program_once_a_family_after_its_candidates(puma, tmp_path, monkeypatch):
    """``programs(ready=...)`` gives every function of the answer once, in this process, a family
    function only after every candidate it was picked from; the answer is the one without ``ready``."""
    monkeypatch.setenv("SOAGEN_CACHE", str(tmp_path))       # no remembered pick: every candidate records
    options = soagen.Options(functions=("gravity", *FAMILIES, "mass_matrix"))
    seen, order = [], []
    one = codegen._one_program
    monkeypatch.setattr(codegen, "_one_program", lambda job: order.append(job[1]) or one(job))
    monkeypatch.setenv("SOAGEN_JOBS", "1")
    programs, _ = codegen.programs(puma, options, ready=lambda p: seen.append((p.name, list(order))))
    assert [name for name, _ in seen if name in FAMILIES] and sorted(n for n, _ in seen) == sorted(options.functions)
    for name, recorded_before in seen:
        if name in FAMILIES:
            candidates = {s.name for _, s in soagen.functions.candidates(name)}
            assert candidates <= set(recorded_before), name
    monkeypatch.setenv("SOAGEN_CACHE", str(tmp_path / "other"))
    plain, _ = codegen.programs(puma, options)
    assert emit(puma, programs, "r").source == emit(puma, plain, "r").source


def test_units_printed_one_by_one_are_the_files_of_emit(puma):
    """The Emitter's units, printed as programs come (no header needed by them), and its files
    equal emit's of the same programs; each unit declares the function its family function calls."""
    programs, _ = codegen.programs(puma, soagen.Options(variants=None, functions=("mass_matrix_inverse",
                                                                                 "mass_matrix_inverse_cholesky")))
    emitter = Emitter(puma, "r")
    by_name = {p.name: p for p in programs}
    units = {p.name: emitter.function(p, by_name.get(p.calls)) for p in reversed(programs)}
    assert emitter.csource(programs).source == emit(puma, programs, "r").source
    family = by_name["mass_matrix_inverse"]
    assert family.calls == "mass_matrix_inverse_cholesky"
    text = units["mass_matrix_inverse"][0][1]
    assert '#include "r.h"' not in text and "void r_mass_matrix_inverse_cholesky(" in text


def test_a_waiting_compile_takes_the_next_slot_before_a_recording():
    slots = Slots(1)
    assert slots.acquire()                       # a recording holds the only slot
    got = []
    waiter = threading.Thread(target=lambda: (slots.__enter__(), got.append("compile")), daemon=True)
    waiter.start()
    time.sleep(0.1)
    assert not got
    slots.release()                              # freed: the waiting compile's, even to a recording
    assert not slots.acquire()                   # that asks before the compile's thread has woken
    waiter.join(5)
    assert got == ["compile"] and not slots.acquire()
    slots.release()
    assert slots.acquire()


def test_a_failing_unit_fails_the_queue(tmp_path):
    queue = CompileQueue(tmp_path, ["-O0"])
    queue.add([("good", "int good(void) { return 1; }\n")])
    queue.add([("bad", "int bad(void) { return }\n")])
    with pytest.raises(RuntimeError, match="bad.c"):
        queue.wait()


def test_a_long_unit_gets_gccs_long_unit_flags_and_compiles(tmp_path, monkeypatch):
    """A unit over LONG_UNIT_STATEMENTS statements is compiled with GCC_LONG_UNIT_ARGS when the
    compiler is gcc (so gcc must accept them); a short one with the queue's flags alone."""
    def unit(statements):
        body = "".join(f"    const double t{i + 1} = t{i} * 0.5 + {i};\n" for i in range(statements))
        return f"double f(double t0)\n{{\n{body}    return t{statements};\n}}\n"

    used = {}
    real = compiler.compile_object

    def spy(source, obj, folder, args, seconds=None):
        used[source.stem] = list(args)
        return real(source, obj, folder, args, seconds)

    monkeypatch.setattr(compiler, "compile_object", spy)
    queue = CompileQueue(tmp_path, ["-O0"])
    queue.add([("long", unit(compiler.LONG_UNIT_STATEMENTS + 1)), ("short", unit(100))])
    objects = queue.wait()
    assert objects["long"].is_file() and objects["short"].is_file()
    gcc = compiler.is_gcc(os.environ.get("CC", "cc"))
    assert used == {"long": ["-O0", *(compiler.GCC_LONG_UNIT_ARGS if gcc else [])], "short": ["-O0"]}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_pipelined_build_matches_the_reference(puma, tmp_path, monkeypatch, jobs):
    """One slot: the recordings and the compiles take turns; two: the recordings in a pool of two
    worker processes (their programs pickled back), sharing the slots with the compiles; the module
    is right (the suite's xdist workers build with one, tests/conftest.py)."""
    monkeypatch.setenv("SOAGEN_JOBS", jobs)
    mod = soagen.build(puma, functions=["mass_matrix", "forward_dynamics"], optimize="O0", cache_dir=tmp_path)
    q, qd, tau = np.linspace(-1, 1, 6), np.linspace(0.5, -0.5, 6), np.linspace(-2, 2, 6)
    want = soagen.reference.forward_dynamics(puma, q, qd, tau)
    assert np.max(np.abs(mod.forward_dynamics(q, qd, tau) - want)) < 1e-12 * np.max(np.abs(want))
    assert mod.timings["compile"] > 0 and mod.timings["total (wall)"] >= mod.timings["generate (wall)"]


def test_fast_sympy_answers_are_sympys_on_every_term_of_real_programs(puma):
    """coeff_mul and negative_term (the CSE's, the printer's and the op count's reads of a term)
    answer as ``as_coeff_mul`` and ``could_extract_minus_sign`` on every term of the Puma's programs,
    and the transport rebuilds every statement equal, with the same hash."""
    import pickle

    import sympy as sp

    from soagen.program import transport
    from soagen.program.statements import coeff_mul, negative_term

    programs, _ = codegen.programs(puma, soagen.Options(functions=("os_inertia", "forward_dynamics")))
    terms = {t for p in programs for _, e in p.statements() for t in sp.Add.make_args(e)}
    extra = {-sp.Float(0.25) * sp.Symbol("a") * sp.Symbol("b"), sp.Rational(-3, 2) * sp.Symbol("a"),
             sp.Float(-0.5) * sp.Symbol("a"), -sp.Symbol("a"), sp.Float(2.5) * sp.Symbol("a") * sp.Symbol("b")}
    floats = [t for t in terms | extra if t.is_Mul and t.args[0].is_Float]
    assert any(t.args[0] < 0 for t in floats) and any(t.args[0] > 0 for t in floats)
    for t in terms | extra:
        assert coeff_mul(t) == t.as_coeff_mul(), t
        assert negative_term(t) == t.could_extract_minus_sign(), t
    for p in programs:
        back = pickle.loads(transport.dumps(p))
        assert [(s, e, hash(e)) for s, e in back.statements()] == [(s, e, hash(e)) for s, e in p.statements()]
