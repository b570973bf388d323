"""The option checks of the `starweave` command: ports, binding, WebSocket URLs, folders, levels."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest
from pydantic import BaseModel, Field, ValidationError

from starweave.cli_support import (
    bind_problem,
    check_port,
    check_positive,
    check_ws_url,
    config_dir_problem,
    log_level,
    one_line,
    validation_line,
)
from starweave.errors import ConfigError


@pytest.mark.parametrize("port", [0, 1, 5000, 65535])
def test_ports_in_range_pass(port: int) -> None:
    check_port(port)


@pytest.mark.parametrize("port", [-1, 65536, 99999])
def test_ports_out_of_range_say_the_range(port: int) -> None:
    with pytest.raises(ConfigError, match=rf"--port {port} is not a TCP port; use 1-65535"):
        check_port(port)


def test_a_port_held_by_another_socket_is_reported_and_a_free_one_is_not() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert "already in use" in str(bind_problem("127.0.0.1", port))
    assert bind_problem("127.0.0.1", 0) is None


def test_a_host_that_is_not_ours_is_reported() -> None:
    assert "--host" in str(bind_problem("192.0.2.1", 0))  # TEST-NET-1: never a local address
    assert "--host" in str(bind_problem("no-such-host.invalid", 0))


@pytest.mark.parametrize(
    "url", ["ws://127.0.0.1:5000/ws", "wss://agents.example.com/ws", "ws://[::1]:5000/ws"]
)
def test_websocket_urls_pass(url: str) -> None:
    check_ws_url(url)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:5000/ws", "'http' is not ws or wss"),
        ("127.0.0.1:5000", "no ws:// or wss://"),
        ("localhost:5000", "not ws or wss"),
        ("garbage", "no ws:// or wss://"),
        ("ws://", "no host"),
        ("ws://:5000/ws", "no host"),
        ("ws://h:99999/ws", "port from 1 to 65535"),
        ("ws://h:0/ws", "port from 1 to 65535"),
        ("ws://h /ws", "not a WebSocket URL"),
        ("", "not a WebSocket URL"),
    ],
)
def test_bad_websocket_urls_say_what_to_use(url: str, why: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_ws_url(url)
    assert why in str(info.value) and "ws://HOST:PORT/ws" in str(info.value)


def test_config_dir_must_hold_ufo(tmp_path: Path) -> None:
    assert "no such folder" in str(config_dir_problem(tmp_path / "nope"))
    (tmp_path / "file").write_text("x")
    assert "not a folder" in str(config_dir_problem(tmp_path / "file"))
    assert "has no ufo/ folder" in str(config_dir_problem(tmp_path))
    (tmp_path / "ufo").mkdir()
    assert config_dir_problem(tmp_path) is None


def test_log_levels() -> None:
    assert log_level("debug") == logging.DEBUG and log_level(" ERROR ") == logging.ERROR
    with pytest.raises(ConfigError, match="use one of DEBUG, INFO, WARNING, ERROR, CRITICAL"):
        log_level("LOUD")


@pytest.mark.parametrize(("value", "zero_ok"), [(0, False), (-1, True), (float("nan"), True)])
def test_out_of_range_numbers(value: float, zero_ok: bool) -> None:
    with pytest.raises(ConfigError, match="--x"):
        check_positive(value, "--x", allow_zero=zero_ok)


def test_messages_fold_to_one_line() -> None:
    assert one_line("a: first\n\n  b: second  \n") == "a: first; b: second"

    class Settings(BaseModel):
        port: int = Field(ge=0, le=65535)
        host: str

    with pytest.raises(ValidationError) as info:
        Settings.model_validate({"port": 99999})
    line = validation_line(info.value)
    assert "\n" not in line and line.startswith("port: ") and "host: Field required" in line
