"""Robot → programs → C text, with a timing per stage (the CLI prints it)."""
from __future__ import annotations

import os
import re
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context

from . import recursion
from .emit import CSource, emit


@dataclass
class Generated:
    """Everything the generator made for one robot.

    programs : list of Program   finished straight-line programs
    csource : CSource            header, source and cdef text
    timings : dict               seconds: "record" and "cse" summed over functions
                                 (CPU time in the workers), "generate (wall)", "emit";
                                 each program's own record + cse time is ``program.seconds``
    """

    programs: list
    csource: CSource
    timings: dict = field(default_factory=dict)


def c_name(name):
    """A C identifier from a robot name (``ur5-arm`` → ``ur5_arm``)."""
    out = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return out if out and not out[0].isdigit() else "r_" + out


def _one_program(job):
    """Record and finish one program; runs in a worker process."""
    target, name, precision, trig_inputs = job
    t0 = time.perf_counter()
    if name is None:
        from .closed_chain import program
        from .reference import PIVOT_RATIO

        prog = program(target, PIVOT_RATIO[precision])
    else:
        prog = recursion.make_program(target, name, precision, trig_inputs)
    t1 = time.perf_counter()
    prog.finish()
    t2 = time.perf_counter()
    prog.seconds = t2 - t0
    return prog, t1 - t0, t2 - t1


def jobs():
    """Worker processes for generation: ``$SOAGEN_JOBS`` or the number of CPUs."""
    return max(1, int(os.environ.get("SOAGEN_JOBS") or os.cpu_count() or 1))


def generate(robot, name=None, precision="double", progress=None, functions=None, trig_inputs=False,
             variants=()):
    """Run the symbolic recursions, clean the programs and emit C.

    Each C function is an independent program, recorded and finished in its
    own worker process (``$SOAGEN_JOBS``, default one per CPU); the output
    does not depend on the number of workers.

    Parameters
    ----------
    robot : Robot or ClosedChain
    name : str, optional   file stem / function prefix (default: robot name)
    precision : {"double", "float"}
    progress : callable, optional   called as ``progress(done, total, label)``
    functions : list of str, optional   generate only these C functions (default: all)
    trig_inputs : bool   take cos/sin of the joint angles as inputs ``cq``, ``sq``
        (after the other inputs) instead of calling cos/sin, for targets with their own trig
    variants : iterable of str or None   also the algorithm variants of these families
        (:data:`soagen.recursion.VARIANTS`; None: every family)
    """
    from .closed_chain import ClosedChain

    name = c_name(name or robot.name)
    names = [None] if isinstance(robot, ClosedChain) else recursion.function_names(robot, functions, variants)
    # a family's function is picked from the programs of its algorithms, each its own job
    families = [f for f in names if f in recursion.CHOICES]
    candidates = [a for f in families for _, a in recursion.CHOICES[f]]
    recorded = [fn for fn in dict.fromkeys(names + candidates) if fn not in families]
    work = [(robot, fn, precision, trig_inputs) for fn in recorded]
    t0 = time.perf_counter()
    results = [None] * len(work)
    if progress:
        progress(0, len(work), "")
    if jobs() > 1 and len(work) > 1:
        with ProcessPoolExecutor(min(jobs(), len(work)), mp_context=get_context("fork")) as pool:
            futures = {pool.submit(_one_program, job): i for i, job in enumerate(work)}
            for done, fut in enumerate(as_completed(futures), start=1):
                results[futures[fut]] = fut.result()
                if progress:
                    progress(done, len(work), results[futures[fut]][0].name)
    else:
        for i, job in enumerate(work):
            results[i] = _one_program(job)
            if progress:
                progress(i + 1, len(work), results[i][0].name)
    by_name = {r[0].name: r[0] for r in results}
    for family in families:
        by_name[family] = recursion.as_family(family, by_name)
    programs = [r[0] for r in results] if isinstance(robot, ClosedChain) else [by_name[fn] for fn in names]
    timings = {"record": sum(r[1] for r in results), "cse": sum(r[2] for r in results),
               "generate (wall)": time.perf_counter() - t0}
    t0 = time.perf_counter()
    csource = emit(robot, programs, name, precision)
    timings["emit"] = time.perf_counter() - t0
    return Generated(programs, csource, timings)
