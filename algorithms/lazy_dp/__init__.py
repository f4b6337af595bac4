"""The reference implementations of Hu, Huang, Mehta, Hegde (2021).

Hu, Huang, Mehta, Hegde, "Near-Optimal Algorithms for Differentially Private Online
Learning in a Stochastic Environment", arXiv 2102.07929: ``algorithm`` (Anytime-Lazy-UCB,
Lazy-DP-TS, Thompson sampling, RNM-FTNL, FTNL, DP-SE for regret); ``adap_ucb`` (AdaP-UCB and
AdaP-KLUCB, Azize & Basu 2022, the baselines of this paper and of DP-NCB).
"""
