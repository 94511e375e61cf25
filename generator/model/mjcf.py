"""MJCF (MuJoCo XML) → :class:`~soagen.model.robot.Robot`, read from MuJoCo's compiled model.

The file is compiled by the ``mujoco`` package itself (``mujoco.MjSpec.from_file(path).compile()``:
includes, defaults, ``<compiler>`` angle units and inertia from geoms all resolved) and
the robot is read from the compiled arrays only (``body_pos``, ``body_quat``,
``body_ipos``, ``body_iquat``, ``body_mass``, ``body_inertia``, ``jnt_*``, ``dof_*``,
``site_*``) and, for the masses and inertias the compiler changed, the spec it compiled (the
file's own numbers); the XML is never parsed a second time.  The bodies go to
:class:`~soagen.model.builder.RobotBuilder` (which lumps the bodies without a joint into
their moving ancestor and checks the inertias), then into MuJoCo's joint order.

Joints (MuJoCo's ``mj_kinematics``): a MuJoCo body's frame is its parent's moved by
``body_pos``/``body_quat``, then by each of its joints in turn, a hinge or ball about
its anchor ``jnt_pos`` (body frame), a slide along its axis.  Each joint becomes one
soagen body, whose frame sits at the joint's anchor (a hinge or ball moves the
MuJoCo frame by ``Trans(a) Rot Trans(-a)``); several joints in one MuJoCo body become a
chain of massless soagen bodies, the last carrying the mass.  Hinge and slide keep
MuJoCo's value (``q = qpos``: the joint's ``ref`` is built into the joint frame);
ball and free joints use soagen's conventions (quaternion ``(x, y, z, w)``, body
velocities), :mod:`soagen.model.mujoco_convention` converts.

What MuJoCo adds beyond rigid bodies: ``dof_armature`` is the rotor inertia
(:meth:`Robot.with_actuators`); ``dof_damping`` is viscous friction with
``mjcf_damping=True``; friction loss, springs, tendons, equality constraints,
actuators, gravity compensation, fluid forces, joint limits and contacts are not
rigid-body dynamics: each one present is a line of ``Robot.notes``, and those that
change the motion MuJoCo simulates from the same τ are also a
:class:`~soagen.model.errors.ModelWarning` (refused with ``strict=True``), as is a mass or an
inertia the compiler changed from the file's (bounded, balanced, scaled, taken from geoms).
"""
from __future__ import annotations

import dataclasses
import os
import warnings

import numpy as np

from soagen.model.builder import RobotBuilder
from soagen.model.errors import ModelWarning, RobotError
from soagen.model.robot import FLOATING, PRISMATIC, REVOLUTE, SPHERICAL, PointTip
from soagen.model.spatial import axis_angle, quat_matrix

#: MuJoCo's mjtJoint numbers → soagen joint types
JOINT_TYPES = {0: FLOATING, 1: SPHERICAL, 2: PRISMATIC, 3: REVOLUTE}
#: the mujoco release CI tests with (the ``test`` extra; the ``mujoco`` extra takes 3.3 to 4.x)
MUJOCO_VERSION = "3.3.7"
_WORLD = 0


def root_tag(path):
    """The tag of an XML file's root element (the file is not read further), or None when it has none."""
    import xml.etree.ElementTree as ET

    try:
        for _, element in ET.iterparse(os.fspath(path), events=("start",)):
            return element.tag
    except (ET.ParseError, OSError, UnicodeDecodeError):
        return None
    return None


def is_mjcf(path):
    """True when the XML file's root element is ``<mujoco>`` (the file is not read further)."""
    return root_tag(path) == "mujoco"


def compile_mjcf(path):
    """MuJoCo's compiled model (``mujoco.MjModel``) of an MJCF file; RobotError when it does not compile."""
    return read_mjcf(path)[0]


def read_mjcf(path):
    """MuJoCo's compiled model of an MJCF file and the file as MuJoCo parsed it: ``(mujoco.MjModel,
    mujoco.MjSpec)`` (the spec keeps the file's own numbers; its bodies' ``id`` index the model's
    arrays); RobotError when it does not compile.  ``import mujoco`` is the module of the ``mujoco``
    package or of ``mujoco-core`` alone (MuJoCo 4's compiler and physics, numpy its only dependency)."""
    try:
        import mujoco
    except ImportError:
        raise RobotError("reading MJCF needs MuJoCo's compiler: pip install mujoco-core (or 'soagen[mujoco]')") \
            from None
    src = os.fspath(path)
    if not os.path.isfile(src):
        raise RobotError(f"{src}: no such file")
    tag = root_tag(src)
    if tag not in (None, "mujoco"):
        raise RobotError(f"{src}: root element is <{tag}>, not <mujoco>: not an MJCF file"
                         + ("; it is a URDF, which soagen.load_urdf reads" if tag == "robot" else ""))
    try:
        spec = mujoco.MjSpec.from_file(src)
        model = spec.compile()
    except ValueError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "compile error"
        raise RobotError(f"{src}: MuJoCo cannot compile it: {reason}") from None
    return model, spec


