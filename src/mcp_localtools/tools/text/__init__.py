"""The text group: read, find and edit lines of UTF-8 text files, and editfile's exact-text edits.

One module per tool, named for it and listed in ``tools.GROUPS``; each exposes
``spec(workspace)``. Private helpers:
``_lines`` (the pure line model, no I/O), ``_textfile`` (load a file, save it back), ``_blocks``
(finding a block of lines), ``_match`` and ``_similar`` (exact-text matching, the closest region),
``_diff`` and ``_report`` (what every edit returns).
"""
