"""Files named like secrets anywhere on the machine, for the sandboxes to hide.

The policy refuses a path named like a secret wherever it is (``.env``, ``*.pem``, ``*.key``,
``id_rsa``, ``.ssh/``, ``.aws/`` ...); a sandbox can only hide paths it knows, so this module looks
for them once when the first sandboxed command is prepared and again in the background every
SCAN_TTL seconds. The walk skips what a package manager owns or the sandboxes replace (``/usr``
except ``/usr/local``, ``/proc``, ``/sys``, ``/dev``, ``/run``, ``/tmp``, ``/root`` which is hidden
whole, ``/boot`` ...), folders of installed packages and caches (``node_modules``,
``site-packages``, ``.cache`` ...), never follows a symlink, and stops after SCAN_BUDGET entries or
SCAN_SECONDS seconds. A secret created after the last walk is still refused by the policy.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

SCAN_TTL = 300.0
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


def scan(
    is_secret: Callable[[str], bool], budget: int = SCAN_BUDGET, seconds: float = SCAN_SECONDS
) -> list[str]:
    """Paths under ``/`` whose name ``is_secret`` (folders are not entered), breadth first."""
    deadline = time.monotonic() + seconds
    try:
        top = [os.path.join("/", n) for n in sorted(os.listdir("/")) if n not in SKIP_TOP]
    except OSError:
        top = []
    queue = [p for p in top + list(EXTRA_ROOTS) if os.path.isdir(p) and not os.path.islink(p)]
    found: list[str] = []
    seen = 0
    while queue and seen < budget and time.monotonic() < deadline:
        folder = queue.pop(0)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if is_secret(entry.name):
                found.append(entry.path)
            elif (
                entry.name not in SKIP_NAMES
                and entry.path not in SKIP_PATHS
                and entry.is_dir(follow_symlinks=False)
            ):
                queue.append(entry.path)
    if queue:
        logger.info("secret scan stopped after %d entries; %d folders not searched", seen, len(queue))
    return found


class SecretScan:
    """The latest scan; the first call waits for one, later calls refresh it in the background."""

    def __init__(self, is_secret: Callable[[str], bool], ttl: float = SCAN_TTL) -> None:
        self.is_secret = is_secret
        self.ttl = ttl
        self._found: list[str] | None = None
        self._at = 0.0
        self._lock = threading.Lock()
        self._refreshing = False

    def paths(self) -> list[str]:
        """The secrets found by the latest completed scan (blocking only for the very first)."""
        with self._lock:
            if self._found is None:
                self._found, self._at = scan(self.is_secret), time.monotonic()
            elif time.monotonic() - self._at > self.ttl and not self._refreshing:
                self._refreshing = True
                threading.Thread(target=self._refresh, name="starweave-secret-scan", daemon=True).start()
            return list(self._found)

    def _refresh(self) -> None:
        found = scan(self.is_secret)
        with self._lock:
            self._found, self._at, self._refreshing = found, time.monotonic(), False
