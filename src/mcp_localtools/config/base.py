"""What every section of the config shares: the hard maxima (constants no config may pass)
and the base model of a section (unknown keys refused, values validated on assignment)."""

from __future__ import annotations

from pydantic import (
    BaseModel,
    ConfigDict,
)

MiB = 1024 * 1024

HARD_MAX_READ_BYTES = 256 * MiB
"""Largest file any tool reads into memory, whatever the config says (bytes)."""
HARD_MAX_WRITE_BYTES = 256 * MiB
"""Largest content any tool writes in one call (bytes)."""
HARD_MAX_READ_LINES = 100_000
"""Largest line window of one read (lines)."""
HARD_MAX_RESULT_CHARS = 10_000_000
"""Largest text budget of one result (characters)."""
HARD_MAX_TIMEOUT_SECONDS = 3600
"""Longest a single command may run (seconds)."""
HARD_MAX_OUTPUT_BYTES = 4 * MiB
"""Largest captured output per stream of one command (bytes); the seed's clamp."""
HARD_MAX_COMMANDS = 64
"""Most commands in one shellcommand call; the seed's clamp."""
HARD_MAX_COMMAND_LENGTH = 64 * 1024
"""Longest single command (bytes); the seed's clamp."""


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
