#!/usr/bin/env python3
"""CasADi-generated C of rnea, crba and aba for a URDF robot (benchmark baseline).

    python benchmarks/casadi_kin_dyn.py --urdf URDF [--lock JOINT=VALUE ...] [--floating-base] --out DIR

The ``pin`` 4.x wheel has no ``pinocchio.casadi``.  ``cmeel-casadi-kin-dyn``
bundles Pinocchio 2.6.20 templated on ``casadi::SX`` (and CasADi 3.6.3) and
builds rnea/crba/aba CasADi Functions from a URDF string; it pins ``pin==2.6.20``
and so cannot live beside ``pin`` 4.x.  This script therefore creates, once, its
own venv at ``benchmarks/.work/casadi-venv`` (override: ``--venv``; interpreter
used to create it: ``--python`` or ``$SOAGEN_CASADI_PYTHON``, default the one
running this script) and re-invokes itself inside it with ``--inner``.

Inside the venv:

* the URDF is rewritten: each ``--lock``ed joint becomes ``fixed`` (a nonzero
  value of a revolute/continuous/prismatic joint is folded into the joint
  origin); every other ``continuous`` joint becomes ``revolute`` with huge limits
  so that Pinocchio gives it one configuration coordinate (nq == nv, q = angle);
* with ``--floating-base`` the model gets casadi_kin_dyn's ``FREE_FLYER`` root
  joint (``root_joint``, as soagen's ``load_urdf(floating_base=True)``); its
  nq = nv + 1 is then refused (only 1-dof joints are supported, nq == nv);
* ``CasadiKinDyn(urdf).rnea()/crba()/aba()`` give SX Functions
  ``rnea(q, v, a) -> tau``, ``crba(q) -> M`` (full symmetric nv x nv) and
  ``aba(q, v, tau) -> a`` (renamed from the ``"rnea"`` name it is built with);
  gravity is Pinocchio's default, 9.81 m/s^2 along -z of the world;
* ``gravity(q) = rnea(q, 0, 0)`` and ``bias(q, v) = rnea(q, v, 0)`` are made
  from rnea's SX graph (zeros folded), for operation counts;
* ``rnea_derivatives(q, v, a) -> (dtau_dq, dtau_dv)`` and ``aba_derivatives(q, v, tau) ->
  (ddq, ddq_dq, ddq_dv, ddq_dtau)``: the Jacobians of rnea and aba by CasADi's
  ``jacobian`` (AD on the SX graph), dense;
* every function is rebuilt from its SX graph with CasADi's own common
  subexpression elimination (the Function option ``cse``, CasADi >= 3.6) before
  code generation; the instruction counts with and without it are recorded;
* CasADi's code generator writes ``DIR/NAME.{c,h}`` for each NAME of rnea, crba, aba,
  gravity, bias, rnea_derivatives, aba_derivatives; each C entry point is CasADi's usual
  ``int NAME(const casadi_real** arg, casadi_real** res, casadi_int* iw,
  casadi_real* w, int mem)`` (with ``NAME_work`` giving the work sizes);
* ``DIR/manifest.json`` describes the functions (sizes, work sizes, instruction
  counts by CasADi operation with and without cse, versions, joint order, whether M is full or a triangle) and
  ``DIR/check.json`` holds their values at 3 seeded states, cross-checked
  against the venv's own double-precision Pinocchio 2.6.20;
* ``DIR/model.urdf`` is the rewritten URDF handed to casadi_kin_dyn.

On any failure ``DIR/error.txt`` gets a one-paragraph reason and the exit
status is non-zero.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_VENV = HERE / ".work" / "casadi-venv"
# cmeel-casadi-kin-dyn 1.6.14 is the newest release with cp311 manylinux wheels;
# plain ``casadi-kin-dyn`` has no wheel installable here.  numpy<2 because
# pin 2.6.20 / eigenpy 3.1.3 are built against numpy 1.x.
REQUIREMENTS = ["cmeel-casadi-kin-dyn==1.6.14", "numpy<2"]
MARKER = "soagen-casadi-venv.json"
FUNCTIONS = ("rnea", "crba", "aba")
CODEGEN_OPTIONS = {"with_header": True, "casadi_real": "double"}
# CasADi's own common-subexpression elimination (Function option, CasADi >= 3.6):
# every function is rebuilt from its SX graph with it before code generation
FUNCTION_OPTIONS = {"cse": True}
SEEDS = (0, 1, 2)
CHECK_TOL = 1e-9


class Failure(Exception):
    """A reason to stop, written to DIR/error.txt."""


def write_error(out: Path, msg: str) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "error.txt").write_text(" ".join(msg.split()) + "\n")
    except OSError:
        pass
    print(f"casadi_kin_dyn.py: error: {msg}", file=sys.stderr)


def parse_locks(items) -> dict:
    locks = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise Failure(f"--lock expects JOINT=VALUE, got {item!r}")
        try:
            locks[name.strip()] = float(value)
        except ValueError:
            raise Failure(f"--lock {item!r}: {value!r} is not a number") from None
    return locks


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--urdf", required=True, help="URDF file")
    p.add_argument("--lock", action="extend", nargs="+", default=[], metavar="JOINT=VALUE",
                   help="joint to hold fixed at VALUE (rad or m); repeatable")
    p.add_argument("--floating-base", action="store_true",
                   help="a free-flyer root joint (casadi_kin_dyn's JointType.FREE_FLYER, named root_joint)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--venv", default=str(DEFAULT_VENV), help="venv to create/use (cached)")
    p.add_argument("--python", default=os.environ.get("SOAGEN_CASADI_PYTHON", sys.executable),
                   help="interpreter that creates the venv (CPython 3.9-3.12 x86_64)")
    p.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


# --------------------------------------------------------------------- outer

def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _cmeel_lib_dirs(venv: Path):
    return sorted(str(p) for p in venv.glob("lib/python*/site-packages/cmeel.prefix/lib") if p.is_dir())


def _run_logged(cmd, log, env=None):
    log.write(f"$ {' '.join(map(str, cmd))}\n")
    log.flush()
    r = subprocess.run([str(c) for c in cmd], stdout=log, stderr=subprocess.STDOUT, env=env, check=False)
    log.write(f"[exit {r.returncode}]\n")
    log.flush()
    return r.returncode


def ensure_venv(venv: Path, python: str) -> dict:
    """Create (once) the venv holding cmeel-casadi-kin-dyn; returns its marker record."""
    import fcntl

    venv.parent.mkdir(parents=True, exist_ok=True)
    if venv.parent == DEFAULT_VENV.parent and not (venv.parent / ".gitignore").exists():
        (venv.parent / ".gitignore").write_text("# scratch: venv (~540 MB) and outputs\n*\n")
    marker = venv / MARKER
    log_path = venv.parent / (venv.name + "-install.log")
    with open(venv.parent / (venv.name + ".lock"), "w") as lockf:
        fcntl.flock(lockf, fcntl.LOCK_EX)  # parallel callers build it once
        if marker.is_file() and _venv_python(venv).exists():
            try:
                rec = json.loads(marker.read_text())
            except ValueError:
                rec = {}
            if rec.get("requirements") == REQUIREMENTS:
                rec["cached"] = True
                return rec
        if venv.exists():
            shutil.rmtree(venv)
        t0 = time.perf_counter()
        with open(log_path, "w") as log:
            if _run_logged([python, "-m", "venv", venv], log) != 0:
                raise Failure(f"could not create the venv {venv} with {python} -m venv; see {log_path}")
            vpy = _venv_python(venv)
            cmd = [vpy, "-m", "pip", "install", "--no-input", "--disable-pip-version-check", *REQUIREMENTS]
            if _run_logged(cmd, log) != 0:
                tail = log_path.read_text().strip().splitlines()[-3:]
                raise Failure(
                    f"pip could not install {' '.join(REQUIREMENTS)} into {venv} (interpreter {python}; "
                    f"cmeel-casadi-kin-dyn 1.6.14 ships CPython 3.9-3.12 manylinux_2_28 wheels); "
                    f"last lines of {log_path}: {' | '.join(tail)}")
            env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(
                _cmeel_lib_dirs(venv) + [os.environ.get("LD_LIBRARY_PATH", "")]))
            smoke = [vpy, "-c", "import casadi_kin_dyn, casadi; print(casadi.__version__)"]
            if _run_logged(smoke, log, env=env) != 0:
                raise Failure(f"casadi_kin_dyn installed in {venv} but does not import; see {log_path}")
            freeze = subprocess.run([str(vpy), "-m", "pip", "freeze", "--disable-pip-version-check"],
                                    capture_output=True, text=True, check=False).stdout.split()
        seconds = time.perf_counter() - t0
        rec = {"requirements": REQUIREMENTS, "python": python,
               "install_command": f"{python} -m venv {venv} && {venv}/bin/python -m pip install "
                                  + " ".join(f"'{r}'" for r in REQUIREMENTS),
               "create_seconds": round(seconds, 2), "packages": freeze}
        marker.write_text(json.dumps(rec, indent=1) + "\n")
        rec["cached"] = False
        return rec


def outer(args) -> int:
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("error.txt", "manifest.json", "check.json"):
        (out / stale).unlink(missing_ok=True)
    try:
        urdf = Path(args.urdf).resolve()
        if not urdf.is_file():
            raise Failure(f"{args.urdf}: no such URDF file")
        parse_locks(args.lock)  # fail early on a malformed --lock
        venv = Path(args.venv).resolve()
        rec = ensure_venv(venv, args.python)
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(_cmeel_lib_dirs(venv) + [env.get("LD_LIBRARY_PATH", "")])
        env["SOAGEN_CASADI_VENV_INFO"] = json.dumps(
            {k: rec.get(k) for k in ("create_seconds", "cached", "install_command", "requirements")})
        env.pop("PYTHONPATH", None)  # keep the system pin 4.x out of the venv
        env.pop("PYTHONHOME", None)
        cmd = [str(_venv_python(venv)), str(Path(__file__).resolve()), "--inner",
               "--urdf", str(urdf), "--out", str(out), "--venv", str(venv)]
        if args.lock:
            cmd += ["--lock", *args.lock]
        if args.floating_base:
            cmd.append("--floating-base")
        r = subprocess.run(cmd, env=env, stderr=subprocess.PIPE, text=True, check=False)
        if r.stderr:
            sys.stderr.write(r.stderr)
        if r.returncode != 0:
            if not (out / "error.txt").exists():
                tail = " | ".join(r.stderr.strip().splitlines()[-4:])
                write_error(out, f"the codegen step inside {venv} exited with status {r.returncode}: {tail}")
            return r.returncode or 1
        return 0
    except Failure as e:
        write_error(out, str(e))
        return 1
    except Exception as e:  # noqa: BLE001 - anything else is still a reported failure
        write_error(out, f"unexpected {type(e).__name__}: {e}")
        traceback.print_exc()
        return 1


# --------------------------------------------------------------------- inner

def _rot_axis(axis, angle):
    import numpy as np
    k = np.asarray(axis, float)
    k = k / np.linalg.norm(k)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)


def _rpy_matrix(rpy):
    import numpy as np
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _matrix_rpy(R):
    import numpy as np
    cp = np.hypot(R[0, 0], R[1, 0])
    if cp > 1e-9:
        rpy = (np.arctan2(R[2, 1], R[2, 2]), np.arctan2(-R[2, 0], cp), np.arctan2(R[1, 0], R[0, 0]))
    elif R[2, 0] < 0:  # pitch = +pi/2, yaw taken 0
        rpy = (np.arctan2(R[0, 1], R[1, 1]), np.pi / 2, 0.0)
    else:  # pitch = -pi/2
        rpy = (np.arctan2(-R[0, 1], R[1, 1]), -np.pi / 2, 0.0)
    if np.abs(_rpy_matrix(rpy) - R).max() > 1e-12:
        raise Failure("internal error: rpy extraction of a locked joint's origin failed")
    return rpy


def _vec(text, default):
    return [float(x) for x in text.split()] if text is not None else list(default)


def rewrite_urdf(text: str, locks: dict):
    """Locked joints -> fixed (value folded into the origin); continuous -> revolute."""
    import xml.etree.ElementTree as ET

    import numpy as np

    root = ET.fromstring(text)
    if root.tag != "robot":
        raise Failure(f"the URDF's root element is <{root.tag}>, not <robot>")
    joints = {j.get("name"): j for j in root.findall("joint")}  # top level only (not <transmission>)
    notes = {"locked": {}, "continuous_as_revolute": []}
    for name, value in locks.items():
        j = joints.get(name)
        if j is None:
            raise Failure(f"--lock {name}: the URDF has no joint named {name!r}")
        jtype = j.get("type")
        if jtype not in ("revolute", "continuous", "prismatic"):
            raise Failure(f"--lock {name}: joint type {jtype!r} cannot be locked (only revolute, "
                          f"continuous or prismatic joints)")
        if value != 0.0:
            origin = j.find("origin")
            if origin is None:
                origin = ET.SubElement(j, "origin")
            xyz = np.array(_vec(origin.get("xyz"), (0, 0, 0)))
            R0 = _rpy_matrix(_vec(origin.get("rpy"), (0, 0, 0)))
            ax = j.find("axis")
            axis = np.array(_vec(ax.get("xyz") if ax is not None else None, (1, 0, 0)))
            if np.linalg.norm(axis) == 0:
                raise Failure(f"--lock {name}: zero joint axis")
            if jtype == "prismatic":
                xyz = xyz + R0 @ (axis / np.linalg.norm(axis)) * value
            else:
                origin.set("rpy", " ".join(repr(float(x)) for x in _matrix_rpy(R0 @ _rot_axis(axis, value))))
            origin.set("xyz", " ".join(repr(float(x)) for x in xyz))
        j.set("type", "fixed")
        for tag in ("axis", "limit", "mimic", "dynamics", "calibration", "safety_controller"):
            for el in j.findall(tag):
                j.remove(el)
        notes["locked"][name] = {"type": jtype, "value": value}
    for name, j in joints.items():
        if j.get("type") == "continuous":
            j.set("type", "revolute")
            lim = j.find("limit")
            if lim is None:
                lim = ET.SubElement(j, "limit")
            lim.set("lower", "-1e6")
            lim.set("upper", "1e6")
            lim.set("effort", lim.get("effort", "0"))
            lim.set("velocity", lim.get("velocity", "0"))
            notes["continuous_as_revolute"].append(name)
    return ET.tostring(root, encoding="unicode"), notes


def _as_function(cs, obj):
    if isinstance(obj, cs.Function):
        return obj
    if isinstance(obj, (str, bytes)):
        return cs.Function.deserialize(obj)
    raise Failure(f"casadi_kin_dyn returned a {type(obj).__name__}, neither a casadi.Function "
                  f"nor a serialized one")


def _with_cse(cs, f, name):
    """``f`` rebuilt from its SX graph as ``name`` with :data:`FUNCTION_OPTIONS` (CasADi's cse)."""
    xs = f.sx_in()
    return cs.Function(name, xs, f.call(xs), f.name_in(), f.name_out(), dict(FUNCTION_OPTIONS))


def _instructions(cs, f):
    """{CasADi operation name (``OP_MUL`` ...): count} over the instructions of SX Function ``f``."""
    names = {getattr(cs, n): n for n in dir(cs) if n.startswith("OP_")}
    counts = {}
    for k in range(f.n_instructions()):
        op = names.get(f.instruction_id(k), str(f.instruction_id(k)))
        counts[op] = counts.get(op, 0) + 1
    return dict(sorted(counts.items()))


def _triangle(M, tol=1e-12):
    import numpy as np
    scale = max(1.0, float(np.abs(M).max()))
    low = np.abs(np.tril(M, -1)).max() if M.shape[0] > 1 else 0.0
    up = np.abs(np.triu(M, 1)).max() if M.shape[0] > 1 else 0.0
    if np.abs(M - M.T).max() <= tol * scale:
        return "full"
    if low <= tol * scale:
        return "upper"
    if up <= tol * scale:
        return "lower"
    return "unsymmetric"


def _dist_version(*names):
    from importlib import metadata
    for n in names:
        try:
            return metadata.version(n)
        except metadata.PackageNotFoundError:
            continue
    return None


def inner(args) -> int:
    out = Path(args.out)
    try:
        t_start = time.perf_counter()
        locks = parse_locks(args.lock)
        # this file is named like the package: keep its folder off the import path
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
        # casadi_kin_dyn first: its RPATH loads libcasadi, which the bundled
        # casadi/_casadi.so cannot find on its own (LD_LIBRARY_PATH is set too).
        import casadi_kin_dyn  # noqa: F401, I001 (order matters, see above)
        from casadi_kin_dyn import casadi_kin_dyn as ckd
        import casadi as cs
        import numpy as np

        urdf_text, notes = rewrite_urdf(Path(args.urdf).read_text(), locks)
        (out / "model.urdf").write_text(urdf_text)
        try:
            kd = (ckd.CasadiKinDyn(urdf_text, ckd.CasadiKinDyn.JointType.FREE_FLYER) if args.floating_base
                  else ckd.CasadiKinDyn(urdf_text))
        except Exception as e:  # noqa: BLE001
            raise Failure(f"casadi_kin_dyn could not build a model from {args.urdf}: {e}") from None
        nq, nv = kd.nq(), kd.nv()
        names = [n for n in kd.joint_names() if n != "universe"]
        if nq != nv:
            what = ("the free-flyer root joint (--floating-base)" if args.floating_base else
                    f"a floating, planar or other multi-coordinate joint remains in {args.urdf}")
            raise Failure(f"casadi_kin_dyn's model has nq={nq} != nv={nv} ({what}); "
                          f"only 1-dof joints are supported")
        if len(names) != nv:
            raise Failure(f"casadi_kin_dyn's model has {len(names)} joints {names} but nv={nv}")
        if nv == 0:
            raise Failure(f"{args.urdf} has no movable joint left after locking")

        expect = {"rnea": ([nq, nv, nv], [nv], ["q", "v", "a"]),
                  "crba": ([nq], [nv * nv], ["q"]),
                  "aba": ([nq, nv, nv], [nv], ["q", "v", "tau"])}
        funcs, raw_info = {}, {}
        for name in FUNCTIONS:
            f0 = _as_function(cs, getattr(kd, name)())
            ins, outs = [f0.nnz_in(i) for i in range(f0.n_in())], [f0.nnz_out(i) for i in range(f0.n_out())]
            if ins != expect[name][0] or outs != expect[name][1]:
                raise Failure(f"casadi_kin_dyn's {name} has inputs {f0.name_in()} of sizes {ins} and outputs "
                              f"{f0.name_out()} of sizes {outs}; expected sizes {expect[name][0]} -> "
                              f"{expect[name][1]} (API changed?)")
            if f0.has_free():
                raise Failure(f"casadi_kin_dyn's {name} has free symbols {f0.get_free()}")
            f = _with_cse(cs, f0, name)
            funcs[name] = f
            raw_info[name] = {"casadi_kin_dyn_name": f0.name(), "n_instructions_without_cse": f0.n_instructions(),
                              "instructions_without_cse": _instructions(cs, f0)}

        # gravity G(q) = rnea(q, 0, 0) and bias C + G = rnea(q, v, 0): the SX graph
        # with the zeros folded, for the operation-count comparison (docs/opcounts.md)
        q_s, v_s, zero = cs.SX.sym("q", nq), cs.SX.sym("v", nv), cs.SX.zeros(nv)
        raw_rnea = _as_function(cs, kd.rnea())
        for name, ins, outs, names_in in (("gravity", [q_s], raw_rnea(q_s, zero, zero), ["q"]),
                                          ("bias", [q_s, v_s], raw_rnea(q_s, v_s, zero), ["q", "v"])):
            plain = cs.Function(name, ins, [outs], names_in, ["tau"])
            funcs[name] = _with_cse(cs, plain, name)
            raw_info[name] = {"n_instructions_without_cse": plain.n_instructions(),
                              "instructions_without_cse": _instructions(cs, plain)}

        # the Jacobians of rnea w.r.t. q, v and of aba w.r.t. q, v, tau, by CasADi's AD on the SX
        # graph (dense outputs), aba's value beside them as soagen's forward_dynamics_derivatives
        a_s, tau_s = cs.SX.sym("a", nv), cs.SX.sym("tau", nv)
        tau_e, ddq_e = raw_rnea(q_s, v_s, a_s), _as_function(cs, kd.aba())(q_s, v_s, tau_s)
        for name, ins, outs, names_in, names_out in (
                ("rnea_derivatives", [q_s, v_s, a_s], [cs.jacobian(tau_e, x) for x in (q_s, v_s)],
                 ["q", "v", "a"], ["dtau_dq", "dtau_dv"]),
                ("aba_derivatives", [q_s, v_s, tau_s], [ddq_e] + [cs.jacobian(ddq_e, x) for x in (q_s, v_s, tau_s)],
                 ["q", "v", "tau"], ["ddq", "ddq_dq", "ddq_dv", "ddq_dtau"])):
            plain = cs.Function(name, ins, [cs.densify(o) for o in outs], names_in, names_out)
            funcs[name] = _with_cse(cs, plain, name)
            raw_info[name] = {"n_instructions_without_cse": plain.n_instructions(),
                              "instructions_without_cse": _instructions(cs, plain)}

        # -- numeric values at seeded states, and a cross-check against double Pinocchio
        qmin, qmax = np.array(kd.q_min(), float), np.array(kd.q_max(), float)
        states = []
        for seed in SEEDS:
            rng = np.random.default_rng(seed)
            lo, hi = np.maximum(qmin, -np.pi), np.minimum(qmax, np.pi)
            bad = ~(lo < hi)
            lo[bad], hi[bad] = -1.0, 1.0
            q = rng.uniform(lo, hi)
            v = rng.uniform(-1.0, 1.0, nv)
            a = rng.uniform(-1.0, 1.0, nv)
            tau = rng.uniform(-10.0, 10.0, nv)
            tau_id = np.array(funcs["rnea"](q, v, a)).ravel()
            M = np.array(funcs["crba"](q))
            acc = np.array(funcs["aba"](q, v, tau)).ravel()
            states.append({"seed": seed, "q": q, "v": v, "a": a, "tau": tau,
                           "rnea": tau_id, "crba": M, "aba": acc,
                           "aba_of_rnea": np.array(funcs["aba"](q, v, tau_id)).ravel()})
        tri = _triangle(states[0]["crba"])
        consistency = max(float(np.abs(s["aba_of_rnea"] - s["a"]).max()) for s in states)

        pin_check = {"available": False}
        try:
            import pinocchio as pin
            model = pin.buildModelFromXML(urdf_text)
            data = model.createData()
            if [n for n in model.names if n != "universe"] != names:
                raise Failure(f"joint order differs between casadi_kin_dyn {names} and Pinocchio "
                              f"{list(model.names)[1:]}")
            err = {k: 0.0 for k in FUNCTIONS}
            for s in states:
                err["rnea"] = max(err["rnea"], float(np.abs(pin.rnea(model, data, s["q"], s["v"], s["a"])
                                                            - s["rnea"]).max()))
                Mp = pin.crba(model, data, s["q"])
                Mp = np.triu(Mp) + np.triu(Mp, 1).T
                err["crba"] = max(err["crba"], float(np.abs(Mp - s["crba"]).max()))
                err["aba"] = max(err["aba"], float(np.abs(pin.aba(model, data, s["q"], s["v"], s["tau"])
                                                          - s["aba"]).max()))
            pin_check = {"available": True, "pinocchio_version": pin.__version__,
                         "gravity": [float(x) for x in model.gravity.linear], "max_abs_error": err}
            worst = max(err.values())
            if worst > CHECK_TOL * 1e3:
                raise Failure(f"CasADi functions disagree with double Pinocchio {pin.__version__} by {worst:.3g} "
                              f"({err})")
        except ImportError as e:
            pin_check["reason"] = str(e)

        # -- C code
        versions = {"casadi_version": cs.__version__,
                    "casadi_kin_dyn_version": _dist_version("cmeel-casadi-kin-dyn", "casadi-kin-dyn"),
                    "pinocchio_version": _dist_version("pin")}
        manifest = {"urdf": str(Path(args.urdf).resolve()), "nq": nq, "nv": nv, "joint_names": names,
                    "locked": notes["locked"], "continuous_as_revolute": notes["continuous_as_revolute"],
                    "gravity": pin_check.get("gravity", [0.0, 0.0, -9.81]),
                    "codegen_options": CODEGEN_OPTIONS, "function_options": FUNCTION_OPTIONS,
                    "calling_convention": "int NAME(const casadi_real** arg, casadi_real** res, casadi_int* iw, "
                                          "casadi_real* w, int mem); arg/res arrays of sz_arg/sz_res pointers, "
                                          "iw/w of sz_iw/sz_w elements (NAME_work); dense column-major buffers",
                    "crba_triangle": tri, "aba_of_rnea_max_abs_error": consistency,
                    "pinocchio_double_check": pin_check,
                    "venv": json.loads(os.environ.get("SOAGEN_CASADI_VENV_INFO", "null")),
                    **versions}
        for name, f in funcs.items():
            t0 = time.perf_counter()
            cg = cs.CodeGenerator(f"{name}.c", dict(CODEGEN_OPTIONS))
            cg.add(f)
            cg.generate(str(out) + os.sep)
            seconds = time.perf_counter() - t0
            c, h = out / f"{name}.c", out / f"{name}.h"
            if not c.is_file() or not h.is_file():
                raise Failure(f"CasADi's code generator did not write {c} and {h}")
            entry = {"c": c.name, "h": h.name, "function": name,
                     "inputs": [f.nnz_in(i) for i in range(f.n_in())], "input_names": f.name_in(),
                     "outputs": [f.nnz_out(i) for i in range(f.n_out())], "output_names": f.name_out(),
                     "output_shapes": [list(f.size_out(i)) for i in range(f.n_out())],
                     "sz_arg": f.sz_arg(), "sz_res": f.sz_res(), "sz_iw": f.sz_iw(), "sz_w": f.sz_w(),
                     "n_instructions": f.n_instructions(), "instructions": _instructions(cs, f),
                     "n_nodes": f.n_nodes(),
                     "nnz_in": f.nnz_in(), "nnz_out": f.nnz_out(),
                     "c_bytes": c.stat().st_size, "c_lines": c.read_text().count("\n"),
                     "codegen_seconds": round(seconds, 4), **raw_info.get(name, {}), **versions}
            if name == "crba":
                entry["crba_triangle"] = tri
            manifest[name] = entry
        manifest["inner_seconds"] = round(time.perf_counter() - t_start, 3)

        def lst(x):
            return np.asarray(x).tolist()

        check = {"joint_names": names, "gravity": manifest["gravity"], "crba_triangle": tri,
                 "note": "crba is M as a row-major nested list; tau is independent of a "
                         "(aba(q, v, tau) is the forward dynamics of that tau)",
                 "states": [{k: lst(val) if k != "seed" else val for k, val in s.items() if k != "aba_of_rnea"}
                            for s in states]}
        (out / "check.json").write_text(json.dumps(check, indent=1) + "\n")
        (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        return 0
    except Failure as e:
        write_error(out, str(e))
        return 1
    except Exception as e:  # noqa: BLE001
        write_error(out, f"codegen inside the venv failed: unexpected {type(e).__name__}: {e}")
        traceback.print_exc()
        return 1


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return inner(args) if args.inner else outer(args)


if __name__ == "__main__":
    sys.exit(main())
