"""The reference implementations of Chen, Karthik, Chee, Tan (ICLR 2024).

Chen, Karthik, Chee, Tan, "Fixed-Budget Differentially Private Best Arm Identification",
ICLR 2024, arXiv 2401.09073: ``algorithm`` (DP-BAI, DP-BAI-GAUSS, BASELINE, DP-OD, OD-LinBAI
and a mutant), ``linear`` (the schedule of eqs. 4-8, hardness, MAX-DET, G-optimal design).
"""