def load_mjcf(path, tips=(), lock=None, name=None, mjcf_damping=False, strict=False, gravity=None):
    """Read an MJCF file into a :class:`Robot`, through MuJoCo's compiler.

    Parameters
    ----------
    path : str or path-like
        MJCF file (root element ``<mujoco>``).
    tips : list
        Operational points: names of bodies (the body frame's origin) or of sites
        (their position and orientation), 6 rows [angular; linear]; or
        :func:`soagen.point_tip` of a body or a site (3 linear rows, at the offset in
        the body's or the site's frame); a body's name wins over a site's.
    lock : dict, optional
        ``{joint: qpos value}`` hinge or slide joints to hold fixed.
    name : str, optional
        Robot name (default: ``<mujoco model>``, else the file's stem).
    mjcf_damping : bool
        Take ``dof_damping`` as viscous friction (``Robot.actuators.viscous``);
        otherwise it is noted and warned about.
    strict : bool
        Refuse (RobotError) what is otherwise a :class:`ModelWarning`: the
        builder's findings, and the MuJoCo forces the robot leaves out.
    gravity : (3,) array_like, optional
        Override of the model's ``opt.gravity`` (world frame, m/s²).

    Returns
    -------
    Robot
        Bodies in MuJoCo's joint order (``q``, ``qd`` entries of hinges and slides
        are MuJoCo's ``qpos``, ``qvel`` entries); ``notes`` list what MuJoCo adds.

    Raises
    ------
    RobotError
        A file MuJoCo does not compile, or one soagen cannot represent, with a
        one-line reason naming the element.
    """
    src = os.fspath(path)
    model, spec = read_mjcf(src)
    names = _Names(model)
    _refuse_unsupported(model, names, src, mjcf_damping)
    builder = RobotBuilder(name or _model_name(model) or os.path.splitext(os.path.basename(src))[0],
                           gravity=np.array(model.opt.gravity, float) if gravity is None else gravity, source=src)
    taken = set(names.body)
    anchor = _describe(builder, model, names, taken)
    tip_links = _add_tips(builder, model, names, tips, anchor, src, taken)
    extras = _extras(model, names, mjcf_damping, set(lock or {}))
    _inertias(extras, model, spec, names)
    for text in extras.warned:
        if strict:
            raise RobotError(f"{src}: {text} (refused: strict)")
    robot = builder.build(tips=tip_links, lock=lock, strict=strict)
    robot = _mujoco_order(robot, names, [t.link if isinstance(t, PointTip) else t for t in tips])
    robot = dataclasses.replace(robot, notes=robot.notes + tuple(extras.notes))
    for text in extras.warned:
        warnings.warn(f"{src}: {text}", ModelWarning, stacklevel=2)
    if extras.armature or extras.viscous:
        robot = robot.with_actuators(armature=extras.armature, friction={j: (v, 0.0) for j, v in extras.viscous.items()})
    return robot


# ------------------------------------------------------------------------ names
def _model_name(model):
    """``<mujoco model="...">``: the first entry of MuJoCo's name buffer."""
    return bytes(model.names).split(b"\0", 1)[0].decode()


class _Names:
    """Names of bodies, joints and sites; the unnamed get ``body3``, ``joint5``, ``site0``."""

    def __init__(self, model):
        def listing(count, what, get):
            out = [get(i).name or f"{what}{i}" for i in range(count)]
            if len(set(out)) != len(out):   # an unnamed one collided with a named one
                out = [f"{what}{i}" if not get(i).name else n for i, n in enumerate(out)]
            return out

        self.body = listing(model.nbody, "body", model.body)
        self.joint = listing(model.njnt, "joint", model.jnt)
        self.site = listing(model.nsite, "site", model.site)


