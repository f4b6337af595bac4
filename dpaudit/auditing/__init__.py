"""The audit: pipeline, neighbour search, claim-space screen and white-box accounting.

The audit: the pipeline and registered algorithms (:mod:`.audit`), neighbour search
(:mod:`.search`), white-box accounting (:mod:`.whitebox`), any mechanism (:mod:`.mechanism`),
plain Python callables (:mod:`.plugin`).
"""
