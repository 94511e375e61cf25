"""Modules that travel: a module and each of its methods pickle by reference (the robot and the
build options), and unpickle in another process from that process's cache, or build there;
``multiprocessing`` (spawn) and a Dask cluster of processes mapping a method over 10⁶ states give
exactly the results of one process.  The workers share the session's ``$SOAGEN_CACHE``
(tests/conftest.py), so they load the module the test built, never rebuild it."""
from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import subprocess
import sys

import cloudpickle
import numpy as np
import pytest

import soagen
from tests.support.builds import built
from tests.support.robots import planar_2link

FUNCTIONS = ["gravity", "inverse_dynamics", "mass_matrix"]
#: the arm's second mass in the two robots: one name ("planar_2link"), other numbers
MASSES = (1.5, 2.5)
#: states of the fan-outs, in chunks of CHUNK
STATES, CHUNK = 10**6, 10**5


def module(m2=MASSES[0]):
    """The -O0 module of :data:`FUNCTIONS` of the planar arm with second mass ``m2`` (built once)."""
    return built(f"planar_2link_m2_{m2}", lambda: planar_2link(m2=m2), functions=FUNCTIONS)[1]


def states(count, n, seed=0):
    """(q, q̇, q̈) of ``count`` seeded states, each (count, n)."""
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-2.0, 2.0, (count, n)) for _ in range(3))


def chunks(arrays):
    """The rows of each of ``arrays`` cut into chunks of :data:`CHUNK` rows: one list per array."""
    return [[a[i:i + CHUNK] for i in range(0, len(a), CHUNK)] for a in arrays]


def untouched(mod):
    """(inode, mtime) of the module's library: the same after a fan-out if no worker rebuilt it."""
    stat = (mod.path / mod._meta["library"]).stat()
    return stat.st_ino, stat.st_mtime_ns


def loaded_stages():
    """In a worker: the stages of the build of each module it unpickled (["load"]: from the cache)."""
    from soagen import pipeline

    return [sorted(m.timings) for m in pipeline._loaded.values()]


def test_a_module_and_each_method_pickle_by_reference():
    """The pickle of a module is its robot and options (a few kB, no library); it and each method
    (the fast C entries, the Python ones behind them, ``call``), through pickle and through
    cloudpickle (joblib, Ray), give back the module's bitwise results."""
    mod = module()
    q, qd, qdd = (x[0] for x in states(1, mod.n))
    data = pickle.dumps(mod)
    library = (mod.path / mod._meta["library"]).stat().st_size
    assert len(data) < 8000 < library, (len(data), library)
    again = pickle.loads(data)
    assert type(again) is type(mod) and again.path == mod.path and again.robot.fingerprint() == mod.robot.fingerprint()
    want = {"gravity": mod.gravity(q), "inverse_dynamics": mod.inverse_dynamics(q, qd, qdd),
            "mass_matrix": mod.mass_matrix(q)}
    assert all(np.abs(w).max() > 0.1 for w in want.values())
    args = {"gravity": (q,), "inverse_dynamics": (q, qd, qdd), "mass_matrix": (q,)}
    for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)):
        for name in FUNCTIONS:
            method = getattr(mod, name)
            for each in (method, getattr(method, "__wrapped__", method)):   # the C entry, the Python method
                assert np.array_equal(loads(dumps(each))(*args[name]), want[name]), (dumps, name, each)
        assert np.array_equal(loads(dumps(mod.call))("gravity", q), want["gravity"])
        assert np.array_equal(loads(dumps(mod))._call("gravity", q), want["gravity"])
    stray = object.__new__(type(mod))              # a module soagen.build did not make has no recipe
    stray.__dict__.update(vars(mod), _recipe=None)
    with pytest.raises(TypeError, match="not made by soagen.build"):
        pickle.dumps(stray)


CHILD = """
import json, os, pickle, sys, numpy as np
from soagen.targets.cache import cache_root
payload = open(sys.argv[1], "rb").read()
q, qd, qdd = np.load(sys.argv[2])
out = []
for cache in sys.argv[3:]:
    os.environ["SOAGEN_CACHE"] = cache
    out.append([dict(path=str(m.path), cache=str(cache_root()), stages=sorted(m.timings),
                     tau=m.inverse_dynamics(q, qd, qdd).tolist()) for m in pickle.loads(payload)])
print(json.dumps(out))
"""


