"""The symbolic-parameter peers, measured: the robots they are run on and the page of their counts.

``benchmarks/peer_opcounts.py`` runs SymPyBotics and OpenSYMORO from their sources on the robots
here and writes ``docs/peer_opcounts.json``; :func:`markdown` renders it as ``docs/peer_opcounts.md``
(a test keeps the two equal without the peers' sources).
"""
from __future__ import annotations

import numpy as np

#: the page's quantities: (label, function)
FUNCTIONS = (("inverse dynamics", "inverse_dynamics"), ("mass matrix M", "mass_matrix"),
             ("gravity g", "gravity"), ("bias c + g", "bias_forces"))
#: the robots every tool is run on
ROBOTS = ("puma560", "rx90", "general6")
TOOLS = ("SymPyBotics", "OpenSYMORO")
#: the numeric-parameter peer (Pinocchio on casadi::SX), set beside soagen's baked build
CASADI = "CasADi-on-Pinocchio"
GENERAL_SEED = 6
#: sizes of the general arms whose inverse dynamics every tool is counted on (the first n rows of one
#: seeded arm), and the tools of that table
SCALING_SIZES = (2, 3, 4, 6, 8, 12, 16)
SCALING_TOOLS = ("soagen, π input", "SymPyBotics", "OpenSYMORO", "soagen, baked", CASADI)


def general_links(seed=GENERAL_SEED, n=6):
    """``n`` (six) modified-DH rows with every kinematic parameter non-zero (α, a, d; θ's offset is the
    origin of q, left at 0) and every inertial parameter non-zero (mass, centre of mass, the six
    components of the inertia, products included), seeded (list of :class:`~soagen.model.dh.DHLink`)."""
    from soagen.model.dh import DHLink

    rng = np.random.default_rng(seed)
    links = []
    for _ in range(n):
        alpha = float(np.round(rng.choice((-1, 1)) * rng.uniform(0.2, 1.3), 4))
        a, d = (float(np.round(x, 4)) for x in rng.uniform(0.05, 0.4, 2))
        mass = float(np.round(rng.uniform(1.0, 5.0), 3))
        com = tuple(float(np.round(c, 4)) for c in rng.choice((-1, 1), 3) * rng.uniform(0.01, 0.1, 3))
        x, y, z = rng.uniform(0.05, 0.3, 3)                          # a box's sides, turned by a rotation Q
        box = mass / 12 * np.array([y * y + z * z, x * x + z * z, x * x + y * y])
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        inertia = np.round(Q @ np.diag(box) @ Q.T, 6)                # (3, 3) about the centre of mass, frame i
        links.append(DHLink(a=a, alpha=alpha, d=d, mass=mass, com=com, inertia=inertia))
    return links


def general_arm(seed=GENERAL_SEED, n=6):
    """The general n-dof arm of :func:`general_links` (a soagen robot named ``general<n>``, tip ``tool``)."""
    from soagen.model.dh import dh_robot

    return dh_robot(f"general{n}", general_links(seed, n), modified=True)


def dh_rows(robot):
    """Modified-DH rows ``(alpha, a, d)`` of ``robot`` (``puma560``, ``general6``, ``rx90``) as the
    peers are given them: floats, and ``pi_half`` k where α is exactly k·π/2 (the peers then take it exact)."""
    from soagen.model import robots

    links = {"puma560": robots.puma560_links, "general6": general_links, "rx90": robots.rx90_links}.get(robot)
    if links is None and robot.startswith("general"):            # generalN: the first N rows of the seeded arm
        links = lambda: general_links(n=int(robot[len("general"):]))      # noqa: E731
    rows = []
    for link in links():
        half = link.alpha / (np.pi / 2)
        exact = abs(half - round(half)) < 1e-12
        rows.append({"alpha": float(link.alpha), "pi_half": int(round(half)) if exact else None,
                     "a": float(link.a), "d": float(link.d)})
    return rows


#: figures this project quoted for the peers before they were measured: (tool, robot, function, (mul, add))
QUOTED = (("SymPyBotics", "puma560", "inverse_dynamics", (378, 319)),
          ("SymPyBotics", "puma560", "mass_matrix", (402, 320)),
          ("SymPyBotics", "puma560", "gravity", (110, 72)),
          ("OpenSYMORO", "rx90", "inverse_dynamics", (378, 329)))


def _delta(counts, quoted):
    return (f"{counts['mul']} / {counts['add']} ({counts['mul'] - quoted[0]:+d} / "
            f"{counts['add'] - quoted[1]:+d})")


def quoted_against(data):
    """Rows of the closing table: each figure quoted before, the tool's own sample robot and
    soagen's robot measured, with the differences (mul / add)."""
    rows, label = [], {fn: text for text, fn in FUNCTIONS}
    for tool, robot, fn, figure in QUOTED:
        own = [s["counts"] for s in data["samples"] if s["tool"] == tool and s["quantity"] == fn]
        measured = [c for c in (*own, data["counts"][robot][tool][fn]) if (c["mul"], c["add"]) == figure]
        rows.append({"quoted": f"{tool}, {robot}, {label[fn]}",
                     "figure": f"{figure[0]} / {figure[1]}",
                     "own_robot": _delta(own[0], figure) if own else "—",
                     "same_robot": _delta(data["counts"][robot][tool][fn], figure),
                     "reproduced": bool(measured)})
    return rows


