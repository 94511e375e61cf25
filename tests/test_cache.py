"""Two processes building the same robot into one cache at once both get a
working module, and the cache is sound afterwards; a damaged entry is rebuilt,
never loaded."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from soagen.targets.cache import verified

SCRIPT = """
import numpy as np, soagen
from soagen import reference
from soagen.model import robots
robot = robots.example("puma560")
mod = soagen.build(robot, functions=["gravity", "mass_matrix"])
q = np.linspace(-1, 1, robot.n)
assert np.allclose(mod.gravity(q), reference.gravity(robot, q), rtol=1e-12, atol=1e-12)
print(mod.path)
"""


def test_two_processes_build_the_same_robot(tmp_path):
    env = dict(os.environ, SOAGEN_CACHE=str(tmp_path / "cache"), SOAGEN_JOBS="1")
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    paths = {out.strip() for out, _ in outs}
    assert len(paths) == 1                                  # one cache entry, shared
    entries = [e for e in os.listdir(tmp_path / "cache")           # the methods' C entry has its own
               if not e.endswith(".lock") and not e.startswith("fastcall-")]
    assert len(entries) == 1, entries                       # no half-built leftovers
    again = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and again.stdout.strip() in paths


def test_family_picks_are_remembered(tmp_path, monkeypatch):
    """The second recording of a robot records only the family's chosen candidate, and its
    programs print to the same C as the first's (which recorded every candidate)."""
    import soagen
    from soagen import codegen
    from soagen.targets.c99.emit import emit

    robot = soagen.robots.example("panda")
    monkeypatch.setenv("SOAGEN_CACHE", str(tmp_path))
    monkeypatch.setenv("SOAGEN_JOBS", "1")             # recorded in this process, where the spy sees it
    recorded = []
    one = codegen._one_program
    monkeypatch.setattr(codegen, "_one_program", lambda job: recorded.append(job[1]) or one(job))
    options = soagen.Options(functions=("forward_dynamics", "mass_matrix_inverse"))
    first, _ = codegen.programs(robot, options)
    candidates = {s.name for f in ("forward_dynamics", "mass_matrix_inverse") for _, s in
                  soagen.functions.candidates(f)}
    assert set(recorded) == candidates
    recorded.clear()
    again, _ = codegen.programs(robot, options)
    assert len(recorded) == 2 and set(recorded) < candidates
    assert {p.algorithm for p in again} == {p.algorithm for p in first}
    assert emit(robot, again, "r").source == emit(robot, first, "r").source


# the smallest build with a SIMD library: puma560's gravity at -O0; a run checks a single call and a
# batch (through the SIMD library) against the reference and prints the module's folder
SMALL = dict(functions=["gravity"], optimize="O0", simd=True)
SMALL_SCRIPT = f"""
import numpy as np, soagen
robot = soagen.robots.example("puma560")
mod = soagen.build(robot, **{SMALL!r})
Q = np.linspace(-1, 1, 3 * robot.n).reshape(3, robot.n)
want = np.array([soagen.reference.gravity(robot, q) for q in Q])
assert np.allclose(mod.gravity(Q[0]), want[0], rtol=1e-12, atol=1e-12)
assert np.allclose(mod.gravity(Q), want, rtol=1e-12, atol=1e-12)
print(mod.path)
"""
NOTICE = "soagen: cache entry {} is damaged ("


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A cache holding the one entry of :data:`SMALL`, built in this process; -> (cache, entry)."""
    import soagen

    cache = tmp_path_factory.mktemp("pristine")
    mod = soagen.build(soagen.robots.example("puma560"), cache_dir=cache, **SMALL)
    return cache, mod.path.name


def run_small(cache):
    """:data:`SMALL_SCRIPT` run in a process of its own on ``cache`` (a crash fails the test, not pytest)."""
    env = dict(os.environ, SOAGEN_CACHE=str(cache), SOAGEN_JOBS="1")
    return subprocess.run([sys.executable, "-c", SMALL_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=600)


def entry_copy(pristine, tmp_path):
    """A copy of the pristine cache in ``tmp_path`` (files never loaded here); -> (cache, entry, meta)."""
    cache, key = pristine
    shutil.copytree(cache / key, tmp_path / key)
    meta = json.loads((tmp_path / key / "meta.json").read_text())
    return tmp_path, tmp_path / key, meta


def cut_to_half(path):
    """Cut the file ``path`` to half its size, in place (a copy interrupted, a full disk)."""
    os.truncate(path, path.stat().st_size // 2)


def rewrite_meta(entry, meta):
    """Write ``meta`` as the entry's meta.json."""
    (entry / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))