def unpickle_elsewhere(tmp_path, payload, q, caches):
    """The modules pickled in ``payload`` unpickled and called in a fresh process, on each of the
    caches ``caches`` in turn (``$SOAGEN_CACHE``); per cache, one dict per module: its entry, the
    stages of its build, its τ at the state ``q`` (3, n)."""
    (tmp_path / "mods.pkl").write_bytes(payload)
    np.save(tmp_path / "q.npy", q)
    env = dict(os.environ, SOAGEN_JOBS="1")
    run = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "mods.pkl"), str(tmp_path / "q.npy"),
                          *map(str, caches)], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_a_pickle_never_resolves_to_another_robots_entry(tmp_path, soagen_cache):
    """Two robots of one name and other masses, pickled: another process loads each from its cache
    (the entry the test built, nothing recorded) or, on an empty cache, builds each; each is its own
    robot's module, bitwise, never the other's."""
    mods = [module(m2) for m2 in MASSES]
    assert mods[0].name == mods[1].name and mods[0].path != mods[1].path
    q = np.stack(states(1, mods[0].n, seed=3))[:, 0]
    want = [m.inverse_dynamics(*q) for m in mods]
    assert np.abs(want[0] - want[1]).min() > 0.1
    ref = [soagen.reference.inverse_dynamics(m.robot, *q) for m in mods]
    assert all(np.allclose(w, r, rtol=1e-12, atol=1e-12) for w, r in zip(want, ref))
    loaded, rebuilt = unpickle_elsewhere(tmp_path, pickle.dumps(mods), q, [soagen_cache, tmp_path / "empty"])
    for mod, got, w in zip(mods, loaded, want):
        assert got["path"] == str(mod.path) and got["stages"] == ["load"], got     # loaded, not built
        assert np.array_equal(got["tau"], w)
    for mod, got, w in zip(mods, rebuilt, want):
        assert got["cache"] == str(tmp_path / "empty") and got["path"].startswith(got["cache"])
        assert "compile" in got["stages"] and np.array_equal(got["tau"], w)


def test_spawned_processes_map_a_method_over_a_million_states():
    """``multiprocessing`` with the spawn start method: two processes mapping ``mod.inverse_dynamics``
    over 10⁶ states in chunks give exactly the batch call of this process, and load the module
    from the shared cache (its library is not rebuilt)."""
    mod = module()
    Q, QD, QDD = states(STATES, mod.n, seed=1)
    want = mod.inverse_dynamics(Q, QD, QDD)
    before = untouched(mod)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        got = np.concatenate(pool.starmap(mod.inverse_dynamics, zip(*chunks((Q, QD, QDD)))))
    assert np.array_equal(got, want) and untouched(mod) == before
    ref = [soagen.reference.inverse_dynamics(mod.robot, Q[i], QD[i], QDD[i]) for i in (0, STATES - 1)]
    assert np.allclose(got[[0, -1]], ref, rtol=1e-12, atol=1e-12)


def test_a_dask_cluster_maps_a_method_over_a_million_states():
    """A Dask local cluster of two worker processes mapping ``mod.inverse_dynamics`` over 10⁶ states
    in chunks gives exactly the batch call of this process; the workers load the module from the
    shared cache."""
    import distributed          # the test extra has dask[distributed]
    mod = module()
    Q, QD, QDD = states(STATES, mod.n, seed=2)
    want = mod.inverse_dynamics(Q, QD, QDD)
    before = untouched(mod)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        inputs = [client.scatter(c) for c in chunks((Q, QD, QDD))]        # the data once, not in the graph
        parts = client.gather(client.map(mod.inverse_dynamics, *inputs))
        stages = client.run(loaded_stages)
    assert len(stages) == 2 and all(s == [["load"]] for s in stages.values()), stages   # loaded, not built
    got = np.concatenate(parts)
    assert np.array_equal(got, want) and untouched(mod) == before
    ref = soagen.reference.inverse_dynamics(mod.robot, Q[-1], QD[-1], QDD[-1])
    assert np.allclose(got[-1], ref, rtol=1e-12, atol=1e-12)


def test_a_cuda_module_and_its_methods_pickle_by_reference():
    """The CUDA target's module (its "cuda-host" build, the kernels on the CPU) and its methods pickle
    by reference too, and give back its bitwise results."""
    mod = built("planar_2link_m2_1.5", lambda: planar_2link(m2=MASSES[0]), functions=["gravity"],
                target="cuda-host")[1]
    Q = states(5, mod.robot.n, seed=4)[0]
    want = mod.gravity(Q)
    assert np.abs(want).max() > 0.1
    for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)):
        again = loads(dumps(mod))
        assert type(again) is type(mod) and again.path == mod.path
        assert np.array_equal(loads(dumps(mod.gravity))(Q), want)
        assert np.array_equal(again.gravity(Q), want)
