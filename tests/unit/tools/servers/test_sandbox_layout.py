"""What the sandboxes hide and grant, and the command lines and environment they start commands
with (pure: real file trees under tmp_path, no process started)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from starweave.config.models import ShellConfig
from starweave.tools.confine.hidden import HiddenPath, candidate_paths, hidden_paths
from starweave.tools.confine.paths import is_within
from starweave.tools.sandbox import landlock
from starweave.tools.sandbox.bwrap import BwrapLayout, bwrap_argv, filesystem_args, namespace_args
from starweave.tools.sandbox.launch import CLOSED_ENV, Launch, clean_env, command_env, launcher_code


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home folder with the usual secrets and harmless neighbours."""
    home = tmp_path / "home" / "alice"
    for folder in (".ssh", ".aws", ".config/gcloud", ".config/other", "project", ".local/share/keyrings"):
        (home / folder).mkdir(parents=True)
    for name in (".ssh/id_rsa", ".aws/credentials", ".env", "server.pem", ".netrc", "notes.txt", ".bashrc"):
        (home / name).write_text("x")
    (home / ".bash_history").write_text("export OPENAI_API_KEY=sk-canary")
    (home / "link-to-ssh").symlink_to(home / ".ssh")
    return home


def test_every_secret_of_a_home_is_hidden_and_nothing_else(home: Path) -> None:
    found = {h.path: h.is_dir for h in hidden_paths([], homes=[str(home)]) if h.path.startswith(str(home))}
    expected_dirs = {".ssh", ".aws", ".config/gcloud", ".local/share/keyrings"}
    expected_files = {".env", "server.pem", ".netrc", ".bash_history"}
    assert found == {
        **{str(home / d): True for d in expected_dirs},
        **{str(home / f): False for f in expected_files},
    }


def test_the_workspace_and_read_roots_are_never_hidden(home: Path) -> None:
    paths = {h.path for h in hidden_paths([str(home / ".aws"), str(home)], homes=[str(home)])}
    assert not any(p.startswith(str(home)) for p in paths)


def test_system_secrets_are_candidates() -> None:
    candidates = set(candidate_paths(homes=[]))
    for path in ("/etc/shadow", "/root", "/run/secrets", "/run/user"):
        if os.path.lexists(path):
            assert path in candidates, path
    assert not any(p.startswith(("/proc/", "/dev/")) for p in candidates)  # replaced trees


def test_nested_secrets_collapse_into_their_folder(tmp_path: Path) -> None:
    home = tmp_path / "h"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("k")
    (home / ".ssh" / ".env").write_text("k")
    paths = [h.path for h in hidden_paths([], homes=[str(home)]) if h.path.startswith(str(home))]
    assert paths == [str(home / ".ssh")]


def test_landlock_read_rules_walk_around_the_hidden_paths(home: Path, tmp_path: Path) -> None:
    hidden = [h for h in hidden_paths([], homes=[str(home)]) if h.path.startswith(str(home))]
    top = str(tmp_path / "home")
    grants = set(landlock.readable_rules(hidden, skip=(), top=top))
    assert str(home / "project") in grants and str(home / "notes.txt") in grants
    assert str(home / ".config" / "other") in grants and str(home / ".bashrc") in grants
    assert not any(g == h.path or g.startswith(h.path + "/") for g in grants for h in hidden)
    assert str(home) not in grants  # it holds secrets: its entries are granted one by one
    assert str(home / "link-to-ssh") not in grants  # a symlink: its target decides


def test_landlock_spec_grants_writes_only_to_the_workspace(tmp_path: Path) -> None:
    ws = str(tmp_path)
    spec = landlock.launcher_spec(7, ws, [], readonly=False, allow_network=False)
    writers = [path for path, rights in spec["rules"] if rights & landlock.WRITE_FILE]
    assert sorted(writers) == sorted([ws, *landlock.DEVICES])
    assert spec["net"] == landlock.NET_BIND_TCP | landlock.NET_CONNECT_TCP
    assert spec["scoped"] == landlock.SCOPE_ABSTRACT_UNIX_SOCKET | landlock.SCOPE_SIGNAL
    assert spec["fs"] & landlock.MAKE_CHAR and spec["fs"] & landlock.MAKE_FIFO
    assert not any(rights & (landlock.MAKE_CHAR | landlock.MAKE_BLOCK) for _, rights in spec["rules"])
    readonly = landlock.launcher_spec(7, ws, [], readonly=True, allow_network=True)
    assert dict(readonly["rules"])[ws] == landlock.READ and readonly["net"] == 0
    old = landlock.launcher_spec(1, ws, [], readonly=False, allow_network=False)
    assert old["net"] == 0 and old["scoped"] == 0 and not old["fs"] & landlock.REFER


