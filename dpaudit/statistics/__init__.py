"""Statistics of transcripts: bounds, power, output cells, events and the measurement.

Statistics of transcripts: binomial bounds and power (:mod:`.stats`), a mechanism's outputs as
cells (:mod:`.features`), event selection (:mod:`.events`) and measurement (:mod:`.measure`).
"""
