"""Markdown report of the base parameters of robots (``soagen parameters``)."""
from __future__ import annotations

from soagen.model.parameters import RANK_TOLERANCE, parameter_names
from soagen.reference.identifiable import identifiable
from soagen.targets.common.inert import markdown_text


def report(robots):
    """Markdown: p and b of each robot (a table), then its base parameters β = K π
    written out (``soagen parameters``)."""
    lines = ["# Base parameters", "",
             "Written by `soagen parameters --all --markdown docs/base_parameters.md`.",
             "Gautier's numerical method",
             "(soagen.parameters): the regressor stacked over seeded random states, QR with column",
             f"pivoting, rank = pivots with |R_ii| > {RANK_TOLERANCE:g} |R_00|. The gap column gives the smallest",
             "kept and the largest dropped |R_ii|/|R_00| (round-off, below 1e-15; its digits differ",
             "between machines): the rank decision has that much room.", "",
             "| robot | joints | p (standard) | b (base) | gap | states |", "|---|---:|---:|---:|---|---:|"]
    for robot in robots:
        base = identifiable(robot)
        kept, dropped = base.gap
        dropped = "< 1e-15" if dropped < 1e-15 else f"{dropped:.1e}"
        lines.append(f"| {markdown_text(robot.name)} | {robot.nv} | {robot.n_parameters} | {base.b} | "
                     f"{kept:.1e} / {dropped} | {base.states} |")
    for robot in robots:
        names = parameter_names(robot)
        lines += ["", f"## {markdown_text(robot.name)}: β = K π", "", "```"]
        lines += [f"beta[{i}] = {text}" for i, text in enumerate(identifiable(robot).describe(names))]
        lines += ["```"]
    return "\n".join(lines) + "\n"
