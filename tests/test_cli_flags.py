"""Every command-line flag through ``python -m soagen.cli``, each checked by an
effect it must have (a flag that were ignored would fail): small robots and
``--function`` keep every call to a few seconds."""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import numpy as np

import soagen
from soagen import reference as ref
from soagen.model import robots
from tests.support import ROOT

DATA = ROOT / "tests" / "data"
ONE = DATA / "bad" / "good_one_joint.urdf"        # one revolute joint j1 moving l1
TWO = DATA / "mimic_joint.urdf"                   # joints j1, j2 (j2 a mimic, independent here)


def cli(*args):
    res = subprocess.run([sys.executable, "-m", "soagen.cli", *map(str, args)], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def generate(tmp_path, name, *args):
    out = tmp_path / name
    cli("generate", *args, "--name", name, "--out", out, "--quiet")
    return (out / f"{name}.h").read_text(), (out / f"{name}.c").read_text(), out


def run_c(folder, name, function, inputs, outputs):
    """Compile ``<name>.c`` with a main calling ``<name>_<function>`` on ``inputs``
    (lists of floats); returns the printed outputs (one array per output size)."""
    decls = [f"const double in{i}[{len(v)}] = {{{', '.join(repr(float(x)) for x in v)}}};"
             for i, v in enumerate(inputs)]
    decls += [f"double out{i}[{n}];" for i, n in enumerate(outputs)]
    args = ", ".join([f"in{i}" for i in range(len(inputs))] + [f"out{i}" for i in range(len(outputs))])
    prints = [f'for (int i = 0; i < {n}; ++i) printf("%.17g\\n", out{i}[i]);' for i, n in enumerate(outputs)]
    (folder / "main.c").write_text(f'#include <stdio.h>\n#include "{name}.h"\nint main(void) {{\n'
                                   + "\n".join(decls) + f"\n{name}_{function}({args});\n" + "\n".join(prints)
                                   + "\nreturn 0;\n}\n")
    exe = folder / "main"
    subprocess.run(["gcc", "-O1", "-I", str(folder), str(folder / "main.c"), str(folder / f"{name}.c"), "-lm",
                    "-o", str(exe)], check=True, capture_output=True)
    values = np.array([float(x) for x in subprocess.run([str(exe)], check=True, capture_output=True,
                                                        text=True).stdout.split()])
    return np.split(values, np.cumsum(outputs)[:-1])


def test_lock_removes_the_joint_and_uses_the_value(tmp_path):
    h2, _, _ = generate(tmp_path, "free", TWO, "--tip", "l2", "--function", "forward_kinematics")
    h1, c1, out1 = generate(tmp_path, "held", TWO, "--tip", "l2", "--lock", "j2=0.7",
                            "--function", "forward_kinematics")
    assert "FREE_NQ 2" in h2 and "HELD_NQ 1" in h1 and " j2 " not in h1 and " j2 " in h2
    robot = soagen.load_urdf(TWO, tips=["l2"], lock={"j2": 0.7})
    (pose,) = run_c(out1, "held", "forward_kinematics", [[0.3]], [16])
    assert np.allclose(pose.reshape(4, 4), ref.forward_kinematics(robot, [0.3])[0], rtol=0, atol=1e-12)
    at_zero = soagen.load_urdf(TWO, tips=["l2"], lock={"j2": 0.0})
    assert not np.allclose(pose.reshape(4, 4), ref.forward_kinematics(at_zero, [0.3])[0], atol=1e-3)


def test_gravity_changes_the_header_and_the_numbers(tmp_path):
    g = (0.0, 0.0, -1.62)
    h, _, out = generate(tmp_path, "moon", "--example", "puma560", "--gravity", *g, "--function", "gravity")
    assert "Gravity (world frame): [0.0, 0.0, -1.62]" in h
    q = [0.1, -0.4, 0.3, 0.5, -0.2, 0.7]
    (G,) = run_c(out, "moon", "gravity", [q], [6])
    want = ref.gravity(robots.example("puma560", gravity=g), np.array(q))
    assert np.allclose(G, want, rtol=1e-12, atol=1e-12)
    assert np.abs(G - ref.gravity(robots.example("puma560"), np.array(q))).max() > 1.0


def test_floating_base_adds_a_free_flyer(tmp_path):
    urdf = tmp_path / "body.urdf"       # good_one_joint.urdf with a massive root link
    urdf.write_text(ONE.read_text().replace('<link name="base"/>', '<link name="base"><inertial><mass value="2"/>'
                                            '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>'
                                            '</inertial></link>'))
    fixed, _, _ = generate(tmp_path, "fixed", urdf, "--tip", "l1", "--function", "inverse_dynamics")
    free, c, _ = generate(tmp_path, "free", urdf, "--tip", "l1", "--floating-base", "--function", "inverse_dynamics")
    assert "FIXED_NQ 1" in fixed and "root_joint" not in fixed
    assert "root_joint (floating, moves link base" in free and "FREE_NQ 7" in free   # the macro holds nv
    assert "const double q[8]" in c and "const double qd[7]" in c and "double tau[restrict 7]" in c     # nq = 7 + 1


def test_an_example_takes_the_robot_options(tmp_path):
    """With --example, --tip and --point-tip replace the example's tips, --lock adds to its locks and
    --floating-base adds a free flyer, as with a file."""
    h, _, _ = generate(tmp_path, "tips", "--example", "panda", "--tip", "panda_link7", "--point-tip",
                       "panda_hand:0,0,0.1", "--function", "forward_kinematics")
    assert re.findall(r"^ \*\s+\d (\w+) on body 6", h, re.M) == ["panda_link7", "panda_hand"]
    assert "offset [0.0, 0.0, 0.207" in h       # 0.1 m along the hand, itself 0.107 m beyond panda_link7
    h, _, _ = generate(tmp_path, "held", "--example", "panda", "--lock", "panda_joint7=0.3", "--floating-base",
                       "--function", "forward_kinematics")
    assert "root_joint (floating, moves link panda_link0" in h and "HELD_NQ 12" in h and " panda_joint7 (" not in h
    h, _, _ = generate(tmp_path, "puma", "--example", "puma560", "--point-tip", "link6", "--function", "jacobian")
    assert re.findall(r"^ \*\s+\d (\w+) on body", h, re.M) == ["link6"]


def test_an_unknown_tip_of_an_example_is_a_one_line_error(tmp_path):
    res = subprocess.run([sys.executable, "-m", "soagen.cli", "generate", "--example", "panda", "--tip", "panda_hnd",
                          "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=600)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "unknown tip link 'panda_hnd'" in res.stderr and "panda_hand," in res.stderr
    assert not (tmp_path / "o").exists()


def test_trig_inputs_take_cos_and_sin(tmp_path):
    _, plain, _ = generate(tmp_path, "plain", "--example", "puma560", "--function", "inverse_dynamics")
    _, trig, out = generate(tmp_path, "trig", "--example", "puma560", "--trig-inputs", "--function", "inverse_dynamics")
    assert "soagen_sincos(5, soagen_angle" in plain and "soagen_cos[4]" in plain and "cq[6]" not in plain   # q1 unread
    assert "const double cq[6], const double sq[6]" in trig and "cos(" not in trig
    q, qd, qdd = np.array([0.1, -0.4, 0.3, 0.5, -0.2, 0.7]), np.linspace(-1, 1, 6), np.linspace(1, -0.5, 6)
    (tau,) = run_c(out, "trig", "inverse_dynamics", [q, qd, qdd, np.cos(q), np.sin(q)], [6])
    assert np.allclose(tau, ref.inverse_dynamics(robots.example("puma560"), q, qd, qdd), rtol=1e-12, atol=1e-12)


def test_a_long_function_takes_each_angle_where_a_statement_needs_it(tmp_path, monkeypatch):
    """Up to LONG_UNIT_STATEMENTS statements a function computes all its sines and cosines at once
    (soagen_sincos, one vectorized loop); above, each statement calls soagen_sin/soagen_cos (the
    array made gcc spill more in long functions).  Both forms give the reference's torques."""
    from soagen import codegen
    from soagen.options import Options
    from soagen.targets.c99.emit import emit
    from soagen.targets.common import compiler

    puma = robots.example("puma560")
    progs, _ = codegen.programs(puma, Options(functions=("inverse_dynamics",)))
    q, qd, qdd = np.array([0.1, -0.4, 0.3, 0.5, -0.2, 2.7]), np.linspace(-1, 1, 6), np.linspace(1, -0.5, 6)
    want = ref.inverse_dynamics(puma, q, qd, qdd)
    texts = {}
    for form, limit in (("batched", compiler.LONG_UNIT_STATEMENTS), ("single", 10)):
        monkeypatch.setattr(compiler, "LONG_UNIT_STATEMENTS", limit)
        src = emit(puma, progs, form)
        out = tmp_path / form
        out.mkdir()
        (out / f"{form}.h").write_text(src.header)
        (out / f"{form}.c").write_text(texts.setdefault(form, src.source))
        (tau,) = run_c(out, form, "inverse_dynamics", [q, qd, qdd], [6])
        assert np.allclose(tau, want, rtol=1e-12, atol=1e-12), form
    assert "soagen_sincos(5, soagen_angle" in texts["batched"] and "soagen_cos(q[" not in texts["batched"]
    assert "soagen_cos(q[4])" in texts["single"] and "soagen_angle" not in texts["single"]


def test_the_trig_form_and_the_compiler_flags_judge_a_unit_by_one_count(monkeypatch):
    """A unit whose sines and cosines are computed per statement (long) is the unit that gets gcc's
    long-unit flags, and no other: both ask ``compiler.is_long`` of the same statement count, with
    the threshold just below and at each function's count (its text has more lines than statements)."""
    from soagen import codegen
    from soagen.options import Options
    from soagen.targets.c99.emit import Emitter
    from soagen.targets.common import compiler

    monkeypatch.setattr(compiler, "is_gcc", lambda cc: True)
    puma = robots.example("puma560")
    progs, _ = codegen.programs(puma, Options(functions=("inverse_dynamics", "mass_matrix", "jacobian")))
    seen = set()
    for prog in progs:
        statements = sum(isinstance(item, tuple) for item in prog.body)
        for limit in (statements - 1, statements):
            monkeypatch.setattr(compiler, "LONG_UNIT_STATEMENTS", limit)
            ((_, text),) = Emitter(puma, "p").function(prog)
            per_statement = "soagen_sincos(" not in text
            flagged = compiler.GCC_LONG_UNIT_ARGS[0] in compiler.unit_args(["-O3"], text)
            assert per_statement == flagged == (limit < statements), (prog.name, limit)
            seen.add(flagged)
    assert seen == {True, False}


def test_variants_add_the_named_families():
    def functions(*args):
        text = cli("opcount", ONE, "--tip", "l1", *args)
        return {line.split()[0] for line in text.splitlines()[1:] if line and not line.startswith("(")}

    none, some, every = functions(), functions("--variants", "mass_matrix"), functions("--variants")
    assert some - none == {"mass_matrix_ne"}
    assert every - none == {"mass_matrix_ne", "mass_matrix_inverse_innovations", "mass_matrix_inverse_cholesky",
                            "forward_dynamics_fd4", "forward_dynamics_fd1", "forward_dynamics_fd2",
                            "forward_dynamics_fd3", "forward_dynamics_crba", "os_inertia_recursive",
                            "os_inertia_explicit"}


def check(*args):
    """``soagen check`` of the PUMA's inverse dynamics: (the error table it prints, the error)."""
    text = cli("check", "--example", "puma560", "--quiet", "--function", "inverse_dynamics", *args)
    assert "PASS" in text
    table = text.split("generated C vs numpy reference", 1)[1]      # after the build times
    return table, float(re.search(r"inverse_dynamics\s+(\S+)", table).group(1))


def test_check_in_float_and_its_seed():
    table, err = check("--precision", "float", "--samples", "3", "--seed", "1")
    assert "bound 0.001 " in table
    assert 1e-9 < err < 1e-3          # single precision: far above double's round-off
    assert check("--precision", "float", "--samples", "3", "--seed", "1")[0] == table
    assert check("--precision", "float", "--samples", "3", "--seed", "2")[0] != table
    table, err = check("--samples", "3")
    assert "bound 1e-10 " in table and err < 1e-12


def test_opcount_markdown_and_json(tmp_path):
    text = cli("opcount", ONE, "--tip", "l1", "--function", "inverse_dynamics", "--function", "mass_matrix",
               "--markdown", tmp_path / "o.md", "--json", tmp_path / "o.json")
    md, counts = (tmp_path / "o.md").read_text(), json.loads((tmp_path / "o.json").read_text())["functions"]
    for name in ("inverse_dynamics", "mass_matrix"):
        printed = text.split(name, 1)[1].split()[:2]                      # mul, add on stdout
        assert [str(counts[name]["mul"]), str(counts[name]["add"])] == printed
        assert re.search(rf"\| {name} \| {counts[name]['mul']} \| {counts[name]['add']} \|", md), md


def test_opcount_scaling_with_plot(tmp_path):
    cli("opcount", "--scaling", "2,3", "--plot", tmp_path / "s.png", "--markdown", tmp_path / "s.md",
        "--json", tmp_path / "s.json")
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((tmp_path / "s.json").read_text())
    md = (tmp_path / "s.md").read_text()
    assert "| function | n=2 | n=3 |" in md
    assert set(data["chain"]["inverse_dynamics"]) == {"2", "3"} and set(data["tree"]["inverse_dynamics"]) <= {"2", "3"}
    row = data["chain"]["mass_matrix"]
    a, b = row['2']['mul'] + row['2']['add'], row['3']['mul'] + row['3']['add']
    # with two sizes the exponent is the slope between them (it printed nan), and the header names the sizes
    # and outputs that were run (it said --scaling 2..48 and docs/ whatever was run)
    exponent = f"{math.log(b / a) / math.log(3 / 2):.2f}"
    assert f"| mass_matrix | {a} | {b} | {exponent} | {exponent} |" in md
    assert "nan" not in md
    assert (f"Generated by `soagen opcount --scaling 2..3 --plot {tmp_path / 's.png'} --markdown {tmp_path / 's.md'} "
            f"--json {tmp_path / 's.json'}`.") in md


def test_footprint_command(tmp_path):
    text = cli("footprint", "--example", "puma560", "--function", "gravity", "--markdown", tmp_path / "f.md")
    assert text == (tmp_path / "f.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| gravity |"))
    cells = [c.strip() for c in row.strip("|").split("|")[1:]]
    assert len(cells) == 4 and all(re.fullmatch(r"\d+ / \d+ / \d+", c) for c in cells)
    ref_row = next(line for line in (ROOT / "generated/puma560/footprint.md").read_text().splitlines()
                   if line.startswith("| gravity |"))
    assert row == ref_row            # the same function, the same bytes as the full report


STAGE_LINE = re.compile(r"^  (\w+): started at \d+\.\d s", re.M)
#: functions whose record and compile stages overlap in the pipelined build (they interleaved 7 lines before)
SOME = ("inverse_dynamics", "mass_matrix", "jacobian", "gravity", "forward_kinematics")


def check_stderr(tmp_path, functions, *extra):
    """stderr (a pipe, not a terminal) of a small ``soagen check`` of ``functions`` that builds from an empty cache."""
    env = {**os.environ, "SOAGEN_CACHE": str(tmp_path / "cache")}
    res = subprocess.run([sys.executable, "-m", "soagen.cli", "check", "--example", "puma560", "--optimize", "O0",
                          "--samples", "5", *[a for f in functions for a in ("--function", f)], *extra],
                         capture_output=True, text=True, timeout=600, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stderr


def test_progress_lines_off_a_terminal_and_none_with_quiet(tmp_path):
    """Off a terminal each stage prints one line, however its functions interleave; --quiet prints none."""
    err = check_stderr(tmp_path / "a", SOME)
    lines = STAGE_LINE.findall(err)
    assert sorted(lines) == ["compile", "record"], err
    assert [line for line in err.splitlines() if line.startswith("  ")] == \
        [line for line in err.splitlines() if STAGE_LINE.match(line)], err       # no other progress line
    assert re.search(r"^  record: started at \d+\.\d s, 5 steps$", err, re.M), err
    assert STAGE_LINE.findall(check_stderr(tmp_path / "b", SOME[:1], "--quiet")) == []
