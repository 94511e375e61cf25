"""Operation counts: from the straight-line programs, cross-checked in the C text.

:func:`count_c` re-counts the arithmetic of every function in emitted C by
tokenizing it, so the numbers in reports are what the compiler is handed.
"""
from __future__ import annotations

import json
import re

from soagen.program.printer import STATEMENT_LINE
from soagen.program.statements import OP_KINDS, with_fma  # noqa: F401  (with_fma: read from here too)
from soagen.targets.common.inert import markdown_text

COLUMNS = ("mul", "add", "div", "sqrt", "trig", "fma", "statements")
_TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?f?)|(?P<name>[A-Za-z_]\w*)"
                    r"|(?P<op>[-+*/=(),;\[\]{}<>!]))")
_FUNCTION = re.compile(r"^(?:int|void) (\w+)\([^\n]*\)\n\{\n(.*?)^\}", re.S | re.M)
_PART = re.compile(r"(\w+)_part\d+$")                              # one part of a cut function
_INDEX = re.compile(r"\[[^\]]*\]")
_CONSTANT_RUN = re.compile(r"for \(int i = \d+; i < \d+; \+\+i\) \w+\[i\] = ")
_LOOP = re.compile(r"for \(int j = (\d+); j < (\d+); \+\+j\) \{$")     # a column loop (its body counts per column)


def _strip_comments(text):
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


# calls that are arithmetic: sin/cos (soagen's inline ones, libm's), sqrt, and CasADi's
# ``casadi_sq(x)`` (x*x, one multiplication)
_CALLS = {"sin": "trig", "cos": "trig", "sinf": "trig", "cosf": "trig", "soagen_sin": "trig",
          "soagen_cos": "trig", "sqrt": "sqrt", "sqrtf": "sqrt", "casadi_sq": "mul"}


def count_line(line):
    """Arithmetic in one C statement; a minus in front of a literal is part of it.
    Calls count as their operation (:data:`_CALLS`: ``casadi_sq(x)`` is one multiplication)."""
    counts = dict.fromkeys(OP_KINDS, 0)
    prev = None
    tokens = [m for m in _TOKEN.finditer(line)]
    for i, m in enumerate(tokens):
        kind = m.lastgroup
        tok = m.group(kind)
        if kind == "name" and tok in _CALLS:
            counts[_CALLS[tok]] += 1
        elif kind == "op" and tok == "*":
            counts["mul"] += 1
        elif kind == "op" and tok == "/":
            counts["div"] += 1
        elif kind == "op" and tok == "+":
            counts["add"] += 1
        elif kind == "op" and tok == "-":
            unary = prev is None or (prev[0] == "op" and prev[1] in "=(,-+*/<>!")
            if not unary:
                counts["add"] += 1
            elif not (i + 1 < len(tokens) and tokens[i + 1].lastgroup == "num"):
                counts["neg"] += 1
        prev = (kind, tok)
    return counts


def count_c(source):
    """``{function name: counts}`` for every function defined in C ``source``; the parts of a
    cut function (``f_part0``, ``f_part1``, ...) are counted into ``f``, and the loads of the
    values passed between them are no statements."""
    out = {}
    for name, body in _FUNCTION.findall(_strip_comments(source)):
        whole = _PART.match(name)
        if whole:
            name = whole.group(1)
        counts = out.get(name) or dict.fromkeys(OP_KINDS, 0)
        statements, times = 0, 1          # times: the column count inside a column loop's ``for``
        for line in body.splitlines():
            line = line.strip()
            # the sin/cos block's declaration and call: each read of its values (soagen_cos[j]) counts
            # as one trig, as the program counts sin and cos
            if not line or line.startswith(("return 0", "double soagen_sin[", "soagen_sincos(")):
                continue
            if _CONSTANT_RUN.match(line):               # a run of outputs set to one constant: no arithmetic
                continue
            loop = _LOOP.match(line)
            if loop:
                times = int(loop.group(2)) - int(loop.group(1))
                continue
            if line == "}":
                times = 1
                continue
            if STATEMENT_LINE.match(line):
                statements += 1
            text = _INDEX.sub("[]", line)                # an array index (``x[38 + j]``) is no arithmetic
            for k, v in count_line(text.split("=", 1)[1] if "=" in text and not text.startswith("if")
                                   else text).items():
                counts[k] += v * times
        counts["statements"] = counts.get("statements", 0) + statements
        out[name] = counts
    return out


