"""Mutants of the registered algorithms: one noise site's noise mutated, at the kernels' speed.

Every noisy release of a reference kernel passes its freshly drawn noise through the mutation
switch of its *noise site* (a place in the kernel's code; one site may release many values,
e.g. every arm's epoch mean): :func:`dpaudit.algorithms.kernels.site_switch`, read once per
run, and :func:`~dpaudit.algorithms.kernels.site_release`. A mutant's prepared ``theta`` ends
with the tail (:data:`~dpaudit.algorithms.kernels.MUTATION_MARK`, operator, site, factor),
which that switch reads; a theta without the tail (every registered algorithm's) runs as
before, so the reference kernels are not copied and a mutant runs at their speed.

A mutant is named ``ALGO~OPERATOR=FACTOR@SITE`` or ``ALGO~OPERATOR@SITE`` (e.g.
``adap-tt~scale=0@1``: AdaP-TT with no noise on its phase means, the raw value released) and
is built on demand by :func:`dpaudit.algorithms.registry.get`, so every command that takes
``--algo`` audits it. Operators (the privacy bugs they plant):

* ``scale=F``: the site's noise × F (0: the raw value; 0.5: half the noise; 2: twice it, an
  *equivalent* mutant, still ε-DP);
* ``count``: sensitivity off by one, the noise of a mean of n + 1 samples (× n/(n + 1));
* ``reuse``: one noise draw reused, the site's first draw (in noise scales) added to every
  later release at the site;
* ``frozen``: the same noise in every run (a generator seeded with a constant);
* ``gauss``: a Gaussian draw with the Laplace scale, ``normal(0, b)`` where ``laplace(0, b)``
  was meant (the slip the two calls' one signature invites; not ε-DP at any ε: its loss
  exceeds ε wherever the noise exceeds b·(1 − ε/2)); a no-op at a Gaussian site.

The sites of each kernel are its module's ``NOISE_SITES`` ((site, what its noise privatises),
...; :func:`dpaudit.algorithms.registry.noise_sites`). A site the algorithm's mode never reaches
leaves the mutant's runs unchanged (an equivalent mutant).
"""
from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from dpaudit.algorithms.kernels import COUNT, FROZEN, GAUSS, MUTATION_MARK, REUSE, SCALE
from dpaudit.algorithms.spec import AlgorithmSpec, Prepared
from dpaudit.errors import InputError

OPERATORS = {"scale": SCALE, "count": COUNT, "reuse": REUSE, "frozen": FROZEN, "gauss": GAUSS}
FACTORED = ("scale",)           # operators that take a factor (=F); the others take none
NAME = re.compile(r"^(?P<algo>[^~]+)~(?P<op>[a-z]+)(=(?P<factor>[^@]+))?@(?P<site>\d+)$")


@dataclasses.dataclass(frozen=True)
class Mutation:
    """One mutation of one algorithm.

    Attributes:
        operator: a key of :data:`OPERATORS`.
        site: the noise site (the kernel module's ``NOISE_SITES``).
        factor: the operator's factor (``scale``: the noise's multiplier, ≥ 0; the others:
            1, unused).
    """

    operator: str
    site: int
    factor: float = 1.0

    def tail(self) -> np.ndarray:
        """The theta tail that switches the mutation on.

        Returns:
            float64 array (4,): (mark, operator code, site, factor).
        """
        return np.array([MUTATION_MARK, OPERATORS[self.operator], float(self.site),
                         self.factor])

    def suffix(self) -> str:
        """The mutant's name suffix.

        Returns:
            ``~scale=0.5@1`` or ``~reuse@1`` style text.
        """
        if self.operator in FACTORED:
            return f"~{self.operator}={self.factor:g}@{self.site}"
        return f"~{self.operator}@{self.site}"

    def text(self) -> str:
        """The mutation in words.

        Returns:
            e.g. ``noise × 0.5`` or ``one noise draw reused``.
        """
        return {"scale": f"noise × {self.factor:g}",
                "count": "sensitivity off by one (noise × n/(n + 1))",
                "reuse": "one noise draw reused", "frozen": "the same noise in every run",
                "gauss": "a Gaussian draw with the Laplace scale"}[self.operator]


def parse(name: str) -> tuple[str, Mutation] | None:
    """The algorithm and mutation a mutant's name spells, None for another name.

    Args:
        name: e.g. ``adap-tt~scale=0@1`` or ``adap-tt~reuse@1``.

    Returns:
        (the algorithm's name, the :class:`Mutation`), or None if ``name`` has no ``~``.

    Raises:
        InputError: a ``~`` name that does not spell a mutation (unknown operator, a factor
            that is not a finite number ≥ 0).
    """
    if "~" not in name:
        return None
    m = NAME.match(name)
    if m is None or m["op"] not in OPERATORS:
        raise InputError(f"mutant {name!r} is not valid: expected ALGO~OPERATOR[=FACTOR]@SITE "
                         f"with OPERATOR in {sorted(OPERATORS)} (e.g. adap-tt~scale=0@1, "
                         "adap-tt~reuse@1)")
    if (m["factor"] is not None) != (m["op"] in FACTORED):
        raise InputError(f"mutant {name!r} is not valid: {m['op']} takes "
                         + ("a factor (=F)" if m["op"] in FACTORED else "no factor"))
    if m["op"] not in FACTORED:
        return m["algo"], Mutation(m["op"], int(m["site"]))
    try:
        factor = float(m["factor"])
    except ValueError:
        factor = math.nan
    if not (math.isfinite(factor) and factor >= 0):
        raise InputError(f"mutant {name!r}: factor={m['factor']!r} is not valid: expected a "
                         "finite number >= 0")
    return m["algo"], Mutation(m["op"], int(m["site"]), factor)


def mutant(spec: AlgorithmSpec, mutation: Mutation, sites: tuple) -> AlgorithmSpec:
    """The mutant of ``spec`` under ``mutation``: its kernel, its prepared theta plus the tail.

    Args:
        spec: a registered algorithm.
        mutation: the mutation.
        sites: its kernel's noise sites, ((site, text), ...).

    Returns:
        An :class:`AlgorithmSpec` named ``spec.name + mutation.suffix()``, ``mutant_of`` the
        algorithm, with the same claim.

    Raises:
        InputError: ``spec`` has no noise site ``mutation.site``.
    """
    sites = dict(sites)
    if mutation.site not in sites:
        raise InputError(f"site={mutation.site} is not valid for {spec.name}: expected one of "
                         f"{sorted(sites)} (its noise sites)" if sites else
                         f"{spec.name} has no noise site to mutate")
    tail = mutation.tail()

    def prepare(eps: float, p: dict) -> Prepared:
        prep = spec.prepare(eps, p)
        return dataclasses.replace(prep, theta=np.concatenate((prep.theta, tail)))

    return dataclasses.replace(
        spec, name=spec.name + mutation.suffix(), prepare=prepare, mutant_of=spec.name,
        title=f"{spec.title}, mutant: {mutation.text()} at site {mutation.site} "
              f"({sites[mutation.site]})")
