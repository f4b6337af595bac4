"""The catalogue of algorithms and of the papers' theory modules.

The catalogue of algorithms: what `dpaudit list` shows and what `dpaudit run --algo NAME`
runs.

:func:`modules` lists, in one place, the modules of the paper packages of
:mod:`dpaudit.algorithms` that hold reference implementations; each declares its algorithms
in ``SPECS`` (:class:`dpaudit.algorithms.spec.AlgorithmSpec`) and registers nothing itself. They are
imported on the first :func:`get` or :func:`all_specs` (their compiled kernels load then),
once. The contract
a spec follows is :mod:`dpaudit.algorithms.spec`; the algorithms import it, never this module.

It is also the catalogue of the papers' theory modules (:func:`theory`: constants, bounds and
what an error is, :mod:`dpaudit.algorithms.theory`), imported on first use too. The names the
command
line shows before anything is loaded (:data:`PAPERS`, :data:`FIXED_CONFIDENCE`,
:data:`FIXED_BUDGET`) are written out here; a test checks them against the theory modules.
"""
from __future__ import annotations

import difflib
from types import ModuleType
import warnings

from dpaudit.algorithms.spec import AlgorithmSpec
from dpaudit.algorithms.theory import Identification
from dpaudit.errors import InputError

# the papers with a theory module (check constants --paper), by first author and year
PAPERS = ("azize2023", "barbara2025", "chen2024")
# the numbers these papers had before release 0.2; accepted, with a warning, until the next one
OLD_PAPER_KEYS = {"000": "chen2024", "001": "barbara2025", "004": "azize2023"}
# the identification algorithms (check correctness), in the order its help lists them
FIXED_CONFIDENCE = ("adap-tt", "adap-tt-no-forgetting", "adap-tt-raw-leader", "dp-se", "ttucb",
                    "ldp-tb-confidence")
FIXED_BUDGET = ("dp-bai", "dp-bai-gauss", "dp-bai-baseline", "dp-bai-reuse", "dp-od",
                "od-linbai", "ldp-tb-budget", "apt")

_REGISTRY: dict[str, AlgorithmSpec] = {}
_LOADED: list[bool] = []


def modules() -> tuple:
    """The modules of reference implementations, in the order their ``SPECS`` are read.

    Imported here, on first use, not at the top: they load every compiled kernel (numba's
    cache), which `dpaudit --help`, `dpaudit report` and a refused input need not pay
    (docs/method/architecture.md gives the start-up times).
    """
    from dpaudit.algorithms.adap_tt import algorithm as adap_tt
    from dpaudit.algorithms.adap_tt import baselines
    from dpaudit.algorithms.dp_bai import algorithm as dp_bai
    from dpaudit.algorithms.dp_ncb import algorithm as dp_ncb
    from dpaudit.algorithms.lazy_dp import adap_ucb
    from dpaudit.algorithms.lazy_dp import algorithm as lazy_dp
    from dpaudit.algorithms.ldp_thresholding import algorithm as ldp_thresholding
    return adap_tt, baselines, dp_bai, ldp_thresholding, dp_ncb, lazy_dp, adap_ucb


def _load() -> None:
    """Collect the ``SPECS`` of :func:`modules` (once; a name declared twice is a bug)."""
    if _LOADED:
        return
    for module in modules():
        for spec in module.SPECS:
            if spec.name in _REGISTRY:
                raise ValueError(f"algorithm {spec.name!r} declared twice")
            _REGISTRY[spec.name] = spec
    _LOADED.append(True)


def noise_sites(spec: AlgorithmSpec) -> tuple:
    """The noise sites of an algorithm's kernel (its module's ``NOISE_SITES``).

    Args:
        spec: a registered algorithm.

    Returns:
        ((site, what its noise privatises), ...); empty for a kernel without noise draws.
    """
    for module in modules():
        sites = getattr(module, "NOISE_SITES", {})
        if spec.kernel in sites:
            return sites[spec.kernel]
    return ()


def all_specs() -> list[AlgorithmSpec]:
    """Every registered algorithm: the faithful ones first, then the mutants, by name."""
    _load()
    return sorted(_REGISTRY.values(), key=lambda s: (s.mutant_of is not None, s.name))


def get(name: str) -> AlgorithmSpec:
    """The spec registered as ``name``.

    Args:
        name: a registered name (``dpaudit list``), or a mutant's ``ALGO~scale=FACTOR@SITE``
            (:mod:`dpaudit.algorithms.mutation`), built on demand.

    Returns:
        Its :class:`~dpaudit.algorithms.spec.AlgorithmSpec`.

    Raises:
        InputError: an unknown name, with the closest names, or a mutant name that is not
            valid (its operator, factor or site).
    """
    _load()
    if name in _REGISTRY:
        return _REGISTRY[name]
    from dpaudit.algorithms import mutation     # on first use, as the papers' modules
    spelled = mutation.parse(name)
    if spelled is not None:
        spec = get(spelled[0])
        return mutation.mutant(spec, spelled[1], noise_sites(spec))
    close = difflib.get_close_matches(name, list(_REGISTRY), n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(f"unknown algorithm {name!r}{hint} (see `dpaudit list`)")


def theories() -> dict:
    """The theory module of each paper in :data:`PAPERS`, by paper key.

    Imported here, on first use: they import their algorithms' kernels (0.5 s).
    """
    from dpaudit.algorithms.adap_tt import theory as adap_tt
    from dpaudit.algorithms.dp_bai import theory as dp_bai
    from dpaudit.algorithms.ldp_thresholding import theory as ldp_thresholding
    return {"chen2024": dp_bai, "barbara2025": ldp_thresholding, "azize2023": adap_tt}


def paper_key(key: str) -> str:
    """The paper key ``key`` stands for: itself, or the readable key of a deprecated number.

    Args:
        key: a key of :data:`PAPERS` or a deprecated number of :data:`OLD_PAPER_KEYS`.

    Returns:
        The key of :data:`PAPERS`. A deprecated number also emits a :class:`FutureWarning`
        that names the new key.

    Raises:
        InputError: ``key`` is neither.
    """
    if key in OLD_PAPER_KEYS:
        new = OLD_PAPER_KEYS[key]
        warnings.warn(deprecation(key), FutureWarning, stacklevel=3)
        return new
    if key not in PAPERS:
        raise InputError(f"paper={key!r} is not valid: expected one of {', '.join(PAPERS)}")
    return key


def deprecation(key: str) -> str:
    """The one-line message for a deprecated paper number.

    Args:
        key: a key of :data:`OLD_PAPER_KEYS`.

    Returns:
        The message, naming the new key.
    """
    return (f"paper key {key!r} is deprecated and will be removed in the next release; "
            f"use {OLD_PAPER_KEYS[key]!r}")


def theory(paper: str) -> ModuleType:
    """The theory module of a paper.

    Args:
        paper: a key of :data:`PAPERS`.

    Returns:
        The module: its ``report(params)`` and ``REPORT_PARAMS`` (``dpaudit check constants``)
        and its ``IDENTIFICATION``.
    """
    return theories()[paper]


def identification(name: str) -> Identification | None:
    """What ``dpaudit check correctness`` checks an identification algorithm against.

    Args:
        name: a registered name.

    Returns:
        Its :class:`dpaudit.algorithms.theory.Identification`, or None when it is not an
        identification algorithm.
    """
    for module in theories().values():
        if name in module.IDENTIFICATION:
            return module.IDENTIFICATION[name]
    return None
