"""Paper-agnostic checks of the reference implementations.

Paper-agnostic checks of the reference implementations: the papers' constants
(:mod:`.constants`) and δ-correctness (:mod:`.correctness`); both ask a paper's theory, never an
algorithm's name.
"""
