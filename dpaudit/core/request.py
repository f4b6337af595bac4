"""What an audit is asked: the claim, the budget, and the request that names what to audit.

Value objects (frozen dataclasses), checked when built by :mod:`dpaudit.core.validate` (one
line naming the bad value and the accepted range). The command line, the gate's suite
entries, ``assert_dp`` and the Python API all build an :class:`AuditRequest`; the audit
pipeline takes one; :meth:`AuditRequest.command` is the one ``dpaudit run`` line that
reproduces it.
"""
from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from dpaudit.core import validate
from dpaudit.errors import InputError

DEFAULT_ALPHA = 0.05     # the level of a violation: false with probability <= alpha
DEFAULT_BETA = 0.05      # eps_ub holds with confidence 1 - beta
DEFAULT_MARGIN = 0.25    # a pass needs eps_ub <= (1 + margin) * eps (dpaudit.verdicts.verdict)
FINALISTS = 2            # candidate events measured on fresh runs
WHITEBOX_RUNS = 10_000   # runs per direction of the white-box loss and replay
# seconds: `dpaudit run`'s time limit; 0, none: a published command must give the published
# result on any machine, and a measured rate would make the cap depend on the machine's load
DEFAULT_TIME_LIMIT = 0.0
DEFAULT_NEIGHBOURS = "search"
INSTANCES = ("fixed", "search")   # audit the given instance, or search the claim's space
DEFAULT_INSTANCES = "search"
SMALL_DELTA_SHARE = 0.5   # a δ > 0 claim's default small-δ runs per direction / budget runs


@dataclass(frozen=True)
class Claim:
    """The privacy claim audited: (ε, δ)-DP.

    Attributes:
        eps: ε, in [:data:`~dpaudit.core.validate.EPS_MIN`, :data:`~dpaudit.core.validate.EPS_MAX`].
        delta: the DP δ in [0, 1); None: 0, or the algorithm's own default for algorithms
            calibrated by δ (:meth:`dpaudit.algorithms.spec.AlgorithmSpec.resolve_claim`).

    Raises:
        InputError: a value out of range.
    """

    eps: float
    delta: float | None = None

    def __post_init__(self) -> None:
        """Check the fields (InputError naming the bad value and the accepted range)."""
        validate.eps(self.eps, "eps")
        if self.delta is not None:
            validate.delta(self.delta, "delta")


@dataclass(frozen=True)
class Budget:
    """How much an audit may spend, and the error levels of its verdict.

    Attributes:
        runs: measurement runs (samples) per side per finalist at the last look; None: the
            default of what is audited.
        alpha: a violation is false with probability at most α, in (0, 1).
        beta: ``eps_ub`` holds with confidence 1 − β, in (0, 1).
        margin: a pass needs ``eps_ub`` ≤ (1 + margin)·ε; a finite number > 0.
        finalists: candidate events measured on fresh runs, ≥ 1.
        whitebox_runs: runs per direction of the white-box loss and replay (0 skips them).
        max_samples: the samples cap of an audit of a registered algorithm (runs × samples
            per run of the instance screen, the pilot rounds and the measurement looks, at
            most: a round or look that would exceed it is not run; counted, so deterministic),
            ≥ 1; None: no cap.
        time_limit: seconds of simulation an audit of a registered algorithm may spend,
            counted as a samples cap at the rate measured on its compiled kernels before it
            starts (:meth:`dpaudit.core.allowance.Allowance.counted_time`; a result it cuts
            short says so and its command names that cap; like ``workers``, never in
            :meth:`AuditRequest.command`), > 0; None: no limit.
        early_stop: stop the measurement at the first look that settles the verdict (a
            lower bound above ε, or every upper bound ≤ ε: :mod:`dpaudit.statistics.measure`);
            False: measure every look, for the tightest ``eps_lb`` the runs give (a
            tightness figure) at the cost of time. Either way every bound is valid.

    Raises:
        InputError: a value out of range.
    """

    runs: int | None = None
    alpha: float = DEFAULT_ALPHA
    beta: float = DEFAULT_BETA
    margin: float = DEFAULT_MARGIN
    finalists: int = FINALISTS
    whitebox_runs: int = WHITEBOX_RUNS
    max_samples: int | None = None
    time_limit: float | None = field(default=None, compare=False)   # not in command()
    early_stop: bool = True
    runs_name: str = field(default="runs", compare=False, repr=False)   # for the messages

    def __post_init__(self) -> None:
        """Check the fields (InputError naming the bad value and the accepted range)."""
        validate.probability(self.alpha, "alpha")
        validate.probability(self.beta, "beta")
        validate.margin(self.margin, "margin")
        if self.runs is not None:
            validate.runs(self.runs, self.runs_name)
        validate.positive(self.finalists, "finalists")
        validate.integer(0)(self.whitebox_runs, "whitebox_runs")
        if self.max_samples is not None:
            validate.integer(1)(self.max_samples, "max_samples")
        if self.time_limit is not None:
            validate.positive_real(self.time_limit, "time_limit")


