"""Galaxy settings: config/galaxy/agent.yaml and constellation.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.errors import ConfigError
from starweave.galaxy.devices import load_devices_config
from starweave.galaxy.settings import load_galaxy_config


def folder(tmp_path: Path, **files: str) -> Path:
    (tmp_path / "ufo").mkdir()
    (tmp_path / "galaxy").mkdir()
    for name, text in files.items():
        (tmp_path / "galaxy" / f"{name}.yaml").write_text(text)
    return tmp_path


def test_defaults_without_files(tmp_path: Path) -> None:
    config = load_galaxy_config(folder(tmp_path), env={})
    assert config.constellation_agent.api_type == "local"
    assert (config.constellation.max_step, config.constellation.task_timeout) == (40, 1800.0)


def test_files_env_and_overrides(tmp_path: Path) -> None:
    root = folder(
        tmp_path,
        agent="CONSTELLATION_AGENT:\n  API_TYPE: openai\n  API_KEY: ${GALAXY_KEY}\n",
        constellation="MAX_STEP: 4\nTASK_TIMEOUT: 60\nDEVICE_INFO: devices.yaml\n",
    )
    config = load_galaxy_config(root, {"CONSTELLATION_AGENT": {"API_MODEL": "m"}}, env={"GALAXY_KEY": "sk-1"})
    assert config.constellation_agent.api_type == "openai" and config.constellation_agent.api_model == "m"
    assert config.constellation_agent.api_key.get_secret_value() == "sk-1"
    assert (config.constellation.max_step, config.constellation.task_timeout) == (4, 60.0)


def test_invalid_values_name_file_and_key(tmp_path: Path) -> None:
    root = folder(tmp_path, constellation="MAX_STEP: 0\n")
    with pytest.raises(
        ConfigError, match=r"constellation\.yaml: MAX_STEP: Input should be greater than or equal to 1"
    ):
        load_galaxy_config(root, env={})
    (root / "galaxy" / "constellation.yaml").write_text("MAX_STEP: [\n")
    with pytest.raises(ConfigError, match=r"constellation\.yaml: line"):
        load_galaxy_config(root, env={})


def test_shipped_example_files_load(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[3]
    config = load_galaxy_config(repo / "config", env={})
    assert config.constellation.device_info == "config/galaxy/devices.yaml"
    devices = load_devices_config(repo / "config" / "galaxy" / "constellation.yaml")
    assert devices.device_ids == ["linux_dev_1", "linux_dev_2"]


def test_review_settings_default_to_the_fast_path_and_load_from_the_file(tmp_path: Path) -> None:
    defaults = load_galaxy_config(folder(tmp_path), env={}).constellation
    assert (defaults.review_mode, defaults.edit_retries, defaults.batch_window) == ("fast", 2, 0.2)
    (tmp_path / "b").mkdir()
    root = folder(tmp_path / "b", constellation="REVIEW_MODE: always\nEDIT_RETRIES: 0\n")
    reference = load_galaxy_config(root, env={}).constellation
    assert (reference.review_mode, reference.edit_retries) == ("always", 0)
    (root / "galaxy" / "constellation.yaml").write_text("REVIEW_MODE: sometimes\n")
    with pytest.raises(
        ConfigError, match=r"constellation\.yaml: REVIEW_MODE: Input should be 'fast' or 'always'"
    ):
        load_galaxy_config(root, env={})
    shipped = load_galaxy_config(Path(__file__).resolve().parents[3] / "config", env={}).constellation
    assert shipped.review_mode == "fast"


def test_assignment_strategy_is_chosen_by_name_from_the_strategy_table(tmp_path: Path) -> None:
    assert load_galaxy_config(folder(tmp_path), env={}).constellation.assignment_strategy is None
    (tmp_path / "b").mkdir()
    root = folder(
        tmp_path / "b", constellation="DEVICE_INFO: devices.yaml\nASSIGNMENT_STRATEGY: load_balance\n"
    )
    assert load_galaxy_config(root, env={}).constellation.assignment_strategy == "load_balance"
    # The device loader reads the same file and knows the key too.
    (root / "galaxy" / "devices.yaml").write_text(
        "devices:\n  - device_id: d1\n    server_url: ws://h:1/ws\n"
    )
    assert load_devices_config(root / "galaxy" / "constellation.yaml").device_ids == ["d1"]
    (root / "galaxy" / "constellation.yaml").write_text("ASSIGNMENT_STRATEGY: fastest\n")
    with pytest.raises(
        ConfigError,
        match=r"constellation\.yaml: ASSIGNMENT_STRATEGY: unknown assignment strategy 'fastest'; "
        r"use one of round_robin, capability_match, load_balance",
    ):
        load_galaxy_config(root, env={})
