"""A long straight-line program cut into consecutive parts, for compilers whose time
grows faster than the length of one function.

gcc's optimizers (most of the time in the register allocator's hard-register
assignment) take time that grows faster than linearly in a function's length: at -O3, a
derivative function of some 20 000 statements can take gcc minutes and gigabytes.  Cut
into parts of :data:`PART_STATEMENTS` statements, each its own C function and
translation unit, the same statements compile in a fraction of that time and memory
(summed over the parts, which a build compiles two at a time) and run somewhat longer.
docs/parts.md (``python benchmarks/parts.py --markdown docs/parts.md``) measures it on
solo12's contact derivatives and four functions of the TALOS, whole and cut at three part
sizes: compile seconds, gcc's peak memory and run time.  A value computed in one part and
read in a later one goes through a scratch array ``w`` on the caller's stack: the part
that computes it stores it, each later part that reads it loads it once, and its slot is
reused once the last of them has loaded it.  Shorter functions stay whole, which runs
faster (those loads and stores are memory operations the whole function does not do).

The cut changes no statement and no operation count; a store and a load round
nothing, so the results differ from the uncut function's only where the compiler
fused a multiply and an add that now lie in two parts.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from soagen.program.statements import Banner, Guard

#: a program with more statements than this is cut; shorter ones are compiled whole, with the
#: long-unit flags, which runs faster than cut (docs/parts.md: compile time, memory and run time of
#: both)
SPLIT_ABOVE = 22000
#: statements per part, the last part (which also writes the outputs) included
PART_STATEMENTS = 1000


@dataclass
class Part:
    """One part of a program.

    Attributes
    ----------
    body : list              the program's items (statements, guards, banners) of this part, in order
    loads : list of (Symbol, int)   values of earlier parts this part reads, with their slot in ``w``
    stores : list of (Symbol, int)  values of this part later parts read, with their slot in ``w``
    """

    body: list
    loads: list = field(default_factory=list)
    stores: list = field(default_factory=list)


def reads(item):
    """The symbols a body item reads."""
    if isinstance(item, Guard):
        return item.value.free_symbols | item.bound.free_symbols
    return item[1].free_symbols


def split(prog, part_statements=None, split_above=None):
    """Cut the finished ``prog`` into parts; -> (parts, slots).

    Parameters
    ----------
    prog : Program             finished (CSE done, dead code removed)
    part_statements : int      statements per part (default :data:`PART_STATEMENTS`)
    split_above : int          programs with at most this many statements stay whole
                               (default :data:`SPLIT_ABOVE`)

    Returns
    -------
    parts : list of Part       one Part (no loads, no stores) when the program stays whole;
                               the outputs are written after the last part
    slots : int                length of the scratch array ``w``
    """
    part_statements = part_statements or PART_STATEMENTS
    split_above = SPLIT_ABOVE if split_above is None else split_above
    statements = sum(isinstance(item, tuple) for item in prog.body)
    if statements <= split_above:
        return [Part(list(prog.body))], 0
    count = -(-statements // part_statements)
    bodies, seen = [[] for _ in range(count)], 0
    for item in prog.body:                        # statement i in part i·count // statements: even parts
        bodies[min(seen * count // statements, count - 1)].append(item)
        seen += isinstance(item, tuple)
    home = {}                                     # Symbol -> index of the part that computes it
    for k, body in enumerate(bodies):
        for item in body:
            if isinstance(item, tuple):
                home[item[0]] = k
    crossing = [[] for _ in bodies]               # per part: the earlier parts' values it reads, first read first
    last_read = {}                                # Symbol -> the last part that reads it

    def read(sym, k):
        h = home.get(sym)
        if h is None or h == k or last_read.get(sym) == k:
            return
        crossing[k].append(sym)
        last_read[sym] = k

    for k, body in enumerate(bodies):
        for item in body:
            if not isinstance(item, Banner):
                for sym in sorted(reads(item), key=str):
                    read(sym, k)
    for arg in prog.outputs:
        for e in arg.symbols:
            for sym in sorted(e.free_symbols, key=str):
                read(sym, len(bodies) - 1)
    for loop in prog.loops:                       # loops run after the outputs, in the calling function
        for sym in sorted(loop.outer_reads(), key=str):
            read(sym, len(bodies) - 1)
    # slots: a value holds its slot from the end of its part to the start of the last part that
    # reads it; a value stored by that part or a later one may take the slot then
    slot_of, free, slots = {}, [], 0              # free: heap of (first part that may store, slot)
    stored = [sorted((s for s in last_read if home[s] == k), key=lambda s: prog.names.get(s, str(s)))
              for k in range(len(bodies))]
    for k in range(len(bodies)):
        for sym in stored[k]:
            if free and free[0][0] <= k:
                _, slot = heapq.heappop(free)
            else:
                slot, slots = slots, slots + 1
            slot_of[sym] = slot
            heapq.heappush(free, (last_read[sym], slot))
    parts = [Part(body, [(sym, slot_of[sym]) for sym in crossing[k]],
                  sorted(((sym, slot_of[sym]) for sym in stored[k]), key=lambda pair: pair[1]))
             for k, body in enumerate(bodies)]
    return parts, slots
