"""``dpaudit report``: HTML and Markdown reports of result JSON files.

``dpaudit report``: HTML and Markdown reports of result JSON files (:mod:`.report`,
``templates/``).
"""
