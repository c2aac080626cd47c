"""An environment assignment that a declared tool's argument makes after a wrapper: ``env`` and
``sudo`` read a ``NAME=value`` word before the program as one (``["env", "{x}", "prog"]`` with
``x = "LD_PRELOAD=/x.so"``), so such a word is checked like a call's ``env``."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from mcp_localtools.errors import CommandRefused

__all__ = ["check_assignment"]

_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
"""A word ``env`` (and ``sudo``) reads as an assignment: ``NAME=value``."""


def check_assignment(
    argument: str, text: str, fixed: frozenset[str], check_env: Callable[[Mapping[str, str]], object]
) -> None:
    """Refuse ``text``, a word after a wrapper whose name part came from ``argument``, when it
    reads ``NAME=value`` and ``check_env`` (the execution policy's) refuses ``NAME``; an argument
    in ``fixed`` (an ``enum``: the config's author wrote every value) is not checked.

    Raises:
        CommandRefused: ``check_env`` refuses it; the message names the argument.
    """
    found = _ASSIGNMENT.match(text)
    if argument in fixed or found is None:
        return
    try:
        check_env({found.group(1): found.group(2)})
    except CommandRefused as exc:
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise CommandRefused(
            f"{argument}: {shown!r} comes after a wrapper (env, sudo, ...), which reads it as an "
            f"environment assignment: {exc.message}"
        ) from None
