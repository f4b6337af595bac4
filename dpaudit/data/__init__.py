"""Reward tables: privacy models, neighbouring pairs and the candidates a search ranks.

Reward tables: the privacy models and neighbouring pairs (:mod:`.tables`) and the candidate
pairs a search ranks (:mod:`.neighbours`).
"""
