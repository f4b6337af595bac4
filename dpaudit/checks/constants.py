"""The papers' constants as a checked Python API (``dpaudit check constants``).

Each paper with a theory module (:func:`dpaudit.algorithms.registry.theory`; ``paper`` in
:data:`dpaudit.algorithms.registry.PAPERS`) reports its constants: "chen2024" DP-BAI (Chen,
Karthik, Chee, Tan, ICLR 2024, arXiv:2401.09073), "barbara2025" LDP thresholding bandits
(Barbara, Lazzaro, Pike-Burke, 2025), "azize2023" AdaP-TT (Azize, Al Marjani, Jourdan, Basu,
NeurIPS 2023, arXiv:2309.02202). The numbers "000", "001" and "004" still work, with a
:class:`FutureWarning`, until the next release. This module checks the parameters a user
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

    Args:
        paper: a key of :data:`dpaudit.algorithms.registry.PAPERS`.
            "chen2024": the phase schedule λ, g, h, s, M_1, M, T' and the hardness H_BAI,
            H_pri, H (defaults: the Section 5 instance, T = 1000, ε ∈ {0.1, 1, 10}; parameters
            ``means``/``K``/``d``/``T``/``eps``/``reading``). "barbara2025": c_ε, μ_{i,ε},
            τ_ε, ζ_ε, Δ_{i,ε}, H, H_ε (default instance A, ε ∈ {0.5, 1, 2}; parameters
            ``means``/``threshold``/``tolerance``/``eps``). "azize2023": T*_TV in closed form
            and by a linear program, T*_KL for Bernoulli and Gaussian arms, ω*_β and
            T*_{KL,β}, T*(ν;ε), the regime boundaries, C_G and threshold magnitudes
            (default μ1 with K = 6, ε ∈ {0.01, 0.1, 1}, δ = 0.01, β = 1/2, s = 2; parameters
            ``instance``/``means``/``eps``/``risk``/``beta``/``s``/``K``/``phases``).
        params: overrides of the defaults, by name; numbers or lists of numbers, except the
            words ``instance`` and ``reading``.

    Returns:
        The paper's constants plus ``checks``, a list of cross-checks (see the module doc).

    Raises:
        InputError: an unknown paper or parameter (the paper's ``REPORT_PARAMS``), a word
            where a number is expected, a value out of its range (ε: :mod:`dpaudit.core.validate`).
    """
    params = dict(params or {})
    paper = registry.paper_key(paper)
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
