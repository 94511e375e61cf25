"""Write the float C of a bundled robot's controller functions and a bare-metal
harness that calls them on one state: ``python harness.py panda build``."""
from __future__ import annotations

import sys

import numpy as np

from soagen.targets.mcu import qemu as mcu

from soagen.model import robots
from soagen.codegen import generate
from soagen.options import Options

FUNCTIONS = ["inverse_dynamics", "gravity", "mass_matrix", "forward_dynamics", "jacobian", "osc_torque"]


def main(robot_name="panda", folder="build"):
    robot = robots.example(robot_name)
    gen = generate(robot, Options(precision="float", functions=FUNCTIONS), robot_name)
    q, qd, qdd, tau = robot.random_state(np.random.default_rng(0))
    pool = dict(q=q, qd=qd, qdd=qdd, tau=tau, u=np.zeros(6 * len(robot.tips)))
    inputs = {p.name: [[pool[a.name] for a in p.inputs]] for p in gen.programs}
    mcu.write_harness(gen, inputs, folder)
    print(f"wrote {folder}/: {robot_name}.c/.h, harness.c, mcu_runtime.c, mps2.ld, microbit.ld")


if __name__ == "__main__":
    main(*sys.argv[1:])
