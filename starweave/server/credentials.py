"""Per-device credentials: a device id bound to a token of its own, next to the shared API key.

Anyone holding the shared key could otherwise register as an offline device's id and receive its
tasks. A bound id can only be registered by a connection presenting that id's token. Tokens come
from two places:

- **issued**: a device that asks for one at registration (REGISTER ``metadata.request_device_token``)
  and whose id is not bound yet gets a fresh token in the registration acknowledgement
  (``device_token``); from then on the id is bound to it. Starweave's client asks, stores it and
  presents it; a reference client never asks, so its ids stay unbound and work with the shared key.
- **configured**: the operator lists ``device id → token`` in the server's settings.

Only SHA-256 hashes are kept (tokens are 256-bit random, so no slow hash is needed); issued ones are
persisted to a JSON file with mode 0600, so bindings survive a restart. ``forget`` unbinds an id
(a device that lost its token).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from starweave.config.state import state_home, write_private
from starweave.errors import ConfigError

__all__ = ["TOKEN_PREFIX", "DeviceCredentials", "RegistrationCheck", "hash_token"]

logger = logging.getLogger(__name__)

TOKEN_PREFIX = "swd_"
FILE_VERSION = 1


def hash_token(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RegistrationCheck:
    """The verdict on a registration: ``refusal`` (why not) or None, and whether to issue a token."""

    refusal: str | None = None
    issue_token: bool = False


class DeviceCredentials:
    """Token hashes by device id: the configured ones and the issued (persisted) ones."""

    def __init__(self, path: Path | None = None, configured: Mapping[str, str] | None = None) -> None:
        self.path = path
        self._configured = {device: hash_token(token) for device, token in (configured or {}).items()}
        self._issued: dict[str, dict[str, str]] = self._load() if path is not None else {}
        self._lock = asyncio.Lock()

    def _load(self) -> dict[str, dict[str, str]]:
        assert self.path is not None
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise ConfigError(f"server: credentials file {self.path}: cannot read it: {exc}") from None
        try:
            data = json.loads(text)
            devices = data["devices"]
            if not isinstance(devices, dict) or not all(
                isinstance(v, dict) and isinstance(v.get("sha256"), str) for v in devices.values()
            ):
                raise TypeError("devices must map ids to {sha256: ...}")
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"server: credentials file {self.path} is damaged ({exc}); restore it, or delete it "
                "(every device then registers afresh and gets a new token)"
            ) from None
        return {str(device): dict(entry) for device, entry in devices.items()}

    # ---- queries --------------------------------------------------------------------------
    def is_bound(self, device_id: str) -> bool:
        """True when ``device_id`` has a token of its own."""
        return device_id in self._configured or device_id in self._issued

    def owner(self, token: str | None) -> str | None:
        """The device id ``token`` belongs to, or None (compared in constant time per entry)."""
        if not token:
            return None
        digest = hash_token(token)
        found: str | None = None
        for device_id, stored in self._hashes():
            if hmac.compare_digest(digest, stored):
                found = device_id
        return found

    def _hashes(self) -> list[tuple[str, str]]:
        # A configured token wins over an issued one for the same id.
        issued = [(d, e["sha256"]) for d, e in self._issued.items() if d not in self._configured]
        return [*self._configured.items(), *issued]

    def check_registration(
        self,
        client_id: str,
        proven: set[str],
        shared_key_ok: bool,
        wants_token: bool,
        *,
        as_device: bool = True,
    ) -> RegistrationCheck:
        """May a connection that proved ``proven`` ids (and the shared key, or not) register ``client_id``?

        ``as_device``: it registers as a device (False: as a constellation client). A device token
        only proves "I am device X": it never opens a constellation registration, which can send
        tasks to every device; that takes the shared key.
        """
        if not as_device and not shared_key_ok:
            return RegistrationCheck(
                "A device credential cannot register a constellation client; use the shared API key"
            )
        if self.is_bound(client_id):
            if client_id in proven:
                return RegistrationCheck()
            return RegistrationCheck(
                f"Client ID '{client_id}' is bound to its own device credential and this connection did "
                "not present it; a device that lost its token must be unbound on the server "
                f"(starweave server --forget-device {client_id})"
            )
        if not shared_key_ok:
            owners = ", ".join(sorted(proven)) or "another device"
            return RegistrationCheck(
                f"This device credential belongs to '{owners}', not to '{client_id}'; "
                "register with that id or use the shared API key"
            )
        return RegistrationCheck(issue_token=wants_token)

    # ---- changes --------------------------------------------------------------------------
    async def issue(self, device_id: str) -> str:
        """Bind ``device_id`` to a new token and persist it; returns the token (shown only now)."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        async with self._lock:
            self._issued[device_id] = {"sha256": hash_token(token), "issued": datetime.now(UTC).isoformat()}
            await self._persist()
        logger.info("Issued a device token to %s; its id is now bound to it", device_id)
        return token

    def forget(self, device_id: str) -> bool:
        """Unbind an issued id at start-up (configured ones stay: edit the configuration).

        True if it was bound. Synchronous: it runs before the server serves.
        """
        if self._issued.pop(device_id, None) is None:
            return False
        if self.path is not None:
            write_private(self.path, self._dump())
        return True

    def _dump(self) -> str:
        return json.dumps({"version": FILE_VERSION, "devices": dict(self._issued)}, indent=1, sort_keys=True)

    async def _persist(self) -> None:
        if self.path is None:
            return
        try:
            await asyncio.to_thread(write_private, self.path, self._dump())
        except OSError as exc:  # the binding holds until a restart; after one the id registers afresh
            logger.error(
                "Cannot save device credentials to %s: %s; bindings are kept in memory", self.path, exc
            )


def credentials_file_for(host: str, port: int, state_dir: Path | None) -> Path | None:
    """Where a server keeps its device bindings.

    ``state_dir`` given: ``state_dir/device_credentials.json``. Otherwise one file per listening
    address under the default state folder, so two servers on one machine do not share bindings;
    none (memory only) for port 0, whose clients cannot find the server again after a restart.
    """
    if state_dir is not None:
        return state_dir / "device_credentials.json"
    if port == 0:
        return None
    name = f"{host.strip('[]').replace(':', '_')}_{port}"
    return state_home() / "server" / name / "device_credentials.json"


def load_device_tokens(path: Path) -> dict[str, str]:
    """``device id: token`` lines (YAML mapping) from the operator's file; ConfigError if malformed."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the device tokens file: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and len(v) >= 16 for k, v in data.items()
    ):
        raise ConfigError(
            f"{path}: expected 'device_id: token' lines (tokens of at least 16 characters; generate one "
            "with `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    return dict(data)