# ------------------------------------------------------------------------ refusals
def _refuse_unsupported(model, names, src, mjcf_damping):
    """RobotError, naming the element, for what a soagen tree of rigid bodies cannot be (MuJoCo's
    compiler itself refuses a free joint below the top level and a ball followed by a rotation)."""
    if getattr(model, "nflex", 0):
        raise RobotError(f"{src}: <flex> (deformable bodies) is not rigid-body dynamics: not supported")
    if model.njnt == 0:
        raise RobotError(f"{src}: no joint: nothing moves")
    for j in range(model.njnt):
        kind, body = int(model.jnt_type[j]), int(model.jnt_bodyid[j])
        what = f"{JOINT_TYPES[kind]} joint '{names.joint[j]}' of body '{names.body[body]}'"
        dofs = slice(model.jnt_dofadr[j], model.jnt_dofadr[j] + (6 if kind == 0 else 3))
        if kind in (0, 1) and np.any(model.dof_armature[dofs]):
            raise RobotError(f"{src}: armature of the {what}: soagen's rotor inertia is for 1-dof joints only")
        if kind in (0, 1) and mjcf_damping and np.any(model.dof_damping[dofs]):
            raise RobotError(f"{src}: damping of the {what}: soagen's viscous friction is for 1-dof joints only "
                             "(load without mjcf_damping)")


# ------------------------------------------------------------------------ bodies
def _pose(quat_wxyz):
    """Rotation (3, 3) of a MuJoCo quaternion ``(w, x, y, z)``."""
    w, x, y, z = np.asarray(quat_wxyz, float)
    return quat_matrix((x, y, z, w))


def _describe(builder, model, names, taken):
    """Hand every MuJoCo body and joint to ``builder``; -> anchor (nbody, 3) of each body:
    where its last soagen link's frame sits in the MuJoCo body frame (zero without
    a rotating joint)."""
    anchor = np.zeros((model.nbody, 3))
    builder.add_link(names.body[_WORLD])
    for b in range(1, model.nbody):
        parent = int(model.body_parentid[b])
        # body frame in the parent's last link: Trans(-a_parent) (body_pos, body_quat)
        rot, off = _pose(model.body_quat[b]), model.body_pos[b] - anchor[parent]
        link, joints = names.body[parent], range(model.body_jntadr[b], model.body_jntadr[b] + model.body_jntnum[b])
        if not len(joints):
            _add_body_link(builder, model, names.body[b], b, anchor[b])
            builder.add_joint(f"__fixed_{names.body[b]}", "fixed", link, names.body[b], xyz=off, rotation=rot)
            continue
        a_prev = np.zeros(3)
        for i, j in enumerate(joints):
            kind = JOINT_TYPES[int(model.jnt_type[j])]
            a = np.array(model.jnt_pos[j], float) if kind in (REVOLUTE, SPHERICAL) else np.zeros(3)
            if kind == FLOATING:   # MuJoCo places a free body by qpos alone
                rot, off, a = np.eye(3), np.zeros(3), np.zeros(3)
            elif i > 0:            # joint frame in the previous joint's link: Trans(a - a_prev)
                rot, off = np.eye(3), -a_prev
            off = off + rot @ a
            axis, ref = np.array(model.jnt_axis[j], float), float(model.qpos0[model.jnt_qposadr[j]])
            if kind == REVOLUTE:
                rot = rot @ axis_angle(axis, -ref)        # q = qpos: the ref is in the frame
            elif kind == PRISMATIC:
                off = off - rot @ axis * ref
            last = i == len(joints) - 1
            child = names.body[b] if last else _unique(taken, f"{names.body[b]}__{names.joint[j]}")
            if last:
                anchor[b] = a
                _add_body_link(builder, model, child, b, a)
            else:
                builder.add_link(child)
            limits = tuple(model.jnt_range[j]) if model.jnt_limited[j] and kind in (REVOLUTE, PRISMATIC) else None
            builder.add_joint(names.joint[j], kind, link, child, xyz=off, rotation=rot, axis=axis, limits=limits)
            link, a_prev = child, a
    return anchor


def _add_body_link(builder, model, link, b, a):
    """The link of MuJoCo body ``b`` with its mass, its frame at ``a`` (3,) in the body frame."""
    rot = _pose(model.body_iquat[b])
    inertia = rot @ np.diag(model.body_inertia[b]) @ rot.T      # about the centre of mass, body axes
    builder.add_link(link, mass=float(model.body_mass[b]), com=model.body_ipos[b] - a, inertia=inertia)


def _unique(taken, name):
    """``name``, or ``name_2``, ... when ``taken`` (a set of link names, updated) has it."""
    out, i = name, 2
    while out in taken:
        out, i = f"{name}_{i}", i + 1
    taken.add(out)
    return out


