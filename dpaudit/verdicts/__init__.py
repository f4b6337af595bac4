"""The verdict rule and the result it is written in.

The verdict rule (:mod:`.verdict`) and the result it is written in (:mod:`.result`: the verdict
JSON).
"""
