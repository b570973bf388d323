"""The bounds of one policy check: a deadline and a count of directory entries visited.

The check runs in a worker thread, which cannot be killed, so every part of it that walks the file
system (glob expansion, the set-id scan of a recursive copy, archive listings) draws on one budget
and stops with a clear refusal when it runs out. The command's deadline is the backstop.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from starweave.errors import PolicyViolation

MAX_ENTRIES = 100_000  # directory entries one command line may make the check visit
MAX_COMMAND_CHARS = 65_536
MAX_WORDS = 10_000  # words of one simple command after expansion
MAX_ARGV_BYTES = 1_048_576  # half the kernel's ARG_MAX
PATH_MAX = 4096  # the kernel's limit on one path, its final NUL included
MAX_STAGES = 32  # commands in one pipeline
MAX_PIPELINES = 64  # pipelines in one command line
DEFAULT_SECONDS = 30.0


@dataclass
class Budget:
    """Time and directory entries left for one check. ``deadline`` is a time.monotonic() value."""

    deadline: float = field(default_factory=lambda: time.monotonic() + DEFAULT_SECONDS)
    entries: int = MAX_ENTRIES

    @classmethod
    def for_seconds(cls, seconds: float) -> Budget:
        """A budget ending ``seconds`` from now."""
        return cls(deadline=time.monotonic() + seconds)

    def spend(self, entries: int, what: str) -> None:
        """Account ``entries`` directory entries for ``what``; refuse when the budget is spent."""
        self.entries -= entries
        if self.entries < 0:
            raise PolicyViolation(
                f"{what} would visit more than {MAX_ENTRIES} directory entries; "
                "use a narrower pattern or path (or find with -maxdepth)"
            )
        self.check_time(what)

    def check_time(self, what: str) -> None:
        """Refuse when the deadline has passed (for work that visits no directory entry)."""
        if time.monotonic() > self.deadline:
            raise PolicyViolation(f"checking {what} took longer than the command's time limit")
