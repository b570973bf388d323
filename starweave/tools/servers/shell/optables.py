"""Every option table, looked up by the name a command is known by or by its real program.

A few names are scripts or links that hand their arguments to another tool unchanged (``egrep`` runs
``grep -E "$@"``, ``zcat`` is ``gzip -dc``, ``unxz`` is a link to ``xz``): they use that tool's table.
"""

from __future__ import annotations

import os

from starweave.tools.servers.shell.optables_coreutils import COREUTILS
from starweave.tools.servers.shell.optables_custom import CUSTOM
from starweave.tools.servers.shell.optables_git import GIT
from starweave.tools.servers.shell.optables_tools import TOOLS
from starweave.tools.servers.shell.options import OptSpec

SAME_OPTIONS = {
    "egrep": "grep",
    "fgrep": "grep",
    "zgrep": "grep",
    "gunzip": "gzip",
    "zcat": "gzip",
    "unxz": "xz",
    "xzcat": "xz",
    "bunzip2": "bzip2",
    "bzcat": "bzip2",
    "unzstd": "zstd",
    "zstdcat": "zstd",
    "nawk": "mawk",
    "netcat": "nc",
    "zdiff": "diff",
}
TABLES: dict[str, OptSpec] = {**COREUTILS, **TOOLS, **CUSTOM, "git": GIT}


def spec_for(name: str, real: str = "") -> OptSpec | None:
    """The option table for the command known as ``name`` whose program is ``real``, or None."""
    for candidate in (name, os.path.basename(real), SAME_OPTIONS.get(name, "")):
        if candidate in TABLES:
            return TABLES[candidate]
    return None
