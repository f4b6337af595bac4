"""The reference implementations of Sarkar, Pandey, Ray Chowdhury (2025).

Sarkar, Pandey, Ray Chowdhury, "DP-NCB: Privacy Preserving Fair Bandits": ``algorithm``
(GDP-NCB, Algorithm 4; LDP-NCB, Algorithm 5; their anytime wrappers; NCB and LDP-UCB).
"""
