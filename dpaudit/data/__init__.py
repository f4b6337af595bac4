"""Reward tables: the privacy models and neighbouring pairs (:mod:`.tables`) and the candidate
pairs a search ranks (:mod:`.neighbours`)."""
