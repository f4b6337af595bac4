"""Reference implementations, baselines and mutants; installed as ``dpaudit.algorithms``.

Importing this package registers every algorithm in :mod:`dpaudit.registry`.
One module per paper (``adap_tt``: seed 004), plus shared pieces (``glr``: GLR thresholds).
"""
from . import adap_tt  # noqa: F401
from . import baselines  # noqa: F401
