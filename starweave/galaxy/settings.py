"""Galaxy settings: ``config/galaxy/agent.yaml`` (CONSTELLATION_AGENT) and ``constellation.yaml``.

Both files are optional; every key has a default, so ``starweave galaxy --local 2`` works with no
configuration at all (the ConstellationAgent then uses the embedded model, like the device agents).
``${VAR}`` references are expanded; errors read ``file: key: problem``. The device list itself
(``devices.yaml``, named by DEVICE_INFO) is read by ``starweave.galaxy.devices.config``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from starweave.config.keys import galaxy_agent_problems, warn
from starweave.config.loader import deep_merge, find_config_dir, read_yaml
from starweave.config.models import AgentLLMConfig
from starweave.errors import ConfigError

GALAXY_FILES = ("agent.yaml", "constellation.yaml")


def _alias(name: str) -> Any:
    return AliasChoices(name.upper(), name)


class ConstellationSettings(BaseModel):
    """Run limits and timeouts of a Galaxy session (constellation.yaml)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    constellation_id: str = Field("starweave_constellation", validation_alias=_alias("constellation_id"))
    device_info: str = Field("config/galaxy/devices.yaml", validation_alias=_alias("device_info"))
    # Agent steps per request: the planning step and one step per batch of results (each a model
    # call). Larger than the reference's 15 so that long chains, one result at a time, can finish.
    max_step: int = Field(40, ge=1, validation_alias=_alias("max_step"))
    log_to_markdown: bool = Field(True, validation_alias=_alias("log_to_markdown"))
    heartbeat_interval: float = Field(30.0, gt=0, validation_alias=_alias("heartbeat_interval"))
    reconnect_delay: float = Field(5.0, gt=0, validation_alias=_alias("reconnect_delay"))
    max_concurrent_tasks: int = Field(10, ge=1, validation_alias=_alias("max_concurrent_tasks"))
    # Longest a device may take on one task before Galaxy fails it.
    task_timeout: float = Field(1800.0, gt=0, validation_alias=_alias("task_timeout"))
    # Longest the orchestrator holds new assignments while the agent edits after a result.
    modification_timeout: float = Field(600.0, gt=0, validation_alias=_alias("modification_timeout"))
    # Longest the agent waits for the next task result before giving up on the run.
    event_timeout: float = Field(3600.0, gt=0, validation_alias=_alias("event_timeout"))
    # Longest a device may take to connect before the run starts without it.
    connect_timeout: float = Field(30.0, gt=0, validation_alias=_alias("connect_timeout"))
    # When the agent asks its model to review task results: "fast" only when the answer can change
    # something (a task failed, or a pending task can now start with the new results); once every
    # task completed, finishing without a model call when the plan ends in one task, or with one
    # answer-only call that puts the results of several final tasks together; "always" after every
    # batch of results (the reference's behaviour).
    review_mode: Literal["fast", "always"] = Field("fast", validation_alias=_alias("review_mode"))
    # How often edits the editor refuses go back to the model within one review.
    edit_retries: int = Field(2, ge=0, le=5, validation_alias=_alias("edit_retries"))
    # Seconds the agent waits after a task result for others to join the same review.
    batch_window: float = Field(0.2, ge=0, le=10, validation_alias=_alias("batch_window"))
    # How the orchestrator gives a device to each task the agent left without one: a name of
    # starweave.galaxy.orchestrator.STRATEGIES, or none (every task must name its device).
    assignment_strategy: str | None = Field(None, validation_alias=_alias("assignment_strategy"))

    @field_validator("assignment_strategy")
    @classmethod
    def _known_strategy(cls, value: str | None) -> str | None:
        from starweave.galaxy.orchestrator.assignment import STRATEGIES

        if value is not None and value not in STRATEGIES:
            raise ValueError(f"unknown assignment strategy {value!r}; use one of {', '.join(STRATEGIES)}")
        return value


class GalaxyConfig(BaseModel):
    """The ConstellationAgent's model settings and the constellation settings."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    constellation_agent: AgentLLMConfig = Field(
        default_factory=AgentLLMConfig, validation_alias=_alias("constellation_agent")
    )
    constellation: ConstellationSettings = Field(default_factory=ConstellationSettings)


def galaxy_dir(config_dir: str | Path | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    """``<config>/galaxy`` when it exists."""
    root = find_config_dir(config_dir, os.environ if env is None else env)
    if root is None:
        return None
    folder = root / "galaxy"
    return folder if folder.is_dir() else None


def load_galaxy_config(
    config_dir: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> GalaxyConfig:
    """Read ``agent.yaml`` and ``constellation.yaml`` (both optional) and apply ``overrides``."""
    env = dict(os.environ) if env is None else env
    folder = galaxy_dir(config_dir, env)
    raw: dict[str, Any] = {}
    origin: dict[str, str] = {}
    if folder is not None:
        for name in GALAXY_FILES:
            path = folder / name
            if not path.is_file():
                continue
            data = read_yaml(path, env)
            if name == "agent.yaml":
                warn(str(path), galaxy_agent_problems(data))
            if name == "constellation.yaml":
                data = {"constellation": data}
            for key in data:
                origin[key.lower()] = str(path)
            raw = deep_merge(raw, data)
    if overrides:
        raw = deep_merge(raw, overrides)
    try:
        return GalaxyConfig.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = [str(part) for part in error["loc"]]
            where = origin.get(loc[0].lower(), "command line") if loc else "command line"
            key = ".".join(loc[1:] if loc and loc[0] == "constellation" else loc) or "(top level)"
            problems.append(f"{where}: {key}: {str(error['msg']).removeprefix('Value error, ')}")
        raise ConfigError("\n".join(problems)) from None
