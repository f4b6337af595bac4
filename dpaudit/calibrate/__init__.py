"""The auditor measured on known answers.

The auditor measured on known answers: mechanisms of known loss (:mod:`.mechanisms`), a planted
leak (:mod:`.planted`), and the calibration runs (:mod:`.calibration`).
"""
