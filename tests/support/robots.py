"""Robots for the test-suite: a seeded random robot factory and a planar
2-link arm with its textbook closed-form dynamics.

:func:`random_spec` draws the links and joints once; :func:`random_robot`
feeds them to :class:`soagen.RobotBuilder` and :func:`random_urdf` writes the
very same description as URDF text (so Pinocchio can load it too).
"""
from __future__ import annotations

import dataclasses

import numpy as np

import soagen
from soagen.model.spatial import rpy_matrix

_COORD_AXES = [np.array(a, float) for a in
               ((1, 0, 0), (0, 1, 0), (0, 0, 1), (-1, 0, 0), (0, -1, 0), (0, 0, -1))]


def _random_axis(rng):
    """Half the time a (signed) coordinate axis, otherwise a general unit vector."""
    if rng.random() < 0.5:
        return _COORD_AXES[rng.integers(len(_COORD_AXES))].copy()
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def _random_rotation(rng):
    return rpy_matrix(rng.uniform(-np.pi, np.pi, 3))


def _random_inertia(rng, mass):
    """Physically valid rotational inertia about the CoM: ``R diag(I) Rᵀ``.

    The principal moments come from positive second moments ``s`` of a mass
    distribution, ``I_x = m (s_y + s_z)`` etc., so they always satisfy the
    triangle inequality ``I_a + I_b >= I_c``.
    """
    s = rng.uniform(0.002, 0.05, 3)
    moments = mass * np.array([s[1] + s[2], s[0] + s[2], s[0] + s[1]])
    R = _random_rotation(rng)
    inertia = R @ np.diag(moments) @ R.T
    return 0.5 * (inertia + inertia.T)


def random_spec(seed, n, tree=False, prismatic_fraction=0.3, tips=1, gravity=(0.0, 0.0, -9.81),
                spherical_fraction=0.0, floating_base=False):
    """Draw a random robot description (plain dicts), reproducible from ``seed``.

    Links are ``base`` (massless, fixed) and ``l01 … l{n}``; joint ``jNN`` moves
    link ``lNN``.  A chain attaches link ``i`` to link ``i-1``; a tree attaches
    it to a uniformly chosen earlier link (``base`` included, so a tree may have
    several root bodies).  Tips sit on leaves (then on random links when more
    tips than leaves are asked for), each with a random offset.
    ``spherical_fraction`` turns that share of the joints spherical (drawn from a
    separate stream, so the other draws do not change); ``floating_base`` gives
    ``base`` a mass and marks the robot for a floating joint above it.
    """
    rng = np.random.default_rng(seed)
    names = ["base"] + [f"l{i:02d}" for i in range(1, n + 1)]
    links = [dict(name="base", mass=0.0, com=np.zeros(3), inertia=np.zeros((3, 3)))]
    joints = []
    for i in range(1, n + 1):
        mass = float(rng.uniform(0.1, 5.0))
        links.append(dict(name=names[i], mass=mass, com=rng.uniform(-0.2, 0.2, 3),
                          inertia=_random_inertia(rng, mass)))
        parent = names[int(rng.integers(0, i))] if tree else names[i - 1]
        kind = "prismatic" if rng.random() < prismatic_fraction else "revolute"
        limits = (-0.5, 0.5) if kind == "prismatic" else (-np.pi, np.pi)
        joints.append(dict(name=f"j{i:02d}", kind=kind, parent=parent, child=names[i],
                           xyz=rng.uniform(-0.3, 0.3, 3), rpy=rng.uniform(-np.pi, np.pi, 3),
                           axis=_random_axis(rng), limits=limits))
    extra = np.random.default_rng(seed + 5000)
    for j in joints:
        if extra.random() < spherical_fraction:
            j["kind"], j["limits"] = "spherical", None
    if floating_base:
        mass = float(extra.uniform(2.0, 8.0))
        links[0] = dict(name="base", mass=mass, com=extra.uniform(-0.1, 0.1, 3), inertia=_random_inertia(extra, mass))
    parents = {j["parent"] for j in joints}
    leaves = [nm for nm in names[1:] if nm not in parents]
    tip_links = list(leaves[:tips])
    while len(tip_links) < tips:
        tip_links.append(names[int(rng.integers(1, n + 1))])
    tip_specs = [(nm, rng.uniform(-0.2, 0.2, 3)) for nm in tip_links]
    return dict(name=f"random_{'tree' if tree else 'chain'}_{n}_{seed}", links=links,
                joints=joints, tips=tip_specs, gravity=np.asarray(gravity, float), floating_base=floating_base)


