"""The C++ face (``--target cpp``, :mod:`soagen.cpp`): the C compiles as C++, and a CMake project that
finds the installed package (``find_package(panda CONFIG)``, built with ``-Wall -Wextra -Werror``) gets,
through ``panda.hpp``, the Python module's values for every function, its matrices landing in default
(column-major) Eigen matrices the right way round; a column-major matrix handed to an output does not
compile; pkg-config links the C."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import soagen
from soagen import functions as F
from soagen.check import random_inputs
from soagen.model import robots
from tests.support.builds import built

#: the Panda's default functions and three derivative functions (several outputs; dt, a scalar input)
EXTRA = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives", "linearized_step")


def _cmake():
    """pip's cmake (the test extra) beside this Python, else one on PATH."""
    return shutil.which("cmake", path=str(Path(sys.executable).parent)) or shutil.which("cmake")


def _eigen_prefix():
    """Where cmeel-eigen (the test extra) put Eigen3Config.cmake: a cmeel.prefix folder on sys.path."""
    for root in sys.path:
        prefix = Path(root) / "cmeel.prefix"
        if (prefix / "share" / "eigen3" / "cmake" / "Eigen3Config.cmake").exists():
            return prefix
    raise AssertionError("Eigen3Config.cmake not found: pip install cmeel-eigen (in the test extra)")


def _run(*cmd, cwd=None, env=None):
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(map(str, cmd))}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res.stdout


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """(robot, functions, module, installed prefix, source folder) of the Panda's C++ package."""
    robot = robots.example("panda")
    names = tuple(s.name for s in F.select(robot, soagen.Options())) + EXTRA
    _, mod = built("cpp_panda", lambda: robot, functions=names)
    tmp = tmp_path_factory.mktemp("cpp")
    src, prefix = tmp / "panda", tmp / "prefix"
    soagen.cpp.write(robot, src, name="panda", functions=names, optimize="O0")
    cmake = _cmake()
    _run(cmake, "-S", src, "-B", tmp / "build", f"-DCMAKE_PREFIX_PATH={_eigen_prefix()}", "-DCMAKE_C_FLAGS=-O0")
    _run(cmake, "--build", tmp / "build")
    _run(cmake, "--install", tmp / "build", "--prefix", prefix)
    return robot, names, mod, prefix, src


def _inputs(robot, spec, rng):
    """A state for ``spec``'s inputs (soagen.check.random_inputs): [(name, values)]."""
    pool = random_inputs(robot, rng)
    return [(arg, np.atleast_1d(pool[arg])) for arg in spec.inputs]


def _shape2(shape):
    """A result's shape as the 2-D matrix the C++ face gives: (m, 4, 4) -> (4m, 4), (k,) -> (k, 1)."""
    if len(shape) == 3:
        return shape[0] * shape[1], shape[2]
    return (shape[0], 1) if len(shape) == 1 else tuple(shape)


def _program(robot, names, mod, rng):
    """main.cpp calling every function twice (by value into default column-major matrices, and into
    outputs of the types the header declares), printing each output row by row; and the expected
    [(label, matrix)] of the Python module on the same inputs."""
    specs = {s.name: s for s in F.specs(robot)}
    lines, expected = ["#include <cstdio>", "#include <type_traits>", '#include "panda.hpp"', "",
                       "template <class M> static void show(const char *what, const M &m) {",
                       '    std::printf("%s", what);',
                       "    for (int i = 0; i < m.rows(); ++i) for (int j = 0; j < m.cols(); ++j) "
                       'std::printf(" %.17g", static_cast<double>(m(i, j)));',
                       '    std::printf("\\n");', "}", "", "int main() {"], []
    for name in names:
        spec = specs[name]
        args = _inputs(robot, spec, rng)
        method = getattr(mod, name) if name in dir(mod) else mod.function(name)
        results = method(*[float(v[0]) if a in ("dt", "e") else v for a, v in args])
        results = results if isinstance(results, tuple) else (results,)
        call = []
        for arg, values in args:
            if arg in ("dt", "e"):
                call.append(repr(float(values[0])))
                continue
            var = f"{name}_{arg}"
            lines += [f"    Eigen::Matrix<double, {values.size}, 1> {var};",
                      f"    {var} << {', '.join(repr(float(x)) for x in values)};"]
            call.append(var)
        value = f"{name}_value"
        lines.append(f"    const auto {value} = panda::{name}({', '.join(call)});")
        outs = []
        for o, result in zip(spec.outputs, results):
            rows, cols = _shape2(np.shape(result))
            member = value if len(spec.outputs) == 1 else f"{value}.{o.name}"
            default = f"{name}_{o.name}_colmajor"      # Eigen's default storage: column-major
            lines += [f"    const Eigen::Matrix<double, {rows}, {cols}> {default} = {member};",
                      f'    show("{name} {o.name} value", {default});',
                      f"    std::decay<decltype({member})>::type {name}_{o.name}_out;"]
            outs.append(o.name)
            expected.append((f"{name} {o.name} value", np.reshape(result, (rows, cols))))
        # the out form, into outputs of the header's own types; a guarded function returns its status
        call_out = f"panda::{name}({', '.join(call + [f'{name}_{o}_out' for o in outs])})"
        lines.append(f"    if ({call_out} != 0) return 1;" if spec.solves == "Omega" else f"    {call_out};")
        for o in outs:
            lines.append(f'    show("{name} {o} out", {name}_{o}_out);')
        expected += [(label.replace(" value", " out"), want) for label, want in expected[-len(outs):]]
    lines += ["    return 0;", "}"]
    return "\n".join(lines) + "\n", expected


