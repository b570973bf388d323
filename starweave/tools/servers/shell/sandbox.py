"""Bubblewrap confinement for each simple command.

Inside the sandbox the whole file system is read-only, ``/tmp`` is a private tmpfs, the workspace
is the only writable place (read-only too in readonly mode), the network is unshared unless
SHELL.ALLOW_NETWORK, the PID namespace is private and the environment is exactly the clean one.
Secrets that a policy hole could still reach (``/etc/shadow``, ``/root``, ``~/.ssh`` ...) are masked.
Whether bwrap works here is found out by running it once (cached per network setting).
"""

from __future__ import annotations

import asyncio
import glob
import logging
import os
import shutil

from starweave.config.models import ShellConfig
from starweave.errors import ToolError
from starweave.tools.servers.shell.paths import is_within

logger = logging.getLogger(__name__)

MASKED_FILES = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/security/opasswd",
)
MASKED_DIRS = ("/root", "/etc/sudoers.d", "/etc/ssl/private")
HOME_SECRET_DIRS = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".password-store",
)
PROBE_TIMEOUT = 15.0

_probe_cache: dict[bool, tuple[bool, str]] = {}
_warned = False


def _base_args(allow_network: bool) -> list[str]:
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if not allow_network:
        args.append("--unshare-net")
    return [*args, "--unshare-pid", "--die-with-parent", "--new-session"]


async def probe_bwrap(allow_network: bool) -> tuple[bool, str]:
    """Run ``bwrap ... true`` once (cached) and report whether it works, with the reason if not."""
    if allow_network in _probe_cache:
        return _probe_cache[allow_network]
    exe = shutil.which("bwrap")
    if exe is None:
        result = (False, "bwrap is not installed (apt-get install bubblewrap)")
    else:
        true = shutil.which("true") or "/bin/true"
        proc = await asyncio.create_subprocess_exec(
            exe,
            *_base_args(allow_network),
            "--",
            true,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            _, err = await asyncio.wait_for(proc.communicate(), PROBE_TIMEOUT)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            err = b"bwrap did not finish"
        ok = proc.returncode == 0
        result = (ok, "" if ok else err.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}")
    _probe_cache[allow_network] = result
    return result


async def sandbox_enabled(config: ShellConfig) -> bool:
    """Whether commands run inside bubblewrap for ``config``.

    ``none`` or unrestricted mode: no. ``bwrap``: yes, or ToolError when it does not work here.
    ``auto``: yes when the probe succeeds (a warning is logged once otherwise)."""
    global _warned
    if config.mode == "unrestricted" or config.sandbox == "none":
        return False
    ok, detail = await probe_bwrap(config.allow_network)
    if ok:
        return True
    if config.sandbox == "bwrap":
        raise ToolError(
            f"SHELL.SANDBOX is 'bwrap' but bubblewrap does not work here: {detail}. Install bubblewrap "
            "(apt-get install bubblewrap), allow unprivileged user namespaces, "
            "or set SHELL.SANDBOX to auto/none"
        )
    if not _warned:
        logger.warning("bubblewrap is not usable (%s); shell commands run with the argv policy only", detail)
        _warned = True
    return False


def _masks(workspace: str, read_roots: list[str]) -> list[str]:
    args: list[str] = []
    for path in MASKED_FILES:
        if os.path.isfile(path) and not os.path.islink(path):
            args += ["--ro-bind", "/dev/null", path]
    dirs = list(MASKED_DIRS)
    for home in glob.glob("/home/*"):
        dirs += [os.path.join(home, d) for d in HOME_SECRET_DIRS]
    for path in dirs:
        if os.path.isdir(path) and not os.path.islink(path) and not is_within(path, workspace):
            args += ["--tmpfs", path]
    # A read root or the workspace under a masked directory is bound back below.
    for root in read_roots:
        if os.path.isdir(root) and any(is_within(root, d) for d in dirs):
            args += ["--ro-bind", root, root]
    return args


def bwrap_command(
    config: ShellConfig,
    workspace: str,
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    read_roots: list[str] | None = None,
) -> list[str]:
    """The full ``bwrap ... -- argv`` command line for one simple command.

    Order matters: the tmpfs on /tmp and the masks come first, the workspace bind after them, since
    the workspace may live under /tmp or /root."""
    exe = shutil.which("bwrap") or "bwrap"
    bind = "--ro-bind" if config.mode == "readonly" else "--bind"
    args = [exe, *_base_args(config.allow_network), *_masks(workspace, read_roots or [])]
    args += [bind, workspace, workspace, "--chdir", cwd, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return [*args, "--", *argv]
