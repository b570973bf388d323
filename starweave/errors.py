"""The one exception tree of Starweave.

Every error a user can meet derives from :class:`StarweaveError`; its message says what is
wrong and how to fix it. Errors that callers (or the reference) catch as a builtin also derive
from it: ``ValueError``, ``KeyError`` or ``ConnectionError`` as marked::

    StarweaveError
    ├── ConfigError                    a configuration file or value is invalid
    │   └── SandboxUnavailable         SHELL.SANDBOX names a sandbox this machine cannot run
    ├── InvalidArgumentError (Value)   a call got an argument it cannot accept
    ├── LLMError                       a model call failed
    │   ├── LLMTimeoutError            the call exceeded its per-call timeout
    │   ├── LLMResponseError           the answer was not valid JSON / not in the schema after retries
    │   ├── ProviderUnavailable        a provider cannot be used here (missing extra, key, model file)
    │   ├── JSONExtractionError (Value)    a text holds no parseable JSON object
    │   └── SchemaValidationError (Value)  a JSON object does not match its schema
    ├── AgentError                     the device-agent kernel was misused
    │   ├── ProcessingException        a processor phase failed (fail_fast) or a dependency is missing
    │   └── RegistryError              an unknown agent or state name
    ├── ToolError                      the device-side command layer could not run a tool
    │   ├── PolicyViolation            a shell command or path was refused by the policy
    │   ├── SeccompUnsupported         no seccomp system call table for this architecture
    │   ├── EditorError                the text-editor API refused an operation
    │   └── DesktopError               the desktop layer failed
    │       ├── WindowNotFound         an unknown window id
    │       └── ControlNotFound        an unknown control id
    ├── SessionError                   a session could not start or finish
    │   ├── CapacityError              the server runs max_sessions sessions already
    │   ├── QueueFull                  a device's dispatch queue is full
    │   └── TaskNameInUse              a task name belongs to another client or session
    ├── DuplicateClientError           a client id is already connected
    ├── AIPError                       a frame is not valid AIP, or breaks the protocol
    │   ├── TaskRejected               the server refused a task
    │   └── RegistrationRefused        the server refused this device
    ├── TransportClosed (Connection)   the AIP connection is closed
    ├── HandshakeRejected (Connection) the server refused the WebSocket upgrade
    ├── ConstellationError (Value)     a constellation, task or dependency operation was refused
    │   ├── TaskNotFoundError, DependencyNotFoundError, DuplicateIdError, CycleError,
    │   └── ModificationError, InvalidTransitionError, UnsatisfiableDependencyError, UnknownCommandError
    ├── OrchestrationError (Value)     the orchestrator cannot run a constellation as asked
    ├── UnknownDevice (Key)            a device id the galaxy registry does not know
    └── InvalidDeviceTransition        a device status change the state machine forbids
"""

from __future__ import annotations

from typing import Any


class StarweaveError(Exception):
    """Root of every error raised by Starweave."""


# ---- configuration and arguments -----------------------------------------------------------


class ConfigError(StarweaveError):
    """A configuration file or value is invalid; the message reads ``file: key: problem``."""


class SandboxUnavailable(ConfigError):
    """SHELL.SANDBOX asks for a sandbox that does not work on this machine."""


class InvalidArgumentError(StarweaveError, ValueError):
    """A function or constructor got a value it cannot accept.

    A ``ValueError`` too: the reference raised plain ``ValueError`` here and callers catch it.
    """


# ---- models ---------------------------------------------------------------------------------


class LLMError(StarweaveError):
    """A model call failed."""


class LLMTimeoutError(LLMError):
    """A model call exceeded its per-call timeout."""


class LLMResponseError(LLMError):
    """The model's answer could not be parsed or validated, even after the retries."""


class ProviderUnavailable(LLMError):
    """A provider cannot be used on this machine (missing extra, API key or model file)."""


class JSONExtractionError(LLMError, ValueError):
    """The text holds no JSON object that can be parsed."""