def test_the_c_compiles_as_cpp(package):
    """g++ and clang++ take the generated .c as C++ (C's restrict is gone there), -Wall -Wextra -Werror."""
    _, _, _, _, src = package
    for compiler in ("g++", "clang++"):
        _run(compiler, "-x", "c++", "-std=c++14", "-fsyntax-only", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
             f"-I{src}", src / "panda.c")


def test_every_function_through_cmake_and_eigen_equals_the_module(package, tmp_path):
    robot, names, mod, prefix, _ = package
    source, expected = _program(robot, names, mod, np.random.default_rng(3))
    (tmp_path / "main.cpp").write_text(source)
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(consumer LANGUAGES CXX)\n"
        "find_package(panda CONFIG REQUIRED)\nadd_executable(app main.cpp)\n"
        "target_compile_options(app PRIVATE -Wall -Wextra -Werror -O0)\n"
        "target_link_libraries(app PRIVATE panda::eigen)\n")
    cmake = _cmake()
    _run(cmake, "-S", tmp_path, "-B", tmp_path / "build", f"-DCMAKE_PREFIX_PATH={prefix};{_eigen_prefix()}")
    _run(cmake, "--build", tmp_path / "build")
    printed = _run(tmp_path / "build" / "app").splitlines()
    assert len(printed) == len(expected) >= 2 * len(names)
    for line, (label, want) in zip(printed, expected):
        words = line.split()
        assert " ".join(words[:3]) == label
        got = np.array([float(x) for x in words[3:]]).reshape(want.shape)
        assert np.max(np.abs(want)) > 0, label
        assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want)), (label, got, want)
    # matrices a transpose would change: J (6 x 7), the derivatives, A and B of the step
    asymmetric = [label for label, want in expected if want.shape[0] != want.shape[1] and min(want.shape) > 1
                  or want.shape[0] == want.shape[1] > 1 and np.max(np.abs(want - want.T)) > 1e-3]
    assert {"jacobian J value", "inverse_dynamics_derivatives dtau_dq value", "linearized_step A value"} \
        <= set(asymmetric)


def test_a_column_major_output_does_not_compile(package, tmp_path):
    """The out form's matrices are row-major Eigen types: a default Eigen::Matrix<double, 6, 7> handed to
    jacobian is a compile error, not a silent transpose (the value form converts it instead)."""
    _, _, _, prefix, _ = package
    eigen = _eigen_prefix() / "include" / "eigen3"
    good = ('#include "panda.hpp"\nint main() { Eigen::Matrix<double, 7, 1> q = Eigen::Matrix<double, 7, 1>::Zero();'
            ' Eigen::Matrix<double, 6, 7> J = panda::jacobian(q); return J(0, 0) > 1.0; }\n')
    bad = good.replace("Eigen::Matrix<double, 6, 7> J = panda::jacobian(q);",
                       "Eigen::Matrix<double, 6, 7> J; panda::jacobian(q, J);")
    for text, ok in ((good, True), (bad, False)):
        (tmp_path / "t.cpp").write_text(text)
        res = subprocess.run(["g++", "-std=c++14", "-fsyntax-only", f"-I{prefix / 'include'}", f"-I{eigen}",
                              str(tmp_path / "t.cpp")], capture_output=True, text=True)
        assert (res.returncode == 0) == ok, res.stderr[-2000:]
    assert "jacobian" in res.stderr


def test_pkg_config_links_the_c(package, tmp_path):
    """The installed panda.pc is relocatable (prefix from its own folder) and links a C program."""
    robot, _, mod, prefix, _ = package
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = _run("pkg-config", "--cflags", "--libs", "--static", "panda", env=env).split()
    (tmp_path / "main.c").write_text('#include <stdio.h>\n#include "panda.h"\nint main(void) {\n'
                                     "    double q[7] = {0}, g[7];\n    panda_gravity(q, g);\n"
                                     '    for (int i = 0; i < 7; i++) printf("%.17g\\n", g[i]);\n    return 0;\n}\n')
    _run("cc", "-std=c99", tmp_path / "main.c", "-o", tmp_path / "app", *flags)
    got = np.array([float(x) for x in _run(tmp_path / "app").split()])
    want = mod.gravity(np.zeros(7))
    assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want)) and np.max(np.abs(want)) > 1
