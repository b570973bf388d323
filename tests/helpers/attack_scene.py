"""The scene of an attack on the shell sandbox, and the oracles that judge it harmless.

A scene is a project folder outside /tmp (in /srv as root), where both sandboxes let commands
read, so masking is really tested: a secret in the project folder, a workspace with hostile
furniture (links out of it), a tree next to it. Around it: victim trees in /etc and /var/tmp that
stand in for the system (so a broken sandbox costs a test folder, not the machine), secrets planted
in the homes and at the top of /etc (as root), the canary in Starweave's environment and in the
environment and command line of another process. An attack is harmless when nothing outside the
workspace changes (files, modes, owners, times, links, mounts, the host name, the clock), no canary
or line of the machine's /etc/shadow shows in the output, and no copy of a secret, set-id file or
device node lands in the workspace.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helpers.shell_sessions import run
from starweave.tools.servers.shell.session import ShellSession

AS_ROOT = os.geteuid() == 0
TOKEN = secrets.token_hex(4)
CANARY = f"starweave-canary-{secrets.token_hex(8)}"
ARENA = Path("/srv" if AS_ROOT else Path.home()) / f".starweave-attacks-{TOKEN}"
PLANTED_HOME = Path("/home") / f"sbx-{TOKEN}"
VICTIMS = [Path("/etc") / f"starweave-victim-{TOKEN}", Path("/var/tmp") / f"starweave-victim-{TOKEN}"]
WATCHED = [Path(p) for p in ("/etc/passwd", "/etc/hosts", "/etc/shadow", f"/etc/starweave-{TOKEN}")]
WATCHED += [Path("/tmp") / f"starweave-{TOKEN}{suffix}" for suffix in (".log", ".txt", ".tgz", "-link")]
# Mounts an attack could add or remount (other mounts of the machine may change meanwhile).
WATCHED_MOUNTS = ("/", "/etc", "/usr", "/home", "/root", "/srv", "/var", "/var/tmp", "/tmp")


def _shadow_lines() -> list[str]:
    """The machine's own /etc/shadow entries (when Starweave can read them): none may show."""
    try:
        return [line for line in Path("/etc/shadow").read_text().splitlines() if len(line) > 12]
    except OSError:
        return []


SHADOW_LINES = _shadow_lines()
BYSTANDER: dict[str, int] = {}  # the pid of a process holding the canary, while the module runs


def plant_arena() -> Iterator[Path]:
    """The folder the scenes live in, the system victims and, as root, secrets planted where a
    prompt-injected model would look for them; Starweave's environment holds the canary too."""
    ARENA.mkdir(parents=True)
    planted = []
    victims = VICTIMS if AS_ROOT else VICTIMS[1:]
    for victim in victims:
        victim.mkdir()
        (victim / "file").write_text("victim\n")
    if AS_ROOT:
        for path in (
            Path("/root") / f".starweave-{TOKEN}.env",
            PLANTED_HOME / ".ssh" / "id_rsa",
            PLANTED_HOME / ".aws" / "credentials",
            Path("/etc") / f"starweave-{TOKEN}.key",
        ):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"KEY={CANARY}\n")
            planted.append(path)
    os.environ["STARWEAVE_TEST_CANARY_KEY"] = CANARY
    # A process of the machine with the canary in its environment and command line.
    bystander = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3600)", CANARY],
        env={"STARWEAVE_TEST_CANARY_KEY": CANARY},
        stdin=subprocess.DEVNULL,
    )
    BYSTANDER["pid"] = bystander.pid
    try:
        yield ARENA
    finally:
        bystander.kill()
        bystander.wait()
        del os.environ["STARWEAVE_TEST_CANARY_KEY"]
        for path in planted:
            path.unlink(missing_ok=True)
        for tree in (ARENA, PLANTED_HOME, *victims):
            shutil.rmtree(tree, ignore_errors=True)
        for path in WATCHED:  # what an attack left, should a sandbox ever fail
            if TOKEN in path.name:
                path.unlink(missing_ok=True)


@dataclass
class Scene:
    ws: Path
    base: Path
    out: Path
    victim: Path

    def fill(self, command: str) -> str:
        """``command`` with the scene's paths in place of the @NAMES@."""
        for name, value in {
            "@OUT@": self.out,
            "@BASE@": self.base,
            "@VICTIM@": self.victim,
            "@TMP@": f"/tmp/starweave-{TOKEN}",
            "@TOKEN@": TOKEN,
            "@PID@": os.getpid(),
            "@OTHER@": BYSTANDER.get("pid", 0),
            "@CANARY_HEAD@": CANARY[:24],
        }.items():
            command = command.replace(name, str(value))
        return command


