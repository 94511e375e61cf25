"""Long functions cut into parts (:mod:`soagen.program.parts`): the cut keeps every
statement once and in order, passes every value a later part reads through ``w``,
and the cut C computes what the reference computes.

The thresholds are lowered here so that a small robot's functions are cut into many
parts (guards, multi-dof joints and every default function included)."""
from __future__ import annotations

import contextlib
import functools

import soagen
from soagen.check import check_module
from soagen.codegen import generate
from soagen.program import parts
from soagen.program.statements import Banner, Guard
from tests.support import assert_checked
from tests.support.robots import random_robot

PART, ABOVE = 40, 60      # statements per part, and the length above which a function is cut


@contextlib.contextmanager
def small_parts(part=PART, above=ABOVE):
    saved = parts.PART_STATEMENTS, parts.SPLIT_ABOVE
    parts.PART_STATEMENTS, parts.SPLIT_ABOVE = part, above
    try:
        yield
    finally:
        parts.PART_STATEMENTS, parts.SPLIT_ABOVE = saved


#: dynamics, kinematics, Λ(0) (guards) and derivatives (∂θ̈: a loop over columns after the outputs)
FUNCTIONS = ["inverse_dynamics", "mass_matrix", "forward_dynamics", "jacobian", "os_inertia",
             "inverse_dynamics_derivatives", "forward_dynamics_derivatives"]


def robot():
    """A floating base carrying a tree with a spherical joint and two tips."""
    return random_robot(21, 6, tree=True, tips=2, spherical_fraction=0.2, floating_base=True)


@functools.cache
def cut_generated():
    """:class:`soagen.codegen.Generated` of FUNCTIONS on :func:`robot`, its C text cut into small parts:
    recorded and printed once for the two tests below that read programs or C text (the programs do not
    depend on the thresholds, which act when the C is printed)."""
    with small_parts():
        return generate(robot(), soagen.Options(functions=FUNCTIONS), "cut")


def reads(item):
    return item.value.free_symbols | item.bound.free_symbols if isinstance(item, Guard) else item[1].free_symbols


def test_cut_keeps_statements_and_passes_every_crossing_value():
    gen = cut_generated()
    cut = 0
    for prog in gen.programs:
        found, slots = parts.split(prog, PART, ABOVE)
        assert [item for p in found for item in p.body] == prog.body       # every item once, in order
        statements = [sum(isinstance(i, tuple) for i in p.body) for p in found]
        if sum(statements) <= ABOVE:
            assert len(found) == 1 and slots == 0
            continue
        cut += 1
        assert max(statements) <= PART and max(statements) - min(statements) <= 1, statements
        inputs = {s for a in prog.inputs for s in a.symbols}
        stored = {}                                   # slot -> symbol, filled part by part
        for k, part in enumerate(found):
            loaded = dict(part.loads)
            assert all(stored.get(slot) == sym for sym, slot in part.loads), (prog.name, k)
            known = inputs | set(loaded)
            items = part.body + ([None] if k == len(found) - 1 else [])
            for item in items:
                needs = ({s for a in prog.outputs for e in a.symbols for s in e.free_symbols}
                         | {s for loop in prog.loops for s in loop.outer_reads()} if item is None
                         else set() if isinstance(item, Banner) else reads(item))
                assert needs <= known, (prog.name, k, needs - known)
                if isinstance(item, tuple):
                    known.add(item[0])
            defined = {i[0] for i in part.body if isinstance(i, tuple)}
            assert {sym for sym, _ in part.stores} <= defined
            stored.update({slot: sym for sym, slot in part.stores})
        assert sorted(stored) == list(range(slots))          # every slot written once
    assert cut == len(FUNCTIONS), cut


def test_cut_module_matches_reference(tmp_path):
    """The functions cut into parts of 40 statements equal the reference (30 states); the
    cut shows in the C (parts, the guarded ones returning a status)."""
    target = robot()
    with small_parts():
        mod = soagen.build(target, soagen.Options(optimize="O0", functions=FUNCTIONS), cache_dir=tmp_path)
    source = (mod.path / f"{mod.name}.c").read_text()
    assert source.count("_part0(") == 3 * len(FUNCTIONS) and "w[" in source   # defined, declared, called
    assert f"int {mod.name}_os_inertia_part" in source            # a part that holds a guard
    results = check_module(target, mod, samples=30, seed=3)
    assert sorted(results) == sorted(FUNCTIONS)
    assert_checked(target, results, 30)


def test_cut_functions_are_counted_whole_in_the_c_text():
    """``count_c`` adds a cut function's parts into it and counts no load from ``w`` as a
    statement: the C text's counts equal the program's (``soagen opcount`` checks this)."""
    from soagen.reports.opcount import count_c

    gen = cut_generated()
    source = gen.csource.source
    assert source.count("_part1(") >= len(FUNCTIONS) and "= w[" in source
    in_c = count_c(source)
    assert sorted(in_c) == sorted(f"cut_{p.name}" for p in gen.programs)
    for p in gen.programs:
        assert in_c[f"cut_{p.name}"] == {k: p.ops[k] for k in in_c[f"cut_{p.name}"]}, p.name
