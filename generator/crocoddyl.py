"""Crocoddyl's differential action models with soagen's dynamics (``pip install '.[crocoddyl]'``).

    import crocoddyl, soagen
    model = soagen.crocoddyl.free_fwd_dynamics(robot, state, actuation, costs)
    # a crocoddyl.DifferentialActionModelFreeFwdDynamics: IntegratedActionModelEuler, ShootingProblem,
    # SolverFDDP take it as Crocoddyl's own
    model = soagen.crocoddyl.contact_fwd_dynamics(robot, state, actuation, contacts, costs)
    # a crocoddyl.DifferentialActionModelContactFwdDynamics: the robot's tips are the contacts' points

Each model is a C++ class compiled per robot (``<name>_crocoddyl.hpp``, ``<name>_crocoddyl_contact.hpp``,
:data:`HEADERS`): Crocoddyl's ``DifferentialActionModelFreeFwdDynamics`` with ``calc`` from soagen's
``forward_dynamics`` and ``calcDiff`` from ``forward_dynamics_derivatives`` (∂q̈/∂q, ∂q̈/∂q̇, M⁻¹), and its
``DifferentialActionModelContactFwdDynamics`` with ``calc`` from ``contact_dynamics`` and ``calcDiff`` from
``contact_dynamics_derivatives`` (point contacts, :data:`MODELS`), their ``_baumgarte`` twins where a contact has
nonzero Baumgarte gains; the costs Crocoddyl's own on
the Pinocchio kinematics they read; exposed to Python through Boost.Python as Crocoddyl's classes are.
It is built against the headers and libraries of the installed wheels (``libcrocoddyl``,
``libpinocchio``, ``cmeel-boost``, ``cmeel-eigen``), which must be the releases Crocoddyl was built
with: :data:`CROCODDYL` with :data:`PINOCCHIO` (Crocoddyl 3.2.1 crashes in ``calc`` with Pinocchio
4.1.0). C++ users include the header that :func:`write` writes.
"""
from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

#: the Crocoddyl release the models are written against, and the Pinocchio it was built with
CROCODDYL = "3.2.1"
PINOCCHIO = "4.0.0"
#: the soagen functions each model calls, by kind: ``free`` and ``contact``
MODELS = {"free": ("forward_dynamics", "forward_dynamics_derivatives"),
          "contact": ("contact_dynamics", "contact_dynamics_derivatives", "contact_dynamics_baumgarte",
                      "contact_dynamics_baumgarte_derivatives")}
#: the soagen functions the free model calls
FUNCTIONS = MODELS["free"]
#: the definitions Pinocchio's and Crocoddyl's CMake targets give their users (pinocchioTargets.cmake,
#: crocoddylTargets.cmake of the wheels; their include folders: :func:`compile_commands`): the same headers
#: must mean the same types here
DEFINES = ("BOOST_MPL_LIMIT_LIST_SIZE=30", "BOOST_MPL_LIMIT_VECTOR_SIZE=30", "BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
           "BOOST_FUSION_INVOKE_MAX_ARITY=12", "PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION",
           "PINOCCHIO_ENABLE_COMPATIBILITY_WITH_VERSION_2")
LIBRARIES = ("crocoddyl", "pinocchio_default", f"boost_python{sys.version_info[0]}{sys.version_info[1]}")
#: the per-robot header of each kind's C++ class, {name}: the C prefix
HEADERS = {"free": "{name}_crocoddyl.hpp", "contact": "{name}_crocoddyl_contact.hpp"}
HEADER = HEADERS["free"]
#: each kind's header template and class
_TEMPLATES = {"free": "crocoddyl.hpp.j2", "contact": "crocoddyl_contact.hpp.j2"}
_CLASSES = {"free": "DifferentialActionModelFreeFwdDynamics", "contact": "DifferentialActionModelContactFwdDynamics"}

_modules = {}


