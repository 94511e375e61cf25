"""Robot → programs → C text, with a timing per stage (the CLI prints it)."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from . import recursion
from .emit import CSource, emit


@dataclass
class Generated:
    """Everything the generator made for one robot.

    programs : list of Program   finished straight-line programs
    csource : CSource            header, source and cdef text
    timings : dict               seconds per stage ("record", "cse", "emit")
    """

    programs: list
    csource: CSource
    timings: dict = field(default_factory=dict)


def c_name(name):
    """A C identifier from a robot name (``ur5-arm`` → ``ur5_arm``)."""
    out = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return out if out and not out[0].isdigit() else "r_" + out


def target_programs(target, precision, functions=None):
    """Programs of a robot, or the single program of a closed chain."""
    from .closed_chain import ClosedChain, program
    from .reference import PIVOT_RATIO

    if isinstance(target, ClosedChain):
        return [program(target, PIVOT_RATIO[precision])]
    return recursion.all_programs(target, precision, functions)


def generate(robot, name=None, precision="double", progress=None, functions=None):
    """Run the symbolic recursions, clean the programs and emit C.

    Parameters
    ----------
    robot : Robot
    name : str, optional   file stem / function prefix (default: robot name)
    precision : {"double", "float"}
    progress : callable, optional   called as ``progress(done, total, label)``
    functions : list of str, optional   generate only these C functions (default: all)
    """
    name = c_name(name or robot.name)
    timings = {}
    t0 = time.perf_counter()
    programs = target_programs(robot, precision, functions)
    timings["record"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i, prog in enumerate(programs):
        if progress:
            progress(i, len(programs), prog.name)
        prog.finish()
    if progress:
        progress(len(programs), len(programs), "done")
    timings["cse"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    csource = emit(robot, programs, name, precision)
    timings["emit"] = time.perf_counter() - t0
    return Generated(programs, csource, timings)
