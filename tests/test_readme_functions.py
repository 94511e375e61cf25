"""The guide's function table (docs/guide/functions.md) is the catalogue's (``soagen functions``)."""
from __future__ import annotations

import subprocess
import sys

from soagen.reports.functions_table import markdown_table
from tests.support import ROOT


def test_readme_function_table_is_the_catalogue():
    text = (ROOT / "docs" / "guide" / "functions.md").read_text()
    block = text.split("<!-- functions:begin -->\n", 1)[1].split("<!-- functions:end -->", 1)[0]
    assert block == markdown_table(), "stale: paste the output of `soagen functions` into docs/guide/functions.md"


def test_functions_command_prints_the_table():
    res = subprocess.run([sys.executable, "-m", "soagen.cli", "functions"], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout == markdown_table()
