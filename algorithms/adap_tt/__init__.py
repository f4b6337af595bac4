"""The reference implementations of Azize, Al Marjani, Jourdan, Basu (NeurIPS 2023).

Azize, Al Marjani, Jourdan, Basu, "On the Complexity of Differentially Private Best-Arm
Identification with Fixed Confidence", NeurIPS 2023: ``algorithm`` (AdaP-TT, Algorithm 2, and
its mutants), ``baselines`` (TTUCB and DP-SE, Section 5), ``glr`` (the GLR stopping thresholds,
eqs. 4, 14 and 15).
"""
