"""Robot → programs: each catalogue function's maker run on symbols, finished into a
straight-line program (and, for :func:`generate`, emitted as C99), with a timing per stage.

A target is a :class:`~soagen.model.robot.Robot` or a
:class:`~soagen.model.closed_chain.ClosedChain`: both offer ``name``, ``parts`` and
``fingerprint()``; the catalogue gives the functions it can have
(:func:`soagen.functions.specs`) and the values of its size keys (:func:`soagen.functions.sizes`).
"""
from __future__ import annotations

import copy
import pickle
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context

from soagen import functions as F
from soagen.options import Options, jobs
from soagen.program import transport
from soagen.program.float_facts import direct_float_facts
from soagen.program.statements import Program
from soagen.targets.c99.emit import CSource, emit
from soagen.targets.common.inert import c_name


@dataclass
class Generated:
    """Everything the generator made for one target.

    programs : list of Program   finished straight-line programs, in header order
    csource : CSource            header, source and cdef text
    timings : dict               seconds: "record" and "cse" summed over functions
                                 (CPU time in the workers), "generate (wall)", "emit";
                                 each program's own record + cse time is ``program.seconds``
    """

    programs: list
    csource: CSource
    timings: dict = field(default_factory=dict)


def record(spec, target, options=Options()):
    """Record (not yet finish) the program of ``spec`` for ``target``: inputs and
    outputs from the catalogue, statements from the spec's maker (sympy's Floats answering
    directly: :func:`~soagen.program.float_facts.direct_float_facts`)."""
    cites = F.citations(spec, ascii=True)
    prog = Program(spec.name, f"{spec.doc} {cites}" if cites else spec.doc, options)
    inputs = [prog.input(a, F.size((F.ARGUMENTS[a][0],), F.sizes(target)), F.ARGUMENTS[a][1]) for a in spec.inputs]
    if options.parameters == "inputs":
        from soagen.passes.linear_in_parameters import parameter_inputs
        parameter_inputs(prog, target)
    with direct_float_facts():
        values = spec.make(prog, target, *inputs)
    for out, exprs in zip(spec.outputs, values):
        prog.output(out.name, exprs, out.doc)
    return prog


def make_program(target, name, options=Options()):
    """The finished program of the function ``name``; for a family function
    whose algorithm is picked, the cheapest candidate's, renamed."""
    spec = {s.name: s for s in F.specs(target)}[name]
    if spec.maker is not None:
        return record(spec, target, options).finish()
    return pick(spec, {s.name: record(s, target, options).finish() for _, s in F.candidates(spec.family)})


def pick(spec, programs, generated=()):
    """The program of the family function ``spec`` from the finished programs of
    its candidates (``{C name: Program}``): a copy of the one with the lowest
    :func:`soagen.functions.cost` (the first on ties), named as the family, its
    ``algorithm`` the label.  When the chosen algorithm's own function is among
    ``generated`` (the same file has it), the family function only calls it."""
    choices = F.candidates(spec.family)
    label, best = None, None
    for lab, s in choices:
        if s.name not in programs:         # not recorded: a remembered choice (:func:`programs`)
            continue
        if best is None or F.cost(programs[s.name].ops) < F.cost(best.ops):
            label, best = lab, programs[s.name]
    prog = copy.copy(best)
    prog.name, prog.algorithm = spec.name, label
    prog.doc = (f"{spec.doc}. Algorithm: {label}, the cheapest of {', '.join(lab for lab, _ in choices)} for this "
                "robot" + (f" (calls {best.name})." if best.name in generated else f": {best.doc}."))
    prog.calls = best.name if best.name in generated else None
    return prog


def _one_program(job):
    """Record and finish one program; runs in a worker process."""
    target, name, options = job
    spec = {s.name: s for s in F.specs(target)}[name]
    t0 = time.perf_counter()
    prog = record(spec, target, options)
    t1 = time.perf_counter()
    prog.finish()
    t2 = time.perf_counter()
    prog.seconds = t2 - t0
    prog.stage_seconds = {"record": t1 - t0, "cse": t2 - t1}
    return prog, t1 - t0, t2 - t1


def _one_program_sent(job):
    """:func:`_one_program` in a worker process, its answer pickled by :mod:`soagen.program.transport`."""
    return transport.dumps(_one_program(job))


