"""Configuration loading: defaults, YAML layout, merge order, env overrides and error messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.config import load_config, masked_dump
from starweave.config.keys import ConfigWarning
from starweave.errors import ConfigError


def write(root: Path, name: str, text: str) -> Path:
    folder = root / "ufo"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_no_files_gives_embedded_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(env={})
    assert config.app_agent.api_type == "local"
    assert config.system.json_parsing_retry == 3
    assert config.system.shell.mode == "workspace"
    servers = config.mcp_servers("LinuxAgent")
    assert servers is not None
    assert [s.namespace for s in servers.action] == ["BashExecutor", "FileExecutor"]


def test_reference_layout_merges_files_and_keeps_typed_and_raw_keys(tmp_path: Path) -> None:
    write(tmp_path, "agents.yaml", "APP_AGENT:\n  API_TYPE: openai\n  API_MODEL: gpt-4o\n")
    write(tmp_path, "system.yaml", "MAX_STEP: 7\nSHELL:\n  TIMEOUT: 5\nCUSTOM_SETTING: 42\n")
    write(tmp_path, "zz_more.yaml", "SHELL:\n  MODE: readonly\n")
    with pytest.warns(ConfigWarning, match="CUSTOM_SETTING is not a Starweave setting"):
        config = load_config(tmp_path, env={})
    assert config.app_agent.api_type == "openai"
    assert config.app_agent.api_model == "gpt-4o"
    assert config.system.max_step == 7
    # deep merge: the later file adds MODE without dropping TIMEOUT
    assert config.system.shell.timeout == 5
    assert config.system.shell.mode == "readonly"
    assert config.system.model_extra == {"CUSTOM_SETTING": 42}


def test_env_substitution_and_overrides(tmp_path: Path) -> None:
    write(tmp_path, "agents.yaml", "APP_AGENT:\n  API_KEY: ${MY_KEY}\n  API_BASE: ${MY_BASE:-http://x/v1}\n")
    env = {
        "MY_KEY": "sk-secret-value",
        "STARWEAVE_SYSTEM__MAX_STEP": "3",
        "STARWEAVE_SYSTEM__SHELL__MODE": "readonly",
    }
    config = load_config(tmp_path, env=env)
    assert config.app_agent.api_key.get_secret_value() == "sk-secret-value"
    assert config.app_agent.api_base == "http://x/v1"
    assert config.system.max_step == 3
    assert config.system.shell.mode == "readonly"


def test_environment_variant_files_load_after_base(tmp_path: Path) -> None:
    write(tmp_path, "system.yaml", "MAX_STEP: 10\n")
    write(tmp_path, "system_dev.yaml", "MAX_STEP: 2\n")
    assert load_config(tmp_path, env={}).system.max_step == 10
    assert load_config(tmp_path, env={"STARWEAVE_ENV": "dev"}).system.max_step == 2
    assert load_config(tmp_path, env={"UFO_ENV": "dev"}).system.max_step == 2


def test_invalid_value_is_reported_as_file_key_problem(tmp_path: Path) -> None:
    path = write(tmp_path, "system.yaml", "MAX_STEP: 0\n")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, env={})
    message = str(info.value)
    assert message.startswith(f"{path}: system.MAX_STEP: ")
    assert "positive" in message


def test_unknown_api_type_and_mcp_errors(tmp_path: Path) -> None:
    write(tmp_path, "agents.yaml", "APP_AGENT:\n  API_TYPE: gpt5-magic\n")
    with pytest.raises(ConfigError, match=r"agents.yaml: APP_AGENT.API_TYPE: unknown API_TYPE 'gpt5-magic'"):
        load_config(tmp_path, env={})
    (tmp_path / "ufo" / "agents.yaml").unlink()
    write(
        tmp_path,
        "mcp.yaml",
        "LinuxAgent:\n  default:\n    action:\n      - namespace: X\n        type: http\n",
    )
    with pytest.raises(ConfigError, match=r"mcp\.yaml: .*Missing host for http server"):
        load_config(tmp_path, env={})
    write(
        tmp_path,
        "mcp.yaml",
        "LinuxAgent:\n  default:\n    action:\n"
        "      - {namespace: A, type: local}\n      - {namespace: A, type: local}\n",
    )
    with pytest.raises(ConfigError, match="Duplicate namespace 'A'"):
        load_config(tmp_path, env={})
    write(tmp_path, "mcp.yaml", "LinuxAgent:\n  default:\n    action:\n      - {type: local}\n")
    with pytest.raises(ConfigError, match="namespace"):
        load_config(tmp_path, env={})


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "system.yaml", "MAX_STEP: 3\nSHELL: [unclosed\n")
    with pytest.raises(ConfigError, match=rf"{path}: line \d+"):
        load_config(tmp_path, env={})


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    write(tmp_path, "system.yaml", "- a\n- b\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_config(tmp_path, env={})


def test_missing_explicit_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope", env={})


def test_masked_dump_hides_secrets(tmp_path: Path) -> None:
    write(tmp_path, "agents.yaml", "APP_AGENT:\n  API_KEY: sk-abcdefghijklmnop\n")
    dumped = masked_dump(load_config(tmp_path, env={}))
    assert dumped["app_agent"]["api_key"] == "****"
    assert dumped["host_agent"]["api_key"] == ""
    assert "sk-abcdefghijklmnop" not in repr(dumped)


def test_shipped_example_config_is_valid() -> None:
    repo = Path(__file__).resolve().parents[3]
    config = load_config(repo / "config", env={})
    assert config.system.shell.sandbox == "auto"
    assert "gpt-4o" in config.prices


@pytest.mark.parametrize("folder", ["/usr/local/work", "/etc/app", "~/.ssh", "~/.config/x", "/"])
def test_shell_workspace_in_a_system_or_dot_folder_is_refused(tmp_path: Path, folder: str) -> None:
    path = write(tmp_path, "system.yaml", f"SHELL:\n  WORKSPACE: {folder}\n")
    with pytest.raises(ConfigError, match=rf"^{path}: system.SHELL.WORKSPACE: refusing"):
        load_config(tmp_path, env={})


def test_shell_workspace_may_be_anything_in_unrestricted_mode(tmp_path: Path) -> None:
    write(tmp_path, "system.yaml", "SHELL:\n  WORKSPACE: /usr/local\n  MODE: unrestricted\n")
    assert load_config(tmp_path, env={}).system.shell.workspace == "/usr/local"
