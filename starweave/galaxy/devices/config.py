"""Galaxy's device configuration (spec B §1.4, E §3): which agent servers and devices to drive.

Two reference formats are read:

* the lowercase single file: ``task_name``, ``heartbeat_interval``, ``reconnect_delay``,
  ``max_concurrent_tasks``, ``api_key`` and ``devices: [...]`` (``config/galaxy/devices.yaml``);
* the UPPERCASE pair: ``constellation.yaml`` with ``CONSTELLATION_ID``, ``HEARTBEAT_INTERVAL``,
  ``RECONNECT_DELAY``, ``MAX_CONCURRENT_TASKS``, ``MAX_STEP``, ``LOG_TO_MARKDOWN``, ``API_KEY`` and
  ``DEVICE_INFO`` naming the devices file (relative to the constellation file, else to the
  working directory).

Unlike the reference, which logs and falls back to an empty configuration, every problem raises
:class:`ConfigError` reading ``file: key: problem``. ``${VAR}`` / ``${VAR:-default}`` are expanded
in every string value the operator wrote; an unset variable without a default is an error (a
silently empty API key would only show up later as a refused connection). A device entry marked
``added_over_http: true`` (the WebUI's form wrote it) is read as written, never expanded.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import yaml

from starweave.config.loader import find_variables, substitute_env
from starweave.device_kinds import DEVICE_KINDS, kind_key, kind_names
from starweave.errors import ConfigError
from starweave.galaxy.devices.urls import http_device_url_problem, url_host
from starweave.galaxy.settings import ConstellationSettings
from starweave.server.validation import device_id_problem

__all__ = ["ConstellationConfig", "DeviceConfig", "load_devices_config"]

log = logging.getLogger("starweave.galaxy.devices")

DEVICE_KEYS = (
    "device_id",
    "server_url",
    "os",
    "capabilities",
    "metadata",
    "auto_connect",
    "max_retries",
    "added_over_http",
)
LOWER_KEYS = (
    "task_name",
    "heartbeat_interval",
    "reconnect_delay",
    "max_concurrent_tasks",
    "max_step",
    "log_to_markdown",
    "api_key",
    "devices",
)
UPPER_KEYS = {
    "CONSTELLATION_ID": "task_name",
    "HEARTBEAT_INTERVAL": "heartbeat_interval",
    "RECONNECT_DELAY": "reconnect_delay",
    "MAX_CONCURRENT_TASKS": "max_concurrent_tasks",
    "MAX_STEP": "max_step",
    "LOG_TO_MARKDOWN": "log_to_markdown",
    "API_KEY": "api_key",
    "DEVICE_INFO": "",
}
# Session settings that share constellation.yaml: starweave.galaxy.settings reads them, so its
# model's fields are the list (a new setting is one field there).
SESSION_KEYS = tuple(
    key for key in (name.upper() for name in ConstellationSettings.model_fields) if key not in UPPER_KEYS
)


@dataclass
class DeviceConfig:
    """One device: its id (the device client's ``--client-id``) and its agent server's WebSocket URL."""

    device_id: str
    server_url: str
    os: str = "unknown"
    capabilities: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    auto_connect: bool = True
    max_retries: int = 5
    # Came in over HTTP (the WebUI's add-device form), not written by the operator: it is sent no
    # credential of the file (``api_key``). The devices file keeps the mark (``added_over_http:
    # true``); an operator who vouches for the entry deletes that line.
    added_over_http: bool = False


@dataclass
class ConstellationConfig:
    """The constellation's settings and its devices.

    ``max_concurrent_tasks`` is informational (one task per device is enforced by the device
    manager); ``api_key`` is sent as ``X-API-Key`` to the agent servers of the devices the operator
    wrote into the file (never to a device ``added_over_http``).
    """

    task_name: str = "galaxy"
    heartbeat_interval: float = 30.0
    reconnect_delay: float = 5.0
    max_concurrent_tasks: int = 10
    devices: list[DeviceConfig] = field(default_factory=list)
    api_key: str | None = None
    max_step: int = 15
    log_to_markdown: bool = True

    def get_device_config(self, device_id: str) -> DeviceConfig | None:
        """The device named ``device_id``, if configured."""
        return next((d for d in self.devices if d.device_id == device_id), None)

    @property
    def device_ids(self) -> list[str]:
        """The configured device ids, in file order."""
        return [d.device_id for d in self.devices]


def load_devices_config(path: str | Path, env: Mapping[str, str] | None = None) -> ConstellationConfig:
    """Read either reference format from ``path``; ConfigError ("file: key: problem") on any problem."""
    file = Path(path)
    environ = os.environ if env is None else env
    data = _read_mapping(file)
    upper = [k for k in data if isinstance(k, str) and k.isupper()]
    lower = [k for k in data if not (isinstance(k, str) and k.isupper())]
    if upper and lower:
        raise ConfigError(
            f"{file}: {lower[0]}: mixes the UPPERCASE constellation format ({upper[0]}) with the "
            "lowercase devices format; use one of them"
        )
    if upper:
        return _load_upper(file, data, environ)
    return _load_lower(file, data, environ)


# ---- the two formats ------------------------------------------------------------------------
def _load_lower(file: Path, data: dict[str, Any], env: Mapping[str, str]) -> ConstellationConfig:
    _check_keys(file, "", data, LOWER_KEYS)
    config = ConstellationConfig()
    _apply_settings(file, config, data, {k: k for k in LOWER_KEYS if k != "devices"}, env)
    config.devices = _devices(file, data, env)
    return config


def _load_upper(file: Path, data: dict[str, Any], env: Mapping[str, str]) -> ConstellationConfig:
    _check_keys(file, "", data, (*UPPER_KEYS, *SESSION_KEYS))
    if "DEVICE_INFO" not in data:
        raise ConfigError(f"{file}: DEVICE_INFO: missing (the path of the devices file, e.g. devices.yaml)")
    devices_ref = _expand(file, "DEVICE_INFO", data["DEVICE_INFO"], env)
    if not isinstance(devices_ref, str) or not devices_ref.strip():
        raise ConfigError(f"{file}: DEVICE_INFO: expected the path of the devices file")
    devices_file = _resolve_devices_file(file, devices_ref)
    devices_data = _read_mapping(devices_file)
    # The devices file may carry lowercase settings; the constellation file's values win.
    base = _load_lower(devices_file, devices_data, env)
    _apply_settings(file, base, data, {k: v for k, v in UPPER_KEYS.items() if v}, env)
    return base


def _resolve_devices_file(file: Path, ref: str) -> Path:
    target = Path(ref).expanduser()
    candidates = [target] if target.is_absolute() else [file.parent / target, Path.cwd() / target]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise ConfigError(f"{file}: DEVICE_INFO: file '{ref}' not found (looked at {looked})")


# ---- settings -------------------------------------------------------------------------------
def _apply_settings(
    file: Path,
    config: ConstellationConfig,
    data: dict[str, Any],
    names: Mapping[str, str],
    env: Mapping[str, str],
) -> None:
    for key, attr in names.items():
        if key not in data:
            continue
        value = _expand(file, key, data[key], env)
        setattr(config, attr, _setting(file, key, attr, value))


def _setting(file: Path, key: str, attr: str, value: Any) -> Any:
    if attr == "task_name":
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{file}: {key}: expected a non-empty name, got {value!r}")
        return value.strip()
    if attr == "api_key":
        if value is None:
            return None
        if not isinstance(value, str):
            raise ConfigError(f"{file}: {key}: expected a string (or ${{VAR}})")
        return value or None
    if attr in ("heartbeat_interval", "reconnect_delay"):
        number = _number(file, key, value)
        if attr == "heartbeat_interval" and number <= 0:
            raise ConfigError(f"{file}: {key}: must be positive, got {value!r}")
        if number < 0:
            raise ConfigError(f"{file}: {key}: must not be negative, got {value!r}")
        return number
    if attr in ("max_concurrent_tasks", "max_step"):
        return _positive_int(file, key, value)
    if attr == "log_to_markdown":
        if not isinstance(value, bool):
            raise ConfigError(f"{file}: {key}: expected true or false, got {value!r}")
        return value
    raise AssertionError(f"unhandled setting {attr}")  # the key tables and this function disagree


def _number(file: Path, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{file}: {key}: expected a number of seconds, got {value!r}")
    return float(value)


def _positive_int(file: Path, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{file}: {key}: expected a whole number of at least 1, got {value!r}")
    return value


# ---- devices --------------------------------------------------------------------------------
def _devices(file: Path, data: dict[str, Any], env: Mapping[str, str]) -> list[DeviceConfig]:
    if "devices" not in data:
        raise ConfigError(f"{file}: devices: missing (list the devices: device_id, server_url, os, ...)")
    raw = data["devices"]
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{file}: devices: expected a non-empty list of devices")
    devices: list[DeviceConfig] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(raw):
        device = _device(file, f"devices[{index}]", entry, env)
        if device.device_id in seen:
            raise ConfigError(
                f"{file}: devices[{index}].device_id: duplicate '{device.device_id}' "
                f"(already used by devices[{seen[device.device_id]}])"
            )
        seen[device.device_id] = index
        devices.append(device)
    _check_http_urls(file, devices)
    return devices


def _check_http_urls(file: Path, devices: list[DeviceConfig]) -> None:
    """Devices added over HTTP must still name an allowed host (the operator's devices may have
    changed since, or the file was edited)."""
    operator_hosts = {url_host(d.server_url) or "" for d in devices if not d.added_over_http}
    for index, device in enumerate(devices):
        if not device.added_over_http:
            continue
        refused = http_device_url_problem(device.server_url, operator_hosts)
        if refused is not None:
            raise ConfigError(
                f"{file}: devices[{index}].server_url: {refused.reason} (the entry came from the WebUI's "
                "form; delete it, or delete its added_over_http line if you vouch for the URL)"
            )


def _device(file: Path, where: str, entry: Any, env: Mapping[str, str]) -> DeviceConfig:
    if not isinstance(entry, dict):
        raise ConfigError(f"{file}: {where}: expected a mapping with device_id and server_url")
    _check_keys(file, where, entry, DEVICE_KEYS)
    if entry.get("added_over_http") is True:
        # Typed into a web form: "${OPENAI_API_KEY}" there is text, never a variable to expand.
        values = dict(entry)
    else:
        values = {key: _expand(file, f"{where}.{key}", value, env) for key, value in entry.items()}
    for required in ("device_id", "server_url"):
        if values.get(required) in (None, ""):
            raise ConfigError(f"{file}: {where}.{required}: missing")
    device_id = values["device_id"]
    problem = device_id_problem(device_id)
    if problem:
        raise ConfigError(
            f"{file}: {where}.device_id: {problem}; it must equal the device client's --client-id"
        )
    device = DeviceConfig(device_id=device_id, server_url=_server_url(file, where, values["server_url"]))
    if "os" in values:
        device.os = _device_os(file, where, values["os"])
    if "capabilities" in values:
        caps = values["capabilities"]
        if caps is None:
            caps = []
        if not isinstance(caps, list) or not all(isinstance(c, str) for c in caps):
            raise ConfigError(f"{file}: {where}.capabilities: expected a list of strings")
        device.capabilities = list(caps)
    if "metadata" in values:
        meta = values["metadata"]
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise ConfigError(f"{file}: {where}.metadata: expected a mapping")
        device.metadata = dict(meta)
    if "auto_connect" in values:
        if not isinstance(values["auto_connect"], bool):
            raise ConfigError(f"{file}: {where}.auto_connect: expected true or false")
        device.auto_connect = values["auto_connect"]
    if "added_over_http" in values:
        if not isinstance(values["added_over_http"], bool):
            raise ConfigError(f"{file}: {where}.added_over_http: expected true or false")
        device.added_over_http = values["added_over_http"]
    if "max_retries" in values:
        retries = values["max_retries"]
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ConfigError(f"{file}: {where}.max_retries: expected a whole number >= 0, got {retries!r}")
        device.max_retries = retries
    return device


def _device_os(file: Path, where: str, value: Any) -> str:
    """The device's kind (``starweave.device_kinds``): linux, linux-desktop, windows, mobile, ...;
    the reference's other spellings (android, macos) name the same kinds. The reference documents
    ``os`` as free text, so any other word ("ios", "ubuntu") loads as written, with a warning:
    tasks that name a device kind will not match it, but its capabilities still do."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{file}: {where}.os: expected a platform name ({kind_names()})")
    name = kind_key(value)
    if name not in DEVICE_KINDS:
        log.warning(
            "%s: %s.os: %r is not a device kind Starweave knows (%s); kept as written",
            file,
            where,
            value,
            kind_names(),
        )
        return value.strip()
    return name