def table(robot_name, programs):
    """Terminal/markdown table of the op counts of ``programs``."""
    head = "| function | " + " | ".join(COLUMNS) + " |"
    rows = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    for p in programs:
        label = f"{p.name} ({p.algorithm})" if p.algorithm else p.name   # a family's cheapest algorithm
        counts = with_fma(p)
        rows.append(f"| {label} | " + " | ".join(str(counts[c]) for c in COLUMNS) + " |")
    return f"# Operation counts: {markdown_text(robot_name)}\n\n" + "\n".join(rows) + "\n"   # the name: one line


def as_json(robot, programs):
    return json.dumps({"robot": robot.name, "functions": {p.name: {c: with_fma(p)[c] for c in (*COLUMNS, "neg")}
                                                         for p in programs}}, indent=1, sort_keys=True) + "\n"


# --------------------------------------------------------- literature comparison
# Published operation counts for a general n-joint serial arm (every kinematic and
# inertial parameter symbolic, i.e. treated as non-zero), evaluated at n = 6.
# The formulas are the widely reproduced ones of Hollerbach's 1980 comparison
# table; the original papers could not be re-read offline (said on the page).
PUBLISHED = (
    ("recursive Newton–Euler, 3×3 rotations (Luh, Walker & Paul 1980)", "inverse dynamics",
     lambda n: (150 * n - 48, 131 * n - 48),
     "J. Y. S. Luh, M. W. Walker, R. P. C. Paul, ASME J. Dyn. Syst. Meas. Control 102(2), 1980; "
     "counts as tabulated by Hollerbach, IEEE Trans. SMC 10(11), 1980, Table I"),
    ("recursive Lagrangian, 3×3 rotations (Hollerbach 1980)", "inverse dynamics",
     lambda n: (412 * n - 277, 320 * n - 201),
     "J. M. Hollerbach, IEEE Trans. SMC 10(11), 1980, Table I"),
)
#: docs/opcounts.md's measured general-arm rows: (tool of docs/peer_opcounts.json, label)
GENERAL_ROWS = (("soagen, π input", "soagen, π an input (`parameters=\"inputs\"`), general arm"),
                ("SymPyBotics", "SymPyBotics, symbolic parameters, general arm"),
                ("OpenSYMORO", "OpenSYMORO, symbolic parameters, general arm"),
                ("soagen, baked", "soagen, parameters baked, general arm"),
                ("CasADi-on-Pinocchio", "CasADi-on-Pinocchio, parameters numeric, general arm"))
LITERATURE_FUNCTIONS = (("inverse dynamics", "inverse_dynamics", "rnea"), ("mass matrix M", "mass_matrix", "crba"),
                        ("gravity g", "gravity", "gravity"), ("bias c + g", "bias_forces", "bias"),
                        ("Coriolis/centrifugal c", "coriolis", None),
                        ("forward dynamics, articulated-body sweeps (FD4 / aba)", "forward_dynamics_fd4", "aba"),
                        ("forward dynamics, cheapest for this robot (`forward_dynamics`)", "forward_dynamics",
                         "aba"))


