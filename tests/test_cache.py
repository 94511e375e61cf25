"""Two processes building the same robot into one cache at once both get a
working module, and the cache is sound afterwards; a damaged entry is rebuilt,
never loaded."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

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
