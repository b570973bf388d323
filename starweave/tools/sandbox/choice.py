"""Which sandbox confines the shell commands here: SHELL.SANDBOX and what really works.

``auto`` takes bubblewrap when it works, else Landlock when it works, else refuses to start;
``bwrap`` and ``landlock`` require that one; ``none`` (and MODE unrestricted) runs unconfined, which
the run header, ``starweave doctor`` and the device's registration then say plainly.

"Works" is found out by starting ``true`` through the exact launch path a command takes (bubblewrap
with every hardening option, the launcher, the seccomp filter, the Landlock ruleset), once per
process and setting; bubblewrap is looked up on PATH. Call :func:`ensure_sandbox` when a command,
device or server starts, so that a required sandbox that is missing is reported there.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass

from starweave.config.models import ShellConfig
from starweave.errors import SandboxUnavailable, SeccompUnsupported
from starweave.tools.sandbox import landlock
from starweave.tools.sandbox.launch import Launch, known_bwrap_variants, remember_bwrap_userns
from starweave.tools.sandbox.seccomp import machine_arch

logger = logging.getLogger(__name__)

PROBE_TIMEOUT = 30.0
PID_MAX = "/proc/sys/kernel/pid_max"
NO_SANDBOX_WARNING = "NOTHING confines the model's shell commands"


@dataclass(frozen=True)
class SandboxChoice:
    """The sandbox the shell commands run in, and why."""

    kind: str  # bwrap | landlock | none
    setting: str  # SHELL.SANDBOX, or "unrestricted" for MODE unrestricted
    reason: str = ""
    landlock_abi: int = 0
    bwrap_exe: str | None = None

    @property
    def confined(self) -> bool:
        """Whether a sandbox confines the commands."""
        return self.kind != "none"

    def describe(self) -> str:
        """One line for the run header, doctor and the device's registration."""
        if self.kind == "bwrap":
            return "bubblewrap (own namespaces, read-only system, no capabilities, seccomp, limits)"
        if self.kind == "landlock":
            return f"Landlock ABI {self.landlock_abi} ({landlock.confinement_text(os.geteuid() == 0)})"
        why = "SHELL.MODE is unrestricted" if self.setting == "unrestricted" else "SHELL.SANDBOX is none"
        return f"none: {NO_SANDBOX_WARNING} ({why})"


_lock = threading.Lock()
_bwrap_cache: dict[tuple[str, bool], tuple[bool, str]] = {}
_landlock_cache: dict[bool, tuple[bool, str]] = {}
_chosen: dict[tuple[str, str, bool, str | None], SandboxChoice] = {}
_last_choice: SandboxChoice | None = None


def _run_probe(launch: Launch, workspace: str) -> tuple[bool, str]:
    true = shutil.which("true", path="/usr/bin:/bin") or "/bin/true"
    env = launch.base_env()
    prepared = launch.prepare(true, [true], workspace, env)
    try:
        done = subprocess.run(
            prepared.argv,
            env=env,
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            pass_fds=prepared.pass_fds,
        )
    except subprocess.TimeoutExpired:
        return False, f"the probe did not finish within {PROBE_TIMEOUT:g}s"
    except OSError as exc:
        return False, exc.strerror or str(exc)
    finally:
        prepared.close()
    if done.returncode == 0:
        return True, ""
    err = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return False, (err[-1] if err else f"exit code {done.returncode}")


def _read_pid_max() -> str | None:
    try:
        with open(PID_MAX) as f:
            return f.read().strip()
    except OSError:
        return None


def _guarded_probe(launch: Launch) -> tuple[bool, str]:
    """Start ``true`` as ``launch`` would, in a throwaway workspace. As root the launcher sets the
    pid_max of the command's own PID namespace; should the kernel have applied it to the whole
    machine instead, it is put back and this sandbox is reported as not working."""
    before = _read_pid_max()
    with tempfile.TemporaryDirectory(prefix="starweave-probe-") as ws:
        launch.workspace = os.path.realpath(ws)
        launch.config = launch.config.model_copy(update={"workspace": launch.workspace})
        result = _run_probe(launch, launch.workspace)
    if before is not None and _read_pid_max() != before:
        with open(PID_MAX, "w") as f:
            f.write(before)
        return False, "this kernel has no per-namespace pid_max, so the sandbox is not used"
    return result