def literature_markdown(soagen_counts, casadi, peers):
    """``docs/opcounts.md``: soagen's PUMA 560 counts beside CasADi-generated code
    of the same robot, published general-formulation counts and the general arm measured.

    soagen_counts : {function: counts} of the generated PUMA 560 program
    casadi : the JSON written by ``benchmarks/casadi_opcounts.py`` (or None)
    peers : the JSON written by ``benchmarks/peer_opcounts.py`` (``docs/peer_opcounts.json``)
    """
    n = 6
    lines = ["# Operation counts: the PUMA 560 against other formulations and tools", "",
             "Multiplications / additions (subtractions included) / divisions / square roots per call,",
             "sin/cos in brackets, counted by one rule ([guide/opcounts.md](guide/opcounts.md)). Regenerate with",
             "`python benchmarks/casadi_opcounts.py` (soagen's numbers are those of",
             "`generated/puma560/opcounts.json`, the general arm's those of `docs/peer_opcounts.json`;",
             "a test fails when this page is stale).", "",
             "## Same robot, numeric parameters", "",
             "Robot: the PUMA 560 with the Armstrong–Khatib–Burdick 1986 parameters",
             "(`soagen.robots.example('puma560')`, handed to CasADi as the URDF that",
             "`soagen.urdf.to_urdf` writes). Both tools know every parameter as a number, so",
             "zero offsets and zero products of inertia cost nothing.", "",
             "| quantity | soagen mul / add / div / sqrt (trig) | CasADi-generated C with `cse` "
             "mul / add / div / sqrt (trig) | CasADi without `cse` |", "|---|---:|---:|---:|"]

    def cell(counts):
        return f"{counts['mul']} / {counts['add']} / {counts['div']} / {counts['sqrt']} ({counts['trig']})"

    for label, ours, theirs in LITERATURE_FUNCTIONS:
        cells = ["n/a", "n/a"]
        if casadi and theirs and theirs in casadi["functions"]:
            cells = [cell(casadi["functions"][theirs]),
                     cell(casadi["without_cse"][theirs]) if theirs in casadi.get("without_cse", {}) else "n/a"]
        elif theirs is None:
            cells = ["— (gravity is part of the model)", "—"]
        lines.append(f"| {label} | {cell(soagen_counts[ours])} | {' | '.join(cells)} |")
    if casadi:
        lines += ["", f"CasADi: {casadi['tool']}. {casadi['method']}"]
    lines += ["", "soagen: the straight-line programs of `soagen generate --example puma560`",
              "(Newton–Euler with the products ω_a ω_b shared by the gyroscopic, centripetal",
              "and U = [ω̇]× + [ω]×² terms; M by composite inertias).", "",
              f"## General formulations (symbolic parameters), n = {n}", "",
              "These count a general arm whose every parameter may be non-zero; they are what a",
              "library pays per call, not what a robot-specific program pays. Their gap to the",
              "table above mixes two effects: the formulation, and the PUMA's zeros (its parameters",
              "are baked in, and zero offsets and products of inertia cost nothing). The last rows",
              "separate them: a general 6-dof arm with every α, a, d non-zero and the inertial",
              "parameters inputs (soagen) or symbols (SymPyBotics, OpenSYMORO), and the same arm with",
              "every parameter a number (soagen baked, CasADi-on-Pinocchio), measured by",
              "`python benchmarks/peer_opcounts.py` ([peer_opcounts.md](peer_opcounts.md)). The",
              "formulas are those of Hollerbach's widely reproduced 1980 comparison table; the",
              "original papers could not be re-read offline for this page (it states no divisions",
              "or square roots for them: —).", "",
              "| formulation | quantity | mul | add | div | sqrt | source |", "|---|---|---:|---:|---:|---:|---|"]
    for label, quantity, formula, source in PUBLISHED:
        mul, add = formula(n)
        lines.append(f"| {label} | {quantity} | {mul} | {add} | — | — | {source} |")
    general = peers["counts"]["general6"]
    for tool, label in GENERAL_ROWS:
        c = general[tool]["inverse_dynamics"]
        what = peers["tools"].get(tool, {})
        version = what["commit"][:7] if "commit" in what else what.get("version", "this commit")
        lines.append(f"| {label} | inverse dynamics | {c['mul']} | {c['add']} | {c['div']} | {c['sqrt']} | "
                     f"measured ({version}), docs/peer_opcounts.json |")
    lines += ["", "Customized PUMA models from the 1980s symbolic tools (ARM, EMDEG, Armstrong et al.'s",
              "explicit model) report their counts under their own simplifications (link 6",
              "symmetric, some products of inertia dropped); they are not listed because the",
              "published figures could not be checked here against the original papers.", ""]
    return "\n".join(lines)


# ------------------------------------------ parameters as inputs: the symbolic-parameter peers
#: the rows of docs/parameter_opcounts.md: (robot, label, function); the peers' counts beside them are
#: measured by benchmarks/peer_opcounts.py (docs/peer_opcounts.json), never quoted
PARAMETER_ROWS = (
    ("puma560", "inverse dynamics", "inverse_dynamics"),
    ("puma560", "mass matrix M", "mass_matrix"),
    ("puma560", "gravity g", "gravity"),
    ("rx90", "inverse dynamics", "inverse_dynamics"),
    ("general6", "inverse dynamics", "inverse_dynamics"),
    ("general6", "mass matrix M", "mass_matrix"),
    ("general6", "gravity g", "gravity"),
)
PEER_TOOLS = ("SymPyBotics", "OpenSYMORO")
IDENTIFICATION_FUNCTIONS = ("regressor", "base_regressor", "slotine_li_regressor")


