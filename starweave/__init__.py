"""Starweave: LLM-driven device agents and multi-device orchestration."""

__version__ = "0.1.0"