def prefix():
    """The ``cmeel.prefix`` folder of the installed wheels (headers in ``include``, libraries in ``lib``);
    raises ImportError naming the extra where Crocoddyl's headers are not there."""
    for root in sys.path:
        folder = Path(root or ".") / "cmeel.prefix"
        if (folder / "include" / "crocoddyl" / "config.hpp").exists():
            return folder
    raise ImportError("Crocoddyl's headers (libcrocoddyl) not found: pip install 'soagen[crocoddyl]'")


def _check_versions():
    """Refuse another Crocoddyl or Pinocchio than the pair the models are built for (binary compatibility)."""
    import crocoddyl
    import pinocchio

    if (crocoddyl.__version__, pinocchio.__version__) != (CROCODDYL, PINOCCHIO):
        raise ImportError(f"soagen.crocoddyl is built for crocoddyl {CROCODDYL} with pin {PINOCCHIO} (the release "
                          f"Crocoddyl's wheel was built with); found crocoddyl {crocoddyl.__version__}, pin "
                          f"{pinocchio.__version__}: pip install 'soagen[crocoddyl]'")


def _check_robot(robot, kind="free"):
    """A tree without joint friction (Crocoddyl's dynamics have none); for ``free`` a fixed base of one-dof
    joints, for ``contact`` point tips only (one per contact), a floating base allowed."""
    if kind not in MODELS:
        raise ValueError(f"kind {kind!r}: one of {sorted(MODELS)}")
    if len(getattr(robot, "parts", (robot,))) != 1:
        raise ValueError("soagen.crocoddyl takes a robot (a tree), not a closed chain")
    act = robot.actuators
    if act is not None and (any(act.viscous) or any(act.coulomb)):
        raise ValueError(f"{robot.name}: joint friction, which Crocoddyl's forward dynamics does not have")
    if kind == "contact":      # joints as Pinocchio's but the free-flyer's velocity order, which the model permutes
        if not robot.tips or any(len(t.rows) != 3 for t in robot.tips):
            raise ValueError(f"{robot.name}: the contact model takes point tips (soagen.point_tip), one per "
                             f"Crocoddyl ContactModel3D; this robot has {len(robot.tips)} tips, rows "
                             f"{[len(t.rows) for t in robot.tips]}")
        return
    if robot.nq != robot.nv:
        raise ValueError(f"{robot.name}: soagen.crocoddyl takes one-dof joints (nq = nv); this robot has "
                         f"nq = {robot.nq}, nv = {robot.nv}")


