"""Reference implementations, baselines and mutants; installed as ``dpaudit.algorithms``.

One subpackage per paper, each holding its kernels, its pseudo-code's functions and its theory:

* ``adap_tt``: Azize, Al Marjani, Jourdan, Basu, NeurIPS 2023 (AdaP-TT; its baselines TTUCB and
  DP-SE; ``glr``: its GLR stopping thresholds);
* ``dp_bai``: Chen, Karthik, Chee, Tan, ICLR 2024, arXiv 2401.09073 (DP-BAI, DP-OD and their
  comparators; ``linear``: schedule, MAX-DET and designs);
* ``ldp_thresholding``: Barbara, Lazzaro, Pike-Burke (PrivBern, LDP thresholding bandits, APT);
* ``dp_ncb``: Sarkar, Pandey, Ray Chowdhury (GDP-NCB, LDP-NCB, their anytime wrappers);
* ``lazy_dp``: Hu, Huang, Mehta, Hegde, arXiv 2102.07929 (Anytime-Lazy-UCB, Lazy-DP-TS,
  RNM-FTNL; ``adap_ucb``: AdaP-UCB and AdaP-KLUCB, the baselines of this paper and of
  ``dp_ncb``).

``kernels`` holds the njit helpers the kernels share. Each module of an algorithm lists its
algorithms in ``SPECS`` (:mod:`dpaudit.algorithms.spec`); the catalogue
:mod:`dpaudit.algorithms.registry` imports
them. Importing this package or a paper's subpackage imports none of its modules.
"""
