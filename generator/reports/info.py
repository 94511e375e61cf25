"""``soagen info``: a robot's joints, links, candidate tips and what loading it warns, as text.

Nothing is generated: only the model is read (no sympy).  The joints and links come from an
:class:`Outline` of the description as written (fixed joints and every link included), the
order of q and v and the sizes from the loaded :class:`~soagen.model.robot.Robot`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from soagen.model.robot import FLOATING


@dataclass
class Outline:
    """A robot description as written, before fixed joints are merged.

    Attributes
    ----------
    kind : str
        ``"URDF"``, ``"MJCF"`` or ``"DH rows"``.
    source : str
        The file, or the bundled robot's name.
    links : dict
        ``{link name: mass (kg)}``, in the description's order (MJCF: the bodies).
    joints : list of tuple
        ``(name, type, parent link, child link)``, in the description's order; an MJCF body
        without a joint is welded to its parent by a ``fixed`` entry named ``""``.
    """

    kind: str
    source: str
    links: dict
    joints: list


def outline(path=None, example=None):
    """The :class:`Outline` of a file (URDF or MJCF) or of a bundled robot.

    Parameters
    ----------
    path : str, optional
        A URDF or MJCF file.
    example : str, optional
        A bundled robot's name (``soagen.robots.EXAMPLES``), when ``path`` is None.

    Returns
    -------
    Outline
    """
    from soagen.model import robots
    from soagen.model.mjcf import is_mjcf

    if path is None and example == "puma560":
        return _dh_outline(example)
    if path is None:
        path = robots.urdf_path(example)
    return _mjcf_outline(path) if is_mjcf(path) else _urdf_outline(path)


def _urdf_outline(path):
    """The :class:`Outline` of a URDF file, as :func:`soagen.model.urdf.read_urdf` reads it."""
    from soagen.model.urdf import read_urdf

    _, links, joints = read_urdf(path)
    return Outline("URDF", os.fspath(path), {link.name: link.mass or 0.0 for link in links},
                   [(j.name, j.type, j.parent, j.child) for j in joints])


def _mjcf_outline(path):
    """The :class:`Outline` of an MJCF file: MuJoCo's bodies and joints, from its compiled model."""
    from soagen.model.mjcf import JOINT_TYPES, _Names, compile_mjcf

    model = compile_mjcf(path)
    names = _Names(model)
    links = {names.body[b]: float(model.body_mass[b]) for b in range(model.nbody)}
    joints = []
    for b in range(1, model.nbody):
        parent, child = names.body[int(model.body_parentid[b])], names.body[b]
        first, count = int(model.body_jntadr[b]), int(model.body_jntnum[b])
        joints += [(names.joint[j], JOINT_TYPES[int(model.jnt_type[j])], parent, child)
                   for j in range(first, first + count)] or [("", "fixed", parent, child)]
    return Outline("MJCF", os.fspath(path), links, joints)


def _dh_outline(name):
    """The :class:`Outline` of the bundled DH robot ``name``, from its builder."""
    from soagen.model import robots
    from soagen.model.dh import dh_builder

    links, joints = dh_builder(name, robots.puma560_links()).outline()
    return Outline("DH rows", f"bundled {name}", links, joints)


# ------------------------------------------------------------------ the tree
def _moving(robot, out):
    """Links moved by a joint of ``robot`` (a body's own link)."""
    return {b.name for b in robot.bodies} & set(out.links)


def _owner(link, parents, moving):
    """The moving link whose body ``link`` is part of, or None when it is fixed to the base."""
    while link not in moving:
        if link not in parents:
            return None
        link = parents[link]
    return link


def candidate_tips(robot, out):
    """Links that move and have no moving link below them, in the description's order.

    Parameters
    ----------
    robot : Robot
        The loaded robot (which joints move).
    out : Outline
        Its description.

    Returns
    -------
    list of str
    """
    moving = _moving(robot, out)
    parents = {child: parent for _, _, parent, child in out.joints}
    children = {}
    for _, _, parent, child in out.joints:
        children.setdefault(parent, []).append(child)

    def moving_below(link):
        return any(c in moving or moving_below(c) for c in children.get(link, ()))

    return [link for link in out.links
            if _owner(link, parents, moving) is not None and not moving_below(link)]


# ------------------------------------------------------------------ the text
def _joint_rows(robot, out, lock):
    """Rows of the joint table: the moving joints in the order of q and v, then the others."""
    written = {name: (kind, parent, child) for name, kind, parent, child in out.joints if name}
    rows = []
    for k, b in enumerate(robot.bodies):
        kind, parent, child = written.get(b.joint, (b.joint_type, "(world)", b.name))
        rows.append((str(k), b.joint, kind, f"{parent} -> {child}", str(b.nq), str(b.nv)))
    moving = {b.joint for b in robot.bodies}
    for name, kind, parent, child in out.joints:
        if name not in moving:
            what = kind if kind == "fixed" else f"{kind}, locked" + (f" at {lock[name]:g}" if name in lock else "")
            rows.append(("-", name or "(none)", what, f"{parent} -> {child}", "0", "0"))
    return rows


def _table(rows, header):
    """Lines of ``rows`` under ``header``, each column as wide as its widest entry."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows]]


def _link_rows(robot, out):
    """Rows of the link table: name, mass, and the body it moves with."""
    moving = _moving(robot, out)
    parents = {child: parent for _, _, parent, child in out.joints}
    rows = []
    for link, mass in out.links.items():
        owner = _owner(link, parents, moving)
        where = "its own" if owner == link else "fixed to the base" if owner is None else f"with {owner}"
        rows.append((link, f"{mass:.6g}", where))
    return rows


def _floating(robot):
    """True when a floating joint moves some body."""
    return any(b.joint_type == FLOATING for b in robot.bodies)


def report(robot, out, warned=(), lock=None):
    """The text of ``soagen info``.

    Parameters
    ----------
    robot : Robot
        The robot as loaded.
    out : Outline
        Its description.
    warned : list of str
        What loading it warned.
    lock : dict, optional
        ``{joint: value}`` the joints held fixed.

    Returns
    -------
    str
    """
    tips = ", ".join(t.name + (" (point)" if t.point else "") for t in robot.tips)
    lines = [f"{robot.name} ({out.kind}, {out.source})",
             f"{robot.joint_summary()}{'' if _floating(robot) else ', fixed base'}; nq {robot.nq}, nv {robot.nv}; "
             f"tips: {tips or 'none'}",
             "", "joints (numbered in the order of q and v; '-': fixed or locked):"]
    lines += _table(_joint_rows(robot, out, lock or {}), ("#", "joint", "type", "parent -> child link", "nq", "nv"))
    lines += ["", f"links (mass in kg, {sum(out.links.values()):.6g} in all):"]
    lines += _table(_link_rows(robot, out), ("link", "mass", "body"))
    lines += ["", "candidate tips (links that move, with no moving link below them):",
              "  " + (", ".join(candidate_tips(robot, out)) or "none")]
    lines += ["", f"warnings on load: {len(warned) or 'none'}"] + [f"  {text}" for text in warned]
    lines += [f"notes: {len(robot.notes) or 'none'}"] + [f"  {text}" for text in robot.notes]
    return "\n".join(lines) + "\n"