def test_bwrap_masks_come_before_the_binds_they_must_not_cover(tmp_path: Path) -> None:
    # A real folder outside /tmp: masks of paths that no longer exist are left out (the arguments
    # are not run).
    secret = tempfile.mkdtemp(dir="/var/tmp", prefix="starweave-test-secret-")
    try:
        _check_mask_order(tmp_path, secret)
    finally:
        os.rmdir(secret)


def _check_mask_order(tmp_path: Path, secret: str) -> None:
    ws = f"{secret}/ws"
    docs = tmp_path / "docs"  # a read root under /tmp, which the sandbox replaces
    docs.mkdir()
    layout = BwrapLayout(
        workspace=ws,
        cwd=ws,
        home="/tmp/home",
        hidden=[HiddenPath(secret, True), HiddenPath("/etc/shadow", False)],
        runtime=[f"{secret}/python", "/usr/lib/python3"],
        read_roots=[str(docs)],
    )
    args = filesystem_args(layout)
    mask = args.index(secret)
    assert args[mask - 1] == "--tmpfs" and args[mask - 3] == "--size"
    assert args.index(ws) > mask and args[args.index(ws) - 1] == "--bind"
    assert args.index(f"{secret}/python") > mask and "/usr/lib/python3" not in args  # visible anyway
    assert args[args.index(str(docs)) - 1] == "--ro-bind" and args.index(str(docs)) > args.index("/tmp")
    assert args[-2:] == ["--remount-ro", secret]  # after the binds inside it
    shadow = args.index("/etc/shadow")
    assert args[shadow - 2 : shadow + 1] == ["--ro-bind", "/dev/null", "/etc/shadow"]
    assert args[:3] == ["--ro-bind", "/", "/"] and "--proc" in args and "--dev" in args
    readonly = filesystem_args(BwrapLayout(workspace=ws, cwd=ws, home="/tmp/home", readonly=True))
    assert readonly[readonly.index(ws) - 1] == "--ro-bind"


def test_bwrap_namespaces_and_root_capabilities() -> None:
    plain = namespace_args(allow_network=False, as_root=False)
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent"):
        assert flag in plain
    assert "--new-session" in plain and "--cap-add" not in plain
    root = namespace_args(allow_network=True, as_root=True)
    assert "--unshare-net" not in root
    assert root[root.index("--cap-drop") + 1] == "ALL"
    assert [root[i + 1] for i, a in enumerate(root) if a == "--cap-add"] == ["CAP_SYS_ADMIN", "CAP_SETPCAP"]
    initial = namespace_args(allow_network=False, as_root=True, userns=False)
    assert "--unshare-user" not in initial and "--unshare-pid" in initial and "ALL" in initial
    assert "--unshare-user" in namespace_args(allow_network=False, as_root=False, userns=False)


def test_bwrap_environment_is_exactly_the_given_one(tmp_path: Path) -> None:
    layout = BwrapLayout(workspace=str(tmp_path), cwd=str(tmp_path), home="/tmp/home")
    argv = bwrap_argv("/usr/bin/bwrap", layout, {"A": "1"}, ["/bin/true"])
    assert "--clearenv" in argv and argv[argv.index("--setenv") : argv.index("--setenv") + 3] == [
        "--setenv",
        "A",
        "1",
    ]
    assert argv[-2:] == ["--", "/bin/true"]


def test_clean_environment_closes_tool_configuration() -> None:
    env = clean_env("/h", "/t")
    assert env["HOME"] == "/h" and env["TMPDIR"] == "/t" and env["PATH"] == "/usr/local/bin:/usr/bin:/bin"
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["GIT_PAGER"] == env["PAGER"] == "cat" and env["GIT_TERMINAL_PROMPT"] == "0"


