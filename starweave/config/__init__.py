"""Typed configuration loaded from YAML in the reference layout (``config/ufo/*.yaml``)."""

from starweave.config.loader import find_config_dir, load_config, masked_dump
from starweave.config.models import (
    AgentLLMConfig,
    McpServerConfig,
    McpServerSet,
    ShellConfig,
    StarweaveConfig,
    SystemConfig,
    ThirdPartyConfig,
)

__all__ = [
    "AgentLLMConfig",
    "McpServerConfig",
    "McpServerSet",
    "ShellConfig",
    "StarweaveConfig",
    "SystemConfig",
    "ThirdPartyConfig",
    "find_config_dir",
    "load_config",
    "masked_dump",
]
