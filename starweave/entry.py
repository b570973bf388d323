"""The ``starweave`` command's first code: a Ctrl+C while the CLI is still loading ends it quietly.

Importing the CLI (typer, rich, pydantic, the agents) takes most of a second; a Ctrl+C meanwhile
would print a traceback of whatever import it hit. This module imports nothing heavy itself, so its
guard is in place before that work starts.
"""

from __future__ import annotations

import sys

# The same exit code as starweave.cli_support.INTERRUPTED_EXIT, which cannot be imported quietly yet.
INTERRUPTED_EXIT = 130


def main() -> None:
    """Load the CLI and run it; a Ctrl+C while loading exits 130 without a traceback."""
    try:
        from starweave.cli import main as cli_main
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED_EXIT)
    cli_main()
