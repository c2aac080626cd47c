"""The fs group: read, list, search, inspect, type, write, trash, create, move and copy files.

One module per tool, named for it; each exposes ``spec(workspace)``. Modules whose name starts
with ``_`` are helpers private to this group.
"""

from __future__ import annotations

from mcp_localtools.tools.fs import (
    copypath,
    deletefile,
    directorytree,
    globfiles,
    listdirectory,
    makedirectory,
    mimeforextension,
    mimeforpath,
    movepath,
    readfile,
    searchfiles,
    statpath,
    writefile,
)

__all__ = ["MODULES"]

MODULES = (
    readfile,
    listdirectory,
    searchfiles,
    globfiles,
    directorytree,
    statpath,
    mimeforpath,
    mimeforextension,
    writefile,
    deletefile,
    makedirectory,
    movepath,
    copypath,
)
"""The group's tool modules."""
