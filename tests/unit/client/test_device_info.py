"""DeviceInfoProvider: real collection and every fallback, through an injected SystemProbe."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Callable
from typing import Any

import pytest

from starweave.client.device_info import FEATURES, DeviceInfoProvider, SystemProbe, local_ip_address


def failing(error: BaseException) -> Callable[[], Any]:
    def call() -> Any:
        raise error

    return call


def test_real_collection_is_complete_and_json_ready() -> None:
    info = DeviceInfoProvider().collect_system_info("dev-1", {"team": "qa"})
    data = info.to_dict()
    json.dumps(data)
    assert data["device_id"] == "dev-1" and data["platform"] == "linux"
    assert data["cpu_count"] >= 1 and data["memory_total_gb"] > 0  # psutil is installed here
    assert data["hostname"] == socket.gethostname()
    assert data["supported_features"] == FEATURES["linux"]
    assert data["platform_type"] == "computer" and data["schema_version"] == "1.0"
    # What confines the shell commands rides along (issue 11): "unknown" until the client checked it.
    assert data["custom_metadata"]["team"] == "qa"
    assert data["custom_metadata"]["sandbox"] in {"bwrap", "landlock", "none", "unknown"}
    assert data["custom_metadata"]["command_confinement"]
    assert data["ip_address"] != ""


def test_route_probe_finds_a_local_address_without_sending() -> None:
    try:
        address = local_ip_address()
    except OSError:
        pytest.skip("no default route on this machine")
    socket.inet_aton(address)  # a dotted IPv4 address


def test_memory_without_psutil_is_zero_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    provider = DeviceInfoProvider(SystemProbe(memory_total_bytes=lambda: None))
    with caplog.at_level(logging.WARNING, logger="starweave.client.device_info"):
        info = provider.collect_system_info("dev-1")
    assert info.memory_total_gb == 0.0
    assert "psutil not installed, memory info unavailable" in caplog.text


def test_memory_is_rounded_to_two_decimals() -> None:
    provider = DeviceInfoProvider(SystemProbe(memory_total_bytes=lambda: 17_179_869_184 + 123_456_789))
    assert provider.collect_system_info("d").memory_total_gb == 16.11


def test_ip_falls_back_to_the_hostname_address_then_unknown() -> None:
    route_fails = SystemProbe(
        route_ip=failing(OSError("network unreachable")), resolved_ip=lambda: "10.1.2.3"
    )
    assert DeviceInfoProvider(route_fails).ip_address() == "10.1.2.3"
    both_fail = SystemProbe(
        route_ip=failing(OSError("unreachable")),
        resolved_ip=failing(socket.gaierror("no name")),
    )
    assert DeviceInfoProvider(both_fail).ip_address() == "unknown"


def test_each_source_has_its_own_fallback() -> None:
    probe = SystemProbe(
        system=lambda: "Darwin",
        version=failing(OSError("no version")),
        cpu_count=lambda: None,
        hostname=failing(OSError("no hostname")),
        memory_total_bytes=failing(OSError("no /proc")),
        route_ip=lambda: "192.168.1.5",
    )
    info = DeviceInfoProvider(probe).collect_system_info("mac-1")
    assert info.platform == "darwin" and info.supported_features == FEATURES["darwin"]
    assert (info.os_version, info.cpu_count, info.hostname, info.memory_total_gb) == (
        "unknown",
        0,
        "unknown",
        0.0,
    )
    assert info.ip_address == "192.168.1.5" and info.platform_type == "computer"


def test_unknown_platform_has_no_features() -> None:
    info = DeviceInfoProvider(SystemProbe(system=lambda: "")).collect_system_info("x")
    assert info.platform == "unknown" and info.supported_features == []


def test_a_failure_of_the_whole_collection_gives_minimal_info() -> None:
    # A probe returning the wrong type breaks the collection as a whole (not one source's OSError).
    probe = SystemProbe(
        system=lambda: None,  # type: ignore[arg-type,return-value]
        confinement=lambda: {"sandbox": "none", "command_confinement": "nothing"},
    )
    info = DeviceInfoProvider(probe).collect_system_info("dev-9", {"keep": True})
    assert info.to_dict() == {
        "device_id": "dev-9",
        "platform": "unknown",
        "os_version": "unknown",
        "cpu_count": 0,
        "memory_total_gb": 0.0,
        "hostname": "unknown",
        "ip_address": "unknown",
        "supported_features": [],
        "platform_type": "unknown",
        "schema_version": "1.0",
        "custom_metadata": {"keep": True, "sandbox": "none", "command_confinement": "nothing"},
    }