DAMAGES = {
    "library cut to half": lambda entry, meta: cut_to_half(entry / meta["library"]),
    "library emptied": lambda entry, meta: os.truncate(entry / meta["library"], 0),
    "SIMD library cut to half": lambda entry, meta: cut_to_half(entry / meta["simd"]["library"]),
    "meta.json garbage": lambda entry, meta: (entry / "meta.json").write_bytes(b"\x00not json {"),
    "meta.json without keys": lambda entry, meta: rewrite_meta(entry, {"name": meta["name"]}),
    "meta.json naming another library": lambda entry, meta: rewrite_meta(entry, dict(meta, library="other.so")),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_entry_is_rebuilt(pristine, tmp_path, damage):
    """Each damage to a file the build loads is found before loading: the entry is rebuilt, with a
    line on stderr, and the module built from it computes the reference's gravity."""
    cache, entry, meta = entry_copy(pristine, tmp_path)
    DAMAGES[damage](entry, meta)
    run = run_small(cache)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(entry)
    notices = [line for line in run.stderr.splitlines() if line.startswith(NOTICE.format(entry.name))]
    assert len(notices) == 1 and notices[0].endswith("): rebuilding"), run.stderr
    assert verified(entry) == json.loads((entry / "meta.json").read_text())   # rebuilt whole


def test_a_whole_entry_is_used_as_it_is(pristine, tmp_path):
    """An undamaged entry is loaded without a rebuild or a notice."""
    cache, entry, meta = entry_copy(pristine, tmp_path)
    before = (entry / meta["library"]).stat()
    run = run_small(cache)
    assert run.returncode == 0 and "damaged" not in run.stderr, run.stderr
    after = (entry / meta["library"]).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_the_objects_are_not_needed(pristine, tmp_path):
    """The build's objects are loaded by nothing: without ``objects/`` the entry is used as it is,
    single calls and the SIMD batches computing the reference's gravity."""
    cache, entry, meta = entry_copy(pristine, tmp_path)
    shutil.rmtree(entry / "objects")
    run = run_small(cache)
    assert run.returncode == 0 and "damaged" not in run.stderr, run.stderr
    assert not (entry / "objects").exists()


def flip_a_byte(path):
    """Change one byte in the middle of ``path``, keeping its size."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def unreadable(path, monkeypatch):
    """Make reading ``path`` for its digest fail as a file without read permission does."""
    from soagen.targets import cache

    digest = cache.file_digest

    def refuse(p):
        if os.path.samefile(p, path):
            raise PermissionError(13, "Permission denied", str(p))
        return digest(p)
    monkeypatch.setattr(cache, "file_digest", refuse)


ENTRY_DAMAGES = {
    "library changed, same size": lambda entry, monkeypatch: flip_a_byte(entry / "lib.so"),
    "library unreadable": lambda entry, monkeypatch: unreadable(entry / "lib.so", monkeypatch),
    "library missing": lambda entry, monkeypatch: (entry / "lib.so").unlink(),
    "meta.json changed, same size": lambda entry, monkeypatch: flip_a_byte(entry / "meta.json"),
    "meta.json edited, still usable": lambda entry, monkeypatch: rewrite_meta(entry, {"library": "lib.so", "n": 7}),
    "digest.json missing": lambda entry, monkeypatch: (entry / "digest.json").unlink(),
    "digest.json garbage": lambda entry, monkeypatch: (entry / "digest.json").write_text("[1, 2"),
    "digest.json without the library": lambda entry, monkeypatch: (entry / "digest.json").write_text(
        json.dumps({"files": {"meta.json": json.loads((entry / "digest.json").read_text())["files"]["meta.json"]}})),
}


@pytest.mark.parametrize("damage", list(ENTRY_DAMAGES))
def test_cached_rebuilds_what_it_cannot_verify(tmp_path, monkeypatch, capfd, damage):
    """:func:`~soagen.targets.cache.cached` on an entry made by a stand-in ``make`` (no compiler): each
    damage makes it call ``make`` again, with one line on stderr naming the entry."""
    from soagen.targets.cache import cached

    made = []

    def make(folder):
        made.append(folder)
        (folder / "lib.so").write_bytes(bytes(range(256)) * 64)
        return {"library": "lib.so", "simd": None}

    entry, meta = cached(tmp_path, "k", make)
    assert cached(tmp_path, "k", make) == (entry, meta) and len(made) == 1    # verified, used as it is
    assert capfd.readouterr().err == ""
    ENTRY_DAMAGES[damage](entry, monkeypatch)
    assert cached(tmp_path, "k", make) == (entry, meta) and len(made) == 2
    err = capfd.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(NOTICE.format("k")) and err[0].endswith("): rebuilding"), err


# ---------------------------------------------------------------- entries bound to their keys
def tiny(mass):
    """A one-joint robot named "tiny" whose link has ``mass``: two of them differ in that number only,
    so in their gravity (proportional to it) and in their cache keys, not in their names."""
    import soagen

    b = soagen.RobotBuilder("tiny", gravity=(0.0, 0.0, -9.81))
    b.add_link("base")
    b.add_link("link1", mass=mass, com=(0.3, 0.0, 0.1), inertia=np.eye(3) * 1e-3)
    b.add_joint("joint1", "revolute", "base", "link1", axis=(0, 1, 0))
    return b.build()


#: the two robots: the same name, masses 1 and 2
MASSES = {"a": 1.0, "b": 2.0}


def gravity_c(robot, cache, Q):
    """The C module's (``simd=True``: a batch runs the SIMD library, loaded from the same entry) gravity
    at each row of ``Q`` (N, 1), from a single call and from a batch; -> (entry, (2, N, 1) values)."""
    import soagen

    mod = soagen.build(robot, functions=["gravity"], optimize="O0", simd=True, cache_dir=cache)
    return mod.path, np.array([[mod.gravity(q) for q in Q], mod.gravity(Q)])


def gravity_casadi(robot, cache, Q):
    """The CasADi library's gravity at each row of ``Q``; -> (entry, (1, N, 1) values)."""
    import soagen

    lib = soagen.casadi.library(robot, ["gravity"], optimize="O0", cache_dir=cache)
    import casadi

    fn = casadi.external(lib.exported["gravity"], str(lib.path))
    return lib.path.parent, np.array([[np.array(fn(q)).ravel() for q in Q]])


def gravity_cuda_host(robot, cache, Q):
    """The "cuda-host" module's gravity (its kernels run on the CPU) of the rows of ``Q``; -> (entry,
    (1, N, 1) values)."""
    import soagen

    mod = soagen.build(robot, functions=["gravity"], optimize="O0", target="cuda-host", cache_dir=cache)
    return mod.path, np.array([mod.gravity(Q)])


#: every target whose build is cached (the SIMD library is part of the C module's entry; the MCU
#: target is not cached; target "cuda" is "cuda-host"'s cache path with nvcc)
TARGET_GRAVITY = {"c": gravity_c, "casadi": gravity_casadi, "cuda-host": gravity_cuda_host}
STATES = np.array([[-0.7], [0.2], [1.3]])


@pytest.fixture(scope="module")
def two_robots(tmp_path_factory):
    """``{target: (cache, {"a": entry name, "b": entry name})}``: each target's builds of the two tiny
    robots in a cache of their own."""
    out = {}
    for target, gravity in TARGET_GRAVITY.items():
        cache = tmp_path_factory.mktemp(f"two-{target}")
        out[target] = cache, {k: gravity(tiny(m), cache, STATES)[0].name for k, m in MASSES.items()}
        assert out[target][1]["a"] != out[target][1]["b"]
    return out


def swap(cache, entries):
    """Swap the two entries' folders."""
    a, b = (cache / entries[k] for k in "ab")
    a.rename(cache / "swapping")
    b.rename(a)
    (cache / "swapping").rename(b)
    return "ab"


def copy_a_to_b(cache, entries):
    """Replace b's entry by a copy of a's."""
    shutil.rmtree(cache / entries["b"])
    shutil.copytree(cache / entries["a"], cache / entries["b"], symlinks=True)
    return "b"


def link_b_to_a(cache, entries):
    """Replace b's entry by a symbolic link to a's folder."""
    shutil.rmtree(cache / entries["b"])
    (cache / entries["b"]).symlink_to(cache / entries["a"], target_is_directory=True)
    return "b"


#: what happens to the entries; each returns the robots whose entries are then another's
MIX_UPS = {"swapped": swap, "copied": copy_a_to_b, "symlinked": link_b_to_a}


@pytest.mark.parametrize("mix_up", list(MIX_UPS))
@pytest.mark.parametrize("target", list(TARGET_GRAVITY))
def test_an_entry_of_another_robot_is_rebuilt(two_robots, tmp_path, capsys, target, mix_up):
    """Each target: an entry of one robot found under the key of another of the same name (other
    masses) -- swapped, copied or linked there -- is rebuilt with one line on stderr naming it, never
    loaded: each robot's functions give its own gravity, and the entry linked to is left whole."""
    import soagen

    pristine, entries = two_robots[target]
    cache = tmp_path / "cache"
    shutil.copytree(pristine, cache, symlinks=True)
    moved = MIX_UPS[mix_up](cache, entries)
    capsys.readouterr()
    for k in ("b", "a"):                   # b's entry is rebuilt first, then a's is checked whole
        robot = tiny(MASSES[k])
        entry, got = TARGET_GRAVITY[target](robot, cache, STATES)
        want = np.array([soagen.reference.gravity(robot, q) for q in STATES])
        assert entry == cache / entries[k] and not entry.is_symlink()
        assert np.abs(want).min() > 0.1 and np.allclose(got, want, rtol=1e-12, atol=1e-12), (k, got, want)
        meta = verified(entry, entries[k])                            # bound to its key, as rebuilt
        assert meta["made_from"]["fingerprint"] == robot.fingerprint()
        err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("soagen: cache entry")]
        if k in moved:
            assert len(err) == 1, err
            assert err[0].startswith(f"soagen: cache entry {entries[k]} belongs to another build (")
            assert err[0].endswith("): rebuilding")
        else:
            assert err == []


