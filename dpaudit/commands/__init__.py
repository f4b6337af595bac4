"""The command line (:mod:`.cli`)."""
