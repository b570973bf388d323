"""POST /api/devices (spec B §9): validate a device, append it to the devices file, connect it.

The device came in over HTTP, so it is marked ``added_over_http``: no credential of the file is
sent to it, its values are never ``${VAR}``-expanded, and its URL must pass
:func:`~starweave.galaxy.devices.urls.http_device_url_problem` (no ``user:password@``; a loopback
host or one the file's own devices use), else one 403/422 and nothing is stored or connected.

Validation answers with the reference's messages (the page shows them as they are). The entry is
appended to the devices file's ``devices:`` list as text when the list ends the file, so comments
and layout stay; otherwise the file is rewritten from its data. Either way the new file must load
with :func:`load_devices_config` before it replaces the old one, so a bad entry never lands there.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from starweave.errors import ConfigError
from starweave.galaxy.devices import ConstellationConfig, DeviceConfig, load_devices_config
from starweave.galaxy.devices.urls import http_device_url_problem, url_form_problem, url_host

__all__ = ["DeviceRequestError", "append_device", "validate_device"]

_LIST_ITEM = re.compile(r"^(\s*)- ")
log = logging.getLogger("starweave.galaxy.webui")
MAX_HTTP_RETRIES = 10


@dataclass
class DeviceRequestError(Exception):
    """Why the request is refused: the HTTP status and the message for ``{"detail": ...}``."""

    status: int
    detail: str


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    return value.strip() if isinstance(value, str) else ""


def validate_device(body: Any) -> DeviceConfig:
    """The device the page asked for; DeviceRequestError(422) with the reference's messages."""
    if not isinstance(body, dict):
        raise DeviceRequestError(422, "Device ID is required")
    device_id = _text(body, "device_id")
    if not device_id:
        raise DeviceRequestError(422, "Device ID is required")
    server_url = _text(body, "server_url")
    if not server_url:
        raise DeviceRequestError(422, "Server URL is required")
    refused = url_form_problem(server_url)
    if refused is not None:
        raise DeviceRequestError(refused.status, refused.reason)
    os_name = _text(body, "os")
    if not os_name:
        raise DeviceRequestError(422, "OS is required")
    capabilities = body.get("capabilities")
    if not isinstance(capabilities, list):
        capabilities = []
    capabilities = [c.strip() for c in capabilities if isinstance(c, str) and c.strip()]
    if not capabilities:
        raise DeviceRequestError(422, "At least one capability required")
    metadata = body.get("metadata") or {}
    auto_connect = body.get("auto_connect", True)
    max_retries = body.get("max_retries", 5)
    if not isinstance(metadata, dict):
        raise DeviceRequestError(422, "Metadata must be a mapping")
    if not isinstance(auto_connect, bool):
        raise DeviceRequestError(422, "auto_connect must be true or false")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise DeviceRequestError(422, "max_retries must be a whole number >= 0")
    if max_retries > MAX_HTTP_RETRIES:
        # Every retry knocks on that port again; a form must not make that endless.
        raise DeviceRequestError(422, f"max_retries must be at most {MAX_HTTP_RETRIES}")
    return DeviceConfig(
        device_id,
        server_url,
        os_name,
        capabilities,
        metadata,
        auto_connect,
        max_retries,
        added_over_http=True,
    )


def device_entry(device: DeviceConfig) -> dict[str, Any]:
    """The devices-file entry for ``device``."""
    return {
        "device_id": device.device_id,
        "server_url": device.server_url,
        "os": device.os,
        "capabilities": list(device.capabilities),
        "metadata": dict(device.metadata),
        "auto_connect": device.auto_connect,
        "max_retries": device.max_retries,
        **({"added_over_http": True} if device.added_over_http else {}),
    }


def _appended_text(text: str, data: dict[str, Any], entry: dict[str, Any]) -> str:
    """``text`` with ``entry`` added to its ``devices:`` list: appended as text when the block list
    ends the file (comments and layout kept), else the whole file dumped again."""
    lines = text.rstrip("\n").splitlines()
    devices_at = next((i for i, line in enumerate(lines) if line.startswith("devices:")), None)
    if devices_at is not None and lines[devices_at].strip() == "devices:":
        tail = lines[devices_at + 1 :]
        indents = [m.group(1) for m in map(_LIST_ITEM.match, tail) if m]
        ends_file = all(not line.strip() or line[0] in " -#" for line in tail)
        if indents and ends_file:
            item = yaml.safe_dump([entry], sort_keys=False, allow_unicode=True, default_flow_style=False)
            block = "\n".join(indents[0] + line if line else line for line in item.splitlines())
            candidate = "\n".join(lines) + "\n" + block + "\n"
            expected = {**data, "devices": [*data["devices"], entry]}
            if yaml.safe_load(candidate) == expected:
                return candidate
    updated = {**data, "devices": [*data["devices"], entry]}
    return yaml.safe_dump(updated, sort_keys=False, allow_unicode=True, default_flow_style=False)


def _current(path: Path) -> ConstellationConfig:
    """The devices file as it loads now. Its problems are the operator's: they are logged, and the
    page only hears that the file does not load (a message naming the variables the file uses
    would tell whoever fills in the form which ones are set)."""
    try:
        return load_devices_config(path)
    except ConfigError as exc:
        log.error("Cannot add a device: the devices file does not load: %s", exc)
        raise DeviceRequestError(500, "Failed to add device: the devices file does not load") from None


def append_device(path: Path, device: DeviceConfig, known_ids: set[str]) -> None:
    """Append ``device`` to the devices file at ``path`` (404/409/500 as DeviceRequestError)."""
    if not path.is_file():
        raise DeviceRequestError(404, "devices.yaml not found")
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise DeviceRequestError(500, f"Failed to add device: {exc}") from None
    devices = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(devices, list):
        raise DeviceRequestError(500, f"Failed to add device: {path} has no 'devices:' list")
    file_ids = {d.get("device_id") for d in devices if isinstance(d, dict)}
    if device.device_id in known_ids | file_ids:
        raise DeviceRequestError(409, f"Device ID '{device.device_id}' already exists")
    current = _current(path)
    operator_hosts = {url_host(d.server_url) or "" for d in current.devices if not d.added_over_http}
    refused = http_device_url_problem(device.server_url, operator_hosts)
    if refused is not None:
        raise DeviceRequestError(refused.status, refused.reason)
    candidate = _appended_text(text, data, device_entry(device))
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(candidate)
        load_devices_config(tmp)  # the new file must load before it replaces the old one
        os.replace(tmp, path)
    except ConfigError as exc:  # the file loaded before: the new entry, read as written, is wrong
        raise DeviceRequestError(422, str(exc).replace(str(tmp), path.name)) from None
    except OSError as exc:
        raise DeviceRequestError(500, f"Failed to add device: {exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
