"""Keys that load but do nothing are reported: once per key, naming the file; the list stays true."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from starweave.config import load_config
from starweave.config.keys import (
    UNUSED_AGENT_KEYS,
    UNUSED_SYSTEM_KEYS,
    ConfigWarning,
    field_names,
    key_problems,
)
from starweave.config.models import AgentLLMConfig, SystemConfig
from starweave.galaxy.settings import load_galaxy_config

PACKAGE = Path(__file__).resolve().parents[3] / "starweave"


def write(root: Path, name: str, text: str) -> Path:
    folder = root / "ufo"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def config_warnings(*args: object, **kwargs: object) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_config(*args, **kwargs)  # type: ignore[arg-type]
    return [str(w.message) for w in caught if issubclass(w.category, ConfigWarning)]


def test_unused_and_unknown_keys_are_named_with_their_file(tmp_path: Path) -> None:
    system = write(
        tmp_path,
        "system.yaml",
        "MAX_STEP: 5\nLOG_XML: true\nSAFE_GUARD: true\nMAX_STEPS: 3\nSHELL:\n  TIMEOUTS: 4\n",
    )
    agents = write(tmp_path, "agents.yaml", "APP_AGENT:\n  PROMPT: p.yaml\n  API_MODLE: x\nOPERATOR: {}\n")
    found = config_warnings(tmp_path, env={})
    assert sorted(found) == sorted(
        [
            f"{system}: LOG_XML is accepted but not used by Starweave yet; it has no effect",
            f"{system}: SAFE_GUARD is accepted but not used by Starweave yet; it has no effect",
            f"{system}: MAX_STEPS is not a Starweave setting (did you mean MAX_STEP?); it is ignored",
            f"{system}: SHELL.TIMEOUTS is not a Starweave setting (did you mean TIMEOUT?); it is ignored",
            f"{agents}: APP_AGENT.PROMPT is accepted but not used by Starweave yet; it has no effect",
            f"{agents}: APP_AGENT.API_MODLE is not a Starweave setting (did you mean API_MODEL?); "
            "it is ignored",
            f"{agents}: OPERATOR is accepted but not used by Starweave yet; it has no effect",
        ]
    )


def test_the_configuration_still_loads_and_keeps_the_keys(tmp_path: Path) -> None:
    write(tmp_path, "system.yaml", "MAX_STEP: 5\nSAFE_GUARD: true\nMY_OWN: 1\n")
    with pytest.warns(ConfigWarning):
        config = load_config(tmp_path, env={})
    assert config.system.max_step == 5
    assert config.system.model_extra == {"SAFE_GUARD": True, "MY_OWN": 1}


def test_environment_variables_are_checked_and_named(tmp_path: Path) -> None:
    found = config_warnings(
        tmp_path, env={"STARWEAVE_SYSTEM__USE_MCP": "false", "STARWEAVE_SYSTEM__MAX_STEP": "3"}
    )
    assert found == [
        "environment variable STARWEAVE_SYSTEM__USE_MCP: USE_MCP is accepted but not used by Starweave yet; "
        "it has no effect"
    ]


def test_used_keys_command_line_overrides_and_the_shipped_config_are_silent(tmp_path: Path) -> None:
    write(tmp_path, "system.yaml", "MAX_STEP: 5\nSLEEP_TIME: 0\nSHELL:\n  MODE: readonly\n")
    write(tmp_path, "mcp.yaml", "LinuxAgent:\n  default:\n    action:\n      - {namespace: A, type: local}\n")
    assert config_warnings(tmp_path, env={}, overrides={"system": {"NOT_A_KEY": 1}}) == []
    assert config_warnings(PACKAGE.parent / "config", env={}) == []


def test_mcp_and_third_party_entries_are_checked_too() -> None:
    problems = key_problems(
        {
            "MCP": {
                "LinuxAgent": {"default": {"action": [{"namespace": "A", "type": "local", "hots": "x"}]}}
            },
            "third_party": {
                "THIRD_PARTY_AGENT_CONFIG": {"LinuxAgent": {"AGENT_NAME": "x", "INTRODUCTION": "y"}}
            },
        }
    )
    assert problems == [
        "LinuxAgent.default.action[0].hots is not a Starweave setting (did you mean host?); it is ignored",
        "THIRD_PARTY_AGENT_CONFIG.LinuxAgent.AGENT_NAME is accepted but not used by Starweave yet; "
        "it has no effect",
    ]


def test_galaxy_agent_file_is_checked(tmp_path: Path) -> None:
    (tmp_path / "galaxy").mkdir()
    agent = tmp_path / "galaxy" / "agent.yaml"
    agent.write_text(
        "CONSTELLATION_AGENT:\n  API_TYPE: local\n  CONSTELLATION_CREATION_PROMPT: x.yaml\n  N_THREAD: 2\n"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_galaxy_config(tmp_path, env={})
    assert [str(w.message) for w in caught] == [
        f"{agent}: CONSTELLATION_AGENT.CONSTELLATION_CREATION_PROMPT is accepted but not used by Starweave "
        "yet; it has no effect",
        f"{agent}: CONSTELLATION_AGENT.N_THREAD is not a Starweave setting (did you mean N_THREADS?); "
        "it is ignored",
    ]


def _code() -> str:
    return "\n".join(
        path.read_text(encoding="utf-8")
        for path in PACKAGE.rglob("*.py")
        if path.parent.name != "config"  # the models and this registry name every key
    )


# How code reaches each model: ``config.system.X`` / ``system.X``; ``agent.X``, ``app_agent.X``, ...
RECEIVERS = {
    SystemConfig: r"system",
    AgentLLMConfig: r"(?:agent|agent_llm|block|app_agent|host_agent|constellation_agent)",
}
CHECKED = ((SystemConfig, UNUSED_SYSTEM_KEYS), (AgentLLMConfig, UNUSED_AGENT_KEYS))


def _reads(model: type, field: str, code: str) -> bool:
    return re.search(rf"\b{RECEIVERS[model]}\.{field}\b", code) is not None


def test_every_key_listed_unused_is_still_unread() -> None:
    code = _code()
    for model, unused in CHECKED:
        for key in unused:
            field = key.lower()
            if field in model.model_fields:
                assert not _reads(model, field, code), f"{key} is read now: remove it from the unused list"
            else:
                assert not re.search(rf"[\"']{key}[\"']", code), f"{key} is read now: remove it from the list"


def test_every_typed_key_not_listed_unused_is_read_somewhere() -> None:
    code = _code()
    for model, unused in CHECKED:
        for field in model.model_fields:
            if field.upper() not in unused:
                assert _reads(model, field, code), f"{field.upper()} is read by nothing: list it as unused"


def test_keys_answer_to_their_yaml_and_python_names() -> None:
    names = field_names(SystemConfig)
    assert {"MAX_STEP", "max_step", "SHELL", "shell"} <= names
