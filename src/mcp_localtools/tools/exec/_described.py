"""What the command tools' descriptions say of the active policy, so the model learns it before
its first call rather than from a refusal (Hector's HC-10: the description names the allowed
commands and says when the user must approve).

``commands_sentence`` is the allowlist under ``deny_by_default`` (else what the blocklist refuses,
with the tools to use instead), ``containment_sentence`` where commands may write and what network
they have, and ``with_approval_note`` adds "Asks the user first" to a tool that ``[approval]
require`` names, as ``ApprovalPolicy.rule_for`` decides it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mcp_localtools.approval import ApprovalPolicy
from mcp_localtools.config import ApprovalConfig, ExecConfig
from mcp_localtools.spec import ToolSpec

__all__ = ["commands_sentence", "containment_sentence", "with_approval_note"]

_SHOWN_DOMAINS = 6


def commands_sentence(config: ExecConfig) -> str:
    """Which commands run: under ``deny_by_default`` the ``allowed_commands`` as written (and the
    shell builtins that always run), else the blocklist's main refusals and what to use instead."""
    if config.deny_by_default:
        listed = ", ".join(config.allowed_commands) or "none"
        return f"Only these commands run: {listed} (and shell builtins)."
    return "Blocked: rm (use deletefile), editors and pagers (readfile/writefile), network tools."


def containment_sentence(config: ExecConfig) -> str:
    """How commands are contained, from ``[exec.sandbox]``: where they may write (the roots, the
    ``write_paths``, a per-session ``$TMPDIR``) and their network (the backend itself is chosen at
    start-up in the background)."""
    sandbox = config.sandbox
    if sandbox.mode == "off":
        return "Commands are not sandboxed: they run with the server's full authority."
    if sandbox.network:
        network = "network allowed"
    elif sandbox.allowed_domains:
        shown = ", ".join(sandbox.allowed_domains[:_SHOWN_DOMAINS])
        more = ", ..." if len(sandbox.allowed_domains) > _SHOWN_DOMAINS else ""
        network = f"network only through $HTTPS_PROXY to {shown}{more}"
    else:
        network = "no network"
    places = ", ".join(["the roots", *sandbox.write_paths])
    return f"Sandboxed: writes only to {places} and a per-session $TMPDIR; cannot read $HOME; {network}."


def with_approval_note(spec: ToolSpec[Any], approval: ApprovalConfig) -> ToolSpec[Any]:
    """``spec`` with "Asks the user first." at the end of its description when ``[approval]
    require`` applies to it (naming ``trusted_commands`` for shellcommand, the one tool they lift)."""
    # A command tool's spec is built before the catalog gives it its group (its package, exec).
    if ApprovalPolicy(approval).rule_for(dataclasses.replace(spec, group=spec.group or "exec")) is None:
        return spec
    note = "Asks the user first"
    if approval.trusted_commands and (spec.builtin_name or spec.name) == "shellcommand":
        note += f", unless every program it runs is {' or '.join(approval.trusted_commands)}"
    return dataclasses.replace(spec, description=f"{spec.description} {note}.")
