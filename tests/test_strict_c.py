"""The emitted C compiles warning-free under strict flags, double and float."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from soagen import robots
from soagen.codegen import generate

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wconversion", "-Wdouble-promotion",
          "-Werror", "-O1", "-c"]
COMPILERS = [c for c in ("gcc", "clang") if shutil.which(c)]


@pytest.mark.parametrize("precision", ["double", "float"])
@pytest.mark.parametrize("compiler", COMPILERS)
def test_strict_flags(compiler, precision, tmp_path):
    gen = generate(robots.example("puma560"), "puma560", precision)
    (tmp_path / "puma560.h").write_text(gen.csource.header)
    (tmp_path / "puma560.c").write_text(gen.csource.source)
    res = subprocess.run([compiler, *STRICT, str(tmp_path / "puma560.c"), "-o", str(tmp_path / "p.o")],
                         capture_output=True, text=True)
    assert res.returncode == 0 and not res.stderr, res.stderr
    text = gen.csource.source
    assert "malloc" not in text and "static" not in text      # no heap, no global state
    if precision == "float":
        assert "double" not in text and "cosf(" in text
