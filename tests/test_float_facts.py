"""sympy's Floats answering is_zero and their sign directly while a program is recorded
(:mod:`soagen.program.float_facts`): the same answers, the same programs, no deduction, and
sympy as it was afterwards."""
from __future__ import annotations

import contextlib
import sys

import pytest
import sympy as sp

import soagen
from soagen import codegen
from soagen.program import statements
from soagen.program.float_facts import FACTS, direct_float_facts
from tests.support.robots import random_robot

VALUES = [0.0, -0.0, 5e-324, -5e-324, 1.5, -2.25, 1e300, -1e300, float("inf"), float("-inf")]


def _answers(numbers):
    return [[getattr(x, f"is_{fact}") for fact in FACTS] for x in numbers]


def test_the_answers_are_sympys():
    """Each fact of fresh Floats (constants, and sums and products of them as Mul and Add build)
    inside the context equals sympy's own answer outside it."""
    def numbers():
        xs = [sp.Float(v) for v in VALUES]
        return xs + [xs[4] * xs[5], xs[4] + xs[5], xs[6] * xs[6], xs[2] * xs[3], xs[4] - xs[4]]

    want = _answers(numbers())
    assert {a for row in want for a in row} == {True, False}
    with direct_float_facts():
        assert _answers(numbers()) == want
    assert _answers(numbers()) == want


def test_sympy_is_as_it_was_after_it_even_after_an_error():
    before = {fact: sp.Float.__dict__.get(f"is_{fact}") for fact in FACTS}
    with pytest.raises(RuntimeError), direct_float_facts():
        assert all(f"is_{fact}" in sp.Float.__dict__ for fact in FACTS)
        raise RuntimeError
    assert {fact: sp.Float.__dict__.get(f"is_{fact}") for fact in FACTS} == before
    x = sp.Float(2.5)
    assert x.is_zero is False and x._assumptions.get("zero") is False      # sympy's cache back


def test_recording_deduces_no_float_facts_and_makes_the_same_program(monkeypatch):
    """A recording in this process (one job: codegen.record and Program.finish each under the
    context) deduces no fact of a Float, and its statements equal those recorded without it."""
    facts = sys.modules["sympy.core.facts"]
    deduced = []
    original = facts.FactKB.deduce_all_facts

    def counting(self, new_facts):
        deduced.extend(new_facts)
        return original(self, new_facts)

    monkeypatch.setattr(facts.FactKB, "deduce_all_facts", counting)
    robot = random_robot(7, 6)
    options = soagen.Options(functions=("os_bias",))
    spec = codegen.F.BY_NAME["os_bias"]
    with monkeypatch.context() as m:                           # sympy's own way: the context a no-op
        for module in (codegen, statements):
            m.setattr(module, "direct_float_facts", contextlib.nullcontext)
        plain = codegen.record(spec, robot, options).finish()
    assert len(deduced) > 1000                                  # sympy's way: thousands of deductions
    deduced.clear()
    monkeypatch.setenv("SOAGEN_JOBS", "1")
    (quick,), _ = codegen.programs(robot, options)
    assert len(deduced) < 20
    assert [(str(s), str(e)) for s, e in quick.statements()] == [(str(s), str(e)) for s, e in plain.statements()]
    assert quick.ops == plain.ops


@pytest.mark.parametrize("preset, expected", [(None, 100000), ("500", 500)])
def test_importing_soagen_sizes_sympys_cache_unless_set(preset, expected):
    """``import soagen`` sets ``SYMPY_CACHE_SIZE`` to 100 000 before sympy is imported (recording
    memoises more of its products and sums, docs/sympy_cache.md); a size the user set is kept."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "SYMPY_CACHE_SIZE"}
    if preset is not None:
        env["SYMPY_CACHE_SIZE"] = preset
    code = ("import sys, soagen; assert 'sympy' not in sys.modules; "
            "import sympy.core.cache as c; print(c.SYMPY_CACHE_SIZE)")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
    assert int(out) == expected
