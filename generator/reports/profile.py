"""Where a build's time goes: per function the seconds to record its program on symbols,
to clean it (CSE, dead code), to print its C and to compile it, and the peak memory of
soagen and of its largest worker or compiler process (``soagen profile``)."""
from __future__ import annotations

import os
import resource
import shutil
import tempfile
import time
from dataclasses import dataclass, field


@dataclass
class Profile:
    """One build, stage by stage.

    rows : list of dict    per function: name, statements, record, cse, emit, compile (seconds)
    wall : dict            seconds of wall time: "generate" (record + CSE on the workers), "emit",
                           "compile" (units in parallel, link), "total"
    peak_mb : dict         peak resident memory (MB): "soagen" (this process), "children" (the largest
                           worker or compiler process)
    """

    robot: str
    nv: int
    optimize: str
    jobs: int
    rows: list = field(default_factory=list)
    wall: dict = field(default_factory=dict)
    peak_mb: dict = field(default_factory=dict)


def _peak_mb(who):
    return resource.getrusage(who).ru_maxrss / 1024.0   # Linux: kilobytes


def profile(robot, options, progress=None):
    """Build ``robot``'s functions under ``options`` from nothing (an empty cache: no module, no
    remembered family picks) and time each stage, the stages one after the other (``soagen.build``
    overlaps them: a function compiles while the next ones record)."""
    from soagen import codegen
    from soagen.options import jobs
    from soagen.targets.c99.compile import compile_args, compile_module
    from soagen.targets.c99.emit import emit
    from soagen.targets.common.inert import c_name

    empty = tempfile.mkdtemp(prefix="soagen-profile-cache-")
    saved, os.environ["SOAGEN_CACHE"] = os.environ.get("SOAGEN_CACHE"), empty
    try:
        t0 = time.perf_counter()
        programs, _ = codegen.programs(robot, options, progress)
        t1 = time.perf_counter()
    finally:
        if saved is None:
            os.environ.pop("SOAGEN_CACHE", None)
        else:
            os.environ["SOAGEN_CACHE"] = saved
        shutil.rmtree(empty, ignore_errors=True)
    name = c_name(robot.name)
    csource = emit(robot, programs, name, options.precision)
    t2 = time.perf_counter()
    compile_seconds = {}
    with tempfile.TemporaryDirectory(prefix="soagen-profile-") as work:
        compile_module(csource, work, f"_soagen_profile_{name}", compile_args(options), compile_seconds)
    t3 = time.perf_counter()
    result = Profile(robot.name, robot.nv, options.optimize, jobs())
    for p in programs:
        result.rows.append(dict(name=p.name, statements=p.ops["statements"],
                                record=p.stage_seconds.get("record", 0.0), cse=p.stage_seconds.get("cse", 0.0),
                                emit=csource.seconds.get(p.name, 0.0), compile=compile_seconds.get(p.name, 0.0)))
    result.wall = {"generate": t1 - t0, "emit": t2 - t1, "compile": t3 - t2, "total": t3 - t0}
    result.peak_mb = {"soagen": _peak_mb(resource.RUSAGE_SELF), "children": _peak_mb(resource.RUSAGE_CHILDREN)}
    return result


def text(result):
    """The profile as a plain table."""
    lines = [f"{result.robot}: nv = {result.nv}, -{result.optimize}, {result.jobs} workers",
             f"{'function':<34} {'statements':>10} {'record s':>9} {'cse s':>7} {'emit s':>7} {'compile s':>10}"]
    for r in result.rows:
        lines.append(f"{r['name']:<34} {r['statements']:10d} {r['record']:9.2f} {r['cse']:7.2f} {r['emit']:7.2f} "
                     f"{r['compile']:10.2f}")
    s = {k: sum(r[k] for r in result.rows) for k in ("record", "cse", "emit", "compile")}
    lines.append(f"{'sum':<34} {sum(r['statements'] for r in result.rows):10d} {s['record']:9.2f} {s['cse']:7.2f} "
                 f"{s['emit']:7.2f} {s['compile']:10.2f}")
    w = result.wall
    lines.append(f"wall, stage after stage: generate {w['generate']:.2f} s, emit {w['emit']:.2f} s, "
                 f"compile {w['compile']:.2f} s, "
                 f"total {w['total']:.2f} s; peak memory: soagen {result.peak_mb['soagen']:.0f} MB, "
                 f"largest worker or compiler {result.peak_mb['children']:.0f} MB")
    return "\n".join(lines) + "\n"


def markdown_row(result):
    """One row of docs/build_profile.md: robot, nv, functions, statements, the stages summed, wall, memory."""
    from soagen.targets.common.inert import markdown_text

    s = {k: sum(r[k] for r in result.rows) for k in ("record", "cse", "emit", "compile")}
    w = result.wall
    return (f"| {markdown_text(result.robot)} | {result.nv} | {len(result.rows)} | "
            f"{sum(r['statements'] for r in result.rows)} | "
            f"{s['record']:.1f} | {s['cse']:.1f} | {w['generate']:.1f} | {w['emit']:.1f} | {s['compile']:.1f} | "
            f"{w['compile']:.1f} | {w['total']:.1f} | {max(result.peak_mb.values()):.0f} |")

