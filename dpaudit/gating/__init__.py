"""``dpaudit gate``: the audit suite, its α budget, the baseline and JUnit XML (:mod:`.gate`)."""
