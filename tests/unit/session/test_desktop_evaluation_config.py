"""The HostAgent run's evaluator block is checked before anything starts: one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.errors import ConfigError
from starweave.session.desktop_runner import _load_desktop_config
from starweave.session.runner import RunOptions


def options(tmp_path: Path, agents_yaml: str, evaluate: bool) -> RunOptions:
    config = tmp_path / "config"
    (config / "ufo").mkdir(parents=True)
    (config / "ufo" / "agents.yaml").write_text(agents_yaml)
    answers = tmp_path / "a.jsonl"
    answers.write_text("{}\n")
    return RunOptions(
        request="x",
        workspace=tmp_path / "ws",
        provider="replay",
        replay_file=answers,
        config_dir=config,
        log_dir=tmp_path / "logs",
        evaluate=evaluate,
    )


def test_a_visual_evaluator_on_the_text_only_embedded_model_is_refused(tmp_path: Path) -> None:
    agents = "EVALUATION_AGENT:\n  API_TYPE: local\n  VISUAL_MODE: true\n"
    with pytest.raises(ConfigError, match="EVALUATION_AGENT has VISUAL_MODE: true, but the embedded model"):
        _load_desktop_config(options(tmp_path, agents, evaluate=True))


def test_the_evaluator_block_is_not_checked_when_nothing_is_judged(tmp_path: Path) -> None:
    agents = "EVALUATION_AGENT:\n  API_TYPE: local\n  VISUAL_MODE: true\n"
    config, _ = _load_desktop_config(options(tmp_path, agents, evaluate=False))
    assert config.evaluation_agent.visual_mode is True


def test_an_evaluator_replay_block_needs_its_file(tmp_path: Path) -> None:
    agents = "EVALUATION_AGENT:\n  API_TYPE: replay\n"
    with pytest.raises(
        ConfigError, match="EVALUATION_AGENT uses the replay provider without a file: set its REPLAY_FILE"
    ):
        _load_desktop_config(options(tmp_path, agents, evaluate=True))
