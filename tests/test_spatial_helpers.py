"""The numpy helpers the references share (:mod:`soagen.model.spatial`)."""
from __future__ import annotations

import numpy as np

from soagen.model.spatial import cross, skew


def test_cross_is_numpys_bit_for_bit():
    """cross(a, b) equals np.cross(a, b) exactly on random and unit vectors (the same products and
    differences in the same order), and skew(a) b up to round-off."""
    rng = np.random.default_rng(8)
    pairs = [(rng.standard_normal(3) * 10.0 ** rng.integers(-8, 8), rng.standard_normal(3)) for _ in range(500)]
    pairs += [(np.eye(3)[i], np.eye(3)[j]) for i in range(3) for j in range(3)]
    for a, b in pairs:
        got = cross(a, b)
        assert got.shape == (3,) and np.array_equal(got, np.cross(a, b))
        np.testing.assert_allclose(got, skew(a) @ b, rtol=1e-12, atol=1e-12 * np.abs(a).max() * np.abs(b).max())
    assert np.array_equal(cross(np.eye(3)[0], np.eye(3)[1]), np.eye(3)[2])
