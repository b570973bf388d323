"""Files named like secrets anywhere on the machine, for the sandboxes to hide.

A path named like a secret (``.env``, ``*.pem``, ``*.key``, ``id_rsa``, ``.ssh/``, ``.aws/`` ...)
is hidden wherever it is; a sandbox can only hide paths it knows, so this module walks the machine
once when the first sandboxed command is prepared and brings the result up to date before every
later command (:mod:`.folder_watch`: a folder is listed again only when its time moved, so a secret
made a moment ago is hidden from the next command). The walk skips what a package manager owns or
the sandboxes replace (``/usr`` except ``/usr/local``, ``/proc``, ``/sys``, ``/dev``, ``/run``,
``/tmp``, ``/root`` which is hidden whole, ``/boot`` ...), folders of installed packages and caches
(``node_modules``, ``site-packages``, ``.cache`` ...), never follows a symlink, and stops after
SCAN_BUDGET entries or SCAN_SECONDS seconds (logged): what it did not reach is not hidden.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from starweave.tools.confine.folder_watch import FolderWatch

SCAN_BUDGET = 400_000
SCAN_SECONDS = 20.0
SKIP_TOP = frozenset(
    {
        "proc",
        "sys",
        "dev",
        "run",
        "tmp",
        "usr",
        "bin",
        "sbin",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "boot",
        "snap",
        "nix",
        "root",
        "lost+found",
    }
)
EXTRA_ROOTS = ("/usr/local",)
SKIP_PATHS = frozenset(
    {
        "/var/lib/docker",
        "/var/lib/containers",
        "/var/cache",
        "/var/lib/apt",
        "/var/lib/dpkg",
        "/etc/ssl/certs",
    }
)
SKIP_NAMES = frozenset(
    {
        "node_modules",
        "__pycache__",
        ".git",
        "site-packages",
        "dist-packages",
        ".cache",
        ".npm",
        ".pyenv",
        ".rustup",
        ".nvm",
        ".m2",
        ".gradle",
        ".tox",
    }
)


def _descend(entry: os.DirEntry[str]) -> bool:
    if os.path.dirname(entry.path) == "/":
        return entry.name not in SKIP_TOP
    return entry.name not in SKIP_NAMES and entry.path not in SKIP_PATHS


class SecretScan:
    """Paths on the machine whose name ``is_secret`` (secret folders are not entered): walked on
    the first call, brought up to date by every later one."""

    def __init__(
        self, is_secret: Callable[[str], bool], budget: int = SCAN_BUDGET, seconds: float = SCAN_SECONDS
    ) -> None:
        self.is_secret = is_secret
        self.budget, self.seconds = budget, seconds
        self._watch: FolderWatch[str] | None = None
        self._lock = threading.Lock()

    def _pick(self, entry: os.DirEntry[str]) -> str | None:
        return entry.path if self.is_secret(entry.name) else None

    def paths(self) -> list[str]:
        """The secrets as of now (the first call walks the machine; later ones list again only
        the folders that changed). Blocking: call it from a worker thread."""
        with self._lock:
            if self._watch is None:
                roots = ["/", *(p for p in EXTRA_ROOTS if os.path.isdir(p) and not os.path.islink(p))]
                self._watch = FolderWatch(roots, self._pick, _descend, self.budget, self.seconds)
            else:
                self._watch.refresh()
            return self._watch.found()
