"""Privacy assertions for your own tests: ``assert_dp`` and the pytest plugin ``dpaudit``.

    from dpaudit.testing import assert_dp

    def test_my_mechanism_is_private():
        assert_dp(my_mechanism, eps=1.0, model="local")          # a callable
        assert_dp("adap-tt", eps=0.5, params={"risk": "0.05"})    # a registered algorithm

With dpaudit installed, pytest also offers it as a fixture (entry point ``pytest11``)::

    def test_private(assert_dp):
        assert_dp(my_mechanism, eps=1.0)

``mechanism`` is a registered algorithm name (``dpaudit list``) or a callable
``fn(rng, data, eps) -> output`` as for ``dpaudit run --algo FILE.py:FUNCTION``
(:mod:`dpaudit.auditing.plugin`: ``data`` is a (T, K) table for ``user``/``full``, (K, T) for
``stream``, one reward for ``local``). The audit is the one of ``dpaudit run`` with a fixed
``seed`` (deterministic: a test that passes keeps passing) and ``alpha`` = 1e-6 by default: a
correct mechanism fails the assertion with probability at most ``alpha`` over seeds.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dpaudit.core.request import AuditRequest, Budget, Claim, DEFAULT_BETA, DEFAULT_MARGIN
from dpaudit.core.terms import PrivacyModel, Verdict

if TYPE_CHECKING:
    from dpaudit.verdicts.result import AuditResult

DEFAULT_ALPHA = 1e-6


def assert_dp(mechanism: str | Callable, eps: float, *, delta: float | None = None, model: str = PrivacyModel.USER,
              params: dict | None = None, means: Sequence[float] = (0.9, 0.5),
              horizon: int = 8,
              runs: int | None = None, seed: int = 0, alpha: float = DEFAULT_ALPHA,
              allow_inconclusive: bool = False, beta: float = DEFAULT_BETA,
              margin: float = DEFAULT_MARGIN) -> AuditResult:
    """Assert that a mechanism is (ε, δ)-DP, by an audit.

    A keyword wrapper of :func:`assert_request`. The audit is the one of ``dpaudit run``
    with a fixed seed, so a test that passes keeps passing.

    Args:
        mechanism: a registered algorithm name (``dpaudit list``) or a callable
            ``fn(rng, data, eps)`` (:mod:`dpaudit.auditing.plugin`).
        eps: the claimed ε, in [0.001, 100].
        delta: the claim's δ in [0, 1) (None: 0, or a registered algorithm's own δ).
        model: the privacy model of a callable (``user``, ``stream``, ``full``, ``local``).
        params: parameters of a registered algorithm (``--param`` values).
        means: the arms' means of a callable's candidate tables.
        horizon: the rows T of a callable's candidate tables.
        runs: measurement runs per side (default: those of ``dpaudit run``).
        seed: the root seed.
        alpha: the probability that a correct mechanism fails the assertion (default 1e-6).
        allow_inconclusive: return an inconclusive result instead of failing.
        beta: a pass needs every measured event's upper bound ``eps_ub`` (confidence 1 − β)
            to be ≤ (1 + margin)·ε (:mod:`dpaudit.verdicts.verdict`).
        margin: see ``beta``.

    Returns:
        The :class:`~dpaudit.verdicts.result.AuditResult` of a pass (or of an inconclusive
        audit, with ``allow_inconclusive``).

    Raises:
        AssertionError: a violation, or an inconclusive audit unless ``allow_inconclusive``;
            the message is the audit's summary (verdict, ε_lb, pair, event, counts).
        InputError: bad input.
    """
    registered = isinstance(mechanism, str) and ":" not in mechanism
    claim = Claim(eps, delta if registered else delta or 0.0)
    budget = Budget(runs, alpha, beta, margin)
    if registered:
        request = AuditRequest(mechanism, claim, params or {}, budget=budget, seed=seed)
    else:
        request = AuditRequest(mechanism, claim, {"means": means, "horizon": horizon},
                               budget=budget, seed=seed, model=model)
    return assert_request(request, allow_inconclusive)


def assert_request(request: AuditRequest, allow_inconclusive: bool = False) -> AuditResult:
    """:func:`assert_dp` of an audit request.

    Args:
        request: the audit to run.
        allow_inconclusive: return an inconclusive result instead of failing.

    Returns:
        The audit's result.

    Raises:
        AssertionError: a violation (or an inconclusive result unless ``allow_inconclusive``),
            with the audit's summary.
    """
    # imported on the call: pytest loads this plugin in every session of a project that has
    # dpaudit installed, and the audit takes 1.3 s to import
    from dpaudit.reporting import report                  # (as above)
    if isinstance(request.algorithm, str) and ":" not in request.algorithm:
        from dpaudit.auditing.audit import audit_registered
        res = audit_registered(request)
    else:
        from dpaudit.auditing.plugin import audit_code
        res = audit_code(request)
    if res.verdict == Verdict.VIOLATION or (res.verdict == Verdict.INCONCLUSIVE
                                            and not allow_inconclusive):
        c, text = request.claim, report.summary(res.to_dict())
        raise AssertionError(f"not ({c.eps:g}, {c.delta or 0:g})-DP at confidence "
                             f"{1 - request.budget.alpha:.6g}:\n{text}")
    return res


try:                                                     # the pytest plugin (pytest11)
    import pytest

    @pytest.fixture(name="assert_dp")
    def assert_dp_fixture() -> Callable[..., AuditResult]:
        """The :func:`assert_dp` function, as a fixture."""
        return assert_dp
except ImportError:                                      # pragma: no cover - pytest absent
    pass