@pytest.mark.parametrize(
    "name",
    [
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_COUNT",
        "GIT_SSH_COMMAND",
        "LD_PRELOAD",
        "HOME",
        "PATH",
        "BASH_FUNC_x%%",
    ],
)
def test_assignments_cannot_reopen_a_closed_setting(name: str) -> None:
    base = clean_env("/h", "/t")
    env = command_env(base, {name: "/tmp/evil", "LANG": "de_DE.UTF-8", "TZ": "UTC"})
    assert env.get(name) == base.get(name)
    assert env["TZ"] == "UTC" and env["LANG"] == base["LANG"]  # LANG is part of the clean base
    assert set(CLOSED_ENV) <= set(env)


def test_limits_and_spec_per_sandbox(tmp_path: Path) -> None:
    config = ShellConfig(workspace=str(tmp_path), max_memory_mb=512, max_processes=64, max_file_size_mb=8)
    bwrap = Launch("bwrap", config, str(tmp_path), as_root=True)
    limits = bwrap.limits()
    assert limits["data"] == 512 << 20 and limits["fsize"] == 8 << 20 and limits["nproc"] == 64
    assert limits["core"] == 0 and limits["as"] >= limits["data"]
    spec = bwrap.spec("ls")
    assert spec["seccomp"] and spec["drop_caps"] and spec["bwrap_pid_max"] >= 64 and "supervise" not in spec
    lock = Launch("landlock", config, str(tmp_path), landlock_abi=3, as_root=False).spec("ls")
    assert lock["supervise"] and lock["landlock"]["fs"] and lock["nproc_mode"] == "count"
    none = Launch("none", config, str(tmp_path), as_root=False).spec("ls")
    assert none["seccomp"] and "landlock" not in none and none["supervise"]
    root_none = Launch("none", config, str(tmp_path), as_root=True).spec("ls")
    assert root_none["pidns"] and root_none["pid_max"] >= 64  # root ignores RLIMIT_NPROC
    unrestricted = Launch("unrestricted", config, str(tmp_path), as_root=True).spec("ls")
    assert "seccomp" not in unrestricted and not unrestricted["drop_caps"] and unrestricted["limits"]


def test_launcher_code_is_compiled_once_and_literal_specs_are_safe(tmp_path: Path) -> None:
    import sys

    python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    assert launcher_code(python).startswith("import marshal;exec(")
    source = launcher_code("/some/other/python3")
    assert source.startswith('"""The launcher') and source.count("from __future__") == 1
    compile(source, "launcher", "exec")
    spec = Launch("none", ShellConfig(workspace=str(tmp_path)), str(tmp_path)).spec("a'b\"c\n")
    assert eval(repr(spec), {"__builtins__": {}}) == spec


def test_home_is_never_the_workspace_or_around_it(tmp_path: Path) -> None:
    for ws in ("/tmp/home", "/tmp/home/project", "/srv/project"):
        home = Launch("bwrap", ShellConfig(workspace=ws), ws).base_env()["HOME"]
        assert not is_within(home, ws) and not is_within(ws, home), (ws, home)
    supervised = Launch("landlock", ShellConfig(workspace=str(tmp_path)), str(tmp_path))
    assert not supervised.private_base.startswith(str(tmp_path))


def test_secrets_next_to_the_workspace_are_hidden_but_not_those_inside(tmp_path: Path) -> None:
    # Not under /tmp: both sandboxes hide /tmp as a whole, so nothing is searched there.
    project = Path("/var/tmp") / f"starweave-near-{tmp_path.name}"
    ws, out = project / "ws", project / "outside" / "deep"
    try:
        ws.mkdir(parents=True)
        out.mkdir(parents=True)
        (out.parent / ".aws").mkdir()
        for path in (project / ".env", out / "deploy.pem", ws / ".env", project / "a.txt"):
            path.write_text("secret")
        found = {h.path for h in hidden_paths([str(ws)], homes=[])}
        assert {str(project / ".env"), str(out / "deploy.pem"), str(out.parent / ".aws")} <= found
        assert str(ws / ".env") not in found and str(project / "a.txt") not in found
    finally:
        shutil.rmtree(project)