def programs(target, options=Options(), progress=None, specs=None, ready=None, slots=None):
    """Run the symbolic recursions and clean the programs; -> (programs in header order, timings).

    Each C function is an independent program, recorded and finished in its
    own worker process (``$SOAGEN_JOBS``, default one per CPU); the output
    does not depend on the number of workers.  A family function whose
    algorithm is picked by operation count has each candidate recorded as a
    job of its own (:func:`pick`); the pick is remembered in the build cache, and a
    later recording of the same robot, or of a robot of the same structure (other
    masses or lengths, :meth:`~soagen.model.robot.Robot.fingerprint`), under the same
    options records only the chosen candidate.

    Parameters
    ----------
    target : Robot or ClosedChain
    options : Options   precision, trig inputs, which functions and variants
    progress : callable, optional   called as ``progress(done, total, "record <function>")``
    specs : list of Spec, optional   :func:`soagen.functions.select`'s answer when the caller has it
    ready : callable, optional   ``ready(program)`` for each program of the answer as soon as it is
        final (a family function: once its candidates are), in this process, while the others record
    slots : soagen.targets.common.compiler.Slots, optional   CPU slots shared with what ``ready``
        starts (a compile): a recording job is sent to a worker only when it gets a slot
    """
    specs = F.select(target, options) if specs is None else specs
    names = [s.name for s in specs]
    picked = {s.name: s for s in specs if s.maker is None}
    known = _remembered(target, options)
    candidates = [c.name for s in picked.values() for lab, c in F.candidates(s.family)
                  if known.get(s.family, lab) == lab]
    recorded = [fn for fn in dict.fromkeys(names + candidates) if fn not in picked]
    waiting = {s.name: {c.name for lab, c in F.candidates(s.family) if c.name in recorded} for s in picked.values()}
    # the families' candidates first (a pick waits for all of them), then the rest from the last: the
    # catalogue goes from the simplest functions to the most composite, whose recordings and compiles are
    # the longest, so the jobs that end a build are short ones
    order = sorted(range(len(recorded)), key=lambda k: (not any(recorded[k] in w for w in waiting.values()), -k))
    work = [(target, recorded[k], options) for k in order]
    t0 = time.perf_counter()
    results, by_name = [], {}
    if progress:
        progress(0, len(work), "record")

    def finished(result):
        prog = result[0]
        results.append(result)
        by_name[prog.name] = prog
        if progress:
            progress(len(results), len(work), f"record {prog.name}")
        if ready is None:
            return
        if prog.name in names:
            ready(prog)
        for family, wanted in waiting.items():
            if prog.name in wanted and wanted <= set(by_name) and family not in by_name:
                by_name[family] = pick(picked[family], by_name, generated=names)
                ready(by_name[family])

    if jobs() > 1 and len(work) > 1:
        with ProcessPoolExecutor(min(jobs(), len(work)), mp_context=get_context("fork")) as pool:
            _run_pool(pool, work, finished, slots)
    else:
        for job in work:
            if slots:
                with slots:
                    result = _one_program(job)
            else:
                result = _one_program(job)
            finished(result)
    for spec in picked.values():
        if spec.name not in by_name:
            by_name[spec.name] = pick(spec, by_name, generated=names)
    _remember(target, options, {s.family: by_name[s.name].algorithm for s in picked.values()}, known)
    timings = {"record": sum(r[1] for r in results), "cse": sum(r[2] for r in results),
               "generate (wall)": time.perf_counter() - t0}
    return [by_name[fn] for fn in names], timings


def _run_pool(pool, work, finished, slots):
    """Send ``work`` to the worker ``pool`` in order, each job when it gets one of ``slots`` (all at once
    without), and hand each result to ``finished`` as it comes."""
    pending, running = list(work), {}
    while pending or running:
        while pending and (slots is None or slots.acquire()):
            running[pool.submit(_one_program_sent, pending.pop(0))] = True
        if not running:                  # every slot is compiling: look again soon
            time.sleep(0.02)
            continue
        done, _ = wait(running, timeout=0.05 if slots and pending else None, return_when=FIRST_COMPLETED)
        for fut in done:
            del running[fut]
            if slots:
                slots.release()
            finished(pickle.loads(fut.result()))


def _choices_file(target, options, structure=False):
    """Where the families' picks for ``target`` under ``options`` are remembered: in the build cache,
    keyed by the robot's every number and name (``structure``: by its structure only,
    :meth:`~soagen.model.robot.Robot.fingerprint`), what changes the programs, and soagen's own sources."""
    from soagen.targets.cache import cache_key, cache_root

    key = cache_key(target.fingerprint(structure=structure), options.precision, str(options.trig_inputs),
                    options.parameters)
    return cache_root() / "choices" / f"{'structure-' if structure else ''}{key}.json"


def _remembered(target, options):
    """``{family: label}`` picked by an earlier recording of the same robot and options (the same pick
    for sure: the programs are the same), else by one of a robot of the same structure (a robot whose
    masses or lengths were changed: the same operations on other numbers, so the same pick but for
    coincidences such as two numbers made equal, which change the structure), so that only the chosen
    candidate is recorded."""
    import json

    known = {}
    for structure in (True, False):             # the exact pick wins
        try:
            known.update(json.loads(_choices_file(target, options, structure).read_text()))
        except (OSError, ValueError):
            pass
    return known


def _remember(target, options, picks, known):
    import json
    import os
    import tempfile

    if not picks or all(known.get(f) == lab for f, lab in picks.items()):
        return
    for structure in (False, True):
        path = _choices_file(target, options, structure)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                before = json.loads(path.read_text())
            except (OSError, ValueError):
                before = {}
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as fh:
                json.dump({**before, **picks}, fh, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            return                               # a read-only cache: the next build records every candidate


def generate(target, options=Options(), name=None, progress=None):
    """:func:`programs`, then the C99 text of them (``name``: file stem and function prefix,
    default the target's name); -> :class:`Generated`."""
    progs, timings = programs(target, options, progress)
    t0 = time.perf_counter()
    csource = emit(target, progs, c_name(name or target.name), options.precision)
    timings["emit"] = time.perf_counter() - t0
    return Generated(progs, csource, timings)
