"""Load the configuration: YAML files in the reference layout, deep-merged, with env overrides.

Order (later wins): embedded defaults → every ``<dir>/ufo/*.yaml`` (alphabetical) → the
``*_<env>.yaml`` variants for ``STARWEAVE_ENV`` (or the reference's ``UFO_ENV``) → environment
overrides ``STARWEAVE_<SECTION>__<KEY>[__<KEY>...]`` → explicit overrides from the command line.

``mcp.yaml`` lands under ``MCP`` and ``prices.yaml`` under ``PRICES``; agent blocks (``HOST_AGENT``,
``APP_AGENT``, ...) and third-party keys keep their names; every other key belongs to ``system``.
String values may use ``${VAR}`` or ``${VAR:-default}``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import SecretStr, ValidationError

from starweave.config.keys import warn_about_keys
from starweave.config.known_workspaces import config_dir_conflict, remembered_workspaces
from starweave.config.models import StarweaveConfig
from starweave.config.workspace import workspace_problem
from starweave.errors import ConfigError

AGENT_BLOCKS = ("HOST_AGENT", "APP_AGENT", "BACKUP_AGENT", "EVALUATION_AGENT", "OPERATOR")
THIRD_PARTY_KEYS = ("ENABLED_THIRD_PARTY_AGENTS", "THIRD_PARTY_AGENT_CONFIG")
SECTION_FILES = {"mcp": "MCP", "prices": "PRICES"}
ENV_VARIANTS = ("dev", "test", "prod", "staging")
ENV_PREFIX = "STARWEAVE_"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

Origins = dict[tuple[str, ...], str]


def find_config_dir(explicit: str | Path | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    """The folder holding ``ufo/*.yaml``: the explicit one, ``$STARWEAVE_CONFIG_DIR``, else ``./config``.

    A folder inside a workspace an agent has had is refused (``starweave.config.known_workspaces``)."""
    env = os.environ if env is None else env
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_dir():
            raise ConfigError(f"{path}: configuration folder does not exist")
    elif env.get("STARWEAVE_CONFIG_DIR"):
        return find_config_dir(env["STARWEAVE_CONFIG_DIR"], env)
    else:
        path = Path.cwd() / "config"
        if not (path / "ufo").is_dir():
            return None
    config_dir_conflict(path, remembered_workspaces(env))
    return path


def find_variables(text: str) -> Iterator[re.Match[str]]:
    """The ``${VAR}`` / ``${VAR:-default}`` references in ``text``: group 1 the name, group 2 the
    default (None when there is none)."""
    # Only up to the last "}": from every "${A:-" with no "}" after it the default would be scanned
    # to the end of the text, which is quadratic; before the last "}" each scan stops at the next "}".
    return _VAR.finditer(text, 0, text.rfind("}") + 1)


def _substitute_text(text: str, env: Mapping[str, str]) -> str:
    end = text.rfind("}") + 1  # see find_variables
    return _VAR.sub(lambda m: env.get(m.group(1), m.group(2) or ""), text[:end]) + text[end:]


def substitute_env(value: Any, env: Mapping[str, str], _done: dict[int, Any] | None = None) -> Any:
    """Replace ``${VAR}`` / ``${VAR:-default}`` in every string inside ``value``.

    A list or mapping that YAML aliases share is expanded once and stays shared, so a file whose
    aliases repeat a block many times costs its size, not the size of every repetition."""
    if isinstance(value, str):
        return _substitute_text(value, env)
    if not isinstance(value, list | dict):
        return value
    done = {} if _done is None else _done
    if id(value) in done:
        return done[id(value)]
    if isinstance(value, list):
        items: list[Any] = []
        done[id(value)] = items  # before the items: a list that holds itself ends here
        items.extend(substitute_env(v, env, done) for v in value)
        return items
    mapping: dict[Any, Any] = {}
    done[id(value)] = mapping
    mapping.update((k, substitute_env(v, env, done)) for k, v in value.items())
    return mapping


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``extra`` into a copy of ``base``: nested mappings merge, anything else replaces."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(dict(merged[key]), value)
        else:
            merged[key] = value
    return merged


def _leaf_paths(data: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(data, Mapping) and data:
        paths: list[tuple[str, ...]] = [prefix] if prefix else []
        for key, value in data.items():
            paths.extend(_leaf_paths(value, (*prefix, str(key))))
        return paths
    return [prefix]


def read_yaml(path: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """Parse one YAML file into a mapping, with ``${VAR}`` substituted; errors name the file and line."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}" if mark else "?"
        raise ConfigError(f"{path}: {where}: {exc.problem or exc}") from exc
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: (top level): expected a mapping of keys, got {type(data).__name__}")
    return substitute_env(data, env)


def _sectioned(stem: str, data: dict[str, Any]) -> dict[str, Any]:
    """Place a file's keys where the typed model expects them."""
    if stem in SECTION_FILES:
        return {SECTION_FILES[stem]: data}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in AGENT_BLOCKS or key in ("MCP", "PRICES", "system", "third_party"):
            out[key] = value
        elif key in THIRD_PARTY_KEYS:
            out.setdefault("third_party", {})[key] = value
        else:
            out.setdefault("system", {})[key] = value
    return out


def config_files(config_dir: Path, env_name: str | None) -> list[Path]:
    """The YAML files to load, base files first, then the active environment's variants."""
    folder = config_dir / "ufo"
    if not folder.is_dir():
        return []
    files = sorted(p for p in folder.glob("*.yaml") if p.is_file())
    base = [p for p in files if not any(p.stem.endswith(f"_{v}") for v in ENV_VARIANTS)]
    variants = [p for p in files if env_name and p.stem.endswith(f"_{env_name}")]
    return base + variants


def _env_overrides(env: Mapping[str, str]) -> dict[str, Any]:
    """``STARWEAVE_SYSTEM__MAX_STEP=10`` → ``{"system": {"MAX_STEP": 10}}``."""
    out: dict[str, Any] = {}
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        parts = name[len(ENV_PREFIX) :].split("__")
        section = parts[0].lower() if parts[0].lower() in ("system", "third_party") else parts[0].upper()
        if section.lower() in ("mcp", "prices"):
            section = section.upper()
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = raw
        node = out.setdefault(section, {})
        for key in parts[1:-1]:
            node = node.setdefault(key.upper(), {})
        node[parts[-1].upper()] = value
    return out


def load_raw(
    config_dir: Path | None, env: Mapping[str, str], overrides: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], Origins]:
    """The merged raw mapping and, for each key path, the file (or source) that set it last."""
    merged: dict[str, Any] = {}
    origins: Origins = {}
    env_name = env.get("STARWEAVE_ENV") or env.get("UFO_ENV")
    sources: list[tuple[str, dict[str, Any]]] = []
    if config_dir is not None:
        for path in config_files(config_dir, env_name):
            sources.append(
                (
                    str(path),
                    _sectioned(
                        path.stem.split("_")[0] if path.stem.split("_")[-1] in ENV_VARIANTS else path.stem,
                        read_yaml(path, env),
                    ),
                )
            )
    # The user's own sources only: the command line's overrides are ours.
    for origin, data in sources:
        warn_about_keys(origin, data)
    for name, value in env.items():
        if name.startswith(ENV_PREFIX) and "__" in name:
            warn_about_keys(f"environment variable {name}", _env_overrides({name: value}))
    sources.append(("environment", _env_overrides(env)))
    if overrides:
        sources.append(("command line", dict(overrides)))
    for origin, data in sources:
        merged = deep_merge(merged, data)
        for path_ in _leaf_paths(data):
            origins[path_] = origin
    return merged, origins


def _describe(exc: ValidationError, origins: Origins) -> str:
    lines = []
    for error in exc.errors():
        loc = tuple(str(part) for part in error["loc"])
        origin = "defaults"
        for length in range(len(loc), 0, -1):
            found = origins.get(loc[:length]) or origins.get(tuple(p.upper() for p in loc[:length]))
            if found:
                origin = found
                break
        key = ".".join(loc) or "(top level)"
        message = str(error["msg"]).removeprefix("Value error, ")
        lines.append(f"{origin}: {key}: {message}")
    return "\n".join(lines)


def load_config(
    config_dir: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> StarweaveConfig:
    """Load and validate the effective configuration; works with no files at all."""
    env = dict(os.environ) if env is None else env
    folder = find_config_dir(config_dir, env)
    raw, origins = load_raw(folder, env, overrides)
    try:
        config = StarweaveConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, origins)) from None
    _check_workspace(config, origins, folder)
    return config


def _check_workspace(config: StarweaveConfig, origins: Origins, config_dir: Path | None) -> None:
    """SHELL.WORKSPACE, wherever it was set, names a folder an agent may be given, and one that does
    not hold the configuration (whatever SHELL.MODE says: the mode may come from that very folder)."""
    shell = config.system.shell
    folder = Path(shell.workspace).expanduser()
    if not shell.workspace or not folder.is_absolute():
        return  # relative to where a command starts; resolve_workspace checks it there
    problem = None if shell.mode == "unrestricted" else workspace_problem(folder.resolve())
    if problem:
        origin = origins.get(("system", "SHELL", "WORKSPACE")) or origins.get(
            ("system", "SHELL", "workspace")
        )
        raise ConfigError(
            f"{origin or 'configuration'}: system.SHELL.WORKSPACE: refusing {shell.workspace} ({problem}): "
            "every file in it would be writable by the agent; name a project folder"
        )
    if config_dir is not None:
        config_dir_conflict(config_dir, [folder])


def place_workspace(config: StarweaveConfig, config_dir: str | Path | None, workspace: Path) -> None:
    """Make ``workspace`` (chosen on the command line, after loading) the shell's workspace.

    It is refused when it shares files with the configuration folder, as :func:`load_config`
    refuses a configured one: the agent's commands could write the settings of later runs.
    """
    folder = find_config_dir(config_dir)
    if folder is not None:
        config_dir_conflict(folder, [workspace])
    config.system.shell.workspace = str(workspace)


SECRET_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD")


def masked_dump(config: StarweaveConfig) -> dict[str, Any]:
    """The configuration as plain data, secrets replaced by ``****`` (or empty when unset)."""

    def mask(node: Any, key: str = "") -> Any:
        if isinstance(node, SecretStr):  # e.g. BING_API_KEY: a secret wherever it sits
            return "****" if node.get_secret_value() else ""
        if isinstance(node, dict):
            return {k: mask(v, str(k)) for k, v in node.items()}
        if isinstance(node, list):
            return [mask(v) for v in node]
        if any(word in key.upper() for word in SECRET_WORDS) and isinstance(node, str):
            return "****" if node else ""
        return node

    return mask(config.model_dump(mode="python", by_alias=False))
