"""``python -m mcp_localtools``: the same as the ``mcp-localtools`` command."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