def _programs(robot, names, parameters):
    from soagen.codegen import make_program
    from soagen.options import Options

    options = Options(functions=tuple(names), parameters=parameters)
    return {name: make_program(robot, name, options).ops for name in names}


def parameter_counts():
    """Op counts behind :func:`parameters_markdown`: ``{robot: {mode: {function: counts}}}``
    for the PUMA 560, the RX-90 and the general arm of :mod:`soagen.reports.peers` (baked, π input,
    π input with rotor inertia and friction on every joint) and the identification functions of the
    bundled robots."""
    from soagen.model import robots
    from soagen.reports.peers import general_arm

    joints = [f"joint{i}" for i in range(1, 7)]
    actuated = dict(armature={j: 0.01 for j in joints}, friction={j: (0.1, 0.2) for j in joints})
    out = {}
    for name, make in (("puma560", lambda: robots.example("puma560")), ("rx90", robots.rx90),
                       ("general6", general_arm)):
        names = sorted({fn for robot, _, fn in PARAMETER_ROWS if robot == name})
        robot = make()
        out[name] = {"baked": _programs(robot, names, "baked"), "inputs": _programs(robot, names, "inputs"),
                     "inputs, actuators": _programs(robot.with_actuators(**actuated), names, "inputs")}
    for name in robots.EXAMPLES:
        out.setdefault(name, {})["identification"] = _programs(robots.example(name), IDENTIFICATION_FUNCTIONS,
                                                                 "baked")
    return out


def _peer_cell(c):
    if c is None:
        return "—"
    return f"{c['mul']} / {c['add']}" + (f" (+{c['sign']} sign)" if c.get("sign") else "")