def _cell(counts):
    if counts is None:
        return "—"
    extra = [f"{counts[k]} {k}" for k in ("div", "sqrt", "sign") if counts.get(k)]
    return f"{counts['mul']} / {counts['add']}" + (f" (+{', '.join(extra)})" if extra else "")


def _scaling_lines(scaling):
    """Inverse dynamics of the general arms against n, each tool's a·n + b, and the literature's."""
    from soagen.reports.scaling import GENERAL_FORMULATIONS, fit, polynomial_text

    points = {t: {int(n): c for n, c in scaling[t].items()} for t in SCALING_TOOLS}
    lines = ["", "## Inverse dynamics against n, general arms", "",
             "The first n rows of the general arm's seeded generator (n = "
             + ", ".join(map(str, SCALING_SIZES)) + "), every α, a, d non-zero, the inertial parameters",
             f"inputs (soagen, π input) or symbols (SymPyBotics, OpenSYMORO), or numbers (soagen, baked; {CASADI});",
             "mul / add per call (divisions, square roots and sign() beside them). The last rows: least-squares",
             "a·n + b through every size with the largest |residual| (operations), and the general formulations as",
             "published (Hollerbach 1980, Table I, as quoted by the project; not re-read).", "",
             "| n | " + " | ".join(SCALING_TOOLS) + " |", "|---:|" + "---:|" * len(SCALING_TOOLS)]
    for n in SCALING_SIZES:
        lines.append(f"| {n} | " + " | ".join(_cell(points[t][n]) for t in SCALING_TOOLS) + " |")
    cells = []
    for t in SCALING_TOOLS:
        (mul, mres), (add, ares) = (fit(points[t], 1, k) for k in ("mul", "add"))
        cells.append(f"{polynomial_text(mul)} / {polynomial_text(add)} (residual {mres:.1f} / {ares:.1f})")
    lines.append("| a·n + b | " + " | ".join(cells) + " |")
    lines += ["", "| general formulation | mul | add | source |", "|---|---|---|---|"]
    for label, mul, add, source in GENERAL_FORMULATIONS["inverse_dynamics"]:
        lines.append(f"| {label} | {polynomial_text(mul)} | {polynomial_text(add)} | {source} |")
    return lines


def markdown(data):
    """``docs/peer_opcounts.md`` from the JSON of ``benchmarks/peer_opcounts.py``."""
    tools = data["tools"]
    lines = ["# Operation counts of the symbolic-parameter peers, measured", "",
             f"Written by `{data['command']}` (the sources: see below); the numbers are those of "
             "`docs/peer_opcounts.json`.", "",
             f"Counter: {data['counter']}", "",
             f"Run with Python {data['python']}, sympy {data['sympy']}, PYTHONHASHSEED={data['hash_seed']}.", "",
             "| tool | source | commit | setting |", "|---|---|---|---|"]
    for name in TOOLS:
        t = tools[name]
        lines.append(f"| {name} | {t['repository']} | `{t['commit'][:10]}` | {t['setting']} |")
    lines.append(f"| {CASADI} | {tools[CASADI]['repository']} | {tools[CASADI]['version']} | "
                 f"{tools[CASADI]['setting']} |")
    lines += ["", "Robots:", ""] + [f"- `{r}`: {data['robots'][r]}" for r in ROBOTS] + [""]
    lines += ["## Same robot, parameters as inputs", "",
              "mul / add per call (divisions, square roots and sign() beside them; trig excluded).",
              "soagen's columns are `build(robot, parameters=\"inputs\")` (every inertial parameter an input,",
              "the geometry numeric, as the peers have it) and the baked build (the robot's numbers are",
              f"constants), beside {CASADI}, which knows every parameter as a number too.", "",
              "| robot | quantity | soagen, π input | " + " | ".join(TOOLS) + f" | soagen, baked | {CASADI} |",
              "|---|---|---:|" + "---:|" * len(TOOLS) + "---:|---:|"]
    for robot in ROBOTS:                                # the JSON's keys are sorted: the page keeps this order
        by_tool = data["counts"][robot]
        for label, fn in FUNCTIONS:
            cells = [_cell(by_tool[t].get(fn)) for t in ("soagen, π input", *TOOLS, "soagen, baked", CASADI)]
            lines.append(f"| {robot} | {label} | " + " | ".join(cells) + " |")
    lines += _scaling_lines(data["scaling"])
    lines += ["", "## The peers' own sample robots", "",
              "| tool | robot | quantity | statements | mul / add |", "|---|---|---|---:|---:|"]
    for s in data["samples"]:
        lines.append(f"| {s['tool']} | {s['robot']} | {s['quantity']} | {s['counts']['statements']} | "
                     f"{_cell(s['counts'])} |")
    lines += ["", "## Figures this project quoted before, against the measurement", "",
              "mul / add, and the measured minus the quoted.", "",
              "| quoted | figure | measured, the tool's own sample robot | measured, the robot named | reproduced |",
              "|---|---:|---:|---:|---|"]
    for q in data["quoted"]:
        lines.append(f"| {q['quoted']} | {q['figure']} | {q['own_robot']} | {q['same_robot']} | "
                     f"{'yes' if q['reproduced'] else 'no: removed from the docs'} |")
    lines += ["", "A figure reproduced is now the measurement's (the docs read it from this JSON); one not",
              "reproduced in any setting tried is gone from the docs.", ""]
    return "\n".join(lines)