class SchemaValidationError(LLMError, ValueError):
    """The JSON object does not match the schema; ``errors`` lists every mismatch."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


# ---- the device-agent kernel ----------------------------------------------------------------


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


# ---- tools (device side) --------------------------------------------------------------------


class ToolError(StarweaveError):
    """The device-side command layer could not run a tool."""


class PolicyViolation(ToolError):
    """A shell command, path or argument was refused by the execution policy."""


class SeccompUnsupported(ToolError):
    """The seccomp filter has no system call table for this machine's architecture."""


class EditorError(ToolError):
    """A refused editor operation; its message goes to the model as the ``error``."""


class DesktopError(ToolError):
    """The desktop layer (accessibility tree, screenshots, input) could not do what was asked."""


class WindowNotFound(DesktopError):
    """A window id is not among the windows the desktop layer knows."""


class ControlNotFound(DesktopError):
    """A control id is not in the most recent walk of the selected window."""


# ---- sessions and the agent server ----------------------------------------------------------


class SessionError(StarweaveError):
    """A session could not start or finish."""


class CapacityError(SessionError):
    """The server already runs ``max_sessions`` sessions."""


class QueueFull(SessionError):
    """The device's queue holds ``max_queued`` tasks already."""


class TaskNameInUse(SessionError):
    """The task name is reserved for another client or already belongs to a session."""


class DuplicateClientError(StarweaveError):
    """A client registered with an id that is already connected."""


# ---- the Agent Interaction Protocol ---------------------------------------------------------


class AIPError(StarweaveError):
    """A frame is not a valid AIP message, or breaks the protocol."""


class TaskRejected(AIPError):
    """The server refused a task (e.g. the device is not connected, or the session id is in use)."""

    def __init__(self, device_id: str, session_id: str, reason: str) -> None:
        super().__init__(f"task {session_id} for device '{device_id}' was refused by the server: {reason}")
        self.device_id = device_id
        self.session_id = session_id
        self.reason = reason


class RegistrationRefused(AIPError):
    """The server refused this device; ``fatal`` when retrying cannot help (bad credentials)."""

    def __init__(self, reason: str, fatal: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fatal = fatal


# Connection errors: ConnectionError as well, and deliberately not AIPErrors, because the receive
# loops drop a malformed frame (AIPError) and go on, but must stop when the connection is gone.


class TransportClosed(StarweaveError, ConnectionError):
    """The connection is closed (or was never open); ``code``/``reason`` come from the close frame."""

    def __init__(self, message: str, code: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


class HandshakeRejected(StarweaveError, ConnectionError):
    """The server refused the WebSocket upgrade (e.g. HTTP 403 for a bad token)."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


# ---- galaxy: constellations and devices -----------------------------------------------------
# Constellation errors are ValueErrors as well, so that code written against the reference
# (which raised plain ValueError) keeps working.


class ConstellationError(StarweaveError, ValueError):
    """A constellation, task or dependency operation was refused."""


class TaskNotFoundError(ConstellationError):
    """A task id does not exist in the constellation."""


class DependencyNotFoundError(ConstellationError):
    """A dependency (line) id does not exist in the constellation."""


class DuplicateIdError(ConstellationError):
    """A task or line id is already used."""


class CycleError(ConstellationError):
    """Invariant I2: the edit would make the graph cyclic."""


class ModificationError(ConstellationError):
    """Invariant I3 (or I1): the task or dependency is no longer modifiable."""


class InvalidTransitionError(ConstellationError):
    """A task status transition is not allowed from the current status."""


class UnsatisfiableDependencyError(ConstellationError):
    """A new dependency could never be satisfied (its source already ended the wrong way)."""


class UnknownCommandError(ConstellationError):
    """No constellation-editing command is registered under the given name."""


class OrchestrationError(StarweaveError, ValueError):
    """The orchestrator cannot run a constellation as asked (no device, an invalid DAG or assignment).

    A ``ValueError`` too: the reference's orchestrator raised ``ValueError`` for these.
    """


class UnknownDevice(StarweaveError, KeyError):
    """A device id the registry does not know; the message lists the known ids."""

    def __str__(self) -> str:
        # KeyError's str() would quote the message; show it as written.
        return str(self.args[0]) if self.args else "unknown device"


class InvalidDeviceTransition(StarweaveError):
    """A status change the device state machine does not allow (a bug in the caller)."""