def parameters_markdown(counts, peers):
    """``docs/parameter_opcounts.md``: π as an input beside the baked build and the
    symbolic-parameter peers, and the regressors' counts (``soagen opcount --peers``).

    counts : :func:`parameter_counts`
    peers : the JSON of ``benchmarks/peer_opcounts.py`` (``docs/peer_opcounts.json``)
    """
    def cell(c):
        return f"{c['mul']} / {c['add']}" + (f" (+{c['div']} div, {c['sqrt']} sqrt)" if c["div"] or c["sqrt"] else "")

    measured = peers["counts"]
    lines = ["# Operation counts with the parameters as inputs", "",
             "Written by `soagen opcount --peers docs/parameter_opcounts.md` (the peers' columns from",
             "`docs/peer_opcounts.json`, measured by `python benchmarks/peer_opcounts.py`: see",
             "[peer_opcounts.md](peer_opcounts.md) for versions, settings and commits).",
             "mul / add per call, trig excluded (10 sin/cos",
             "for six revolute joints in every column); unary minus is not counted (soagen prints",
             "most as subtractions).", "",
             "`baked`: the robot's numbers are constants (zero products of inertia cost nothing).",
             "`π input`: `build(robot, parameters=\"inputs\")`, all 10 inertial parameters of every",
             "body are inputs, the geometry stays numeric. `+ actuators`: also rotor inertia,",
             "viscous and Coulomb friction of every joint as inputs (the Coulomb term is the",
             "smooth sign q̇/√(q̇² + ε²): one division and one square root per joint).",
             "The peers: every inertial parameter a symbol, the geometry numeric, no friction or rotor",
             "inertia (π input's setting), each in its best setting (CSE on, dead code out).",
             "`general6`: a general 6-dof arm (`soagen.reports.peers.general_arm()`: every α, a, d non-zero,",
             "and every inertial parameter non-zero for the baked build), so that soagen's zeros do not",
             "flatter it.", "",
             "| robot | quantity | soagen baked | soagen π input | + actuators | "
             + " | ".join(PEER_TOOLS) + " |",
             "|---|---|---:|---:|---:|" + "---:|" * len(PEER_TOOLS)]
    for robot, label, fn in PARAMETER_ROWS:
        c = counts[robot]
        lines.append(f"| {robot} | {label} | {cell(c['baked'][fn])} | {cell(c['inputs'][fn])} | "
                     f"{cell(c['inputs, actuators'][fn])} | "
                     + " | ".join(_peer_cell(measured[robot][t].get(fn)) for t in PEER_TOOLS) + " |")
    symoro = {r: measured[r]["OpenSYMORO"]["inverse_dynamics, actuators"] for r in ("puma560", "rx90", "general6")}
    lines += ["", "OpenSYMORO with rotor inertia and viscous and Coulomb friction of every joint as symbols too (its",
              "Coulomb term is sign(q̇), counted apart), inverse dynamics: "
              + "; ".join(f"{r} {_peer_cell(c)}" for r, c in symoro.items()) + ".",
              "The RX-90 is OpenSYMORO's sample robot",
              "(`soagen.robots.rx90()`: modified DH with D3, RL4; the inertial values are placeholders,",
              "the counts with π as an input do not depend on them).", "",
              "## Regressors (baked geometry)", "",
              "| robot | " + " | ".join(f"`{f}`" for f in IDENTIFICATION_FUNCTIONS) + " |",
              "|---|" + "---:|" * len(IDENTIFICATION_FUNCTIONS)]
    from soagen.model import robots
    for name in robots.EXAMPLES:
        c = counts[name]["identification"]
        lines.append(f"| {name} | " + " | ".join(cell(c[f]) for f in IDENTIFICATION_FUNCTIONS) + " |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------- the guide's op-count table
#: the bundled robots of ``generated/`` in the guide's table, with their labels
GUIDE_ROBOTS = (("puma560", "PUMA 560 (6)"), ("panda", "Panda (7)"), ("ur5", "UR5 (6)"))
#: the guide's rows: (label, function of generated/<robot>/opcounts.json)
GUIDE_FUNCTIONS = (("inverse dynamics", "inverse_dynamics"), ("mass matrix M", "mass_matrix"),
                   ("M⁻¹, innovations factorization", "mass_matrix_inverse_innovations"),
                   ("M⁻¹, composite-body M and LDLᵀ", "mass_matrix_inverse_cholesky"),
                   ("forward dynamics, FD4", "forward_dynamics_fd4"),
                   ("forward dynamics, CRBA", "forward_dynamics_crba"), ("Jacobian", "jacobian"),
                   ("Λ(0), O(n) recursion", "os_inertia_recursive"), ("Λ(0), (J M⁻¹ Jᵀ)⁻¹", "os_inertia_explicit"),
                   ("OSC torque", "osc_torque"))
GUIDE_BEGIN, GUIDE_END = "<!-- opcount table: begin -->", "<!-- opcount table: end -->"


def guide_table(counts_by_robot):
    """The op-count table of ``docs/guide/speed.md``: functions by robot, each cell
    "mul, add, div, sqrt (fma FMA)" of the generated program (docs/guide/opcounts.md's rule).

    counts_by_robot : {robot: {function: counts}}, the ``functions`` of ``generated/<robot>/opcounts.json``
    """
    head = "| function | " + " | ".join(label for _, label in GUIDE_ROBOTS) + " |"
    rows = [head, "|---|" + "---:|" * len(GUIDE_ROBOTS)]
    for label, f in GUIDE_FUNCTIONS:
        cells = (", ".join(str(counts_by_robot[r][f][k]) for k in ("mul", "add", "div", "sqrt"))
                 + f" ({counts_by_robot[r][f]['fma']} FMA)" for r, _ in GUIDE_ROBOTS)
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join([GUIDE_BEGIN, *rows, GUIDE_END])


def generated_counts(root):
    """{robot: {function: counts}} of the committed ``generated/<robot>/opcounts.json`` under ``root``."""
    return {r: json.loads((root / "generated" / r / "opcounts.json").read_text())["functions"]
            for r, _ in GUIDE_ROBOTS}


def with_guide_table(page, counts_by_robot):
    """``page`` with the text between its table markers replaced by :func:`guide_table`."""
    head, rest = page.split(GUIDE_BEGIN, 1)
    return head + guide_table(counts_by_robot) + rest.split(GUIDE_END, 1)[1]


if __name__ == "__main__":          # python -m soagen.reports.opcount ROOT: rewrite ROOT/docs/guide/speed.md's table
    import sys
    from pathlib import Path

    repo = Path(sys.argv[1])
    guide = repo / "docs" / "guide" / "speed.md"
    guide.write_text(with_guide_table(guide.read_text(), generated_counts(repo)))
