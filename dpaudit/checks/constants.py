"""The papers' constants as a checked Python API (``dpaudit check constants``).

Each paper with a theory module (:func:`dpaudit.algorithms.registry.theory`; ``paper`` in
:data:`dpaudit.algorithms.registry.PAPERS`) reports its constants: "000" DP-BAI (Chen, Karthik,
Chee, Tan,
ICLR 2024), "001" LDP thresholding bandits (Barbara, Lazzaro, Pike-Burke), "004" AdaP-TT
(Azize, Al Marjani, Jourdan, Basu, NeurIPS 2023). This module checks the parameters a user
gives, the same way for every paper, and asks the paper's ``report``.

Report: :func:`constants` returns a JSON-able dict of the paper's constants plus ``checks`` —
each cross-check with ``name``, ``lhs``, ``rhs``, ``relation`` ("==", ">=", "<="), ``tol``
(relative, on the larger magnitude) and ``pass`` (:func:`dpaudit.algorithms.theory.cross_check`).
"""
from __future__ import annotations

import difflib

from dpaudit.algorithms import registry
from dpaudit.errors import InputError

WORD_PARAMS = ("instance", "reading")      # every other parameter is a number or a list
LIST_PARAMS = ("means", "eps", "phases")   # may be lists; the rest take one number


def constants(paper: str, params: dict | None = None) -> dict:
    """Every constant the paper's theory reports, with cross-checks, as a JSON-able dict.

    ``paper``: "000" (schedule λ, g, h, s, M_1, M, T'; H_BAI, H_pri, H — defaults: the
    Section 5 instance, T = 1000, ε ∈ {0.1, 1, 10}; params ``means``/``K``/``d``/``T``/
    ``eps``/``reading``), "001" (c_ε, μ_{i,ε}, τ_ε, ζ_ε, Δ_{i,ε}, H, H_ε — default instance A,
    ε ∈ {0.5, 1, 2}; params ``means``/``threshold``/``tolerance``/``eps``), "004" (T*_TV closed
    form and LP, T*_KL Bernoulli/Gaussian, ω*_β and T*_{KL,β}, T*(ν;ε), regime boundaries,
    C_G, threshold magnitudes — default μ1 (K = 6), ε ∈ {0.01, 0.1, 1}, δ = 0.01, β = 1/2,
    s = 2, K = 6 for thresholds; params ``instance``/``means``/``eps``/``risk``/``beta``/``s``/
    ``K``/``phases``). The result has a ``checks`` list (see module doc).

    Raises:
        InputError: an unknown paper or parameter (the paper's ``REPORT_PARAMS``), a word
            where a number is expected, a value out of its range (ε: :mod:`dpaudit.core.validate`).
    """
    params = dict(params or {})
    if paper not in registry.PAPERS:
        raise InputError(f"paper={paper!r} is not valid: expected one of "
                         f"{', '.join(registry.PAPERS)}")
    theory = registry.theory(paper)
    accepted = theory.REPORT_PARAMS
    for key, value in params.items():
        if key not in accepted:
            near = difflib.get_close_matches(key, accepted, n=1)
            raise InputError(f"unknown parameter {key!r} for paper {paper}"
                             + (f" (did you mean {near[0]}?)" if near else "")
                             + f"; accepted: {', '.join(accepted)}")
        if key not in WORD_PARAMS and isinstance(value, str):
            raise InputError(f"{key}={value!r} is not valid: expected a number or "
                             "comma-separated numbers")
        if key not in WORD_PARAMS + LIST_PARAMS and isinstance(value, list):
            raise InputError(f"{key}={value!r} is not valid: expected one number")
    return theory.report(params)
