"""The base layer: input validation (:mod:`.validate`) and Ctrl-C / SIGTERM handling
(:mod:`.interrupt`)."""