def _add_tips(builder, model, names, tips, anchor, src, taken):
    """One massless link per tip, on a fixed joint at the body origin or the site;
    -> the builder's tips, in order: link names, :class:`PointTip` of the link for a point tip."""
    out = []
    for i, spec in enumerate(tips):
        tip = spec.link if isinstance(spec, PointTip) else spec
        if tip in names.body:
            b = names.body.index(tip)
            rot, off = np.eye(3), -anchor[b]
        elif tip in names.site:
            s = names.site.index(tip)
            b = int(model.site_bodyid[s])
            rot, off = _pose(model.site_quat[s]), model.site_pos[s] - anchor[b]
        else:
            raise RobotError(f"{src}: unknown tip '{tip}' (bodies: {', '.join(names.body[1:])}; sites: "
                             f"{', '.join(names.site) or 'none'})")
        link = _unique(taken, f"__tip{i}")
        builder.add_link(link)
        builder.add_joint(f"__tip{i}", "fixed", names.body[b], link, xyz=off, rotation=rot)
        out.append(dataclasses.replace(spec, link=link) if isinstance(spec, PointTip) else link)
    return out


def _mujoco_order(robot, names, tip_names):
    """The builder's robot with its bodies in MuJoCo's joint order and its tips renamed."""
    order = sorted(range(robot.nb), key=lambda k: names.joint.index(robot.bodies[k].joint))
    new = {old: i for i, old in enumerate(order)}
    new[-1] = -1
    bodies = tuple(dataclasses.replace(robot.bodies[k], parent=new[robot.bodies[k].parent]) for k in order)
    tips = tuple(dataclasses.replace(t, name=n, body=new[t.body]) for t, n in zip(robot.tips, tip_names))
    return dataclasses.replace(robot, bodies=bodies, tips=tips)


# ------------------------------------------------------------------------ what MuJoCo adds
@dataclasses.dataclass
class _Extras:
    notes: list
    warned: list
    armature: dict
    viscous: dict


def _joints_with(model, names, values, locked):
    """Names of the joints (not locked) whose dofs have a non-zero entry of ``values`` (ndof,)."""
    return [names.joint[j] for j in range(model.njnt)
            if names.joint[j] not in locked and np.any(values[model.dof_jntid == j])]


def _listed(items, limit=4):
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(f"'{x}'" for x in items[:limit]) + more


def _extras(model, names, mjcf_damping, locked):
    """Notes, warnings and actuator terms of what MuJoCo adds to the rigid bodies."""
    out = _Extras([], [], {}, {})
    one_dof = [j for j in range(model.njnt) if model.jnt_type[j] in (2, 3) and names.joint[j] not in locked]
    out.armature = {names.joint[j]: float(model.dof_armature[model.jnt_dofadr[j]]) for j in one_dof
                    if model.dof_armature[model.jnt_dofadr[j]]}
    if out.armature:
        out.notes.append(f"armature of {len(out.armature)} joints added to M's diagonal (rotor inertia)")
    damped = _joints_with(model, names, model.dof_damping, locked)
    if damped and mjcf_damping:
        out.viscous = {names.joint[j]: float(model.dof_damping[model.jnt_dofadr[j]]) for j in one_dof
                       if model.dof_damping[model.jnt_dofadr[j]]}
        out.notes.append(f"damping of {len(damped)} joints taken as viscous friction (mjcf_damping)")
    elif damped:
        _both(out, f"damping of joints {_listed(damped)} left out (passive force; mjcf_damping=True takes it)")
    for values, what in ((model.dof_frictionloss, "friction loss (dry friction, a MuJoCo constraint)"),
                         (model.jnt_stiffness[model.dof_jntid], "stiffness (joint springs)")):
        joints = _joints_with(model, names, values, locked)
        if joints:
            _both(out, f"{what} of joints {_listed(joints)} left out")
    if model.ntendon:
        passive = np.any(model.tendon_stiffness) or np.any(model.tendon_damping) or np.any(model.tendon_frictionloss)
        text = f"{model.ntendon} tendons left out" + (" (with stiffness, damping or friction loss)" if passive else "")
        (_both if passive else _note)(out, text)
    if model.neq:
        _both(out, f"{model.neq} equality constraints left out (they constrain the motion)")
    if np.any(model.body_gravcomp):
        _both(out, "gravity compensation (gravcomp) of some bodies left out")
    if model.opt.density or model.opt.viscosity or np.any(model.opt.wind):
        _both(out, "fluid forces (density, viscosity, wind) left out")
    if model.nu:
        _note(out, f"{model.nu} actuators: tau here is the joint force MuJoCo's qfrc_actuator must supply")
    limited = [names.joint[j] for j in range(model.njnt) if model.jnt_limited[j] and names.joint[j] not in locked]
    if limited:
        _note(out, f"limits of {len(limited)} joints are constraints in MuJoCo, only random states here")
    colliding = int(np.sum((model.geom_contype != 0) | (model.geom_conaffinity != 0)))
    if colliding:
        _note(out, f"{colliding} geoms can collide: contacts are not part of these dynamics")
    return out


