"""The generated families of means and features (dpaudit.data.instances)."""
import math

import numpy as np

from dpaudit.data.instances import features_family, means_family


def test_means_cover_every_number_of_arms_with_grids_ties_knife_edges_and_extremes():
    fam = means_family((2, 6))
    assert sorted({len(m["means"]) for m in fam}) == [2, 3, 4, 5, 6]
    for m in fam:
        mu = np.array(m["means"])
        assert ((0 <= mu) & (mu <= 1)).all()
    by_k = [np.array(m["means"]) for m in fam if len(m["means"]) == 4]
    assert any(np.all(m == 0.5) for m in by_k)                              # all tied
    assert any(m[0] == m[1] > m[2] for m in by_k)                           # best two tied
    assert any(math.isclose(m[0] - m[1], 1e-3) and np.all(m[1:] == 0.5) for m in by_k)
    assert any(m[0] == 1 and np.all(m[1:] == 0) for m in by_k)              # extremes
    assert any(np.all(np.diff(m) < 0) for m in by_k)                        # a grid
    assert means_family((3, 3)) == tuple(m for m in fam if len(m["means"]) == 3)


def test_features_span_one_to_three_dimensions_in_axis_rotated_sign_and_gaussian_frames():
    fam = features_family((2, 4), seed=5)
    shapes = {m["features"].shape for m in fam}
    assert {(K, d) for K in (2, 3, 4) for d in (1, 2, 3) if K >= d} == shapes
    for m in fam:
        A, mu = m["features"], np.array(m["means"])
        assert len(mu) == A.shape[0] and ((0 <= mu) & (mu <= 1)).all()
    two = [m["features"] for m in fam if m["features"].shape == (2, 2)]
    axis = np.eye(2)
    assert any(np.array_equal(A, axis) for A in two)
    # rotated frames: orthonormal rows, not axis-aligned (30 degrees among them)
    rotated = [A for A in two if np.allclose(A @ A.T, np.eye(2)) and not np.allclose(abs(A), axis)
               and not np.allclose(abs(A), 1 / math.sqrt(2))]
    assert any(np.isclose(A[0, 0], math.cos(math.pi / 6)) for A in rotated)
    three = [m["features"] for m in fam if m["features"].shape == (4, 3)]
    assert any(np.allclose(abs(A), 1 / math.sqrt(3)) for A in three)      # sign vectors
    again = features_family((2, 4), seed=5)
    assert all(np.array_equal(a["features"], b["features"]) for a, b in zip(fam, again))
    other = features_family((2, 4), seed=6)
    assert not all(np.array_equal(a["features"], b["features"]) for a, b in zip(fam, other))
