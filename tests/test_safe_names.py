"""The robot's name (or ``--name``) becomes safe C: no reserved identifier (clang's
``-Wreserved-identifier``, in C and, for the header, in C++), no file that hides a C standard
header under ``-I`` the output folder, no clash with soagen's own ``soagen_`` symbols, and one
line saying what a changed name became (:func:`soagen.targets.common.inert.c_name`)."""
from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import soagen
from soagen import codegen
from soagen.model.errors import ModelWarning
from soagen.options import Options
from soagen.targets.common.inert import c_name
from tests.support.robots import planar_2link, two_link_closed_form

#: clang's warnings for reserved identifiers: functions and variables, and macros (the sizes, the guard)
RESERVED = ["-Wreserved-identifier", "-Wreserved-macro-identifier", "-Werror", "-fsyntax-only"]


def named(name):
    """The planar 2R arm (:func:`planar_2link`) under another robot name."""
    return dataclasses.replace(planar_2link(), name=name)


@pytest.mark.parametrize("name, identifier", [
    ("ümlaut", "mlaut"), ("Unitree Z1 (v2)", "Unitree_Z1_v2"), ("_x", "x"), ("__y", "y"), ("9lives", "r_9lives"),
    ("a__b__", "a_b"), ("math", "r_math"), ("STDIO", "r_STDIO"), ("soagen_argv", "r_soagen_argv"),
    ("soagen", "r_soagen"), ("Soagen-x", "r_Soagen_x"), ("harness", "r_harness"),
    ("x" * 38 + "__" + "y" * 30, "x" * 38 + "_f9330a88")])
def test_c_name_rules(name, identifier):
    """Each rule of :func:`c_name` once, with its one-line note; what it returns it returns
    unchanged and without a note."""
    with pytest.warns(ModelWarning, match=f"^the robot name .* is '{identifier}' in C \\([^\n]*\\)$"):
        assert c_name(name) == identifier
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c_name(identifier) == identifier
        assert c_name("soagenx") == "soagenx" and c_name("panda") == "panda"


@pytest.mark.parametrize("name", ["ümlaut", "Unitree Z1 (v2)", "_x", "__y", "9lives"])
def test_no_reserved_identifier_in_c_or_cpp(name, tmp_path):
    """clang ``-Wreserved-identifier -Wreserved-macro-identifier -Werror`` passes on the
    emitted ``.c`` (C99) and on a C++ file including the ``.h`` (C++ reserves ``__`` anywhere)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)          # the note: test_c_name_rules
        gen = codegen.generate(named(name), Options(functions=("gravity",)), name)
    stem = gen.csource.name
    (tmp_path / f"{stem}.h").write_text(gen.csource.header)
    (tmp_path / f"{stem}.c").write_text(gen.csource.source)
    (tmp_path / "use.cpp").write_text(f'#include "{stem}.h"\nint main() {{ double q[2] = {{0, 0}}, g[2]; '
                                      f'{stem}_gravity(q, g); return 0; }}\n')
    for cmd in (["clang", "-std=c99", str(tmp_path / f"{stem}.c")],
                ["clang++", "-std=c++11", str(tmp_path / "use.cpp")]):
        res = subprocess.run([*cmd, *RESERVED, "-I", str(tmp_path)], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr


def test_name_math_keeps_math_h(tmp_path):
    """``soagen generate --name math``: no ``math.h`` in the output folder, one note saying
    what the name became, and a program that includes ``<math.h>`` and the robot's header
    builds under ``-I`` the folder (as the README builds it) and runs."""
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "soagen", "generate", "--example", "puma560", "--function", "gravity",
                          "--name", "math", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    stderr = res.stderr
    (header,) = out.glob("*.h")
    stem = header.stem
    (tmp_path / "main.c").write_text(
        f'#include <math.h>\n#include <stdio.h>\n#include "{stem}.h"\n'
        f'int main(void) {{ double q[6] = {{0}}, g[6]; {stem}_gravity(q, g); '
        'printf("%.3f\\n", sqrt(2.0) + 0 * g[0]); return 0; }\n')
    exe = tmp_path / "main"
    res = subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-I", str(out), str(tmp_path / "main.c"),
                          str(out / f"{stem}.c"), "-lm", "-o", str(exe)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout == "1.414\n"
    assert header.name.lower() != "math.h"
    notes = [line for line in stderr.splitlines() if "'math'" in line]
    assert notes == ["soagen: warning: the robot name 'math' is 'r_math' in C "
                     "(r_ before it: math.h would hide <math.h>)"], stderr


def test_name_mcu_runtime_keeps_the_start_up(tmp_path):
    """``soagen footprint --name mcu_runtime``: the robot's C does not overwrite the harness's
    start-up (``mcu_runtime.c``), so the firmware links and the report has its row."""
    res = subprocess.run([sys.executable, "-m", "soagen", "footprint", "--example", "puma560", "--function", "gravity",
                          "--name", "mcu_runtime"], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert re.search(r"^\| gravity \|( \d+ / \d+ / \d+ \|){4}$", res.stdout, re.M), res.stdout
    assert "'mcu_runtime' is 'r_mcu_runtime' in C (r_ before it: mcu_runtime.c is a file of soagen's MCU harness)" \
        in res.stderr


def test_robot_named_soagen_argv_builds_and_works():
    """A robot named ``soagen_argv`` (the prefix of the module's entry points
    ``soagen_argv_<f>``) builds, with a note, and its module gives the textbook 2R dynamics."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = soagen.build(named("soagen_argv"), functions=("gravity", "inverse_dynamics"), optimize="O0")
    rng = np.random.default_rng(0)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-2, 2, (3, 2))
        want = two_link_closed_form(q, qd, qdd)
        np.testing.assert_allclose(mod.gravity(q), want["G"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(mod.inverse_dynamics(q, qd, qdd), want["tau"], rtol=1e-12, atol=1e-12)
    assert [str(w.message) for w in caught if issubclass(w.category, ModelWarning)] == [
        "the robot name 'soagen_argv' is 'r_soagen_argv' in C (r_ before it: soagen_ begins soagen's own symbols)"]


def test_the_guide_says_what_c_name_does():
    """Every ``"`a` → `b`"`` of the guide's security section is :func:`c_name`'s, its note line is
    the command line's, and the length it quotes is :data:`LONGEST`'s."""
    from soagen.targets.common.inert import LONGEST
    from tests.support import ROOT

    text = " ".join((ROOT / "docs/guide/checking.md").read_text().split("## Security", 1)[1].split("\n## ")[0].split())
    pairs = re.findall(r"`([^`]+)` → `([^`]+)`", text)
    assert len(pairs) >= 7, pairs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        assert {a: c_name(a) for a, _ in pairs} == dict(pairs)
    with pytest.warns(ModelWarning) as caught:
        c_name("math")
    quoted = re.search(r"`soagen: warning: ([^`]*) \(\.\.\.\)`", text)[1]
    assert str(caught[0].message).startswith(quoted + " (")
    assert f"a name over {LONGEST} characters keeps its first {LONGEST - 9} and ends in `_` and 8 hex digits" in text
