"""Learned events: a classifier of d vs d′ outputs, its score cut into ordered cells.

Outputs with many coordinates defeat cells of the outputs themselves (a grid of b^m cells has
b = 2 at m = 10). After DP-Sniper (Bichsel, Steffen, Bogunovic and Vechev 2021, IEEE S&P), a
classifier trained to tell outputs on d from outputs on d′ estimates how much more likely an
output is under one input; its score s(y) is one number per output, and the events
{s(y) ≥ t} (or ≤ t) are its thresholds. :func:`fit` trains the classifier on the ranking
half of a pilot (at most :data:`FIT_OUTPUTS` outputs per side), then cuts the score into
quantile bins (:func:`dpaudit.statistics.features.fit`): the cells are a function of the output
alone, fixed before any later sample is drawn, so every event is a post-processing of the
mechanism's output and its measurement stays valid.

The classifier is a logistic regression (scikit-learn) on standardised *features* of the
output, by default (:class:`Codes`) per coordinate: an indicator of each *code*, a value taken
by at least :data:`CODE_SHARE` of the fitting outputs (a sparse vector's "below" and "aborted"
markers, a bit), and a piecewise-linear basis of its other values. ``features=`` replaces them
with the caller's function of the outputs. When every feature is an indicator (bits, codes),
the regression is L1-penalised, the penalty at the universal threshold (Donoho and Johnstone 1994, "Ideal spatial adaptation by wavelet
shrinkage", Biometrika): a feature whose outputs do not differ between d and d′ gets weight
exactly 0 unless the noise of its log-likelihood gradient exceeds √(2 ln 2k) standard
deviations (k features). Unpenalised, every such feature adds its weight's noise to the
score and blurs it: on RAPPOR's 20 bits the 12 bits that d and d′ share smeared the nine
levels "j of the 8 differing bits favour d", and the threshold events mixed the top level
(the largest loss) with the next; with the penalty the score takes one value per level, up to
the noise of the 8 weights. That noise still splits a level into near values ("7 of 8" into
one value per bit left out), and a threshold between them mixes the level: where the score
takes few values (at most :data:`~dpaudit.statistics.features.MAX_DISCRETE`), values closer
than :data:`RESOLUTION` standard deviations of that noise are one cell (:func:`score_cells`).

Where outputs hold values, the score is continuous anyway, and the loss may sit where few
outputs fall: the coded sparse vector of Lyu et al. 2017 (Alg. 3) loses most when its first
⊤ comes late with a low value (0.2 % of the outputs on "half half" inputs), and the universal
penalty zeroed the value features of the late coordinates (seeds 1 and 2 of a 2·10⁶-run
audit of that pair: ε_lb/ε 0.45 and 0.69; unpenalised, with the value basis and 250 000
fitting outputs per side: 1.45 and 1.22). There the penalty is negligible (:data:`DENSE_C`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np

from dpaudit.errors import InputError
from dpaudit.statistics import features as cells_of

FIT_OUTPUTS = 250_000   # fitting outputs per side at most (the first ones of the ranking half)
CODE_SHARE = 0.01       # a value taken by at least this share of a coordinate's outputs is a code
MAX_CODES = 8           # codes per coordinate at most (the most frequent)
RESOLUTION = 2.0        # score values closer than this many sd of their weights' noise: one cell
DENSE_C = 1.0e4         # scikit-learn's C of the (negligible) L2 penalty of a score on values
VALUE_KNOTS = 7         # knots of a value's piecewise-linear basis: its 0, 1/6, ..., 1 quantiles


class Codes:
    """The default features: per coordinate, indicators of its codes and a basis of its values.

    A coordinate's other values enter through a piecewise-linear basis (scikit-learn's
    ``SplineTransformer``, degree 1, knots at the quantiles of those values, extrapolated
    linearly), 0 on the outputs where the coordinate holds a code: the score can then rise
    and fall with a value, as a likelihood ratio of Laplace noise does (flat beyond the two
    answers, linear between).

    Attributes:
        codes: per coordinate, the codes (float64 array, most frequent first).
        valued: per coordinate, whether it takes values other than its codes.
        bases: per valued coordinate, its fitted basis (None when its values are too few for
            knots: the value itself).
    """

    def __init__(self, y: np.ndarray) -> None:
        """Find each coordinate's codes and fit its values' basis on the outputs ``y`` (n, m)."""
        from sklearn.preprocessing import SplineTransformer

        self.codes, self.valued, self.bases = [], [], []
        for col in y.T:
            vals, cnt = np.unique(col, return_counts=True)
            top = np.argsort(-cnt, kind="stable")[:MAX_CODES]
            top = top[cnt[top] >= CODE_SHARE * col.size]
            self.codes.append(vals[top].astype(np.float64))
            self.valued.append(bool(cnt[top].sum() < col.size))
            free = col[~np.isin(col, self.codes[-1])].astype(np.float64)
            knots = np.unique(np.quantile(free, np.linspace(0, 1, VALUE_KNOTS))) \
                if free.size else free
            self.bases.append(SplineTransformer(
                degree=1, knots=knots[:, None], extrapolation="linear", include_bias=False)
                .fit(free[:, None]) if knots.size >= 3 else None)

    def blocks(self, y: np.ndarray) -> Iterator[np.ndarray]:
        """The features of outputs ``y`` (n, m), one coordinate at a time.

        Args:
            y: outputs, shape (n, m).

        Yields:
            float64 arrays (n, k_j): coordinate j's code indicators, then its value basis.
        """
        for j, (codes, valued) in enumerate(zip(self.codes, self.valued)):
            x = y[:, j].astype(np.float64)
            hit = x[:, None] == codes[None, :]
            cols = [hit.astype(np.float64)]
            if valued:
                basis = self.bases[j]
                v = x[:, None] if basis is None else basis.transform(x[:, None])
                cols.append(np.where(hit.any(axis=1, keepdims=True), 0.0, v))
            yield np.hstack(cols)

    def __call__(self, y: np.ndarray) -> np.ndarray:
        """The features of outputs ``y`` (n, m): a float64 array (n, k)."""
        cols = list(self.blocks(y))
        return np.hstack(cols) if cols else np.zeros((y.shape[0], 0))

    def __len__(self) -> int:
        """The number of features."""
        return sum(c.size + (0 if not v else 1 if b is None else b.n_features_out_)
                   for c, v, b in zip(self.codes, self.valued, self.bases))


def _matrix(transform: Callable, y: np.ndarray, custom: bool) -> np.ndarray:
    """The features of ``y`` as a finite float64 matrix (n, k); a bad custom map is an error."""
    x = transform(y)
    try:
        x = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("features(y) returned something that is not an array of numbers") \
            from None
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] != y.shape[0] or not np.isfinite(x).all():
        what = "features(y)" if custom else "the output features"
        raise InputError(f"{what} returned shape {x.shape} for {y.shape[0]} outputs: expected "
                         f"finite numbers of shape ({y.shape[0]}, k)")
    return x


class Learned:
    """A fitted classifier's score of outputs, cut into ordered cells (module doc).

    Attributes:
        bins: the :class:`~dpaudit.statistics.features.Features` cells of the score.
        n_features: the classifier's inputs per output.
        custom: whether the features are the caller's ``features=``.
    """

    def __init__(self, transform: Callable, model: object, bins: cells_of.Features,
                 custom: bool) -> None:
        """A score ``model`` on ``transform``'s features, cut by ``bins``."""
        self.transform, self.model, self.bins, self.custom = transform, model, bins, custom
        self.n_features = int(model.n_features_in_)

    def score(self, y: np.ndarray) -> np.ndarray:
        """The classifier's score of each output (its log-odds of d′ over d).

        Args:
            y: outputs, shape (n,) or (n, m).

        Returns:
            float64 array of shape (n,).
        """
        y2 = y.reshape(y.shape[0], -1)
        if self.custom:
            return self.model.decision_function(_matrix(self.transform, y2, True))
        # the default features a block per coordinate, never one (n, k) matrix: the
        # standardised linear score is Σ_j x_j · (w_j / scale_j) + b − Σ mean · w / scale
        scaler, lr = self.model[0], self.model[-1]
        w = lr.coef_[0] / scaler.scale_
        out = np.full(y2.shape[0], lr.intercept_[0] - scaler.mean_ @ w)
        k = 0
        for x in self.transform.blocks(y2):
            out += x @ w[k:k + x.shape[1]]
            k += x.shape[1]
        return out

    def cells(self, y: np.ndarray) -> np.ndarray:
        """The uint64 cell of each output: its score's bin, in the score's order.

        Args:
            y: outputs, shape (n,) or (n, m).

        Returns:
            uint64 array of shape (n,).
        """
        return self.bins.cells(self.score(y))

    def orderings(self, keys: np.ndarray) -> list:
        """The score's orders of the cells, whose prefixes are threshold events.

        Args:
            keys: the cells (sorted uint64, in the score's order).

        Returns:
            (name, permutation of ``keys``) pairs.
        """
        asc = np.arange(keys.size)
        return [("threshold: score <= t", asc), ("threshold: score >= t", asc[::-1].copy())]

    def describe(self, cells: np.ndarray) -> str:
        """A set of cells in words.

        Args:
            cells: sorted uint64 cells.

        Returns:
            The classifier and the score values or intervals.
        """
        what = "your features" if self.custom else "code indicators and values"
        text = self.bins.describe(cells).replace("y in", "s(y) in", 1)
        l1 = self.model[-1].l1_ratio == 1.0
        return (f"{text}, s = {'an L1-penalised' if l1 else 'a'} logistic regression's "
                f"log-odds of d' over d on {self.n_features} {what} of the output (fitted "
                f"on the pilot)")


