"""Generated instances: the families a claim-space search draws means and features from.

A dimension of scale ``generated`` (:mod:`dpaudit.algorithms.space`) proposes one member of a
family; each member is a dict of parameter values (``means``, or ``features`` with the
``means`` that go with them) ready to override an algorithm's parameters.

* :func:`means_family`: for every K in the window (2–6 arms) an evenly spaced grid, all arms
  tied, the best two tied, a knife edge (the best arm ahead by 10⁻³) and the extremes (one arm
  at 1, the others at 0).
* :func:`features_family`: for every dimension d in 1–3 and K in the window (K ≥ d), K × d
  feature matrices: axis-aligned rows, the same rows in frames rotated by π/12, π/6 and π/4,
  sign vectors with entries ±1/√d, and Gaussian rows; the means follow them
  (μ_i = ½ + 0.4·a_iᵀθ*/max_j |a_jᵀθ*| with θ* ∝ (d, d − 1, …, 1)).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.spatial.transform import Rotation

KNIFE = 1e-3                                # the knife edge's lead
ANGLES = (math.pi / 12, math.pi / 6, math.pi / 4)
DIMS = (1, 2, 3)


def _arms(window: tuple[int, int] | None) -> range:
    lo, hi = (2, 6) if window is None else (int(window[0]), int(window[1]))
    return range(max(lo, 2), hi + 1)


def means_family(window: tuple[int, int] | None = None) -> tuple[dict, ...]:
    """The means proposals of the claim-space screen (module doc).

    Args:
        window: (low, high) arms K (None: 2–6).

    Returns:
        Dicts ``{"means": tuple of K floats in [0, 1]}``, best arm first.
    """
    out = []
    for K in _arms(window):
        grid = np.linspace(0.9, 0.1, K)
        top_two = np.concatenate([[0.9, 0.9], np.linspace(0.5, 0.1, K - 2)]) if K > 2 \
            else np.array([0.9, 0.9])
        knife = np.concatenate([[0.5 + KNIFE], np.full(K - 1, 0.5)])
        extremes = np.concatenate([[1.0], np.zeros(K - 1)])
        for m in (grid, np.full(K, 0.5), top_two, knife, extremes):
            out.append({"means": tuple(float(x) for x in m)})
    return tuple(out)


def _rotation(d: int, angle: float) -> np.ndarray:
    """A d × d rotation by ``angle``.

    A d × d rotation by ``angle``: the identity for d = 1; in the plane for d = 2; about
    the axis (1, 1, 1)/√3 for d = 3.
    """
    if d == 1:
        return np.eye(1)
    if d == 2:
        c, s = math.cos(angle), math.sin(angle)
        return np.array([[c, -s], [s, c]])
    return Rotation.from_rotvec(angle * np.ones(3) / math.sqrt(3)).as_matrix()


def _axis_rows(K: int, d: int) -> np.ndarray:
    """K rows along the axes: e_1, …, e_d, then the axes again at half, a quarter, … length."""
    return np.array([np.eye(d)[i % d] * 0.5 ** (i // d) for i in range(K)])


def _means_of(A: np.ndarray) -> tuple:
    d = A.shape[1]
    theta = np.arange(d, 0, -1, dtype=np.float64)
    x = A @ (theta / np.linalg.norm(theta))
    scale = float(np.abs(x).max()) or 1.0
    return tuple(float(v) for v in np.clip(0.5 + 0.4 * x / scale, 0.0, 1.0))


def features_family(window: tuple[int, int] | None = None,
                    seed: int = 0) -> tuple[dict, ...]:
    """The features proposals of the claim-space screen (module doc).

    Args:
        window: (low, high) arms K (None: 2–6); d ranges over 1–3.
        seed: the generator of the Gaussian rows.

    Returns:
        Dicts ``{"features": K × d float64 array, "means": tuple of K floats}``.
    """
    rng = np.random.default_rng(seed)
    out = []
    for d, K in itertools.product(DIMS, _arms(window)):
        if K < d:
            continue
        axes = _axis_rows(K, d)
        frames = [axes] + [axes @ _rotation(d, t).T for t in ANGLES if d > 1]
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=d)))
        if len(signs) >= K:
            frames.append(signs[:K] / math.sqrt(d))
        frames.append(rng.standard_normal((K, d)))
        for A in frames:
            out.append({"features": A, "means": _means_of(A)})
    return tuple(out)


FAMILIES = {"means": means_family, "features": features_family}