def _inertias(out, model, spec, names):
    """One warning naming every moving body whose inertia MuJoCo's compiler changed from the file's
    (``<compiler boundmass boundinertia balanceinertia settotalmass>``, ``inertiafromgeom="true"`` over
    an ``<inertial>``; MuJoCo 4 bounds a singular ``fullinertia`` where 3.x refuses it), and one note
    for the bodies whose inertia comes from their geoms (no ``<inertial>``: MJCF's own rule).

    A body with an ``<inertial>`` is changed when its mass or its principal moments (kg m², sorted) differ
    from the compiled ``body_mass``, ``body_inertia`` beyond round-off; one without, when its mass is
    ``boundmass`` or a principal moment ``boundinertia`` (what geoms give is not in the file).  Bodies
    welded to the world are not looked at: their inertia never enters the dynamics."""
    c = spec.compiler
    changed, inferred = [], []
    for body in spec.bodies[1:]:
        b = body.id
        if model.body_weldid[b] == _WORLD:
            continue
        mass, moments = float(model.body_mass[b]), np.sort(model.body_inertia[b])   # compiled: kg, (3,) kg m²
        if body.explicitinertial:
            given = _file_moments(body)                                                # (3,) kg m², sorted
            scale = max(np.max(np.abs(given)), np.max(moments), 1e-300)
            if abs(body.mass - mass) > 1e-12 * max(abs(body.mass), mass) or np.max(np.abs(given - moments)) > \
                    1e-9 * scale:
                changed.append(f"'{names.body[b]}' (the file: {body.mass:.6g} kg, principal moments "
                               f"{_moments(given)}; compiled: {mass:.6g} kg, {_moments(moments)})")
            continue
        if mass > 0:
            inferred.append(names.body[b])
        if (c.boundmass > 0 and mass == c.boundmass) or (c.boundinertia > 0 and np.any(moments == c.boundinertia)):
            changed.append(f"'{names.body[b]}' (inertia of its geoms bounded: {mass:.6g} kg, {_moments(moments)})")
    if changed:
        settings = [f'{k}="{v:g}"' for k, v in (("boundmass", c.boundmass), ("boundinertia", c.boundinertia),
                                                 ("settotalmass", c.settotalmass)) if v > 0]
        settings += ['balanceinertia="true"'] * bool(c.balanceinertia)
        settings += ['inertiafromgeom="true"'] * (c.inertiafromgeom == 1)     # mjINERTIAFROMGEOM_TRUE
        more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""
        _both(out, f"MuJoCo's compiler changed the inertia of {'body' if len(changed) == 1 else 'bodies'} "
                   f"{', '.join(changed[:4])}{more} (<compiler {' '.join(settings) or '...'}>): the dynamics are "
                   "the compiled model's, not the file's")
    if inferred:
        _note(out, f"inertia of {len(inferred)} {'body' if len(inferred) == 1 else 'bodies'} computed by MuJoCo from "
                   "their geoms (no <inertial>)")


def _file_moments(body):
    """The principal moments (3,) kg m², sorted, of an ``<inertial>`` as the file gives it (``diaginertia``,
    or the eigenvalues of ``fullinertia``: Ixx Iyy Izz Ixy Ixz Iyz, NaN when not given)."""
    full = np.asarray(body.fullinertia, float)
    if np.isnan(full[0]):
        return np.sort(np.asarray(body.inertia, float))
    return np.linalg.eigvalsh(full[[0, 3, 4, 3, 1, 5, 4, 5, 2]].reshape(3, 3))


def _moments(values):
    """``(a, b, c) kg m^2`` of three principal moments."""
    return "(" + ", ".join(f"{v:.6g}" for v in values) + ") kg m^2"


def _note(out, text):
    out.notes.append(text)


def _both(out, text):
    out.notes.append(text)
    out.warned.append(text)