def universal_c(n: int, k: int) -> float:
    """scikit-learn's ``C`` of the L1 penalty at the universal threshold (module doc).

    The objective is ‖w‖₁ + C·Σ log-loss, so a weight stays 0 while its gradient Σ x_ij(p_i −
    y_i), of standard deviation √n/2 for a standardised feature unrelated to the label (p = ½),
    is below 1/C = √(2 ln 2k)·√n/2.

    Args:
        n: fitting outputs (both sides).
        k: features.

    Returns:
        C > 0.
    """
    return 2.0 / (math.sqrt(2.0 * math.log(2 * max(k, 1))) * math.sqrt(max(n, 1)))


def fit(y_d: np.ndarray, y_dp: np.ndarray, features: Callable | None = None) -> Learned:
    """Train the classifier on fitting outputs of both sides and cut its score into cells.

    Args:
        y_d: outputs on d, shape (n,) or (n, m).
        y_dp: outputs on d′, the same shape.
        features: the caller's map of outputs (n, m) to features (n, k), or None for
            :class:`Codes`.

    Returns:
        The :class:`Learned` cells.

    Raises:
        InputError: ``features`` returned no finite (n, k) array.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    a = y_d.reshape(y_d.shape[0], -1)[:FIT_OUTPUTS]
    b = y_dp.reshape(y_dp.shape[0], -1)[:FIT_OUTPUTS]
    y = np.concatenate([a, b])
    transform = features if features is not None else Codes(y)
    x = _matrix(transform, y, features is not None)
    label = np.repeat([0, 1], [a.shape[0], b.shape[0]])
    sparse = bool(np.isin(x, (0.0, 1.0)).all())     # indicators only: the L1 penalty
    model = make_pipeline(StandardScaler(), LogisticRegression(
        l1_ratio=1.0 if sparse else 0.0, C=universal_c(*x.shape) if sparse else DENSE_C,
        solver="liblinear" if sparse else "newton-cholesky", intercept_scaling=100.0,
        max_iter=500, random_state=0))
    # liblinear (L1) penalises the intercept as a feature of value 100; the nearly unpenalised
    # dense fit by Newton steps: liblinear's solution to 10^-3 in 1/7 of its time (the coded
    # sparse vector's 79 features on 5·10^5 outputs: 1.9 s instead of 14 s)
    model.fit(x, label)
    s = model.decision_function(x)
    return Learned(transform, model, score_cells(s, a.shape[0], model, x), features is not None)


def score_cells(s: np.ndarray, n_d: int, model: object, x: np.ndarray) -> cells_of.Features:
    """The cells of the score: its levels when it takes few values, else quantile bins.

    A weight of a standardised feature is estimated with noise of about 2/√n (n fitting
    outputs; the Fisher information of a logistic regression is n/4 at probabilities ½), so
    two outputs on one level that differ in one feature each way differ in score by noise of
    about √2·2/√n times the feature's step (its range over its standard deviation; the
    largest among the features with a weight). Where the score takes at most
    :data:`~dpaudit.statistics.features.MAX_DISCRETE` values, the cells are cut at the
    middle of every gap between consecutive values wider than :data:`RESOLUTION` times that
    noise; otherwise they are the quantile bins of :func:`dpaudit.statistics.features.fit`.

    Args:
        s: the scores of the fitting outputs, those on d first, shape (n,).
        n_d: how many of them are on d.
        model: the fitted pipeline (a scaler, then the logistic regression).
        x: the fitting outputs' features, shape (n, k).

    Returns:
        The :class:`~dpaudit.statistics.features.Features` of the score (1-D, ordered).
    """
    values = np.unique(s)
    if values.size > cells_of.MAX_DISCRETE:
        return cells_of.fit(s[:n_d], s[n_d:])
    on = model[-1].coef_[0] != 0
    step = ((x.max(axis=0) - x.min(axis=0)) / model[0].scale_)[on].max() if on.any() else 0.0
    noise = math.sqrt(2.0) * 2.0 / math.sqrt(s.size) * step
    gaps = np.diff(values) > RESOLUTION * noise
    edges = ((values[1:] + values[:-1]) / 2)[gaps]
    return cells_of.Features("continuous", 1, "f", edges=[edges], bins=edges.size + 1)
