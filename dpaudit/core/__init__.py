"""The base layer: input validation and signal handling.

The base layer: input validation (:mod:`.validate`) and Ctrl-C / SIGTERM handling
(:mod:`.interrupt`).
"""
