"""The reference implementations of Barbara, Lazzaro, Pike-Burke (2025).

Barbara, Lazzaro, Pike-Burke, "Locally Differentially Private Thresholding Bandits":
``algorithm`` (PrivBern, Algorithms 1 and 2, APT, and the constants and bounds of eqs. 4-8 and
Theorems 3.1-4.2).
"""
