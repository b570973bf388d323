"""`starweave run --agent mobile` as a user runs it: the real command line, on recorded answers, with
the real mobile MCP servers driving the simulated phone (tests/helpers/android_sim)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.android_sim import SimulatedPhone
from helpers.android_sim import android_phone as android_phone
from helpers.linux_replay import replay_file
from helpers.mobile_replay import note_answers, write_mcp_config

from starweave.cli import app
from tests.e2e.test_cli_errors import assert_one_line_usage_error, starweave


def test_a_note_is_written_through_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], android_phone: SimulatedPhone
) -> None:
    args = [
        "run", "--agent", "mobile", "write the note 'call mom'",
        "--serial", android_phone.serial, "--adb-path", str(android_phone.adb_path),
        "--provider", "replay", "--replay-file", str(replay_file(tmp_path, note_answers("call mom"))),
        "--config-dir", str(write_mcp_config(tmp_path / "config")),
        "--workspace", str(tmp_path / "ws"), "--log-dir", str(tmp_path / "logs"), "--task", "t1", "--json",
    ]  # fmt: skip
    code = app(args, prog_name="starweave", standalone_mode=False)
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "FINISH" and result["agent"] == "MobileAgent"
    assert android_phone.state()["notes"] == ["call mom"]
    assert (tmp_path / "logs" / "t1" / "action_step3_annotated.png").is_file()


def test_a_missing_mcp_entry_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "answers.jsonl").write_text("{}\n")
    (tmp_path / "config" / "ufo").mkdir(parents=True)
    # An mcp.yaml of the user's without a MobileAgent entry (without any mcp.yaml the shipped one applies).
    (tmp_path / "config" / "ufo" / "mcp.yaml").write_text(
        "LinuxAgent:\n  default:\n    action:\n      - {namespace: BashExecutor, type: local}\n"
    )
    proc = starweave(
        "run", "--agent", "mobile", "open notes", "--provider", "replay", "--replay-file", "answers.jsonl",
        "--config-dir", "config", "--workspace", "ws",
        cwd=tmp_path,
    )  # fmt: skip
    assert_one_line_usage_error(proc, "no MCP servers for MobileAgent", "mcp.yaml")
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--agent", "linux", "--serial", "x"], "--serial and --adb-path go with --agent mobile"),
        (["--agent", "phone"], "choose linux, host or mobile"),
        (["--agent", "mobile", "--visual", "--provider", "local"], "VISUAL_MODE"),
        (["--agent", "mobile", "--serial", "a b;rm"], "--serial: invalid device serial"),
        (["--agent", "mobile", "--adb-path", "/nowhere/adb"], "--adb-path /nowhere/adb: no such file"),
    ],
)
def test_bad_mobile_options_are_one_line(tmp_path: Path, args: list[str], expected: str) -> None:
    write_mcp_config(tmp_path / "config")
    proc = starweave("run", "open notes", *args, "--config-dir", "config", "--workspace", "ws", cwd=tmp_path)
    assert_one_line_usage_error(proc, expected)


@pytest.mark.slow
def test_a_run_outside_the_repository_uses_the_built_in_servers(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    """No config folder at all: the built-in MobileAgent servers drive the (simulated) phone."""
    answers = replay_file(tmp_path, note_answers("call mom"))
    proc = starweave(
        "run", "--agent", "mobile", "write the note 'call mom'", "--adb-path", str(android_phone.adb_path),
        "--provider", "replay", "--replay-file", str(answers), "--workspace", "ws", "--json",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "FINISH"
    assert android_phone.state()["notes"] == ["call mom"]
    assert not (tmp_path / "config").exists()


def two_phones_adb(folder: Path) -> Path:
    """An adb that lists two usable phones (and runs nothing else)."""
    adb = folder / "two-phones-adb"
    adb.write_text(
        "#!/bin/sh\nprintf 'List of devices attached\\nphone-a\\tdevice\\nphone-b\\tdevice\\n\\n'\n"
    )
    adb.chmod(0o755)
    return adb


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("no adb", "is not executable; install the Debian 'adb' package or pass --adb-path"),
        ("no phone", "--agent mobile: no phone is attached; pass --serial SERIAL"),
        ("two phones", "several phones are attached (phone-a (device), phone-b (device)); pass --serial"),
        ("unauthorized", "is 'unauthorized' in `adb devices`; accept the USB-debugging prompt on the phone"),
        ("offline", "is 'offline' in `adb devices`; reconnect the phone"),
    ],
)
def test_the_phone_is_checked_before_the_first_step(
    tmp_path: Path, android_phone: SimulatedPhone, case: str, expected: str
) -> None:
    adb = android_phone.adb_path
    if case == "no adb":
        adb = tmp_path / "not-adb"
        adb.write_text("not a program\n")
    elif case == "two phones":
        adb = two_phones_adb(tmp_path)
    elif case == "no phone":
        android_phone.set_online(False)
    else:
        android_phone.update(adb_state=case)
    answers = replay_file(tmp_path, note_answers("call mom"))
    proc = starweave(
        "run", "--agent", "mobile", "write the note 'call mom'", "--adb-path", str(adb),
        "--provider", "replay", "--replay-file", str(answers), "--workspace", "ws", "--log-dir", "logs",
        cwd=tmp_path,
    )  # fmt: skip
    assert_one_line_usage_error(proc, expected)
    assert not (tmp_path / "logs").exists()  # stopped before any step: no model call, no log folder