def files(robot, name=None, kind="free", **options):
    """``[(file name, text)]``: the C files and Eigen header of the cpp target for ``kind``'s functions
    (:data:`MODELS`), the C++ class's header (:data:`HEADERS`) and ``soagen_crocoddyl_<name>.cpp`` (its
    Python module).

    Parameters
    ----------
    robot : Robot     a tree without joint friction: for ``free`` a fixed base of one-dof joints, for
                      ``contact`` point tips (the contacts' points), a floating base allowed
    name : str, optional   the C prefix and C++ namespace (default: the robot's name made a C identifier)
    kind : {"free", "contact"}   the action model
    options : fields of :class:`soagen.Options` but ``functions``
    """
    from soagen._version import __version__
    from soagen.codegen import programs
    from soagen.model.pinocchio_convention import v_to_pinocchio
    from soagen.model.robot import FLOATING
    from soagen.options import Options
    from soagen.targets import plugin
    from soagen.targets.common.c_text import environment
    from soagen.targets.common.inert import c_name
    from soagen.targets.cpp.emit import namespace

    _check_robot(robot, kind)
    opts = Options(**{**options, "functions": MODELS[kind]})
    stem = c_name(name or robot.name)
    progs, _ = programs(robot, opts)
    writer = plugin("cpp")
    out = plugin(writer.BESIDE).files(robot, progs, stem, opts) + writer.files(robot, progs, stem, opts)
    act = robot.actuators
    armature = v_to_pinocchio(robot, act.armature if act is not None else np.zeros(robot.nv))   # nv, Pinocchio's
    header = HEADERS[kind].format(name=stem)
    # the tips: soagen's body k is Pinocchio's joint k + 1 (the same tree order); the point in its frame
    context = dict(version=__version__, name=stem, namespace=namespace(stem), module=f"soagen_crocoddyl_{stem}",
                   crocoddyl_version=CROCODDYL, armature=", ".join(repr(float(a)) for a in armature),
                   header=header, cls=_CLASSES[kind], contact=kind == "contact", ntips=len(robot.tips),
                   floating=robot.bodies[0].joint_type == FLOATING,
                   tip_joints=", ".join(str(t.body + 1) for t in robot.tips),
                   tip_offsets=", ".join("{" + ", ".join(repr(float(c)) for c in t.offset) + "}" for t in robot.tips))
    env = environment()
    # the cpp target's CMakeLists.txt, and the class's interface target {name}::crocoddyl
    cmake = env.get_template("crocoddyl_cmake.txt.j2").render(**context, pinocchio_version=PINOCCHIO,
                                                              defines=" ".join(DEFINES))
    out = [(f, text + cmake if f == "CMakeLists.txt" else text) for f, text in out]
    return out + [(header, env.get_template(_TEMPLATES[kind]).render(**context)),
                  (f"{context['module']}.cpp", env.get_template("crocoddyl_python.cpp.j2").render(**context))]


def write(robot, out, name=None, kind="free", **options):
    """Write :func:`files` into the folder ``out`` (made if missing); -> the paths written.  A CMake project
    adds the folder (``add_subdirectory``) and links ``<name>::crocoddyl`` (``-DSOAGEN_CROCODDYL_PREFIX=`` the
    prefix of Crocoddyl and Pinocchio: :func:`prefix`), then includes ``<name>_crocoddyl.hpp``
    (``kind="contact"``: ``<name>_crocoddyl_contact.hpp``)."""
    os.makedirs(out, exist_ok=True)
    paths = []
    for fname, text in files(robot, name, kind, **options):
        path = os.path.join(out, fname)
        with open(path, "w") as fh:
            fh.write(text)
        paths.append(path)
    return paths


def compile_commands(folder, stem, optimize="O1"):
    """The compiler commands of the Python module in ``folder`` (``$CXX``, default ``c++``): two compiles that
    may run at once (``<stem>.c`` as C++, and the module's source) and the link; and the module's name and
    file name."""
    pre = prefix()
    cxx = os.environ.get("CXX", "c++")
    # no -march=native (Eigen's fixed-size types keep the alignment the Crocoddyl and Pinocchio wheels were
    # built with) and no -ffp-contract=fast, for the generated functions either: their fused multiply-adds moved
    # the solo12 trot's FDDP solution by 1.07e-6 in the controls from Crocoddyl's (cost 3.6e-15 relative), past
    # the 1e-6 the benchmark and tests hold the two to
    common = [cxx, "-std=c++17", f"-{optimize}", "-fPIC", "-DNDEBUG"]
    includes = [f"-I{folder}", f"-I{pre / 'include'}", f"-I{pre / 'include' / 'pinocchio' / 'deprecated'}",
                f"-I{pre / 'include' / 'eigen3'}", f"-I{sysconfig.get_paths()['include']}",
                *(f"-D{d}" for d in DEFINES)]
    module = f"soagen_crocoddyl_{stem}"
    library = module + importlib.machinery.EXTENSION_SUFFIXES[0]
    compiles = [[*common, "-x", "c++", "-c", f"{folder}/{stem}.c", "-o", f"{folder}/{stem}.o", f"-I{folder}"],
                [*common, *includes, "-c", f"{folder}/{module}.cpp", "-o", f"{folder}/{module}.o"]]
    link = [*common, "-shared", f"{folder}/{module}.o", f"{folder}/{stem}.o", "-o", f"{folder}/{library}",
            f"-L{pre / 'lib'}", f"-Wl,-rpath,{pre / 'lib'}", *(f"-l{lib}" for lib in LIBRARIES)]
    return compiles, link, module, library


