"""generated/ holds the C of the bundled robots and must match the generator
byte for byte (regenerate with `make generated` when this fails)."""
from __future__ import annotations

import pytest

from tests.support import ROOT
from soagen.reports import opcount
from soagen.model import robots
from soagen.codegen import generate
from soagen.options import Options


@pytest.mark.parametrize("name", robots.EXAMPLES)
def test_generated_folder_is_fresh(name):
    gen = generate(robots.example(name), Options(variants=None), name)   # as `make generated`: every variant
    folder = ROOT / "generated" / name
    assert (folder / f"{name}.h").read_text() == gen.csource.header, "stale: run `make generated`"
    assert (folder / f"{name}.c").read_text() == gen.csource.source, "stale: run `make generated`"
    assert (folder / "opcounts.md").read_text() == opcount.table(name, gen.programs)
    assert (folder / "opcounts.json").read_text() == opcount.as_json(gen_robot(name), gen.programs)


def gen_robot(name):
    return robots.example(name)
