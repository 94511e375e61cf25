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


SAME_C_SNIPPET = """
import hashlib
from soagen.codegen import generate
from soagen.options import Options
from tests.support.robots import random_robot
robot = random_robot(63, 4, tree=True, tips=2, floating_base=True, spherical_fraction=0.5)
gen = generate(robot, Options(functions=["inverse_dynamics_derivatives_forward_mode"]), "r")
print(hashlib.sha256(gen.csource.source.encode()).hexdigest())
"""


def test_the_c_does_not_depend_on_the_interpreters_hash_seed():
    """Forward mode differentiates each statement by its operands in a fixed order: the C of a
    floating tree with quaternion joints (whose normalization has one partial statement per
    coordinate) is the same under two hash seeds."""
    import os
    import subprocess
    import sys

    digests = {subprocess.run([sys.executable, "-c", SAME_C_SNIPPET], capture_output=True, text=True, check=True,
                              cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(digests) == 1