def _run(commands):
    """Run ``commands`` at once; raise RuntimeError with the first failure's command and errors."""
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for cmd in commands]
    outs = [p.communicate() for p in procs]
    for cmd, proc, (_, err) in zip(commands, procs, outs):
        if proc.returncode:
            raise RuntimeError(f"compiling the Crocoddyl model failed:\n{' '.join(cmd)}\n{err[-4000:]}")


def _build(robot, name, optimize, options, seconds, kind="free"):
    """The cached folder of the compiled module: (folder, module name, library file name)."""
    from soagen.options import Options
    from soagen.targets.cache import cache_key, cache_root, cached, made_from
    from soagen.targets.common.inert import c_name

    _check_robot(robot, kind)
    stem = c_name(name or robot.name)
    opts = Options(**{**options, "functions": MODELS[kind]})
    # soagen's sources and templates are in every key (cache_key): the files are made only when building
    key = cache_key("crocoddyl", kind, robot.fingerprint(), repr(opts), stem, optimize, str(prefix()),
                    os.environ.get("CXX", "c++"))
    # the C prefix, C++ namespace and module name carry the key: two builds (two robots of one name) loaded in
    # one process share no symbol, C++ type or Python module name
    stem = f"{stem}_{key[:8]}"
    _, _, module, library = compile_commands("@", stem, optimize)

    def make(work):
        t0 = time.perf_counter()
        for fname, text in files(robot, stem, kind, **options):
            (work / fname).write_text(text)
        seconds["generate"] = time.perf_counter() - t0
        compiles, link, _, _ = compile_commands(str(work), stem, optimize)
        t0 = time.perf_counter()
        _run(compiles)
        _run([link])
        seconds["compile"] = time.perf_counter() - t0
        return dict(library=library, module=module, generate_seconds=seconds["generate"],
                    compile_seconds=seconds["compile"])

    folder, meta = cached(cache_root(), key, make, made_from("crocoddyl", robot, opts, stem))
    return folder, meta["module"], meta["library"]


def module(robot, name=None, optimize="O1", kind="free", **options):
    """The compiled Python module of ``robot``'s action model of ``kind`` (built once, cached on disk and in
    this process); its class ``DifferentialActionModelFreeFwdDynamics(state, actuation, costs,
    constraints=None)`` or ``DifferentialActionModelContactFwdDynamics(state, actuation, contacts, costs[,
    constraints], inv_damping=0, enable_force=False)``.

    Parameters
    ----------
    robot : Robot
    name : str, optional       the C prefix and C++ namespace, to which the build's key is appended
                               (default: the robot's name made a C identifier)
    optimize : {"O0", "O1", "O2", "O3"}   the C++ compiler's optimization of the robot's functions and the class
    kind : {"free", "contact"}   the action model (:data:`MODELS`)
    options : fields of :class:`soagen.Options` but ``functions`` and ``optimize``
    """
    _check_versions()
    import crocoddyl  # noqa: F401  (its module registers the base classes the module's class derives from)

    key = (robot.fingerprint(), name, optimize, kind, tuple(sorted(options.items())))
    if key not in _modules:
        from soagen.targets.common.compiler import load_extension

        folder, modname, library = _build(robot, name, optimize, options, {}, kind)
        mod = load_extension(folder / library, modname)
        sys.modules[modname] = mod
        _modules[key] = mod
    return _modules[key]


