"""The fs group: read, list, search, inspect, type, write, trash, create, move and copy files.

One module per tool, named for it and listed in ``tools.GROUPS``; each exposes
``spec(workspace)``. Modules whose name starts with ``_`` are helpers private to this group.
"""