def robot_from_spec(spec, tips=None):
    """Build the :class:`soagen.Robot` of a :func:`random_spec` description."""
    b = soagen.RobotBuilder(spec["name"], gravity=spec["gravity"])
    for link in spec["links"]:
        b.add_link(link["name"], mass=link["mass"], com=link["com"], inertia=link["inertia"])
    for j in spec["joints"]:
        b.add_joint(j["name"], j["kind"], j["parent"], j["child"], xyz=j["xyz"], rpy=j["rpy"],
                    axis=j["axis"], limits=j["limits"])
    return b.build(tips=spec["tips"] if tips is None else tips, floating_base=spec.get("floating_base", False))


def random_robot(seed, n, tree=False, prismatic_fraction=0.3, tips=1, gravity=(0.0, 0.0, -9.81),
                 spherical_fraction=0.0, floating_base=False):
    """Random :class:`soagen.Robot` with ``n`` joints (see :func:`random_spec`)."""
    return robot_from_spec(random_spec(seed, n, tree, prismatic_fraction, tips, gravity, spherical_fraction,
                                       floating_base))


def _f(x):
    return " ".join(repr(float(v)) for v in np.ravel(x))


def random_urdf(spec):
    """URDF text of a :func:`random_spec` description (tips are not part of
    URDF; tip offsets are dropped, use the link names)."""
    out = [f'<robot name="{spec["name"]}">']
    for link in spec["links"]:
        if link["mass"] == 0.0:
            out.append(f'  <link name="{link["name"]}"/>')
            continue
        I = np.asarray(link["inertia"], float).tolist()
        out += [f'  <link name="{link["name"]}">', "    <inertial>",
                f'      <origin xyz="{_f(link["com"])}" rpy="0 0 0"/>',
                f'      <mass value="{float(link["mass"])!r}"/>',
                f'      <inertia ixx="{I[0][0]!r}" ixy="{I[0][1]!r}" ixz="{I[0][2]!r}" '
                f'iyy="{I[1][1]!r}" iyz="{I[1][2]!r}" izz="{I[2][2]!r}"/>',
                "    </inertial>", "  </link>"]
    for j in spec["joints"]:
        lo, hi = map(float, j["limits"])
        out += [f'  <joint name="{j["name"]}" type="{j["kind"]}">',
                f'    <parent link="{j["parent"]}"/>', f'    <child link="{j["child"]}"/>',
                f'    <origin xyz="{_f(j["xyz"])}" rpy="{_f(j["rpy"])}"/>',
                f'    <axis xyz="{_f(j["axis"])}"/>',
                f'    <limit lower="{lo!r}" upper="{hi!r}" effort="100" velocity="10"/>',
                "  </joint>"]
    out.append("</robot>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- planar 2-link
def planar_2link(l1=1.0, l2=0.7, m1=2.0, m2=1.5, inertia=1e-3, g=9.81):
    """Planar 2R arm in the x-y plane, both axes along +z, gravity along −y.

    Link ``i`` has its frame at joint ``i`` (x along the link), a mass ``m_i`` at
    ``(l_i, 0, 0)`` with a small isotropic inertia ``inertia`` about it.  Joint 2
    sits at ``(l1, 0, 0)`` in link 1.  One tip, ``link2`` offset ``(l2, 0, 0)``:
    the arm's end point.  ``q = 0`` is the arm stretched along +x.
    """
    b = soagen.RobotBuilder("planar_2link", gravity=(0.0, -g, 0.0))
    b.add_link("base")
    I = np.eye(3) * inertia
    b.add_link("link1", mass=m1, com=(l1, 0.0, 0.0), inertia=I)
    b.add_link("link2", mass=m2, com=(l2, 0.0, 0.0), inertia=I)
    b.add_joint("joint1", "continuous", "base", "link1", axis=(0, 0, 1))
    b.add_joint("joint2", "continuous", "link1", "link2", xyz=(l1, 0, 0), axis=(0, 0, 1))
    return b.build(tips=[("link2", (l2, 0.0, 0.0))])


def two_link_closed_form(q, qd, qdd, l1=1.0, l2=0.7, m1=2.0, m2=1.5, inertia=1e-3, g=9.81):
    """Textbook dynamics of :func:`planar_2link` (CoM at the link ends, lc_i = l_i).

    Returns a dict with ``M`` (2, 2), ``c`` (2,) Coriolis/centrifugal torques
    C(q, q̇)q̇, ``G`` (2,) gravity torques, ``tau = M q̈ + c + G``, the tip
    Jacobian ``J`` (6, 2) ([angular; linear], world axes at the end point) and
    the tip position ``p`` (3,).
    """
    q1, q2 = q
    c1, s1, c2, s2 = np.cos(q1), np.sin(q1), np.cos(q2), np.sin(q2)
    c12, s12 = np.cos(q1 + q2), np.sin(q1 + q2)
    I1 = I2 = inertia
    M11 = m1 * l1 ** 2 + I1 + m2 * (l1 ** 2 + l2 ** 2 + 2 * l1 * l2 * c2) + I2
    M12 = m2 * (l2 ** 2 + l1 * l2 * c2) + I2
    M22 = m2 * l2 ** 2 + I2
    M = np.array([[M11, M12], [M12, M22]])
    h = m2 * l1 * l2 * s2
    c = np.array([-h * (2 * qd[0] * qd[1] + qd[1] ** 2), h * qd[0] ** 2])
    G = np.array([(m1 * l1 + m2 * l1) * g * c1 + m2 * l2 * g * c12, m2 * l2 * g * c12])
    J = np.zeros((6, 2))
    J[2] = 1.0
    J[3] = [-l1 * s1 - l2 * s12, -l2 * s12]
    J[4] = [l1 * c1 + l2 * c12, l2 * c12]
    p = np.array([l1 * c1 + l2 * c12, l1 * s1 + l2 * s12, 0.0])
    return dict(M=M, c=c, G=G, tau=M @ np.asarray(qdd) + c + G, J=J, p=p)


__all__ = ["random_spec", "random_robot", "robot_from_spec", "random_urdf", "planar_2link",
           "two_link_closed_form"]


def make_realistic(spec, seed):
    """Give a spec the kinematic sparsity of real arms: coordinate joint axes
    and joint-frame rotations by multiples of π/2 (inertias stay general)."""
    rng = np.random.default_rng(seed + 2000)
    for j in spec["joints"]:
        j["axis"] = _COORD_AXES[rng.integers(len(_COORD_AXES))].copy()
        j["rpy"] = rng.integers(-1, 3, 3) * (np.pi / 2)
    return spec


def branching_spec(seed, trunk=1, branches=3, per_branch=6, prismatic_fraction=0.0,
                   gravity=(0.0, 0.0, -9.81), realistic=False, floating_base=False):
    """A trunk of ``trunk`` joints carrying ``branches`` arms of ``per_branch``
    joints each, one tip at the end of every arm (a humanoid-like tree whose
    tips each have enough joints for a full-rank Ω(0)); ``realistic`` applies
    :func:`make_realistic`; ``floating_base`` puts a floating joint above ``base``."""
    n = trunk + branches * per_branch
    spec = random_spec(seed, n, tree=False, prismatic_fraction=prismatic_fraction, gravity=gravity,
                       floating_base=floating_base)
    if realistic:
        make_realistic(spec, seed)
    names = ["base"] + [f"l{i:02d}" for i in range(1, n + 1)]
    ends = []
    for b in range(branches):
        first = trunk + b * per_branch + 1
        spec["joints"][first - 1]["parent"] = names[trunk]      # arm root on the last trunk link
        ends.append(names[first + per_branch - 1])
    rng = np.random.default_rng(seed + 1000)
    spec["tips"] = [(nm, rng.uniform(-0.2, 0.2, 3)) for nm in ends]
    spec["name"] = f"random_branching_{trunk}_{branches}x{per_branch}_{seed}"
    return spec


def branching_robot(seed, trunk=1, branches=3, per_branch=6, **kw):
    """:class:`soagen.Robot` of :func:`branching_spec`."""
    return robot_from_spec(branching_spec(seed, trunk, branches, per_branch, **kw))


def with_point_tips(robot, which=None, point=True):
    """``robot`` with the tips at the indices ``which`` (all when None) made point tips (3 linear rows),
    or full tips (6 rows) with ``point`` False; the other tips as they are."""
    return robot.with_tips([dataclasses.replace(t, point=point) if which is None or i in which else t
                            for i, t in enumerate(robot.tips)])