def free_fwd_dynamics(robot, state, actuation, costs, constraints=None, name=None, optimize="O1", **options):
    """A ``crocoddyl.DifferentialActionModelFreeFwdDynamics`` of ``robot`` whose dynamics and derivatives are
    soagen's (:func:`module`).

    Parameters
    ----------
    robot : Robot                      the robot the functions are generated from
    state : crocoddyl.StateMultibody   of the same robot as a Pinocchio model (checked: sizes, and soagen's q̈
                                       equal to pinocchio.aba's at two states)
    actuation : crocoddyl.ActuationModelAbstract
    costs : crocoddyl.CostModelSum     whose residuals read at most oMi and the joint Jacobians (state,
                                       control, joint effort and acceleration, frame placement, translation,
                                       rotation; createData refuses others)
    constraints : crocoddyl.ConstraintModelManager, optional
    name, optimize, options : as :func:`module`

    Returns
    -------
    the model, a subclass of ``crocoddyl.DifferentialActionModelFreeFwdDynamics``
    """
    mod = module(robot, name=name, optimize=optimize, **options)
    cls = mod.DifferentialActionModelFreeFwdDynamics
    return cls(state, actuation, costs) if constraints is None else cls(state, actuation, costs, constraints)


def contact_fwd_dynamics(robot, state, actuation, contacts, costs, *args, name=None, optimize="O1", **options):
    """A ``crocoddyl.DifferentialActionModelContactFwdDynamics`` of ``robot`` whose contact dynamics and
    derivatives are soagen's (:func:`module`, ``kind="contact"``): ``robot``'s tips are the contacts' points.
    After ``robot``, the arguments of Crocoddyl's constructor, positional or by name: ``(state, actuation,
    contacts, costs[, constraints], inv_damping=0, enable_force=False)``.

    Parameters
    ----------
    robot : Robot                        point tips (soagen.point_tip), one per active contact; a floating
                                         base is Pinocchio's free-flyer
    state : crocoddyl.StateMultibody     of the same robot as a Pinocchio model (checked: sizes, and soagen's
                                         q̈ and forces equal a KKT solve on Pinocchio's quantities at two states)
    actuation : crocoddyl.ActuationModelAbstract
    contacts : crocoddyl.ContactModelMultiple   of ``ContactModel3D`` with any Baumgarte gains and
                                         reference (read at every calc), LOCAL, LOCAL_WORLD_ALIGNED or WORLD;
                                         the active ones' frame origins are the tips' points, one each (checked
                                         at every calc)
    costs : crocoddyl.CostModelSum       residuals: as :func:`free_fwd_dynamics`'s, and centre of mass
                                         position, contact force and friction cone (createData refuses others)
    args : Crocoddyl's ``[constraints,] inv_damping, enable_force``; also by name, each alone
           (``constraints=``, ``inv_damping=``, ``enable_force=``): a ``crocoddyl.ConstraintModelManager``,
           the damping (0: soagen's contact dynamics has none), and whether the contact forces' derivatives
           are computed (as Crocoddyl's: force and friction-cone costs need them)
    name, optimize, options : as :func:`module`

    Returns
    -------
    the model, a subclass of ``crocoddyl.DifferentialActionModelContactFwdDynamics``
    """
    args = list(args)
    constraints = args.pop(0) if args and not isinstance(args[0], (int, float)) else options.pop("constraints", None)
    inv_damping = args.pop(0) if args else options.pop("inv_damping", 0.0)
    enable_force = args.pop(0) if args else options.pop("enable_force", False)
    if args:
        raise TypeError(f"contact_fwd_dynamics: {len(args)} arguments too many")
    mod = module(robot, name=name, optimize=optimize, kind="contact", **options)
    return mod.DifferentialActionModelContactFwdDynamics(state, actuation, contacts, costs,
                                                         *[constraints] * (constraints is not None), inv_damping,
                                                         enable_force)


__all__ = ["free_fwd_dynamics", "contact_fwd_dynamics", "module", "files", "write", "CROCODDYL", "PINOCCHIO"]