@dataclass(frozen=True)
class AuditRequest:
    """One audit: what to audit, against which claim, with which budget and seed.

    Attributes:
        algorithm: a registered name (``dpaudit list``), an
            :class:`~dpaudit.algorithms.spec.AlgorithmSpec`, a callable
            ``fn(rng, data, eps)``, or its ``FILE.py:FUNCTION`` / ``MODULE:FUNCTION`` name.
        claim: the :class:`Claim`.
        params: parameters of the algorithm (strings or values); for callables ``means``
            and ``horizon``.
        neighbours: the neighbour search strategy (``dpaudit.auditing.search.STRATEGIES``).
        pair: an explicit neighbouring pair instead of the search: a
            :class:`~dpaudit.data.tables.NeighbourPair`, or the path of its JSON file.
        budget: the :class:`Budget`.
        seed: the root seed in [0, 2^63); None: drawn, and reported in the result.
        workers: processes simulating runs (≥ 1; None: one per core); results do not
            depend on it.
        progress: show a progress bar.
        model: the privacy model of a callable (``user``, ``full``, ``stream``, ``local``).
        strict: a callable that is not reproducible from its seed raises instead.
        instances: ``search`` (default: screen the claim's space,
            :mod:`dpaudit.auditing.instances`, and search the given instance and the best
            ranked ones for neighbours; the parameters given stay pinned) or ``fixed`` (only
            the instance ``params`` give). A callable (no declared space) and an explicit pair
            (its tables fix the instance) are always audited at their fixed instance.
        exact: also compute the transcript's exact privacy on the audited pair
            (:mod:`dpaudit.auditing.exact`; registered algorithms at a fixed instance).
        beyond_proof: audit a claim outside the range its paper's proof covers (registered
            algorithms: :meth:`dpaudit.algorithms.spec.AlgorithmSpec.check_proof`); False:
            such a claim is refused.
        small_delta_runs: importance-weighted runs per direction of the small-δ bound on the
            audited pair (:mod:`dpaudit.auditing.importance`), ≥ 0; 0: none; None (default):
            :data:`SMALL_DELTA_SHARE` × the budget's runs for a δ > 0 claim (10⁶ at the
            default budget), none for pure DP.
        stratified_runs: runs per table of the stratified pure-ε bound on the audited pair
            (:mod:`dpaudit.auditing.strata`), ≥ 0; 0 (default): none. Pure-DP claims only.

    Raises:
        InputError: a value out of range.
    """

    algorithm: object
    claim: Claim
    params: dict = field(default_factory=dict)
    neighbours: str = DEFAULT_NEIGHBOURS
    pair: object = None
    budget: Budget = Budget()
    seed: int | None = None
    workers: int | None = None
    progress: bool = False
    model: str | None = None
    strict: bool = False
    instances: str = DEFAULT_INSTANCES
    exact: bool = False
    beyond_proof: bool = False
    small_delta_runs: int | None = None
    stratified_runs: int = 0

    def __post_init__(self) -> None:
        """Check the fields (InputError naming the bad value and the accepted range)."""
        if self.instances not in INSTANCES:
            raise InputError(f"--instances {self.instances!r} is not valid: expected one of "
                             f"{', '.join(INSTANCES)}")
        if self.workers is not None:
            validate.positive(self.workers, "workers")
        if self.small_delta_runs is not None:
            validate.integer(0)(self.small_delta_runs, "small_delta_runs")
        validate.integer(0)(self.stratified_runs, "stratified_runs")
        if self.stratified_runs and self.claim.delta:
            raise InputError(f"stratified_runs={self.stratified_runs} is not valid with "
                             f"delta={self.claim.delta}: the stratified bound is on pure eps "
                             "(expected 0, or a claim without delta)")
        if self.seed is not None:
            validate.seed(self.seed, "seed")
        if not isinstance(self.params, Mapping):
            raise InputError(f"params={self.params!r} is not valid: expected a dict of "
                             "parameters (name: value)")
        object.__setattr__(self, "params", dict(self.params))

    def command(self) -> str:
        """The ``dpaudit run`` line that reproduces this request bit for bit.

        The ``dpaudit run`` line that reproduces this request bit for bit
        (docs/method/kernels.md, "Randomness"): flags at their defaults are left out, except the seed, which must be
        set (a drawn seed made explicit); ``workers`` and ``progress`` do not change a result
        and are never printed.

        Raises:
            ValueError: the request has no seed, or names what no command line can (a spec
                object, a callable, a pair or a parameter given as an object).
        """
        if self.seed is None or not self.reproducible_by_command:
            raise ValueError("only a request with a seed that names its algorithm and pair "
                             "by text has a command line")
        b = self.budget
        argv = ["dpaudit", "run", "--algo", self.algorithm, "--eps", repr(self.claim.eps)]
        if self.claim.delta is not None:
            argv += ["--delta", repr(self.claim.delta)]
        if self.model is not None:
            argv += ["--model", self.model]
        argv += ["--seed", str(self.seed)]
        for flag, value, default in (("--runs", b.runs, None), ("--alpha", b.alpha, DEFAULT_ALPHA),
                                     ("--beta", b.beta, DEFAULT_BETA),
                                     ("--margin", b.margin, DEFAULT_MARGIN),
                                     ("--max-samples", b.max_samples, None)):
            if value != default:
                argv += [flag, repr(value)]
        if not b.early_stop:
            argv += ["--no-early-stop"]
        if self.neighbours != DEFAULT_NEIGHBOURS:
            argv += ["--neighbours", self.neighbours]
        if self.instances != DEFAULT_INSTANCES:
            argv += ["--instances", self.instances]
        if self.strict:
            argv += ["--strict"]
        if self.exact:
            argv += ["--exact"]
        if self.beyond_proof:
            argv += ["--beyond-proof"]
        if self.small_delta_runs is not None:
            argv += ["--small-delta-runs", str(self.small_delta_runs)]
        if self.stratified_runs:
            argv += ["--stratified-runs", str(self.stratified_runs)]
        if self.pair is not None:
            argv += ["--pair", self.pair]
        if self.params:
            argv += ["--param", *(f"{k}={v}" for k, v in self.params.items())]
        return shlex.join(argv)

    @property
    def reproducible_by_command(self) -> bool:
        """Whether :meth:`command` can name the request.

        Whether :meth:`command` can name it (a seed aside): the algorithm, the pair and
        every parameter are given by text.
        """
        return (isinstance(self.algorithm, str) and (self.pair is None
                                                     or isinstance(self.pair, str))
                and all(isinstance(v, str) for v in self.params.values()))