def probe_bwrap_sync(allow_network: bool) -> tuple[bool, str]:
    """Whether hardened bubblewrap (found on PATH) starts a command here, with the reason if not."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False, "bwrap is not installed (apt-get install bubblewrap)"
    key = (os.path.realpath(exe), allow_network)
    with _lock:
        if key in _bwrap_cache:
            return _bwrap_cache[key]
        try:
            machine_arch()
        except SeccompUnsupported as exc:
            result = (False, str(exc))
        else:
            config = ShellConfig(workspace="/", allow_network=allow_network)
            result = _guarded_probe(Launch("bwrap", config, "/", bwrap_exe=exe, bwrap_userns=True))
            if not result[0] and os.geteuid() == 0:
                # A user namespace cannot mount /proc where part of it is covered (containers):
                # as root, the initial user namespace with every capability dropped does as well.
                fallback = _guarded_probe(Launch("bwrap", config, "/", bwrap_exe=exe, bwrap_userns=False))
                if fallback[0]:
                    result = fallback
                    remember_bwrap_userns(exe, False)
                else:
                    result = (False, f"{result[1]}; without a user namespace: {fallback[1]}")
            if result[0] and os.path.realpath(exe) not in known_bwrap_variants():
                remember_bwrap_userns(exe, True)
        _bwrap_cache[key] = result
        return result


async def probe_bwrap(allow_network: bool) -> tuple[bool, str]:
    """:func:`probe_bwrap_sync` in a worker thread."""
    return await asyncio.to_thread(probe_bwrap_sync, allow_network)


def probe_landlock_sync(allow_network: bool) -> tuple[bool, str]:
    """Whether the Landlock launch path works here, with the reason if not."""
    with _lock:
        if allow_network in _landlock_cache:
            return _landlock_cache[allow_network]
        abi = landlock.landlock_abi()
        if abi < 1:
            result = (False, "the kernel has no Landlock (Linux 5.13+ with landlock in the lsm= list)")
        elif abi < landlock.USER_MIN_ABI and os.geteuid() != 0:
            result = (False, landlock.user_abi_problem(abi))
        else:
            try:
                machine_arch()
            except SeccompUnsupported as exc:
                result = (False, str(exc))
            else:
                config = ShellConfig(workspace="/", allow_network=allow_network, sandbox="landlock")
                result = _guarded_probe(Launch("landlock", config, "/", landlock_abi=abi))
        _landlock_cache[allow_network] = result
        return result


def _missing(shell: ShellConfig, bwrap_detail: str | None, landlock_detail: str | None) -> SandboxUnavailable:
    found = "; ".join(
        f"{name}: {detail}"
        for name, detail in (("bubblewrap", bwrap_detail), ("Landlock", landlock_detail))
        if detail is not None
    )
    missing = {
        "auto": "neither bubblewrap nor Landlock works here",
        "bwrap": "bubblewrap does not work here",
        "landlock": "Landlock does not work here",
    }
    return SandboxUnavailable(
        f"SHELL.SANDBOX is {shell.sandbox} but {missing[shell.sandbox]} ({found}); install "
        "bubblewrap (apt-get install bubblewrap) and allow user namespaces, or use a kernel with Landlock, "
        "or set SHELL.SANDBOX: none to run the model's commands unconfined"
    )


def choose_sandbox(shell: ShellConfig) -> SandboxChoice:
    """The sandbox for ``shell`` on this machine (blocking; probes are cached per process)."""
    global _last_choice
    if shell.mode == "unrestricted":
        choice = SandboxChoice("none", "unrestricted")
    elif shell.sandbox == "none":
        choice = SandboxChoice("none", "none")
    else:
        key = (shell.sandbox, shell.mode, shell.allow_network, shutil.which("bwrap"))
        cached = _chosen.get(key)
        if cached is None:
            cached = _probe_choice(shell)
            _chosen[key] = cached
        choice = cached
    _last_choice = choice
    return choice


def _probe_choice(shell: ShellConfig) -> SandboxChoice:
    bwrap_detail = landlock_detail = None
    if shell.sandbox in ("auto", "bwrap"):
        ok, bwrap_detail = probe_bwrap_sync(shell.allow_network)
        if ok:
            return SandboxChoice("bwrap", shell.sandbox, bwrap_exe=shutil.which("bwrap"))
    if shell.sandbox in ("auto", "landlock"):
        ok, landlock_detail = probe_landlock_sync(shell.allow_network)
        if ok:
            reason = f"bubblewrap: {bwrap_detail}" if bwrap_detail else ""
            return SandboxChoice("landlock", shell.sandbox, reason, landlock_abi=landlock.landlock_abi())
    raise _missing(shell, bwrap_detail, landlock_detail)


async def select_sandbox(shell: ShellConfig) -> SandboxChoice:
    """:func:`choose_sandbox` in a worker thread."""
    return await asyncio.to_thread(choose_sandbox, shell)


async def ensure_sandbox(shell: ShellConfig) -> SandboxChoice:
    """The start-up check of anything that will run shell commands: the choice, or
    SandboxUnavailable (a ConfigError: one line, exit code 2) when the required sandbox is missing.
    Running unconfined is logged as a warning; a fallback from bubblewrap to Landlock as info."""
    choice = await select_sandbox(shell)
    if not choice.confined:
        logger.warning("%s: %s", NO_SANDBOX_WARNING, choice.describe())
    elif choice.reason:
        logger.info("shell sandbox: %s (%s)", choice.describe(), choice.reason)
    return choice


def current_confinement() -> dict[str, str]:
    """What confines the shell commands of this process, for the device's registration."""
    if _last_choice is None:
        return {"sandbox": "unknown", "command_confinement": "not checked yet"}
    return {"sandbox": _last_choice.kind, "command_confinement": _last_choice.describe()}


__all__ = [
    "SandboxChoice",
    "choose_sandbox",
    "current_confinement",
    "ensure_sandbox",
    "probe_bwrap",
    "probe_bwrap_sync",
    "probe_landlock_sync",
    "select_sandbox",
]
