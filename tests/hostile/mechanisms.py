"""Mechanisms ``mechanism(rng, data, n)`` for the Python API cases of cases.toml: the Laplace
mechanism on ``data[0]`` (scale 1, so ε = 1) and broken variants of it."""
import numpy as np


def lap(rng, data, n):
    return np.asarray(data, dtype=float).ravel()[0] + rng.laplace(0.0, 1.0, n)


def lap_wrong_shape(rng, data, n):            # one output too many
    return lap(rng, data, n + 1)


def lap_3d(rng, data, n):
    return lap(rng, data, 4 * n).reshape(n, 2, 2)


def lap_raises(rng, data, n):
    raise RuntimeError("mechanism boom")


def lap_nan(rng, data, n):
    out = lap(rng, data, n)
    out[0] = np.nan
    return out


def lap_none(rng, data, n):
    return None


def lap_strings(rng, data, n):
    return np.array(["a"] * n)


def lap_mutates(rng, data, n):                # zeroes its input: then d and d' look alike
    data[...] = 0.0
    return lap(rng, data, n)
