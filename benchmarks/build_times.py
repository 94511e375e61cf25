"""Build time and peak memory of ``soagen.build(robot)`` (every default function) from an empty
cache, per robot: the figures of docs/build_profile.md.

    python benchmarks/build_times.py panda solo12 talos_reduced talos_full_v2 icub   # one JSON line each
    python benchmarks/build_times.py --render      # docs/build_profile.md from docs/build_times.json
    python benchmarks/build_times.py --legged solo12_feet talos_feet   # soagen.functions.LEGGED, feet as tips
    python benchmarks/build_times.py talos_reduced:forward_dynamics_derivatives   # one function alone
    python benchmarks/build_times.py --erd    # every case of the sweep (docs/sweep.md), default functions

It uses only ``soagen.build``, ``soagen.load_urdf`` and the module's ``timings``, so the same
script measures an older checkout (run it with that checkout's environment) for a before/after
comparison; the robots' files come from the installed example-robot-data.  Each robot is built
in a child process of its own, so its peak memory (soagen and its worker and compiler processes)
is its own.  One run on this machine; runs swing 1.5-2x on a shared machine.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: robot -> (file inside example-robot-data's robots folder or "bundled", floating base, tips)
ROBOTS = {
    "panda": ("bundled", False, ["panda_hand"]),
    "solo12": ("solo_description/robots/solo12.urdf", True, ["FL_FOOT"]),
    "talos_reduced": ("talos_data/robots/talos_reduced.urdf", True,
                      ["gripper_left_base_link", "gripper_right_base_link"]),
    "talos_full_v2": ("talos_data/robots/talos_full_v2.urdf", True,
                      ["gripper_left_base_link", "gripper_right_base_link"]),
    "icub": ("icub_description/robots/icub.urdf", True, ["r_hand", "l_hand"]),
}
#: legged robots with their feet as tips (("point", link): a point tip), built with soagen.functions.LEGGED
LEGGED_ROBOTS = {
    "solo12_feet": ("solo_description/robots/solo12.urdf", True,
                    [("point", f) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]),
    "talos_feet": ("talos_data/robots/talos_reduced.urdf", True, ["left_sole_link", "right_sole_link"]),
}


def erd_robots():
    marker = "share/example-robot-data/robots/"
    dist = importlib.metadata.distribution("example-robot-data")
    for f in dist.files or ():
        s = str(f)
        if marker in s:
            return Path(dist.locate_file(s[: s.index(marker) + len(marker)]))
    raise SystemExit("example-robot-data is not installed")


def one(key):
    """Build ``key`` from an empty cache in this process; print one JSON line.  ``ROBOT:FUNCTION``
    builds that one function of a robot of :data:`ROBOTS`."""
    import soagen

    key, _, function = key.partition(":")
    legged = key in LEGGED_ROBOTS
    rel, floating, tips = (LEGGED_ROBOTS if legged else ROBOTS)[key]
    tips = [soagen.point_tip(t[1]) if isinstance(t, tuple) else t for t in tips]
    if rel == "bundled":
        try:
            from soagen.model.robots import example
        except ImportError:                        # the layout before the stage packages
            from soagen.robots import example
        robot = example(key)
    else:
        robot = soagen.load_urdf(str(erd_robots() / rel), tips=tips, floating_base=floating)
    os.environ["SOAGEN_CACHE"] = tempfile.mkdtemp(prefix="soagen-build-times-")
    t0 = time.perf_counter()
    if legged or function:
        from soagen.functions import LEGGED
        from soagen.pipeline import terminal_progress

        mod = soagen.build(robot, functions=[function] if function else list(LEGGED), progress=terminal_progress())
    else:
        mod = soagen.build(robot)
    wall = time.perf_counter() - t0
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)   # kB: soagen, or its largest child
    print(json.dumps(dict(robot=key, **({"function": function} if function else {}), nv=robot.nv, functions=len(mod.ops), wall_s=round(wall, 1),
                          peak_mb=round(peak / 1024), timings={k: round(v, 1) for k, v in mod.timings.items()},
                          statements=sum(o["statements"] for o in mod.ops.values()))))


DOCS = Path(__file__).resolve().parents[1] / "docs"


def render(data):
    """docs/build_profile.md from docs/build_times.json: ``{"runs": [{"label", "commit", "rows": [...]}]}``,
    the rows the JSON lines this script prints."""
    lines = ["# Build time and memory", "",
             "`soagen.build(robot)` with every default function, from an empty cache, on this project's 2-core "
             "machine, one child process per robot (`python benchmarks/build_times.py ROBOT...`; the same script "
             "run with each checkout's environment). Seconds: wall clock of the whole build; record, CSE and emit "
             "are summed over the functions; compile is the wall time of the parallel compilation, or, from the "
             "pipelined build on (each function compiled as soon as it is recorded), gcc's seconds summed over "
             "the units. Peak: the "
             "largest resident memory of soagen or of one of its worker or compiler processes. Rendered from "
             "docs/build_times.json by `python benchmarks/build_times.py --render`.", ""]
    lines += _single_rows(data["runs"], ["robot"])
    legged = data.get("legged")
    if legged:
        lines += ["## Legged controllers", "",
                  "`soagen.build(robot, functions=soagen.functions.LEGGED)`: dynamics, the feet's Jacobians and Λ(0), "
                  "contact and impulse dynamics, the centroidal momentum and the derivatives of inverse, forward and "
                  "contact dynamics, the feet as tips (`python benchmarks/build_times.py --legged ROBOT...`), "
                  "from an empty cache, SOAGEN_JOBS=2.", ""]
        lines += _single_rows(legged, ["robot"])
    derivatives = data.get("derivatives")
    if derivatives:
        lines += ["## Derivatives alone", "",
                  "`soagen.build(robot, functions=[FUNCTION])` from an empty cache, one function per child process "
                  "(`python benchmarks/build_times.py ROBOT:FUNCTION...`), SOAGEN_JOBS=2.", ""]
        lines += _single_rows(derivatives, ["robot", "function"])
    if data.get("erd"):
        rows = data["erd"]["rows"]
        over = [r for r in rows if r.get("wall_s", r.get("stopped_s")) > 60]
        lines += ["## Every robot of example-robot-data", "",
                  f"`soagen.build(robot)`, every default function, each case of the sweep ([sweep.md](sweep.md)) "
                  f"loaded as the sweep loads it (the deepest link the tip), from an empty cache, SOAGEN_JOBS=2, "
                  f"commit {data['erd']['commit']} (`python benchmarks/build_times.py --erd`): {len(rows)} cases, "
                  f"{len(rows) - len(over)} in 60 s or less"
                  + (f"; over 60 s: {', '.join(_case(r) for r in over)}" if over else "")
                  + (f" (a case still building after {ERD_LIMIT_S} s was stopped). A build keeps both cores "
                     "busy: its wall time is about half the CPU seconds of its stages, half to two thirds of them gcc on long "
                     "straight-line functions." if over else "."), "",
                  "| robot file | base | nv | functions | statements | wall s (record + CSE, emit, compile) | peak MB |",
                  "|---|---|---:|---:|---:|---|---:|"]
        lines += [f"| `{r['rel']}` | {'floating' if r['floating'] else 'fixed'} | " + (
                  f"{r['nv']} | {r['functions']} | {r['statements']} | {_seconds(r)} | {r['peak_mb']} |" if "wall_s" in r
                  else f" | | | stopped after {r['stopped_s']} s | |") for r in rows] + [""]
    return "\n".join(lines)


def _seconds(row):
    t = row["timings"]
    return (f"{row['wall_s']:.1f} ({t.get('record', 0) + t.get('cse', 0):.1f}, {t.get('emit', 0):.1f}, "
            f"{t.get('compile', 0):.1f})")


def _case(row):
    """A case over the goal: its wall time and the CPU seconds of its stages (record, CSE, emit, gcc)."""
    name = f"`{row['rel']}`" + (" (floating)" if row["floating"] else "")
    if "wall_s" not in row:
        return name + " (stopped)"
    t = row["timings"]
    cpu = sum(t.get(k, 0) for k in ("record", "cse", "emit", "compile"))
    return f"{name} {row['wall_s']:.0f} s ({cpu:.0f} CPU s)"


def _single_rows(runs, keys):
    """One table with a row per measurement of ``runs`` (``[{"label", "note", "rows"}]``), run by run."""
    lines = ["| run | " + " | ".join(keys) + " | nv | functions | statements | wall s (record + CSE, emit, compile) "
             "/ peak MB |", "|---|" + "---|" * len(keys) + "---:|---:|---:|---|"]
    for run in runs:
        for row in run["rows"]:
            lines.append(f"| {run['label']} | " + " | ".join(str(row[k]) for k in keys)
                         + f" | {row['nv']} | {row['functions']} | {row['statements']} | "
                         f"{_seconds(row)} / {row['peak_mb']} |")
    return lines + [""] + [f"- {run['label']}: {run['note']}" for run in runs] + [""]


def one_erd(rel, floating):
    """Build a case of the example-robot-data sweep as the sweep loads it (its deepest link the tip),
    with every default function, from an empty cache in this process; print one JSON line."""
    import soagen

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support import real_robots as rr

    robot, _ = rr.load(rel, floating)
    robot, _ = rr.load(rel, floating, tips=[rr.deepest_link(robot)])
    os.environ["SOAGEN_CACHE"] = tempfile.mkdtemp(prefix="soagen-build-times-")
    t0 = time.perf_counter()
    mod = soagen.build(robot)
    wall = time.perf_counter() - t0
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(json.dumps(dict(rel=rel, floating=floating, nv=robot.nv, functions=len(mod.ops), wall_s=round(wall, 1),
                          peak_mb=round(peak / 1024), statements=sum(o["statements"] for o in mod.ops.values()),
                          timings={k: round(v, 1) for k, v in mod.timings.items()})), flush=True)


#: a case still building after this long is stopped (its row says so)
ERD_LIMIT_S = 180


def erd():
    """Every case of the sweep, each in a child process; the rows into docs/build_times.json's "erd"."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support import real_robots as rr

    rows = []
    for rel, floating in rr.cases():
        child = subprocess.Popen([sys.executable, __file__, "--one-erd", rel, str(floating)], stdout=subprocess.PIPE,
                                 text=True, start_new_session=True)
        try:
            out, _ = child.communicate(timeout=ERD_LIMIT_S)
            rows.append(json.loads(out.strip().splitlines()[-1]))
        except subprocess.TimeoutExpired:           # stopped, its workers and compilers too: the row says so
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            rows.append(dict(rel=rel, floating=floating, stopped_s=ERD_LIMIT_S))
        print(f"{rel} {'floating' if floating else 'fixed'}: {rows[-1].get('wall_s', 'stopped')} s", flush=True)
    data = json.loads((DOCS / "build_times.json").read_text())
    data["erd"] = {"commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                            cwd=DOCS.parent).stdout.strip(), "rows": rows}
    (DOCS / "build_times.json").write_text(json.dumps(data, indent=1) + "\n")
    (DOCS / "build_profile.md").write_text(render(data))


def main(argv):
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if argv and argv[0] == "--one":
        one(argv[1])
        return 0
    if argv and argv[0] == "--one-erd":
        one_erd(argv[1], argv[2] == "True")
        return 0
    if argv and argv[0] == "--erd":
        erd()
        return 0
    if argv and argv[0] == "--render":
        (DOCS / "build_profile.md").write_text(render(json.loads((DOCS / "build_times.json").read_text())))
        return 0
    if argv and argv[0] == "--legged":
        argv = argv[1:] or list(LEGGED_ROBOTS)
    for key in argv or list(ROBOTS):
        subprocess.run([sys.executable, __file__, "--one", key], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
