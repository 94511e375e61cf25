"""The CasADi target: the C99 functions as CasADi external functions, with their Jacobians
where soagen has the derivatives (:mod:`soagen.targets.casadi.emit`), compiled into a plain
shared library that ``casadi.external`` (and acados, through its external shared library
options) loads.  From Python: :func:`soagen.casadi.functions`."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from soagen.options import OptionsError
from soagen.targets.c99.compile import compile_args, unit_queue
from soagen.targets.c99.emit import Emitter
from soagen.targets.cache import cache_key, cache_root, cached, made_from
from soagen.targets.casadi.emit import DERIVATIVES, STEPS, check_steps, emit_casadi, needed

#: soagen generate --target casadi writes the C99 files beside its own
BESIDE = "c"


def _check(target, options):
    if options.precision != "double":
        raise OptionsError("the casadi target is double precision (CasADi's casadi_real): drop precision='float'")
    if len(target.parts) != 1:
        raise OptionsError("the casadi target takes a robot (a tree), not a closed chain")


def files(target, programs, name, options):
    """``<name>_casadi.c``."""
    _check(target, options)
    return [(f"{name}_casadi.c", emit_casadi(target, programs, name).source)]


@dataclass
class CasadiLibrary:
    """A compiled CasADi library of one robot.

    Attributes
    ----------
    path : Path        the shared library (``casadi.external(name, str(path))``)
    exported : dict    soagen function -> its CasADi name
    jacobians : list   the functions whose Jacobian the library has (``jac_`` + the CasADi name)
    timings : dict     seconds per stage of the build call that made it
    """

    path: Path
    exported: dict
    jacobians: list
    timings: dict


def build(target, options, name, functions, record, cache_dir=None, progress=None):
    """The cached library of ``functions`` (:mod:`soagen.targets` plug-in entry); -> CasadiLibrary."""
    _check(target, options)
    args = compile_args(options)
    key = cache_key("casadi", target.fingerprint(), repr(options), name, ",".join(functions), " ".join(args))
    timings = {}

    def make(work):
        t0 = time.perf_counter()
        programs, stage = record()
        timings.update(stage)
        queue = unit_queue(work, args, progress=progress)
        emitter = Emitter(target, name, options.precision)
        csource = emitter.csource(programs)
        casadi = emit_casadi(target, programs, name)
        (work / f"{name}.h").write_text(csource.header)
        (work / f"{name}.c").write_text(csource.source)
        queue.add([(f"objects/{name}__{unit}", text) for unit, text in csource.units]
                  + [(f"objects/{name}_casadi", casadi.source)])
        objects = queue.wait()
        library = f"lib{name}_casadi{'.dylib' if sys.platform == 'darwin' else '.so'}"
        res = subprocess.run([os.environ.get("CC", "cc"), "-shared", "-o", str(work / library),
                              *(str(o) for o in objects.values()), "-lm"], capture_output=True, text=True)
        if res.returncode:
            raise RuntimeError(f"linking {library} failed:\n{res.stderr}")
        timings["compile and link"] = time.perf_counter() - t0
        return dict(library=library, exported=casadi.exported, jacobians=casadi.jacobians, name=name)

    final, meta = cached(Path(cache_dir) if cache_dir else cache_root(), key, make,
                         made_from("casadi", target, options, name))
    return CasadiLibrary(final / meta["library"], meta["exported"], meta["jacobians"], timings)


__all__ = ["BESIDE", "DERIVATIVES", "STEPS", "CasadiLibrary", "build", "check_steps", "files", "needed"]
