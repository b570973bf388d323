"""Usage and configuration errors, as a user meets them: one line on stderr, exit code 2, nothing
started and nothing created. Each case runs the real `starweave` command."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

STARWEAVE = [sys.executable, "-m", "starweave.cli"]


def starweave(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
    full_env.update(env or {})
    return subprocess.run(
        [*STARWEAVE, *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def assert_one_line_usage_error(proc: subprocess.CompletedProcess[str], *expected: str) -> None:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stdout + proc.stderr
    # `starweave client` reports through its own runner, which names itself instead of "error:".
    assert len(lines) == 1 and lines[0].startswith(("error: ", "starweave client: ")), proc.stderr
    for text in expected:
        assert text in lines[0], lines[0]


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


REPLAY = ("--provider", "replay", "--replay-file", "answers.jsonl")
CASES = {
    "port too large": (["server", "--port", "99999"], ["--port 99999", "1-65535"]),
    "negative port": (["server", "--port", "-5"], ["--port -5"]),
    "port not a number": (["server", "--port", "http"], ["--port", "see: starweave server --help"]),
    "unknown host": (["server", "--host", "no-such-host.invalid", "--port", "0"], ["--host"]),
    "bad ws url scheme": (["client", "--ws-server", "http://127.0.0.1:5000/ws"], ["--ws-server", "ws://"]),
    "ws url without host": (["client", "--ws-server", "ws://"], ["--ws-server", "no host"]),
    "ws url garbage": (["client", "--ws-server", "not a url"], ["--ws-server"]),
    "ws url bad port": (["client", "--ws-server", "ws://h:70000/ws"], ["port from 1 to 65535"]),
    "zero heartbeat": (["client", "--heartbeat-interval", "0"], ["--heartbeat-interval"]),
    "missing gguf": (
        ["run", "x", "-w", "ws", "--model", "/no/such/model.gguf"],
        ["model.gguf", "no such file"],
    ),
    "workspace in /usr/local": (["run", "x", "-w", "/usr/local", *REPLAY], ["/usr/local", "inside /usr"]),
    "workspace in ~/.ssh": (["run", "x", "-w", "~/.ssh/agent", *REPLAY], [".ssh", "dot-folder"]),
    "mcp http off loopback": (
        ["mcp", "serve", "bash", "--transport", "http", "--host", "0.0.0.0", "-w", "ws"],
        ["refusing to serve on 0.0.0.0", "--allow-remote"],
    ),
    "mcp http remote without a key": (
        ["mcp", "serve", "files", "--transport", "http", "--host", "0.0.0.0", "--allow-remote", "-w", "ws"],
        ["--allow-remote needs a key", "STARWEAVE_MCP_KEY"],
    ),
    "mcp mobile off loopback": (["mcp", "serve", "mobile", "--host", "0.0.0.0"], ["--allow-remote"]),
    "mcp mobile remote without a key": (
        ["mcp", "serve", "mobile", "--host", "0.0.0.0", "--allow-remote"],
        ["--allow-remote needs a key"],
    ),
    "client workspace in /etc": (
        ["client", "-w", "/etc/agent", "--ws-server", "ws://127.0.0.1:9/ws"],
        ["/etc"],
    ),
    "mcp workspace in home": (["mcp", "serve", "bash", "-w", "~"], ["home folder"]),
    "mcp stdio with remote options": (
        ["mcp", "serve", "bash", "--allow-remote", "-w", "ws"],
        ["--allow-remote and --allow-host apply to --transport http only"],
    ),
    "galaxy workspace in /usr": (
        [
            "galaxy",
            "x",
            "--local",
            "1",
            "--workspace",
            "/usr/lib/fleet",
            *REPLAY,
            "--device-replay-file",
            "a",
        ],
        ["/usr/lib/fleet"],
    ),
    "config dir without ufo": (["doctor", "--config-dir", "."], ["has no ufo/ folder"]),
    "config dir missing": (["config", "show", "--config-dir", "nowhere"], ["nowhere", "no such folder"]),
    "task name with a path": (["run", "x", "-w", "ws", "--task", "../escape", *REPLAY], ["--task"]),
    "bad log level": (["run", "x", "--log-level", "LOUD"], ["--log-level", "DEBUG"]),
    "unwritable log dir": (["run", "x", "-w", "ws", "--log-dir", "/proc/nope", *REPLAY], ["/proc/nope"]),
    "too many local devices": (
        ["galaxy", "x", "--local", "500", *REPLAY, "--device-replay-file", "a"],
        ["500"],
    ),
    "devices file is a device": (
        ["galaxy", "x", "--devices", "/dev/zero", *REPLAY],
        ["/dev/zero", "regular"],
    ),
    "replay file is a device": (
        ["run", "x", "-w", "ws", "--provider", "replay", "--replay-file", "/dev/zero"],
        ["/dev/zero"],
    ),
    "unknown option": (["run", "x", "--no-such-option"], ["--no-such-option", "starweave run --help"]),
    "client platform unknown": (
        ["client", "--platform", "toaster", "--ws-server", "ws://127.0.0.1:9/ws"],
        ["unknown device platform 'toaster'", "linux-desktop, windows"],
    ),
    "client phone without adb": (
        # "a" is a file but no program: the phone's check runs before anything connects.
        ["client", "--platform", "mobile", "--adb-path", "a", "--ws-server", "ws://127.0.0.1:9/ws"],
        ["--platform mobile", "install the Debian 'adb' package or pass --adb-path"],
    ),
    "client phone options on a shell box": (
        ["client", "--platform", "linux", "--serial", "emulator-5554", "--ws-server", "ws://127.0.0.1:9/ws"],
        ["--serial and --adb-path go with --platform mobile"],
    ),
    "server platform unknown": (
        ["server", "--platform", "toaster", "--port", "0"],
        ["--platform", "'toaster' is not supported", "linux-desktop"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_usage_error_is_one_line_and_exit_2(tmp_path: Path, case: str) -> None:
    args, expected = CASES[case]
    (tmp_path / "answers.jsonl").write_text('{"thought": "t"}\n')
    (tmp_path / "a").write_text('{"thought": "t"}\n')
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = starweave(*args, cwd=tmp_path)
    assert_one_line_usage_error(proc, *expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "an error must leave nothing behind"


def test_a_port_in_use_is_one_line(tmp_path: Path, busy_port: int) -> None:
    for args in (
        ["server", "--port", str(busy_port)],
        ["mcp", "serve", "files", "--transport", "http", "--port", str(busy_port), "-w", "ws"],
    ):
        proc = starweave(*args, cwd=tmp_path)
        assert_one_line_usage_error(proc, f"port {busy_port}", "already in use")


def test_config_dir_from_the_environment_is_checked_too(tmp_path: Path) -> None:
    proc = starweave("doctor", cwd=tmp_path, env={"STARWEAVE_CONFIG_DIR": str(tmp_path / "gone")})
    assert_one_line_usage_error(proc, "STARWEAVE_CONFIG_DIR", "no such folder")


def test_unused_and_unknown_keys_get_one_warning_line_each(tmp_path: Path) -> None:
    (tmp_path / "config" / "ufo").mkdir(parents=True)
    (tmp_path / "config" / "ufo" / "system.yaml").write_text("LOG_XML: true\nMAX_STPE: 3\nMAX_STEP: 4\n")
    proc = starweave("config", "show", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 2, proc.stderr
    assert "system.yaml: LOG_XML is accepted but not used by Starweave yet" in warnings[0]
    assert "system.yaml: MAX_STPE is not a Starweave setting (did you mean MAX_STEP?)" in warnings[1]
    assert "max_step: 4" in proc.stdout


def test_configuration_an_agent_planted_in_its_workspace_is_never_loaded(tmp_path: Path) -> None:
    """A prompt-injected model writes config/ufo/system.yaml (unrestricted shell) into its workspace;
    the user's next run in that folder stops with one line instead of loading it."""
    planted = "SHELL:\n  MODE: unrestricted\n  SANDBOX: none\n"
    steps = [
        {"function": "write_file", "arguments": {"path": "config/ufo/system.yaml", "content": planted}},
        {"function": "", "arguments": {}, "status": "FINISH"},
    ]
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps(
                {"observation": "", "thought": "", "action": {"status": "CONTINUE", **s}, "result": ""}
            )
            + "\n"
            for s in steps
        )
    )
    first = starweave("run", "x", "-w", "project", *REPLAY, "--yes", cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert (tmp_path / "project" / "config" / "ufo" / "system.yaml").read_text() == planted
    # The user's next run, in the project folder itself (its workspace by default) or elsewhere
    # with the folder named as the configuration, whatever workspace the planted file would choose.
    project = tmp_path / "project"
    replay = ["--provider", "replay", "--replay-file", str(answers)]
    for args, cwd in (
        (["run", "x", *replay], project),
        (["run", "x", "-w", str(tmp_path / "other"), *replay], project),
        (["config", "show"], project),
        (["run", "x", "-w", "ws", "--config-dir", str(project / "config"), *replay], tmp_path),
    ):
        proc = starweave(*args, cwd=cwd)
        assert_one_line_usage_error(proc, "refusing this configuration folder", str(project))
    assert not (tmp_path / "other").exists()


def test_configuration_inside_the_workspace_of_this_run_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config" / "ufo").mkdir(parents=True)
    (tmp_path / "config" / "ufo" / "system.yaml").write_text("MAX_STEP: 4\n")
    (tmp_path / "answers.jsonl").write_text('{"thought": "t"}\n')
    proc = starweave("run", "x", *REPLAY, cwd=tmp_path)  # the workspace is the current folder
    assert_one_line_usage_error(proc, "refusing this configuration folder", "--config-dir")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.jsonl", "config"]


def test_a_client_whose_workspace_holds_the_configuration_is_refused(tmp_path: Path) -> None:
    # The client loads its configuration once and then places the workspace it was given: that
    # workspace must not hold the configuration folder either (the agent could rewrite it).
    (tmp_path / "config" / "ufo").mkdir(parents=True)
    (tmp_path / "config" / "ufo" / "system.yaml").write_text("MAX_STEP: 4\n")
    proc = starweave("client", "--ws-server", "ws://127.0.0.1:9/ws", "-w", ".", cwd=tmp_path)
    assert_one_line_usage_error(proc, "refusing this configuration folder", "--config-dir")


def test_a_desktop_client_without_a_display_says_so_in_one_line(tmp_path: Path) -> None:
    proc = starweave(
        "client",
        "--platform",
        "linux-desktop",
        "--ws-server",
        "ws://127.0.0.1:9/ws",
        cwd=tmp_path,
        env={"DISPLAY": ""},
    )
    assert_one_line_usage_error(
        proc, "--platform linux-desktop needs a graphical session", "DISPLAY is not set"
    )
    assert list(tmp_path.iterdir()) == []
