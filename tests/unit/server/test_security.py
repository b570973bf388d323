"""API key, Host and Origin checks on HTTP and WebSocket, and the settings' safety rule."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from unit.server.server_kit import fake_factory, peer, running_server, settings
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from starweave.aip.messages import ClientMessageType, ServerMessageType
from starweave.errors import ConfigError
from starweave.server.app import create_app
from starweave.server.security import SecurityPolicy
from starweave.server.settings import ServerSettings, canonical_host, is_loopback

KEY = "s3cret-key"


async def _api(app_settings: ServerSettings, headers: dict[str, str]) -> httpx.Response:
    app = create_app(app_settings, fake_factory)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:5000"
    ) as c:
        return await c.get("/api/clients", headers=headers)


@pytest.mark.parametrize(
    ("headers", "status"),
    [({}, 401), ({"X-API-Key": "wrong"}, 401), ({"X-API-Key": KEY}, 200)],
)
async def test_http_api_key(headers: dict[str, str], status: int) -> None:
    response = await _api(settings(port=5000, api_key=KEY), headers)
    assert response.status_code == status
    if status == 401:
        assert response.json() == {"detail": "Invalid or missing API key"}


async def test_foreign_host_and_origin_are_refused_over_http() -> None:
    base = settings(port=5000)
    host = await _api(base, {"Host": "evil.example"})
    assert host.status_code == 403 and "Host 'evil.example'" in host.json()["detail"]
    origin = await _api(base, {"Origin": "http://evil.example"})
    assert origin.status_code == 403 and "Origin" in origin.json()["detail"]
    assert (await _api(base, {"Origin": "http://127.0.0.1:5000"})).status_code == 200
    assert (
        await _api(
            settings(port=5000, allowed_origins=["https://ui.example"]), {"Origin": "https://ui.example"}
        )
    ).status_code == 200


async def _ws_refusal(url: str, **kwargs: object) -> tuple[int, str]:
    async with connect(url, open_timeout=5, **kwargs) as conn:  # type: ignore[arg-type]
        with pytest.raises(ConnectionClosed) as info:
            async with asyncio.timeout(5):
                await conn.recv()
    assert info.value.rcvd is not None
    return info.value.rcvd.code, info.value.rcvd.reason


async def test_ws_key_host_and_origin() -> None:
    async with running_server(api_key=KEY) as server:
        url = f"ws://127.0.0.1:{server.port}/ws"
        assert await _ws_refusal(url) == (1008, "Invalid or missing API key")
        assert (await _ws_refusal(url + "?token=wrong"))[0] == 1008
        code, reason = await _ws_refusal(url + f"?token={KEY}", origin="http://evil.example")
        assert code == 1008 and "Origin" in reason
        # Connect to 127.0.0.1 but present a rebinding attacker's Host header.
        evil = f"ws://evil.example:{server.port}/ws?token={KEY}"
        code, reason = await _ws_refusal(evil, host="127.0.0.1", port=server.port)
        assert code == 1008 and "Host" in reason
        async with peer(server, "dev1", token=KEY) as dev:  # query token accepted
            await dev.send(ClientMessageType.HEARTBEAT)
            assert (await dev.recv()).type == ServerMessageType.HEARTBEAT
        async with connect(url, additional_headers={"X-API-Key": KEY}, open_timeout=5) as conn:
            await conn.send('{"type": "register", "client_id": "dev2"}')
            assert '"heartbeat"' in await asyncio.wait_for(conn.recv(), 5)


def test_non_loopback_without_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="api_key"):
        ServerSettings(host="0.0.0.0").validate_security()
    with pytest.raises(ConfigError, match="require_key_on_loopback"):
        ServerSettings(require_key_on_loopback=True).validate_security()
    with pytest.raises(ConfigError):
        create_app(ServerSettings(host="192.168.1.5"), fake_factory)
    ServerSettings(host="0.0.0.0", api_key=KEY).validate_security()
    ServerSettings().validate_security()


def test_default_allowed_hosts() -> None:
    s = ServerSettings(port=5000)
    for entry in ("localhost", "localhost:5000", "127.0.0.1", "127.0.0.1:5000", "::1", "[::1]:5000"):
        assert entry in s.allowed_hosts
    policy = SecurityPolicy(s)
    assert policy.host_allowed("127.0.0.1:41234")  # an entry without port matches any port
    assert not policy.host_allowed("evil.example:5000") and not policy.host_allowed(None)
    assert "10.0.0.2:5000" in ServerSettings(host="10.0.0.2", port=5000, api_key=KEY).allowed_hosts
    assert SecurityPolicy(ServerSettings(host="0.0.0.0", api_key=KEY)).host_allowed("my-box:5000")


def test_policy_origin_rules() -> None:
    policy = SecurityPolicy(ServerSettings(port=5000))
    assert policy.origin_allowed(None, "127.0.0.1:5000")
    assert policy.origin_allowed("http://127.0.0.1:5000", "127.0.0.1:5000")
    assert not policy.origin_allowed("null", "127.0.0.1:5000")
    assert not policy.origin_allowed("http://127.0.0.1:6000", "127.0.0.1:5000")
    assert not policy.origin_allowed("file://x", "127.0.0.1:5000")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("127.255.255.254", True),
        ("::1", True),
        ("[::1]", True),
        ("0:0:0:0:0:0:0:1", True),
        ("[0000:0000::0001]", True),
        ("::ffff:127.0.0.1", True),
        ("::ffff:7f00:2", True),
        ("LocalHost.", True),
        ("0.0.0.0", False),
        ("::", False),
        ("::ffff:169.254.169.254", False),
        ("127.1", False),  # not an address ipaddress reads: a name, so not trusted as loopback
        ("localhost.evil.example", False),
        ("10.0.0.1", False),
    ],
)
def test_one_decision_for_every_spelling_of_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_canonical_host_is_one_spelling_per_address() -> None:
    assert canonical_host("[0:0:0:0:0:0:0:1]") == canonical_host("::1") == "::1"
    assert canonical_host("::FFFF:A9FE:A9FE") == "169.254.169.254"
    assert canonical_host("Example.COM.") == "example.com"


def test_host_allow_list_entries_match_every_spelling() -> None:
    policy = SecurityPolicy(ServerSettings(host="0:0:0:0:0:0:0:1", port=5000))
    for host in ("[::1]:5000", "[0:0:0:0:0:0:0:1]:5000", "[::0:1]", "localhost:5000", "127.0.0.1"):
        assert policy.host_allowed(host), host
    for host in ("evil.example", "[::2]:5000", "127.0.0.2:5000", "[::ffff:a9fe:a9fe]"):
        assert not policy.host_allowed(host), host
