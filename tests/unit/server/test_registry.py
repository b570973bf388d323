"""ClientConnectionManager: types, duplicates, session maps, device info merge."""

from __future__ import annotations

import pytest

from starweave.aip.messages import ClientType, ServerMessage
from starweave.errors import DuplicateClientError
from starweave.server.registry import ClientConnectionManager, merge_device_info


async def _send(_: ServerMessage) -> None:
    return None


def _registry() -> ClientConnectionManager:
    registry = ClientConnectionManager(
        device_configs={"dev1": {"tags": ["gpu"], "additional_features": ["b"]}}
    )
    registry.add_client(
        "dev1", "linux", object(), _send, metadata={"system_info": {"supported_features": ["a"]}}
    )
    registry.add_client(
        "c1",
        "linux",
        object(),
        _send,
        client_type=ClientType.CONSTELLATION,
        metadata={"system_info": {"os": "x"}},
    )
    return registry


def test_types_and_type_aware_device_check() -> None:
    registry = _registry()
    assert registry.is_device_connected("dev1") and not registry.is_device_connected("c1")
    assert registry.is_online("c1") and not registry.is_online("zz")
    assert registry.list_clients() == ["dev1", "c1"]
    assert registry.list_clients_by_type(ClientType.CONSTELLATION) == ["c1"]
    assert registry.get_stats() == {"total": 2, "device_clients": 1, "constellation_clients": 1}
    assert registry.get_device_system_info("c1") is None  # constellations carry no system info


def test_duplicate_id_rejected_and_original_kept() -> None:
    registry = _registry()
    original = registry.get_client_info("dev1")
    with pytest.raises(DuplicateClientError, match="Client ID 'dev1' is already connected"):
        registry.add_client("dev1", "windows", object(), _send)
    assert registry.get_client_info("dev1") is original


def test_session_maps_return_copies_and_pop() -> None:
    registry = _registry()
    registry.add_device_session("dev1", "s1")
    registry.add_constellation_session("c1", "s1")
    copy = registry.get_device_sessions("dev1")
    copy.append("bogus")
    assert registry.get_device_sessions("dev1") == ["s1"]
    assert registry.remove_constellation_sessions("c1") == ["s1"]
    assert registry.remove_constellation_sessions("c1") == []
    registry.remove_client("dev1")
    assert registry.get_client("dev1") is None and registry.get_client_type("dev1") is None


def test_server_config_is_merged_into_device_info() -> None:
    info = _registry().get_device_system_info("dev1")
    assert info is not None
    assert sorted(info["supported_features"]) == ["a", "b"]
    assert info["tags"] == ["gpu"]
    assert info["custom_metadata"] == {"tags": ["gpu"], "additional_features": ["b"]}


def test_merge_device_info_handles_none() -> None:
    assert merge_device_info(None, {"tier": 1}) == {"custom_metadata": {"tier": 1}}


def test_discard_session_removes_an_ended_session_everywhere() -> None:
    registry = _registry()
    registry.add_device_session("dev1", "s1")
    registry.add_device_session("dev1", "s2")
    registry.add_constellation_session("c1", "s1")
    registry.discard_session("s1")
    assert registry.get_device_sessions("dev1") == ["s2"]
    assert registry.get_constellation_sessions("c1") == []
    registry.discard_session("s2")
    assert registry._device_sessions == {} and registry._constellation_sessions == {}
