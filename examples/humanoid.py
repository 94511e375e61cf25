"""Operational space inertia of a floating-base humanoid with two hands.

Generates the TALOS humanoid of example-robot-data (32 joints + a 6-dof
floating base: nq = 39, nv = 38) with its two hands as operational points,
computes Λ_e (12 × 12) with the O(n) recursion of [KJR]/[CK] and its coupling
blocks (the hands share the torso and the floating base), checks it against
(J M⁻¹ Jᵀ)⁻¹ from the numpy reference, and prints the time per call of the
generated function against the numpy reference.

    pip install '.[examples]'      # example-robot-data ships the URDF
    python examples/humanoid.py                              # docs/humanoid.txt is one run's output
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from _optional import require

import soagen
from soagen import reference as ref

HANDS = ["gripper_left_base_link", "gripper_right_base_link"]


def talos_urdf():
    """talos_reduced.urdf from the example-robot-data wheel (soagen.robots.path)."""
    return soagen.robots.path("talos_reduced")


def per_call(fn, states, repeat=5):
    """Best-of-``repeat`` seconds per call over ``states``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for q in states:
            fn(q)
        best = min(best, (time.perf_counter() - t0) / len(states))
    return best


def main(argv=None):
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    require("humanoid.py", ["example-robot-data"])
    robot = soagen.load_urdf(talos_urdf(), tips=HANDS, floating_base=True)
    actuated = sum(b.joint_type != "floating" for b in robot.bodies)
    print(f"{robot.name}: {actuated} actuated joints and a {robot.bodies[0].joint_type} base, nq = {robot.nq}, "
          f"nv = {robot.nv}, tips {HANDS}")
    print("building its module (sympy, then gcc; cached after the first run) ...", flush=True)
    t0 = time.perf_counter()
    mod = soagen.build(robot, functions=["os_inertia", "os_inertia_inverse", "jacobian", "mass_matrix_inverse"],
                       progress=True)
    print(f"generated and compiled in {time.perf_counter() - t0:.1f} s "
          f"(cached afterwards; os_inertia: {mod.ops['os_inertia']['mul']} mul, "
          f"{mod.ops['os_inertia']['add']} add, {mod.ops['os_inertia']['div']} div)")

    rng = np.random.default_rng(0)
    q = robot.random_configuration(rng)
    Lam = mod.os_inertia(q)                                   # Λ_e, 12 × 12
    J, Minv = ref.jacobian(robot, q), ref.mass_matrix_inverse(robot, q)
    dense = np.linalg.inv(J @ Minv @ J.T)
    print(f"\nΛ_e (12 × 12) at a random configuration; |Λ - (J M⁻¹ Jᵀ)⁻¹| / |Λ| = "
          f"{np.abs(Lam - dense).max() / np.abs(dense).max():.1e}")
    np.set_printoptions(precision=3, suppress=True, linewidth=120)
    print("left-hand block Λ_11 (kg m², kg m, kg):\n", Lam[:6, :6])
    print("coupling block Λ_12 (left hand – right hand through torso and base):\n", Lam[:6, 6:])
    Om = mod.os_inertia_inverse(q)
    print(f"Ω_12 = J_1 M⁻¹ J_2ᵀ, largest entry {np.abs(Om[:6, 6:]).max():.3e} "
          f"(Ω_11: {np.abs(Om[:6, :6]).max():.3e})")

    states = [robot.random_configuration(rng) for _ in range(200)]
    t_gen = per_call(mod.os_inertia, states)
    t_ref = per_call(lambda x: ref.os_inertia(robot, x), states[:20], repeat=2)
    batch = np.array(states)
    t_batch = per_call(lambda b: mod.os_inertia(b), [batch]) / len(states)   # warm: best of 5 batch calls
    print(f"\ntime per call of Λ_e: generated {t_gen * 1e6:.1f} µs from Python "
          f"({t_batch * 1e6:.2f} µs per state in one batch call), numpy reference {t_ref * 1e3:.2f} ms "
          f"({t_ref / t_batch:.0f}x the batch)")


if __name__ == "__main__":
    main()
