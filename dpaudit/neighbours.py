"""Candidate neighbouring pairs for an audit (v1: ``user`` tables).

The candidates cross a few *base tables* with the *rows* the algorithm's structure says are most
revealing (``AlgorithmSpec.structure``: e.g. AdaP-TT's initial pulls, whose single sample is a
whole phase-1 release with Ñ = 1). The changed row goes from all-0 in d to all-1 in d': whatever
arm is pulled at that round sees its reward move by the maximal 1 (digest 004 §6.2).

Base tables: ``tied-high`` (every entry 1: all arms tied at the top, the knife edge where one
noisy release decides the leader), ``tied-mid`` (every entry 1/2) and ``instance`` (Bernoulli
draws from the algorithm's ``means``, with a recorded seed). The audit ranks the candidates on a
pilot sample and confirms the best on fresh samples (:mod:`dpaudit.audit`).
"""
from __future__ import annotations

from dpaudit.tables import NeighbourPair, bernoulli_table, constant_table


def candidates(spec, params: dict, table_seed: int) -> list[NeighbourPair]:
    """Neighbouring pairs to try for ``spec`` with resolved ``params``.

    Tables have ``spec.audit_horizon(params)`` rows and K = len(params["means"]) arms.
    """
    K = len(params["means"])
    H = spec.audit_horizon(params)
    bases = [
        (constant_table(1.0, H, K), {"kind": "constant", "value": 1.0, "name": "tied-high"}),
        (constant_table(0.5, H, K), {"kind": "constant", "value": 0.5, "name": "tied-mid"}),
        (bernoulli_table(params["means"], H, table_seed),
         {"kind": "bernoulli", "means": list(params["means"]), "seed": table_seed,
          "name": "instance"}),
    ]
    out = []
    for row, why in spec.structure(params):
        if row >= H:
            continue
        for table, recipe in bases:
            out.append(NeighbourPair.change_row(table, row, 0.0, 1.0, recipe, why))
    return out
