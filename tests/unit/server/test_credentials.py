"""Per-device credentials: binding, persistence, and registrations allowed or refused on a real server."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from unit.client.virtual_time import until
from unit.server.server_kit import TIMEOUT, Peer, running_server
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from starweave.aip.messages import (
    DEVICE_TOKEN_HEADER,
    ClientMessageType,
    ClientType,
    ServerMessageType,
    TaskStatus,
)
from starweave.errors import ConfigError
from starweave.server.credentials import (
    TOKEN_PREFIX,
    DeviceCredentials,
    credentials_file_for,
    hash_token,
    load_device_tokens,
)

META: dict[str, Any] = {"platform": "linux", "request_device_token": True}


async def test_issued_token_binds_the_id_and_only_its_hash_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "state" / "device_credentials.json"
    credentials = DeviceCredentials(path)
    token = await credentials.issue("dev1")
    assert token.startswith(TOKEN_PREFIX) and len(token) > 40
    assert credentials.is_bound("dev1") and credentials.owner(token) == "dev1"
    assert credentials.owner("swd_forged") is None and credentials.owner(None) is None
    text = path.read_text()
    assert token not in text and hash_token(token) in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    again = DeviceCredentials(path)  # a restart
    assert again.owner(token) == "dev1" and again.is_bound("dev1")
    assert list(json.loads(path.read_text())["devices"]) == ["dev1"]  # the only id bound
    assert again.forget("dev1") and not again.forget("dev1")
    assert not DeviceCredentials(path).is_bound("dev1")


def test_registration_rules() -> None:
    credentials = DeviceCredentials(configured={"bound": "t" * 20})
    check = credentials.check_registration
    assert check("bound", {"bound"}, shared_key_ok=False, wants_token=True).refusal is None
    refusal = check("bound", set(), shared_key_ok=True, wants_token=True).refusal
    assert refusal is not None and "bound to its own device credential" in refusal
    assert "--forget-device bound" in refusal
    other = check("free", {"bound"}, shared_key_ok=False, wants_token=False).refusal
    assert other is not None and "belongs to 'bound', not to 'free'" in other
    assert check("free", set(), shared_key_ok=True, wants_token=True).issue_token
    assert not check("free", set(), shared_key_ok=True, wants_token=False).issue_token
    assert not check("bound", {"bound"}, shared_key_ok=True, wants_token=True).issue_token
    orchestrator = check("bound", {"bound"}, shared_key_ok=False, wants_token=False, as_device=False)
    assert orchestrator.refusal is not None and "constellation" in orchestrator.refusal
    assert check("free", set(), shared_key_ok=True, wants_token=False, as_device=False).refusal is None


def test_a_damaged_file_is_a_clear_config_error(tmp_path: Path) -> None:
    path = tmp_path / "device_credentials.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="is damaged"):
        DeviceCredentials(path)
    path.write_text(json.dumps({"devices": {"d": "plain"}}))
    with pytest.raises(ConfigError, match="delete it"):
        DeviceCredentials(path)


def test_device_tokens_file_and_default_locations(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text("dev1: " + "a" * 32 + "\n")
    assert load_device_tokens(tokens) == {"dev1": "a" * 32}
    tokens.write_text("dev1: short\n")
    with pytest.raises(ConfigError, match="at least 16 characters"):
        load_device_tokens(tokens)
    with pytest.raises(ConfigError, match="cannot read"):
        load_device_tokens(tmp_path / "missing.yaml")
    assert credentials_file_for("127.0.0.1", 0, None) is None
    assert credentials_file_for("127.0.0.1", 0, tmp_path) == tmp_path / "device_credentials.json"
    per_port = credentials_file_for("::1", 5000, None)
    assert per_port is not None and per_port.parent.name == "__1_5000"


async def _register(
    port: int,
    client_id: str,
    *,
    token: str | None = None,
    device_token: str | None = None,
    meta: Any = META,
    client_type: ClientType = ClientType.DEVICE,
    target_id: str | None = None,
) -> tuple[Peer | None, Any]:
    """Register over a raw socket; (peer, ack) when accepted, (None, error) when refused."""
    url = f"ws://127.0.0.1:{port}/ws" + (f"?token={token}" if token else "")
    headers = {DEVICE_TOKEN_HEADER: device_token} if device_token else {}
    conn = await connect(url, additional_headers=headers, open_timeout=TIMEOUT, close_timeout=1)
    client = Peer(conn, client_id, client_type)
    await client.send(ClientMessageType.REGISTER, metadata=meta, target_id=target_id)
    answer = await client.recv()
    if answer.type == ServerMessageType.ERROR:
        with pytest.raises(ConnectionClosed):
            async with asyncio.timeout(TIMEOUT):
                await conn.recv()
        return None, answer
    assert answer.type == ServerMessageType.HEARTBEAT and answer.status == TaskStatus.OK
    return client, answer


async def test_a_bound_id_cannot_be_taken_with_the_shared_key(tmp_path: Path) -> None:
    async with running_server(api_key="shared", require_key_on_loopback=True) as server:
        owner, ack = await _register(server.port, "dev1", token="shared")
        assert owner is not None
        device_token = (ack.model_extra or {})["device_token"]
        # While it is connected: refused for the binding (not only as a duplicate).
        _, refused = await _register(server.port, "dev1", token="shared")
        assert "bound to its own device credential" in refused.error
        await owner.conn.close()
        await _until_offline(server, "dev1")
        # Offline: still refused without the device's token.
        _, refused = await _register(server.port, "dev1", token="shared")
        assert "bound to its own device credential" in refused.error
        # The device itself: the shared key plus its token, or its token alone.
        back, ack = await _register(server.port, "dev1", token="shared", device_token=device_token)
        assert back is not None and "device_token" not in (ack.model_extra or {})
        await back.conn.close()
        await _until_offline(server, "dev1")
        alone, _ = await _register(server.port, "dev1", token=device_token)
        assert alone is not None
        # A device token opens no other id, and is no API key.
        _, refused = await _register(server.port, "dev2", token=device_token)
        assert "belongs to 'dev1', not to 'dev2'" in refused.error
        await alone.conn.close()


async def test_a_device_token_never_registers_a_constellation_client() -> None:
    """Issue 26: dev1's token alone, once dev1 was offline, registered as a constellation client
    under the id dev1 and sent dev2 a TASK. A device token proves "I am dev1" and nothing more."""
    async with running_server(api_key="shared", require_key_on_loopback=True) as server:
        dev1, ack = await _register(server.port, "dev1", token="shared")
        assert dev1 is not None
        device_token = (ack.model_extra or {})["device_token"]
        dev2, _ = await _register(server.port, "dev2", token="shared")
        assert dev2 is not None
        await dev1.conn.close()
        await _until_offline(server, "dev1")
        for where in ({"token": device_token}, {"device_token": device_token}):
            for client_id in ("dev1", "orchestrator"):
                for target in ("dev2", None):
                    peer, refused = await _register(
                        server.port,
                        client_id,
                        client_type=ClientType.CONSTELLATION,
                        target_id=target,
                        meta={"platform": "linux"},
                        **where,
                    )
                    assert peer is None, (where, client_id, target)
                    assert "cannot register a constellation client" in refused.error
        # The shared key still registers an orchestrator, and dev1's token still registers dev1.
        orchestrator, _ = await _register(
            server.port,
            "orchestrator",
            token="shared",
            client_type=ClientType.CONSTELLATION,
            target_id="dev2",
            meta={"platform": "linux"},
        )
        assert orchestrator is not None
        back, _ = await _register(server.port, "dev1", token=device_token)
        assert back is not None
        for client in (orchestrator, back, dev2):
            await client.conn.close()


async def test_a_client_that_does_not_ask_stays_unbound() -> None:
    async with running_server() as server:
        first, ack = await _register(server.port, "ref-dev", meta={"platform": "linux"})
        assert first is not None and "device_token" not in (ack.model_extra or {})
        await first.conn.close()
        await _until_offline(server, "ref-dev")
        again, _ = await _register(server.port, "ref-dev", meta={"platform": "linux"})
        assert again is not None
        await again.conn.close()


async def test_configured_tokens_bind_ids_without_registration(tmp_path: Path) -> None:
    token = "configured-token-0123456789"
    async with running_server(device_tokens={"lab-pc": token}) as server:
        _, refused = await _register(server.port, "lab-pc")
        assert "bound" in refused.error
        device, ack = await _register(server.port, "lab-pc", device_token=token)
        assert device is not None and "device_token" not in (ack.model_extra or {})
        await device.conn.close()


async def test_bindings_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "device_credentials.json"
    async with running_server(credentials_file=path) as server:
        device, ack = await _register(server.port, "dev1")
        assert device is not None
        device_token = (ack.model_extra or {})["device_token"]
        await device.conn.close()
    async with running_server(credentials_file=path) as server:
        _, refused = await _register(server.port, "dev1")
        assert "bound" in refused.error
        device, _ = await _register(server.port, "dev1", device_token=device_token)
        assert device is not None
        await device.conn.close()


async def _until_offline(server: Any, client_id: str) -> None:
    await until(lambda: not server.app.state.registry.is_online(client_id), f"{client_id} offline")
