"""The one exception tree of Starweave.

Every error a user can meet derives from :class:`StarweaveError`; its message says what is
wrong and how to fix it::

    StarweaveError
    ├── ConfigError               a configuration file or value is invalid
    ├── LLMError                  a model call failed
    │   ├── LLMTimeoutError       the call exceeded its per-call timeout
    │   ├── LLMResponseError      the answer was not valid JSON / not in the schema after retries
    │   └── ProviderUnavailable   a provider cannot be used here (missing extra, key, model file)
    ├── AgentError                the device-agent kernel was misused
    │   ├── ProcessingException   a processor phase failed (fail_fast) or a dependency is missing
    │   └── RegistryError         an unknown agent or state name
    ├── ToolError                 the device-side command layer could not run a tool
    │   └── PolicyViolation       a shell command or path was refused by the policy
    └── SessionError              a session could not start or finish
"""

from __future__ import annotations

from typing import Any


class StarweaveError(Exception):
    """Root of every error raised by Starweave."""


class ConfigError(StarweaveError):
    """A configuration file or value is invalid; the message reads ``file: key: problem``."""


class LLMError(StarweaveError):
    """A model call failed."""


class LLMTimeoutError(LLMError):
    """A model call exceeded its per-call timeout."""


class LLMResponseError(LLMError):
    """The model's answer could not be parsed or validated, even after the retries."""


class ProviderUnavailable(LLMError):
    """A provider cannot be used on this machine (missing extra, API key or model file)."""


class AgentError(StarweaveError):
    """The device-agent kernel was used incorrectly."""


class ProcessingException(AgentError):
    """A processor phase failed, or a strategy's declared dependency is missing.

    ``phase`` names the phase, ``context_data`` carries what helps debugging and
    ``original_exception`` is the error that caused it, if any.
    """

    def __init__(
        self,
        message: str,
        phase: Any = None,
        context_data: dict[str, Any] | None = None,
        original_exception: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.phase = phase
        self.context_data = context_data or {}
        self.original_exception = original_exception


class RegistryError(AgentError):
    """An agent, state or server name is not registered."""


class ToolError(StarweaveError):
    """The device-side command layer could not run a tool."""


class PolicyViolation(ToolError):
    """A shell command, path or argument was refused by the execution policy."""


class SessionError(StarweaveError):
    """A session could not start or finish."""


class DesktopError(ToolError):
    """The desktop layer (accessibility tree, screenshots, input) could not do what was asked."""


class WindowNotFound(DesktopError):
    """A window id is not among the windows the desktop layer knows."""


class ControlNotFound(DesktopError):
    """A control id is not in the most recent walk of the selected window."""
