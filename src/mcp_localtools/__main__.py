"""``python -m mcp_localtools``: the same as the ``mcp-localtools`` command."""

from mcp_localtools.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