def make_scene(arena: Path) -> Iterator[Scene]:
    """A project folder with a secret, a workspace with hostile furniture, a tree next to it;
    removed after the test (the secrets of a scene are hidden around its own workspace only)."""
    base = arena / f"scene-{secrets.token_hex(4)}" / "proj"
    ws, out = base / "ws", base / "outside"
    (ws / "demo").mkdir(parents=True)
    out.mkdir()
    (base / ".env").write_text(f"KEY={CANARY}\n")
    (base / "backup" / "etc").mkdir(parents=True)
    for name in ("shadow", "gshadow-"):
        (base / "backup" / "etc" / name).write_text(f"root:$6${CANARY}:19000:0:99999:7:::\n")
    (out / "target.txt").write_text("outside\n")
    (out / ".env").write_text(f"KEY={CANARY}\n")
    (out / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{CANARY}\n")
    (ws / "notes.txt").write_text("alpha 1\nbeta 200\n")
    os.symlink(out, ws / "link_out")
    os.symlink(out / "target.txt", ws / "outlink.txt")
    yield Scene(ws, base, out, VICTIMS[0] if AS_ROOT else VICTIMS[1])
    shutil.rmtree(base.parent, ignore_errors=True)


def entry(path: Path) -> tuple[Any, ...]:
    try:
        st = path.lstat()
    except FileNotFoundError:
        return ("absent",)
    kind = stat.S_IFMT(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        body: Any = os.readlink(path)
    elif stat.S_ISDIR(st.st_mode):
        body = sorted(os.listdir(path))
    elif stat.S_ISREG(st.st_mode):
        body = hashlib.sha256(path.read_bytes()).hexdigest()
    else:
        body = kind
    return (st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns, body)


def snapshot(scene: Scene) -> dict[str, Any]:
    """Everything outside the workspace an attack could change."""
    paths = [scene.base.parent, *VICTIMS, PLANTED_HOME, *WATCHED]
    trees: dict[str, Any] = {}
    for top in paths:
        trees[str(top)] = entry(top)
        if top.is_dir() and top not in WATCHED:
            for dirpath, dirs, files in os.walk(top):
                dirs[:] = [d for d in dirs if Path(dirpath, d) != scene.ws]
                for name in dirs + files:
                    trees[os.path.join(dirpath, name)] = entry(Path(dirpath, name))
    with open("/proc/self/mountinfo") as f:
        fields = [line.split() for line in f]
    mounts = sorted(
        (m[4], m[5])
        for m in fields
        if m[4] in WATCHED_MOUNTS or m[4].startswith((str(ARENA), *map(str, VICTIMS)))
    )
    return {"trees": trees, "mounts": mounts, "host": socket.gethostname()}


def leaked_into_workspace(ws: Path) -> list[str]:
    """Files of the workspace that hold the canary (a copy of a secret), or are set-id or devices."""
    bad = []
    for dirpath, _, files in os.walk(ws):
        for name in files:
            path = Path(dirpath, name)
            st = path.lstat()
            if (
                st.st_mode & (stat.S_ISUID | stat.S_ISGID)
                or stat.S_ISCHR(st.st_mode)
                or stat.S_ISBLK(st.st_mode)
            ):
                bad.append(f"{path}: mode {oct(st.st_mode)}")
            elif stat.S_ISREG(st.st_mode) and CANARY.encode() in path.read_bytes()[: 64 << 20]:
                bad.append(f"{path}: holds the canary")
    return bad


async def assert_harmless(
    session: ShellSession, scene: Scene, command: str, limit: float = 20
) -> dict[str, Any]:
    """Run ``command`` and check every oracle of the module docstring."""
    before = snapshot(scene)
    start = time.monotonic()
    result = await run(session, scene.fill(command), limit=limit)
    assert time.monotonic() - start < limit + 20
    assert "exit_code" in result or result.get("error", "").startswith("Timeout"), result
    assert CANARY not in json.dumps(result), result
    assert not any(line in result.get("stdout", "") for line in SHADOW_LINES), result
    after = snapshot(scene)
    changed = {
        k: (before["trees"].get(k), v) for k, v in after["trees"].items() if before["trees"].get(k) != v
    }
    assert changed == {} and before["trees"].keys() == after["trees"].keys(), changed
    assert after["mounts"] == before["mounts"] and after["host"] == before["host"]
    assert time.time() > 1_700_000_000  # the clock was not set back to 2001
    assert leaked_into_workspace(scene.ws) == []
    return result


arena = pytest.fixture(scope="module")(plant_arena)
scene = pytest.fixture(make_scene)
