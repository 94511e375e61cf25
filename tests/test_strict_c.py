"""The emitted C compiles warning-free under strict flags, double and float."""
from __future__ import annotations

import re
import subprocess

import pytest

from soagen import robots
from soagen.codegen import generate
from soagen.options import Options

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wconversion", "-Wdouble-promotion",
          "-Werror", "-O1", "-c"]
COMPILERS = ["gcc", "clang"]   # .ci/run installs both


@pytest.mark.parametrize("trig_inputs", [False, True])
@pytest.mark.parametrize("precision", ["double", "float"])
@pytest.mark.parametrize("compiler", COMPILERS)
def test_strict_flags(compiler, precision, trig_inputs, tmp_path):
    gen = generate(robots.example("puma560"), Options(precision=precision, trig_inputs=trig_inputs), "puma560")
    (tmp_path / "puma560.h").write_text(gen.csource.header)
    (tmp_path / "puma560.c").write_text(gen.csource.source)
    res = subprocess.run([compiler, *STRICT, str(tmp_path / "puma560.c"), "-o", str(tmp_path / "p.o")],
                         capture_output=True, text=True)
    assert res.returncode == 0 and not res.stderr, res.stderr
    text = gen.csource.source
    # no heap, no global state (the only static is the inline double sin/cos helper)
    assert "malloc" not in text and not re.search(r"\bstatic\b(?! inline double soagen_(sin|cos)\()", text)
    if precision == "float":
        assert "double" not in text and ("cosf(" in text) != trig_inputs
    assert ("cos(" in text or "cosf(" in text) != trig_inputs


def test_trig_inputs_module_matches_reference():
    """cos/sin of q as inputs: the wrappers compute them, results are unchanged."""
    import soagen
    from soagen.check import check_module

    robot = robots.example("ur5")
    mod = soagen.build(robot, functions=["inverse_dynamics", "mass_matrix", "jacobian", "os_inertia"],
                       trig_inputs=True)
    results = check_module(robot, mod, samples=30)
    assert list(results) == ["jacobian", "inverse_dynamics", "mass_matrix", "os_inertia"]
    assert all(r.ok and r.compared >= 10 for r in results.values()), results
