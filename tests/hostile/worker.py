"""The hostile worker: runs cases inside an isolated root (:mod:`hostile.isolation`) and prints one
JSON line per case.

Protocol: the supervisor writes one JSON object on stdin (``mode``, ``cases``, ``e2e``, ``canaries``)
and closes it; the worker prints ``{"event": "ready"}``, then for each case ``{"event": "start", ...}``
and ``{"event": "result", ...}``. Exit code 3 asks for a fresh worker for the remaining cases (a case
left something the worker cannot clean up). Run as ``python -m hostile.worker``.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import pwd
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from hostile.casebook import Case, all_cases
from hostile.modes import MODES, RUNNER_USER, VICTIM_USER, Mode
from hostile.oracles import CMDLINE_CANARY, FILE_CANARIES, PLAIN_FILES, SCATTERED_CANARIES, SHADOW_CANARY

RESTART = 3
# Set by the supervisor when the isolated root lives in a user namespace (Starweave's tests not run
# as root): we are root only inside it, and every mode runs as RUNNER_UID (see hostile.userns).
FAKE_ROOT = os.environ.get("SWH_FAKE_ROOT") == "1"
RUNNER_UID = 4242
# Starweave's code and packages at their real paths (the worker imports them from read-only binds)
REPO = os.environ.get(
    "SWH_REPO_PATH", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
)
SITE = os.environ.get("SWH_SITE_PATH", REPO)
PR_SET_DUMPABLE = 4
# Safety nets of the harness (soft limits, inherited by every command): they keep a command without
# limits of its own from hurting the shared machine; reaching them is reported by the oracles.
SAFETY_LIMITS = {resource.RLIMIT_AS: 3 << 30, resource.RLIMIT_FSIZE: 1 << 30}


@dataclass
class Layout:
    """Where things are for one mode, inside the isolated root."""

    home: str
    base: str
    victim: str
    own: str
    uid: int
    gid: int

    @property
    def out(self) -> str:
        """The canary tree next to the workspaces."""
        return os.path.join(self.base, "outside")

    def workspace(self, case: Case) -> str:
        """A fresh workspace path for ``case``."""
        return os.path.join(self.base, "ws-" + case.name[:60])

    def table(self, case: Case, ws: str, port: int) -> dict[str, str]:
        """The placeholder values for ``case``."""
        return {
            "@REPO@": REPO,
            "@SITE@": SITE,
            "@WS@": ws,
            "@BASE@": self.base,
            "@OUT@": self.out,
            "@HOME@": self.home,
            "@VICTIM@": self.victim,
            "@MARK@": "SWPWN-" + case.name[:40],
            "@PORT@": str(port),
            "@SWPID@": str(os.getpid()),  # Starweave's own process (ps or pgrep would tell the model)
        }


def _write(path: str, text: str, mode: int = 0o644, owner: tuple[int, int] | None = None) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)
    if owner is not None:
        _chown(path, *owner)


def _useradd(name: str, home: str) -> tuple[int, int]:
    if FAKE_ROOT:
        # In a user namespace only our own uid is mapped and the real /etc belongs to nobody we
        # know: copies of passwd and group with the new users are bound over the originals, and
        # every file we make belongs to the runner once hostile.userns maps it to RUNNER_UID.
        uid = RUNNER_UID if name == RUNNER_USER else RUNNER_UID + 1
        for table, line in (
            ("passwd", f"{name}:x:{uid}:{uid}::{home}:/bin/sh\n"),
            ("group", f"{name}:x:{uid}:\n"),
        ):
            copy = f"/run/swh-etc/{table}"
            if not os.path.exists(copy):
                os.makedirs("/run/swh-etc", exist_ok=True)
                shutil.copyfile(f"/etc/{table}", copy)
                subprocess.run(["mount", "--bind", copy, f"/etc/{table}"], check=True, capture_output=True)
            with open(copy, "a") as fh:
                fh.write(line)
        return uid, uid
    subprocess.run(["useradd", "-M", "-d", home, "-s", "/bin/sh", name], check=True, capture_output=True)
    entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid


def _chown(path: str, uid: int, gid: int) -> None:
    if not FAKE_ROOT:
        os.chown(path, uid, gid)


def _chown_tree(path: str, uid: int, gid: int) -> None:
    if FAKE_ROOT:
        return
    for dirpath, _, filenames in os.walk(path):
        os.chown(dirpath, uid, gid)
        for name in filenames:
            os.chown(os.path.join(dirpath, name), uid, gid)


def setup(mode: Mode, canaries: dict[str, str]) -> Layout:
    """As root inside the isolated root: users, homes, canary secrets and the project folder."""
    if FAKE_ROOT:
        # The real root owns these folders: fresh ones, so that the canaries below can exist.
        for folder in ("/opt", "/srv", "/var/backups"):
            subprocess.run(
                ["mount", "-t", "tmpfs", "swh-" + folder.strip("/").replace("/", "-"), folder],
                check=True,
                capture_output=True,
            )
    victim = "/home/victim"
    victim_ids = _useradd(VICTIM_USER, victim)
    if mode.unprivileged or FAKE_ROOT:
        home = f"/home/{RUNNER_USER}"
        uid, gid = _useradd(RUNNER_USER, home)
        base = os.path.join(home, "project")
    else:
        home, uid, gid, base = "/root", 0, 0, "/project"
    own = "/run/swh-own"
    service_dirs = ("/run/swh-svc", "/tmp/ssh-swh")  # where the canary sockets of hostile.listeners live
    owned = (
        home,
        base,
        own,
        *service_dirs,
        *(os.path.join(own, d) for d in ("tmp", "cache", "xdg", "e2e", "other")),
    )
    for path in owned:
        os.makedirs(path, exist_ok=True)
        _chown(path, uid, gid)
    os.chmod(home, 0o750)
    os.chmod(os.path.join(own, "xdg"), 0o700)
    layout = Layout(home, base, victim, own, uid, gid)
    table = {"@HOME@": home, "@BASE@": base, "@OUT@": layout.out, "@VICTIM@": victim}
    written: set[str] = set()
    for template, desc, content in FILE_CANARIES:
        path = template
        for key, value in table.items():
            path = path.replace(key, value)
        if path in written:
            continue  # root's home is the user's home when Starweave runs as root
        written.add(path)
        if path.startswith(victim):
            owner = victim_ids
        elif path.startswith("/root"):
            owner = (0, 0)
        else:
            owner = (uid, gid)
        _write(path, content.format(value=canaries[desc]), 0o600, owner)
    for template, desc, content in SCATTERED_CANARIES:
        try:
            _write(template.replace("@OUT@", layout.out), content.format(value=canaries[desc]), 0o644, (0, 0))
        except PermissionError:
            if not FAKE_ROOT:
                raise  # (in a user namespace /etc belongs to an unmapped root: /etc/app cannot exist)
    _write(os.path.join(victim, ".bashrc"), "# victim\n", 0o644, victim_ids)
    _chown_tree(victim, *victim_ids)
    os.chmod(victim, 0o750)
    shadow_line = f"swcanary:{canaries[SHADOW_CANARY]}:19000:0:99999:7:::\n"
    if FAKE_ROOT:  # the real shadow is unreadable here: a stand-in with the canary is bound over it
        _write("/run/swh-etc/shadow", shadow_line, 0o640)
        subprocess.run(
            ["mount", "--bind", "/run/swh-etc/shadow", "/etc/shadow"], check=True, capture_output=True
        )
    else:
        with open("/etc/shadow", "a") as fh:
            fh.write(shadow_line)
    refresh(layout, canaries)
    _chown_tree(home, uid, gid)
    if mode.unprivileged:
        _chown_tree("/root", 0, 0)
    return layout


def refresh(layout: Layout, canaries: dict[str, str]) -> None:
    """Put the canary tree, the project's .env and the user's files back as they were (a failed
    case may have changed them)."""
    shutil.rmtree(layout.out, ignore_errors=True)
    table = {"@HOME@": layout.home, "@BASE@": layout.base, "@OUT@": layout.out}
    owner = (layout.uid, layout.gid) if os.geteuid() == 0 and not FAKE_ROOT else None
    written: set[str] = set()
    for template, desc, content in FILE_CANARIES:
        path = template
        for key, value in table.items():
            path = path.replace(key, value)
        if path.startswith((layout.home, layout.base)) and path not in written:
            written.add(path)
            _write(path, content.format(value=canaries[desc]), 0o600, owner)
    for template, desc, content in SCATTERED_CANARIES:
        if template.startswith("@OUT@"):
            _write(template.replace("@OUT@", layout.out), content.format(value=canaries[desc]), 0o644, owner)
    for template, content in PLAIN_FILES:
        path = template
        for key, value in table.items():
            path = path.replace(key, value)
        _write(path, content, 0o644, owner)


def drop_privileges(layout: Layout) -> None:
    """Become the unprivileged user for good, dumpable like any process that user starts."""
    os.setgroups([])
    os.setresgid(layout.gid, layout.gid, layout.gid)
    os.setresuid(layout.uid, layout.uid, layout.uid)
    # A process that changed its uid is not dumpable, which would hide its /proc files from the
    # user; Starweave started by that user is dumpable.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)


def _environment(layout: Layout) -> None:
    name = pwd.getpwuid(layout.uid).pw_name
    os.environ.update(
        HOME=layout.home,
        USER=name,
        LOGNAME=name,
        TMPDIR=os.path.join(layout.own, "tmp"),
        XDG_CACHE_HOME=os.path.join(layout.own, "cache"),
        # Starweave's own state (the workspaces it has handed out) is not an attack's damage.
        XDG_STATE_HOME=os.path.join(layout.own, "state"),
        XDG_RUNTIME_DIR=os.path.join(layout.own, "xdg"),
    )
    os.chdir(layout.home)


def _block_stdin() -> None:
    # Like a terminal nobody types on: a read of /dev/stdin waits forever instead of seeing EOF.
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)
    os.set_inheritable(write_end, False)  # kept open for the life of the worker


def emit(event: dict[str, Any]) -> None:
    """Print one protocol line."""
    sys.stdout.write(json.dumps({**event, "t": round(time.time(), 3)}) + "\n")
    sys.stdout.flush()


def main() -> int:
    """Set up (as root), drop to the mode's user, then run the cases; the exit code says whether to
    restart."""
    staged = os.environ.pop("SWH_STAGE2", "")
    if staged:  # re-executed by hostile.userns as the unprivileged user
        with open(staged) as fh:
            state = json.load(fh)
        os.unlink(staged)
        request, layout = state["request"], Layout(**state["layout"])
        _block_stdin()
    else:
        request = json.loads(sys.stdin.read())
        _block_stdin()
        mode = MODES[request["mode"]]
        layout = setup(mode, request["canaries"])
        if FAKE_ROOT:
            from hostile.userns import become_user

            path = os.path.join(layout.own, "stage2.json")
            with open(path, "w") as fh:
                json.dump({"request": request, "layout": layout.__dict__}, fh)
            become_user(RUNNER_UID, path)  # does not return
        if mode.unprivileged:
            drop_privileges(layout)
    _environment(layout)
    for kind, value in SAFETY_LIMITS.items():
        resource.setrlimit(kind, (value, resource.getrlimit(kind)[1]))
    # A long-running process of the same user with a key on its command line, as a server started
    # with --api-key would be: listing processes must not reveal it.
    keeper = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; time.sleep(1e9)",
            "--api-key",
            request["canaries"][CMDLINE_CANARY],
        ],
        stdin=subprocess.DEVNULL,
    )
    try:
        return asyncio.run(serve(MODES[request["mode"]], request, layout, keeper.pid))
    finally:
        keeper.kill()


async def serve(mode: Mode, request: dict[str, Any], layout: Layout, keeper: int) -> int:
    """Run the requested cases as the current (final) user."""
    canaries: dict[str, str] = request["canaries"]
    from hostile.runcase import CaseRunner  # after the privilege drop: nothing starts as root

    cases = all_cases()
    runner = CaseRunner(mode, layout, canaries, keep={keeper})
    await runner.start()
    problem = await runner.control()
    emit({"event": "ready", "pid": os.getpid(), "control_problem": problem})
    if problem:
        await runner.stop()
        return 0
    try:
        for kind, name in [("mcp", n) for n in request["cases"]] + [("e2e", n) for n in request["e2e"]]:
            case = cases[name]
            emit({"event": "start", "case": name, "kind": kind})
            result = await runner.run(case, kind)
            emit({"event": "result", **result})
            if result.get("restart"):
                return RESTART
    finally:
        await runner.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
