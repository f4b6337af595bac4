"""Reference implementations, baselines and mutants; installed as ``dpaudit.algorithms``.

Importing this package registers every algorithm in :mod:`dpaudit.registry`.
One module per paper (``adap_tt``: seed 004; ``dp_bai``: seed 000; ``ldp_thresholding``: seed
001), plus shared pieces (``glr``: GLR thresholds; ``linear``: schedule, MAX-DET and designs of
seed 000; ``kernels``: njit helpers shared by the kernels) and ``baselines`` (TTUCB, DP-SE).
"""
from . import adap_tt  # noqa: F401
from . import baselines  # noqa: F401
from . import dp_bai  # noqa: F401
from . import ldp_thresholding  # noqa: F401
from . import dp_ncb  # noqa: F401
from . import lazy_dp  # noqa: F401
from . import adap_ucb  # noqa: F401