def _server_url(file: Path, where: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{file}: {where}.server_url: expected a ws:// or wss:// URL")
    parsed = urlparse(value.strip())
    if parsed.scheme not in ("ws", "wss") or not parsed.hostname:
        raise ConfigError(
            f"{file}: {where}.server_url: {value!r} is not a ws:// or wss:// URL "
            "(the agent server's WebSocket endpoint, e.g. ws://127.0.0.1:5000/ws)"
        )
    try:
        _ = parsed.port
    except ValueError:
        raise ConfigError(f"{file}: {where}.server_url: {value!r} has an invalid port") from None
    return value.strip()


# ---- reading --------------------------------------------------------------------------------
def _read_mapping(file: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{file}: (file): not found; pass an existing devices file") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}" if mark else "(yaml)"
        raise ConfigError(f"{file}: {where}: {exc.problem or exc}") from exc
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{file}: (file): cannot read: {exc}") from exc
    if data is None:
        raise ConfigError(f"{file}: (top level): the file is empty; list the devices under 'devices:'")
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: (top level): expected a mapping of keys, got {type(data).__name__}")
    return data


def _check_keys(file: Path, where: str, data: Mapping[Any, Any], known: tuple[str, ...]) -> None:
    for key in data:
        if key not in known:
            prefix = f"{where}.{key}" if where else str(key)
            raise ConfigError(f"{file}: {prefix}: unknown key (known keys: {', '.join(known)})")


def _expand(file: Path, key: str, value: Any, env: Mapping[str, str]) -> Any:
    """``${VAR}`` expansion with a check that every variable without a default is set."""
    _check_vars(file, key, value, env)
    return substitute_env(value, env)


def _check_vars(file: Path, key: str, value: Any, env: Mapping[str, str]) -> None:
    if isinstance(value, str):
        for match in find_variables(value):
            if match.group(2) is None and match.group(1) not in env:
                raise ConfigError(
                    f"{file}: {key}: environment variable {match.group(1)} is not set "
                    f"(set it or write ${{{match.group(1)}:-default}})"
                )
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_vars(file, f"{key}[{index}]", item, env)
    elif isinstance(value, dict):
        for name, item in value.items():
            _check_vars(file, f"{key}.{name}", item, env)
