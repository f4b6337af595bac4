"""Reference implementations, baselines and mutants; installed as ``dpaudit.algorithms``.

One module per paper (``adap_tt``: seed 004; ``dp_bai``: seed 000; ``ldp_thresholding``: seed
001; ``dp_ncb``, ``lazy_dp``, ``adap_ucb``: the regret papers), plus shared pieces (``glr``:
GLR thresholds; ``linear``: schedule, MAX-DET and designs of seed 000; ``kernels``: njit helpers
shared by the kernels) and ``baselines`` (TTUCB, DP-SE). Each module lists its algorithms in
``SPECS`` (:mod:`dpaudit.spec`); the catalogue :mod:`dpaudit.registry` imports them. Importing
this package imports none of them.
"""