def foreign_entry(tmp_path):
    """Two entries "a" and "b" made by a stand-in ``make`` (no compiler) with other library bytes;
    -> (make, {key: meta}, calls of make)."""
    from soagen.targets.cache import cached

    made = []

    def make(folder):
        made.append(folder.name)
        (folder / "lib.so").write_bytes(bytes([len(made)]) * 4096)
        return {"library": "lib.so", "simd": None}

    metas = {k: cached(tmp_path, k, make, dict(target="c", robot=f"robot {k}"))[1] for k in "ab"}
    return make, metas, made


KEY_MIX_UPS = {
    "swapped": lambda tmp_path: swap(tmp_path, {"a": "a", "b": "b"}),
    "copied": lambda tmp_path: copy_a_to_b(tmp_path, {"a": "a", "b": "b"}),
    "symlinked": lambda tmp_path: link_b_to_a(tmp_path, {"a": "a", "b": "b"}),
    "dangling link": lambda tmp_path: (shutil.rmtree(tmp_path / "b"), (tmp_path / "b").symlink_to(tmp_path / "gone")),
}


@pytest.mark.parametrize("mix_up", list(KEY_MIX_UPS))
def test_cached_binds_an_entry_to_its_key(tmp_path, capfd, mix_up):
    """:func:`~soagen.targets.cache.cached` on entries made by a stand-in ``make``: an entry under
    another key, or reached through a link, is made again with one line on stderr saying whose it
    is; the entry it came from is used as it is."""
    from soagen.targets.cache import cached

    make, metas, made = foreign_entry(tmp_path)
    assert metas["a"]["key"] == "a" and metas["b"]["made_from"] == {"target": "c", "robot": "robot b"}
    KEY_MIX_UPS[mix_up](tmp_path)
    capfd.readouterr()
    for k in "ba":
        entry, meta = cached(tmp_path, k, make)
        assert meta["key"] == k and entry.resolve() == (tmp_path / k).resolve() and not entry.is_symlink()
        err = capfd.readouterr().err.splitlines()
        if k == "b" or mix_up == "swapped":
            assert len(err) == 1 and err[0].startswith(f"soagen: cache entry {k} belongs to another build ("), err
            assert err[0].endswith("): rebuilding")
            if mix_up in ("swapped", "copied"):
                other = "b" if k == "a" else "a"
                assert f"it records key {other}, made from target 'c', robot 'robot {other}'" in err[0]
        else:
            assert err == []
    assert len(made) == 2 + (2 if mix_up == "swapped" else 1)
    assert verified(tmp_path / "a", "a")["key"] == "a"
